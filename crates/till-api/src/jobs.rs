//! Jobs that run on one node at a time: the customer retention job, once a day
//! (docs/customers.md, "Retention"), and the card payments' orphan sweep, at least once a
//! minute (docs/payments.md, "Orphans and voids").
//!
//! Every node looks often and cheaply; the database hands a job's turn to the first node that
//! asks once the previous turn has run out, so two nodes never run one job at once.

use crate::state::AppState;
use crate::worker::{StopSignal, Worker};
use futures::future::BoxFuture;
use std::time::Duration;
use till_app::Error;

/// How often a node asks whether a job's turn is free.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// A pass of a job on this node as `holder`: what it did, counted (0 when another node holds
/// the turn).
type Pass = for<'a> fn(&'a AppState, &'a str) -> BoxFuture<'a, Result<usize, Error>>;

fn retention<'a>(state: &'a AppState, holder: &'a str) -> BoxFuture<'a, Result<usize, Error>> {
    Box::pin(till_app::customers::run_retention(state.app(), holder))
}

fn orphan_sweep<'a>(state: &'a AppState, holder: &'a str) -> BoxFuture<'a, Result<usize, Error>> {
    let window = state.app().settings().payment_orphan_window;
    Box::pin(till_app::payments::sweep_orphans(state.app(), holder, window))
}

/// This node's jobs, running until [`Jobs::stop`].
pub struct Jobs {
    worker: Worker,
}

impl Jobs {
    pub fn start(state: &AppState) -> Jobs {
        let mut worker = Worker::default();
        // Names this node's turns; no other node takes one while it lasts.
        let holder = format!("node-{}-{}", std::process::id(), jiff::Timestamp::now().as_nanosecond());
        let jobs: [(&'static str, Pass); 2] = [
            ("customer retention", retention),
            ("payment orphan sweep", orphan_sweep),
        ];
        for (name, pass) in jobs {
            worker.spawn(|stopped| run(state.clone(), holder.clone(), name, pass, stopped));
        }
        Jobs { worker }
    }

    pub async fn stop(self) {
        self.worker.stop().await;
    }
}

async fn run(state: AppState, holder: String, name: &'static str, pass: Pass, mut stopped: StopSignal) {
    loop {
        match pass(&state, &holder).await {
            Ok(0) => {}
            Ok(done) => tracing::info!(job = name, done, "a job's pass did its work"),
            Err(error) => tracing::warn!(job = name, %error, "a job's pass failed; it runs again"),
        }
        tokio::select! {
            _ = tokio::time::sleep(LOOK_EVERY) => {}
            _ = stopped.changed() => break,
        }
    }
}
