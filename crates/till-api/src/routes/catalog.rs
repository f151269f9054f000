//! The price authority: `PUT/GET /v1/catalog/skus/{skuId}`, `GET /v1/catalog/skus` (a list
//! and a search) and
//! `POST /v1/catalog/import`. Prices are effective-dated: a write may schedule a price for a
//! later instant, and a sale is priced with the prices in force when it was rung.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, Parsed, PathParams, QueryParams};
use crate::fields::{FromBody, Obj, Problems};
use crate::openapi::{BarcodeText, Instant, SkuId as SkuIdText, Text, UtcInstant};
use crate::ops;
use crate::pagination::{CursorKey, Page, PageQuery, Paging, Scope};
use crate::routes::Written;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use jiff::Timestamp;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use till_app::catalog::{CatalogRecord, CatalogWrite, Import, NewArticle, Put, WordKey};
use till_core::barcode::{Barcode, Gtin};
use till_core::catalog::{CatalogItem, DatedPrice};
use till_core::ids::SkuId;
use till_core::instant::{Zone, format_utc};
use till_core::money::{Cents, VatRate};
use till_core::words::{NameQuery, QueryProblem};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Most articles in one import request.
const MAX_IMPORT: usize = 50_000;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(put_item, get_item))
        .routes(routes!(list_items))
        .routes(routes!(get_by_barcode))
        .routes(routes!(import))
}

/// Body of `PUT /v1/catalog/skus/{skuId}`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct CatalogItemBody {
    #[schema(value_type = Text)]
    name: String,
    /// Unit price including VAT, in cents.
    #[schema(value_type = i64, minimum = 0, maximum = 9007199254740991_i64)]
    price_cents: Cents,
    /// VAT rate in percent, at most two decimals (20, 10, 5.5, 2.1).
    #[schema(value_type = f64, minimum = 0, maximum = 100, multiple_of = 0.01)]
    vat_rate: VatRate,
    /// When the price and VAT rate apply (default: now); the name applies at once. A later
    /// instant schedules them, replacing those scheduled at the same instant; an article not
    /// in the catalog yet takes its first price now. An instant more than a few seconds
    /// before now is refused with 422: sales already booked were priced with the price then.
    #[schema(value_type = Option<Instant>)]
    effective_from: Option<Timestamp>,
    /// The article's barcodes from now on, replacing those it had; absent leaves them as they
    /// are. Each an EAN-8, UPC-A, EAN-13 or GTIN-14 with its check digit, once (a UPC-A and the
    /// EAN-13 with a leading zero are one barcode), and not another article's (409).
    #[schema(value_type = Option<Vec<BarcodeText>>, max_items = 32)]
    barcodes: Option<Vec<Barcode>>,
}

/// One article of an import.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct ImportItemBody {
    /// Each article once per import.
    #[schema(value_type = SkuIdText)]
    sku_id: SkuId,
    #[schema(value_type = Text)]
    name: String,
    /// Unit price including VAT, in cents.
    #[schema(value_type = i64, minimum = 0, maximum = 9007199254740991_i64)]
    price_cents: Cents,
    /// VAT rate in percent, at most two decimals.
    #[schema(value_type = f64, minimum = 0, maximum = 100, multiple_of = 0.01)]
    vat_rate: VatRate,
    /// When the price and VAT rate apply (default: now), as in `PUT /v1/catalog/skus/{skuId}`.
    #[schema(value_type = Option<Instant>)]
    effective_from: Option<Timestamp>,
    /// As in `PUT /v1/catalog/skus/{skuId}`; two articles of one import cannot share one.
    #[schema(value_type = Option<Vec<BarcodeText>>, max_items = 32)]
    barcodes: Option<Vec<Barcode>>,
}

/// Body of `POST /v1/catalog/import`.
#[derive(utoipa::ToSchema)]
struct ImportBody {
    /// At most 50000 articles, each id once.
    #[schema(max_items = 50000)]
    skus: Vec<ImportItemBody>,
}

impl FromBody for CatalogItemBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        item_fields(root)
    }
}

impl CatalogItemBody {
    /// The article `sku_id` as the body writes it.
    fn article(self, sku_id: SkuId) -> NewArticle {
        NewArticle {
            item: CatalogItem {
                sku_id,
                name: self.name,
                price: self.price_cents,
                vat_rate: self.vat_rate,
            },
            effective_from: self.effective_from,
            barcodes: self.barcodes,
        }
    }
}

impl ImportItemBody {
    /// An object of an import: its `skuId` (`None` when it did not parse) and the fields a PUT
    /// reads.
    fn read(obj: &Obj<'_>, sku_id: Option<SkuId>) -> Option<Self> {
        let item = item_fields(obj);
        let (sku_id, item) = (sku_id?, item?);
        Some(ImportItemBody {
            sku_id,
            name: item.name,
            price_cents: item.price_cents,
            vat_rate: item.vat_rate,
            effective_from: item.effective_from,
            barcodes: item.barcodes,
        })
    }

