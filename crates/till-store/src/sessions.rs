//! Register sessions: a cashier's shift on one till, and the opaque token the till holds.

use crate::cache::insert_within;
use crate::closures;
use crate::db::Store;
use crate::error::{Classified, Conflict, StoreError};
use crate::feed::{self, NewEvent};
use crate::journal::{self, jet};
use crate::page::{Keyset, Newest, Window};
use crate::sealer::Sealer;
use crate::sql::{Conn, Row, query};
use crate::staff::staff_from_row;
use crate::stores::store_in_network;
use futures::future::BoxFuture;
use jiff::Timestamp;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
pub use till_app::storage::sessions::{
    CloseOutcome, OpenRefusal, OpenSession, SessionFilter, SessionPrincipal, SessionRecord,
};
use till_core::documents::SessionOpened;
use till_core::drawer::Count;
use till_core::events::EventType;
use till_core::fiscal::ChainKind;
use till_core::ids::{RegisterId, SessionId, StoreId, Subject, check_new_id};
use till_core::instant::{from_micros, to_micros};
use till_core::money::Cents;

/// The session tokens this node resolved lately, by token hash: the principal and when it was
/// read, trusted for the cache's time to live (see [`crate::cache`]). A session closed or a
/// cashier changed on another node applies here within it; what matters to the books does not
/// wait for it: a sale on a session closed meanwhile is refused by its commit, which checks
/// the session in the database.
pub(crate) type ResolvedTokens = HashMap<Vec<u8>, (Instant, SessionPrincipal)>;

/// The most tokens a node keeps, which bounds their memory (about a KiB a token) whatever the
/// number of tills.
const RESOLVED_TOKENS: usize = 4_096;

macro_rules! select_session {
    ($where:literal) => {
        concat!(
            "SELECT session_id, store_id, register_id, cashier_subject, opening_float_cents, ",
            "opened_at, expires_at, closed_at, z_report FROM register_sessions WHERE ",
            $where
        )
    };
}

struct CloseSession {
    session_id: SessionId,
    now: i64,
    counted: Vec<Count>,
    key: Arc<Sealer>,
}

struct OpenWithKey {
    open: OpenSession,
    key: Arc<Sealer>,
}

impl Store {
    pub async fn open_session(&self, open: OpenSession) -> Result<Result<SessionRecord, OpenRefusal>, StoreError> {
        let key = self.fiscal_key()?;
        self.write(OpenWithKey { open, key }, |c, i| Box::pin(open_session(c, i)))
            .await
    }

    pub async fn close_session(
        &self,
        session_id: SessionId,
        now: Timestamp,
        counted: Vec<Count>,
    ) -> Result<CloseOutcome, StoreError> {
        let input = CloseSession {
            session_id,
            now: to_micros(now),
            counted,
            key: self.fiscal_key()?,
        };
        let closed = self.write(input, |c, i| Box::pin(close_session(c, i))).await;
        self.session_cache().forget();
        closed
    }

    pub async fn get_session(&self, session_id: &SessionId) -> Result<Option<SessionRecord>, StoreError> {
        let row = query(select_session!("session_id = $1"))
            .bind(session_id.as_str())
            .fetch_optional(self.reader())
            .await?;
        row.as_ref().map(session_from_row).transpose()
    }

    pub async fn list_sessions(
        &self,
        filter: &SessionFilter,
        now: Timestamp,
        window: &Window<Newest<SessionId>>,
    ) -> Result<Vec<SessionRecord>, StoreError> {
        let rows = list_sessions(filter, now, window).fetch_all(self.reader()).await?;
        rows.iter().map(session_from_row).collect()
    }

    pub async fn session_by_token(&self, token_hash: &[u8]) -> Result<Option<SessionPrincipal>, StoreError> {
        let cache = self.session_cache();
        let mut seen = cache.look(|tokens| {
            tokens
                .get(token_hash)
                .filter(|(read_at, _)| cache.young(*read_at))
                .map(|(_, principal)| principal.clone())
        });
        if let Some(principal) = seen.found.take() {
            return Ok(Some(principal));
        }
        // Taken before the read begins, so that the entry's age is never understated.
        let read_at = Instant::now();
        let row = query(SELECT_PRINCIPAL)
            .bind(token_hash.to_vec())
            .fetch_optional(self.reader())
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let principal = SessionPrincipal {
            session: session_from_row(&row)?,
            cashier: staff_from_row(&row)?,
        };
        // A time to live of zero keeps nothing: every request reads its session.
        if !cache.ttl().is_zero() {
            cache.keep(&seen, |tokens| {
                insert_within(
                    tokens,
                    RESOLVED_TOKENS,
                    token_hash.to_vec(),
                    (read_at, principal.clone()),
                );
            });
        }
        Ok(Some(principal))
    }
}

