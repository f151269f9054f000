//! The store: one handle on the database and what a node keeps in memory beside it (the
//! fiscal key, the caches, where each register's next ticket goes).
//!
//! How writes and reads reach each engine is the `engine` module's business; a store reaches the
//! database through its narrow interface alone.

use crate::cache::Kept;
use crate::catalog::PricedArticles;
use crate::engine::sql::{Conn, Readers};
use crate::engine::{Database, Work, Writers, batch::Batch};
use crate::error::StoreError;
use crate::journal::TicketHeads;
use crate::sealer::Sealer;
use crate::sessions::ResolvedTokens;
use futures::future::BoxFuture;
use std::collections::HashSet;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use till_core::fiscal::FiscalKey;
use till_core::stored_value::InstrumentDigestKey;

pub use crate::engine::Engine;
use till_app::storage::ReadAt;

/// Tuning that the operator may change.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// PostgreSQL pool size; SQLite reader pool size.
    pub max_connections: u32,
    pub acquire_timeout: Duration,
    /// PostgreSQL `statement_timeout`: a stuck statement fails instead of holding locks.
    pub statement_timeout: Duration,
    /// SQLite `synchronous`: FULL makes an acknowledged commit survive power loss.
    pub sqlite_synchronous: SqliteSynchronous,
    /// Most units sharing one SQLite commit.
    pub max_batch: usize,
    /// How often a unit aborted by a lost race is run again before giving up.
    pub max_retries: u32,
    /// The longest an article written on another node may still be priced as it was here.
    pub catalog_cache_ttl: Duration,
    /// The longest a session closed or a cashier changed on another node may still be seen
    /// here as it was, by the token's requests (zero: read the session on every request).
    pub session_cache_ttl: Duration,
    /// Whether the SQLite writer at `synchronous = FULL` writes a commit's log frames together
    /// (see `engine::sqlite::gathered_log`); off, SQLite writes them one by one.
    pub sqlite_gathered_log: bool,
    /// The SQLite writer's page cache, in MiB: what the indexes every sale touches need; a
    /// bulk import of a big catalog reads far fewer pages back with more.
    pub sqlite_writer_cache_mib: u32,
    /// A PostgreSQL standby for the reads that may lag ([`ReadAt::Standby`]); `None`: the
    /// primary serves every read.
    pub read_url: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SqliteSynchronous {
    #[serde(alias = "FULL")]
    Full,
    #[serde(alias = "NORMAL")]
    Normal,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            max_connections: 16,
            acquire_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(10),
            sqlite_synchronous: SqliteSynchronous::Full,
            max_batch: 64,
            max_retries: 8,
            catalog_cache_ttl: Duration::from_secs(1),
            session_cache_ttl: Duration::from_secs(1),
            sqlite_gathered_log: true,
            sqlite_writer_cache_mib: 32,
            read_url: None,
        }
    }
}

/// What a database URL leads to, as a tool that only reads finds it: looking creates nothing,
/// neither a file nor a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// No SQLite database file at this path.
    NoFile(std::path::PathBuf),
    /// A file or a database that holds no till schema.
    NotTill,
    /// A till database whose schema is older than this build's: `till migrate` brings it up.
    Behind,
    /// A till database this build reads.
    Current,
}

/// The database behind till. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    database: Database,
    /// The key sealing new journal entries.
    fiscal_key: RwLock<Option<Arc<Sealer>>>,
    /// The key of the digests naming gift cards and credit notes in sealed records, read from
    /// the database once.
    instrument_key: tokio::sync::OnceCell<Arc<InstrumentDigestKey>>,
    /// Stores seen in the database. Stores are never deleted, so a hit needs no query.
    known_stores: RwLock<HashSet<String>>,
    catalog: Kept<PricedArticles>,
    sessions: Kept<ResolvedTokens>,
    /// Where each register's next ticket goes, as far as this process knows.
    ticket_heads: TicketHeads,
}

impl Store {
    pub(crate) fn known_stores(&self) -> &RwLock<HashSet<String>> {
        &self.inner.known_stores
    }

    pub(crate) fn catalog_cache(&self) -> &Kept<PricedArticles> {
        &self.inner.catalog
    }

    pub(crate) fn session_cache(&self) -> &Kept<ResolvedTokens> {
        &self.inner.sessions
    }

    pub(crate) fn ticket_heads(&self) -> &TicketHeads {
        &self.inner.ticket_heads
    }

    /// What is at `url`, without creating anything there: a tool that only reads (the audit,
    /// the auditor's bundle) looks first, so that in the wrong folder it says so rather than
    /// make an empty database.
    pub async fn inspect(url: &str) -> Result<Found, StoreError> {
        crate::engine::inspect(url).await
    }

