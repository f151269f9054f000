//! `GET /v1/sales/{transactionId}`: a committed sale, as its event.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::PathParams;
use crate::ops;
use crate::routes::checkout::event::SaleEvent;
use crate::state::AppState;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use till_core::ids::TransactionId;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_sale))
}

/// Read a committed sale.
///
/// Returns the sale event exactly as finalize answered it. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/sales/{transactionId}", operation_id = "getSale", tag = "checkout",
    params(("transactionId" = String, Path)),
    responses((status = 200, description = "The sale event", body = SaleEvent),
              (status = 404, description = "No sale with this transaction id", body = crate::error::ErrorEnvelope)))]
async fn get_sale(
    _caller: Authorized<ops::GetSale>,
    State(state): State<AppState>,
    PathParams(raw_id): PathParams<String>,
) -> Result<Response, ApiError> {
    let id = TransactionId::parse(&raw_id).map_err(|error| ApiError::field("transactionId", error.to_string()))?;
    let (_, body) = state
        .store()
        .find_sale(&id)
        .await?
        .ok_or_else(|| ApiError::NotFound("No sale with this transaction id.".into()))?;
    Ok(([(CONTENT_TYPE, "application/json")], body).into_response())
}
