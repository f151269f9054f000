//! `POST /v1/returns` gives goods back against a receipt and issues a credit note (avoir);
//! `GET /v1/sales/{transactionId}/returns` shows what was returned of a sale and what remains.
//!
//! A return is a ticket of its own: negative amounts, the goods back into stock, loyalty points
//! taken back, sealed in the register's ticket chain with a reference to the original. Each
//! unit refunds what the customer paid for it on the original sale (see
//! [`till_core::returns`]).

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{JsonBody, PathParams};
use crate::fields::{Field, FromBody, Obj, parse_body};
use crate::ops;
use crate::routes::checkout::created;
use crate::routes::checkout::event::{Loyalty, StockMovement, Ticket, Totals, reported_sku, stock_movements};
use crate::routes::checkout::request::{MAX_LINES, too_many_lines};
use crate::routes::checkout::tenders::{TenderSetBody, tender_set};
use crate::routes::sales::SalePath;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;
use till_app::returns::give_back;
use till_app::sales::{self, NewSale, ReturnOf, ReturnSummary, Returnable};
use till_core::committed::{Reader, SaleAnswer};
use till_core::ids::{RegisterId, SessionId, StoreId, Subject, TransactionId};
use till_core::instant::format_utc;
use till_core::money::MAX_SAFE_INTEGER;
use till_core::returns::{ReturnRequest, ReturnedUnits};
use till_core::sale::SaleType;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_return))
        .routes(routes!(sale_returns))
}

// As read; `ReturnRequest` is made of it.
/// Body of `POST /v1/returns`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReturnRequestBody {
    /// Idempotency key of the return: the same id with the same content is a no-op, with other
    /// content a 409. Shares its space with sales' transaction ids.
    #[schema(value_type = crate::openapi::Text)]
    transaction_id: TransactionId,
    /// The sale the goods were bought in; another transaction than the return's own.
    #[schema(value_type = crate::openapi::Text)]
    original_transaction_id: TransactionId,
    /// The till's number for this return ticket.
    #[schema(value_type = crate::openapi::Text)]
    number: String,
    /// The store taking the goods back; they return to its stock.
    #[schema(value_type = crate::openapi::Text)]
    store_id: StoreId,
    #[schema(value_type = crate::openapi::Text)]
    seller_id: Subject,
    /// The open register session the return is booked against.
    #[schema(value_type = crate::openapi::Text)]
    session_id: SessionId,
    /// Defaults to the session's register.
    #[schema(value_type = Option<crate::openapi::Text>)]
    register_id: Option<RegisterId>,
    /// The original's cart lines, by id (each once), and how many of their units come back.
    #[schema(min_items = 1, max_items = 1000)]
    lines: Vec<ReturnLineBody>,
    /// How the refund is paid out: `amountDue` is the refund, in the shape of finalize's tenders.
    tenders: TenderSetBody,
}

#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReturnLineBody {
    /// The id of a cart line of the original sale.
    #[schema(value_type = crate::openapi::Text)]
    line_id: String,
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    quantity: i64,
}

/// The 201 body of a return, stored and replayed byte for byte. Amounts are negative: money
/// going back to the customer.
#[derive(Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReturnEvent {
    pub id: String,
    /// The register whose chain sealed the return's ticket.
    pub register_id: String,
    /// The credit note (avoir): `AV-{registerId}-{sequence}`, numbered along the register's
    /// tickets.
    pub credit_note_number: String,
    /// The code that redeems the credit note the return issues (a `credit_note` refund
    /// tender), printed on its receipt: a `credit_note` tender's `reference`. Absent when the
    /// return issues none, and from the event feed and webhooks.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = crate::openapi::InstrumentCodeText, required = false)]
    pub credit_note_code: Option<String>,
    pub original: OriginalView,
    pub transaction: ReturnTransaction,
    pub ticket: Ticket,
    /// Points taken back from the original's customer (negative).
    pub loyalty: Loyalty,
    /// One per article coming back (positive).
    pub stock_movements: Vec<StockMovement>,
    pub emitted_at: String,
}

