//! The feed's sequencer: on PostgreSQL an event is written without a position, and each node
//! numbers the committed events without one every few milliseconds, one node at a time.
//!
//! A pass holds a transaction-scoped advisory lock, so two passes never run together, and
//! numbers in a statement that starts once the lock is held, so it sees every position the
//! passes before it gave. It numbers after the highest position given, in the order the events
//! were written: an event a reader has not seen yet always lands after every position already
//! handed out. Two facts one of which waited for the other (the same register's chain, the
//! same card) were written in the order they committed, so they keep that order in the feed.
//!
//! Positions are handed out only once released. A pass's commit waits for the synchronous
//! standby, and while it waits its positions are visible on the primary: a failover then
//! could take them back and give them to other events, and a reader that had seen them would
//! miss those. So readers see the positions at or below `feed_release`, which the node raises
//! only after the pass that numbered them has committed: its commit, later in the log than
//! every pass before it, is on the standby, and theirs with it. A pass whose node lost its
//! connection while it waited leaves positions above the mark: the next pass of any node
//! finds them, makes sure they are durable and releases them.

use crate::engine::Database;
use crate::engine::background::{Cadence, repeat_while_open};
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
         WHERE e.seq = unplaced.seq RETURNING 1), \
     counted AS (SELECT count(*) AS placed FROM placed) \
     SELECT counted.placed, last.position + counted.placed AS high, r.position AS released \
     FROM counted, last, feed_release r";

const RELEASE: &str = "UPDATE feed_release SET position = $1 WHERE position < $1";

/// What a pass did and saw.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Pass {
    /// Events it numbered.
    pub(crate) placed: u64,
    /// The highest position given, by it or before it.
    pub(crate) high: i64,
    /// The released position as it found it.
    pub(crate) released: i64,
}

/// One pass, in its own transaction; numbers nothing and sees nothing when another node's
/// pass holds the lock.
pub(crate) fn place<'a>(conn: &'a mut Conn, _: &'a ()) -> BoxFuture<'a, Result<Pass, StoreError>> {
    Box::pin(async move {
        let held: bool = query("SELECT pg_try_advisory_xact_lock($1) AS held")
            .bind(SEQUENCER_LOCK)
            .fetch_one(&mut *conn)
            .await?
            .try_get("held")?;
        if !held {
            return Ok(Pass::default());
        }
        let row = query(PLACE).bind(PLACE_LIMIT).fetch_one(&mut *conn).await?;
        Ok(Pass {
            placed: u64::try_from(row.try_get::<i64>("placed")?).unwrap_or(0),
            high: row.try_get("high")?,
            released: row.try_get("released")?,
        })
    })
}

/// Raises the released position to `high`, never lowers it.
pub(crate) fn release<'a>(conn: &'a mut Conn, high: &'a i64) -> BoxFuture<'a, Result<(), StoreError>> {
    Box::pin(async move {
        query(RELEASE).bind(*high).execute(&mut *conn).await?;
        Ok(())
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
