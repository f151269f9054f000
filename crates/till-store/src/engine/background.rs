//! A node's periodic work (the stock fold on both engines, the feed sequencer on PostgreSQL): a
//! job run every period, at once again while it leaves a backlog, until its owner is dropped or
//! the database closed.

use crate::engine::Database;
use crate::error::StoreError;
use futures::future::BoxFuture;
use std::sync::Weak;
use std::time::Duration;

/// How a job repeats and what it reports.
pub(crate) struct Cadence {
    /// The pause between runs that left no backlog; the first run comes one period after the
    /// start, once the schema is migrated.
    pub(crate) every: Duration,
    /// The most one run takes: a run that took as many left a backlog, so the next comes at once.
    pub(crate) limit: u64,
    /// The pause after a failed run.
    pub(crate) after_error: Duration,
    /// The counter of what runs did.
    pub(crate) done: &'static str,
    /// What a failed run means, logged with its error.
    pub(crate) failed: &'static str,
}

/// A job: one run on the database, answering how much it did.
pub(crate) type Job = for<'a> fn(&'a Database) -> BoxFuture<'a, Result<u64, StoreError>>;

pub(crate) async fn repeat_while_open<S>(owner: Weak<S>, database: fn(&S) -> &Database, cadence: Cadence, job: Job) {
    let mut pause = cadence.every;
    loop {
        tokio::time::sleep(pause).await;
        let Some(owner) = owner.upgrade() else { return };
        let database = database(&owner);
        if database.readers().is_closed() {
            return;
        }
        pause = match job(database).await {
            Ok(done) => {
                metrics::counter!(cadence.done).increment(done);
                match done >= cadence.limit {
                    true => Duration::ZERO,
                    false => cadence.every,
                }
            }
            Err(error) => {
                tracing::warn!(%error, "{}", cadence.failed);
                cadence.after_error
            }
        };
    }
}
