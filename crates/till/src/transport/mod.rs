//! The HTTP transport: accepting connections up to a cap, HTTPS, the timeouts that keep a slow
//! or idle client from holding a connection, and the error envelope on every refusal.
//!
//! A connection is served by hyper's HTTP/1.1 connection between two pieces of till's:
//!
//! - [`exchange::Exchange`], the service hyper calls with each request head it parsed: it
//!   refuses a request target or header section over till's limits (414, 431) and a body its
//!   head announces larger than till accepts (413, without reading it or sending
//!   `100 Continue`), gives the body a deadline (408 past it), and hands the rest to the
//!   router. Over HTTPS every answer says `Strict-Transport-Security`.
//! - [`guard::Guarded`], the connection's bytes as hyper reads and writes them: it closes a
//!   connection whose request head is too slow to arrive, or that stays idle between
//!   requests too long (hyper's own header timeout counts that idle time as part of the next
//!   head, so till keeps time itself), and it replaces the bodiless answer hyper writes on
//!   its own when it cannot parse a head (400 garbage, 414 a target over its fixed 64 KiB,
//!   431 a head over its read buffer) by the envelope, rendered once from [`ApiError`].
//!   hyper has no hook for those answers; its buffer is set above till's own limits so
//!   that till answers every request it can read, and hyper only what it cannot.
//!
//! Past [`Settings::max_connections`] a new connection is answered 503 with `Retry-After`
//! (as soon as its request head arrives) while a few refusals are under way; past those too,
//! the node stops accepting until a connection closes, and new ones wait in the system's
//! listen backlog. Either way what a flood can hold is bounded.

mod exchange;
mod guard;
pub mod tls;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use till_api::error::ApiError;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The longest request target till reads; longer ones are answered 414.
pub const MAX_TARGET_BYTES: usize = 8 * 1024;
/// The largest header section till reads (each field counted as name, value and 4 bytes of
/// separators); larger ones are answered 431.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// hyper's read buffer: a head that does not fit is refused by hyper itself (431). Above
/// till's limits so that a head over them is still read and answered by till.
const READ_BUFFER_BYTES: usize = 128 * 1024;

/// How the node serves HTTP, from the configuration (`Config::transport`).
#[derive(Clone, Debug)]
pub struct Settings {
    /// HTTPS with this certificate; plain HTTP without.
    pub tls: Option<TlsFiles>,
    /// Origins whose browser pages may call the API; none: no CORS headers at all.
    pub cors_origins: Vec<axum::http::HeaderValue>,
    /// A request head (and, over HTTPS, the handshake before it) must arrive within this time
    /// of the connection opening or of the head's first byte.
    pub header_timeout: Duration,
    /// A request body must arrive within this time once till waits for it (after its head).
    pub body_timeout: Duration,
    /// A kept-alive connection waiting for its next request is closed after this time.
    pub idle_timeout: Duration,
    /// Connections served at once.
    pub max_connections: usize,
    /// A request whose head announces a larger body is refused (413) without reading it.
    pub max_body_bytes: usize,
}

impl Default for Settings {
    /// Plain HTTP, no CORS, and limits a shop's network tolerates (docs/deploy.md).
    fn default() -> Self {
        Settings {
            tls: None,
            cors_origins: Vec::new(),
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(75),
            max_connections: 512,
            max_body_bytes: till_api::ApiConfig::default().max_body_bytes,
        }
    }
}

/// How often, by default, the certificate files are read again to see whether they changed.
pub const TLS_CHECK_EVERY: Duration = Duration::from_secs(5);

#[derive(Clone, Debug)]
pub struct TlsFiles {
    /// PEM certificate chain, the server's own certificate first.
    pub cert: PathBuf,
    /// PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// How often the files are read again to see whether they changed.
    pub check_every: Duration,
}

/// The transport, its certificate loaded, ready to serve a router on a listener.
pub struct Server {
    settings: Settings,
    tls: Option<Arc<tls::Certificate>>,
    refusals: Arc<guard::Refusals>,
}