/// The original sale's ticket.
#[derive(Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OriginalView {
    pub transaction_id: String,
    pub register_id: String,
    /// Its sequence in its register's ticket chain.
    pub seq: i64,
}

#[derive(Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReturnTransaction {
    pub id: String,
    pub number: String,
    pub store_id: String,
    pub seller_id: String,
    /// The original sale's customer.
    pub customer_id: Option<String>,
    /// `completed`.
    pub status: String,
    /// `return`.
    pub r#type: String,
    pub lines: Vec<ReturnedLineView>,
    /// Negative subtotal and total; positive counts.
    pub totals: Totals,
}

#[derive(Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReturnedLineView {
    /// The original's cart line.
    pub line_id: String,
    /// 64 zeros for a custom line.
    pub sku_id: String,
    /// Units coming back.
    pub quantity: i64,
    /// The unit price on the original sale.
    pub unit_price: i64,
    /// What these units refund, negative: what the customer paid for them.
    pub net_cents: i64,
}

/// Give goods back against a receipt and issue a credit note.
///
/// Names the original sale by its transactionId and the returned cart lines by id with their
/// quantities. Each unit refunds what the customer paid for it on the original sale: the
/// promotions, declared discounts and coupon of that sale are prorated exactly as they were
/// allocated, so a return never refunds more than was paid, however it is split. In one
/// transaction: a return ticket with negative totals and a credit-note number, sealed in the
/// register's chain with a reference to the original; the goods back into the store's stock;
/// loyalty points taken back in proportion. The refund is paid out by the tenders, whose
/// `amountDue` must equal it. 422 when more units would come back than were sold, over all
/// returns of that sale, or for a line the sale does not have. Idempotent by its own
/// transactionId, like finalize. Tier `avoid`: it pays money out of the drawer or onto a card
/// or a credit note, so an automated agent must never call it; a person does it at the till.
#[utoipa::path(post, path = "/v1/returns", operation_id = "createReturn", tag = "returns",
    request_body = ReturnRequestBody,
    responses(
        (status = 201, description = "Committed (or replayed): the return and its credit note", body = ReturnEvent),
        (status = 403, description = "Missing scope", body = crate::error::ErrorEnvelope),
        (status = 409, description = "The transactionId was already used with other content", body = crate::error::ErrorEnvelope),
        (status = 422, description = "Unknown original, a line of another sale, more units than remain, refund mismatch, closed session", body = crate::error::ErrorEnvelope)))]
async fn create_return(
    auth: Authorized<ops::CreateReturn>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let request = parse_return(&body)?;
    let booked = give_back(state.app(), &auth.principal, &request).await?;
    Ok(created(booked))
}

/// A return's answer, written once the commit gives the credit note its number; the code of
/// the credit note it issues is for its caller only.
pub(crate) fn return_answer(ticket: &NewSale, original: &ReturnOf) -> SaleAnswer {
    let event = ReturnEvent::of(ticket, original);
    let code = ticket
        .stored_value
        .credit_note_code
        .as_ref()
        .map(|code| code.as_str().to_owned());
    SaleAnswer::NamingCreditNote(Arc::new(move |credit_note: &str, reader: Reader| {
        serde_json::to_string(&ReturnEvent {
            credit_note_number: credit_note.to_owned(),
            credit_note_code: code.clone().filter(|_| reader == Reader::Caller),
            ..event.clone()
        })
    }))
}