const SELECT_PRINCIPAL: &str = "SELECT s.session_id, s.store_id, s.register_id, s.cashier_subject, \
     s.opening_float_cents, s.opened_at, s.expires_at, s.closed_at, s.z_report, \
     f.subject, f.display_name, f.role, f.pin_hash, f.permissions, f.discount_limit_bps, f.discount_limit_cents, \
     f.grants_synced_at, f.created_at, f.updated_at \
     FROM register_sessions s JOIN staff f ON f.subject = s.cashier_subject WHERE s.token_hash = $1";

fn open_session<'a>(
    conn: &'a mut Conn,
    input: &'a OpenWithKey,
) -> BoxFuture<'a, Result<Result<SessionRecord, OpenRefusal>, StoreError>> {
    Box::pin(async move {
        let open = &input.open;
        if store_in_network(&mut *conn, open.store_id.as_str()).await? == Some(false) {
            return Ok(Err(OpenRefusal::UnknownStore));
        }
        let now = to_micros(open.opened_at);
        // A no-op update takes the register's row lock on PostgreSQL, as a day closed early
        // does before it looks for an open session: of the two, the later sees the other.
        let register = query("UPDATE registers SET store_id = store_id WHERE register_id = $1 RETURNING store_id")
            .bind(open.register_id.as_str())
            .fetch_optional(&mut *conn)
            .await?;
        let register_id = open.register_id.as_str();
        let new_register = match register {
            Some(row) => {
                let home: String = row.try_get("store_id")?;
                if home != open.store_id.as_str() {
                    return Ok(Err(OpenRefusal::RegisterInOtherStore(StoreId::from_trusted(home))));
                }
                let today = closures::today(conn, register_id, now).await?;
                if let Some(through) = today.closed_early() {
                    return Ok(Err(OpenRefusal::DayClosed {
                        day: today.date.to_string(),
                        through: through.to_owned(),
                    }));
                }
                false
            }
            None => {
                if let Err(problem) = check_new_id(register_id) {
                    return Ok(Err(OpenRefusal::NewRegisterId(problem)));
                }
                query("INSERT INTO registers (register_id, store_id, created_at) VALUES ($1, $2, $3)")
                    .bind(register_id)
                    .bind(open.store_id.as_str())
                    .bind(now)
                    .execute(&mut *conn)
                    .await?;
                true
            }
        };
        let current =
            query("SELECT session_id, expires_at FROM register_sessions WHERE register_id = $1 AND closed_at IS NULL")
                .bind(open.register_id.as_str())
                .fetch_optional(&mut *conn)
                .await?;
        if let Some(row) = current {
            let session_id = SessionId::from_trusted(row.try_get("session_id")?);
            let expires_at: i64 = row.try_get("expires_at")?;
            if expires_at > now {
                return Ok(Err(OpenRefusal::AlreadyOpen(session_id)));
            }
            // A shift nobody closed: it ends now, so the till can start the next one.
            close_session_row(&mut *conn, &session_id, now, &[], &input.key).await?;
        }
        if new_register {
            let started = jet::journal_initialised(register_id);
            journal::append_event(conn, register_id, started.event, &started.detail, now, &input.key).await?;
        }
        closures::close_due(conn, register_id, now, &input.key).await?;
        let inserted = query(
            "INSERT INTO register_sessions (session_id, token_hash, store_id, register_id, cashier_subject, \
                 opening_float_cents, opened_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(open.session_id.as_str())
        .bind(open.token_hash.clone())
        .bind(open.store_id.as_str())
        .bind(open.register_id.as_str())
        .bind(open.cashier_subject.as_str())
        .bind(open.opening_float.get())
        .bind(now)
        .bind(to_micros(open.expires_at))
        .execute(&mut *conn)
        .await;
        match inserted {
            Ok(_) => {}
            // Another till opened this register between our check and our insert.
            Err(error) if error.is_unique_violation() => {
                return Err(StoreError::Conflict(Conflict::RegisterAlreadyOpen(
                    open.register_id.clone(),
                )));
            }
            Err(error) => return Err(error),
        }
        let opened = jet::session_opened(&open.session_id, &open.cashier_subject);
        journal::append_event(conn, register_id, opened.event, &opened.detail, now, &input.key).await?;
        let record = SessionRecord {
            session_id: open.session_id.clone(),
            store_id: open.store_id.clone(),
            register_id: open.register_id.clone(),
            cashier_subject: open.cashier_subject.clone(),
            opening_float: open.opening_float,
            opened_at: open.opened_at,
            expires_at: open.expires_at,
            closed_at: None,
            z_report: None,
        };
        NewEvent {
            kind: EventType::SessionOpened,
            occurred_at: now,
            store_id: Some(open.store_id.as_str()),
            register_id: Some(register_id),
            subject: open.session_id.as_str(),
            data: Some(feed::data_of(&SessionOpened {
                session_id: &record.session_id,
                store_id: &record.store_id,
                register_id: &record.register_id,
                cashier_subject: &record.cashier_subject,
                status: "open",
                opening_float_cents: record.opening_float,
                opened_at: record.opened_at,
                expires_at: record.expires_at,
            })?),
        }
        .record(conn)
        .await?;
        Ok(Ok(record))
    })
}

