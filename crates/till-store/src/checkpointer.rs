//! Copies SQLite's write-ahead log back into the database file on a thread of its own.
//!
//! Left to SQLite, the commit that crosses the automatic checkpoint mark copies the log into
//! the database file before it returns, and every sale of that batch waits for the copy and
//! its fsync. Here the writer only nudges this thread after a commit; at most once per
//! [`INTERVAL`] it runs a PASSIVE checkpoint, which copies what no reader still needs, waits
//! for nobody and never holds the writer up. The writer keeps SQLite's own checkpoint at a
//! much higher mark ([`WRITER_BACKSTOP_PAGES`]) as a backstop: by then nearly every page has
//! been copied already, and its checkpoint lets the log start again from the beginning,
//! which a checkpoint running beside a busy writer can rarely do.

use crate::error::StoreError;
use crate::sql::open_sqlite;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::time::Duration;

/// How often the log is copied back while sales are coming in. Copies further apart write a
/// page that many sales change (stock, index edges, chain heads) once for more of them;
/// 25 ms copies cost the writer's batches more than they saved, 250 ms left the backstop
/// more to do.
const INTERVAL: Duration = Duration::from_millis(100);

/// The writer's own automatic checkpoint, in pages: 64 MiB of log at 4 KiB pages.
pub(crate) const WRITER_BACKSTOP_PAGES: u32 = 16_000;

pub(crate) struct Checkpointer {
    nudge: SyncSender<()>,
}

impl Checkpointer {
    /// Opens its own connection to the database at `path` and starts the thread, which ends
    /// when the checkpointer is dropped.
    pub(crate) fn start(path: &Path, synchronous: &str) -> Result<Checkpointer, StoreError> {
        let conn = open_sqlite(path)?;
        conn.execute_batch(synchronous)?;
        // One pending nudge is enough: it means "something was committed since".
        let (nudge, nudges) = mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("till-sqlite-checkpoint".into())
            .spawn(move || copy_back_while_nudged(&conn, &nudges))
            .map_err(|error| StoreError::Config(format!("the SQLite checkpointer could not start: {error}")))?;
        Ok(Checkpointer { nudge })
    }

    /// Tells the thread that a transaction was committed. Never blocks.
    pub(crate) fn nudge(&self) {
        let _ = self.nudge.try_send(());
    }
}

fn copy_back_while_nudged(conn: &rusqlite::Connection, nudges: &Receiver<()>) {
    // Idle between nudges; a nudge that arrives while a copy runs brings another one
    // `INTERVAL` later, for the commits the running copy may have missed.
    while nudges.recv().is_ok() {
        std::thread::sleep(INTERVAL);
        if let Err(error) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            tracing::warn!(%error, "a background checkpoint failed; the next commit retries it");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::db::{Store, StoreOptions};
    use crate::error::StoreError;
    use crate::sql::Conn;
    use futures::future::BoxFuture;
    use std::time::Duration;

    fn create_and_note<'a>(conn: &'a mut Conn, _: &'a ()) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            conn.run_script("CREATE TABLE scratch (n INTEGER NOT NULL); INSERT INTO scratch (n) VALUES (7)")
                .await?;
            Ok(())
        })
    }

    /// The database file by itself, copied without its log (a careless backup), soon holds
    /// what was committed: far below the writer's own checkpoint mark, so the checkpointer
    /// thread copied it back.
    #[tokio::test]
    async fn committed_writes_reach_the_database_file_without_the_writers_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("till.db");
        let store = Store::connect(&format!("sqlite://{}", path.display()), &StoreOptions::default())
            .await
            .unwrap();
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