impl ReturnEvent {
    /// The return's event, but for its credit note's number.
    fn of(ticket: &NewSale, original: &ReturnOf) -> ReturnEvent {
        let customer = ticket.customer_id.as_ref().map(|c| c.as_str().to_owned());
        ReturnEvent {
            id: ticket.event_id.clone(),
            register_id: ticket.register_id.as_str().to_owned(),
            credit_note_number: String::new(),
            credit_note_code: None,
            original: OriginalView {
                transaction_id: original.transaction_id.as_str().to_owned(),
                register_id: original.register_id.as_str().to_owned(),
                seq: original.seq,
            },
            transaction: ReturnTransaction {
                id: ticket.transaction_id.as_str().to_owned(),
                number: ticket.number.clone(),
                store_id: ticket.store_id.as_str().to_owned(),
                seller_id: ticket.seller_id.as_str().to_owned(),
                customer_id: customer.clone(),
                status: "completed".to_owned(),
                r#type: SaleType::Return.as_str().to_owned(),
                lines: ticket
                    .lines
                    .iter()
                    .map(|line| ReturnedLineView {
                        line_id: line.line_id.clone(),
                        sku_id: reported_sku(line.sku_id.as_ref()).to_owned(),
                        quantity: line.quantity,
                        unit_price: line.unit_price.get(),
                        net_cents: line.net.get(),
                    })
                    .collect(),
                totals: Totals::of(ticket),
            },
            ticket: Ticket::of(ticket, customer.clone()),
            loyalty: Loyalty {
                customer_id: customer,
                points_earned: ticket.points_earned,
            },
            stock_movements: stock_movements(&ticket.stock_moves),
            emitted_at: format_utc(ticket.emitted_at),
        }
    }
}

/// What was returned of a sale and what remains.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaleReturns {
    pub transaction_id: String,
    /// The sale's type; nothing of a `return` can be returned.
    pub r#type: String,
    /// What the customer paid.
    pub total_cents: i64,
    /// What its returns refunded so far (positive).
    pub refunded_cents: i64,
    pub points_earned: i64,
    /// Points its returns took back so far (positive).
    pub points_returned: i64,
    pub lines: Vec<ReturnableLineView>,
    /// Oldest first.
    pub returns: Vec<ReturnMade>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReturnableLineView {
    pub line_id: String,
    /// 64 zeros for a custom line.
    pub sku_id: String,
    pub quantity: i64,
    pub returned: i64,
    /// Units that may still come back.
    pub returnable: i64,
    /// What returning all of them would refund.
    pub returnable_cents: i64,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReturnMade {
    pub transaction_id: String,
    pub credit_note_number: Option<String>,
    pub register_id: String,
    pub seq: i64,
    /// Negative: the refund.
    pub total_cents: i64,
    /// Negative: the points taken back.
    pub points_earned: i64,
    pub emitted_at: String,
    pub lines: Vec<ReturnMadeLine>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReturnMadeLine {
    pub line_id: String,
    pub quantity: i64,
    /// Negative: what these units refunded.
    pub net_cents: i64,
}

/// Show the returns made against a sale and what remains returnable.
///
/// Per line of the sale: units sold, returned so far, still returnable and what returning all
/// of them would refund; then every return made against it with its credit note. Read-only;
/// safe to call at any time, for instance before a return to show the customer what they get.
#[utoipa::path(get, path = "/v1/sales/{transactionId}/returns", operation_id = "getSaleReturns", tag = "returns",
    params(("transactionId" = crate::openapi::Text, Path)),
    responses((status = 200, description = "The sale's returns and what remains returnable", body = SaleReturns),
              (status = 404, description = "No sale with this transaction id", body = crate::error::ErrorEnvelope)))]
async fn sale_returns(
    _caller: Authorized<ops::GetSaleReturns>,
    State(state): State<AppState>,
    PathParams(SalePath(id)): PathParams<SalePath>,
) -> Result<Json<SaleReturns>, ApiError> {
    let found = sales::returns_of(state.app(), &id).await?;
    let sale = &found.original.returnable;
    Ok(Json(SaleReturns {
        transaction_id: id.as_str().to_owned(),
        r#type: found.original.kind.clone(),
        total_cents: sale.total.get(),
        refunded_cents: sale.refunded.get(),
        points_earned: sale.points_earned,
        points_returned: sale.points_returned,
        lines: found.lines.into_iter().map(ReturnableLineView::from).collect(),
        returns: found.returns.into_iter().map(ReturnMade::from).collect(),
    }))
}

