//! A connection's bytes as hyper reads and writes them: the head and idle deadlines, and the
//! envelope in place of hyper's own bodiless refusals.

use super::unreadable;
use axum::response::IntoResponse;
use bytes::{Buf, Bytes};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// After refusing, how long the client may go on sending before the connection is closed:
/// closing with unread bytes would reset it, and the client could lose the answer unread.
const LINGER: Duration = Duration::from_secs(2);

#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
}

/// Where a connection's requests stand, told by the service that answers them.
#[derive(Default)]
pub struct Progress {
    /// Requests begun plus answers sent: odd while a request is under way.
    steps: AtomicU64,
    /// The body of the request under way did not arrive in time.
    body_late: AtomicBool,
    /// A request was refused with its body unread: the connection lingers on close.
    unread: AtomicBool,
}

impl Progress {
    /// hyper handed over a parsed head.
    pub fn begin(&self) {
        self.body_late.store(false, Ordering::Relaxed);
        self.steps.fetch_add(1, Ordering::Relaxed);
    }

    /// The answer was sent (its body dropped by hyper).
    pub fn end(&self) {
        self.steps.fetch_add(1, Ordering::Relaxed);
    }

    pub fn body_was_late(&self) {
        self.body_late.store(true, Ordering::Relaxed);
    }

    pub fn was_body_late(&self) -> bool {
        self.body_late.load(Ordering::Relaxed)
    }

    /// A request was answered without its body being read; the connection closes after it.
    pub fn refused_unread(&self) {
        self.unread.store(true, Ordering::Relaxed);
    }

    fn left_unread(&self) -> bool {
        self.unread.load(Ordering::Relaxed)
    }

    fn steps(&self) -> u64 {
        self.steps.load(Ordering::Relaxed)
    }
}

/// What the connection is waiting for when a read finds no bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    /// A request is under way: its body has its own deadline, its handler none here.
    Exchange,
    /// The next request, after an answer.
    Idle { armed: bool },
    /// The rest of a request head, since the connection opened or the head's first byte.
    Head { armed: bool },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Linger {
    No,
    /// On shutdown, read what the client still sends for a while before closing.
    Wanted,
    Draining,
}

pub struct Guarded<IO> {
    io: IO,
    timeouts: Timeouts,
    progress: Arc<Progress>,
    steps_seen: u64,
    wait: Wait,
    /// When the current wait is over.
    due: Instant,
    /// Rings at `due` or before it.
    deadline: Pin<Box<Sleep>>,
    refusals: Arc<Refusals>,
    /// The envelope replacing hyper's refusal, while it is being written.
    answer: Option<Bytes>,
    linger: Linger,
}

impl<IO> Guarded<IO> {
    pub fn new(io: IO, timeouts: Timeouts, progress: Arc<Progress>, refusals: Arc<Refusals>) -> Guarded<IO> {
        Guarded {
            io,
            timeouts,
            steps_seen: progress.steps(),
            progress,
            wait: Wait::Head { armed: false },
            due: Instant::now() + timeouts.header_timeout,
            deadline: Box::pin(tokio::time::sleep(timeouts.header_timeout)),
            refusals,
            answer: None,
            linger: Linger::No,
        }
    }

    /// A connection accepted only to be refused: it lingers on close.
    pub fn refusing(io: IO, timeouts: Timeouts, refusals: Arc<Refusals>) -> Guarded<IO> {
        let mut guarded = Guarded::new(io, timeouts, Arc::default(), refusals);
        guarded.linger = Linger::Wanted;
        guarded
    }

    fn follow_progress(&mut self) {
        let steps = self.progress.steps();
        if steps != self.steps_seen {
            self.steps_seen = steps;
            self.wait = if steps % 2 == 1 {
                Wait::Exchange
            } else {
                Wait::Idle { armed: false }
            };
        }
    }

