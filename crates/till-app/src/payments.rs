//! Card payments (docs/payments.md): the till records an attempt before it asks the terminal,
//! then the terminal's outcome; a sale captures an approved attempt in its own transaction
//! (`finalize`), a return refunds a captured one (`returns`). An approval no sale captured in
//! time becomes an orphan, swept on one node at a time.

use crate::app::App;
use crate::caller::Principal;
use crate::refusal::{Error, Refusal};
use crate::storage::StoreError;
use crate::storage::Window;
use jiff::Timestamp;
use till_core::grant::Grant;
use till_core::ids::SessionId;
use till_core::payment::{
    self, Attempt, AttemptRequest, Change, OrphanWindow, Outcome, OutcomeRefusal, PaymentId, VoidRefusal,
};

pub use crate::storage::payments::{PaymentChange, PaymentFilter};

/// Orphans the sweep turns per pass.
const SWEEP_BATCH: usize = 200;

/// Why a payment request was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PaymentRefusal {
    NoSuchPayment(PaymentId),
    /// The id was recorded before for another request (session, amount, terminal, provider).
    IdTaken(PaymentId),
    Outcome {
        payment: PaymentId,
        refusal: OutcomeRefusal,
    },
    Void {
        payment: PaymentId,
        refusal: VoidRefusal,
    },
    /// A till's token reaches its own session's attempts only.
    OfAnotherSession {
        token: SessionId,
        named: SessionId,
    },
    /// Neither a till's token nor the scope to finalize sales.
    NeedsScope,
    /// The session named is not known, or no longer open.
    SessionNotOpen(SessionId),
}

/// An attempt recorded now, or answered again for the same request.
pub struct Recorded {
    pub attempt: Attempt,
    pub created: bool,
}

/// Records a new attempt, `requested`, before the till asks the terminal.
pub async fn request(app: &App, caller: &Principal, request: AttemptRequest) -> Result<Recorded, Error> {
    may_reach(caller, &request.session_id)?;
    let now = app.now();
    match app.sessions().get_session(&request.session_id).await? {
        Some(session) if session.is_open_at(now) => {}
        _ => return Err(refused(PaymentRefusal::SessionNotOpen(request.session_id))),
    }
    let attempt = Attempt::requested(request.clone(), now);
    if app.payments().record_attempt(&attempt).await? {
        return Ok(Recorded { attempt, created: true });
    }
    let held = held(app, &attempt.id).await?;
    if held.was_requested_by(&request) {
        let again = Recorded {
            attempt: held,
            created: false,
        };
        Ok(app.answer_again(again).await?)
    } else {
        Err(refused(PaymentRefusal::IdTaken(attempt.id)))
    }
}

/// Records what the terminal said. The same outcome again changes nothing.
pub async fn record_outcome(
    app: &App,
    caller: &Principal,
    payment_id: &PaymentId,
    outcome: &Outcome,
) -> Result<Attempt, Error> {
    settle(app, caller, payment_id, |attempt, now| {
        payment::apply_outcome(attempt, outcome, now).map_err(|refusal| PaymentRefusal::Outcome {
            payment: payment_id.clone(),
            refusal,
        })
    })
    .await
}

/// Records that the terminal gave an approval back.
pub async fn void(app: &App, caller: &Principal, payment_id: &PaymentId) -> Result<Attempt, Error> {
    settle(app, caller, payment_id, |attempt, now| {
        payment::void(attempt, now).map_err(|refusal| PaymentRefusal::Void {
            payment: payment_id.clone(),
            refusal,
        })
    })
    .await
}

pub async fn get(app: &App, caller: &Principal, payment_id: &PaymentId) -> Result<Attempt, Error> {
    let attempt = held(app, payment_id).await?;
    may_read(caller, &attempt.session_id)?;
    Ok(attempt)
}

/// A till's token lists its own session's attempts only: without a session named, those.
pub async fn list(
    app: &App,
    caller: &Principal,
    mut filter: PaymentFilter,
    window: &Window<PaymentId>,
) -> Result<Vec<Attempt>, Error> {
    match (&filter.session_id, caller.session()) {
        (Some(named), _) => may_read(caller, named)?,
        (None, Some(till)) => filter.session_id = Some(till.session.session_id.clone()),
        (None, None) => may_act_as(caller, &[Grant::SalesFinalize, Grant::SalesRead])?,
    }
    Ok(app.payments().list_attempts(&filter, window).await?)
}

