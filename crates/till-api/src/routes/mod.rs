//! One router per resource, merged into the API.

pub mod catalog;
pub mod checkout;
pub mod coupons;
pub mod customers;
pub mod elevation;
pub mod events;
pub mod exports;
pub mod fiscal;
pub mod health;
pub mod invoices;
pub mod payments;
pub mod promotions;
pub mod receipt_links;
pub mod receipt_sends;
pub mod reports;
pub mod returns;
pub mod sales;
pub mod sessions;
pub mod staff;
pub mod stock;
pub mod stock_transfers;
pub mod store_prices;
pub mod stored_value;
pub mod stores;
pub mod sync;
pub mod webhooks;

use crate::state::AppState;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;

/// Every documented route, before state and middleware.
pub fn api_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(health::router())
        .merge(stores::router())
        .merge(catalog::router())
        .merge(store_prices::router())
        .merge(sync::router())
        .merge(stock::router())
        .merge(stock_transfers::router())
        .merge(staff::router())
        .merge(customers::router())
        .merge(payments::router())
        .merge(coupons::router())
        .merge(promotions::router())
        .merge(sessions::router())
        .merge(checkout::router())
        .merge(elevation::router())
        .merge(sales::router())
        .merge(receipt_links::router())
        .merge(receipt_sends::router())
        .merge(returns::router())
        .merge(fiscal::router())
        .merge(exports::router())
        .merge(stored_value::router())
        .merge(events::router())
        .merge(webhooks::router())
        .merge(reports::router())
        .merge(invoices::router())
        .merge(crate::mcp::http::router())
}

/// The answer to an idempotent PUT: 201 when it created the resource, else 200.
pub struct Written<T> {
    created: bool,
    body: T,
}

impl<T> Written<T> {
    pub fn new(created: bool, body: T) -> Written<T> {
        Written { created, body }
    }
}

impl<T: Serialize> IntoResponse for Written<T> {
    fn into_response(self) -> Response {
        let status = if self.created {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        };
        (status, Json(self.body)).into_response()
    }
}
