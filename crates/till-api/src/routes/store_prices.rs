//! Per-store prices: `PUT/GET/DELETE /v1/stores/{storeId}/prices/{skuId}`. A store's own price
//! of an article overrides the catalog's in that store, from its instant on; finalize and the
//! price dry run apply it. The VAT rate stays the catalog's.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, JsonBody, Params, PathParams};
use crate::fields::Problems;
use crate::openapi::{Instant, SkuId as SkuIdText, Text, UtcInstant};
use crate::ops;
use crate::routes::Written;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use jiff::Timestamp;
use serde::Serialize;
use till_core::catalog::{StorePrice, StorePrices, price_starts};
use till_core::ids::{SkuId, StoreId};
use till_core::instant::{Zone, format_utc};
use till_store::store_prices::StorePriceWrite;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(put_store_price, get_store_price, delete_store_price))
}

/// Body of `PUT /v1/stores/{storeId}/prices/{skuId}`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // the wire shape for the document; the handler reads the body
struct StorePriceBody {
    /// Unit price including VAT in this store, in cents. The VAT rate stays the catalog's.
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    price_cents: i64,
    /// When the price applies in this store (default: now). A later instant schedules it,
    /// replacing the store's price scheduled at the same instant. An instant more than a few
    /// seconds before now is refused with 422: sales already booked were priced with the price
    /// then.
    #[schema(value_type = Option<Instant>)]
    effective_from: Option<String>,
}

/// Whose price an article sells at in a store now.
#[derive(Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PriceSource {
    /// The store's own price is in force.
    Store,
    /// The store's first own price starts later: until then it sells at the catalog's.
    Catalog,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StorePriceView {
    store_id: String,
    sku_id: String,
    /// Unit price including VAT the store sells the article at now, in cents: its own price
    /// in force, else the catalog's.
    price_cents: i64,
    price_source: PriceSource,
    /// The store's own prices that apply later, soonest first; empty when none is scheduled.
    scheduled_prices: Vec<ScheduledStorePriceView>,
}

/// A store's price that applies from `effectiveFrom` on.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduledStorePriceView {
    #[schema(value_type = UtcInstant)]
    effective_from: String,
    price_cents: i64,
}

impl ScheduledStorePriceView {
    /// A price of the store's own; none for the removal of its price.
    fn of(price: &StorePrice) -> Option<Self> {
        Some(ScheduledStorePriceView {
            effective_from: format_utc(price.effective_from),
            price_cents: price.price?.get(),
        })
    }
}

/// `{storeId}/prices/{skuId}`.
struct StorePricePath {
    store: StoreId,
    sku: SkuId,
}

impl FromParams for StorePricePath {
    fn from_params(params: &Params) -> Option<Self> {
        let store = params.required("storeId", StoreId::parse);
        let sku = params.required("skuId", SkuId::parse);
        Some(StorePricePath {
            store: store?,
            sku: sku?,
        })
    }
}

/// Set a store's own price of an article, or schedule its next one.
///
/// Back-office provisioning: in this store, finalize and the price dry run charge this price
/// instead of the catalog's, for sales rung from its instant on; other stores keep the
/// catalog's. The VAT rate stays the catalog's. With `effectiveFrom` later than now the price
/// is scheduled and the current one stays until then. Idempotent. A person should confirm
/// price changes.
#[utoipa::path(put, path = "/v1/stores/{storeId}/prices/{skuId}", operation_id = "putStorePrice", tag = "provisioning",
    params(("storeId" = Text, Path, description = "The store"), ("skuId" = SkuIdText, Path, description = "The article")),
    request_body = StorePriceBody,
    responses((status = 200, description = "Replaced or scheduled", body = StorePriceView),
              (status = 201, description = "The store had no price of its own for the article", body = StorePriceView),
              (status = 404, description = "Unknown store or article", body = crate::error::ErrorEnvelope),
              (status = 422, description = "effectiveFrom in the past", body = crate::error::ErrorEnvelope)))]
async fn put_store_price(
    _caller: Authorized<ops::PutStorePrice>,
    State(state): State<AppState>,
    PathParams(StorePricePath { store, sku }): PathParams<StorePricePath>,
    JsonBody(body): JsonBody,
) -> Result<Written<StorePriceView>, ApiError> {
    let problems = Problems::new();
    let fields = problems.root(&body).and_then(|root| {
        let price = root.required("priceCents", |f| f.cents());
        let effective_from = root.optional("effectiveFrom", |f| f.instant(Zone::UtcOrOffset));
        Some((price?, effective_from?))
    });
    let (price, effective_from) = problems.finish(|| fields)?;
    let now = state.now();
    let starts = price_starts(effective_from, now).map_err(|_| {
        ApiError::Business(
            "effectiveFrom is in the past: a price cannot change before now, since sales already booked \
             were priced with the price in force then."
                .to_owned(),
        )
    })?;
    let write = StorePriceWrite {
        store_id: store.clone(),
        sku_id: sku.clone(),
        price,
        starts,
    };
    let (prices, created) = state.store().put_store_price(write, now).await?;
    let view = view(&state, store, sku, &prices, now).await?;
    Ok(Written::new(created, view))
}

