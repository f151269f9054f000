//! Gift cards and credit notes: `POST /v1/gift-cards`, `GET /v1/gift-cards/{code}`, its
//! `block` and `unblock`, and `GET /v1/credit-notes/{code}`. Their balances are spent as
//! tenders of a sale (see finalize); these read them with their ledger and manage cards.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, Parsed, PathParams};
use crate::fields::{FromBody, Obj};
use crate::openapi::{Instant, InstrumentCodeText, Text, UtcInstant, words};
use crate::ops;
use crate::routes::Written;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use jiff::Timestamp;
use serde::Serialize;
use till_app::secret::new_instrument_code;
use till_app::stored_value::{self, Activity, InstrumentRecord, NewCard};
use till_core::ids::{StoreId, TextError, check_text};
use till_core::instant::{Zone, format_utc};
use till_core::money::Cents;
use till_core::stored_value::{ActivityKind, InstrumentCode, InstrumentState, NotACode};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(issue_gift_card))
        .routes(routes!(get_gift_card))
        .routes(routes!(block_gift_card))
        .routes(routes!(unblock_gift_card))
        .routes(routes!(get_credit_note))
}

/// Body of `POST /v1/gift-cards`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct NewGiftCardBody {
    /// The code printed on the card (a chain's own numeric or dashed codes fit); drawn by till
    /// when absent.
    #[schema(value_type = Option<InstrumentCodeText>)]
    code: Option<InstrumentCode>,
    #[schema(value_type = i64, minimum = 1, maximum = 9007199254740991_i64)]
    balance_cents: Cents,
    #[schema(value_type = Option<Instant>)]
    expires_at: Option<Timestamp>,
    /// The stores that may take it; every store when absent.
    #[schema(value_type = Option<Vec<Text>>)]
    store_ids: Option<Vec<StoreId>>,
}

impl FromBody for NewGiftCardBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let code = root.optional("code", |f| {
            f.string_as(&NotACode.to_string(), |text| InstrumentCode::parse(text).ok())
        });
        let balance_cents = root.required("balanceCents", |f| f.positive_cents());
        let expires_at = root.optional("expiresAt", |f| f.instant(Zone::UtcOrOffset));
        let store_ids = root.optional("storeIds", |f| f.array(|f| f.parse_text(StoreId::parse)));
        Some(NewGiftCardBody {
            code: code?,
            balance_cents: balance_cents?,
            expires_at: expires_at?,
            store_ids: store_ids?,
        })
    }
}

impl NewGiftCardBody {
    /// The card to issue at `now`, its code drawn when the body named none.
    fn card(self, now: Timestamp) -> NewCard {
        NewCard {
            code: self.code.unwrap_or_else(new_instrument_code),
            balance: self.balance_cents,
            expires_at: self.expires_at,
            store_ids: self.store_ids.unwrap_or_default(),
            now,
        }
    }
}

/// A gift card with the ledger of its activities.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GiftCardView {
    /// In capitals: codes are compared without case.
    code: String,
    #[serde(flatten)]
    #[schema(inline)]
    held: HeldView,
}

/// A credit note (avoir) with the ledger of its activities.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreditNoteView {
    /// The code that redeems it, in capitals.
    code: String,
    /// Its fiscal number, `AV-{registerId}-{sequence}`, the return's; it redeems nothing.
    number: String,
    #[serde(flatten)]
    #[schema(inline)]
    held: HeldView,
}

/// What a gift card and a credit note share.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeldView {
    balance_cents: i64,
    #[schema(schema_with = state_schema)]
    state: &'static str,
    #[schema(value_type = Option<UtcInstant>, required = true)]
    expires_at: Option<String>,
    #[schema(value_type = UtcInstant)]
    issued_at: String,
    /// Oldest first; their `amountCents` add up to `balanceCents`.
    activities: Vec<ActivityView>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActivityView {
    id: i64,
    #[schema(schema_with = activity_kind_schema)]
    kind: &'static str,
    /// Negative when it took from the balance.
    amount_cents: i64,
    balance_after_cents: i64,
    /// The sale or return that moved the balance; null for a move outside a sale.
    #[schema(value_type = Option<Text>, required = true)]
    transaction_id: Option<String>,
    #[schema(value_type = UtcInstant)]
    at: String,
}

fn state_schema() -> utoipa::openapi::schema::Schema {
    words(
        InstrumentState::ALL.iter().map(|state| state.as_str()),
        "What stops a redemption first: blocked, then expired, then exhausted.",
    )
}

fn activity_kind_schema() -> utoipa::openapi::schema::Schema {
    words(
        ActivityKind::ALL.iter().map(|kind| kind.as_str()),
        "What the activity did.",
    )
}

impl HeldView {
    fn of(record: InstrumentRecord, now: Timestamp) -> HeldView {
        HeldView {
            balance_cents: record.balance.get(),
            state: InstrumentState::at(record.balance, record.expires_at, record.blocked, now).as_str(),
            expires_at: record.expires_at.map(format_utc),
            issued_at: format_utc(record.issued_at),
            activities: record.activities.into_iter().map(ActivityView::from).collect(),
        }
    }
}

impl From<Activity> for ActivityView {
    fn from(activity: Activity) -> Self {
        ActivityView {
            id: activity.id,
            kind: activity.kind.as_str(),
            amount_cents: activity.amount,
            balance_after_cents: activity.balance_after,
            transaction_id: activity.transaction_id,
            at: format_utc(activity.at),
        }
    }
}

/// `{code}` of the gift card routes: a code's shape, else a 400 on `code`.
struct CardPath(InstrumentCode);