fn close_session<'a>(conn: &'a mut Conn, input: &'a CloseSession) -> BoxFuture<'a, Result<CloseOutcome, StoreError>> {
    Box::pin(async move {
        let closed_now =
            close_session_row(&mut *conn, &input.session_id, input.now, &input.counted, &input.key).await?;
        let row = query(select_session!("session_id = $1"))
            .bind(input.session_id.as_str())
            .fetch_optional(&mut *conn)
            .await?
            .ok_or(StoreError::NotFound("register session"))?;
        let record = session_from_row(&row)?;
        Ok(if closed_now {
            CloseOutcome::Closed(record)
        } else {
            CloseOutcome::AlreadyClosed(record)
        })
    })
}

/// Closes the session if it is open and records its Z report; false when it was not open.
async fn close_session_row(
    conn: &mut Conn,
    session_id: &SessionId,
    now: i64,
    counted: &[Count],
    key: &Sealer,
) -> Result<bool, StoreError> {
    let open = || query(select_session!("session_id = $1 AND closed_at IS NULL")).bind(session_id.as_str());
    let Some(row) = open().fetch_optional(&mut *conn).await? else {
        return Ok(false);
    };
    // The till's ticket chain first: a sale booked before it is in the report, one after it
    // finds the session closed. Then the session again, as a close that got there first left it.
    journal::hold(conn, session_from_row(&row)?.register_id.as_str(), ChainKind::Ticket).await?;
    let Some(row) = open().fetch_optional(&mut *conn).await? else {
        return Ok(false);
    };
    let session = session_from_row(&row)?;
    let register_id = session.register_id.as_str();
    // A shift closing after midnight first closes the day it belonged to.
    closures::close_due(conn, register_id, now, key).await?;
    let sealed = crate::reports::seal_z_report(&mut *conn, &session, now, counted, key).await?;
    let report = serde_json::to_string(&sealed.report).map_err(|e| StoreError::Corrupt(format!("Z report: {e}")))?;
    crate::sales_report::roll_up_session(conn, session_id.as_str(), session.store_id.as_str(), register_id).await?;
    let closed = jet::session_closed(session_id, &session.cashier_subject);
    journal::append_event(conn, register_id, closed.event, &closed.detail, now, key).await?;
    query(
        "UPDATE register_sessions SET closed_at = $2, z_report = $3, closure_seq = $4, late_after = $5, \
             late_through = $6 \
         WHERE session_id = $1 AND closed_at IS NULL",
    )
    .bind(session_id.as_str())
    .bind(now)
    .bind(report.as_str())
    .bind(sealed.closure_seq)
    .bind(sealed.late.after)
    .bind(sealed.late.through)
    .execute(&mut *conn)
    .await?;
    NewEvent {
        kind: EventType::SessionClosed,
        occurred_at: now,
        store_id: Some(session.store_id.as_str()),
        register_id: Some(register_id),
        subject: session_id.as_str(),
        data: Some(report),
    }
    .record(conn)
    .await?;
    Ok(true)
}