/// Read a store's own price of an article.
///
/// The price the store sells the article at now, and the store's prices scheduled later.
/// 404 when the store has no price of its own for the article: it sells at the catalog's.
/// Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/stores/{storeId}/prices/{skuId}", operation_id = "getStorePrice", tag = "provisioning",
    params(("storeId" = Text, Path, description = "The store"), ("skuId" = SkuIdText, Path, description = "The article")),
    responses((status = 200, description = "The store's price", body = StorePriceView),
              (status = 404, description = "Unknown store or article, or the store has no price of its own for the article", body = crate::error::ErrorEnvelope)))]
async fn get_store_price(
    _caller: Authorized<ops::GetStorePrice>,
    State(state): State<AppState>,
    PathParams(StorePricePath { store, sku }): PathParams<StorePricePath>,
) -> Result<Json<StorePriceView>, ApiError> {
    let now = state.now();
    let prices = state.store().store_prices(&store, &sku).await?;
    if !prices.any_from(now) {
        return Err(no_price_of_its_own(&state, &store, &sku, now).await);
    }
    Ok(Json(view(&state, store, sku, &prices, now).await?))
}

/// Remove a store's own price of an article.
///
/// From now on the store sells the article at the catalog's price again, and its prices
/// scheduled later are dropped. Sales already booked keep what they were charged; a late sale
/// rung before now still pays the store's price then. 404 when the store has no price of its
/// own for the article. A person should confirm price changes.
#[utoipa::path(delete, path = "/v1/stores/{storeId}/prices/{skuId}", operation_id = "deleteStorePrice", tag = "provisioning",
    params(("storeId" = Text, Path, description = "The store"), ("skuId" = SkuIdText, Path, description = "The article")),
    responses((status = 204, description = "Removed: the store sells at the catalog's price"),
              (status = 404, description = "Unknown store or article, or the store has no price of its own for the article", body = crate::error::ErrorEnvelope)))]
async fn delete_store_price(
    _caller: Authorized<ops::DeleteStorePrice>,
    State(state): State<AppState>,
    PathParams(StorePricePath { store, sku }): PathParams<StorePricePath>,
) -> Result<StatusCode, ApiError> {
    let now = state.now();
    match state
        .store()
        .remove_store_price(store.clone(), sku.clone(), now)
        .await?
    {
        true => Ok(StatusCode::NO_CONTENT),
        false => Err(no_price_of_its_own(&state, &store, &sku, now).await),
    }
}

/// The 404 of a store without a price of its own for an article, or of an unknown store or
/// article.
async fn no_price_of_its_own(state: &AppState, store: &StoreId, sku: &SkuId, now: Timestamp) -> ApiError {
    match state.store().get_store(store).await {
        Ok(None) => return ApiError::NotFound("Store not found.".into()),
        Err(error) => return error.into(),
        Ok(Some(_)) => {}
    }
    match state.store().get_catalog_item(sku, now).await {
        Ok(None) => crate::phrases::not_in_catalog(),
        Err(error) => error.into(),
        Ok(Some(_)) => ApiError::NotFound(format!(
            "Store {store} has no price of its own for this article: it sells at the catalog's price."
        )),
    }
}

/// The store's prices of an article as seen at `now`: the catalog's price stands in until the
/// store's first own price starts.
async fn view(
    state: &AppState,
    store: StoreId,
    sku: SkuId,
    prices: &StorePrices,
    now: Timestamp,
) -> Result<StorePriceView, ApiError> {
    let (price, source) = match prices.price_at(now) {
        Some(own) => (own, PriceSource::Store),
        None => {
            let catalog = state
                .store()
                .get_catalog_item(&sku, now)
                .await?
                .ok_or_else(crate::phrases::not_in_catalog)?;
            (catalog.item.price, PriceSource::Catalog)
        }
    };
    Ok(StorePriceView {
        store_id: store.into_string(),
        sku_id: sku.as_str().to_owned(),
        price_cents: price.get(),
        price_source: source,
        scheduled_prices: prices
            .after(now)
            .iter()
            .filter_map(ScheduledStorePriceView::of)
            .collect(),
    })
}
