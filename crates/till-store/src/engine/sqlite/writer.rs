//! SQLite's one writer: a thread that owns the writer connection and commits every unit of
//! work waiting at that moment in one transaction (group commit).
//!
//! Each unit runs inside the batch's transaction; the units are acknowledged only after the
//! single durable COMMIT. A unit that fails is rolled back alone, without disturbing the
//! others. Where the system allows it, the thread runs ahead of the request handlers.

use super::checkpointer::Checkpointer;
use crate::engine::Work;
use crate::engine::sql::Conn;
use crate::error::{Cause, DbError, StoreError};
use futures::FutureExt;
use futures::future::BoxFuture;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};
use tokio::sync::{mpsc, oneshot};

/// Starts the writer's thread on `conn`; answers the queue it takes units from. The thread
/// ends when the queue's last sender is dropped.
pub(super) fn spawn(
    conn: Conn,
    max_batch: usize,
    checkpointer: Arc<OnceLock<Checkpointer>>,
) -> Result<mpsc::Sender<Box<dyn Job>>, StoreError> {
    let (sender, receiver) = mpsc::channel(max_batch * 16);
    // Its own thread: the writer is the one path every sale takes in turn, and runs SQLite's
    // work itself instead of queueing it behind request handlers.
    std::thread::Builder::new()
        .name("till-sqlite-writer".into())
        .spawn(move || writer_thread(conn, receiver, max_batch, &checkpointer))
        .map_err(|error| StoreError::Config(format!("the SQLite writer could not start: {error}")))?;
    Ok(sender)
}

/// Queues `work` on `input` and waits for the commit of the batch it joins.
pub(super) async fn submit<I, T>(
    queue: &mpsc::Sender<Box<dyn Job>>,
    input: I,
    work: Work<I, T>,
) -> Result<T, StoreError>
where
    I: Send + Sync + 'static,
    T: Send + 'static,
{
    let (reply, answer) = oneshot::channel();
    let job = Box::new(Pending {
        input,
        work,
        outcome: None,
        reply,
    });
    queue.send(job).await.map_err(|_| StoreError::WriterStopped)?;
    answer.await.map_err(|_| StoreError::WriterStopped)?
}

/// The SQLite writer's nice value. Every sale waits for the writer in turn, so when the cores
/// are busy, a writer queued behind request handlers holds up all of them (see
/// docs/performance.md, "The SQLite writer's priority").
const WRITER_NICE: i32 = -10;

/// Sets the calling thread's nice value (on Linux, a thread's own): raising a thread's
/// priority takes `CAP_SYS_NICE` or a high enough `RLIMIT_NICE`, so this may be refused.
fn favour_this_thread(nice: i32) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no preconditions; setpriority changes a scheduling value of the
        // thread it names and touches no memory.
        let set = unsafe {
            let thread = libc::gettid();
            libc::setpriority(libc::PRIO_PROCESS, thread as libc::id_t, nice)
        };
        if set == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = nice;
        Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
    }
}

/// A queued unit of work with its input and the caller waiting for it.
pub(crate) trait Job: Send {
    /// Runs the unit; false when it failed and its savepoint must be rolled back.
    fn run<'a>(&'a mut self, conn: &'a mut Conn) -> BoxFuture<'a, bool>;
    /// Answers the caller once the batch's fate is known.
    fn finish(self: Box<Self>, commit: Result<(), Arc<DbError>>);
}

struct Pending<I, T> {
    input: I,
    work: Work<I, T>,
    outcome: Option<Result<T, StoreError>>,
    reply: oneshot::Sender<Result<T, StoreError>>,
}

impl<I: Send + Sync, T: Send> Job for Pending<I, T> {
    fn run<'a>(&'a mut self, conn: &'a mut Conn) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            let outcome = AssertUnwindSafe((self.work)(conn, &self.input))
                .catch_unwind()
                .await
                .unwrap_or_else(|_| Err(StoreError::Corrupt("a write panicked".to_owned())));
            let ok = outcome.is_ok();
            self.outcome = Some(outcome);
            ok
        })
    }

    fn finish(self: Box<Self>, commit: Result<(), Arc<DbError>>) {
        let result = match (self.outcome, commit) {
            // Its own failure stands: nothing it wrote was kept.
            (Some(Err(error)), _) => Err(error),
            (Some(Ok(value)), Ok(())) => Ok(value),
            (_, Err(error)) => Err(StoreError::CommitFailed(Cause(error))),
            (None, Ok(())) => Err(StoreError::Corrupt("a write was never run".to_owned())),
        };
        // The caller may have gone away (client disconnected); the write stands regardless.
        let _ = self.reply.send(result);
    }
}