/// The orphan sweep's pass on this node: when its turn is free, turns every approval no sale
/// captured within the window into an orphan, announced in the feed. The orphans made.
pub async fn sweep_orphans(app: &App, holder: &str, window: OrphanWindow) -> Result<usize, Error> {
    let now = app.now();
    let turn = window.check_interval();
    let until = now.checked_add(turn).unwrap_or(Timestamp::MAX);
    if !app.payments().claim_orphan_sweep(holder, now, until).await? {
        return Ok(0);
    }
    let mut orphaned = 0;
    loop {
        let due = app.payments().awaiting_capture(window.cutoff(now), SWEEP_BATCH).await?;
        let count = due.len();
        for attempt in due {
            let Some(orphan) = payment::orphan(&attempt, now, window) else {
                continue;
            };
            // A sale that captured it meanwhile wins: the attempt moved, nothing is written.
            match app
                .payments()
                .replace_attempt(attempt.state, &orphan, PaymentChange::Orphaned)
                .await
            {
                Ok(()) => orphaned += 1,
                Err(StoreError::NotWritten) => {}
                Err(other) => return Err(other.into()),
            }
        }
        if count < SWEEP_BATCH {
            return Ok(orphaned);
        }
    }
}

/// Applies `decide` to the attempt held and writes its change guarded by the state it was
/// decided from; when another request moved the attempt first, decides again on what it left.
async fn settle(
    app: &App,
    caller: &Principal,
    payment_id: &PaymentId,
    decide: impl Fn(&Attempt, Timestamp) -> Result<Change, PaymentRefusal>,
) -> Result<Attempt, Error> {
    loop {
        let attempt = held(app, payment_id).await?;
        may_reach(caller, &attempt.session_id)?;
        let next = match decide(&attempt, app.now()).map_err(refused)? {
            Change::Unchanged => return Ok(app.answer_again(attempt).await?),
            Change::Changed(next) => *next,
        };
        match app
            .payments()
            .replace_attempt(attempt.state, &next, PaymentChange::Settled)
            .await
        {
            Ok(()) => return Ok(next),
            Err(StoreError::NotWritten) => continue,
            Err(other) => return Err(other.into()),
        }
    }
}

async fn held(app: &App, payment_id: &PaymentId) -> Result<Attempt, Error> {
    app.payments()
        .get_attempt(payment_id)
        .await?
        .ok_or_else(|| refused(PaymentRefusal::NoSuchPayment(payment_id.clone())))
}

/// A till's token reaches its own session's attempts; a back-office caller needs the scope to
/// finalize sales.
fn may_reach(caller: &Principal, session_id: &SessionId) -> Result<(), Error> {
    may_reach_with(caller, session_id, &[Grant::SalesFinalize])
}

/// As [`may_reach`], where reading sales is enough.
fn may_read(caller: &Principal, session_id: &SessionId) -> Result<(), Error> {
    may_reach_with(caller, session_id, &[Grant::SalesFinalize, Grant::SalesRead])
}

fn may_reach_with(caller: &Principal, session_id: &SessionId, grants: &[Grant]) -> Result<(), Error> {
    match caller.session() {
        Some(till) if till.session.session_id == *session_id => Ok(()),
        Some(till) => Err(refused(PaymentRefusal::OfAnotherSession {
            token: till.session.session_id.clone(),
            named: session_id.clone(),
        })),
        None => may_act_as(caller, grants),
    }
}

/// A back-office caller holding any of `grants`.
fn may_act_as(caller: &Principal, grants: &[Grant]) -> Result<(), Error> {
    if grants.iter().any(|grant| caller.has(*grant)) {
        Ok(())
    } else {
        Err(refused(PaymentRefusal::NeedsScope))
    }
}

fn refused(refusal: PaymentRefusal) -> Error {
    Refusal::Payment(refusal).into()
}