    /// No bytes to read: ready with an end of stream or an error once the wait is too long.
    /// The wait starts at the first read that finds nothing, so a client whose next request is
    /// already there costs none. The timer is moved only when it must ring sooner, or when it
    /// rang before the wait was over: a busy connection re-arms it once per timeout, not once
    /// per request.
    fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let (armed, limit) = match &mut self.wait {
            Wait::Exchange => return Poll::Pending,
            Wait::Idle { armed } => (armed, self.timeouts.idle_timeout),
            Wait::Head { armed } => (armed, self.timeouts.header_timeout),
        };
        if !*armed {
            *armed = true;
            self.due = Instant::now() + limit;
            if self.deadline.deadline() > self.due {
                self.deadline.as_mut().reset(self.due);
            }
        }
        while self.deadline.as_mut().poll(cx).is_ready() {
            if Instant::now() < self.due {
                self.deadline.as_mut().reset(self.due);
                continue;
            }
            return match self.wait {
                // To hyper an idle connection that ends is one the client closed: it closes too.
                Wait::Idle { .. } => Poll::Ready(Ok(())),
                _ => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the request head did not arrive in time",
                ))),
            };
        }
        Poll::Pending
    }

    /// hyper's own answer to a head it could not parse, if `bytes` start with it: its length,
    /// with the envelope taking its place. hyper writes that answer, and nothing else, as a
    /// bodiless 400, 414 or 431 without a content type; every answer of till's has one.
    fn hyper_refusal(&self, bytes: &[u8]) -> Option<(usize, Bytes)> {
        if !bytes.starts_with(b"HTTP/1.1 4") {
            return None;
        }
        let mut headers = [httparse::EMPTY_HEADER; 4];
        let mut head = httparse::Response::new(&mut headers);
        let Ok(httparse::Status::Complete(length)) = head.parse(bytes) else {
            return None;
        };
        let named = |name: &str| {
            head.headers
                .iter()
                .find(|header| header.name.eq_ignore_ascii_case(name))
        };
        let bodiless = named("content-length").is_some_and(|header| header.value == b"0");
        if !bodiless || named("content-type").is_some() {
            return None;
        }
        let answer = self
            .refusals
            .answer(head.code?, named("date").map(|header| header.value))?;
        Some((length, answer))
    }
}

