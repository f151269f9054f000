//! Register sessions: a cashier's shift on a till, opened with their PIN (which mints the
//! till's bearer token) and closed with its Z report; found again by that token, and read back.

use crate::app::App;
use crate::caller::Principal;
use crate::pin::{PinCheck, check_pin};
use crate::refusal::{Error, PinHolder, Refusal};
use crate::secret::{SESSION_TOKEN_PREFIX, new_id, new_token, token_hash};
use crate::storage::Newest;
use crate::storage::Window;
use crate::storage::sessions::CloseOutcome;
use crate::storage::sessions::OpenSession;
use jiff::Timestamp;
use till_core::drawer::Count;
use till_core::grant::{Grant, GrantSet};
use till_core::ids::{RegisterId, SessionId, StoreId, Subject};
use till_core::money::Cents;

pub use crate::storage::sessions::OpenRefusal;
pub use crate::storage::sessions::SessionFilter;
pub use crate::storage::sessions::SessionPrincipal;
pub use crate::storage::sessions::SessionRecord;

/// A request to open a session, parsed.
pub struct OpenRequest {
    pub store_id: StoreId,
    pub register_id: RegisterId,
    pub cashier: Subject,
    /// Any text: it is checked against the cashier's PIN hash, never for its shape.
    pub pin: String,
    pub opening_float: Cents,
}

/// A session opened: the till's token is shown once, only its hash is kept.
pub struct Opened {
    pub record: SessionRecord,
    pub token: String,
    /// What the token may do: the cashier's scopes and permissions.
    pub grants: GrantSet,
}

/// Opens a session for a cashier present at the till. One open session per till at a time.
pub async fn open(app: &App, request: OpenRequest) -> Result<Opened, Error> {
    if app.people().store_in_network(&request.store_id).await? == Some(false) {
        return Err(Refusal::StoreNotInNetwork.into());
    }
    let staff = match check_pin(app, &request.cashier, &request.register_id, &request.pin, app.now()).await? {
        PinCheck::Matched(staff) => staff,
        PinCheck::LockedOut { retry_after } => {
            let holder = PinHolder::Cashier;
            return Err(Refusal::LockedOut { holder, retry_after }.into());
        }
        PinCheck::Wrong { .. } => return Err(Refusal::WrongPin(PinHolder::Cashier).into()),
    };
    let grants = staff.member.grants();
    if !grants.contains(Grant::SalesFinalize) {
        return Err(Refusal::MayNotWorkTill(staff.subject).into());
    }
    let token = new_token(SESSION_TOKEN_PREFIX);
    let now = app.now();
    let expires_at = now.checked_add(app.settings().session_ttl).map_err(Error::internal)?;
    let opened = app
        .sessions()
        .open_session(OpenSession {
            session_id: SessionId::from_trusted(new_id("ses")),
            token_hash: token_hash(&token),
            store_id: request.store_id,
            register_id: request.register_id,
            cashier_subject: request.cashier,
            opening_float: request.opening_float,
            opened_at: now,
            expires_at,
        })
        .await?;
    let record = opened.map_err(Refusal::Open)?;
    Ok(Opened { record, token, grants })
}

/// Closes a session (or finds it closed) and answers its Z report, with what the cashier
/// `counted` per tender method compared with what was expected and sealed with it. A session
/// closed earlier answers its report as sealed then, whatever is counted now.
pub async fn close(app: &App, session_id: SessionId, counted: Vec<Count>) -> Result<serde_json::Value, Error> {
    let record = match app.sessions().close_session(session_id, app.now(), counted).await? {
        CloseOutcome::Closed(record) => record,
        CloseOutcome::AlreadyClosed(record) => app.answer_again(record).await?,
    };
    record
        .z_report
        .ok_or_else(|| Error::internal(std::io::Error::other("closed session without a Z report")))
}

/// The session a till's bearer token names, with its cashier, whatever its state: whether a
/// closed or expired session's token still authenticates is the caller's to decide.
pub async fn of_token(app: &App, token: &str) -> Result<Option<SessionPrincipal>, Error> {
    Ok(app.sessions().session_by_token(&token_hash(token)).await?)
}

/// The session `session_id`, if the caller reads its store's sessions.
pub async fn session(app: &App, caller: &Principal, session_id: &SessionId) -> Result<Option<SessionRecord>, Error> {
    let record = app.sessions().get_session(session_id).await?;
    Ok(record.filter(|record| caller.reads_store(record.store_id.as_str())))
}

/// The sessions `filter` admits at `now`, newest opened first, in `window`, whoever asks.
pub async fn list(
    app: &App,
    filter: &SessionFilter,
    now: Timestamp,
    window: &Window<Newest<SessionId>>,
) -> Result<Vec<SessionRecord>, Error> {
    Ok(app.sessions().list_sessions(filter, now, window).await?)
}

/// [`list`] narrowed to the sessions the caller reads: a till's own store's. A till that asks
/// for another store finds nothing.
pub async fn list_within_reach(
    app: &App,
    caller: &Principal,
    mut filter: SessionFilter,
    now: Timestamp,
    window: &Window<Newest<SessionId>>,
) -> Result<Vec<SessionRecord>, Error> {
    let Some(store_id) = caller.store_to_list(filter.store_id.take()) else {
        return Ok(Vec::new());
    };
    filter.store_id = store_id;
    list(app, &filter, now, window).await
}
