//! The fiscal journal: one gapless chain per register and kind, each entry signed over the
//! previous entry's signature. Appends happen inside the business write's transaction, so a
//! sale and its seal commit together or not at all.

use crate::batch::Batch;
use crate::db::Store;
use crate::engine::Writers;
use crate::error::StoreError;
use crate::sealer::Sealer;
use crate::sql::{Conn, Row, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use std::collections::HashMap;
use std::sync::Mutex;
use till_core::fiscal::{ALGORITHM, ChainKind, Entry, FiscalKey};
use till_core::instant::{from_micros, to_micros};

struct RegisterKey {
    key_id: String,
    jwk: String,
    now: i64,
}

impl Store {
    /// Records the public half of the signing key, so entries it signs can always be verified,
    /// even after a rotation.
    pub async fn publish_fiscal_key(&self, key: &FiscalKey, now: Timestamp) -> Result<(), StoreError> {
        let input = RegisterKey {
            key_id: key.key_id().to_owned(),
            jwk: key.public_jwk().to_string(),
            now: to_micros(now),
        };
        self.write(input, |c, i| Box::pin(insert_key(c, i))).await
    }

    pub async fn fiscal_keys(&self) -> Result<Vec<PublishedKey>, StoreError> {
        let rows = query("SELECT key_id, public_jwk, created_at FROM fiscal_keys ORDER BY created_at, key_id")
            .fetch_all(self.reader())
            .await?;
        rows.iter()
            .map(|row| {
                let jwk: String = row.try_get("public_jwk")?;
                Ok(PublishedKey {
                    key_id: row.try_get("key_id")?,
                    jwk: serde_json::from_str(&jwk)
                        .map_err(|_| StoreError::Corrupt("public key is not JSON".into()))?,
                    created_at: from_micros(row.try_get("created_at")?),
                })
            })
            .collect()
    }

    pub async fn journal(&self, register_id: &str, kind: ChainKind) -> Result<Vec<Entry>, StoreError> {
        crate::snapshot::entries(&mut self.reader().acquire().await?, register_id, kind).await
    }

    pub async fn register_has_journal(&self, register_id: &str) -> Result<bool, StoreError> {
        let row = query("SELECT COUNT(*) AS chains FROM fiscal_heads WHERE register_id = $1")
            .bind(register_id)
            .fetch_one(self.reader())
            .await?;
        Ok(row.try_get::<i64>("chains")? > 0)
    }
}

fn insert_key<'a>(conn: &'a mut Conn, input: &'a RegisterKey) -> BoxFuture<'a, Result<(), StoreError>> {
    Box::pin(async move {
        query(
            "INSERT INTO fiscal_keys (key_id, algorithm, public_jwk, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (key_id) DO NOTHING",
        )
        .bind(&input.key_id)
        .bind(ALGORITHM)
        .bind(&input.jwk)
        .bind(input.now)
        .execute(&mut *conn)
        .await?;
        Ok(())
    })
}

/// What an append produced.
#[derive(Clone, Debug)]
pub struct Sealed {
    pub seq: i64,
    pub signature: String,
}

/// Appends one entry to a chain inside the caller's transaction. `payload` builds the signed
/// string from the entry's sequence and the previous signature.
///
/// The head row is claimed with an upsert that bumps its sequence, which locks it until the
/// transaction ends (PostgreSQL) or runs alone (the SQLite writer), so two appends to one chain
/// can never take the same number; the primary key on entries turns any fork into an error.
pub(crate) async fn append(
    conn: &mut Conn,
    register_id: &str,
    kind: ChainKind,
    reference: &str,
    now: i64,
    key: &Sealer,
    payload: impl FnOnce(i64, Option<&str>) -> String,
) -> Result<Sealed, StoreError> {
    let place = reserve(conn, register_id, kind).await?;
    let text = payload(place.seq, place.previous.as_deref());
    let mut batch = Batch::default();
    let sealed = seal_into(&mut batch, register_id, kind, place, text, reference, now, key)?;
    batch.run(conn).await?;
    Ok(sealed)
}

/// A claimed place in a chain: its sequence and the previous entry's signature, and how many
/// times closings had held the chain when it was claimed (see [`hold`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    pub seq: i64,
    pub previous: Option<String>,
    pub holds: i64,
}

