//! The HTTP surface of till: one router per resource, the credentials and scope guards, the
//! error envelope every failure is written in, and the OpenAPI document generated from it all.

#![forbid(unsafe_code)]

mod access_log;
pub mod auth;
mod browser_pages;
pub mod console;
pub mod delivery;
pub mod error;
pub mod extract;
pub mod fields;
pub mod invoice_pdf;
pub mod jobs;
pub mod mailer;
pub mod mcp;
pub mod metrics;
pub mod openapi;
pub mod ops;
pub mod pagination;
mod phrases;
pub mod receipt;
pub mod routes;
pub mod state;
pub mod till;
pub mod worker;

use crate::error::ApiError;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, HeaderValue, Method, Request, Uri};
use axum::response::{IntoResponse, Response};
use futures::TryFutureExt;
use futures::future::{Either, MapOk};
use std::any::Any;
use std::sync::Arc;
use std::task::{Context, Poll};
use tower::{Layer, Service};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer};
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::trace::TraceLayer;

pub use state::{ApiConfig, AppState, WebhookSettings};
pub use till_app::{Clock, ManualClock, Settings, SystemClock};

/// The whole service as one axum router.
pub fn app(state: AppState) -> Router {
    state.service()
}

/// The service's routes and layers, waiting for their state: built once per state (building
/// them generates the OpenAPI parts of every operation), given it for each use.
fn service(config: &ApiConfig) -> Router<AppState> {
    let (router, _) = routes::api_router().split_for_parts();
    router
        .merge(console::router(config.console_language))
        .merge(till::router())
        .fallback(unknown_route)
        .method_not_allowed_fallback(wrong_method)
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .layer(axum::middleware::from_fn(metrics::track))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(axum::middleware::from_fn(access_log::write))
        .layer(TraceLayer::new_for_http().make_span_with(|request: &Request<_>| {
            let id = request
                .extensions()
                .get::<RequestId>()
                .and_then(|id| id.header_value().to_str().ok())
                .unwrap_or("-");
            tracing::info_span!("request", method = %request.method(), uri = %request.uri().path(), request_id = %id)
        }))
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(SetRequestIdLayer::x_request_id(NewRequestId))
        .layer(axum::middleware::map_request(drop_unfit_request_id))
        .layer(SetSensitiveRequestHeadersLayer::new([
            axum::http::header::AUTHORIZATION,
            axum::http::HeaderName::from_static("x-elevation-token"),
        ]))
}

/// Cross-origin access for browser pages served from `origins` (exact `scheme://host[:port]`
/// values; never a wildcard, never credentials mode: till's callers send a bearer token).
/// A request from a listed origin gets the CORS headers and its preflight an answer; any
/// other request passes through with no CORS header at all (its answer says `Vary: origin`).
pub fn cors(origins: Vec<HeaderValue>) -> CorsLayer {
    use axum::http::header;
    let cors = tower_http::cors::CorsLayer::new()
        .allow_origin(tower_http::cors::AllowOrigin::list(origins.clone()))
        .allow_methods([Method::GET, Method::HEAD, Method::POST, Method::PUT, Method::DELETE])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::IF_MATCH,
            HeaderName::from_static("x-elevation-token"),
            HeaderName::from_static("x-request-id"),
        ])
        .expose_headers([
            header::ETAG,
            header::RETRY_AFTER,
            header::LOCATION,
            header::WWW_AUTHENTICATE,
            HeaderName::from_static("x-request-id"),
            HeaderName::from_static("x-idempotent-replay"),
            HeaderName::from_static("x-till-print"),
            HeaderName::from_static("x-till-archive-id"),
            HeaderName::from_static("x-till-archive-sha256"),
        ])
        .max_age(std::time::Duration::from_secs(600));
    CorsLayer {
        origins: origins.into(),
        cors,
    }
}

/// See [`cors`].
#[derive(Clone)]
pub struct CorsLayer {
    origins: Arc<[HeaderValue]>,
    cors: tower_http::cors::CorsLayer,
}

impl<S: Clone> Layer<S> for CorsLayer {
    type Service = Cors<S>;

    fn layer(&self, inner: S) -> Cors<S> {
        Cors {
            origins: self.origins.clone(),
            cors: self.cors.layer(inner.clone()),
            inner,
        }
    }
}

