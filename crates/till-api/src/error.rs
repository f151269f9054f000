//! The one error type of the HTTP layer and the envelope every failure is written in:
//! `{"error": {"code", "message", "statusCode", "fieldErrors"?}}`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use till_app::storage::StoreError;

/// One problem with one field of a request, named by its dot path (`cart.lines.0.skuId`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct FieldError {
    /// Dot path of the field; `body` when the body as a whole is at fault.
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Every way a request can fail. The message of each variant is shown to the person at the
/// till, so it never carries SQL, paths or library error text; those go to the log.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("the request is invalid")]
    Validation(Vec<FieldError>),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    MethodNotAllowed(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    PreconditionFailed(String),
    #[error("The body is larger than the {0} bytes accepted.")]
    PayloadTooLarge(usize),
    /// The request did not arrive in time (its head or its body).
    #[error("{0}")]
    RequestTimeout(String),
    /// The request target is longer than the server reads.
    #[error("The request target is longer than the {0} bytes accepted.")]
    UriTooLong(usize),
    /// The request's header section is larger than the server reads.
    #[error("The request headers are larger than the {0} bytes accepted.")]
    HeadersTooLarge(usize),
    /// The node holds as many connections as it is configured for.
    #[error("{0}")]
    Overloaded(String),
    #[error("{0}")]
    Business(String),
    /// A code from a channel vocabulary (elevation) rather than the kernel enum.
    #[error("{message}")]
    Channel {
        status: StatusCode,
        code: &'static str,
        message: String,
        retry_after: Option<u64>,
    },
    /// The database could not be reached; nothing was written.
    #[error("the service is temporarily unavailable")]
    Unavailable(#[source] StoreError),
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ApiError {
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> ApiError {
        ApiError::Validation(vec![FieldError::new(field, message)])
    }

    pub fn internal(error: impl std::error::Error + Send + Sync + 'static) -> ApiError {
        ApiError::Internal(Box::new(error))
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Validation(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::PreconditionFailed(_) => StatusCode::PRECONDITION_FAILED,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::RequestTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            ApiError::UriTooLong(_) => StatusCode::URI_TOO_LONG,
            ApiError::HeadersTooLarge(_) => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            ApiError::Overloaded(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Business(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Channel { status, .. } => *status,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The kernel code by status, or the channel's own code. Statuses the
    /// kernel list does not name have a code of their own, so that a client branching on `code`
    /// never mistakes a wrong method for a missing resource or a stale `If-Match` for a
    /// duplicate.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::Validation(_) => "VALIDATION_FAILED",
            ApiError::Unauthorized(_) => "UNAUTHORIZED",
            ApiError::Forbidden(_) => "FORBIDDEN",
            ApiError::NotFound(_) => "NOT_FOUND",
            ApiError::MethodNotAllowed(_) => "METHOD_NOT_ALLOWED",
            ApiError::Conflict(_) => "CONFLICT",
            ApiError::PreconditionFailed(_) => "PRECONDITION_FAILED",
            ApiError::PayloadTooLarge(_) => "PAYLOAD_TOO_LARGE",
            ApiError::RequestTimeout(_) => "REQUEST_TIMEOUT",
            ApiError::UriTooLong(_) => "URI_TOO_LONG",
            ApiError::HeadersTooLarge(_) => "HEADERS_TOO_LARGE",
            ApiError::Business(_) => "BUSINESS_RULE_VIOLATION",
            ApiError::Channel { code, .. } => code,
            ApiError::Unavailable(_) | ApiError::Overloaded(_) => "SERVICE_UNAVAILABLE",
            ApiError::Internal(_) => "INTERNAL_ERROR",
        }
    }

    pub(crate) fn message(&self) -> String {
        match self {
            ApiError::Validation(errors) if errors.len() == 1 => {
                format!("The request is invalid: {} {}.", errors[0].field, errors[0].message)
            }
            ApiError::Validation(errors) => {
                format!("The request is invalid: {} fields need attention.", errors.len())
            }
            ApiError::Unavailable(_) => {
                "The service is temporarily unavailable; nothing was recorded. Retry shortly.".to_owned()
            }
            ApiError::Internal(_) => {
                "An unexpected error occurred; nothing was recorded unless a retry says so. It is safe to retry the same request."
                    .to_owned()
            }
            other => other.to_string(),
        }
    }

    pub(crate) fn field_errors(&self) -> Option<Vec<FieldError>> {
        match self {
            ApiError::Validation(errors) => Some(errors.clone()),
            _ => None,
        }
    }
}

/// The envelope as it appears on the wire and in the OpenAPI document.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorEnvelope {
    pub error: ErrorBody,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[serde(deny_unknown_fields)]
pub struct ErrorBody {
    /// Branch on this: VALIDATION_FAILED (400), UNAUTHORIZED (401), FORBIDDEN (403), NOT_FOUND
    /// (404), METHOD_NOT_ALLOWED (405), REQUEST_TIMEOUT (408), CONFLICT (409),
    /// PRECONDITION_FAILED (412), PAYLOAD_TOO_LARGE (413), URI_TOO_LONG (414),
    /// BUSINESS_RULE_VIOLATION (422), HEADERS_TOO_LARGE (431), INTERNAL_ERROR (500),
    /// SERVICE_UNAVAILABLE (503), or a channel code of the elevation operation.
    pub code: String,
    /// For a person; never parse it.
    pub message: String,
    /// Mirrors the HTTP status.
    pub status_code: u16,
    /// Present on VALIDATION_FAILED only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field_errors: Option<Vec<FieldError>>,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        match &self {
            ApiError::Internal(source) => {
                tracing::error!(error = %source, detail = ?source, "request failed")
            }
            ApiError::Unavailable(source) => {
                tracing::warn!(error = %source, "database unavailable")
            }
            _ => tracing::debug!(status = status.as_u16(), code = self.code(), "request refused"),
        }
        let envelope = ErrorEnvelope {
            error: ErrorBody {
                code: self.code().to_owned(),
                message: self.message(),
                status_code: status.as_u16(),
                field_errors: self.field_errors(),
            },
        };
        let mut response = (status, axum::Json(envelope)).into_response();
        let headers = response.headers_mut();
        match &self {
            ApiError::Unauthorized(_) => {
                headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            ApiError::Channel {
                retry_after: Some(seconds),
                ..
            } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(*seconds));
            }
            ApiError::Unavailable(_) | ApiError::Overloaded(_) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            _ => {}
        }
        response
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound(what) => ApiError::NotFound(format!("{} not found.", capitalize(what))),
            StoreError::Conflict(conflict) => conflict.into(),
            StoreError::Rule(rule) => rule.into(),
            StoreError::Stale(stale) => stale.into(),
            StoreError::Forbidden(forbidden) => forbidden.into(),
            error @ (StoreError::Unavailable(_)
            | StoreError::Contended(_)
            | StoreError::Raced(_)
            | StoreError::WriterStopped) => ApiError::Unavailable(error),
            other => ApiError::internal(other),
        }
    }
}

pub(crate) fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