impl Server {
    /// Loads the certificate, if any: a missing or bad one is an error here, at start.
    pub async fn new(settings: Settings) -> anyhow::Result<Server> {
        let tls = match &settings.tls {
            Some(files) => Some(tls::Certificate::load(files.clone()).await?),
            None => None,
        };
        let hsts = tls.is_some();
        Ok(Server {
            settings,
            tls,
            refusals: Arc::new(guard::Refusals::render(hsts).await),
        })
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// `https` or `http`.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }

    /// Serves `app` on `listener` until `shutdown` resolves, then lets requests in flight
    /// finish and returns once every connection has closed.
    pub async fn serve(
        self,
        listener: TcpListener,
        app: Router,
        shutdown: impl Future<Output = ()> + Send,
    ) -> io::Result<()> {
        let acceptor = match &self.tls {
            Some(certificate) => Some(tls::acceptor(certificate.clone()).map_err(io::Error::other)?),
            None => None,
        };
        let reloads = self
            .tls
            .clone()
            .map(|certificate| tokio::spawn(certificate.keep_fresh()));
        let connections = Arc::new(Connections::new(self, app, acceptor));
        let graceful = GracefulShutdown::new();
        tokio::pin!(shutdown);
        loop {
            if connections.serving.available_permits() == 0 && connections.refusing.available_permits() == 0 {
                tokio::select! {
                    () = &mut shutdown => break,
                    _ = connections.serving.acquire() => continue,
                    _ = connections.refusing.acquire() => continue,
                }
            }
            let stream = tokio::select! {
                () = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(error) => {
                        pause_after(error).await;
                        continue;
                    }
                },
            };
            // Only this loop takes slots, and one was free above.
            let slot = match connections.serving.clone().try_acquire_owned() {
                Ok(permit) => (Slot::Serve, permit),
                Err(_) => match connections.refusing.clone().try_acquire_owned() {
                    Ok(permit) => (Slot::Refuse, permit),
                    Err(_) => continue,
                },
            };
            tokio::spawn(connections.clone().run(stream, slot, graceful.watcher()));
        }
        drop(listener);
        graceful.shutdown().await;
        if let Some(reloads) = reloads {
            reloads.abort();
        }
        Ok(())
    }
}

/// What a connection is accepted for; it holds its slot's permit while it lives.
enum Slot {
    Serve,
    Refuse,
}

/// Everything a connection needs, shared by all of them.
struct Connections {
    app: Router,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    timeouts: guard::Timeouts,
    limits: exchange::Limits,
    refusals: Arc<guard::Refusals>,
    serving: Arc<Semaphore>,
    refusing: Arc<Semaphore>,
    http: http1::Builder,
    http_refusing: http1::Builder,
}

impl Connections {
    fn new(server: Server, app: Router, acceptor: Option<tokio_rustls::TlsAcceptor>) -> Connections {
        let settings = &server.settings;
        let mut http = http1::Builder::new();
        // till keeps the head's time itself (guard.rs); hyper's would also count idle time.
        http.header_read_timeout(None).max_buf_size(READ_BUFFER_BYTES);
        let mut http_refusing = http.clone();
        http_refusing.keep_alive(false);
        Connections {
            app,
            acceptor,
            timeouts: guard::Timeouts {
                header_timeout: settings.header_timeout,
                idle_timeout: settings.idle_timeout,
            },
            limits: exchange::Limits {
                body_timeout: settings.body_timeout,
                max_body_bytes: settings.max_body_bytes,
                hsts: server.tls.is_some(),
            },
            refusals: server.refusals.clone(),
            serving: Arc::new(Semaphore::new(settings.max_connections)),
            // A refusal is short; an eighth of the cap keeps a flood from holding more.
            refusing: Arc::new(Semaphore::new((settings.max_connections / 8).max(1))),
            http,
            http_refusing,
        }
    }

    async fn run(self: Arc<Self>, stream: TcpStream, (slot, _permit): (Slot, OwnedSemaphorePermit), watcher: Watcher) {
        // Answers go out as soon as they are written, not held to fill a packet.
        let _ = stream.set_nodelay(true);
        match &self.acceptor {
            None => self.http(stream, slot, watcher).await,
            Some(acceptor) => match tokio::time::timeout(self.timeouts.header_timeout, acceptor.accept(stream)).await {
                Ok(Ok(stream)) => self.http(stream, slot, watcher).await,
                Ok(Err(error)) => tracing::debug!(%error, "TLS handshake failed"),
                Err(_) => tracing::debug!("TLS handshake timed out"),
            },
        }
    }

    async fn http<IO>(&self, io: IO, slot: Slot, watcher: Watcher)
    where
        IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let outcome = match slot {
            Slot::Serve => {
                let progress = Arc::new(guard::Progress::default());
                let io = guard::Guarded::new(io, self.timeouts, progress.clone(), self.refusals.clone());
                let service = exchange::Exchange::new(self.app.clone(), progress, self.limits);
                watcher
                    .watch(self.http.serve_connection(TokioIo::new(io), service))
                    .await
            }
            Slot::Refuse => {
                let io = guard::Guarded::refusing(io, self.timeouts, self.refusals.clone());
                watcher
                    .watch(
                        self.http_refusing
                            .serve_connection(TokioIo::new(io), exchange::Overloaded { hsts: self.limits.hsts }),
                    )
                    .await
            }
        };
        if let Err(error) = outcome {
            tracing::debug!(%error, "connection ended");
        }
    }
}

/// After a failed accept: a connection reset before it was accepted costs nothing; anything
/// else (out of file descriptors) waits a moment for connections to close.
async fn pause_after(error: io::Error) {
    use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(error.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) {
        return;
    }
    tracing::error!(%error, "cannot accept a connection");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// The refusal of a request the node cannot read, in the envelope.
fn unreadable(status: u16) -> Option<ApiError> {
    match status {
        400 => Some(ApiError::field("request", "is not a well-formed HTTP/1.1 request")),
        414 => Some(ApiError::UriTooLong(MAX_TARGET_BYTES)),
        431 => Some(ApiError::HeadersTooLarge(MAX_HEADER_BYTES)),
        _ => None,
    }
}
