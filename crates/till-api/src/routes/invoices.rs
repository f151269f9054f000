//! Invoices for business customers (docs/invoices.md): `POST /v1/invoices` issues one for
//! committed sales of a store (or a credit invoice for returns of invoiced sales),
//! `GET /v1/invoices/{invoiceId}` answers it as JSON or as its Factur-X PDF, and
//! `GET /v1/invoices` lists them.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, Parsed, PathParams, QueryParams};
use crate::fields::{Field, FromBody, Obj};
use crate::invoice_pdf;
use crate::openapi::{Text, UtcInstant};
use crate::ops;
use crate::pagination::{Page, PageQuery, Paging, Scope};
use crate::routes::exports::{LocalDate, local_date};
use crate::routes::stores::{AddressShape, LegalNameText, VatNumberText};
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::header::{ACCEPT, CONTENT_DISPOSITION, CONTENT_TYPE, VARY};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use jiff::civil::Date;
use serde::Serialize;
use till_app::invoices::{InvoiceRequest, InvoiceSummary, Invoiced, StoredInvoice};
use till_app::storage::Newest;
use till_app::storage::invoices::InvoiceFilter;
use till_core::ids::{InvoiceId, StoreId, TransactionId};
use till_core::instant::format_utc;
use till_core::invoice::{Buyer, BuyerText, InvoiceAnswer};
use till_core::seller::{LegalName, PostalAddress, Siren, VatNumber};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_invoice, list_invoices))
        .routes(routes!(get_invoice))
}

/// Most tickets one invoice covers.
const MAX_TICKETS: usize = 500;

/// Body of `POST /v1/invoices`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct InvoiceBody {
    /// Chosen by the back office: sent again with the same request (its answer lost), the
    /// invoice is answered again and issued once.
    #[schema(value_type = Text)]
    invoice_id: InvoiceId,
    #[schema(value_type = Text)]
    store_id: StoreId,
    /// The store's committed sales to invoice, each once, in the order the invoice lists
    /// them; or returns against receipts of sales one invoice covers, for a credit invoice.
    #[schema(value_type = Vec<Text>, min_items = 1, max_items = 500)]
    transaction_ids: Vec<TransactionId>,
    buyer: BuyerBody,
}

/// The company the invoice is made out to, read by the core's rules (`Buyer::parse`).
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct BuyerBody {
    /// Its registered name: up to 200 characters, no control character, not only spaces.
    #[schema(value_type = LegalNameText)]
    name: LegalName,
    /// Its number in the French registry: 9 digits passing the Luhn check.
    #[schema(value_type = Option<String>, pattern = "^[0-9]{9}$")]
    siren: Option<Siren>,
    /// Its intra-community VAT number; a French one carries its SIREN's key and, given with a
    /// `siren`, is that SIREN's.
    #[schema(value_type = Option<VatNumberText>)]
    vat_number: Option<VatNumber>,
    #[schema(value_type = AddressShape)]
    address: PostalAddress,
}

impl FromBody for InvoiceBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let invoice_id = root.required("invoiceId", |f| f.parse_text(InvoiceId::parse));
        let store_id = root.required("storeId", |f| f.parse_text(StoreId::parse));
        let transaction_ids = root.required("transactionIds", |f| {
            let ids = f.array(|item| item.parse_text(TransactionId::parse))?;
            if ids.is_empty() {
                return f.fail("must name at least one sale");
            }
            if ids.len() > MAX_TICKETS {
                return f.fail(format!("must name at most {MAX_TICKETS} sales"));
            }
            for (index, id) in ids.iter().enumerate() {
                if ids[..index].contains(id) {
                    return f.fail_inner(&index.to_string(), "is named twice");
                }
            }
            Some(ids)
        });
        let buyer = root.required("buyer", buyer);
        Some(InvoiceBody {
            invoice_id: invoice_id?,
            store_id: store_id?,
            transaction_ids: transaction_ids?,
            buyer: buyer?,
        })
    }
}

/// The buyer's fields as text, then parsed together by the core, each refusal named by its path.
fn buyer(field: Field<'_>) -> Option<BuyerBody> {
    let buyer = field.object()?;
    let name = buyer.required("name", |f| f.string());
    let siren = buyer.optional("siren", |f| f.string());
    let vat_number = buyer.optional("vatNumber", |f| f.string());
    let address = buyer.required("address", |f| f.object())?;
    let line1 = address.required("line1", |f| f.string());
    let line2 = address.optional("line2", |f| f.string());
    let postal_code = address.required("postalCode", |f| f.string());
    let city = address.required("city", |f| f.string());
    let country = address.required("country", |f| f.string());
    let text = BuyerText {
        name: name?,
        siren: siren?,
        vat_number: vat_number?,
        line1: line1?,
        line2: line2?,
        postal_code: postal_code?,
        city: city?,
        country: country?,
    };
    match Buyer::parse(&text) {
        Ok(parsed) => Some(BuyerBody {
            name: parsed.name,
            siren: parsed.siren,
            vat_number: parsed.vat_number,
            address: parsed.address,
        }),
        Err(refused) => {
            for refusal in refused {
                let path = refusal.field.path();
                let message = refusal.problem.to_string();
                match path.strip_prefix("address.") {
                    Some(inner) => address.fail::<()>(inner, message),
                    None => buyer.fail::<()>(path, message),
                };
            }
            None
        }
    }
}

