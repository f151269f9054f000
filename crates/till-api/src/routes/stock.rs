//! Stock on hand per store and article (docs/stock.md): `PUT/GET
//! /v1/stores/{storeId}/stock/{skuId}`, the article's ledger of movements, and counts of a
//! store's shelves.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, Parsed, PathParams, QueryParams};
use crate::fields::{FromBody, Obj};
use crate::openapi::{SkuId as SkuIdText, Text, UtcInstant};
use crate::ops;
use crate::pagination::{Page, PageQuery, Paging, Scope};
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use std::collections::HashSet;
use till_app::stock::{CountLine, CountRecord, CountedLine, Done, Movement, Stocked};
use till_core::ids::{CountId, SkuId, StoreId};
use till_core::instant::format_utc;
use till_core::money::MAX_SAFE_INTEGER;
use till_core::stock::{StockReason, Units};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(put_stock, get_stock))
        .routes(routes!(list_movements))
        .routes(routes!(record_count))
}

/// Most articles in one count or transfer.
pub const MAX_STOCK_LINES: usize = 1_000;

/// Body of `PUT /v1/stores/{storeId}/stock/{skuId}`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct StockBody {
    /// Units counted on hand. May be negative: sales are never refused for lack of stock.
    #[schema(minimum = -9007199254740991_i64, maximum = 9007199254740991_i64)]
    on_hand: i64,
}

impl FromBody for StockBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let on_hand = root.required("onHand", |f| f.integer(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER));
        Some(StockBody { on_hand: on_hand? })
    }
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

/// Set the stock of an article in a store.
///
/// An adjustment: the level becomes `onHand`, recorded in the article's ledger as one movement
/// of the difference (reason `adjustment`). Sales committed at the same time apply on top. To
/// record a count of the shelves, with its id, use `POST /v1/stores/{storeId}/stock-counts`. A
/// person should confirm.
#[utoipa::path(put, path = "/v1/stores/{storeId}/stock/{skuId}", operation_id = "putStock", tag = "provisioning",
    params(("storeId" = Text, Path), ("skuId" = SkuIdText, Path)),
    request_body = StockBody,
    responses((status = 200, description = "Recorded", body = StockView),
              (status = 404, description = "Unknown store or article", body = crate::error::ErrorEnvelope)))]
async fn put_stock(
    _caller: Authorized<ops::PutStock>,
    State(state): State<AppState>,
    PathParams(StockPath { store, sku }): PathParams<StockPath>,
    Parsed(StockBody { on_hand }): Parsed<StockBody>,
) -> Result<Json<StockView>, ApiError> {
    let level = till_app::stock::adjust(state.app(), store, sku, on_hand).await?;
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
    let on_hand = found(till_app::stock::on_hand(state.app(), &store, &sku).await?)?;
    Ok(Json(StockView {
        store_id: store.into_string(),
        sku_id: sku.as_str().to_owned(),
        on_hand,
    }))
}

/// What was read, or the 404 of an unknown store or article.
fn found<T>(stocked: Stocked<T>) -> Result<T, ApiError> {
    match stocked {
        Stocked::Found(found) => Ok(found),
        Stocked::NoSuchStore => Err(ApiError::NotFound("Store not found.".into())),
        Stocked::NotInCatalog => Err(crate::phrases::not_in_catalog()),
    }
}

/// `{storeId}` of a store's counts.
struct StorePath(StoreId);

impl FromParams for StorePath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("storeId", StoreId::parse).map(StorePath)
    }
}

/// The page of an article's movements to read. Its key is a movement id, which every store
/// and article share: a cursor of another article's ledger starts this one after that id.
struct MovementList(Paging<i64>);

impl FromParams for MovementList {
    fn from_params(params: &Params) -> Option<Self> {
        PageQuery::read(params)?
            .paging(params, Scope::new("stockMovements"))
            .map(MovementList)
    }
}