impl<IO: AsyncWrite + Unpin> Guarded<IO> {
    /// Writes what is left of the envelope replacing hyper's refusal.
    fn poll_answer(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some(answer) = &mut self.answer {
            let written = ready!(Pin::new(&mut self.io).poll_write(cx, answer))?;
            if written == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            answer.advance(written);
            if answer.is_empty() {
                self.answer = None;
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Takes hyper's refusal at the start of `bytes`, if it is one, and starts writing the
    /// envelope instead; the count of hyper's bytes taken.
    fn poll_replace(&mut self, cx: &mut Context<'_>, bytes: &[u8]) -> Option<io::Result<usize>> {
        let (length, answer) = self.hyper_refusal(bytes)?;
        tracing::debug!("a request head the HTTP parser refused was answered in the envelope");
        self.answer = Some(answer);
        self.linger = Linger::Wanted;
        // What is not written now is written before anything else, on flush at the latest.
        match self.poll_answer(cx) {
            Poll::Ready(Err(error)) => Some(Err(error)),
            _ => Some(Ok(length)),
        }
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncRead for Guarded<IO> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.follow_progress();
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Pending => this.poll_wait(cx),
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before && matches!(this.wait, Wait::Idle { .. }) {
                    this.wait = Wait::Head { armed: false };
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
        }
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Guarded<IO> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_answer(cx))?;
        if let Some(taken) = this.poll_replace(cx, buf) {
            return Poll::Ready(taken);
        }
        Pin::new(&mut this.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_answer(cx))?;
        if let Some(first) = bufs.iter().find(|buf| !buf.is_empty())
            && let Some(taken) = this.poll_replace(cx, first)
        {
            return Poll::Ready(taken);
        }
        Pin::new(&mut this.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_answer(cx))?;
        ready!(Pin::new(&mut this.io).poll_flush(cx))?;
        // An answer has just gone out. hyper may not read again until the client sends
        // something, so the idle clock starts here, waking the connection when it runs out.
        this.follow_progress();
        if this.wait == (Wait::Idle { armed: false }) {
            let _ = this.poll_wait(cx);
        }
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_answer(cx))?;
        if this.linger == Linger::No && this.progress.left_unread() {
            this.linger = Linger::Wanted;
        }
        match this.linger {
            Linger::No => return Pin::new(&mut this.io).poll_shutdown(cx),
            Linger::Wanted => {
                ready!(Pin::new(&mut this.io).poll_shutdown(cx))?;
                this.linger = Linger::Draining;
                this.deadline.as_mut().reset(Instant::now() + LINGER);
            }
            Linger::Draining => {}
        }
        // Read and drop what the client still sends until it closes or the time is up.
        let mut scratch = [0u8; 4096];
        for _ in 0..16 {
            if this.deadline.is_elapsed() {
                return Poll::Ready(Ok(()));
            }
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut this.io).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(_)) => return Poll::Ready(Ok(())),
                Poll::Pending => return this.deadline.as_mut().poll(cx).map(Ok),
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// The envelopes replacing hyper's refusals, rendered once from [`till_api::error::ApiError`].
pub struct Refusals {
    rendered: Vec<(u16, Rendered)>,
}

/// An answer on the wire but for its `date`, which is hyper's.
struct Rendered {
    head: Vec<u8>,
    body: Bytes,
}

impl Refusals {
    /// The envelopes, with `Strict-Transport-Security` when `hsts` (over HTTPS).
    pub async fn render(hsts: bool) -> Refusals {
        let mut rendered = Vec::new();
        for status in [400, 414, 431] {
            if let Some(error) = unreadable(status) {
                let response = super::exchange::over_transport(error.into_response(), hsts);
                rendered.push((status, Rendered::from(response).await));
            }
        }
        Refusals { rendered }
    }

    fn answer(&self, status: u16, date: Option<&[u8]>) -> Option<Bytes> {
        let (_, rendered) = self.rendered.iter().find(|(rendered, _)| *rendered == status)?;
        let mut wire = Vec::with_capacity(rendered.head.len() + rendered.body.len() + 64);
        wire.extend_from_slice(&rendered.head);
        if let Some(date) = date {
            wire.extend_from_slice(b"date: ");
            wire.extend_from_slice(date);
            wire.extend_from_slice(b"\r\n");
        }
        wire.extend_from_slice(b"\r\n");
        wire.extend_from_slice(&rendered.body);
        Some(Bytes::from(wire))
    }
}

impl Rendered {
    async fn from(response: axum::response::Response) -> Rendered {
        let (parts, body) = response.into_parts();
        // The envelope's body is in memory already; reading it cannot fail or wait.
        let body = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
        let mut head = format!("HTTP/1.1 {}\r\n", parts.status).into_bytes();
        for (name, value) in &parts.headers {
            head.extend_from_slice(name.as_str().as_bytes());
            head.extend_from_slice(b": ");
            head.extend_from_slice(value.as_bytes());
            head.extend_from_slice(b"\r\n");
        }
        head.extend_from_slice(format!("content-length: {}\r\nconnection: close\r\n", body.len()).as_bytes());
        Rendered { head, body }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn guarded() -> Guarded<tokio::io::DuplexStream> {
        let (io, _) = tokio::io::duplex(64);
        let timeouts = Timeouts {
            header_timeout: Duration::from_secs(1),
            idle_timeout: Duration::from_secs(1),
        };
        Guarded::new(io, timeouts, Arc::default(), Arc::new(Refusals::render(false).await))
    }

    #[tokio::test]
    async fn only_hypers_bodiless_refusals_are_replaced() {
        let guarded = guarded().await;
        let hypers = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: Thu, 01 Jan 2026 00:00:00 GMT\r\n\r\n";
        let (taken, answer) = guarded.hyper_refusal(hypers).expect("replaced");
        assert_eq!(taken, hypers.len());
        let answer = String::from_utf8(answer.to_vec()).unwrap();
        assert!(
            answer.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
            "{answer}"
        );
        assert!(answer.contains("date: Thu, 01 Jan 2026 00:00:00 GMT\r\n"), "{answer}");
        assert!(answer.contains("\"code\":\"HEADERS_TOO_LARGE\""), "{answer}");

        let tills = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n";
        assert!(
            guarded.hyper_refusal(tills).is_none(),
            "an answer with a content type is till's"
        );
        let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        assert!(guarded.hyper_refusal(ok).is_none());
        let other = b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n";
        assert!(
            guarded.hyper_refusal(other).is_none(),
            "hyper refuses with 400, 414 and 431 only"
        );
    }
}
