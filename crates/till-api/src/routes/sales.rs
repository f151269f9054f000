//! `GET /v1/sales/{transactionId}`: a committed sale, as its event; its receipt, shown
//! (`GET .../receipt`) or printed (`POST .../prints`); `GET /v1/sales`: the search of
//! committed sales, newest first.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, OptionalParsed, Params, PathParams, QueryParams};
use crate::fields::{FromBody, Obj};
use crate::openapi::{Instant, Text, UtcInstant};
use crate::ops;
use crate::pagination::{Page, PageQuery, Paging, Scope};
use crate::receipt::{Columns, Rendering};
use crate::routes::checkout::event::SaleEvent;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::header::{ACCEPT, CONTENT_SECURITY_POLICY, CONTENT_TYPE, VARY, X_CONTENT_TYPE_OPTIONS};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use jiff::Timestamp;
use serde::Serialize;
use till_app::receipts::ProvenReceipt;
use till_app::sales::{self, SaleFilter, SaleSummary};
use till_app::storage::Newest;
use till_core::explained::{LineReduction, ReductionSource, explain};
use till_core::fiscal::payload::SaleRecord;
use till_core::ids::{CustomerId, PrintId, RegisterId, SessionId, StoreId, TransactionId};
use till_core::instant::{Zone, format_utc, parse_instant};
use till_core::money::VatRate;
use till_core::sale::SaleType;
use utoipa::openapi::schema::Schema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_sale))
        .routes(routes!(receipt))
        .routes(routes!(print_receipt))
        .routes(routes!(sale_lines))
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
    /// Lines of 48 (or `columns`) characters for a receipt printer.
    Text,
    Html,
    /// ESC/POS bytes for a thermal receipt printer (`application/vnd.escpos`).
    Escpos,
}

/// A printer's line width.
#[derive(Clone, Copy, PartialEq, Eq, utoipa::ToSchema)]
enum ReceiptColumns {
    #[serde(rename = "48")]
    Wide,
    #[serde(rename = "42")]
    Narrow,
}

#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ReceiptQuery {
    /// `text` (48 columns for a receipt printer), `html` or `escpos`; when left out, the one
    /// of `text/plain`, `text/html` and `application/vnd.escpos` the `Accept` header prefers
    /// (text when it names none).
    #[param(inline, required = false)]
    format: Option<ReceiptFormat>,
    /// The printer's line width for `text` and `escpos`: `48` (the default) or `42`.
    #[param(inline, required = false)]
    columns: Option<ReceiptColumns>,
}

impl FromParams for ReceiptQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let format = params.optional("format", |text| match text {
            "text" => Ok(ReceiptFormat::Text),
            "html" => Ok(ReceiptFormat::Html),
            "escpos" => Ok(ReceiptFormat::Escpos),
            _ => Err("must be text, html or escpos"),
        });
        let columns = params.optional("columns", |text| match text {
            "48" => Ok(ReceiptColumns::Wide),
            "42" => Ok(ReceiptColumns::Narrow),
            _ => Err("must be 48 or 42"),
        });
        Some(ReceiptQuery {
            format: format?,
            columns: columns?,
        })
    }
}

impl ReceiptColumns {
    fn width(columns: Option<ReceiptColumns>) -> Columns {
        match columns {
            None | Some(ReceiptColumns::Wide) => Columns::Wide,
            Some(ReceiptColumns::Narrow) => Columns::Narrow,
        }
    }
}

