//! Copies SQLite's write-ahead log back into the database file on a thread of its own.
//!
//! Left to SQLite, the commit that crosses the automatic checkpoint mark copies the log into
//! the database file before it returns, and every sale of that batch waits for the copy and
//! its fsync. Here the writer only nudges this thread after a commit; at most once per
//! [`INTERVAL`] it runs a PASSIVE checkpoint, which copies what no reader still needs, waits
//! for nobody and never holds the writer up.
//!
//! Two things a copy beside a busy writer does not do by itself, since by the time it ends the
//! writer has committed more:
//!
//! - Sync the database file: SQLite syncs it only in a checkpoint that reaches the end of the
//!   log, so every page copied before waits for that one, and it was the writer's: a long
//!   fsync inside a sale's commit. This thread syncs the file after each copy instead.
//! - Let the log start again from its beginning, which takes a checkpoint that copied all of
//!   it. When this thread has copied a long log whole, the writer copies the little committed
//!   since, between two batches ([`Checkpointer::after_commit`]), and its next write starts the
//!   log over.
//!
//! SQLite's own checkpoint stays on the writer at a much higher mark ([`WRITER_BACKSTOP_PAGES`]),
//! for when readers keep the log from starting over.

use super::Files;
use crate::engine::sql::Conn;
use crate::error::StoreError;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::time::{Duration, Instant};

/// How often the log is copied back while sales are coming in. Copies further apart write a
/// page that many sales change (stock, index edges, chain heads) once for more of them; much
/// closer copies cost the writer's batches more than they saved, much further ones left the
/// backstop more to do (see docs/performance.md, "The SQLite checkpointer").
const INTERVAL: Duration = Duration::from_millis(100);

/// A log this long (47 MiB at 4 KiB pages), once copied whole by this thread, is started
/// over by the writer. A much shorter one had the database file synced far more often under
/// load, writing more to disk for fewer sales (see docs/performance.md, "The SQLite
/// checkpointer").
const RESTART_PAGES: i64 = 12_000;

/// The writer's own automatic checkpoint, in pages: 125 MiB of log at 4 KiB pages, above
/// where a log under load is started over.
pub(crate) const WRITER_BACKSTOP_PAGES: u32 = 32_000;

pub(crate) struct Checkpointer {
    nudge: SyncSender<()>,
    /// Set when this thread copied a log of [`RESTART_PAGES`] or more whole; the writer takes
    /// it.
    restart_due: Arc<AtomicBool>,
}

impl Checkpointer {
    /// Opens its own connection to the database in `files` and starts the thread, which ends
    /// when the checkpointer is dropped.
    pub(crate) fn start(files: &Files, synchronous: &str) -> Result<Checkpointer, StoreError> {
        let conn = super::open(&files.path, files.vfs)?;
        conn.execute_batch(synchronous).map_err(crate::error::db)?;
        // One pending nudge is enough: it means "something was committed since".
        let (nudge, nudges) = mpsc::sync_channel(1);
        let restart_due = Arc::new(AtomicBool::new(false));
        let flag = restart_due.clone();
        std::thread::Builder::new()
            .name("till-sqlite-checkpoint".into())
            .spawn(move || copy_back_while_nudged(&conn, &nudges, &flag))
            .map_err(|error| StoreError::Config(format!("the SQLite checkpointer could not start: {error}")))?;
        Ok(Checkpointer { nudge, restart_due })
    }

    /// Called by the writer after each commit, outside any transaction: nudges the thread,
    /// and when the thread has lately copied a long log whole, copies what was committed
    /// since, so that the writer's next write starts the log over.
    pub(crate) fn after_commit(&self, writer: &Conn) {
        let _ = self.nudge.try_send(());
        if !self.restart_due.swap(false, Ordering::Relaxed) {
            return;
        }
        let Some(writer) = writer.as_sqlite() else {
            return;
        };
        let started = Instant::now();
        match checkpoint(writer) {
            Ok(outcome) => tracing::debug!(
                log = outcome.log,
                copied = outcome.copied,
                took_us = started.elapsed().as_micros() as u64,
                "SQLite log copied whole for a restart"
            ),
            Err(error) => tracing::warn!(%error, "the writer's checkpoint failed; the backstop remains"),
        }
    }
}

