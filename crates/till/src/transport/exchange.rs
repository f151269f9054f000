//! The service hyper calls with each request head of a connection: till's limits on the head
//! (and on the body its head announces), the body's deadline, then the router.

use super::guard::Progress;
use super::{MAX_HEADER_BYTES, MAX_TARGET_BYTES};
use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, Request, Response, header};
use axum::response::IntoResponse;
use bytes::Bytes;
use hyper::body::{Frame, Incoming, SizeHint};
use pin_project_lite::pin_project;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use till_api::error::ApiError;
use tokio::time::Sleep;
use tower::ServiceExt;
use tower::util::Oneshot;

/// What the transport holds every request of a connection to.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// A body must arrive within this time once the handler waits for it.
    pub body_timeout: Duration,
    /// A body announced larger than this is refused from the head.
    pub max_body_bytes: usize,
    /// Answers say `Strict-Transport-Security`: the connection is HTTPS.
    pub hsts: bool,
}

/// One connection's requests, answered by the router unless the transport refuses them.
pub struct Exchange {
    app: Router,
    progress: Arc<Progress>,
    limits: Limits,
}

impl Exchange {
    pub fn new(app: Router, progress: Arc<Progress>, limits: Limits) -> Exchange {
        Exchange { app, progress, limits }
    }
}

/// What a browser is told on every answer over HTTPS: this host is to be reached over HTTPS
/// alone for a year. Never sent over plain HTTP, where it would mean nothing (and where a
/// proxy in front of till decides).
const STRICT_TRANSPORT_SECURITY: HeaderValue = HeaderValue::from_static("max-age=31536000");

/// `response` as the connection sends it: with `Strict-Transport-Security` over HTTPS.
pub fn over_transport<B>(mut response: Response<B>, hsts: bool) -> Response<B> {
    if hsts {
        response
            .headers_mut()
            .insert(header::STRICT_TRANSPORT_SECURITY, STRICT_TRANSPORT_SECURITY);
    }
    response
}

impl hyper::service::Service<Request<Incoming>> for Exchange {
    type Response = Response<Answered>;
    type Error = Infallible;
    type Future = Answer;

    fn call(&self, request: Request<Incoming>) -> Answer {
        self.progress.begin();
        let progress = Some(self.progress.clone());
        let limits = self.limits;
        if let Some(refusal) = over_limits(&request) {
            return Answer::Refused {
                response: Some(refusal.into_response()),
                progress,
                hsts: limits.hsts,
            };
        }
        if let Some(refusal) = body_over_limit(&request, limits.max_body_bytes) {
            // The body is never read: the connection closes after the answer (lingering so
            // that the client, still sending, reads the answer rather than a reset).
            self.progress.refused_unread();
            let mut response = refusal.into_response();
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return Answer::Refused {
                response: Some(response),
                progress,
                hsts: limits.hsts,
            };
        }
        let request = request.map(|body| TimedBody {
            body,
            deadline: None,
            timeout: limits.body_timeout,
            progress: self.progress.clone(),
        });
        Answer::Routed {
            future: self.app.clone().oneshot(request),
            progress,
            limits,
        }
    }
}

/// A body its head announces larger than till accepts: refused from the head, before a byte of
/// it is read and before `100 Continue`, which hyper sends only once the body is read.
fn body_over_limit<B>(request: &Request<B>, max_body_bytes: usize) -> Option<ApiError> {
    let announced = request
        .headers()
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()?;
    (announced > u64::try_from(max_body_bytes).unwrap_or(u64::MAX)).then_some(ApiError::PayloadTooLarge(max_body_bytes))
}

/// A request target or header section over till's limits.
fn over_limits<B>(request: &Request<B>) -> Option<ApiError> {
    let uri = request.uri();
    let target = uri.path_and_query().map_or(0, |target| target.as_str().len())
        + uri.authority().map_or(0, |authority| authority.as_str().len());
    if target > MAX_TARGET_BYTES {
        return Some(ApiError::UriTooLong(MAX_TARGET_BYTES));
    }
    let header_bytes: usize = request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    (header_bytes > MAX_HEADER_BYTES).then_some(ApiError::HeadersTooLarge(MAX_HEADER_BYTES))
}

