//! The console: a back office in the browser, served by the same binary under `/console`
//! (docs/console.md).
//!
//! Every page is HTML rendered on the server from typed values (maud escapes whatever it
//! interpolates), styled by one same-origin stylesheet, with no script at all; charts are SVG
//! drawn here. Pages call the use cases and store reads the API's handlers call, so a figure
//! on a page and the API's answer come from the same code. The console is not part of the API:
//! it is left out of the OpenAPI document (docs/console.md).
//!
//! Signing in puts the back-office token in an http-only, same-site cookie; each page checks
//! it as the bearer header is checked, then states the scopes it needs. Every form that writes
//! carries a token derived from the cookie and must come from this origin
//! ([`session::Write`]).
//!
//! Every page is written in French or English ([`language`]): the words are in [`words`],
//! amounts and dates are written by [`layout`].

mod chart;
mod customers;
mod forms;
mod href;
mod invoices;
mod language;
mod layout;
mod promotions;
mod refused;
mod registers;
mod sales;
mod session;
mod stock;
mod stored_value;
mod today;
mod words;

use crate::state::AppState;
use axum::Router;
use axum::extract::Request;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{any, get, post};
use language::Frame;
use refused::{Pending, Refused};

use language::DefaultLanguage;
pub use language::Language;
pub use session::SecureCookies;

/// Where the console lives.
pub const ROOT: &str = "/console";
/// The one stylesheet, served by the binary.
const STYLESHEET: &str = include_str!("console.css");
/// The icon browsers show in a tab.
const FAVICON: &str = include_str!("favicon.svg");

/// Every console route, before state and middleware.
pub fn router(language: Language) -> Router<AppState> {
    Router::new()
        .route("/console", get(today::page))
        // The address typed with a trailing slash is the console too, not the API's 404.
        .route("/console/", get(async || Redirect::permanent("/console")))
        .route("/console/sign-in", get(session::sign_in_page).post(session::sign_in))
        .route("/console/sign-out", post(session::sign_out))
        .route("/console/registers", get(registers::page))
        .route("/console/registers/{registerId}/verify", post(registers::verify))
        .route("/console/sales", get(sales::search))
        .route("/console/sales/{transactionId}", get(sales::sale))
        .route("/console/sales/{transactionId}/prints", post(sales::print))
        .route("/console/sales/{transactionId}/receipt/send", post(sales::send))
        .route("/console/sales/{transactionId}/invoice", post(invoices::issue))
        .route("/console/invoices/{invoiceId}/pdf", get(invoices::pdf))
        .route("/console/customers", get(customers::search))
        .route(
            "/console/customers/{customerId}",
            get(customers::customer).post(customers::edit),
        )
        .route("/console/customers/{customerId}/export", get(customers::export))
        .route("/console/customers/{customerId}/erase", post(customers::erase))
        .route("/console/promotions", get(promotions::page))
        .route("/console/promotions/{id}/deactivate", post(promotions::deactivate))
        .route("/console/stored-value", get(stored_value::page))
        .route("/console/stock", get(stock::page))
        .route("/console/language", get(language::switch))
        .route("/console/static/console.css", get(stylesheet))
        .route("/console/static/favicon.svg", get(favicon))
        // Any other address under the console is a page of the console that does not exist.
        .route("/console/{*rest}", any(not_found))
        .layer(axum::middleware::from_fn(frame))
        // The deployment's language, for the frame to fall back on: the console's routes
        // alone carry it.
        .layer(axum::Extension(DefaultLanguage(language)))
        .layer(axum::middleware::map_response(protect))
}

/// Chooses the language of the request's page, for the handlers ([`Frame`]) and for the
/// refusals, which are written here once the handler has answered.
async fn frame(mut request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let frame = Frame::of(&parts);
    parts.extensions.insert(frame.clone());
    request = Request::from_parts(parts, body);
    let mut response = next.run(request).await;
    match response.extensions_mut().remove::<Pending>() {
        Some(pending) => pending.write(&frame, response),
        None => response,
    }
}

/// An address under `/console` that is no page: a page saying so, with the console's headers,
/// rather than the API's JSON.
async fn not_found() -> Response {
    Refused::NoPage.into_response()
}

/// The value of the cookie `name` the request carries, if any.
fn cookie<'a>(headers: &'a axum::http::HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(found, _)| *found == name)
        .map(|(_, value)| value)
}

async fn stylesheet() -> Response {
    (
        [
            (CONTENT_TYPE, "text/css; charset=utf-8"),
            (CACHE_CONTROL, "public, max-age=3600"),
        ],
        STYLESHEET,
    )
        .into_response()
}

async fn favicon() -> Response {
    (
        [
            (CONTENT_TYPE, "image/svg+xml"),
            (CACHE_CONTROL, "public, max-age=86400"),
        ],
        FAVICON,
    )
        .into_response()
}

/// What no page may do: run a script, load anything from elsewhere, be framed, or be kept in a
/// cache (pages show a shop's figures). Its address goes to no other site; within the console
/// the browser's forms then name their origin (with `no-referrer` they would say `null`).
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

async fn protect(response: Response) -> Response {
    crate::browser_pages::protect(response, CONTENT_SECURITY_POLICY, "same-origin")
}
