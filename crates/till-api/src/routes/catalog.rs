//! The price authority: `PUT/GET /v1/catalog/skus/{skuId}`, `GET /v1/catalog/skus` and
//! `POST /v1/catalog/import`.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, JsonBody, Params, PathParams, QueryParams};
use crate::fields::{Obj, Problems};
use crate::openapi::{SkuId as SkuIdText, Text};
use crate::ops;
use crate::pagination::{Page, PageParams, PageQuery, Paging, Scope};
use crate::routes::Written;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use std::collections::HashSet;
use till_core::catalog::CatalogItem;
use till_core::ids::SkuId;
use till_core::instant::format_utc;
use till_core::money::VatRate;
use till_store::catalog::CatalogRecord;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Most articles in one import request.
const MAX_IMPORT: usize = 50_000;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(put_item, get_item))
        .routes(routes!(list_items))
        .routes(routes!(import))
}

/// Body of `PUT /v1/catalog/skus/{skuId}`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // the wire shape for the document; `parse_item` reads the body
struct CatalogItemBody {
    #[schema(value_type = Text)]
    name: String,
    /// Unit price including VAT, in cents.
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    price_cents: i64,
    /// VAT rate in percent, at most two decimals (20, 10, 5.5, 2.1).
    #[schema(minimum = 0, maximum = 100, multiple_of = 0.01)]
    vat_rate: f64,
}

/// One article of an import.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct ImportItemBody {
    /// Each article once per import.
    #[schema(value_type = SkuIdText)]
    sku_id: String,
    #[schema(value_type = Text)]
    name: String,
    /// Unit price including VAT, in cents.
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    price_cents: i64,
    /// VAT rate in percent, at most two decimals.
    #[schema(minimum = 0, maximum = 100, multiple_of = 0.01)]
    vat_rate: f64,
}

/// Body of `POST /v1/catalog/import`.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
struct ImportBody {
    /// At most 50000 articles, each id once.
    #[schema(max_items = 50000)]
    skus: Vec<ImportItemBody>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CatalogItemView {
    sku_id: String,
    name: String,
    price_cents: i64,
    #[schema(value_type = f64)]
    vat_rate: serde_json::Number,
    created_at: String,
    updated_at: String,
}

impl From<CatalogRecord> for CatalogItemView {
    fn from(record: CatalogRecord) -> Self {
        CatalogItemView {
            sku_id: record.item.sku_id.as_str().to_owned(),
            name: record.item.name,
            price_cents: record.item.price.get(),
            vat_rate: record.item.vat_rate.as_json_number(),
            created_at: format_utc(record.created_at),
            updated_at: format_utc(record.updated_at),
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ImportSummaryView {
    created: usize,
    updated: usize,
}

/// `{skuId}` of the catalog routes.
struct SkuPath(SkuId);

impl FromParams for SkuPath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("skuId", SkuId::parse).map(SkuPath)
    }
}

/// Reads `name`, `priceCents` and `vatRate` of an article object.
fn item_fields(obj: &Obj<'_>, sku_id: Option<SkuId>) -> Option<CatalogItem> {
    let name = obj.required("name", |f| f.text());
    let price = obj.required("priceCents", |f| f.cents());
    let vat_rate = obj.required("vatRate", vat_rate);
    Some(CatalogItem {
        sku_id: sku_id?,
        name: name?,
        price: price?,
        vat_rate: vat_rate?,
    })
}

/// A VAT rate in percent. The number must be the one its two decimals write (`5.5`, `0.07`),
/// as `multipleOf: 0.01` reads it: `1e-300` or `0.30000000000000004` is not rounded to a rate.
pub(crate) fn vat_rate(field: crate::fields::Field<'_>) -> Option<VatRate> {
    let percent = field.number()?;
    VatRate::from_percent(percent)
        .filter(|rate| rate.hundredths() as f64 / 100.0 == percent)
        .or_else(|| field.fail("must be a percentage from 0 to 100 with at most two decimals"))
}

/// Create or replace one article of the price authority.
///
/// Back-office provisioning: finalize prices every catalog line from here. Idempotent. A person
/// should confirm price changes.
#[utoipa::path(put, path = "/v1/catalog/skus/{skuId}", operation_id = "putCatalogItem", tag = "provisioning",
    params(("skuId" = SkuIdText, Path, description = "The article")),
    request_body = CatalogItemBody,
    responses((status = 200, description = "Replaced", body = CatalogItemView),
              (status = 201, description = "Created", body = CatalogItemView)))]