    /// Connects without touching the schema; call [`Store::migrate`] before use, and
    /// [`Store::start_maintenance`] where the store serves for long.
    pub async fn connect(url: &str, options: &StoreOptions) -> Result<Store, StoreError> {
        Ok(Store::around(Database::connect(url, options).await?, options))
    }

    /// A store over SQLite files opened through the VFS `vfs`, for tests that model the disk.
    #[cfg(test)]
    pub(crate) async fn connect_through(
        url: &str,
        options: &StoreOptions,
        vfs: &'static std::ffi::CStr,
    ) -> Result<Store, StoreError> {
        Ok(Store::around(Database::connect_through(url, options, vfs)?, options))
    }

    fn around(database: Database, options: &StoreOptions) -> Store {
        Store {
            inner: Arc::new(Inner {
                database,
                fiscal_key: RwLock::new(None),
                instrument_key: tokio::sync::OnceCell::new(),
                known_stores: RwLock::new(HashSet::new()),
                catalog: Kept::new(options.catalog_cache_ttl),
                sessions: Kept::new(options.session_cache_ttl),
                ticket_heads: TicketHeads::default(),
            }),
        }
    }

    /// Starts the database's background work, which runs until the store is dropped or
    /// closed: on SQLite the thread that copies the log back into the database file, on
    /// PostgreSQL the fold of queued stock moves. The server starts it once the schema is
    /// migrated; a second call changes nothing.
    pub fn start_maintenance(&self) -> Result<(), StoreError> {
        self.inner
            .database
            .start_maintenance(Arc::downgrade(&self.inner), |inner: &Inner| &inner.database)
    }

    pub fn engine(&self) -> Engine {
        self.inner.database.engine()
    }

    /// How writers meet on this store's engine: what business code may choose its statements
    /// by.
    pub(crate) fn writers(&self) -> Writers {
        self.inner.database.writers()
    }

    pub(crate) fn database(&self) -> &Database {
        &self.inner.database
    }

    /// Brings the schema up to date. Safe to run from several nodes at once on PostgreSQL.
    /// Then writes what SQL could not (the search words of migration 0012, the credit notes'
    /// codes and the instruments' digests of migration 0019).
    pub async fn migrate(&self) -> Result<(), StoreError> {
        self.inner.database.migrate().await?;
        self.backfill_sku_words().await?;
        self.backfill_instruments().await
    }

    /// The deployment's key for the digests naming gift cards and credit notes in sealed
    /// records: made once, by the first node to need it, and kept in the database, where
    /// every node reads the same one.
    pub(crate) async fn instrument_key(&self) -> Result<Arc<InstrumentDigestKey>, StoreError> {
        self.inner
            .instrument_key
            .get_or_try_init(|| async {
                let secret = crate::secrets::instrument_digest_secret(self).await?;
                Ok(Arc::new(InstrumentDigestKey::from_secret(&secret)))
            })
            .await
            .cloned()
    }

    /// This node's connections and SQLite's writer queue, as they stand.
    pub fn connections(&self) -> till_app::storage::health::Connections {
        self.inner.database.connections()
    }

    /// Returns once every commit visible now is durable (see [`Database::barrier`]).
    pub async fn barrier(&self) -> Result<(), StoreError> {
        self.inner.database.barrier().await
    }

    pub async fn ping(&self) -> Result<(), StoreError> {
        self.inner.database.ping().await
    }

    /// Runs a read that may take seconds on a connection of its own, where it holds up no
    /// request (see [`Database::long_read`]).
    pub(crate) async fn long_read<T, F>(&self, read: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut Conn) -> BoxFuture<'c, Result<T, StoreError>> + Send + 'static,
    {
        self.inner.database.long_read(ReadAt::Primary, read).await
    }

    /// [`Store::long_read`] where `at` says, on the standby when it may lag.
    pub(crate) async fn long_read_at<T, F>(&self, at: ReadAt, read: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut Conn) -> BoxFuture<'c, Result<T, StoreError>> + Send + 'static,
    {
        self.inner.database.long_read(at, read).await
    }

    pub async fn close(&self) {
        self.inner.database.close().await;
    }

    /// Makes `key` the one that seals new journal entries, after publishing its public half so
    /// that what it signs can always be verified.
    pub async fn use_fiscal_key(&self, key: FiscalKey, now: jiff::Timestamp) -> Result<(), StoreError> {
        self.publish_fiscal_key(&key, now).await?;
        let sealer = Arc::new(Sealer::new(key)?);
        *self
            .inner
            .fiscal_key
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(sealer);
        Ok(())
    }

    pub(crate) fn fiscal_key(&self) -> Result<Arc<Sealer>, StoreError> {
        self.inner
            .fiscal_key
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
            .ok_or_else(|| StoreError::Config("no fiscal signing key is installed".to_owned()))
    }

    pub(crate) fn reader(&self) -> &Readers {
        self.inner.database.readers()
    }