/// Advances a chain's head by one and answers the new head: the claimed place's sequence and
/// the previous entry's signature.
const RESERVE: &str = "INSERT INTO fiscal_heads (register_id, kind, last_seq, last_signature) \
     VALUES ($1, $2, 1, NULL) ON CONFLICT (register_id, kind) DO UPDATE SET last_seq = fiscal_heads.last_seq + 1 \
     RETURNING last_seq, last_signature, holds";

/// [`RESERVE`] in three plain statements, where one writer leaves no race between them
/// (SQLite): SQLite copies every page an upsert, or a statement with `RETURNING`, changes into
/// a statement journal first, which the plain statements spare the writer (see
/// docs/performance.md, "The SQLite writer's statements").
const ADVANCE: &str = "UPDATE fiscal_heads SET last_seq = last_seq + 1 WHERE register_id = $1 AND kind = $2";
const START: &str = "INSERT INTO fiscal_heads (register_id, kind, last_seq, last_signature) VALUES ($1, $2, 1, NULL)";
const HEAD: &str = "SELECT last_seq, last_signature, holds FROM fiscal_heads WHERE register_id = $1 AND kind = $2";

/// Claims the next place of a chain; [`seal_into`] must fill it in the same transaction.
pub(crate) async fn reserve(conn: &mut Conn, register_id: &str, kind: ChainKind) -> Result<Place, StoreError> {
    let head = if conn.writers() == Writers::One {
        let advanced = query(ADVANCE)
            .bind(register_id)
            .bind(kind.as_str())
            .execute(&mut *conn)
            .await?;
        if advanced == 0 {
            query(START)
                .bind(register_id)
                .bind(kind.as_str())
                .execute(&mut *conn)
                .await?;
        }
        query(HEAD)
    } else {
        query(RESERVE)
    };
    let head = head.bind(register_id).bind(kind.as_str()).fetch_one(&mut *conn).await?;
    Place::from_head(&head)
}

/// Takes a chain's head until the transaction ends and leaves its place as it was: work that
/// must see every entry committed to the chain before it and let none in until it is done (a
/// session's Z report, a period closed early) takes it first. On PostgreSQL the head's row
/// lock orders it with every writer of the chain, and the hold is counted, so that a ticket
/// predicted before it cannot claim the head unchecked after it. SQLite has one writer anyway.
pub(crate) async fn hold(conn: &mut Conn, register_id: &str, kind: ChainKind) -> Result<(), StoreError> {
    reserve(conn, register_id, kind).await?;
    query("UPDATE fiscal_heads SET holds = holds + 1 WHERE register_id = $1 AND kind = $2")
        .bind(register_id)
        .bind(kind.as_str())
        .execute(&mut *conn)
        .await?;
    unreserve(conn, register_id, kind).await
}

/// Gives back a place claimed in this transaction and not yet sealed, so that work which must
/// come before it in the chain can run first.
pub(crate) async fn unreserve(conn: &mut Conn, register_id: &str, kind: ChainKind) -> Result<(), StoreError> {
    query("UPDATE fiscal_heads SET last_seq = last_seq - 1 WHERE register_id = $1 AND kind = $2")
        .bind(register_id)
        .bind(kind.as_str())
        .execute(&mut *conn)
        .await?;
    // The claim created the head: the chain had none before.
    query("DELETE FROM fiscal_heads WHERE register_id = $1 AND kind = $2 AND last_seq = 0")
        .bind(register_id)
        .bind(kind.as_str())
        .execute(&mut *conn)
        .await?;
    Ok(())
}

impl Place {
    /// Read from a row with the head's `last_seq`, `last_signature` and `holds`.
    pub(crate) fn from_head(head: &Row) -> Result<Place, StoreError> {
        Ok(Place {
            seq: head.try_get("last_seq")?,
            previous: head.try_get("last_signature")?,
            holds: head.try_get("holds")?,
        })
    }
}

