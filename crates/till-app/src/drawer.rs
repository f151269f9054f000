//! The cash drawer of a register session: movements of money besides sales, and the X report
//! of the shift while it runs (docs/drawer.md). The close with counts is
//! [`crate::sessions::close`].

use crate::app::App;
use crate::caller::Principal;
use crate::refusal::{Error, Refusal};
use crate::storage::sessions::MovementOutcome;
use crate::storage::sessions::NewMovement;
use till_core::documents::XReport;
use till_core::drawer::MovementKind;
use till_core::grant::Grant;
use till_core::ids::{MovementId, SessionId};
use till_core::money::Cents;

pub use crate::storage::sessions::{MovementRecord, cash_moved};

/// A movement as a till or the back office asks for it, parsed (its amount fits its kind).
pub struct MovementRequest {
    pub movement_id: MovementId,
    pub kind: MovementKind,
    pub amount: Cents,
    pub reason: Option<String>,
}

/// A movement recorded now, or answered again from an earlier request with the same content.
pub struct Moved {
    pub record: MovementRecord,
    pub replayed: bool,
}

/// Records a movement of `session_id`'s drawer, sealed as a technical event of its register.
pub async fn move_cash(
    app: &App,
    caller: &Principal,
    session_id: SessionId,
    request: MovementRequest,
) -> Result<Moved, Error> {
    may_reach_drawer(caller, &session_id)?;
    let outcome = app
        .sessions()
        .record_cash_movement(NewMovement {
            movement_id: request.movement_id,
            session_id: session_id.clone(),
            kind: request.kind,
            amount: request.amount,
            reason: request.reason,
            recorded_by: caller.subject.clone(),
            at: app.now(),
        })
        .await?;
    match outcome {
        MovementOutcome::Recorded(record) => Ok(Moved {
            record,
            replayed: false,
        }),
        MovementOutcome::Replayed(record) => Ok(app.answer_again(Moved { record, replayed: true }).await?),
        MovementOutcome::IdTaken(record) => Err(Refusal::MovementIdTaken(record.movement_id).into()),
        MovementOutcome::NoSuchSession => Err(Refusal::NoSuchSession(session_id).into()),
        MovementOutcome::SessionNotOpen(session) => Err(Refusal::DrawerClosed(session.session_id).into()),
    }
}

/// The X report of an open session: what its Z report would say if it closed now, uncounted.
pub async fn x_report(app: &App, caller: &Principal, session_id: SessionId) -> Result<XReport, Error> {
    may_reach_drawer(caller, &session_id)?;
    let now = app.now();
    let Some((session, report)) = app.sessions().x_report(&session_id, now).await? else {
        return Err(Refusal::NoSuchSession(session_id).into());
    };
    if !session.is_open_at(now) {
        return Err(Refusal::DrawerClosed(session_id).into());
    }
    Ok(report)
}

/// A till's token reaches its own session's drawer; a back-office caller needs the scope to
/// manage sessions.
fn may_reach_drawer(caller: &Principal, session_id: &SessionId) -> Result<(), Refusal> {
    match caller.session() {
        Some(till) if till.session.session_id == *session_id => Ok(()),
        Some(till) => Err(Refusal::DrawerOfAnotherSession {
            token: till.session.session_id.clone(),
            named: session_id.clone(),
        }),
        None if caller.has(Grant::SessionsClose) => Ok(()),
        None => Err(Refusal::DrawerNeedsScope),
    }
}
