//! Register sessions and their cash drawers: opening, closing, the principal a session token
//! stands for, and the drawer's movements.

use super::people::StaffRecord;
use super::*;
use jiff::Timestamp;
use till_core::documents::{CashMoved, EventSeal, XReport};
use till_core::drawer::{Count, MovementKind};
use till_core::ids::{MovementId, NewIdError, RegisterId, SessionId, StoreId, Subject};
use till_core::money::Cents;

/// Why a session could not be opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenRefusal {
    /// The network has stores and this is not one of them.
    UnknownStore,
    /// The register was first opened in another store and stays there.
    RegisterInOtherStore(StoreId),
    /// The register already has an open session.
    AlreadyOpen(SessionId),
    /// A register opened for the first time with an id that cannot name a new one.
    NewRegisterId(NewIdError),
    /// The register's current `day` was closed early, through `through`: nothing can be sold
    /// on it until that period is over.
    DayClosed { day: String, through: String },
}

pub struct OpenSession {
    pub session_id: SessionId,
    pub token_hash: Vec<u8>,
    pub store_id: StoreId,
    pub register_id: RegisterId,
    pub cashier_subject: Subject,
    pub opening_float: Cents,
    pub opened_at: Timestamp,
    pub expires_at: Timestamp,
}

/// A session token resolved: the session and the cashier behind it, as stored now.
#[derive(Clone, Debug)]
pub struct SessionPrincipal {
    pub session: SessionRecord,
    pub cashier: StaffRecord,
}

#[derive(Clone, Debug)]
pub struct SessionRecord {
    pub session_id: SessionId,
    pub store_id: StoreId,
    pub register_id: RegisterId,
    pub cashier_subject: Subject,
    pub opening_float: Cents,
    pub opened_at: Timestamp,
    pub expires_at: Timestamp,
    pub closed_at: Option<Timestamp>,
    /// The Z report recorded at close, as JSON.
    pub z_report: Option<serde_json::Value>,
}

impl SessionRecord {
    pub fn is_open_at(&self, now: Timestamp) -> bool {
        self.closed_at.is_none() && now < self.expires_at
    }
}

/// How the close of a session went.
#[derive(Clone, Debug)]
pub enum CloseOutcome {
    Closed(SessionRecord),
    /// Closed earlier: the stored report is returned again.
    AlreadyClosed(SessionRecord),
}

/// Which sessions a list answers; every filter given must hold.
#[derive(Clone, Debug, Default)]
pub struct SessionFilter {
    pub store_id: Option<StoreId>,
    pub register_id: Option<RegisterId>,
    /// Only sessions open (true) or closed or expired (false) at the list's instant, as
    /// [`SessionRecord::is_open_at`] tells.
    pub open: Option<bool>,
}

/// How a movement went.
#[derive(Clone, Debug)]
pub enum MovementOutcome {
    Recorded(MovementRecord),
    /// Recorded earlier with the same content: answered again.
    Replayed(MovementRecord),
    /// Its id was used for another movement.
    IdTaken(MovementRecord),
    NoSuchSession,
    /// The session is closed or expired: its drawer's count is over.
    SessionNotOpen(SessionRecord),
}

/// A movement as a till or the back office sends it, checked.
#[derive(Clone, Debug)]
pub struct NewMovement {
    pub movement_id: MovementId,
    pub session_id: SessionId,
    pub kind: MovementKind,
    pub amount: Cents,
    pub reason: Option<String>,
    pub recorded_by: Subject,
    pub at: Timestamp,
}

/// A movement as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MovementRecord {
    pub movement_id: MovementId,
    pub session_id: SessionId,
    pub store_id: StoreId,
    pub register_id: RegisterId,
    pub kind: MovementKind,
    pub amount: Cents,
    pub reason: Option<String>,
    pub recorded_by: Subject,
    pub occurred_at: Timestamp,
    /// Its entry in the register's chain of technical events.
    pub event_seq: i64,
}

impl MovementRecord {
    /// Whether `new` asks for this movement again: the same session, kind, amount and reason.
    pub fn is_asked_again_by(&self, new: &NewMovement) -> bool {
        self.session_id == new.session_id
            && self.kind == new.kind
            && self.amount == new.amount
            && self.reason == new.reason
    }
}

/// A movement as the API answers it and the feed's `cash.moved` carries it.
pub fn cash_moved(record: &MovementRecord) -> CashMoved<'_> {
    CashMoved {
        movement_id: &record.movement_id,
        session_id: &record.session_id,
        store_id: &record.store_id,
        register_id: &record.register_id,
        kind: record.kind.as_str(),
        amount_cents: record.amount,
        reason: record.reason.as_deref(),
        recorded_by: &record.recorded_by,
        occurred_at: record.occurred_at,
        fiscal: EventSeal::at(record.event_seq),
    }
}

/// Register sessions and their cash drawers.
#[async_trait::async_trait]
pub trait Sessions: Send + Sync {
    async fn open_session(&self, open: OpenSession) -> Result<Result<SessionRecord, OpenRefusal>, StoreError>;
    /// Closes the session with its Z report, sealing what the cashier `counted` (nothing for a
    /// close without counts); a session closed earlier is answered with its stored report.
    async fn close_session(
        &self,
        session_id: SessionId,
        now: Timestamp,
        counted: Vec<Count>,
    ) -> Result<CloseOutcome, StoreError>;
    async fn get_session(&self, session_id: &SessionId) -> Result<Option<SessionRecord>, StoreError>;
    /// The sessions `filter` admits at `now`, newest opened first, in `window`.
    async fn list_sessions(
        &self,
        filter: &SessionFilter,
        now: Timestamp,
        window: &Window<Newest<SessionId>>,
    ) -> Result<Vec<SessionRecord>, StoreError>;
    /// The session behind a token hash with its cashier, whatever its state; the caller
    /// decides what an expired or closed session may still do. As read at most the session
    /// cache's time to live ago (see [`super::kept`]).
    async fn session_by_token(&self, token_hash: &[u8]) -> Result<Option<SessionPrincipal>, StoreError>;
    /// Records a movement of the session's drawer, sealed as a technical event of its register
    /// and put in the feed; a movement id seen before is answered from what it recorded.
    async fn record_cash_movement(&self, movement: NewMovement) -> Result<MovementOutcome, StoreError>;
    /// The X report of a session as it stands at `at`, with the session as read.
    async fn x_report(
        &self,
        session_id: &SessionId,
        at: Timestamp,
    ) -> Result<Option<(SessionRecord, XReport)>, StoreError>;
}
