//! Card payments (docs/payments.md): `POST /v1/payments` records an attempt before the till asks
//! its terminal, `POST /v1/payments/{paymentId}/outcome` what the terminal said,
//! `POST /v1/payments/{paymentId}/void` that the terminal gave an approval back;
//! `GET /v1/payments/{paymentId}` and `GET /v1/payments` read them.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, Parsed, PathParams, QueryParams};
use crate::fields::{Field, FromBody, Obj};
use crate::openapi::{Absent, Text, absent, named_words};
use crate::ops;
use crate::pagination::{Page, PageQuery, Paging, Scope};
use crate::routes::Written;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use till_app::payments::{self, PaymentFilter, Recorded};
use till_core::ids::SessionId;
use till_core::instant::format_utc;
use till_core::money::Cents;
use till_core::payment::{
    Attempt, AttemptKind, AttemptRequest, FieldRefusal, Outcome, OutcomeInput, OutcomeStatus, PaymentId, PaymentState,
    Provider, TerminalId,
};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

named_words!(
    PaymentStateName,
    "PaymentState",
    PaymentState::ALL.iter().map(|state| state.as_str()),
    "`requested`, `authorized`, `partially_authorized`, `declined`, `cancelled`, `unknown` \
     (the terminal's answer was lost), `captured` (by a sale), `voided`, `orphaned` (approved, \
     captured by no sale in time) or `refunded` (a refund attempt, made by a return)."
);
named_words!(
    OutcomeStatusName,
    "PaymentOutcomeStatus",
    OutcomeStatus::ALL.iter().map(|status| status.as_str()),
    "`authorized`, `partially_authorized`, `declined`, `cancelled`, or `unknown` (the answer was \
     lost; a later outcome settles it)."
);
named_words!(
    AttemptKindName,
    "PaymentKind",
    AttemptKind::ALL.iter().map(|kind| kind.as_str()),
    "`payment` (asked of the card) or `refund` (given back to it by a return)."
);
named_words!(
    MethodName,
    "PaymentMethod",
    ["card"],
    "`card`, the one method with a terminal."
);

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(request_payment, list_payments))
        .routes(routes!(get_payment))
        .routes(routes!(record_outcome))
        .routes(routes!(void_payment))
}

/// `{paymentId}`.
struct PaymentPath(PaymentId);

impl FromParams for PaymentPath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("paymentId", PaymentId::parse).map(PaymentPath)
    }
}

/// A refusal of `till_core::payment`'s parsers, on the body's field it names.
fn field_refused<T>(root: &Obj<'_>, refusal: FieldRefusal) -> Option<T> {
    root.fail(refusal.field.as_str(), refusal.problem.to_string())
}

/// Body of `POST /v1/payments`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct PaymentBody {
    /// The till's id for the attempt: sent again with the same content, the attempt is answered
    /// again; with other content, 409.
    #[schema(value_type = Text)]
    payment_id: PaymentId,
    #[schema(value_type = Text)]
    session_id: SessionId,
    #[schema(value_type = i64, minimum = 1, maximum = 9007199254740991_i64)]
    amount_cents: Cents,
    #[schema(value_type = MethodName)]
    #[expect(
        dead_code,
        reason = "on the wire so that other methods can come; card is the only one"
    )]
    method: &'static str,
    /// The terminal asked, as the till names it; never a card number.
    #[schema(value_type = Option<String>, min_length = 1, max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
    terminal_id: Option<TerminalId>,
    /// The payment provider or acquirer; never a card number.
    #[schema(value_type = Option<String>, min_length = 1, max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
    provider: Option<Provider>,
}

/// A text of the core's payment rules, the refusal naming this field.
fn payment_text<T>(field: Field<'_>, parse: fn(&str) -> Result<T, till_core::payment::FieldProblem>) -> Option<T> {
    let text = field.string()?;
    match parse(text) {
        Ok(value) => Some(value),
        Err(problem) => field.fail(problem.to_string()),
    }
}

