//! `GET /v1/sales/{transactionId}`: a committed sale, as its event; `GET /v1/sales`: the search
//! of committed sales, newest first.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, PathParams, QueryParams};
use crate::openapi::{Instant, Text, UtcInstant};
use crate::ops;
use crate::pagination::{Page, PageParams, PageQuery, Paging, Scope};
use crate::routes::checkout::event::SaleEvent;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::{CONTENT_SECURITY_POLICY, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use till_core::ids::{CustomerId, RegisterId, SessionId, StoreId, TransactionId};
use till_core::instant::{Zone, format_utc, parse_instant};
use till_core::sale::SaleType;
use till_store::page::Newest;
use till_store::search::{SaleFilter, SaleSummary};
use utoipa::openapi::schema::Schema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_sale))
        .routes(routes!(receipt))
        .routes(routes!(search_sales))
}

/// `{transactionId}` of the sale routes.
pub(crate) struct SalePath(pub(crate) TransactionId);

impl FromParams for SalePath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("transactionId", TransactionId::parse).map(SalePath)
    }
}

/// How a receipt is rendered.
#[derive(Clone, Copy, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
enum ReceiptFormat {
    /// 48 columns for a receipt printer.
    Text,
    Html,
}

#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ReceiptQuery {
    /// `text` (default: 48 columns for a receipt printer) or `html`.
    #[param(inline, required = false)]
    format: ReceiptFormat,
}

impl FromParams for ReceiptQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let format = params.optional("format", |text| match text {
            "text" => Ok(ReceiptFormat::Text),
            "html" => Ok(ReceiptFormat::Html),
            _ => Err("must be text or html"),
        })?;
        Some(ReceiptQuery {
            format: format.unwrap_or(ReceiptFormat::Text),
        })
    }
}

/// Print a sale's receipt.
///
/// The ticket as printer-ready text (48 columns) or HTML: store, lines, promotions and
/// discounts, VAT breakdown, tenders, change, the ticket's sequence, a signature extract and
/// the software version. Every print after the first is a DUPLICATA with its number, and is
/// itself sealed in the register's duplicate chain, so a person should confirm a reprint. A
/// till's session token prints its own store's receipts only (another store's is 404).
#[utoipa::path(get, path = "/v1/sales/{transactionId}/receipt", operation_id = "printReceipt", tag = "checkout",
    params(("transactionId" = Text, Path), ReceiptQuery),
    responses((status = 200, description = "The ticket, as text (48 columns) or HTML by `format`",
                  content((String = "text/plain"), (String = "text/html")),
                  headers(("x-till-print" = i64, description = "The print's number: 1 for the first, a DUPLICATA after"))),
              (status = 404, description = "No sale with this transaction id", body = crate::error::ErrorEnvelope)))]
async fn receipt(
    caller: Authorized<ops::PrintReceipt>,
    State(state): State<AppState>,
    PathParams(SalePath(id)): PathParams<SalePath>,
    QueryParams(ReceiptQuery { format }): QueryParams<ReceiptQuery>,
) -> Result<Response, ApiError> {
    let html = format == ReceiptFormat::Html;
    // Another store's sale is as unknown to a till as a sale that does not exist; no print is
    // counted for it.
    let receipt = state
        .store()
        .receipt(&id)
        .await?
        .filter(|receipt| caller.principal.reads_store(&receipt.sale.store_id))
        .ok_or_else(crate::phrases::no_such_sale)?;
    let print = state
        .store()
        .record_print(&id, caller.principal.subject.as_str(), state.now())
        .await?;
    let (content_type, body) = if html {
        ("text/html; charset=utf-8", crate::receipt::html(&receipt, &print))
    } else {
        ("text/plain; charset=utf-8", crate::receipt::text(&receipt, &print))
    };
    let mut response = ([(CONTENT_TYPE, content_type)], body).into_response();
    let headers = response.headers_mut();
    headers.insert("x-till-print", axum::http::HeaderValue::from(print.print_no));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if html {
        headers.insert(
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(crate::receipt::HTML_POLICY),
        );
    }
    Ok(response)
}

/// Read a committed sale.
///
/// Returns the sale event exactly as finalize answered it. A till's session token reads its own
/// store's sales only (another store's is 404). Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/sales/{transactionId}", operation_id = "getSale", tag = "checkout",
    params(("transactionId" = Text, Path)),
    responses((status = 200, description = "The sale event", body = SaleEvent),
              (status = 404, description = "No sale with this transaction id", body = crate::error::ErrorEnvelope)))]
async fn get_sale(
    caller: Authorized<ops::GetSale>,
    State(state): State<AppState>,
    PathParams(SalePath(id)): PathParams<SalePath>,
) -> Result<Response, ApiError> {
    let (_, body) = state
        .store()
        .sale_answer(&id)
        .await?
        .filter(|(store, _)| caller.principal.reads_store(store.as_str()))
        .ok_or_else(crate::phrases::no_such_sale)?;
    Ok(([(CONTENT_TYPE, "application/json")], body).into_response())
}

fn sale_type_schema() -> Schema {
    crate::openapi::words(
        SaleType::ALL.map(SaleType::as_str),
        "The transaction's type: `sale`, `rental`, `repair` or `return`.",
    )
}