fn reason_schema() -> utoipa::openapi::schema::Schema {
    crate::openapi::words(
        StockReason::ALL.iter().map(|reason| reason.as_str()),
        "Why stock moved.",
    )
}

/// One change of an article's stock in a store.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StockMovementView {
    /// Increases with each movement written.
    #[schema(minimum = 1)]
    id: i64,
    store_id: String,
    sku_id: String,
    /// Units in (positive) or out (negative).
    delta_quantity: i64,
    #[schema(schema_with = reason_schema)]
    reason: &'static str,
    /// The sale's or return's `transactionId`, the count's `countId` or the transfer's
    /// `transferId`; null for an adjustment.
    reference: Option<String>,
    #[schema(value_type = UtcInstant)]
    at: String,
}

impl From<Movement> for StockMovementView {
    fn from(movement: Movement) -> Self {
        StockMovementView {
            id: movement.id,
            store_id: movement.store_id.into_string(),
            sku_id: movement.sku_id.as_str().to_owned(),
            delta_quantity: movement.delta,
            reason: StockReason::as_str(movement.reason),
            reference: movement.reference,
            at: format_utc(movement.at),
        }
    }
}

/// A page of the ledger, as the document names it.
type StockMovementPage = Page<StockMovementView>;

/// List the movements of an article's stock in a store.
///
/// Oldest first, a page at a time: follow `nextCursor` until it is null. The level
/// (`GET /v1/stores/{storeId}/stock/{skuId}`) is the sum of every movement's `deltaQuantity`.
/// Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/stores/{storeId}/stock/{skuId}/movements", operation_id = "listStockMovements", tag = "provisioning",
    params(("storeId" = Text, Path), ("skuId" = SkuIdText, Path), PageQuery),
    responses((status = 200, description = "A page of movements, oldest first", body = StockMovementPage),
              (status = 404, description = "Unknown store or article", body = crate::error::ErrorEnvelope)))]
async fn list_movements(
    _caller: Authorized<ops::ListStockMovements>,
    State(state): State<AppState>,
    PathParams(StockPath { store, sku }): PathParams<StockPath>,
    QueryParams(MovementList(paging)): QueryParams<MovementList>,
) -> Result<Json<StockMovementPage>, ApiError> {
    let movements = till_app::stock::movements(state.app(), &store, &sku, &paging.window()).await?;
    let movements = found(movements)?;
    Ok(Json(paging.page(movements, |m| m.id, StockMovementView::from)))
}

/// Body of `POST /v1/stores/{storeId}/stock-counts`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct StockCountBody {
    /// Chosen by the back office; the same count sent again is answered again, not applied
    /// twice.
    #[schema(value_type = Text)]
    count_id: CountId,
    /// Each article once.
    #[schema(min_items = 1, max_items = 1000)]
    lines: Vec<CountLineBody>,
}

#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct CountLineBody {
    #[schema(value_type = SkuIdText)]
    sku_id: SkuId,
    /// Units found on the shelves.
    #[schema(value_type = i64, minimum = 0, maximum = 9007199254740991_i64)]
    counted_quantity: Units,
}

impl FromBody for StockCountBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let count_id = root.required("countId", |f| f.parse_text(CountId::parse));
        let lines = stock_lines(root, "count", |obj, sku_id| {
            let counted = obj.required("countedQuantity", units);
            Some(CountLineBody {
                sku_id: sku_id?,
                counted_quantity: counted?,
            })
        });
        Some(StockCountBody {
            count_id: count_id?,
            lines: lines?,
        })
    }
}

impl From<CountLineBody> for CountLine {
    fn from(line: CountLineBody) -> CountLine {
        CountLine {
            sku_id: line.sku_id,
            counted_quantity: line.counted_quantity,
        }
    }
}

/// A count as recorded.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StockCountView {
    count_id: String,
    store_id: String,
    #[schema(value_type = UtcInstant)]
    counted_at: String,
    /// In the order sent.
    lines: Vec<CountedLineView>,
}