    fn article(self) -> NewArticle {
        let ImportItemBody {
            sku_id,
            name,
            price_cents,
            vat_rate,
            effective_from,
            barcodes,
        } = self;
        CatalogItemBody {
            name,
            price_cents,
            vat_rate,
            effective_from,
            barcodes,
        }
        .article(sku_id)
    }
}

impl FromBody for ImportBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let skus = root.required("skus", |field| {
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
                ImportItemBody::read(&obj, id)
            })
        });
        Some(ImportBody { skus: skus? })
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CatalogItemView {
    sku_id: String,
    name: String,
    /// Unit price including VAT in force now, in cents.
    price_cents: i64,
    /// VAT rate in force now, in percent.
    #[schema(value_type = f64)]
    vat_rate: serde_json::Number,
    /// The prices that apply later, soonest first; empty when none is scheduled.
    scheduled_prices: Vec<ScheduledPriceView>,
    /// Its barcodes as written, in their order.
    barcodes: Vec<String>,
    created_at: String,
    updated_at: String,
}

/// A price and VAT rate that apply from `effectiveFrom` on.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduledPriceView {
    #[schema(value_type = UtcInstant)]
    effective_from: String,
    price_cents: i64,
    #[schema(value_type = f64)]
    vat_rate: serde_json::Number,
}

impl From<CatalogRecord> for CatalogItemView {
    fn from(record: CatalogRecord) -> Self {
        CatalogItemView {
            sku_id: record.item.sku_id.as_str().to_owned(),
            name: record.item.name,
            price_cents: record.item.price.get(),
            vat_rate: record.item.vat_rate.as_json_number(),
            scheduled_prices: record.scheduled.into_iter().map(ScheduledPriceView::from).collect(),
            barcodes: record.barcodes,
            created_at: format_utc(record.created_at),
            updated_at: format_utc(record.updated_at),
        }
    }
}