/// Signs `text` (the signed string for `place`) and queues the entry and the chain's new head
/// on `batch`, for the caller to run in the same transaction.
#[allow(clippy::too_many_arguments)]
pub(crate) fn seal_into(
    batch: &mut Batch,
    register_id: &str,
    kind: ChainKind,
    place: Place,
    text: String,
    reference: &str,
    now: i64,
    key: &Sealer,
) -> Result<Sealed, StoreError> {
    let signature = key.sign(&text)?;
    let signed = Signed { place, text, signature };
    Ok(seal_signed(batch, register_id, kind, signed, reference, now, key))
}

/// An entry's signed string and its signature, for the place it was signed at.
#[derive(Clone, Debug)]
pub(crate) struct Signed {
    pub place: Place,
    pub text: String,
    pub signature: String,
}

/// Queues an entry signed already, and the chain's new head, on `batch`.
pub(crate) fn seal_signed(
    batch: &mut Batch,
    register_id: &str,
    kind: ChainKind,
    signed: Signed,
    reference: &str,
    now: i64,
    key: &Sealer,
) -> Sealed {
    let sealed = push_entry(batch, register_id, kind, signed, reference, now, key);
    batch.push(
        "UPDATE fiscal_heads SET last_signature = $3 WHERE register_id = $1 AND kind = $2",
        vec![register_id.into(), kind.as_str().into(), (&sealed.signature).into()],
    );
    sealed
}

/// Queues the entry alone, for a caller that moves the chain's head itself.
pub(crate) fn push_entry(
    batch: &mut Batch,
    register_id: &str,
    kind: ChainKind,
    signed: Signed,
    reference: &str,
    now: i64,
    key: &Sealer,
) -> Sealed {
    let Signed { place, text, signature } = signed;
    batch.push(
        "INSERT INTO fiscal_entries (register_id, kind, seq, payload, signature, previous_signature, key_id, \
             algorithm, reference, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        vec![
            register_id.into(),
            kind.as_str().into(),
            place.seq.into(),
            text.into(),
            (&signature).into(),
            place.previous.as_deref().into(),
            key.key_id().into(),
            ALGORITHM.into(),
            reference.into(),
            now.into(),
        ],
    );
    Sealed {
        seq: place.seq,
        signature,
    }
}

/// Each register's ticket chain head as this process last committed it, and the day it was
/// committed on. A guess, never trusted:
///
/// - On SQLite, where this process is the database's one writer, a till's next ticket is
///   signed before its sale reaches the writer thread, whose time every sale of every
///   register shares. The writer still claims the place itself and signs again should the
///   guess be wrong (two sales of one register in flight at once).
/// - On PostgreSQL a plain sale goes to the database as one statement that claims the head
///   only if it still stands as guessed (see `sales::commit_predicted`); when another node or
///   a closing moved it, the sale takes the checked path. A miss costs a whole sale's writes,
///   undone, so a node tries that only once its last [`TRUSTED_AFTER`] guesses for the
///   register were right: a load balancer that sends a till to one node gets one statement
///   per sale, one that spreads a till's sales over nodes gets the checked path and few misses.
///
/// A stale entry costs a signature or a statement, never a broken chain.
#[derive(Default)]
pub(crate) struct TicketHeads(Mutex<HashMap<String, Head>>);

/// Right guesses in a row after which a register's guess is trusted. Two nodes taking a
/// till's sales at random are right one time in two, so a streak this long comes one time
/// in 256.
const TRUSTED_AFTER: u32 = 8;

/// A chain's last sealed entry, and the register's day it was sealed on.
struct Head {
    seq: i64,
    signature: String,
    holds: i64,
    day: Option<OpenDay>,
    /// How many of this node's guesses for the register were right in a row, up to now.
    right_in_a_row: u32,
    /// The entry seals a late sale.
    late: bool,
}

/// The place a register's next ticket is expected to take.
pub(crate) struct Guess {
    pub place: Place,
    /// The day its last ticket was sealed on, if known.
    pub day: Option<OpenDay>,
    /// Whether the guesses before were right often enough in a row to act on this one.
    pub trusted: bool,
    /// Whether the ticket before the guessed place is a late sale.
    pub follows_late: bool,
}

