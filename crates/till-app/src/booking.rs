//! What finalize and returns share: the session a ticket is booked on, the register whose
//! chain seals it, and idempotency by transaction id (a replay, or a refusal for other content).

use crate::app::App;
use crate::caller::Principal;
use crate::refusal::{Error, Refusal};
use crate::storage::sales::SaleOutcome;
use crate::storage::sessions::SessionRecord;
use jiff::Timestamp;
use till_core::ids::{RegisterId, SessionId, StoreId, TransactionId};

/// A committed ticket's answer: the stored 201 body, and whether it is a replay of a commit
/// made before with the same content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Booked {
    pub body: String,
    pub replayed: bool,
}

/// How a ticket is booked on its session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timing {
    /// In the session, which is open: counted in its report.
    InSession,
    /// After the session was closed, from a till that was offline: sealed at its arrival, kept
    /// out of the session's sealed report and shown apart (docs/drawer.md).
    Late,
}

/// Where a session's state is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Freshness {
    /// A till's session as its token was resolved, which a node may have cached for a moment.
    AsResolved,
    /// From the database: the commit found the session closed meanwhile.
    Stored,
}

/// The session a ticket is booked against, checked against the store network and the caller,
/// and whether the ticket is booked in it or late.
///
/// A till's token reaches its own session and, for late sales, the closed sessions of its own
/// register: a till that stayed offline past its session's end sends its queue with the token
/// of the session it opened next.
pub(crate) async fn booking_session(
    app: &App,
    caller: &Principal,
    store_id: &StoreId,
    session_id: &SessionId,
    now: Timestamp,
    freshness: Freshness,
) -> Result<(SessionRecord, Timing), Error> {
    if app.people().store_in_network(store_id).await? == Some(false) {
        return Err(Refusal::StoreNotInNetwork.into());
    }
    let own = caller.session().map(|own| &own.session);
    let session = match own {
        // A till's token was resolved to its session in this very request: no second read.
        Some(own) if own.session_id == *session_id && freshness == Freshness::AsResolved => own.clone(),
        _ => app
            .sessions()
            .get_session(session_id)
            .await?
            .ok_or_else(|| Refusal::SessionUnknown(session_id.clone()))?,
    };
    if let Some(own) = own
        && own.session_id != session.session_id
        && (own.register_id != session.register_id || session.closed_at.is_none())
    {
        return Err(Refusal::TokenOfAnotherSession {
            token: own.session_id.clone(),
            named: session_id.clone(),
        }
        .into());
    }
    if session.store_id != *store_id {
        return Err(Refusal::SessionInOtherStore {
            session: session.session_id,
            store: session.store_id,
            named: store_id.clone(),
        }
        .into());
    }
    let timing = match session.closed_at {
        Some(_) => Timing::Late,
        // Ended without a close: its report is not sealed yet, and nothing more is booked in it.
        None if now >= session.expires_at => return Err(Refusal::SessionClosed(session.session_id).into()),
        None => Timing::InSession,
    };
    Ok((session, timing))
}

/// A ticket that only a till at its open session books (a return against a receipt): a closed
/// session is refused.
pub(crate) fn in_session((session, timing): (SessionRecord, Timing)) -> Result<SessionRecord, Refusal> {
    match timing {
        Timing::InSession => Ok(session),
        Timing::Late => Err(Refusal::SessionClosed(session.session_id)),
    }
}

/// The register whose chain seals the ticket: the request's, which must be the session's.
pub(crate) fn register_of(named: Option<&RegisterId>, session: &SessionRecord) -> Result<RegisterId, Refusal> {
    match named {
        Some(register) if *register != session.register_id => Err(Refusal::RegisterNotSessions {
            named: register.clone(),
            session: session.session_id.clone(),
            register: session.register_id.clone(),
        }),
        _ => Ok(session.register_id.clone()),
    }
}

/// A refusal may be the shadow of a twin request with the same transaction id: committed
/// before (the session has closed since, the price changed, the approval was spent) or while
/// this one was being checked (it spent the grant, the coupon's last redemption, the units to
/// return). The twin's stored answer is this request's answer too.
pub(crate) async fn unless_twin_committed(
    app: &App,
    transaction_id: &TransactionId,
    fingerprint: &str,
    outcome: Result<Booked, Error>,
) -> Result<Booked, Error> {
    match outcome {
        Err(refusal) if refusal.may_hide_a_twin() => match app.sales_book().find_sale(transaction_id).await? {
            Some(stored) => replay(app, stored, fingerprint).await,
            None => Err(refusal),
        },
        other => other,
    }
}

/// The answer to a commit: the new ticket, or, when a concurrent request with the same
/// transaction id got there first, its replay (or a refusal if its content differs).
pub(crate) async fn answer(app: &App, outcome: SaleOutcome, fingerprint: &str) -> Result<Booked, Error> {
    match outcome {
        SaleOutcome::Committed { response, .. } => Ok(Booked {
            body: response,
            replayed: false,
        }),
        SaleOutcome::Existing {
            fingerprint: stored,
            response,
        } => replay(app, (stored, response), fingerprint).await,
    }
}

/// The stored answer to a transaction id seen before: the same body if the content matches,
/// once the commit that stored it is durable.
pub(crate) async fn replay(
    app: &App,
    (stored_fingerprint, response): (String, String),
    fingerprint: &str,
) -> Result<Booked, Error> {
    if stored_fingerprint == fingerprint {
        let replayed = Booked {
            body: response,
            replayed: true,
        };
        Ok(app.answer_again(replayed).await?)
    } else {
        Err(Refusal::DifferentContent.into())
    }
}
