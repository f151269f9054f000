//! The feed's sequencer: on PostgreSQL an event is written without a position, and each node
//! numbers the committed events without one every few milliseconds, one node at a time.
//!
//! A pass holds a transaction-scoped advisory lock, so two passes never run together, and
//! numbers in a statement that starts once the lock is held, so it sees every position the
//! passes before it gave. It numbers after the highest position given, in the order the events
//! were written: an event a reader has not seen yet always lands after every position already
//! handed out. Two facts one of which waited for the other (the same register's chain, the
//! same card) were written in the order they committed, so they keep that order in the feed.

use super::background::{Cadence, repeat_while_open};
use crate::engine::Database;
use crate::engine::sql::{Conn, query};
use crate::error::StoreError;
use crate::metrics::EVENTS_PLACED;
use futures::future::BoxFuture;
use std::sync::Weak;
use std::time::Duration;

/// The advisory lock of the sequencer: "tillfeed" in ASCII.
const SEQUENCER_LOCK: i64 = 0x7469_6c6c_6665_6564;

/// Most events one pass numbers: a backlog goes a slice at a time.
pub const PLACE_LIMIT: i64 = 10_000;

/// How often each node looks for events to number.
const PLACE_EVERY: Duration = Duration::from_millis(10);

const PLACE: &str = "WITH unplaced AS ( \
         SELECT seq, row_number() OVER (ORDER BY seq) AS n FROM events WHERE position IS NULL \
         ORDER BY seq LIMIT $1), \
     last AS (SELECT COALESCE(MAX(position), 0) AS position FROM events WHERE position IS NOT NULL), \
     placed AS ( \
         UPDATE events e SET position = last.position + unplaced.n FROM unplaced, last \
         WHERE e.seq = unplaced.seq RETURNING 1) \
     SELECT count(*) AS placed FROM placed";

/// One pass, in its own transaction; answers how many events it numbered, none when another
/// node's pass holds the lock.
pub(crate) fn place<'a>(conn: &'a mut Conn, _: &'a ()) -> BoxFuture<'a, Result<u64, StoreError>> {
    Box::pin(async move {
        let held: bool = query("SELECT pg_try_advisory_xact_lock($1) AS held")
            .bind(SEQUENCER_LOCK)
            .fetch_one(&mut *conn)
            .await?
            .try_get("held")?;
        if !held {
            return Ok(0);
        }
        let placed: i64 = query(PLACE)
            .bind(PLACE_LIMIT)
            .fetch_one(&mut *conn)
            .await?
            .try_get("placed")?;
        Ok(u64::try_from(placed).unwrap_or(0))
    })
}

/// Numbers events every [`PLACE_EVERY`], at once again while a backlog remains, until `owner`
/// is dropped or its database closed.
pub(crate) async fn place_while_open<S>(owner: Weak<S>, database: fn(&S) -> &Database) {
    let cadence = Cadence {
        every: PLACE_EVERY,
        limit: PLACE_LIMIT as u64,
        after_error: PLACE_EVERY * 10,
        done: EVENTS_PLACED,
        failed: "events not numbered into the feed; trying again",
    };
    repeat_while_open(owner, database, cadence, |database| Box::pin(database.place_events())).await
}
