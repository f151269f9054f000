//! `GET /v1/sales/{transactionId}`: a committed sale, as its event.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, PathParams, QueryParams};
use crate::openapi::Text;
use crate::ops;
use crate::routes::checkout::event::SaleEvent;
use crate::state::AppState;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use till_core::ids::TransactionId;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_sale)).routes(routes!(receipt))
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
/// itself sealed in the register's duplicate chain, so a person should confirm a reprint.
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
    let receipt = state
        .store()
        .receipt(&id)
        .await?
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
    response
        .headers_mut()
        .insert("x-till-print", axum::http::HeaderValue::from(print.print_no));
    Ok(response)
}

/// Read a committed sale.
///
/// Returns the sale event exactly as finalize answered it. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/sales/{transactionId}", operation_id = "getSale", tag = "checkout",
    params(("transactionId" = Text, Path)),
    responses((status = 200, description = "The sale event", body = SaleEvent),
              (status = 404, description = "No sale with this transaction id", body = crate::error::ErrorEnvelope)))]
async fn get_sale(
    _caller: Authorized<ops::GetSale>,
    State(state): State<AppState>,
    PathParams(SalePath(id)): PathParams<SalePath>,
) -> Result<Response, ApiError> {
    let (_, body) = state
        .store()
        .find_sale(&id)
        .await?
        .ok_or_else(crate::phrases::no_such_sale)?;
    Ok(([(CONTENT_TYPE, "application/json")], body).into_response())
}