/// What a PASSIVE checkpoint did: the pages in the log, and how many of them are now in the
/// database file (both -1 when another checkpoint was running).
struct Outcome {
    log: i64,
    copied: i64,
}

fn checkpoint(conn: &rusqlite::Connection) -> rusqlite::Result<Outcome> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
        Ok(Outcome {
            log: row.get(1)?,
            copied: row.get(2)?,
        })
    })
}

fn copy_back_while_nudged(conn: &rusqlite::Connection, nudges: &Receiver<()>, restart_due: &AtomicBool) {
    // Idle between nudges; a nudge that arrives while a copy runs brings another one
    // `INTERVAL` later, for the commits the running copy may have missed.
    while nudges.recv().is_ok() {
        std::thread::sleep(INTERVAL);
        let Some(outcome) = copy(conn, Sync::Skip) else {
            continue;
        };
        if outcome.log >= RESTART_PAGES && outcome.copied == outcome.log {
            // The pages copied since the last restart are written once, here; then a second
            // pass takes most of what the writer committed meanwhile, so the writer is left
            // with the few milliseconds' worth since.
            if synced(conn) && copy(conn, Sync::After).is_some_and(|again| again.copied == again.log) {
                restart_due.store(true, Ordering::Relaxed);
            }
        }
    }
}

/// Whether a copy syncs the database file after it.
#[derive(Clone, Copy, PartialEq)]
enum Sync {
    /// Left to the copy that hands over a restart: a page that many sales change is then
    /// written once for all of them, not once per copy.
    Skip,
    After,
}

/// A PASSIVE checkpoint, then the database file synced if asked; `None` when either failed
/// (the next one tries again).
fn copy(conn: &rusqlite::Connection, sync: Sync) -> Option<Outcome> {
    let started = Instant::now();
    let outcome = checkpoint(conn)
        .inspect_err(|error| tracing::warn!(%error, "a background checkpoint failed; the next commit retries it"))
        .ok()?;
    let copied_at = started.elapsed();
    if sync == Sync::After && outcome.copied > 0 && !synced(conn) {
        return None;
    }
    tracing::debug!(
        log = outcome.log,
        copied = outcome.copied,
        copy_us = copied_at.as_micros() as u64,
        sync_us = (started.elapsed() - copied_at).as_micros() as u64,
        "SQLite checkpoint"
    );
    Some(outcome)
}

/// Syncs the database file; false (and logged) when that failed.
fn synced(conn: &rusqlite::Connection) -> bool {
    sync_database_file(conn)
        .inspect_err(|error| tracing::warn!(%error, "syncing the database file failed; the next restart tries again"))
        .is_ok()
}

