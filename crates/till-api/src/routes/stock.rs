//! `PUT/GET /v1/stores/{storeId}/stock/{skuId}`: counted stock on hand.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, JsonBody, Params, PathParams};
use crate::fields::Problems;
use crate::openapi::{SkuId as SkuIdText, Text};
use crate::ops;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use till_core::ids::{SkuId, StoreId};
use till_core::money::MAX_SAFE_INTEGER;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(put_stock, get_stock))
}

/// Body of `PUT /v1/stores/{storeId}/stock/{skuId}`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // the wire shape for the document
struct StockBody {
    /// Units counted on hand. May be negative: sales are never refused for lack of stock.
    #[schema(minimum = -9007199254740991_i64, maximum = 9007199254740991_i64)]
    on_hand: i64,
}

/// `{storeId}/stock/{skuId}`.
struct StockPath {
    store: StoreId,
    sku: SkuId,
}

impl FromParams for StockPath {
    fn from_params(params: &Params) -> Option<Self> {
        let store = params.required("storeId", StoreId::parse);
        let sku = params.required("skuId", SkuId::parse);
        Some(StockPath {
            store: store?,
            sku: sku?,
        })
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StockView {
    store_id: String,
    sku_id: String,
    on_hand: i64,
}

/// Set the counted stock of an article in a store.
///
/// Back-office provisioning after a count. Each sale then decrements it. Idempotent. A person
/// should confirm.
#[utoipa::path(put, path = "/v1/stores/{storeId}/stock/{skuId}", operation_id = "putStock", tag = "provisioning",
    params(("storeId" = Text, Path), ("skuId" = SkuIdText, Path)),
    request_body = StockBody,
    responses((status = 200, description = "Recorded", body = StockView),
              (status = 404, description = "Unknown store or article", body = crate::error::ErrorEnvelope)))]
async fn put_stock(
    _caller: Authorized<ops::PutStock>,
    State(state): State<AppState>,
    PathParams(StockPath { store, sku }): PathParams<StockPath>,
    JsonBody(body): JsonBody,
) -> Result<Json<StockView>, ApiError> {
    let problems = Problems::new();
    let on_hand = problems
        .root(&body)
        .and_then(|root| root.required("onHand", |f| f.integer(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)));
    let on_hand = problems.finish(|| on_hand)?;
    let level = state.store().put_stock(store, sku, on_hand, state.now()).await?;
    Ok(Json(StockView {
        store_id: level.store_id.into_string(),
        sku_id: level.sku_id.as_str().to_owned(),
        on_hand: level.on_hand,
    }))
}

/// Read the stock of an article in a store.
///
/// Read-only; safe to call at any time. An article never counted nor sold in the store has 0.
#[utoipa::path(get, path = "/v1/stores/{storeId}/stock/{skuId}", operation_id = "getStock", tag = "provisioning",
    params(("storeId" = Text, Path), ("skuId" = SkuIdText, Path)),
    responses((status = 200, description = "Stock on hand", body = StockView),
              (status = 404, description = "Unknown store or article", body = crate::error::ErrorEnvelope)))]
async fn get_stock(
    _caller: Authorized<ops::GetStock>,
    State(state): State<AppState>,
    PathParams(StockPath { store, sku }): PathParams<StockPath>,
) -> Result<Json<StockView>, ApiError> {
    let on_hand = match state.store().get_stock(&store, &sku).await? {
        Some(level) => level.on_hand,
        None => {
            if state.store().get_store(&store).await?.is_none() {
                return Err(ApiError::NotFound("Store not found.".into()));
            }
            if state.store().get_catalog_item(&sku, state.now()).await?.is_none() {
                return Err(crate::phrases::not_in_catalog());
            }
            0
        }
    };
    Ok(Json(StockView {
        store_id: store.into_string(),
        sku_id: sku.as_str().to_owned(),
        on_hand,
    }))
}