/// The writer thread's body: asks to run ahead of request handlers, then runs the writer on a
/// runtime of its own until the queue closes.
fn writer_thread(
    writer: Conn,
    queue: mpsc::Receiver<Box<dyn Job>>,
    max_batch: usize,
    checkpointer: &OnceLock<Checkpointer>,
) {
    match favour_this_thread(WRITER_NICE) {
        Ok(()) => tracing::debug!(nice = WRITER_NICE, "the SQLite writer runs ahead of requests"),
        Err(error) => tracing::info!(
            %error,
            "the SQLite writer runs at the process's priority (grant CAP_SYS_NICE or LimitNICE to let it \
             run ahead of requests)"
        ),
    }
    match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime.block_on(run_writer(writer, queue, max_batch, checkpointer)),
        Err(error) => tracing::error!(%error, "the SQLite writer could not start"),
    }
}

async fn run_writer(
    mut conn: Conn,
    mut queue: mpsc::Receiver<Box<dyn Job>>,
    max_batch: usize,
    checkpointer: &OnceLock<Checkpointer>,
) {
    let mut batch: Vec<Box<dyn Job>> = Vec::with_capacity(max_batch);
    while queue.recv_many(&mut batch, max_batch).await > 0 {
        let committed = run_batch(&mut conn, &mut batch).await.map_err(Arc::new);
        match &committed {
            Ok(()) => {
                if let Some(checkpointer) = checkpointer.get() {
                    checkpointer.after_commit(&conn);
                }
            }
            Err(error) => {
                tracing::error!(error = %error, jobs = batch.len(), "SQLite batch failed to commit");
                // Whatever the batch left open is void; the next one starts clean.
                let _ = conn.run_script("ROLLBACK").await;
            }
        }
        for job in batch.drain(..) {
            job.finish(committed.clone());
        }
    }
}