impl FromBody for PaymentBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let payment_id = root.required("paymentId", |f| f.parse_text(PaymentId::parse));
        let session_id = root.required("sessionId", |f| f.parse_text(SessionId::parse));
        let amount_cents = root.required("amountCents", |f| f.positive_cents());
        let method = root.required("method", |f| f.one_of(&[("card", "card")]));
        let terminal_id = root.optional("terminalId", |f| payment_text(f, TerminalId::parse));
        let provider = root.optional("provider", |f| payment_text(f, Provider::parse));
        Some(PaymentBody {
            payment_id: payment_id?,
            session_id: session_id?,
            amount_cents: amount_cents?,
            method: method?,
            terminal_id: terminal_id?,
            provider: provider?,
        })
    }
}

/// Body of `POST /v1/payments/{paymentId}/outcome`: what the terminal said, parsed by the
/// core's rules into an [`Outcome`]. Its shapes on the wire are [`OutcomeShape`]'s.
struct OutcomeBody(Outcome);

/// What the terminal said: an approval, or no approval. No field holds a card number: a run of
/// twelve digits or more, however spaced, is refused.
#[derive(utoipa::ToSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "the document's shapes of the body OutcomeBody parses")]
enum OutcomeShape {
    Approval(ApprovalOutcome),
    NoApproval(NoApprovalOutcome),
}

named_words!(
    ApprovalStatus,
    "PaymentApprovalStatus",
    ["authorized", "partially_authorized"],
    "`authorized` (the whole amount asked) or `partially_authorized` (less: other tenders pay the rest)."
);
named_words!(
    NoApprovalStatus,
    "PaymentNoApprovalStatus",
    ["declined", "cancelled", "unknown"],
    "`declined`, `cancelled`, or `unknown` (the answer was lost; a later outcome settles it)."
);

/// A shape of the outcome's body: its own status and amount fields, then what the terminal may
/// say of the card and the transaction whatever the status (a declined card may have been read,
/// and a standalone terminal's outcome is keyed by hand).
macro_rules! outcome_shape {
    ($(#[$doc:meta])* $name:ident { $($fields:tt)* }) => {
        $(#[$doc])*
        #[derive(utoipa::ToSchema)]
        #[serde(rename_all = "camelCase")]
        #[expect(dead_code, reason = "a shape of the document")]
        struct $name {
            $($fields)*
            /// The card's network as the terminal names it (`CB`, `VISA`, ...).
            #[schema(min_length = 1, max_length = 32, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
            card_brand: Option<String>,
            /// The card's last four digits, the only card digits till keeps.
            #[schema(pattern = "^[0-9]{4}$")]
            last4: Option<String>,
            /// How the card was read (`contactless`, `chip`, ...), in the terminal's words.
            #[schema(min_length = 1, max_length = 32, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
            entry_mode: Option<String>,
            /// The terminal's reference of the transaction.
            #[schema(min_length = 1, max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
            terminal_transaction_id: Option<String>,
            /// The terminal's receipt text; lines separated by line feeds.
            #[schema(min_length = 1, max_length = 4096, pattern = r"^[^\u0000-\u0009\u000B-\u001F\u007F-\u009F]*$")]
            terminal_receipt: Option<String>,
        }
    };
}

outcome_shape!(
    /// The terminal approved an amount.
    ApprovalOutcome {
        #[schema(value_type = ApprovalStatus)]
        status: (),
        /// What was approved: the amount asked for `authorized`, less for `partially_authorized`.
        #[schema(minimum = 1, maximum = 9007199254740991_i64)]
        authorized_cents: i64,
        /// The issuer's approval code.
        #[schema(min_length = 1, max_length = 32, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
        authorization_code: Option<String>,
    }
);

outcome_shape!(
    /// The terminal approved nothing.
    NoApprovalOutcome {
        #[schema(value_type = NoApprovalStatus)]
        status: (),
        #[schema(schema_with = absent, required = false)]
        authorized_cents: Absent,
        #[schema(schema_with = absent, required = false)]
        authorization_code: Absent,
    }
);

impl FromBody for OutcomeBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let text = |key: &str| root.optional(key, |f| f.string().map(str::to_owned));
        let status = root.required("status", |f| f.string().map(str::to_owned));
        let authorized_cents = root.optional("authorizedCents", |f| f.integer(i64::MIN, i64::MAX));
        let (code, brand, last4, entry, reference, receipt) = (
            text("authorizationCode"),
            text("cardBrand"),
            text("last4"),
            text("entryMode"),
            text("terminalTransactionId"),
            text("terminalReceipt"),
        );
        let (status, authorized_cents) = (status?, authorized_cents?);
        let (code, brand, last4, entry, reference, receipt) = (code?, brand?, last4?, entry?, reference?, receipt?);
        let input = OutcomeInput {
            status: &status,
            authorized_cents,
            authorization_code: code.as_deref(),
            card_brand: brand.as_deref(),
            last4: last4.as_deref(),
            entry_mode: entry.as_deref(),
            terminal_transaction_id: reference.as_deref(),
            terminal_receipt: receipt.as_deref(),
        };
        match Outcome::parse(&input) {
            Ok(outcome) => Some(OutcomeBody(outcome)),
            Err(refusal) => field_refused(root, refusal),
        }
    }
}