async fn put_item(
    _caller: Authorized<ops::PutCatalogItem>,
    State(state): State<AppState>,
    PathParams(SkuPath(id)): PathParams<SkuPath>,
    JsonBody(body): JsonBody,
) -> Result<Written<CatalogItemView>, ApiError> {
    let problems = Problems::new();
    let item = problems.root(&body).and_then(|root| item_fields(&root, Some(id)));
    let item = problems.finish(|| item)?;
    let (record, created) = state.store().put_catalog_item(item, state.now()).await?;
    Ok(Written::new(created, record.into()))
}

/// Read one article of the price authority.
///
/// Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/catalog/skus/{skuId}", operation_id = "getCatalogItem", tag = "provisioning",
    params(("skuId" = SkuIdText, Path, description = "The article")),
    responses((status = 200, description = "The article", body = CatalogItemView),
              (status = 404, description = "Not in the catalog", body = crate::error::ErrorEnvelope)))]
async fn get_item(
    _caller: Authorized<ops::GetCatalogItem>,
    State(state): State<AppState>,
    PathParams(SkuPath(id)): PathParams<SkuPath>,
) -> Result<Json<CatalogItemView>, ApiError> {
    let record = state
        .store()
        .get_catalog_item(&id)
        .await?
        .ok_or_else(crate::phrases::not_in_catalog)?;
    Ok(Json(record.into()))
}

/// The page of the catalog to read; the list has no filter.
struct CatalogList(Paging<SkuId>);

impl FromParams for CatalogList {
    fn from_params(params: &Params) -> Option<Self> {
        PageParams::read(params)?
            .paging(params, Scope::new("catalog"))
            .map(CatalogList)
    }
}

/// A page of the list, as the document names it.
type CatalogPage = Page<CatalogItemView>;

/// List the articles of the price authority.
///
/// Every article by id, a page at a time: follow `nextCursor` until it is null. Read-only;
/// safe to call at any time.
#[utoipa::path(get, path = "/v1/catalog/skus", operation_id = "listCatalogItems", tag = "provisioning",
    params(PageQuery),
    responses((status = 200, description = "A page of articles, by id", body = CatalogPage)))]
async fn list_items(
    _caller: Authorized<ops::ListCatalogItems>,
    State(state): State<AppState>,
    QueryParams(CatalogList(paging)): QueryParams<CatalogList>,
) -> Result<Json<CatalogPage>, ApiError> {
    let records = state.store().list_catalog_items(&paging.window()).await?;
    Ok(Json(paging.page(
        records,
        |record| record.item.sku_id.clone(),
        CatalogItemView::from,
    )))
}

/// Create or replace many articles at once.
///
/// For loading a whole catalog: all articles are written in one transaction, or none if any
/// is invalid. A person should confirm.
#[utoipa::path(post, path = "/v1/catalog/import", operation_id = "importCatalog", tag = "provisioning",
    request_body = ImportBody,
    responses((status = 200, description = "Imported", body = ImportSummaryView)))]
async fn import(
    _caller: Authorized<ops::ImportCatalog>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<Json<ImportSummaryView>, ApiError> {
    let problems = Problems::new();
    let items = problems.root(&body).and_then(|root| {
        root.required("skus", |field| {
            if field.value().as_array().is_some_and(|items| items.len() > MAX_IMPORT) {
                return field.fail(format!("must hold at most {MAX_IMPORT} articles"));
            }
            let mut seen = HashSet::new();
            field.array(|entry| {
                let obj = entry.object()?;
                let id = obj.required("skuId", |f| f.parse_text(SkuId::parse));
                let id = match id {
                    Some(id) if !seen.insert(id.clone()) => obj.fail("skuId", "appears more than once in the import"),
                    other => other,
                };
                item_fields(&obj, id)
            })
        })
    });
    let items = problems.finish(|| items)?;
    let summary = state.store().import_catalog(items, state.now()).await?;
    Ok(Json(ImportSummaryView {
        created: summary.created,
        updated: summary.updated,
    }))
}
