//! A request run up to its first write, and no further: how an agent's change is checked
//! before a person is asked to agree to it.
//!
//! [`until_first_write`] runs a future (an API request made in the process) with a mark that
//! storage looks for before each write starts ([`stop_before_writing`]). Marked, a write never
//! starts: it tells the dry run it was reached and waits for ever, and the dry run drops the request there, as a client
//! that hangs up drops it. So the request's parsing and the reads and rules its handler runs
//! before writing are those of the real request, and nothing is written.
//!
//! The mark is task-local: it holds for the request's own future, not for tasks it spawns, so
//! the writes of a request made this way must be made on its own task (as every handler's are).

use std::future::Future;
use std::sync::Arc;
use tokio::sync::Notify;

tokio::task_local! {
    static DRY_RUN: Arc<Notify>;
}

/// How a dry run ended.
#[derive(Debug)]
pub enum DryRun<T> {
    /// The request ended without writing: its answer (a refusal, or a read).
    Finished(T),
    /// The request reached a write, which was not made.
    ReachedWrite,
}

/// Runs `request` until it ends or reaches its first write, which is not made.
pub async fn until_first_write<F: Future>(request: F) -> DryRun<F::Output> {
    let reached = Arc::new(Notify::new());
    let watched = Arc::clone(&reached);
    DRY_RUN
        .scope(watched, async move {
            tokio::select! {
                biased;
                answer = request => DryRun::Finished(answer),
                () = reached.notified() => DryRun::ReachedWrite,
            }
        })
        .await
}

/// Called before a write starts: in a dry run, says so and never returns; otherwise nothing.
pub async fn stop_before_writing() {
    if let Ok(reached) = DRY_RUN.try_with(Arc::clone) {
        reached.notify_one();
        std::future::pending::<()>().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_dry_run_stops_at_the_first_write_and_makes_none() {
        let mut written = false;
        let run = until_first_write(async {
            stop_before_writing().await;
            written = true;
        })
        .await;
        assert!(matches!(run, DryRun::ReachedWrite));
        assert!(!written);
        assert!(matches!(until_first_write(async { 7 }).await, DryRun::Finished(7)));
        // Outside a dry run a write goes on.
        stop_before_writing().await;
    }
}