/// The format a request asks for: its `format`, else the one of `text/html`, `text/plain`
/// and `application/vnd.escpos` its `Accept` header rates higher (a specific type over
/// `text/*` and `*/*`, which never reach ESC/POS; text on a tie).
fn asked_format(format: Option<ReceiptFormat>, headers: &HeaderMap) -> ReceiptFormat {
    if let Some(format) = format {
        return format;
    }
    let (mut html, mut plain, mut escpos, mut any) = (None, None, None, None);
    let ranges = headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','));
    for range in ranges {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let quality = parts
            .filter_map(|part| part.trim().strip_prefix("q="))
            .map(thousandths)
            .next()
            .unwrap_or(1000);
        let slot = match media.as_str() {
            "text/html" => &mut html,
            "text/plain" => &mut plain,
            crate::receipt::escpos::MEDIA_TYPE => &mut escpos,
            "text/*" | "*/*" => &mut any,
            _ => continue,
        };
        *slot = Some(slot.unwrap_or(0).max(quality));
    }
    let (html, plain, escpos) = (
        html.or(any).unwrap_or(0),
        plain.or(any).unwrap_or(0),
        escpos.unwrap_or(0),
    );
    if escpos > html.max(plain) {
        ReceiptFormat::Escpos
    } else if html > plain {
        ReceiptFormat::Html
    } else {
        ReceiptFormat::Text
    }
}

/// A quality value (`0.8`) in thousandths; an unreadable one counts as 0.
fn thousandths(text: &str) -> u16 {
    let (whole, fraction) = text.trim().split_once('.').unwrap_or((text.trim(), ""));
    let digits = || fraction.bytes().all(|b| b.is_ascii_digit()) && fraction.len() <= 3;
    match whole {
        "1" if fraction.bytes().all(|b| b == b'0') => 1000,
        "0" if digits() => format!("{fraction:0<3}").parse().unwrap_or(0),
        _ => 0,
    }
}

/// The receipt rendered as asked, marked as varying by `Accept`; HTML under its policy.
fn rendered(receipt: &ProvenReceipt, rendering: Rendering<'_>, format: ReceiptFormat, columns: Columns) -> Response {
    let (content_type, body): (&str, Vec<u8>) = match format {
        ReceiptFormat::Html => (
            "text/html; charset=utf-8",
            crate::receipt::html(receipt, rendering).into(),
        ),
        ReceiptFormat::Text => (
            "text/plain; charset=utf-8",
            crate::receipt::text(receipt, rendering, columns).into(),
        ),
        ReceiptFormat::Escpos => (
            crate::receipt::escpos::MEDIA_TYPE,
            crate::receipt::escpos::bytes(&crate::receipt::printed_lines(receipt, rendering, columns)),
        ),
    };
    let mut response = ([(CONTENT_TYPE, content_type), (VARY, "accept")], body).into_response();
    let headers = response.headers_mut();
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if format == ReceiptFormat::Html {
        headers.insert(
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(crate::receipt::HTML_POLICY),
        );
    }
    response
}

/// Show a sale's receipt, printing nothing.
///
/// The ticket as text (48 columns) or HTML, by `format` or `Accept`: store, lines, promotions
/// and discounts, VAT breakdown, tenders, change, the ticket's sequence, a signature extract
/// and the software version. It is marked as a consultation, not a ticket, and lists the prints
/// made (their number is in `x-till-prints`). Nothing is recorded or sealed: printing is
/// `printReceipt`. Read-only; safe to call at any time. A till's token reads the receipts of
/// its own store's sales.
#[utoipa::path(get, path = "/v1/sales/{transactionId}/receipt", operation_id = "getReceipt", tag = "checkout",
    params(("transactionId" = Text, Path), ReceiptQuery),
    responses((status = 200, description = "The ticket as shown, as text (48 columns) or HTML",
                  content((String = "text/plain"), (String = "text/html"), (Vec<u8> = "application/vnd.escpos")),
                  headers(("x-till-prints" = i64, description = "How many prints were made: 0 before the first"))),
              (status = 404, description = "No sale with this transaction id", body = crate::error::ErrorEnvelope)))]
