//! The access log: one line per request, as an operator reads it (target `till::access`).
//!
//! The line holds the method, the route's template (never the path as sent, which may carry an
//! id of anything), the status, the duration, the request id and the subject the request acted
//! as once its credentials were checked; never a token, a PIN, a query or a body.

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use tower_http::request_id::RequestId;

/// Who the request acted as: left empty until its credentials are checked, then filled by the
/// extractor that checked them.
#[derive(Clone, Default)]
pub struct ActedAs(Arc<OnceLock<String>>);

impl ActedAs {
    /// Records the subject in the request's slot, if the request has one (a request built by
    /// a test or a tool may not).
    pub fn record(extensions: &axum::http::Extensions, subject: &str) {
        if let Some(slot) = extensions.get::<ActedAs>() {
            let _ = slot.0.set(subject.to_owned());
        }
    }
}

/// Serves the request, then writes its line; where the log filter leaves the line out, only
/// serves it (no slot, no copies).
pub async fn write(mut request: Request, next: Next) -> Response {
    if !tracing::enabled!(target: "till::access", tracing::Level::INFO) {
        return next.run(request).await;
    }
    let acted_as = ActedAs::default();
    request.extensions_mut().insert(acted_as.clone());
    let method = request.method().clone();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    let request_id = request
        .extensions()
        .get::<RequestId>()
        .and_then(|id| id.header_value().to_str().ok())
        .unwrap_or("-")
        .to_owned();
    let started = Instant::now();
    let response = next.run(request).await;
    let elapsed = started.elapsed();
    tracing::info!(
        target: "till::access",
        method = %method,
        route = %route,
        status = response.status().as_u16(),
        duration_ms = elapsed.as_secs_f64() * 1000.0,
        request_id = %request_id,
        subject = acted_as.0.get().map_or("-", String::as_str),
        "request"
    );
    response
}