/// One article of a count: the level the count saw and the movement that set it.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CountedLineView {
    sku_id: String,
    counted_quantity: i64,
    /// The level when the count was recorded, sales committed before it included.
    previous_quantity: i64,
    /// `countedQuantity - previousQuantity`, the movement recorded with reason `count`.
    delta_quantity: i64,
}

impl From<CountRecord> for StockCountView {
    fn from(record: CountRecord) -> Self {
        StockCountView {
            count_id: record.count_id.into_string(),
            store_id: record.store_id.into_string(),
            counted_at: format_utc(record.counted_at),
            lines: record.lines.into_iter().map(CountedLineView::from).collect(),
        }
    }
}

impl From<CountedLine> for CountedLineView {
    fn from(line: CountedLine) -> Self {
        CountedLineView {
            sku_id: line.sku_id.as_str().to_owned(),
            counted_quantity: line.counted_quantity,
            previous_quantity: line.previous_quantity,
            delta_quantity: line.delta_quantity,
        }
    }
}

/// The lines of a count or a transfer: 1 to [`MAX_STOCK_LINES`], each article once, each
/// parsed by `line`.
pub fn stock_lines<'a, T>(
    root: &crate::fields::Obj<'a>,
    noun: &str,
    mut line: impl FnMut(&crate::fields::Obj<'a>, Option<SkuId>) -> Option<T>,
) -> Option<Vec<T>> {
    root.required("lines", |field| {
        match field.value().as_array().map(Vec::len) {
            Some(0) => return field.fail("must hold at least one line"),
            Some(n) if n > MAX_STOCK_LINES => return field.fail(format!("must hold at most {MAX_STOCK_LINES} lines")),
            _ => {}
        }
        let mut seen = HashSet::new();
        field.array(|entry| {
            let obj = entry.object()?;
            let sku = obj.required("skuId", |f| f.parse_text(SkuId::parse));
            let sku = match sku {
                Some(sku) if !seen.insert(sku.clone()) => {
                    obj.fail("skuId", format!("appears more than once in the {noun}"))
                }
                other => other,
            };
            line(&obj, sku)
        })
    })
}

/// A quantity of units: 0 to the largest safe integer.
pub fn units(field: crate::fields::Field<'_>) -> Option<Units> {
    field.integer(0, MAX_SAFE_INTEGER).and_then(Units::new)
}

/// Record a count of a store's shelves.
///
/// Each article's level becomes what was counted, as one movement (reason `count`) of the
/// difference from the level when the count is recorded; sales committed after it apply on
/// top, none is lost. Sent again with the same `countId` and lines, the count is answered again
/// (200) and applied once. A person should confirm.
#[utoipa::path(post, path = "/v1/stores/{storeId}/stock-counts", operation_id = "recordStockCount", tag = "provisioning",
    params(("storeId" = Text, Path)),
    request_body = StockCountBody,
    responses((status = 201, description = "Recorded", body = StockCountView),
              (status = 200, description = "Recorded earlier with the same lines", body = StockCountView),
              (status = 404, description = "Unknown store", body = crate::error::ErrorEnvelope),
              (status = 409, description = "The countId was recorded with other lines", body = crate::error::ErrorEnvelope),
              (status = 422, description = "An article not in the catalog", body = crate::error::ErrorEnvelope)))]
async fn record_count(
    _caller: Authorized<ops::RecordStockCount>,
    State(state): State<AppState>,
    PathParams(StorePath(store)): PathParams<StorePath>,
    Parsed(StockCountBody { count_id, lines }): Parsed<StockCountBody>,
) -> Result<(StatusCode, Json<StockCountView>), ApiError> {
    let lines = lines.into_iter().map(CountLine::from).collect();
    let Done { record, replayed } = till_app::stock::count(state.app(), store, count_id, lines).await?;
    let status = if replayed { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, Json(record.into())))
}