/// What the terminal said: the body of an outcome, and the outcome an attempt answers. No
/// field holds a card number: a run of twelve digits or more, however spaced, is refused.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutcomeView {
    #[schema(value_type = OutcomeStatusName)]
    status: &'static str,
    /// What was approved: required for an approval (the amount asked for `authorized`, less for
    /// `partially_authorized`), refused otherwise.
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    authorized_cents: Option<i64>,
    /// The approval code; only with an approval.
    #[schema(min_length = 1, max_length = 32)]
    authorization_code: Option<String>,
    #[schema(min_length = 1, max_length = 32)]
    card_brand: Option<String>,
    /// The card's last four digits, the only card digits till keeps.
    #[schema(pattern = "^[0-9]{4}$")]
    last4: Option<String>,
    #[schema(min_length = 1, max_length = 32)]
    entry_mode: Option<String>,
    /// The terminal's reference for the transaction.
    #[schema(min_length = 1, max_length = 64)]
    terminal_transaction_id: Option<String>,
    /// The terminal's receipt text; lines separated by line feeds.
    #[schema(min_length = 1, max_length = 4096)]
    terminal_receipt: Option<String>,
}

impl From<&Outcome> for OutcomeView {
    fn from(outcome: &Outcome) -> Self {
        OutcomeView {
            status: outcome.status().as_str(),
            authorized_cents: outcome.authorized().map(Cents::get),
            authorization_code: outcome.authorization_code().map(|v| v.as_str().to_owned()),
            card_brand: outcome.card_brand().map(|v| v.as_str().to_owned()),
            last4: outcome.last4().map(|v| v.as_str().to_owned()),
            entry_mode: outcome.entry_mode().map(|v| v.as_str().to_owned()),
            terminal_transaction_id: outcome.terminal_transaction_id().map(|v| v.as_str().to_owned()),
            terminal_receipt: outcome.terminal_receipt().map(|v| v.as_str().to_owned()),
        }
    }
}

/// A payment attempt.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentView {
    payment_id: String,
    #[schema(value_type = AttemptKindName)]
    kind: &'static str,
    session_id: String,
    amount_cents: i64,
    terminal_id: Option<String>,
    provider: Option<String>,
    #[schema(value_type = PaymentStateName)]
    state: &'static str,
    outcome: Option<OutcomeView>,
    requested_at: String,
    authorized_at: Option<String>,
    /// A payment: the sale that captured it; a refund: the return that made it.
    captured_by: Option<String>,
    captured_at: Option<String>,
    orphaned_at: Option<String>,
    voided_at: Option<String>,
    /// A refund: the payment it gave back to.
    refund_of: Option<String>,
    /// A payment: what returns gave back to it so far; 0 for a refund.
    refunded_cents: i64,
}