/// The session `session_id` as stored, in `conn`'s transaction.
pub(crate) async fn find_session(conn: &mut Conn, session_id: &str) -> Result<Option<SessionRecord>, StoreError> {
    let row = query(select_session!("session_id = $1"))
        .bind(session_id)
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(session_from_row).transpose()
}

fn list_sessions(filter: &SessionFilter, now: Timestamp, window: &Window<Newest<SessionId>>) -> crate::sql::Query {
    let mut keyset = Keyset::new(
        "SELECT session_id, store_id, register_id, cashier_subject, opening_float_cents, opened_at, expires_at, \
             closed_at, z_report FROM register_sessions",
    );
    keyset.equal_if("store_id", filter.store_id.as_ref().map(StoreId::as_str));
    keyset.equal_if("register_id", filter.register_id.as_ref().map(RegisterId::as_str));
    match filter.open {
        Some(true) => {
            keyset.condition("closed_at IS NULL");
            keyset.compare("expires_at", ">", to_micros(now));
        }
        Some(false) => keyset.bound(
            |now| format!("(closed_at IS NOT NULL OR expires_at <= {now})"),
            to_micros(now),
        ),
        None => {}
    }
    keyset.newest_first("opened_at", "session_id", window.after.as_ref(), window.take)
}

fn session_from_row(row: &Row) -> Result<SessionRecord, StoreError> {
    let float: i64 = row.try_get("opening_float_cents")?;
    let z_report: Option<String> = row.try_get("z_report")?;
    Ok(SessionRecord {
        session_id: SessionId::from_trusted(row.try_get("session_id")?),
        store_id: StoreId::from_trusted(row.try_get("store_id")?),
        register_id: RegisterId::from_trusted(row.try_get("register_id")?),
        cashier_subject: Subject::from_trusted(row.try_get("cashier_subject")?),
        opening_float: Cents::new(float).ok_or_else(|| StoreError::Corrupt(format!("float {float}")))?,
        opened_at: from_micros(row.try_get("opened_at")?),
        expires_at: from_micros(row.try_get("expires_at")?),
        closed_at: row.try_get::<Option<i64>>("closed_at")?.map(from_micros),
        z_report: z_report
            .map(|text| serde_json::from_str(&text))
            .transpose()
            .map_err(|_| StoreError::Corrupt("Z report is not JSON".to_owned()))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{migrated_scratch_database, plan_of};

    /// Each filter of the session list reads its page through an index in the list's order:
    /// nothing to sort, no scan of the table.
    #[tokio::test]
    async fn every_session_filter_reads_its_page_in_index_order() {
        let dir = tempfile::tempdir().unwrap();
        let conn = migrated_scratch_database(dir.path()).await;
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let window = Window {
            after: Some(Newest {
                at: now,
                id: SessionId::from_trusted("ses_9".into()),
            }),
            take: 51,
        };
        let store = || Some(StoreId::from_trusted("s1".into()));
        let cases = [
            (SessionFilter::default(), "register_sessions_by_time"),
            (
                SessionFilter {
                    store_id: store(),
                    ..SessionFilter::default()
                },
                "register_sessions_by_store",
            ),
            (
                SessionFilter {
                    register_id: Some(RegisterId::from_trusted("r1".into())),
                    ..SessionFilter::default()
                },
                "register_sessions_by_register",
            ),
            (
                SessionFilter {
                    open: Some(true),
                    ..SessionFilter::default()
                },
                "register_sessions_unclosed",
            ),
            (
                SessionFilter {
                    open: Some(false),
                    ..SessionFilter::default()
                },
                "register_sessions_by_time",
            ),
            (
                SessionFilter {
                    store_id: store(),
                    open: Some(false),
                    ..SessionFilter::default()
                },
                "register_sessions_by_store",
            ),
        ];
        for (filter, index) in cases {
            let first = Window {
                after: None,
                take: window.take,
            };
            let steps = [
                plan_of(&conn, &list_sessions(&filter, now, &first)),
                plan_of(&conn, &list_sessions(&filter, now, &window)),
            ]
            .concat();
            assert!(
                steps
                    .iter()
                    .any(|step| step.contains(&format!("INDEX {index} ")) || step.ends_with(&format!("INDEX {index}"))),
                "{filter:?} should read {index}: {steps:?}"
            );
            assert!(
                !steps
                    .iter()
                    .any(|step| step.contains("TEMP B-TREE") || step == "SCAN register_sessions"),
                "{filter:?}: {steps:?}"
            );
        }
    }
}
