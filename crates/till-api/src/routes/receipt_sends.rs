//! E-receipts: `POST /v1/sales/{transactionId}/receipt/send` queues a sale's receipt for
//! e-mail, `GET /v1/sales/{transactionId}/receipt/sends` lists its sends (docs/receipts.md,
//! "By e-mail"). The mail itself leaves from the database's queue ([`crate::mailer`]).

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{OptionalParsed, PathParams};
use crate::fields::{FromBody, Obj};
use crate::openapi::{Text, UtcInstant, named_words};
use crate::ops;
use crate::routes::sales::SalePath;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use till_app::e_receipts::{Requested, SendRecord};
use till_core::customer::Email;
use till_core::e_receipt::{MailFailure, RecipientKind, SendState, masked};
use till_core::ids::SendId;
use till_core::instant::format_utc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(send_receipt))
        .routes(routes!(list_receipt_sends))
}

/// Body of `POST /v1/sales/{transactionId}/receipt/send`; may be left out.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct SendBody {
    /// Where to send it, for this send alone: the address is kept until the mail is delivered
    /// or given up, then deleted. Left out, the receipt goes to the sale's customer, who must
    /// have consented to e-receipts (`consent.eReceipt`) and have an address on their profile.
    #[schema(value_type = Option<String>, format = "email", max_length = 254)]
    email: Option<Email>,
    /// The till's id for this send: sent again (its answer lost), the same send is answered
    /// and no other mail is queued. Without it, every call queues a mail.
    #[schema(value_type = Option<Text>)]
    send_id: Option<SendId>,
}

impl FromBody for SendBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let email = root.optional("email", |f| {
            f.string_as("must be an e-mail address with a domain", Email::parse)
        });
        let send_id = root.optional("sendId", |f| f.parse_text(SendId::parse));
        Some(SendBody {
            email: email?,
            send_id: send_id?,
        })
    }
}

named_words!(
    SendStateWord,
    "ReceiptSendState",
    SendState::ALL.iter().map(|state| state.as_str()),
    "`queued`: waiting for its first attempt or its next one; `sent`: the mail server took it; \
     `failed`: given up, refused for good or still failing when the retry window closed."
);

named_words!(
    MailFailureWord,
    "ReceiptSendFailure",
    MailFailure::ALL.iter().map(|failure| failure.as_str()),
    "`unreachable`: the mail server could not be reached or the connection broke (tried again); \
     `deferred`: it refused for now (tried again); `rejected`: it refused for good; `noAddress`: the \
     customer's profile holds no address any more, or their consent was withdrawn."
);

/// A receipt's send by e-mail and where it stands.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptSendView {
    #[schema(value_type = Text)]
    send_id: String,
    transaction_id: String,
    #[schema(schema_with = recipient_schema)]
    recipient: &'static str,
    /// A one-off address, masked (its first character and its domain), while it is held;
    /// null once the send is over, and for a customer's.
    #[schema(required = true)]
    to: Option<String>,
    #[schema(value_type = SendStateWord)]
    state: &'static str,
    /// Attempts made so far.
    attempts: u32,
    /// How the last attempt failed; null when none failed or the mail was sent.
    #[schema(value_type = Option<MailFailureWord>, required = true)]
    last_failure: Option<&'static str>,
    #[schema(value_type = UtcInstant)]
    queued_at: String,
    /// When it is tried next, while queued; null otherwise.
    #[schema(value_type = Option<UtcInstant>, required = true)]
    next_attempt_at: Option<String>,
    /// When the mail server took it; null until then.
    #[schema(value_type = Option<UtcInstant>, required = true)]
    sent_at: Option<String>,
}

fn recipient_schema() -> utoipa::openapi::schema::Schema {
    crate::openapi::words(
        [RecipientKind::Address, RecipientKind::Customer].map(RecipientKind::as_str),
        "`address`: one given for this send; `customer`: the sale's customer's.",
    )
}

