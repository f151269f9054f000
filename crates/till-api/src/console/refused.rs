//! Why a console page is not shown, as a page a person reads: never a broken page, never the
//! API's JSON, never internal text.
//!
//! A refusal is decided where the request is handled, without its language; it is answered
//! with its status and a [`Pending`] page, which the console's frame middleware writes in the
//! visitor's language.

use super::language::Frame;
use super::layout;
use crate::error::ApiError;
use axum::body::Body;
use axum::http::header::{CONTENT_TYPE, LOCATION, SET_COOKIE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use till_app::storage::StoreError;
use till_core::grant::Grant;

/// A page or a form refused.
#[derive(Debug)]
pub enum Refused {
    /// No cookie, or one whose token no longer authenticates: sign in (again).
    SignIn {
        /// Whether a cookie was sent, to be cleared.
        clear: bool,
    },
    /// The token lacks every scope that can do what the page does.
    Scope {
        /// Any one of them would do.
        needs: &'static [Grant],
    },
    /// A form that writes, sent without this session's form token or from another origin.
    /// Nothing was changed.
    Forged,
    /// An address under the console that is no page.
    NoPage,
    /// What the API would have answered, shown as a page.
    Api(ApiError),
}

impl From<ApiError> for Refused {
    fn from(error: ApiError) -> Self {
        Refused::Api(error)
    }
}

impl From<StoreError> for Refused {
    fn from(error: StoreError) -> Self {
        Refused::Api(error.into())
    }
}

impl From<till_app::Error> for Refused {
    fn from(error: till_app::Error) -> Self {
        Refused::Api(error.into())
    }
}

/// `a, b or c`: scope names, the same in every language.
pub fn either(grants: &[Grant]) -> String {
    let names: Vec<&str> = grants.iter().map(|grant| grant.as_str()).collect();
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// A refusal's page, still to be written in the visitor's language.
#[derive(Clone, Debug)]
pub struct Pending(Kind);

#[derive(Clone, Debug)]
enum Kind {
    Scope(String),
    Forged,
    Missing,
    Api {
        status: StatusCode,
        /// The API's own sentence (English), for the refusals a client may act on.
        message: Option<String>,
        fields: Vec<(String, String)>,
    },
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let (status, page) = match self {
            Refused::SignIn { clear } => {
                let mut response = (StatusCode::SEE_OTHER, [(LOCATION, "/console/sign-in")]).into_response();
                if clear {
                    response
                        .headers_mut()
                        .insert(SET_COOKIE, super::session::cleared_cookie());
                }
                return response;
            }
            Refused::Scope { needs } => (StatusCode::FORBIDDEN, Kind::Scope(either(needs))),
            Refused::Forged => (StatusCode::FORBIDDEN, Kind::Forged),
            Refused::NoPage => (StatusCode::NOT_FOUND, Kind::Missing),
            Refused::Api(error) => {
                let status = error.status();
                let message = match &error {
                    ApiError::Internal(source) => {
                        tracing::error!(error = %source, detail = ?source, "console page failed");
                        None
                    }
                    ApiError::Unavailable(source) => {
                        tracing::warn!(error = %source, "database unavailable");
                        None
                    }
                    _ => {
                        tracing::debug!(status = status.as_u16(), code = error.code(), "console page refused");
                        Some(error.message())
                    }
                };
                let fields = error
                    .field_errors()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|field| (field.field, field.message))
                    .collect();
                (
                    status,
                    Kind::Api {
                        status,
                        message,
                        fields,
                    },
                )
            }
        };
        let mut response = status.into_response();
        response.extensions_mut().insert(Pending(page));
        response
    }
}

impl Pending {
    /// The page, written for `frame`, with the status and headers `response` had.
    pub fn write(self, frame: &Frame, response: Response) -> Response {
        let (mut parts, _) = response.into_parts();
        let page = self.page(frame);
        parts
            .headers
            .insert(CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
        parts.headers.remove(axum::http::header::CONTENT_LENGTH);
        Response::from_parts(parts, Body::from(page.into_string()))
    }

    fn page(self, frame: &Frame) -> Markup {
        let words = frame.language.words();
        match self.0 {
            Kind::Scope(scopes) => {
                let body = html! {
                    h1 { (words.not_allowed) }
                    p.refusal data-needs=(scopes) { ((words.lacks_scope)(&scopes)) }
                };
                layout::bare(words.not_allowed, frame, body)
            }
            Kind::Forged => {
                let body = html! {
                    h1 { (words.form_refused) }
                    p.refusal { (words.form_refused_text) }
                };
                layout::bare(words.form_refused, frame, body)
            }
            Kind::Missing => {
                let body = html! {
                    h1 { (words.not_found) }
                    p.refusal { (words.no_such_page) }
                };
                layout::bare(words.not_found, frame, body)
            }
            Kind::Api {
                status,
                message,
                fields,
            } => {
                let (title, text) = match status {
                    StatusCode::BAD_REQUEST => (words.bad_request, words.bad_request_text),
                    StatusCode::NOT_FOUND => (words.not_found, words.not_found_text),
                    StatusCode::PAYLOAD_TOO_LARGE => (words.too_large, words.refused_text),
                    StatusCode::SERVICE_UNAVAILABLE => (words.unavailable, Some(words.unavailable_text)),
                    status if status.is_server_error() => (words.failed, Some(words.failed_text)),
                    _ => (words.refused, words.refused_text),
                };
                // The API's sentences are English: marked so, where the page is not.
                let detail_lang = (frame.language != super::language::Language::English).then_some("en");
                let body = html! {
                    h1 { (title) }
                    @if let Some(text) = text {
                        p.refusal { (text) }
                    }
                    @if let Some(message) = &message {
                        p.refusal.detail lang=[detail_lang] { (message) }
                    }
                    @if !fields.is_empty() {
                        ul.fields lang=[detail_lang] {
                            @for (field, message) in &fields {
                                li { code { (field) } " " (message) }
                            }
                        }
                    }
                };
                layout::bare(title, frame, body)
            }
        }
    }
}