impl From<Attempt> for PaymentView {
    fn from(attempt: Attempt) -> Self {
        PaymentView {
            payment_id: attempt.id.as_str().to_owned(),
            kind: attempt.kind.as_str(),
            session_id: attempt.session_id.as_str().to_owned(),
            amount_cents: attempt.amount.get(),
            terminal_id: attempt.terminal_id.map(|v| v.as_str().to_owned()),
            provider: attempt.provider.map(|v| v.as_str().to_owned()),
            state: attempt.state.as_str(),
            outcome: attempt.outcome.as_ref().map(OutcomeView::from),
            requested_at: format_utc(attempt.requested_at),
            authorized_at: attempt.authorized_at.map(format_utc),
            captured_by: attempt.captured_by.map(|v| v.as_str().to_owned()),
            captured_at: attempt.captured_at.map(format_utc),
            orphaned_at: attempt.orphaned_at.map(format_utc),
            voided_at: attempt.voided_at.map(format_utc),
            refund_of: attempt.refund_of.map(|v| v.as_str().to_owned()),
            refunded_cents: attempt.refunded.get(),
        }
    }
}

/// Record a card payment attempt, before the till asks its terminal.
///
/// The attempt starts `requested`; the terminal's answer follows through `outcome`, and a sale
/// captures an approved attempt when a `card` tender's `reference` names it. Sent again with the
/// same `paymentId` and content, the attempt is answered as it stands (200); with other content, 409.
/// With a till's token, only its own session. Money is about to move: never an agent's call.
#[utoipa::path(post, path = "/v1/payments", operation_id = "requestPayment", tag = "payments",
    request_body = PaymentBody,
    responses((status = 201, description = "Recorded", body = PaymentView),
              (status = 200, description = "Recorded earlier with the same content", body = PaymentView),
              (status = 403, description = "Another session's till token", body = crate::error::ErrorEnvelope),
              (status = 409, description = "The paymentId was recorded with other content", body = crate::error::ErrorEnvelope),
              (status = 422, description = "The session is not open", body = crate::error::ErrorEnvelope)))]
async fn request_payment(
    caller: Authorized<ops::RequestPayment>,
    State(state): State<AppState>,
    Parsed(body): Parsed<PaymentBody>,
) -> Result<Written<PaymentView>, ApiError> {
    let request = AttemptRequest {
        payment_id: body.payment_id,
        session_id: body.session_id,
        amount: body.amount_cents,
        terminal_id: body.terminal_id,
        provider: body.provider,
    };
    let Recorded { attempt, created } = payments::request(state.app(), &caller.principal, request).await?;
    Ok(Written::new(created, attempt.into()))
}

/// Record what the terminal said about an attempt.
///
/// The same outcome sent again changes nothing; another outcome for a settled attempt is a
/// 409; an `unknown` attempt may be settled later. No field may hold a card number: a run of
/// twelve digits or more, however spaced, is a 400 naming the field.
#[utoipa::path(post, path = "/v1/payments/{paymentId}/outcome", operation_id = "recordPaymentOutcome", tag = "payments",
    params(("paymentId" = Text, Path)),
    request_body = OutcomeShape,
    responses((status = 200, description = "The attempt with its outcome", body = PaymentView),
              (status = 404, description = "No such attempt", body = crate::error::ErrorEnvelope),
              (status = 409, description = "The attempt was settled with another outcome", body = crate::error::ErrorEnvelope),
              (status = 422, description = "The approved amount does not fit the attempt", body = crate::error::ErrorEnvelope)))]
async fn record_outcome(
    caller: Authorized<ops::RecordPaymentOutcome>,
    State(state): State<AppState>,
    PathParams(PaymentPath(payment_id)): PathParams<PaymentPath>,
    Parsed(OutcomeBody(outcome)): Parsed<OutcomeBody>,
) -> Result<Json<PaymentView>, ApiError> {
    let attempt = payments::record_outcome(state.app(), &caller.principal, &payment_id, &outcome).await?;
    Ok(Json(attempt.into()))
}

