//! What a page's forms send, read by the same parameter rules as the API's queries
//! ([`crate::extract::Params`]). A browser sends a field left blank as `name=`: such a field is
//! taken as not given.

use super::refused::Refused;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, query_pairs};
use crate::state::AppState;
use axum::extract::rejection::{BytesRejection, FailedToBufferBody};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use bytes::Bytes;

/// The fields of a form sent with GET, read by `T`.
pub struct Query<T>(pub T);

impl<T: FromParams + Send> FromRequestParts<AppState> for Query<T> {
    type Rejection = Refused;

    async fn from_request_parts(parts: &mut Parts, _state: &AppState) -> Result<Self, Self::Rejection> {
        let pairs = query_pairs(parts.uri.query().unwrap_or_default())?;
        read(pairs).map(Query)
    }
}

/// `T` read from `pairs`, blank fields left out.
pub fn read<T: FromParams>(pairs: Vec<(String, String)>) -> Result<T, Refused> {
    let given = pairs
        .into_iter()
        .filter(|(_, value)| !value.trim().is_empty())
        .collect();
    Ok(Params::new(given).read()?)
}

/// The `name=value` pairs of a form body (`application/x-www-form-urlencoded`, as browsers
/// send forms).
pub async fn body_pairs(request: Request, state: &AppState) -> Result<Vec<(String, String)>, Refused> {
    let is_form = request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"));
    if !is_form {
        return Err(ApiError::field("body", "must be a form (application/x-www-form-urlencoded)").into());
    }
    let bytes = Bytes::from_request(request, state)
        .await
        .map_err(|rejection| match rejection {
            BytesRejection::FailedToBufferBody(FailedToBufferBody::LengthLimitError(_)) => {
                ApiError::PayloadTooLarge(state.config().max_body_bytes)
            }
            _ => ApiError::field("body", "could not be read"),
        })?;
    let text = std::str::from_utf8(&bytes).map_err(|_| ApiError::field("body", "is not UTF-8 text"))?;
    Ok(query_pairs(text)?)
}
