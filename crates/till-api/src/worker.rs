//! A background worker of this node (the webhook deliveries, the mailer, the jobs): tasks that
//! run until told to stop, each watching one signal. Stopping sends the signal, then waits for
//! every task to end. A worker dropped without being stopped signals too, as its tasks see
//! the signal's sender go, but waits for none of them.

use std::future::Future;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What a worker's task watches: it changes, or its sender goes, when the task is to end.
pub type StopSignal = watch::Receiver<bool>;

/// A worker's tasks, running until [`Worker::stop`] (or until dropped).
pub struct Worker {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl Default for Worker {
    /// A worker running no task yet.
    fn default() -> Worker {
        Worker {
            stop: watch::Sender::new(false),
            tasks: Vec::new(),
        }
    }
}

impl Worker {
    /// Runs the task that `task` makes of the worker's stop signal.
    pub fn spawn<F>(&mut self, task: impl FnOnce(StopSignal) -> F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.tasks.push(tokio::spawn(task(self.stop.subscribe())));
    }

    /// Signals every task to stop, then returns once each has ended.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            let _ = task.await;
        }
    }
}
