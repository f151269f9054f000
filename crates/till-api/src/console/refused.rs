//! Why a console page is not shown, as a page a person reads: never a broken page, never the
//! API's JSON, never internal text.

use super::layout;
use crate::error::ApiError;
use axum::http::StatusCode;
use axum::http::header::{LOCATION, SET_COOKIE};
use axum::response::{IntoResponse, Response};
use maud::html;
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

/// `a, b or c`.
pub fn either(grants: &[Grant]) -> String {
    let names: Vec<&str> = grants.iter().map(|grant| grant.as_str()).collect();
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        match self {
            Refused::SignIn { clear } => {
                let mut response = (StatusCode::SEE_OTHER, [(LOCATION, "/console/sign-in")]).into_response();
                if clear {
                    response
                        .headers_mut()
                        .insert(SET_COOKIE, super::session::cleared_cookie());
                }
                response
            }
            Refused::Scope { needs } => {
                let scopes = either(needs);
                let body = html! {
                    h1 { "Not allowed" }
                    p.refusal data-needs=(scopes) {
                        "Your token lacks the scope " code { (scopes) } ", which this page needs. "
                        "Ask for a token that holds it, then sign in again."
                    }
                };
                let page = layout::bare("Not allowed", body);
                (StatusCode::FORBIDDEN, page).into_response()
            }
            Refused::Forged => {
                let body = html! {
                    h1 { "Form refused" }
                    p.refusal {
                        "This form was out of date or sent from another site, so nothing was changed. "
                        "Go back, reload the page and try again."
                    }
                };
                (StatusCode::FORBIDDEN, layout::bare("Form refused", body)).into_response()
            }
            Refused::Api(error) => {
                let status = error.status();
                match &error {
                    ApiError::Internal(source) => {
                        tracing::error!(error = %source, detail = ?source, "console page failed")
                    }
                    ApiError::Unavailable(source) => tracing::warn!(error = %source, "database unavailable"),
                    _ => tracing::debug!(status = status.as_u16(), code = error.code(), "console page refused"),
                }
                let title = status.canonical_reason().unwrap_or("Refused");
                let body = html! {
                    h1 { (title) }
                    p.refusal { (error.message()) }
                    @if let Some(fields) = error.field_errors() {
                        ul.fields {
                            @for field in fields {
                                li { code { (field.field) } " " (field.message) }
                            }
                        }
                    }
                };
                (status, layout::bare(title, body)).into_response()
            }
        }
    }
}