async fn run_batch(conn: &mut Conn, batch: &mut [Box<dyn Job>]) -> Result<(), DbError> {
    let started = std::time::Instant::now();
    conn.run_script("BEGIN IMMEDIATE").await?;
    // Nearly every batch succeeds whole, so it first runs without savepoints, which cost each
    // job a copy of every page it touches. At the first refusal the batch starts over with
    // one savepoint per job, so that a refused job rolls back alone; the jobs that ran before
    // it run again on the same state and come to the same outcome.
    let mut refused = false;
    for job in batch.iter_mut() {
        if !job.run(conn).await {
            refused = true;
            break;
        }
    }
    if refused {
        conn.run_script("ROLLBACK").await?;
        conn.run_script("BEGIN IMMEDIATE").await?;
        for job in batch.iter_mut() {
            conn.run_script("SAVEPOINT job").await?;
            if job.run(conn).await {
                conn.run_script("RELEASE job").await?;
            } else {
                conn.run_script("ROLLBACK TO job; RELEASE job").await?;
            }
        }
    }
    let worked = started.elapsed();
    let committed = conn.run_script("COMMIT").await;
    crate::metrics::writer_batch(batch.len(), started.elapsed());
    tracing::debug!(
        jobs = batch.len(),
        refused,
        work_us = worked.as_micros() as u64,
        commit_us = (started.elapsed() - worked).as_micros() as u64,
        "SQLite batch"
    );
    committed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{SqliteSynchronous, scratch_sqlite_store};
    use crate::engine::sql::query;
    use crate::engine::sqlite::{Files, connect_writer};
    use std::time::Duration;

    /// A unit that brings the writer thread down, as a fault outside any unit's own guard would.
    struct Crash;

    impl Job for Crash {
        fn run<'a>(&'a mut self, _conn: &'a mut Conn) -> BoxFuture<'a, bool> {
            Box::pin(async { panic!("the SQLite writer stops") })
        }

        fn finish(self: Box<Self>, _commit: Result<(), Arc<DbError>>) {}
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stopped_writer_makes_the_store_unready() {
        let dir = tempfile::tempdir().unwrap();
        let (_, store) = scratch_sqlite_store(dir.path()).await;
        store.ping().await.unwrap();
        let writer = store.database().sqlite_writer().expect("a SQLite store");
        writer.queue().send(Box::new(Crash)).await.ok().unwrap();
        for _ in 0..300 {
            if writer.stopped() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(writer.stopped(), "the writer thread ended");
        assert!(matches!(store.ping().await, Err(StoreError::WriterStopped)));
    }

    /// Writes `input.0` into the scratch table, then refuses if `input.1` says so.
    fn note<'a>(conn: &'a mut Conn, input: &'a (i64, bool)) -> BoxFuture<'a, Result<i64, StoreError>> {
        Box::pin(async move {
            query("INSERT INTO scratch (n) VALUES ($1)")
                .bind(input.0)
                .execute(&mut *conn)
                .await?;
            if input.1 {
                return Err(StoreError::Corrupt(format!("job {} refused", input.0)));
            }
            Ok(input.0)
        })
    }

    fn job(n: i64, refuse: bool) -> (Box<dyn Job>, oneshot::Receiver<Result<i64, StoreError>>) {
        let (reply, answer) = oneshot::channel();
        let job = Box::new(Pending {
            input: (n, refuse),
            work: note,
            outcome: None,
            reply,
        });
        (job, answer)
    }

    async fn batch_of(conn: &mut Conn, refusals: &[bool]) -> Vec<Result<i64, String>> {
        let (mut jobs, answers): (Vec<_>, Vec<_>) = refusals
            .iter()
            .enumerate()
            .map(|(n, refuse)| job(n as i64, *refuse))
            .unzip();
        let committed = run_batch(conn, &mut jobs).await.map_err(Arc::new);
        for job in jobs {
            job.finish(committed.clone());
        }
        let mut outcomes = Vec::new();
        for answer in answers {
            outcomes.push(answer.await.unwrap().map_err(|error| error.to_string()));
        }
        outcomes
    }

    async fn kept(conn: &mut Conn) -> Vec<i64> {
        let rows = query("SELECT n FROM scratch ORDER BY n")
            .fetch_all(&mut *conn)
            .await
            .unwrap();
        rows.iter().map(|row| row.try_get("n").unwrap()).collect()
    }

    /// The nice value of a thread of this process, from `/proc`.
    #[cfg(target_os = "linux")]
    fn nice_of(thread: i32) -> i32 {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{thread}/stat")).unwrap();
        // Fields after the command's closing parenthesis; nice is the 19th field of the line.
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        fields[16].parse().unwrap()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_writer_thread_alone_is_favoured_when_the_system_allows_it() {
        // SAFETY: gettid has no preconditions.
        let caller = unsafe { libc::gettid() };
        let before = nice_of(caller);
        let (favoured, nice) = std::thread::spawn(|| {
            let outcome = favour_this_thread(WRITER_NICE);
            // SAFETY: as above.
            (outcome, nice_of(unsafe { libc::gettid() }))
        })
        .join()
        .unwrap();
        match favoured {
            Ok(()) => assert_eq!(nice, WRITER_NICE),
            // Unprivileged: refused, and nothing changed.
            Err(error) => {
                assert_eq!(error.kind(), std::io::ErrorKind::PermissionDenied, "{error}");
                assert_eq!(nice, before);
            }
        }
        assert_eq!(nice_of(caller), before, "only the thread that asked changes");
    }

    #[tokio::test]
    async fn a_refused_job_rolls_back_alone_and_the_rest_of_its_batch_commits() {
        let dir = tempfile::tempdir().unwrap();
        let files = Files {
            path: dir.path().join("t.db"),
            vfs: None,
        };
        let mut conn = connect_writer(&files, SqliteSynchronous::Full, true, 32).unwrap();
        conn.run_script("CREATE TABLE scratch (n INTEGER NOT NULL)")
            .await
            .unwrap();

        let outcomes = batch_of(&mut conn, &[false, false, false]).await;
        assert_eq!(outcomes, [Ok(0), Ok(1), Ok(2)]);
        assert_eq!(kept(&mut conn).await, [0, 1, 2]);

        conn.run_script("DELETE FROM scratch").await.unwrap();
        // The second job writes, then refuses: the batch runs again with savepoints.
        let outcomes = batch_of(&mut conn, &[false, true, false]).await;
        assert_eq!(outcomes[0], Ok(0));
        assert!(
            outcomes[1].as_ref().is_err_and(|e| e.contains("job 1 refused")),
            "{outcomes:?}"
        );
        assert_eq!(outcomes[2], Ok(2));
        assert_eq!(
            kept(&mut conn).await,
            [0, 2],
            "the first job is kept once, the refused one not at all"
        );
    }
}