impl From<InvoiceBody> for InvoiceRequest {
    fn from(body: InvoiceBody) -> InvoiceRequest {
        let buyer = body.buyer;
        InvoiceRequest {
            invoice_id: body.invoice_id,
            store_id: body.store_id,
            transaction_ids: body.transaction_ids,
            buyer: Buyer {
                name: buyer.name,
                siren: buyer.siren,
                vat_number: buyer.vat_number,
                address: buyer.address,
            },
        }
    }
}

/// The stored answer of an invoice, as it was written when it was issued.
fn stored_json(status: StatusCode, invoice: &StoredInvoice, replayed: bool) -> Response {
    let mut response = (status, invoice.answer.clone()).into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if replayed {
        headers.insert("x-idempotent-replay", HeaderValue::from_static("true"));
    }
    response
}

/// Issue an invoice for committed sales, or a credit invoice for returns.
///
/// Makes out an invoice to a company for one or more committed sales of the store (a sale is
/// invoiced once), numbered `F-{storeId}-{year}-{sequence}` without gaps per store and year and
/// dated today in the store's time zone, with the store's seller identity, the sales' lines,
/// VAT per rate and totals to the cent; it is sealed in the journal of its first ticket's
/// register as a technical event naming its tickets. When every ticket is a return against a
/// receipt of sales one invoice covers, a credit invoice citing that invoice is issued instead.
/// Sent again with the same `invoiceId` and request, the invoice is answered again (200,
/// `x-idempotent-replay`) and issued once. A person issues invoices: it is never an agent's
/// tool.
#[utoipa::path(post, path = "/v1/invoices", operation_id = "createInvoice", tag = "invoices",
    request_body = InvoiceBody,
    responses((status = 201, description = "Issued", body = InvoiceAnswer),
              (status = 200, description = "Issued earlier under this invoiceId with the same request, answered again",
                  body = InvoiceAnswer,
                  headers(("x-idempotent-replay" = String, description = "`true`"))),
              (status = 409, description = "The invoiceId was used for another request, or a ticket is on another invoice", body = crate::error::ErrorEnvelope),
              (status = 422, description = "An unknown store or sale, a sale of another store, an incomplete seller identity, sales and returns together, a return of a sale no invoice covers", body = crate::error::ErrorEnvelope)))]
async fn create_invoice(
    caller: Authorized<ops::CreateInvoice>,
    State(state): State<AppState>,
    Parsed(body): Parsed<InvoiceBody>,
) -> Result<Response, ApiError> {
    let Invoiced { invoice, replayed } = till_app::invoices::issue(state.app(), &caller.principal, body.into()).await?;
    let status = if replayed { StatusCode::OK } else { StatusCode::CREATED };
    Ok(stored_json(status, &invoice, replayed))
}

/// `{invoiceId}`.
struct InvoicePath(InvoiceId);

impl FromParams for InvoicePath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("invoiceId", InvoiceId::parse).map(InvoicePath)
    }
}

/// Whether the `Accept` header asks for the PDF before JSON.
fn wants_pdf(headers: &HeaderMap) -> bool {
    let mut pdf = 0;
    let mut json = 0;
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
            .filter_map(|q| q.trim().parse::<f32>().ok())
            .map(|q| (q * 1000.0) as i32)
            .next()
            .unwrap_or(1000);
        match media.as_str() {
            "application/pdf" => pdf = pdf.max(quality),
            "application/json" => json = json.max(quality),
            _ => {}
        }
    }
    pdf > json
}

/// Read an invoice, as JSON or as its Factur-X PDF.
///
/// With `Accept: application/pdf`, the invoice as a Factur-X PDF/A-3 (profile EN 16931) a
/// person reads, its CII XML embedded as `factur-x.xml`; otherwise as JSON. Every copy is the
/// same, drawn from the invoice as issued. A till's token reads its own store's invoices.
/// Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/invoices/{invoiceId}", operation_id = "getInvoice", tag = "invoices",
    params(("invoiceId" = Text, Path)),
    responses((status = 200, description = "The invoice",
                  content((InvoiceAnswer = "application/json"), (Vec<u8> = "application/pdf"))),
              (status = 404, description = "No such invoice", body = crate::error::ErrorEnvelope)))]
async fn get_invoice(
    caller: Authorized<ops::GetInvoice>,
    State(state): State<AppState>,
    PathParams(InvoicePath(id)): PathParams<InvoicePath>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let invoice = till_app::invoices::get(state.app(), &caller.principal, &id).await?;
    let mut response = if wants_pdf(&headers) {
        let pdf = pdf_of(&invoice)?;
        let mut response = pdf.into_response();
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/pdf"));
        if let Ok(disposition) = HeaderValue::from_str(&format!("inline; filename=\"{}.pdf\"", invoice.number)) {
            headers.insert(CONTENT_DISPOSITION, disposition);
        }
        response
    } else {
        stored_json(StatusCode::OK, &invoice, false)
    };
    response.headers_mut().insert(VARY, HeaderValue::from_static("accept"));
    Ok(response)
}

