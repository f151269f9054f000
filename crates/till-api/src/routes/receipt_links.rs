//! `GET /r/{token}`: a receipt's public page, for whoever holds the receipt. No credentials:
//! the token (128 random bits, made with the sale's first print) is the only key. The page
//! shows the receipt as a consultation and whether its proof verifies against the keys the
//! deployment publishes. Every node answers at most a few such pages a second, so a flood of
//! guesses costs nothing and learns nothing.

use crate::error::ApiError;
use crate::extract::{FromParams, Params, PathParams};
use crate::openapi::Text;
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use axum::response::{IntoResponse, Response};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use std::num::NonZeroU32;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(public_receipt))
}

/// Public pages a node answers per second, and in a burst.
const PAGES_PER_SECOND: u32 = 10;
const PAGES_IN_A_BURST: u32 = 20;

/// A node's one limiter of public pages: shared by every caller, since the page needs no
/// credentials to tell callers apart.
pub(crate) fn limiter() -> DefaultDirectRateLimiter {
    let rate = NonZeroU32::new(PAGES_PER_SECOND).unwrap_or(NonZeroU32::MIN);
    let burst = NonZeroU32::new(PAGES_IN_A_BURST).unwrap_or(NonZeroU32::MIN);
    RateLimiter::direct(Quota::per_second(rate).allow_burst(burst))
}

/// `{token}` of the public page.
struct LinkPath(String);

impl FromParams for LinkPath {
    fn from_params(params: &Params) -> Option<Self> {
        params
            .required("token", |text| Ok::<_, &str>(text.to_owned()))
            .map(LinkPath)
    }
}

/// A receipt's public page.
///
/// The receipt of a printed sale, as a consultation (nothing printed, nothing recorded), with
/// whether its proof verifies against the deployment's published keys (`getFiscalKeys`) and
/// what it proves: the register, the ticket's number, its total and time. Needs no
/// credentials: the token, printed on the receipt as a QR code when the deployment has a
/// public address (`TILL_PUBLIC_URL`), is the key. Each node answers a few such pages a
/// second; past that, 429 with `Retry-After`. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/r/{token}", operation_id = "getPublicReceipt", tag = "checkout",
    params(("token" = Text, Path, description = "The token of the receipt's link")),
    responses((status = 200, description = "The receipt and its proof's verification", content((String = "text/html"))),
              (status = 404, description = "No receipt has this link", body = crate::error::ErrorEnvelope),
              (status = 429, description = "Too many public pages asked of this node; try again after `Retry-After` seconds",
                  body = crate::error::ErrorEnvelope)))]
async fn public_receipt(
    State(state): State<AppState>,
    PathParams(LinkPath(token)): PathParams<LinkPath>,
) -> Result<Response, ApiError> {
    if state.public_pages().check().is_err() {
        return Err(ApiError::Channel {
            status: StatusCode::TOO_MANY_REQUESTS,
            code: "RATE_LIMITED",
            message: "Too many receipt pages asked of this server; try again in a second.".to_owned(),
            retry_after: Some(1),
        });
    }
    let public = till_app::receipts::public_receipt(state.app(), &token).await?;
    let page = crate::receipt::public_page(&public);
    Ok((
        [
            (CONTENT_TYPE, "text/html; charset=utf-8"),
            (CONTENT_SECURITY_POLICY, crate::receipt::HTML_POLICY),
            (X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (CACHE_CONTROL, "no-store"),
        ],
        page,
    )
        .into_response())
}
