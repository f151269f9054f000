//! The till in the browser, served by the same binary under `/till` (docs/till.md).
//!
//! A page, a script and a stylesheet built from `clients/till-web` and committed under
//! `assets/` (so that building the binary needs no Node), a service worker that keeps them for
//! offline use, a web manifest and icons. Nothing is rendered here: the page calls the API
//! under `/v1` of the same origin, with the device's and the session's bearer tokens. Like the
//! console, the till is not part of the API and is left out of its OpenAPI document.

use crate::state::AppState;
use axum::Router;
use axum::extract::RawQuery;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{any, get};
use std::sync::LazyLock;

/// Where the till lives.
pub const ROOT: &str = "/till";

/// One file of the till, as the binary holds it.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
    cache: Cache,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Cache {
    /// Asked again on every use (the browser may keep it, and revalidates it by its ETag): the
    /// page, the service worker and the manifest name everything else.
    Revalidate,
    /// Named by its digest (`?v=`) in the page: that address never changes content.
    Versioned,
    /// Kept a day.
    Day,
}

const ASSETS: &[Asset] = &[
    Asset {
        name: "app.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("assets/app.js"),
        cache: Cache::Versioned,
    },
    Asset {
        name: "app.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("assets/app.css"),
        cache: Cache::Versioned,
    },
    Asset {
        name: "sw.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("assets/sw.js"),
        cache: Cache::Revalidate,
    },
    Asset {
        name: "manifest.webmanifest",
        content_type: "application/manifest+json",
        bytes: include_bytes!("assets/manifest.webmanifest"),
        cache: Cache::Revalidate,
    },
    Asset {
        name: "icon.svg",
        content_type: "image/svg+xml",
        bytes: include_bytes!("assets/icon.svg"),
        cache: Cache::Day,
    },
    Asset {
        name: "icon-192.png",
        content_type: "image/png",
        bytes: include_bytes!("assets/icon-192.png"),
        cache: Cache::Day,
    },
    Asset {
        name: "icon-512.png",
        content_type: "image/png",
        bytes: include_bytes!("assets/icon-512.png"),
        cache: Cache::Day,
    },
];

const PAGE: &[u8] = include_bytes!("assets/index.html");

/// The first 16 hexadecimal digits of a SHA-256: how the build names a version (`?v=`).
fn digest(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Each asset's digest, and the page's, computed once.
static DIGESTS: LazyLock<Vec<String>> = LazyLock::new(|| ASSETS.iter().map(|asset| digest(asset.bytes)).collect());
static PAGE_DIGEST: LazyLock<String> = LazyLock::new(|| digest(PAGE));

/// Every till route, before state and middleware.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/till", get(page))
        // The address typed with a trailing slash is the till too, not the API's 404.
        .route("/till/", get(async || Redirect::permanent(ROOT)))
        .route("/till/{name}", get(asset))
        // Any other address under the till is nothing the till serves.
        .route("/till/{name}/{*rest}", any(not_found))
        .layer(axum::middleware::map_response(protect))
}

async fn page(headers: HeaderMap) -> Response {
    answer(
        &headers,
        "text/html; charset=utf-8",
        PAGE,
        &PAGE_DIGEST,
        Cache::Revalidate,
    )
}

async fn asset(
    axum::extract::Path(name): axum::extract::Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let Some((index, found)) = ASSETS.iter().enumerate().find(|(_, asset)| asset.name == name) else {
        return not_found().await;
    };
    let Some(digest) = DIGESTS.get(index) else {
        return not_found().await;
    };
    let mut cache = found.cache;
    if cache == Cache::Versioned {
        // Only the address the page names (`?v=` and this content's digest) is kept for good: an
        // older page asking for its version gets today's file, to be revalidated.
        let named = query
            .as_deref()
            .unwrap_or_default()
            .split('&')
            .any(|pair| pair.strip_prefix("v=") == Some(digest.as_str()));
        if !named {
            cache = Cache::Revalidate;
        }
    }
    let mut response = answer(&headers, found.content_type, found.bytes, digest, cache);
    if found.name == "sw.js" {
        // The worker controls the page at `/till` as well as the files under `/till/`.
        response.headers_mut().insert(
            HeaderName::from_static("service-worker-allowed"),
            HeaderValue::from_static(ROOT),
        );
    }
    response
}

/// The file, or 304 when the browser holds this version (`If-None-Match`).
fn answer(
    headers: &HeaderMap,
    content_type: &'static str,
    bytes: &'static [u8],
    digest: &str,
    cache: Cache,
) -> Response {
    let etag = format!("\"{digest}\"");
    let cache_control = match cache {
        Cache::Revalidate => "no-cache",
        Cache::Versioned => "public, max-age=31536000, immutable",
        Cache::Day => "public, max-age=86400",
    };
    let held = headers
        .get_all(IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|tag| tag.trim() == etag || tag.trim() == "*");
    let mut response = if held {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(CONTENT_TYPE, content_type)], bytes).into_response()
    };
    let headers = response.headers_mut();
    headers.insert(CACHE_CONTROL, HeaderValue::from_static(cache_control));
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(ETAG, value);
    }
    response
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(CONTENT_TYPE, "text/plain; charset=utf-8"), (CACHE_CONTROL, "no-store")],
        "Not found: the till has no such file.\n",
    )
        .into_response()
}

/// What the till's page may do: run its own script and style, reach this origin (the API under
/// `/v1`), install its worker and manifest; nothing from elsewhere, no frame, no inline script.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self'; connect-src 'self'; manifest-src 'self'; worker-src 'self'; \
     form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

async fn protect(response: Response) -> Response {
    crate::browser_pages::protect(response, CONTENT_SECURITY_POLICY, "no-referrer")
}