/// Flushes the database file to disk through SQLite's own handle on it. Not through a file
/// of our own: closing a second descriptor on the file would drop the locks SQLite holds
/// through the first (POSIX advisory locks belong to the process and the file).
fn sync_database_file(conn: &rusqlite::Connection) -> Result<(), StoreError> {
    use rusqlite::ffi;
    let failed = |what: &str| StoreError::Corrupt(format!("syncing the database file: {what}"));
    let mut file: *mut ffi::sqlite3_file = std::ptr::null_mut();
    // SAFETY: the connection is open and used by this thread alone, with no statement running;
    // SQLITE_FCNTL_FILE_POINTER writes the main database's `sqlite3_file` pointer into `file`,
    // which lives as long as the connection.
    let code = unsafe {
        ffi::sqlite3_file_control(
            conn.handle(),
            c"main".as_ptr(),
            ffi::SQLITE_FCNTL_FILE_POINTER,
            (&raw mut file).cast(),
        )
    };
    if code != ffi::SQLITE_OK || file.is_null() {
        return Err(failed("no file handle"));
    }
    // SAFETY: `file` is the open database file of this connection; its methods are SQLite's
    // VFS's, and xSync is what SQLite itself calls to sync it.
    let code = unsafe {
        let methods = (*file).pMethods;
        let sync = methods
            .as_ref()
            .and_then(|methods| methods.xSync)
            .ok_or_else(|| failed("no sync method"))?;
        sync(file, ffi::SQLITE_SYNC_NORMAL)
    };
    if code != ffi::SQLITE_OK {
        return Err(failed(&format!("SQLite answered {code}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::WRITER_BACKSTOP_PAGES;
    use crate::db::scratch_sqlite_store;
    use crate::engine::sql::{Conn, query};
    use crate::error::StoreError;
    use futures::future::BoxFuture;
    use std::time::Duration;

    fn create_and_note<'a>(conn: &'a mut Conn, _: &'a ()) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            conn.run_script("CREATE TABLE scratch (n INTEGER NOT NULL); INSERT INTO scratch (n) VALUES (7)")
                .await?;
            Ok(())
        })
    }

    /// A row's worth of bytes.
    #[derive(Clone)]
    struct Blob(Vec<u8>);

    /// Replaces the scratch table's one row with `blob`: every commit appends its pages to the
    /// log, while the database file stays the size of one row.
    fn replace_blob<'a>(conn: &'a mut Conn, blob: &'a Blob) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            query("DELETE FROM scratch").execute(&mut *conn).await?;
            query("INSERT INTO scratch (b) VALUES ($1)")
                .bind(blob.0.clone())
                .execute(&mut *conn)
                .await?;
            Ok(())
        })
    }

    /// Under writes that never pause, the log still starts over from its beginning before it
    /// reaches the writer's own checkpoint mark, where that checkpoint's copy and fsync would
    /// hold up every sale of a batch. Had the writer's checkpoint run, the log file would be at
    /// least the mark's size: a log file never shrinks here, it only starts over.
    #[tokio::test]
    async fn the_log_starts_over_under_continuous_writes_before_the_writers_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let (_, store) = scratch_sqlite_store(dir.path()).await;
        store.start_maintenance().unwrap();
        store
            .write((), |conn, _| {
                Box::pin(async move {
                    conn.run_script("CREATE TABLE scratch (b BLOB NOT NULL)").await?;
                    Ok(())
                })
            })
            .await
            .unwrap();
        // Twice the backstop's worth of pages, 64 at a time.
        let blob = Blob(vec![7u8; 64 * 4096]);
        let backstop_bytes = u64::from(WRITER_BACKSTOP_PAGES) * 4096;
        let mut logged = 0;
        while logged < 2 * backstop_bytes {
            store.write(blob.clone(), replace_blob).await.unwrap();
            logged += blob.0.len() as u64;
        }
        let log_file = std::fs::metadata(dir.path().join("till.db-wal")).unwrap().len();
        assert!(
            log_file < backstop_bytes,
            "the log file grew to {log_file} bytes; the writer's own checkpoint is at {backstop_bytes}"
        );
        store.close().await;
    }

    /// The database file by itself, copied without its log (a careless backup), soon holds
    /// what was committed: far below the writer's own checkpoint mark, so the checkpointer
    /// thread copied it back.
    #[tokio::test]
    async fn committed_writes_reach_the_database_file_without_the_writers_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let (path, store) = scratch_sqlite_store(dir.path()).await;
        store.start_maintenance().unwrap();
        store.write((), create_and_note).await.unwrap();

        let copy = dir.path().join("copy.db");
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            std::fs::copy(&path, &copy).unwrap();
            let _ = std::fs::remove_file(dir.path().join("copy.db-wal"));
            let found = rusqlite::Connection::open(&copy)
                .and_then(|conn| conn.query_row("SELECT n FROM scratch", [], |row| row.get::<_, i64>(0)))
                .ok();
            if found == Some(7) {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the database file never received the committed row"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        store.close().await;
    }
}