/// The filters of `GET /v1/sales`, for the document; [`SaleSearch`] reads them.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
#[allow(dead_code)]
struct SalesQuery {
    /// Only sales of this store.
    #[param(value_type = Option<Text>)]
    store_id: Option<String>,
    /// Only sales of this till.
    #[param(value_type = Option<Text>)]
    register_id: Option<String>,
    /// Only sales of this register session.
    #[param(value_type = Option<Text>)]
    session_id: Option<String>,
    /// Only sales naming this customer.
    #[param(value_type = Option<Text>)]
    customer_id: Option<String>,
    #[param(rename = "type", schema_with = sale_type_schema)]
    kind: Option<String>,
    /// Only sales emitted at or after this instant (inclusive).
    #[param(value_type = Option<Instant>)]
    from: Option<String>,
    /// Only sales emitted before this instant (exclusive); later than `from`.
    #[param(value_type = Option<Instant>)]
    to: Option<String>,
}

/// The filters and the page of a sales search.
struct SaleSearch {
    filter: SaleFilter,
    paging: Paging<Newest<TransactionId>>,
}

impl FromParams for SaleSearch {
    fn from_params(params: &Params) -> Option<Self> {
        let instant = |text: &str| parse_instant(text, Zone::UtcOrOffset);
        let store_id = params.optional("storeId", StoreId::parse);
        let register_id = params.optional("registerId", RegisterId::parse);
        let session_id = params.optional("sessionId", SessionId::parse);
        let customer_id = params.optional("customerId", CustomerId::parse);
        let kind = params.optional("type", |text| {
            SaleType::ALL
                .into_iter()
                .find(|kind| kind.as_str() == text)
                .ok_or("must be sale, rental, repair or return")
        });
        let from = params.optional("from", instant);
        let to = params.optional("to", instant);
        let page = PageParams::read(params);
        let (from, to) = (from?, to?);
        if let (Some(from), Some(to)) = (from, to)
            && to <= from
        {
            return params.fail("to", "must be later than from");
        }
        let filter = SaleFilter {
            store_id: store_id?,
            register_id: register_id?,
            session_id: session_id?,
            customer_id: customer_id?,
            kind: kind?,
            from,
            to,
        };
        let scope = Scope::new("sales")
            .filter("storeId", filter.store_id.as_ref())
            .filter("registerId", filter.register_id.as_ref())
            .filter("sessionId", filter.session_id.as_ref())
            .filter("customerId", filter.customer_id.as_ref())
            .filter("type", filter.kind.map(SaleType::as_str))
            .filter("from", filter.from)
            .filter("to", filter.to);
        let paging = page?.paging(params, scope)?;
        Some(SaleSearch { filter, paging })
    }
}

/// A committed sale or return as the search lists it; `getSale` answers the whole of it.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SaleSummaryView {
    transaction_id: String,
    /// The ticket number the till gave it.
    number: String,
    #[serde(rename = "type")]
    #[schema(schema_with = sale_type_schema)]
    kind: &'static str,
    store_id: String,
    register_id: String,
    session_id: String,
    seller_id: String,
    /// Null when the sale names no customer.
    #[schema(required = true)]
    customer_id: Option<String>,
    /// The total paid, in cents; negative for a return.
    total_cents: i64,
    item_count: i64,
    /// When the server committed it.
    #[schema(value_type = UtcInstant)]
    emitted_at: String,
}

impl From<SaleSummary> for SaleSummaryView {
    fn from(sale: SaleSummary) -> Self {
        SaleSummaryView {
            transaction_id: sale.transaction_id.into_string(),
            number: sale.number,
            kind: sale.kind.as_str(),
            store_id: sale.store_id.into_string(),
            register_id: sale.register_id.into_string(),
            session_id: sale.session_id.into_string(),
            seller_id: sale.seller_id.into_string(),
            customer_id: sale.customer_id.map(CustomerId::into_string),
            total_cents: sale.total_cents,
            item_count: sale.item_count,
            emitted_at: format_utc(sale.emitted_at),
        }
    }
}

/// A page of the list, as the document names it.
type SalePage = Page<SaleSummaryView>;

/// Search committed sales and returns, newest first.
///
/// Filter by store, till, register session, customer, type and when they were committed
/// (`from` inclusive, `to` exclusive); every filter given must hold. A page at a time: follow
/// `nextCursor` until it is null, with the same filters. Each item is a summary; getSale reads
/// the whole sale. A till's session token lists its own store's sales only. Read-only; safe to
/// call at any time.
#[utoipa::path(get, path = "/v1/sales", operation_id = "searchSales", tag = "checkout",
    params(SalesQuery, PageQuery),
    responses((status = 200, description = "A page of sales, newest first", body = SalePage)))]
async fn search_sales(
    caller: Authorized<ops::SearchSales>,
    State(state): State<AppState>,
    QueryParams(SaleSearch { mut filter, paging }): QueryParams<SaleSearch>,
) -> Result<Json<SalePage>, ApiError> {
    let Some(store_id) = caller.principal.store_to_list(filter.store_id.take()) else {
        return Ok(Json(paging.page(Vec::new(), SaleSummary::key, SaleSummaryView::from)));
    };
    filter.store_id = store_id;
    let sales = state.store().search_sales(&filter, &paging.window()).await?;
    Ok(Json(paging.page(sales, SaleSummary::key, SaleSummaryView::from)))
}