async fn receipt(
    caller: Authorized<ops::GetReceipt>,
    State(state): State<AppState>,
    PathParams(SalePath(id)): PathParams<SalePath>,
    QueryParams(ReceiptQuery { format, columns }): QueryParams<ReceiptQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let receipt = till_app::receipts::receipt(state.app(), &caller.principal, &id).await?;
    let mut response = rendered(
        &receipt,
        Rendering::Shown,
        asked_format(format, &headers),
        ReceiptColumns::width(columns),
    );
    let count = i64::try_from(receipt.receipt.prints.len()).unwrap_or(i64::MAX);
    response.headers_mut().insert("x-till-prints", HeaderValue::from(count));
    Ok(response)
}

/// Body of `POST /v1/sales/{transactionId}/prints`; may be left out.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct PrintBody {
    /// The till's id for this print: sent again (its answer lost), the same print is answered
    /// and nothing more is recorded. Without it, every call is a print.
    #[schema(value_type = Option<Text>)]
    print_id: Option<PrintId>,
}

impl FromBody for PrintBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let print_id = root.optional("printId", |f| f.parse_text(PrintId::parse));
        Some(PrintBody { print_id: print_id? })
    }
}

/// Print a sale's receipt.
///
/// Records a print and answers the ticket to print, as text (48 columns) or HTML by `format`
/// or `Accept`. The first print is the original; every later one is a DUPLICATA with its
/// number, itself sealed in the register's duplicate chain, so a person should confirm a
/// reprint. With a `printId` sent before for this sale, the same print is answered (200,
/// `x-idempotent-replay`) and nothing is recorded. A till's token prints the receipts of its
/// own store's sales.
#[utoipa::path(post, path = "/v1/sales/{transactionId}/prints", operation_id = "printReceipt", tag = "checkout",
    params(("transactionId" = Text, Path), ReceiptQuery),
    request_body(content = Option<PrintBody>, description = "The print's id; may be left out"),
    responses((status = 201, description = "Printed: the ticket, as text (48 columns) or HTML",
                  content((String = "text/plain"), (String = "text/html"), (Vec<u8> = "application/vnd.escpos")),
                  headers(("x-till-print" = i64, description = "The print's number: 1 for the original, a DUPLICATA after"))),
              (status = 200, description = "The print this printId made before, answered again; nothing recorded",
                  content((String = "text/plain"), (String = "text/html"), (Vec<u8> = "application/vnd.escpos")),
                  headers(("x-till-print" = i64, description = "The print's number"),
                          ("x-idempotent-replay" = String, description = "`true`"))),
              (status = 404, description = "No sale with this transaction id", body = crate::error::ErrorEnvelope)))]
async fn print_receipt(
    caller: Authorized<ops::PrintReceipt>,
    State(state): State<AppState>,
    PathParams(SalePath(id)): PathParams<SalePath>,
    QueryParams(ReceiptQuery { format, columns }): QueryParams<ReceiptQuery>,
    headers: HeaderMap,
    OptionalParsed(body): OptionalParsed<PrintBody>,
) -> Result<Response, ApiError> {
    let print_id = body.and_then(|body| body.print_id);
    let printed = till_app::receipts::print(state.app(), &caller.principal, &id, print_id.as_ref()).await?;
    let mut response = rendered(
        &printed.receipt,
        Rendering::Print(&printed.print),
        asked_format(format, &headers),
        ReceiptColumns::width(columns),
    );
    *response.status_mut() = if printed.replayed {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    let headers = response.headers_mut();
    headers.insert("x-till-print", HeaderValue::from(printed.print.print_no));
    if printed.replayed {
        headers.insert("x-idempotent-replay", HeaderValue::from_static("true"));
    }
    Ok(response)
}

/// A committed sale's pricing, line by line: what each line cost before reductions, each
/// reduction with its source, what it came to and the VAT in it.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SaleLinesView {
    transaction_id: String,
    #[serde(rename = "type")]
    #[schema(schema_with = sale_type_schema)]
    kind: String,
    /// On a return against a receipt, the sale it gives goods back from; else null.
    #[schema(required = true, value_type = Option<Text>)]
    original_transaction_id: Option<String>,
    /// In the sale's order.
    lines: Vec<ExplainedLineView>,
    /// The sale's subtotal: the sum of the lines' `grossCents`.
    subtotal_cents: i64,
    /// Everything the reductions took: the sum of every line's reductions.
    reduction_cents: i64,
    /// The sale's total: the sum of the lines' `netCents`.
    total_cents: i64,
    /// The VAT the total contains: the sum of the lines' `vatCents`.
    vat_cents: i64,
}