impl FromParams for CardPath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("code", InstrumentCode::parse).map(CardPath)
    }
}

/// `{code}` of a credit note: any text, so that a fiscal number, or anything else that is not
/// a credit note's code, is answered as an unknown code is.
struct NotePath(String);

impl FromParams for NotePath {
    fn from_params(params: &Params) -> Option<Self> {
        params
            .required("code", |text: &str| -> Result<String, TextError> {
                check_text(text).map(|()| text.to_owned())
            })
            .map(NotePath)
    }
}

fn no_such_card() -> ApiError {
    ApiError::NotFound("No gift card with this code.".into())
}

/// Issue a gift card without a sale.
///
/// A promotional or replacement card, its balance given rather than paid at a till (a card
/// sold at a till is activated by a cart line with `giftCard`). Back-office. Tier `avoid`: a
/// balance is spent like money, so an automated agent must never issue one.
#[utoipa::path(post, path = "/v1/gift-cards", operation_id = "issueGiftCard", tag = "stored-value",
    request_body = NewGiftCardBody,
    responses((status = 201, description = "Issued", body = GiftCardView),
              (status = 409, description = "A card with this code exists", body = crate::error::ErrorEnvelope)))]
async fn issue_gift_card(
    _caller: Authorized<ops::IssueGiftCard>,
    State(state): State<AppState>,
    Parsed(body): Parsed<NewGiftCardBody>,
) -> Result<Written<GiftCardView>, ApiError> {
    let now = state.now();
    let card = body.card(now);
    let code = card.code.as_str().to_owned();
    let record = stored_value::issue_gift_card(state.app(), card).await?;
    Ok(Written::new(
        true,
        GiftCardView {
            code,
            held: HeldView::of(record, now),
        },
    ))
}

/// Read a gift card: its balance, state and ledger.
///
/// Read-only; safe to call at any time. An unknown code and a card this till's store may not take answer alike.
#[utoipa::path(get, path = "/v1/gift-cards/{code}", operation_id = "getGiftCard", tag = "stored-value",
    params(("code" = InstrumentCodeText, Path)),
    responses((status = 200, description = "The card", body = GiftCardView),
              (status = 404, description = "No such card", body = crate::error::ErrorEnvelope)))]
async fn get_gift_card(
    caller: Authorized<ops::GetGiftCard>,
    State(state): State<AppState>,
    PathParams(CardPath(code)): PathParams<CardPath>,
) -> Result<Json<GiftCardView>, ApiError> {
    let record = stored_value::gift_card(state.app(), &caller.principal, &code)
        .await?
        .ok_or_else(no_such_card)?;
    Ok(Json(GiftCardView {
        code: code.as_str().to_owned(),
        held: HeldView::of(record, state.now()),
    }))
}

/// Block a gift card: no sale may spend or load it until it is unblocked.
///
/// A lost or stolen card. A person should confirm.
#[utoipa::path(post, path = "/v1/gift-cards/{code}/block", operation_id = "blockGiftCard", tag = "stored-value",
    params(("code" = InstrumentCodeText, Path)),
    responses((status = 204, description = "Blocked"),
              (status = 404, description = "No such card", body = crate::error::ErrorEnvelope)))]
async fn block_gift_card(
    _caller: Authorized<ops::BlockGiftCard>,
    State(state): State<AppState>,
    PathParams(CardPath(code)): PathParams<CardPath>,
) -> Result<StatusCode, ApiError> {
    set_blocked(&state, &code, true).await
}

/// Unblock a gift card.
///
/// The card may be spent and loaded again. A person should confirm.
#[utoipa::path(post, path = "/v1/gift-cards/{code}/unblock", operation_id = "unblockGiftCard", tag = "stored-value",
    params(("code" = InstrumentCodeText, Path)),
    responses((status = 204, description = "Unblocked"),
              (status = 404, description = "No such card", body = crate::error::ErrorEnvelope)))]
async fn unblock_gift_card(
    _caller: Authorized<ops::UnblockGiftCard>,
    State(state): State<AppState>,
    PathParams(CardPath(code)): PathParams<CardPath>,
) -> Result<StatusCode, ApiError> {
    set_blocked(&state, &code, false).await
}

async fn set_blocked(state: &AppState, code: &InstrumentCode, blocked: bool) -> Result<StatusCode, ApiError> {
    if stored_value::set_blocked(state.app(), code, blocked).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(no_such_card())
    }
}

/// Read a credit note (avoir) a return issued, by its code: its balance, state and ledger.
///
/// Read-only; safe to call at any time. A credit note is spent as a `credit_note` tender
/// whose `reference` is its code. Its fiscal number, a wrong code and a credit note this
/// till's store may not take all answer 404 alike.
#[utoipa::path(get, path = "/v1/credit-notes/{code}", operation_id = "getCreditNote", tag = "stored-value",
    params(("code" = Text, Path, description = "The code printed on the return's receipt, compared without case")),
    responses((status = 200, description = "The credit note", body = CreditNoteView),
              (status = 404, description = "No such credit note", body = crate::error::ErrorEnvelope)))]
async fn get_credit_note(
    caller: Authorized<ops::GetCreditNote>,
    State(state): State<AppState>,
    PathParams(NotePath(code)): PathParams<NotePath>,
) -> Result<Json<CreditNoteView>, ApiError> {
    let record = stored_value::credit_note(state.app(), &caller.principal, &code)
        .await?
        .ok_or_else(|| ApiError::NotFound("No credit note with this code.".into()))?;
    Ok(Json(CreditNoteView {
        code: code.to_ascii_uppercase(),
        number: record.label.clone(),
        held: HeldView::of(record, state.now()),
    }))
}
