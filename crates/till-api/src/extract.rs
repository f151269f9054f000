//! Extractors whose every rejection is an [`ApiError`] in the envelope, never framework text.

use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A JSON body, parsed but not yet validated: validation is each resource's `parse`, which
/// reports every problem at once.
pub struct JsonBody(pub Value);

impl FromRequest<AppState> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let is_json = request
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split(';').next())
            .map(|mime| {
                let mime = mime.trim().to_ascii_lowercase();
                mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
            })
            .unwrap_or(false);
        if !is_json {
            return Err(ApiError::field(
                "body",
                "must be sent with Content-Type: application/json",
            ));
        }
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| match rejection {
                BytesRejection::FailedToBufferBody(failed) if is_length_limit(&failed) => {
                    ApiError::PayloadTooLarge(state.config().max_body_bytes)
                }
                _ => ApiError::field("body", "could not be read"),
            })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ApiError::field("body", "is empty; a JSON object is expected"));
        }
        serde_json::from_slice(&bytes).map(JsonBody).map_err(|error| {
            ApiError::field(
                "body",
                format!("is not valid JSON (line {}, column {})", error.line(), error.column()),
            )
        })
    }
}

fn is_length_limit(failed: &axum::extract::rejection::FailedToBufferBody) -> bool {
    matches!(
        failed,
        axum::extract::rejection::FailedToBufferBody::LengthLimitError(_)
    )
}

/// Path parameters; a parameter that cannot be decoded is a 400 on `path`.
pub struct PathParams<T>(pub T);

impl<T, S> FromRequestParts<S> for PathParams<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| PathParams(value))
            .map_err(|rejection: PathRejection| {
                tracing::debug!(%rejection, "path rejected");
                ApiError::field("path", "contains a parameter that is not valid UTF-8 text")
            })
    }
}

/// Query parameters; a malformed query is a 400 on `query`.
pub struct QueryParams<T>(pub T);

impl<T, S> FromRequestParts<S> for QueryParams<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(value)| QueryParams(value))
            .map_err(|rejection: QueryRejection| {
                tracing::debug!(%rejection, "query rejected");
                ApiError::field("query", "has a parameter of the wrong form")
            })
    }
}