/// One line of a sale, explained. Its `grossCents` less the sum of its reductions is its
/// `netCents`. Amounts of a return are negative.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExplainedLineView {
    /// The cart line's id.
    id: String,
    /// Null for a custom line.
    #[schema(required = true)]
    sku_id: Option<String>,
    /// The article's name at the time of the sale; null for a custom line.
    #[schema(required = true)]
    label: Option<String>,
    quantity: i64,
    unit_price_cents: i64,
    /// Unit price times quantity.
    gross_cents: i64,
    /// In the order pricing applied them: promotions on products, declared line discounts,
    /// then the line's share of the ticket-level reductions.
    reductions: Vec<LineReductionView>,
    net_cents: i64,
    /// In percent.
    #[schema(value_type = f64)]
    vat_rate: serde_json::Number,
    /// The VAT the line's net contains: the sale's VAT at this rate shared over its lines in
    /// proportion to their nets.
    vat_cents: i64,
}

/// What one reduction took off one line.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LineReductionView {
    #[schema(schema_with = reduction_source_schema)]
    source: &'static str,
    /// The promotion rule's id, the declared discount's id, the coupon's code, or for
    /// `original` the original sale's transaction id.
    id: String,
    /// A promotion's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    amount_cents: i64,
}

fn reduction_source_schema() -> Schema {
    crate::openapi::words(
        ["promotion", "declared", "coupon", "original"],
        "Where the reduction comes from: a `promotion` rule, a discount the till `declared`, a \
         `coupon`, or on a return the `original` sale's reductions its record does not tell apart.",
    )
}

impl From<LineReduction> for LineReductionView {
    fn from(reduction: LineReduction) -> Self {
        let (source, id) = match reduction.source {
            ReductionSource::Promotion(id) => ("promotion", id),
            ReductionSource::Declared(id) => ("declared", id),
            ReductionSource::Coupon(code) => ("coupon", code),
            ReductionSource::Original(transaction) => ("original", transaction),
        };
        LineReductionView {
            source,
            id,
            name: reduction.label,
            amount_cents: reduction.amount,
        }
    }
}

impl SaleLinesView {
    fn new(sale: SaleRecord, original: Option<&SaleRecord>) -> SaleLinesView {
        let explained = explain(&sale, original);
        let lines = sale
            .lines
            .into_iter()
            .zip(explained)
            .map(|(line, explained)| ExplainedLineView {
                id: line.line_id,
                sku_id: line.sku_id,
                label: line.label,
                quantity: line.quantity,
                unit_price_cents: line.unit_price_cents,
                gross_cents: line.gross_cents,
                reductions: explained.reductions.into_iter().map(LineReductionView::from).collect(),
                net_cents: line.net_cents,
                vat_rate: VatRate::from_hundredths(line.vat_rate)
                    .map_or_else(|| serde_json::Number::from(line.vat_rate), VatRate::as_json_number),
                vat_cents: explained.vat,
            })
            .collect();
        SaleLinesView {
            transaction_id: sale.transaction_id,
            kind: sale.kind,
            original_transaction_id: sale.original.map(|original| original.transaction_id),
            lines,
            subtotal_cents: sale.subtotal_cents,
            reduction_cents: sale.subtotal_cents.saturating_sub(sale.total_cents),
            total_cents: sale.total_cents,
            vat_cents: sale.vat.iter().map(|vat| vat.vat_cents).fold(0, i64::saturating_add),
        }
    }
}

