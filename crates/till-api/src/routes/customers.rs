//! `GET /v1/customers/{customerId}/loyalty`: loyalty points earned at sales.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, PathParams};
use crate::openapi::Text;
use crate::ops;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use till_core::ids::CustomerId;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_loyalty))
}

/// `{customerId}`.
struct CustomerPath(CustomerId);

impl FromParams for CustomerPath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("customerId", CustomerId::parse).map(CustomerPath)
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoyaltyView {
    customer_id: String,
    points: i64,
}

/// Read a customer's loyalty points.
///
/// A customer is enrolled at their first sale. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/customers/{customerId}/loyalty", operation_id = "getCustomerLoyalty", tag = "provisioning",
    params(("customerId" = Text, Path)),
    responses((status = 200, description = "The points balance", body = LoyaltyView),
              (status = 404, description = "Customer never seen at a sale", body = crate::error::ErrorEnvelope)))]
async fn get_loyalty(
    _caller: Authorized<ops::GetLoyalty>,
    State(state): State<AppState>,
    PathParams(CustomerPath(customer)): PathParams<CustomerPath>,
) -> Result<Json<LoyaltyView>, ApiError> {
    let account = till_app::customers::loyalty_account(state.app(), &customer)
        .await?
        .ok_or_else(|| ApiError::NotFound("Customer not found: no sale has named them yet.".into()))?;
    Ok(Json(LoyaltyView {
        customer_id: account.customer_id.into_string(),
        points: account.points,
    }))
}