/// The PDF of a stored invoice, from its answer and its XML as kept.
pub(crate) fn pdf_of(invoice: &StoredInvoice) -> Result<Vec<u8>, ApiError> {
    let answer: InvoiceAnswer = serde_json::from_str(&invoice.answer).map_err(ApiError::internal)?;
    invoice_pdf::render(&answer, &invoice.xml).map_err(ApiError::internal)
}

/// The filters of the list.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
struct InvoicesQuery {
    /// Only invoices of this store.
    #[param(value_type = Option<Text>)]
    store_id: Option<StoreId>,
    /// Only invoices issued on or after this day (the store's).
    #[param(value_type = Option<LocalDate>, inline)]
    from: Option<Date>,
    /// Only invoices issued on or before this day; not before `from`.
    #[param(value_type = Option<LocalDate>, inline)]
    to: Option<Date>,
}

/// The filters and the page of a list of invoices.
struct InvoiceList {
    filter: InvoiceFilter,
    paging: Paging<Newest<InvoiceId>>,
}

impl FromParams for InvoicesQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let store_id = params.optional("storeId", StoreId::parse);
        let from = params.optional("from", local_date);
        let to = params.optional("to", local_date);
        let (store_id, from, to) = (store_id?, from?, to?);
        if let (Some(from), Some(to)) = (from, to)
            && to < from
        {
            return params.fail("to", "must not be before from");
        }
        Some(InvoicesQuery { store_id, from, to })
    }
}

impl FromParams for InvoiceList {
    fn from_params(params: &Params) -> Option<Self> {
        let query = InvoicesQuery::from_params(params);
        let page = PageQuery::read(params);
        let query = query?;
        let filter = InvoiceFilter {
            store_id: query.store_id,
            from: query.from,
            to: query.to,
        };
        let scope = Scope::new("invoices")
            .filter("storeId", filter.store_id.as_ref())
            .filter("from", filter.from)
            .filter("to", filter.to);
        let paging = page?.paging(params, scope)?;
        Some(InvoiceList { filter, paging })
    }
}

/// An invoice as the list shows it; `getInvoice` answers the whole of it.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceSummaryView {
    invoice_id: String,
    number: String,
    #[schema(schema_with = kind_schema)]
    kind: &'static str,
    store_id: String,
    /// On a credit invoice, the invoice it credits; null otherwise.
    #[schema(required = true)]
    credits_invoice_id: Option<String>,
    #[schema(format = Date)]
    issued_on: String,
    #[schema(value_type = UtcInstant)]
    issued_at: String,
    buyer_name: String,
    /// VAT included; positive on a credit invoice too.
    total_cents: i64,
    transaction_ids: Vec<String>,
}

fn kind_schema() -> utoipa::openapi::schema::Schema {
    crate::openapi::words(
        ["invoice", "credit"],
        "`invoice`: an invoice of sales; `credit`: a credit invoice of returns.",
    )
}

impl From<InvoiceSummary> for InvoiceSummaryView {
    fn from(invoice: InvoiceSummary) -> Self {
        InvoiceSummaryView {
            invoice_id: invoice.invoice_id.into_string(),
            number: invoice.number,
            kind: if invoice.credit { "credit" } else { "invoice" },
            store_id: invoice.store_id.into_string(),
            credits_invoice_id: invoice.credits.map(InvoiceId::into_string),
            issued_on: invoice.issued_on.to_string(),
            issued_at: format_utc(invoice.issued_at),
            buyer_name: invoice.buyer_name,
            total_cents: invoice.total_cents,
            transaction_ids: invoice
                .transaction_ids
                .into_iter()
                .map(TransactionId::into_string)
                .collect(),
        }
    }
}

/// A page of the list, as the document names it.
type InvoicePage = Page<InvoiceSummaryView>;

/// List invoices, newest issued first.
///
/// Filter by store and by issue date (`from` and `to` inclusive, local days); every filter
/// given must hold. A page at a time: follow `nextCursor` until it is null, with the same
/// filters. A till's token lists its own store's invoices. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/invoices", operation_id = "listInvoices", tag = "invoices",
    params(InvoicesQuery, PageQuery),
    responses((status = 200, description = "A page of invoices, newest first", body = InvoicePage)))]
async fn list_invoices(
    caller: Authorized<ops::ListInvoices>,
    State(state): State<AppState>,
    QueryParams(InvoiceList { filter, paging }): QueryParams<InvoiceList>,
) -> Result<Json<InvoicePage>, ApiError> {
    let invoices = till_app::invoices::list(state.app(), &caller.principal, filter, &paging.window()).await?;
    Ok(Json(paging.page(
        invoices,
        InvoiceSummary::key,
        InvoiceSummaryView::from,
    )))
}