impl From<DatedPrice> for ScheduledPriceView {
    fn from(price: DatedPrice) -> Self {
        ScheduledPriceView {
            effective_from: format_utc(price.effective_from),
            price_cents: price.price.get(),
            vat_rate: price.vat_rate.as_json_number(),
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

/// Most barcodes on one article.
const MAX_BARCODES: usize = 32;

/// Reads `name`, `priceCents`, `vatRate`, `effectiveFrom` and `barcodes` of an article object:
/// when its price applies is checked against the clock once the request is read.
fn item_fields(obj: &Obj<'_>) -> Option<CatalogItemBody> {
    let name = obj.required("name", |f| f.text());
    let price = obj.required("priceCents", |f| f.cents());
    let vat_rate = obj.required("vatRate", vat_rate);
    let effective_from = obj.optional("effectiveFrom", |f| f.instant(Zone::UtcOrOffset));
    let barcodes = obj.optional("barcodes", barcodes);
    Some(CatalogItemBody {
        name: name?,
        price_cents: price?,
        vat_rate: vat_rate?,
        effective_from: effective_from?,
        barcodes: barcodes?,
    })
}

/// An article's barcodes: each checked, none twice (in any of its forms).
fn barcodes(field: crate::fields::Field<'_>) -> Option<Vec<Barcode>> {
    if field.value().as_array().is_some_and(|codes| codes.len() > MAX_BARCODES) {
        return field.fail(format!("must hold at most {MAX_BARCODES} barcodes"));
    }
    let mut seen: HashMap<Gtin, usize> = HashMap::new();
    let mut index = 0;
    field.array(|entry| {
        let at = index;
        index += 1;
        let text = entry.string()?;
        let barcode = match Barcode::parse(text) {
            Ok(barcode) => barcode,
            Err(problem) => return entry.fail(problem.to_string()),
        };
        match seen.insert(barcode.gtin.clone(), at) {
            Some(first) => entry.fail(format!("is the same barcode as barcodes.{first}")),
            None => Some(barcode),
        }
    })
}

/// The refusal of a price starting before now; `field` names its `effectiveFrom`.
fn starts_in_the_past(field: &str) -> ApiError {
    ApiError::Business(format!(
        "{field} is in the past: a price cannot change before now, since sales already booked \
         were priced with the price in force then."
    ))
}

/// One article of an import, as `POST /v1/catalog/import` reads each, priced from `now` unless
/// it says when: for `till catalog import`, which reads a file of them a line at a time. A 400
/// names the fields at fault; a 422 an `effectiveFrom` in the past.
pub fn import_line(value: &serde_json::Value, now: Timestamp) -> Result<CatalogWrite, ApiError> {
    let problems = Problems::new();
    let item = problems.root(value).and_then(|obj| {
        let id = obj.required("skuId", |f| f.parse_text(SkuId::parse));
        ImportItemBody::read(&obj, id)
    });
    problems
        .finish(|| item)?
        .article()
        .write(now)
        .map_err(|_| starts_in_the_past("effectiveFrom"))
}

/// A VAT rate in percent. The number must be the one its two decimals write (`5.5`, `0.07`),
/// as `multipleOf: 0.01` reads it: `1e-300` or `0.30000000000000004` is not rounded to a rate.
pub(crate) fn vat_rate(field: crate::fields::Field<'_>) -> Option<VatRate> {
    let percent = field.number()?;
    VatRate::from_percent(percent)
        .filter(|rate| rate.hundredths() as f64 / 100.0 == percent)
        .or_else(|| field.fail("must be a percentage from 0 to 100 with at most two decimals"))
}

/// Create or replace one article of the price authority, or schedule its next price.
///
/// Back-office provisioning: finalize prices every catalog line from here, with the price in
/// force when the sale was rung. With `effectiveFrom` later than now the price is scheduled and
/// the current one stays until then. Idempotent. A person should confirm price changes.
#[utoipa::path(put, path = "/v1/catalog/skus/{skuId}", operation_id = "putCatalogItem", tag = "provisioning",
    params(("skuId" = SkuIdText, Path, description = "The article")),
    request_body = CatalogItemBody,
    responses((status = 200, description = "Replaced", body = CatalogItemView),
              (status = 201, description = "Created", body = CatalogItemView),
              (status = 409, description = "A barcode belongs to another article", body = crate::error::ErrorEnvelope),
              (status = 422, description = "effectiveFrom in the past, or a new article's first price scheduled later", body = crate::error::ErrorEnvelope)))]
async fn put_item(
    _caller: Authorized<ops::PutCatalogItem>,
    State(state): State<AppState>,
    PathParams(SkuPath(id)): PathParams<SkuPath>,
    Parsed(body): Parsed<CatalogItemBody>,
) -> Result<Written<CatalogItemView>, ApiError> {
    match till_app::catalog::put(state.app(), body.article(id)).await? {
        Put::Written { record, created } => Ok(Written::new(created, record.into())),
        Put::StartsInThePast => Err(starts_in_the_past("effectiveFrom")),
    }
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
    let record = till_app::catalog::article(state.app(), &id)
        .await?
        .ok_or_else(crate::phrases::not_in_catalog)?;
    Ok(Json(record.into()))
}

/// `{code}` of `GET /v1/catalog/barcodes/{code}`: a barcode as scanned, checked.
struct BarcodePath(Gtin);

impl FromParams for BarcodePath {
    fn from_params(params: &Params) -> Option<Self> {
        params
            .required("code", |text| Gtin::parse(text).map_err(|problem| problem.to_string()))
            .map(BarcodePath)
    }
}

/// Find the article a barcode belongs to.
///
/// As a till scans it: an EAN-8, UPC-A, EAN-13 or GTIN-14 with its check digit, in any of its
/// forms (a UPC-A finds the article that carries its EAN-13). Read-only; safe to call at any
/// time.
#[utoipa::path(get, path = "/v1/catalog/barcodes/{code}", operation_id = "getCatalogItemByBarcode", tag = "provisioning",
    params(("code" = BarcodeText, Path, description = "The barcode as scanned")),
    responses((status = 200, description = "The article", body = CatalogItemView),
              (status = 404, description = "No article carries it", body = crate::error::ErrorEnvelope)))]
async fn get_by_barcode(
    _caller: Authorized<ops::GetCatalogItemByBarcode>,
    State(state): State<AppState>,
    PathParams(BarcodePath(gtin)): PathParams<BarcodePath>,
) -> Result<Json<CatalogItemView>, ApiError> {
    let record = till_app::catalog::by_barcode(state.app(), &gtin)
        .await?
        .ok_or_else(crate::phrases::no_article_with_barcode)?;
    Ok(Json(record.into()))
}

/// The search of `GET /v1/catalog/skus`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct CatalogQuery {
    /// Only the articles it finds: a barcode (as `getCatalogItemByBarcode` reads one) finds
    /// the article carrying it; other text finds the articles whose name holds each of its
    /// words, the last one as the start of a word, in any case and with or without accents
    /// (`creme bru` finds "Crème brûlée"). Words are runs of letters and digits; a text
    /// without any is refused.
    #[param(value_type = Option<String>, min_length = 1, max_length = 100, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
    q: Option<Searched>,
}

/// A search as sent, and what it asks for.
struct Searched {
    text: String,
    search: Search,
}

impl FromParams for CatalogQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let q = params.optional("q", |text| {
            let search = match Gtin::parse(text) {
                Ok(gtin) => Search::Barcode(gtin),
                Err(_) => Search::Name(NameQuery::parse(text)?),
            };
            Ok::<_, QueryProblem>(Searched {
                text: text.to_owned(),
                search,
            })
        });
        Some(CatalogQuery { q: q? })
    }
}