#[derive(Clone)]
pub struct Cors<S> {
    origins: Arc<[HeaderValue]>,
    cors: tower_http::cors::Cors<S>,
    inner: S,
}

impl<S, B, R> Service<Request<B>> for Cors<S>
where
    S: Service<Request<B>, Response = Response<R>> + Clone,
    R: Default,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = Either<tower_http::cors::ResponseFuture<S::Future>, MapOk<S::Future, fn(Response<R>) -> Response<R>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        match self.inner.poll_ready(cx) {
            Poll::Ready(Ok(())) => self.cors.poll_ready(cx),
            other => other,
        }
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let listed = request
            .headers()
            .get(axum::http::header::ORIGIN)
            .is_some_and(|origin| self.origins.contains(origin));
        if listed {
            Either::Left(self.cors.call(request))
        } else {
            Either::Right(self.inner.call(request).map_ok(vary_on_origin as fn(_) -> _))
        }
    }
}

/// The answer would differ for a listed origin: a cache must not serve it to one.
fn vary_on_origin<R>(mut response: Response<R>) -> Response<R> {
    response
        .headers_mut()
        .append(axum::http::header::VARY, HeaderValue::from_static("origin"));
    response
}

async fn unknown_route(method: Method, uri: Uri) -> ApiError {
    ApiError::NotFound(format!("There is no route {method} {}.", uri.path()))
}

async fn wrong_method(method: Method, uri: Uri) -> ApiError {
    ApiError::MethodNotAllowed(format!("{} does not accept {method}.", uri.path()))
}

fn panic_response(panic: Box<dyn Any + Send + 'static>) -> Response {
    let detail = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("unknown panic");
    ApiError::internal(std::io::Error::other(format!("handler panicked: {detail}"))).into_response()
}

/// The longest `x-request-id` a caller may choose.
const MAX_REQUEST_ID_CHARS: usize = 64;

/// Whether a caller's `x-request-id` is taken as it is: 1 to 64 characters among letters,
/// digits, `.`, `_` and `-`. Anything else could forge a line of a text log or pass for
/// another request's id there.
fn fit_request_id(value: &[u8]) -> bool {
    (1..=MAX_REQUEST_ID_CHARS).contains(&value.len())
        && value
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// A caller's `x-request-id` that is not fit is dropped: the request gets an id of till's
/// own, which its answer carries, as for a request that sent none.
async fn drop_unfit_request_id(mut request: Request<axum::body::Body>) -> Request<axum::body::Body> {
    let headers = request.headers_mut();
    let unfit = headers
        .get_all(X_REQUEST_ID)
        .iter()
        .any(|value| !fit_request_id(value.as_bytes()));
    if unfit || headers.get_all(X_REQUEST_ID).iter().count() > 1 {
        headers.remove(X_REQUEST_ID);
    }
    request
}

const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Request ids of the form `req_...`, unless the caller sent its own fit `x-request-id`.
#[derive(Clone, Copy)]
struct NewRequestId;

impl MakeRequestId for NewRequestId {
    fn make_request_id<B>(&mut self, _request: &Request<B>) -> Option<RequestId> {
        HeaderValue::from_str(&auth::secret::new_id("req"))
            .ok()
            .map(RequestId::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::to_bytes;

    #[test]
    fn only_short_plain_request_ids_are_taken() {
        assert!(fit_request_id(b"req-2026.01_a"));
        assert!(fit_request_id("a".repeat(64).as_bytes()));
        for unfit in [
            &b""[..],
            "a".repeat(65).as_bytes(),
            b"a b",
            b"a\nINFO forged",
            b"a\"b",
            b"\xc3\xa9",
        ] {
            assert!(!fit_request_id(unfit), "{unfit:?}");
        }
    }

    #[tokio::test]
    async fn a_panic_becomes_an_opaque_500_envelope() {
        let response = panic_response(Box::new("index out of bounds at src/secret.rs:42"));
        assert_eq!(response.status(), 500);
        let body = to_bytes(response.into_body(), 4096).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["code"], "INTERNAL_ERROR");
        assert_eq!(body["error"]["statusCode"], 500);
        let text = body.to_string();
        assert!(
            !text.contains("secret.rs") && !text.contains("index out of bounds"),
            "{text}"
        );
    }
}
