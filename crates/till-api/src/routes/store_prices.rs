//! Per-store prices: `PUT/GET/DELETE /v1/stores/{storeId}/prices/{skuId}`. A store's own price
//! of an article overrides the catalog's in that store, from its instant on; finalize and the
//! price dry run apply it. The VAT rate stays the catalog's.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, Parsed, PathParams};
use crate::fields::{FromBody, Obj};
use crate::openapi::{Instant, SkuId as SkuIdText, Text, UtcInstant};
use crate::ops;
use crate::routes::Written;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use jiff::Timestamp;
use serde::Serialize;
use till_app::store_prices::{Absent, Put, Seen, Source};
use till_core::catalog::StorePrice;
use till_core::ids::{SkuId, StoreId};
use till_core::instant::{Zone, format_utc};
use till_core::money::Cents;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(put_store_price, get_store_price, delete_store_price))
}

/// Body of `PUT /v1/stores/{storeId}/prices/{skuId}`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct StorePriceBody {
    /// Unit price including VAT in this store, in cents. The VAT rate stays the catalog's.
    #[schema(value_type = i64, minimum = 0, maximum = 9007199254740991_i64)]
    price_cents: Cents,
    /// When the price applies in this store (default: now). A later instant schedules it,
    /// replacing the store's price scheduled at the same instant. An instant more than a few
    /// seconds before now is refused with 422: sales already booked were priced with the price
    /// then.
    #[schema(value_type = Option<Instant>)]
    effective_from: Option<Timestamp>,
}

impl FromBody for StorePriceBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let price_cents = root.required("priceCents", |f| f.cents());
        let effective_from = root.optional("effectiveFrom", |f| f.instant(Zone::UtcOrOffset));
        Some(StorePriceBody {
            price_cents: price_cents?,
            effective_from: effective_from?,
        })
    }
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
    pub(crate) fn of(price: &StorePrice) -> Option<Self> {
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
    Parsed(body): Parsed<StorePriceBody>,
) -> Result<Written<StorePriceView>, ApiError> {
    match till_app::store_prices::put(state.app(), store, sku, body.price_cents, body.effective_from).await? {
        Put::Written { seen, created } => Ok(Written::new(created, view(seen))),
        Put::StartsInThePast => Err(ApiError::Business(
            "effectiveFrom is in the past: a price cannot change before now, since sales already booked \
             were priced with the price in force then."
                .to_owned(),
        )),
        Put::NotInCatalog => Err(crate::phrases::not_in_catalog()),
    }
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
    match till_app::store_prices::read(state.app(), &store, &sku).await? {
        Ok(seen) => Ok(Json(view(seen))),
        Err(absent) => Err(no_price_of_its_own(absent, &store)),
    }
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
    match till_app::store_prices::remove(state.app(), store.clone(), sku).await? {
        Ok(()) => Ok(StatusCode::NO_CONTENT),
        Err(absent) => Err(no_price_of_its_own(absent, &store)),
    }
}

/// The 404 of a store without a price of its own for an article, or of an unknown store or
/// article.
fn no_price_of_its_own(absent: Absent, store: &StoreId) -> ApiError {
    match absent {
        Absent::NoSuchStore => ApiError::NotFound("Store not found.".into()),
        Absent::NotInCatalog => crate::phrases::not_in_catalog(),
        Absent::NoPriceOfItsOwn => ApiError::NotFound(format!(
            "Store {store} has no price of its own for this article: it sells at the catalog's price."
        )),
    }
}

/// The store's prices of an article as the answer shows them.
fn view(seen: Seen) -> StorePriceView {
    StorePriceView {
        store_id: seen.store_id.into_string(),
        sku_id: seen.sku_id.as_str().to_owned(),
        price_cents: seen.price.get(),
        price_source: match seen.source {
            Source::Store => PriceSource::Store,
            Source::Catalog => PriceSource::Catalog,
        },
        scheduled_prices: seen
            .prices
            .after(seen.at)
            .iter()
            .filter_map(ScheduledStorePriceView::of)
            .collect(),
    }
}