/// Explain a committed sale's price.
///
/// Per line: the gross (unit price times quantity), each reduction with its source (a
/// promotion rule, a declared discount, the coupon; ticket-level ones as the line's share), the
/// net, the VAT rate and the VAT it contains. The lines' reductions and nets add up to the
/// sale's totals to the cent. A return's lines refund their share of the original sale's
/// reductions, with negative amounts. A till's session token reads its own store's sales only
/// (another store's is 404). Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/sales/{transactionId}/lines", operation_id = "getSaleLines", tag = "checkout",
    params(("transactionId" = Text, Path)),
    responses((status = 200, description = "The sale's lines, explained", body = SaleLinesView),
              (status = 404, description = "No sale with this transaction id", body = crate::error::ErrorEnvelope)))]
async fn sale_lines(
    caller: Authorized<ops::GetSaleLines>,
    State(state): State<AppState>,
    PathParams(SalePath(id)): PathParams<SalePath>,
) -> Result<Json<SaleLinesView>, ApiError> {
    let (sale, original) = sales::sale_record(state.app(), &caller.principal, &id).await?;
    Ok(Json(SaleLinesView::new(sale, original.as_ref())))
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
    let body = sales::sale_answer(state.app(), &caller.principal, &id).await?;
    Ok(([(CONTENT_TYPE, "application/json")], body).into_response())
}

fn sale_type_schema() -> Schema {
    crate::openapi::words(
        SaleType::ALL.map(SaleType::as_str),
        "The transaction's type: `sale`, `rental`, `repair` or `return`.",
    )
}

/// The filters of `GET /v1/sales`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
struct SalesQuery {
    /// Only sales of this store.
    #[param(value_type = Option<Text>)]
    store_id: Option<StoreId>,
    /// Only sales of this till.
    #[param(value_type = Option<Text>)]
    register_id: Option<RegisterId>,
    /// Only sales of this register session.
    #[param(value_type = Option<Text>)]
    session_id: Option<SessionId>,
    /// Only sales naming this customer.
    #[param(value_type = Option<Text>)]
    customer_id: Option<CustomerId>,
    #[param(rename = "type", schema_with = sale_type_schema)]
    kind: Option<SaleType>,
    /// Only sales emitted at or after this instant (inclusive).
    #[param(value_type = Option<Instant>)]
    from: Option<Timestamp>,
    /// Only sales emitted before this instant (exclusive); later than `from`.
    #[param(value_type = Option<Instant>)]
    to: Option<Timestamp>,
}

impl FromParams for SalesQuery {
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
        let (from, to) = (from?, to?);
        if let (Some(from), Some(to)) = (from, to)
            && to <= from
        {
            return params.fail("to", "must be later than from");
        }
        Some(SalesQuery {
            store_id: store_id?,
            register_id: register_id?,
            session_id: session_id?,
            customer_id: customer_id?,
            kind: kind?,
            from,
            to,
        })
    }
}

/// The filters and the page of a sales search.
struct SaleSearch {
    filter: SaleFilter,
    paging: Paging<Newest<TransactionId>>,
}

impl FromParams for SaleSearch {
    fn from_params(params: &Params) -> Option<Self> {
        let query = SalesQuery::from_params(params);
        let page = PageQuery::read(params);
        let query = query?;
        let filter = SaleFilter {
            store_id: query.store_id,
            register_id: query.register_id,
            session_id: query.session_id,
            customer_id: query.customer_id,
            kind: query.kind,
            from: query.from,
            to: query.to,
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
    QueryParams(SaleSearch { filter, paging }): QueryParams<SaleSearch>,
) -> Result<Json<SalePage>, ApiError> {
    let sales = sales::search_within_reach(state.app(), &caller.principal, filter, &paging.window()).await?;
    Ok(Json(paging.page(sales, SaleSummary::key, SaleSummaryView::from)))
}
