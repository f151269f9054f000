//! What the pages served to a browser (the console, the till) answer with besides their
//! content: a content security policy of their own, and the headers every such page carries.

use axum::http::header::CACHE_CONTROL;
use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;

/// A browser page's protective headers: `policy` as its content security policy, `referrer`
/// as its referrer policy, no sniffing, no framing; and, unless its handler said how to cache
/// it, `no-store`.
pub(crate) fn protect(mut response: Response, policy: &'static str, referrer: &'static str) -> Response {
    let headers = response.headers_mut();
    let set = [
        ("content-security-policy", policy),
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
        ("referrer-policy", referrer),
    ];
    for (name, value) in set {
        headers.insert(HeaderName::from_static(name), HeaderValue::from_static(value));
    }
    if !headers.contains_key(CACHE_CONTROL) {
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}