/// The page of the catalog to read: every article by id, or those a search finds.
enum CatalogList {
    All(Paging<SkuId>),
    Barcode(Gtin, Paging<WordKey>),
    Name(NameQuery, Paging<WordKey>),
}

/// What `q` asks for.
enum Search {
    Barcode(Gtin),
    Name(NameQuery),
}

impl FromParams for CatalogList {
    fn from_params(params: &Params) -> Option<Self> {
        let query = CatalogQuery::from_params(params);
        let page = PageQuery::read(params);
        let (query, page) = (query?, page?);
        let Some(Searched { text, search }) = query.q else {
            return Some(CatalogList::All(page.paging(params, Scope::new("catalog"))?));
        };
        let paging = page.paging(params, Scope::new("catalog").filter("q", Some(text)))?;
        Some(match search {
            Search::Barcode(gtin) => CatalogList::Barcode(gtin, paging),
            Search::Name(name) => CatalogList::Name(name, paging),
        })
    }
}

/// A search's key in a cursor: the word, a zero byte (no word holds one), then the article.
impl CursorKey for WordKey {
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.word.as_bytes());
        out.push(0);
        self.sku_id.write(out);
    }

    fn read(bytes: &[u8]) -> Option<Self> {
        let split = bytes.iter().position(|&b| b == 0)?;
        let word = std::str::from_utf8(&bytes[..split]).ok()?;
        Some(WordKey {
            word: word.to_owned(),
            sku_id: SkuId::read(&bytes[split + 1..])?,
        })
    }
}

/// A page of the list, as the document names it.
type CatalogPage = Page<CatalogItemView>;

/// List or search the articles of the price authority.
///
/// Without `q`, every article by id. With `q`, the articles it finds: a barcode finds the one
/// carrying it, if any; a name search lists the articles in the order of the word they were
/// found by, then by id, each once. Follow `nextCursor`, sent with the same `q`, until it is
/// null. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/catalog/skus", operation_id = "listCatalogItems", tag = "provisioning",
    params(CatalogQuery, PageQuery),
    responses((status = 200, description = "A page of articles", body = CatalogPage)))]
async fn list_items(
    _caller: Authorized<ops::ListCatalogItems>,
    State(state): State<AppState>,
    QueryParams(list): QueryParams<CatalogList>,
) -> Result<Json<CatalogPage>, ApiError> {
    let app = state.app();
    let page = match list {
        CatalogList::All(paging) => {
            let records = till_app::catalog::articles(app, &paging.window()).await?;
            paging.page(records, |record| record.item.sku_id.clone(), CatalogItemView::from)
        }
        CatalogList::Barcode(gtin, paging) => {
            // The one article is on the first page; no cursor follows it.
            let mut found = Vec::new();
            if paging.window().after.is_none() {
                found.extend(till_app::catalog::by_barcode(app, &gtin).await?);
            }
            paging.page(
                found,
                |record| WordKey {
                    word: String::new(),
                    sku_id: record.item.sku_id.clone(),
                },
                CatalogItemView::from,
            )
        }
        CatalogList::Name(name, paging) => {
            let found = till_app::catalog::search(app, &name, &paging.window()).await?;
            paging.page(found, |(key, _)| key.clone(), |(_, record)| record.into())
        }
    };
    Ok(Json(page))
}

/// Create or replace many articles at once.
///
/// For loading a whole catalog: all articles are written in one transaction, or none if any
/// is invalid. Each article may schedule its price with `effectiveFrom`, as a PUT does. A
/// person should confirm.
#[utoipa::path(post, path = "/v1/catalog/import", operation_id = "importCatalog", tag = "provisioning",
    request_body = ImportBody,
    responses((status = 200, description = "Imported", body = ImportSummaryView),
              (status = 409, description = "A barcode belongs to another article, or to two of the import", body = crate::error::ErrorEnvelope),
              (status = 422, description = "An effectiveFrom in the past, or a new article's first price scheduled later", body = crate::error::ErrorEnvelope)))]
async fn import(
    _caller: Authorized<ops::ImportCatalog>,
    State(state): State<AppState>,
    Parsed(ImportBody { skus }): Parsed<ImportBody>,
) -> Result<Json<ImportSummaryView>, ApiError> {
    let articles = skus.into_iter().map(ImportItemBody::article).collect();
    let summary = match till_app::catalog::import(state.app(), articles).await? {
        Import::Written(summary) => summary,
        Import::StartsInThePast { index } => return Err(starts_in_the_past(&format!("skus.{index}.effectiveFrom"))),
    };
    Ok(Json(ImportSummaryView {
        created: summary.created,
        updated: summary.updated,
    }))
}
