//! Cash movements of an open session: money put into or taken out of the drawer, and the drawer
//! opened without a sale.

use super::SessionPath;
use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{Parsed, PathParams};
use crate::fields::{FromBody, Obj};
use crate::openapi::{Text, words};
use crate::ops;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use till_app::drawer::{Moved, MovementRequest, cash_moved, move_cash};
use till_core::documents::CashMoved;
use till_core::drawer::{AmountProblem, MovementKind, check_amount};
use till_core::ids::MovementId;
use till_core::money::Cents;

/// Body of `POST /v1/register-sessions/{sessionId}/cash-movements`: money moved (an amount
/// above 0), or the drawer opened without a sale (an amount of 0).
#[derive(utoipa::ToSchema)]
#[serde(untagged)]
pub(super) enum CashMovementBody {
    Money(MoneyMovementBody),
    NoSale(NoSaleBody),
}

/// Money put in or taken out of the drawer.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct MoneyMovementBody {
    /// The till's id for the movement: sent again with the same content, the movement is
    /// answered again; with other content, 409.
    #[schema(value_type = Text)]
    movement_id: MovementId,
    #[schema(schema_with = money_kinds)]
    kind: MovementKind,
    #[schema(value_type = i64, minimum = 1, maximum = 9007199254740991_i64)]
    amount_cents: Cents,
    /// Why, for the person reading the journal.
    #[schema(value_type = Option<Text>)]
    reason: Option<String>,
}

fn money_kinds() -> utoipa::openapi::schema::Schema {
    words(
        MovementKind::ALL
            .iter()
            .filter(|kind| kind.moves_money())
            .map(|kind| kind.as_str()),
        "`paid_in` (money put in), `paid_out` (money taken out to pay for something), `drop`\n(takings taken to the safe).",
    )
}

/// The drawer opened without a sale: nothing moved.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct NoSaleBody {
    /// As for money moved.
    #[schema(value_type = Text)]
    movement_id: MovementId,
    #[schema(schema_with = no_sale_kind)]
    kind: MovementKind,
    #[schema(value_type = i64, minimum = 0, maximum = 0)]
    amount_cents: Cents,
    /// Why, for the person reading the journal.
    #[schema(value_type = Option<Text>)]
    reason: Option<String>,
}

fn no_sale_kind() -> utoipa::openapi::schema::Schema {
    words([MovementKind::NoSale.as_str()], "`no_sale`.")
}

impl FromBody for CashMovementBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let kinds: Vec<(&str, MovementKind)> = MovementKind::ALL.iter().map(|k| (k.as_str(), *k)).collect();
        let movement_id = root.required("movementId", |f| f.parse_text(MovementId::parse));
        let kind = root.required("kind", |f| f.one_of(&kinds));
        let amount = root.required("amountCents", |f| f.cents());
        let reason = root.optional("reason", |f| f.text());
        let (kind, amount) = (kind?, amount?);
        match check_amount(kind, amount) {
            Ok(()) => {}
            Err(AmountProblem::MustBePositive) => return root.fail("amountCents", "must be more than 0"),
            Err(AmountProblem::NoSaleMovesNothing) => return root.fail("amountCents", "must be 0 for no_sale"),
        }
        let (movement_id, reason) = (movement_id?, reason?);
        Some(if kind.moves_money() {
            CashMovementBody::Money(MoneyMovementBody {
                movement_id,
                kind,
                amount_cents: amount,
                reason,
            })
        } else {
            CashMovementBody::NoSale(NoSaleBody {
                movement_id,
                kind,
                amount_cents: amount,
                reason,
            })
        })
    }
}

impl From<CashMovementBody> for MovementRequest {
    fn from(body: CashMovementBody) -> MovementRequest {
        let (movement_id, kind, amount, reason) = match body {
            CashMovementBody::Money(b) => (b.movement_id, b.kind, b.amount_cents, b.reason),
            CashMovementBody::NoSale(b) => (b.movement_id, b.kind, b.amount_cents, b.reason),
        };
        MovementRequest {
            movement_id,
            kind,
            amount,
            reason,
        }
    }
}

/// Record money put in or taken out of a register's drawer, or the drawer opened without a sale.
///
/// Sealed as a technical event of the register and counted in the shift's expected cash. Sent
/// again with the same `movementId` and content, the movement is answered again (200) and
/// recorded once. With a till's token, only its own session's drawer. Money moves: a person
/// does this, never an agent.
#[utoipa::path(post, path = "/v1/register-sessions/{sessionId}/cash-movements", operation_id = "recordCashMovement", tag = "sessions",
    params(("sessionId" = Text, Path)),
    request_body = CashMovementBody,
    responses((status = 201, description = "Recorded", body = CashMoved),
              (status = 200, description = "Recorded earlier with the same content", body = CashMoved),
              (status = 403, description = "Another session's till token, or a caller without pos.sessions.close", body = crate::error::ErrorEnvelope),
              (status = 404, description = "No such session", body = crate::error::ErrorEnvelope),
              (status = 409, description = "The movementId was recorded with other content", body = crate::error::ErrorEnvelope),
              (status = 422, description = "The session is closed or expired", body = crate::error::ErrorEnvelope)))]
pub(super) async fn record_cash_movement(
    caller: Authorized<ops::RecordCashMovement>,
    State(state): State<AppState>,
    PathParams(SessionPath(id)): PathParams<SessionPath>,
    Parsed(body): Parsed<CashMovementBody>,
) -> Result<Response, ApiError> {
    let Moved { record, replayed } = move_cash(state.app(), &caller.principal, id, body.into()).await?;
    let status = if replayed { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, Json(cash_moved(&record))).into_response())
}