pin_project! {
    /// The answer to one request.
    #[project = AnswerProjection]
    pub enum Answer {
        Refused {
            response: Option<Response<Body>>,
            progress: Option<Arc<Progress>>,
            hsts: bool,
        },
        Routed {
            #[pin]
            future: Oneshot<Router, Request<TimedBody>>,
            progress: Option<Arc<Progress>>,
            limits: Limits,
        },
    }
}

impl Future for Answer {
    type Output = Result<Response<Answered>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let (response, progress, hsts) = match self.project() {
            AnswerProjection::Refused {
                response,
                progress,
                hsts,
            } => (response.take().unwrap_or_default(), progress.take(), *hsts),
            AnswerProjection::Routed {
                future,
                progress,
                limits,
            } => {
                let response = match ready!(future.poll(cx)) {
                    Ok(response) => response,
                    Err(never) => match never {},
                };
                let progress = progress.take();
                let response = match &progress {
                    Some(progress) if progress.was_body_late() => body_too_slow(limits.body_timeout, &response),
                    _ => response,
                };
                (response, progress, limits.hsts)
            }
        };
        let response = over_transport(response, hsts);
        Poll::Ready(Ok(response.map(|body| Answered { body, progress })))
    }
}

/// The 408 that replaces whatever the handler made of a body that never came; the connection
/// closes after it, the rest of the body being unknown.
fn body_too_slow(timeout: Duration, handlers: &Response<Body>) -> Response<Body> {
    let error = ApiError::RequestTimeout(format!(
        "The request body did not arrive within {} seconds; nothing was done.",
        timeout.as_secs()
    ));
    let mut response = error.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    if let Some(id) = handlers.headers().get("x-request-id") {
        headers.insert("x-request-id", id.clone());
    }
    response
}

pin_project! {
    /// A request body that fails once its deadline passes, telling the connection so. The
    /// clock starts when the handler first waits for bytes that have not come (right after
    /// the head): a body that came with its head costs no timer.
    pub struct TimedBody {
        #[pin]
        body: Incoming,
        #[pin]
        deadline: Option<Sleep>,
        timeout: Duration,
        progress: Arc<Progress>,
    }
}

impl hyper::body::Body for TimedBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let mut this = self.project();
        if let Poll::Ready(frame) = this.body.poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        if this.deadline.is_none() {
            this.deadline.set(Some(tokio::time::sleep(*this.timeout)));
        }
        if let Some(deadline) = this.deadline.as_mut().as_pin_mut() {
            ready!(deadline.poll(cx));
        }
        this.progress.body_was_late();
        Poll::Ready(Some(Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "the request body did not arrive in time",
        )
        .into())))
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// An answer's body; once hyper has sent it (and dropped it), the connection is idle.
pub struct Answered {
    body: Body,
    progress: Option<Arc<Progress>>,
}

impl hyper::body::Body for Answered {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Answered {
    fn drop(&mut self) {
        if let Some(progress) = &self.progress {
            progress.end();
        }
    }
}

/// The service of a connection accepted past the cap: 503 to its request, then close. Over
/// HTTPS its answer says `Strict-Transport-Security` like any other.
pub struct Overloaded {
    pub hsts: bool,
}

impl hyper::service::Service<Request<Incoming>> for Overloaded {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Response<Body>, Infallible>>;

    fn call(&self, _request: Request<Incoming>) -> Self::Future {
        let error = ApiError::Overloaded(
            "This node is serving as many connections as it is configured for; nothing was done. Retry shortly."
                .to_owned(),
        );
        let mut response = error.into_response();
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        std::future::ready(Ok(over_transport(response, self.hsts)))
    }
}