    /// The readers where `at` says: the standby's, when there is one and the read may lag.
    pub(crate) fn reader_at(&self, at: ReadAt) -> &Readers {
        self.inner.database.readers_at(at)
    }

    /// Runs `work` on `input` in a transaction and returns once its effects are durable; in a
    /// dry run ([`crate::dry_run`]), never starts.
    pub(crate) async fn write<I, T>(&self, input: I, work: Work<I, T>) -> Result<T, StoreError>
    where
        I: Send + Sync + 'static,
        T: Send + 'static,
    {
        crate::dry_run::stop_before_writing().await;
        self.inner.database.write(input, work).await
    }

    /// Whether [`Store::write_one_statement`] takes batches (PostgreSQL).
    pub(crate) fn batches_run_alone(&self) -> bool {
        self.inner.database.batches_run_alone()
    }

    /// Runs `batch` outside any transaction, as one statement, which commits whole, durably,
    /// or fails whole; only where [`Store::batches_run_alone`].
    pub(crate) async fn write_one_statement(&self, batch: Batch) -> Result<(), StoreError> {
        crate::dry_run::stop_before_writing().await;
        self.inner.database.run_alone(batch).await
    }
}

/// A store on a SQLite database `till.db` of its own in `dir`, with default options, and the
/// database file's path, for tests that look at the file.
#[cfg(test)]
pub(crate) async fn scratch_sqlite_store(dir: &std::path::Path) -> (std::path::PathBuf, Store) {
    let path = dir.join("till.db");
    let store = Store::connect(&format!("sqlite://{}", path.display()), &StoreOptions::default())
        .await
        .expect("a SQLite store in a scratch directory");
    (path, store)
}

/// The schema's database file in `dir`, migrated and closed, opened again by a plain
/// connection, for tests that read its layout and SQLite's plans.
#[cfg(test)]
pub(crate) async fn migrated_scratch_database(dir: &std::path::Path) -> rusqlite::Connection {
    let (path, store) = scratch_sqlite_store(dir).await;
    store.migrate().await.expect("migrations apply");
    store.close().await;
    rusqlite::Connection::open(&path).expect("the migrated database opens")
}

/// The steps of SQLite's plan for `sql` (written with `$n` placeholders) with `params` bound.
#[cfg(test)]
pub(crate) fn query_plan(conn: &rusqlite::Connection, sql: &str, params: &[&str]) -> Vec<String> {
    let sql = crate::engine::sql::numbered_placeholders(sql);
    let mut plan = conn
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .expect("the statement prepares");
    plan.query_map(rusqlite::params_from_iter(params), |row| row.get::<_, String>(3))
        .and_then(|steps| steps.collect())
        .expect("the plan reads")
}

/// SQLite's plan for a statement built with its values (integers and texts).
#[cfg(test)]
pub(crate) fn plan_of(conn: &rusqlite::Connection, query: &crate::sql::Query) -> Vec<String> {
    use crate::sql::Param;
    let params: Vec<String> = query
        .params()
        .iter()
        .map(|param| match param {
            Param::Int(Some(value)) => value.to_string(),
            Param::Text(Some(value)) => value.clone(),
            other => panic!("a plan is read with integers and texts, not {other:?}"),
        })
        .collect();
    let params: Vec<&str> = params.iter().map(String::as_str).collect();
    query_plan(conn, query.sql(), &params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sql::query;

    #[tokio::test]
    async fn sqlite_connections_count_the_readers_lent_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (_, store) = scratch_sqlite_store(dir.path()).await;
        let before = store.connections();
        assert_eq!((before.most, before.writer_queue), (None, Some(0)));
        let first = store.reader().acquire().await.unwrap();
        let second = store.reader().acquire().await.unwrap();
        let lent = store.connections();
        assert_eq!(lent.busy, before.busy + 2);
        drop((first, second));
        let back = store.connections();
        assert_eq!(back.busy, before.busy);
        assert_eq!(
            back.idle,
            before.idle.max(2),
            "both readers are kept for the next reads"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn long_sqlite_reads_leave_the_request_threads_free() {
        let dir = tempfile::tempdir().unwrap();
        let (_, store) = scratch_sqlite_store(dir.path()).await;
        // One runtime thread: the read finishes only if that thread is free to run the task
        // that signals it.
        let (signal, signalled) = std::sync::mpsc::channel();
        tokio::spawn(async move { signal.send(()).unwrap() });
        let answer = store
            .long_read(move |conn| {
                Box::pin(async move {
                    let waited = signalled.recv_timeout(Duration::from_secs(30));
                    let row = query("SELECT 7 AS n").fetch_one(&mut *conn).await?;
                    Ok((waited.is_ok(), row.try_get::<i64>("n")?))
                })
            })
            .await
            .unwrap();
        assert_eq!(answer, (true, 7), "the read ran on the runtime's only thread");
    }
}