/// A register's local day with tickets on it and open for more: marked, not closed early.
#[derive(Clone, Debug)]
pub(crate) struct OpenDay {
    pub zone: TimeZone,
    pub zone_name: String,
    pub date: Date,
}

impl OpenDay {
    /// Whether `now` still falls on this day in its time zone.
    pub(crate) fn covers(&self, now: Timestamp) -> bool {
        now.to_zoned(self.zone.clone()).date() == self.date
    }
}

impl TicketHeads {
    /// The place the register's next ticket will take, if this process sealed its last one.
    pub(crate) fn next(&self, register_id: &str) -> Option<Guess> {
        let heads = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let head = heads.get(register_id)?;
        let place = Place {
            seq: head.seq.checked_add(1)?,
            previous: Some(head.signature.clone()),
            holds: head.holds,
        };
        Some(Guess {
            place,
            day: head.day.clone(),
            trusted: head.right_in_a_row >= TRUSTED_AFTER,
            follows_late: head.late,
        })
    }

    /// Records a committed ticket: `signature` sealed `place`, on `day` when it is known (else
    /// the day recorded before stands), a late sale or not; `guessed` is the place
    /// [`TicketHeads::next`] had guessed for it, if any.
    pub(crate) fn committed(
        &self,
        register_id: &str,
        place: &Place,
        signature: String,
        day: Option<OpenDay>,
        late: bool,
        guessed: Option<&Place>,
    ) {
        let right = guessed == Some(place);
        let mut heads = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match heads.get_mut(register_id) {
            // Sales of one register committed together can be answered in any order.
            Some(known) if known.seq >= place.seq => {}
            Some(known) => {
                known.seq = place.seq;
                known.signature = signature;
                known.holds = place.holds;
                known.late = late;
                if day.is_some() {
                    known.day = day;
                }
                known.right_in_a_row = if right {
                    known.right_in_a_row.saturating_add(1)
                } else {
                    0
                };
            }
            None => {
                let head = Head {
                    seq: place.seq,
                    signature,
                    holds: place.holds,
                    day,
                    right_in_a_row: u32::from(right),
                    late,
                };
                heads.insert(register_id.to_owned(), head);
            }
        }
    }

    /// Drops the register's guess: the head moved elsewhere.
    pub(crate) fn forget(&self, register_id: &str) {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(register_id);
    }
}

pub use till_app::storage::fiscal::PublishedKey;
pub use till_core::fiscal::jet;

/// Appends a technical event to the register's event chain, with its business record.
pub(crate) async fn append_event(
    conn: &mut Conn,
    register_id: &str,
    event: jet::TechnicalEvent,
    detail: &str,
    now: i64,
    key: &Sealer,
) -> Result<Sealed, StoreError> {
    let record = till_core::fiscal::payload::EventRecord {
        register_id: register_id.to_owned(),
        code: event.code,
        label: event.label.to_owned(),
        detail: detail.to_owned(),
        occurred_at: now,
    };
    let sealed = append(
        conn,
        register_id,
        ChainKind::Event,
        detail,
        now,
        key,
        |seq, previous| till_core::fiscal::payload::event(&record, seq, previous),
    )
    .await?;
    query(
        "INSERT INTO technical_events (register_id, seq, code, label, detail, occurred_at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(register_id)
    .bind(sealed.seq)
    .bind(event.code)
    .bind(event.label)
    .bind(detail)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    Ok(sealed)
}

struct RecordEvent {
    register_id: String,
    event: jet::TechnicalEvent,
    detail: String,
    now: i64,
    key: std::sync::Arc<Sealer>,
}

impl Store {
    pub async fn record_technical_event(
        &self,
        register_id: &str,
        event: jet::TechnicalEvent,
        detail: &str,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let input = RecordEvent {
            register_id: register_id.to_owned(),
            event,
            detail: detail.to_owned(),
            now: to_micros(now),
            key: self.fiscal_key()?,
        };
        self.write(input, |c, i| {
            Box::pin(async move {
                append_event(c, &i.register_id, i.event, &i.detail, i.now, &i.key)
                    .await
                    .map(drop)
            })
        })
        .await
    }
}
