//! What the storage crate counts and times, under the names `/metrics` shows them by
//! (docs/deploy.md, "Metrics"). The binary describes them once the process's recorder is in
//! place ([`describe`]).

use metrics::{Unit, describe_counter, describe_histogram};
use std::time::Duration;

/// Sales committed, by `path`: `one_statement` (the node predicted the till's chain head,
/// PostgreSQL) or `checked` (the transaction that reads it first).
pub(crate) const SALE_COMMITS: &str = "till_sale_commits_total";

/// One-statement commits refused, whatever the cause (another node's ticket, a closing, a
/// twin, a closed session); each such sale then took the checked path.
pub(crate) const SALE_PREDICTIONS_MISSED: &str = "till_sale_predictions_missed_total";

/// Stock moves of PostgreSQL sales added into their articles' rows.
pub(crate) const STOCK_MOVES_FOLDED: &str = "till_stock_moves_folded_total";

/// Events numbered into the feed by this node (PostgreSQL).
pub(crate) const EVENTS_PLACED: &str = "till_events_placed_total";

/// Times this node moved to another primary among the hosts of its database URL.
pub(crate) const PRIMARY_MOVES: &str = "till_db_primary_moves_total";

/// Units of work in each batch SQLite's writer commits.
pub const WRITER_BATCH_JOBS: &str = "till_sqlite_writer_batch_jobs";

/// From a batch's BEGIN to its durable COMMIT.
pub const WRITER_BATCH_SECONDS: &str = "till_sqlite_writer_batch_duration_seconds";

/// Requests for a PostgreSQL connection that found none idle: how long each waited (its
/// count is the number of waits).
pub const POOL_WAIT_SECONDS: &str = "till_db_pool_wait_duration_seconds";

/// Gives each metric its help text and unit.
pub fn describe() {
    describe_counter!(
        SALE_COMMITS,
        Unit::Count,
        "Sales committed by this node, by commit path."
    );
    describe_counter!(
        SALE_PREDICTIONS_MISSED,
        Unit::Count,
        "One-statement sale commits refused and run again the checked way (PostgreSQL)."
    );
    describe_counter!(
        STOCK_MOVES_FOLDED,
        Unit::Count,
        "Stock moves folded into their articles' levels by this node (PostgreSQL)."
    );
    describe_counter!(
        EVENTS_PLACED,
        Unit::Count,
        "Events numbered into the feed by this node (PostgreSQL)."
    );
    describe_counter!(
        PRIMARY_MOVES,
        Unit::Count,
        "Times this node moved to another primary among the hosts of its database URL (PostgreSQL)."
    );
    describe_histogram!(
        WRITER_BATCH_JOBS,
        Unit::Count,
        "Units of work committed together by SQLite's writer, per batch."
    );
    describe_histogram!(
        WRITER_BATCH_SECONDS,
        Unit::Seconds,
        "SQLite writer batches, from BEGIN to the durable COMMIT."
    );
    describe_histogram!(
        POOL_WAIT_SECONDS,
        Unit::Seconds,
        "Requests that found no idle PostgreSQL connection, by how long they waited for one (for a write, with its BEGIN)."
    );
}

/// A request that found no idle connection and waited `waited` for one.
pub(crate) fn waited_for_connection(waited: Duration) {
    metrics::histogram!(POOL_WAIT_SECONDS).record(waited.as_secs_f64());
}

/// A batch of `jobs` the writer committed (or failed to) in `took`.
pub(crate) fn writer_batch(jobs: usize, took: Duration) {
    metrics::histogram!(WRITER_BATCH_JOBS).record(jobs as f64);
    metrics::histogram!(WRITER_BATCH_SECONDS).record(took.as_secs_f64());
}