impl From<SendRecord> for ReceiptSendView {
    fn from(record: SendRecord) -> Self {
        ReceiptSendView {
            send_id: record.id.as_str().to_owned(),
            transaction_id: record.transaction_id.as_str().to_owned(),
            recipient: record.recipient.as_str(),
            to: record.email.as_ref().map(masked),
            state: record.state.as_str(),
            attempts: record.attempts,
            last_failure: record.last_failure.map(MailFailure::as_str),
            queued_at: format_utc(record.queued_at),
            next_attempt_at: record.due_at.map(format_utc),
            sent_at: record.sent_at.map(format_utc),
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptSendList {
    /// Oldest first.
    sends: Vec<ReceiptSendView>,
}

/// Send a sale's receipt by e-mail.
///
/// Queues the receipt (HTML with its proof as a QR code, and text) for the mail server: to
/// `email` when given, else to the sale's customer if they consented to e-receipts. The mail
/// leaves from a queue in the database, tried again after a failure that may pass; follow it
/// with `listReceiptSends`. With a `sendId` sent before for this sale, that send is answered
/// (200, `x-idempotent-replay`) and no other mail is queued. A till's token sends the receipts
/// of its own store's sales. Refused (422) when the deployment has no mail server.
#[utoipa::path(post, path = "/v1/sales/{transactionId}/receipt/send", operation_id = "sendReceipt", tag = "checkout",
    params(("transactionId" = Text, Path)),
    request_body(content = Option<SendBody>, description = "Where to send it and the send's id; may be left out"),
    responses((status = 202, description = "Queued", body = ReceiptSendView),
              (status = 200, description = "The send this sendId queued before, answered again; nothing queued",
                  body = ReceiptSendView,
                  headers(("x-idempotent-replay" = String, description = "`true`"))),
              (status = 404, description = "No sale with this transaction id", body = crate::error::ErrorEnvelope),
              (status = 409, description = "The sendId names another sale's send", body = crate::error::ErrorEnvelope),
              (status = 422, description = "No mail server, or no address to send to", body = crate::error::ErrorEnvelope)))]
async fn send_receipt(
    caller: Authorized<ops::SendReceipt>,
    State(state): State<AppState>,
    PathParams(SalePath(id)): PathParams<SalePath>,
    OptionalParsed(body): OptionalParsed<SendBody>,
) -> Result<Response, ApiError> {
    let (email, send_id) = body.map_or((None, None), |body| (body.email, body.send_id));
    let Requested { record, replayed } =
        till_app::e_receipts::send(state.app(), &caller.principal, &id, send_id, email).await?;
    let view = Json(ReceiptSendView::from(record));
    Ok(match replayed {
        true => (StatusCode::OK, [("x-idempotent-replay", "true")], view).into_response(),
        false => (StatusCode::ACCEPTED, view).into_response(),
    })
}

/// List a sale's e-mailed receipts.
///
/// Every send of the sale's receipt by e-mail, oldest first, with where it stands. An address
/// shows masked while it is held, and not at all once the send is over. Read-only.
#[utoipa::path(get, path = "/v1/sales/{transactionId}/receipt/sends", operation_id = "listReceiptSends", tag = "checkout",
    params(("transactionId" = Text, Path)),
    responses((status = 200, description = "The sends, oldest first", body = ReceiptSendList),
              (status = 404, description = "No sale with this transaction id", body = crate::error::ErrorEnvelope)))]
async fn list_receipt_sends(
    caller: Authorized<ops::ListReceiptSends>,
    State(state): State<AppState>,
    PathParams(SalePath(id)): PathParams<SalePath>,
) -> Result<Json<ReceiptSendList>, ApiError> {
    let sends = till_app::e_receipts::sends(state.app(), &caller.principal, &id).await?;
    Ok(Json(ReceiptSendList {
        sends: sends.into_iter().map(ReceiptSendView::from).collect(),
    }))
}
