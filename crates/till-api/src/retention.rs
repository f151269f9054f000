//! The retention job: once a day, on one node at a time, the customers without activity for
//! the retention period have their personal data erased (docs/customers.md, "Retention").
//!
//! Every node looks often and cheaply; the database hands the day's turn to the first node
//! that asks once the previous turn has run out, so two nodes never run it at once.

use crate::state::AppState;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How often a node asks whether the day's turn is free.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// This node's retention job, running until [`Retention::stop`].
pub struct Retention {
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl Retention {
    pub fn start(state: &AppState) -> Retention {
        let (stop, mut stopped) = watch::channel(false);
        let state = state.clone();
        // Names this node's turn; no other node takes it while it lasts.
        let holder = format!("node-{}-{}", std::process::id(), jiff::Timestamp::now().as_nanosecond());
        let task = tokio::spawn(async move {
            loop {
                match till_app::customers::run_retention(state.app(), &holder).await {
                    Ok(0) => {}
                    Ok(erased) => tracing::info!(erased, "customers erased after the retention period"),
                    Err(error) => tracing::warn!(%error, "the customer retention job failed; it runs again"),
                }
                tokio::select! {
                    _ = tokio::time::sleep(LOOK_EVERY) => {}
                    _ = stopped.changed() => break,
                }
            }
        });
        Retention { stop, task: Some(task) }
    }

    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}