/// Record that the terminal gave an approval back.
///
/// For an orphan (an approval no sale captured in time) or an approval the till dropped: the
/// customer's money is released. A captured, declined or refund attempt cannot be voided; a
/// void sent again changes nothing. Money moves: never an agent's call.
#[utoipa::path(post, path = "/v1/payments/{paymentId}/void", operation_id = "voidPayment", tag = "payments",
    params(("paymentId" = Text, Path)),
    responses((status = 200, description = "Voided", body = PaymentView),
              (status = 404, description = "No such attempt", body = crate::error::ErrorEnvelope),
              (status = 422, description = "The attempt cannot be voided (captured, declined, ...)", body = crate::error::ErrorEnvelope)))]
async fn void_payment(
    caller: Authorized<ops::VoidPayment>,
    State(state): State<AppState>,
    PathParams(PaymentPath(payment_id)): PathParams<PaymentPath>,
) -> Result<Json<PaymentView>, ApiError> {
    let attempt = payments::void(state.app(), &caller.principal, &payment_id).await?;
    Ok(Json(attempt.into()))
}

/// Read a payment attempt.
///
/// Its state, the terminal's outcome and, once captured, the sale that took it. Read-only;
/// safe to call at any time.
#[utoipa::path(get, path = "/v1/payments/{paymentId}", operation_id = "getPayment", tag = "payments",
    params(("paymentId" = Text, Path)),
    responses((status = 200, description = "The attempt", body = PaymentView),
              (status = 404, description = "No such attempt", body = crate::error::ErrorEnvelope)))]
async fn get_payment(
    caller: Authorized<ops::GetPayment>,
    State(state): State<AppState>,
    PathParams(PaymentPath(payment_id)): PathParams<PaymentPath>,
) -> Result<Json<PaymentView>, ApiError> {
    Ok(Json(
        payments::get(state.app(), &caller.principal, &payment_id).await?.into(),
    ))
}

/// The filters of `GET /v1/payments`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
struct PaymentQuery {
    /// Only this session's attempts.
    #[param(value_type = Option<Text>)]
    session_id: Option<SessionId>,
    /// Only the attempts in this state.
    #[param(value_type = Option<PaymentStateName>)]
    state: Option<PaymentState>,
}

struct PaymentList {
    filter: PaymentFilter,
    paging: Paging<PaymentId>,
}

impl FromParams for PaymentQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let session_id = params.optional("sessionId", SessionId::parse);
        let state = params.optional("state", |text| {
            PaymentState::parse(text).ok_or("must be a payment state")
        });
        Some(PaymentQuery {
            session_id: session_id?,
            state: state?,
        })
    }
}

impl FromParams for PaymentList {
    fn from_params(params: &Params) -> Option<Self> {
        let query = PaymentQuery::from_params(params);
        let page = PageQuery::read(params);
        let (PaymentQuery { session_id, state }, page) = (query?, page?);
        let scope = Scope::new("payments")
            .filter("sessionId", session_id.clone())
            .filter("state", state.map(PaymentState::as_str));
        Some(PaymentList {
            filter: PaymentFilter { session_id, state },
            paging: page.paging(params, scope)?,
        })
    }
}

type PaymentPage = Page<PaymentView>;

/// List payment attempts.
///
/// By id, of a session and in a state when given: the orphans to give back are
/// `state=orphaned`. With a till's token, its own session's. Read-only; safe to call at any
/// time.
#[utoipa::path(get, path = "/v1/payments", operation_id = "listPayments", tag = "payments",
    params(PaymentQuery, PageQuery),
    responses((status = 200, description = "A page of attempts", body = PaymentPage)))]
async fn list_payments(
    caller: Authorized<ops::ListPayments>,
    State(state): State<AppState>,
    QueryParams(list): QueryParams<PaymentList>,
) -> Result<Json<PaymentPage>, ApiError> {
    let found = payments::list(state.app(), &caller.principal, list.filter, &list.paging.window()).await?;
    Ok(Json(list.paging.page(
        found,
        |attempt| attempt.id.clone(),
        PaymentView::from,
    )))
}