impl From<Returnable> for ReturnableLineView {
    fn from(line: Returnable) -> ReturnableLineView {
        ReturnableLineView {
            sku_id: reported_sku(line.sku_id.as_ref()).to_owned(),
            line_id: line.line_id,
            quantity: line.quantity,
            returned: line.returned,
            returnable: line.units,
            returnable_cents: line.refund.get(),
        }
    }
}

impl From<ReturnSummary> for ReturnMade {
    fn from(made: ReturnSummary) -> ReturnMade {
        ReturnMade {
            transaction_id: made.transaction_id,
            credit_note_number: made.credit_note,
            register_id: made.register_id,
            seq: made.seq,
            total_cents: made.total_cents,
            points_earned: made.points_earned,
            emitted_at: format_utc(made.emitted_at),
            lines: made
                .lines
                .into_iter()
                .map(|(line_id, quantity, net_cents)| ReturnMadeLine {
                    line_id,
                    quantity,
                    net_cents,
                })
                .collect(),
        }
    }
}

/// Parses a return body, reporting every problem at once.
pub fn parse_return(body: &Value) -> Result<ReturnRequest, ApiError> {
    parse_body::<ReturnRequestBody>(body).map(ReturnRequest::from)
}

impl FromBody for ReturnRequestBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let transaction_id = root.required("transactionId", |f| f.parse_text(TransactionId::parse));
        let original = root.required("originalTransactionId", |f| f.parse_text(TransactionId::parse));
        let number = root.required("number", |f| f.text());
        let store_id = root.required("storeId", |f| f.parse_text(StoreId::parse));
        let seller_id = root.required("sellerId", |f| f.parse_text(Subject::parse));
        let session_id = root.required("sessionId", |f| f.parse_text(SessionId::parse));
        let register_id = root.optional("registerId", |f| f.parse_text(RegisterId::parse));
        let lines = root.required("lines", returned_lines);
        let tenders = root.required("tenders", tender_set);
        let (transaction_id, original) = (transaction_id?, original?);
        if transaction_id == original {
            return root.fail(
                "originalTransactionId",
                "must name another transaction than the return's own",
            );
        }
        Some(ReturnRequestBody {
            transaction_id,
            original_transaction_id: original,
            number: number?,
            store_id: store_id?,
            seller_id: seller_id?,
            session_id: session_id?,
            register_id: register_id?,
            lines: lines?,
            tenders: tenders?,
        })
    }
}

impl From<ReturnRequestBody> for ReturnRequest {
    fn from(body: ReturnRequestBody) -> ReturnRequest {
        let lines = body.lines.into_iter().map(|line| ReturnedUnits {
            line_id: line.line_id,
            units: line.quantity,
        });
        ReturnRequest {
            transaction_id: body.transaction_id,
            original_transaction_id: body.original_transaction_id,
            number: body.number,
            store_id: body.store_id,
            seller_id: body.seller_id,
            session_id: body.session_id,
            register_id: body.register_id,
            lines: lines.collect(),
            tenders: body.tenders.into(),
        }
    }
}

fn returned_lines(field: Field<'_>) -> Option<Vec<ReturnLineBody>> {
    match field.value().as_array().map(Vec::len) {
        Some(0) => return field.fail("must name at least one line"),
        Some(count) if count > MAX_LINES => return field.fail(too_many_lines()),
        _ => {}
    }
    let mut seen = HashSet::new();
    field.array(|line| {
        let object = line.object()?;
        let line_id = object.required("lineId", |f| {
            let id = f.text()?;
            if seen.insert(id.clone()) {
                Some(id)
            } else {
                f.fail("names a line already named in this return")
            }
        });
        let units = object.required("quantity", |f| f.integer(1, MAX_SAFE_INTEGER));
        Some(ReturnLineBody {
            line_id: line_id?,
            quantity: units?,
        })
    })
}
