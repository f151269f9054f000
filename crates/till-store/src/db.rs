//! Connections and the two write paths.
//!
//! All SQL is written once, with `$n` placeholders and portable types, and runs through
//! [`crate::sql`] on either engine. What differs per engine is how a write reaches the disk:
//!
//! - SQLite has one writer connection owned by a thread. Writers queue units of work; the
//!   thread runs every unit waiting at that moment in one transaction, each inside its own
//!   savepoint, and acknowledges them only after the single durable COMMIT (group commit). A
//!   unit that fails is rolled back to its savepoint without disturbing the others. Reads use
//!   read-only connections of their own and run on the caller's thread (see [`crate::sql`]).
//!   Another thread copies the write-ahead log back into the database file (see
//!   [`crate::checkpointer`]). At `synchronous = FULL` the writer hands a commit's log frames
//!   to the file in a few writes rather than two per page (see [`crate::gathered_log`]). Where
//!   the system allows it, the writer's thread runs ahead of the request handlers.
//! - PostgreSQL runs each unit in its own transaction on a pooled connection and runs it again
//!   when the database aborts it for a serialization failure or a deadlock.
//!
//! Callers see one method, [`Store::write`], and never know which path they took.

use crate::batch::Batch;
use crate::catalog_cache::CatalogCache;
use crate::checkpointer::{Checkpointer, WRITER_BACKSTOP_PAGES};
use crate::error::{DbError, StoreError};
use crate::journal::TicketHeads;
use crate::migrations;
use crate::sealer::Sealer;
use crate::session_cache::SessionCache;
use crate::sql::{Conn, LogWrites, Readers, SqliteReaders, open_sqlite, query, sqlite_path};
use crate::stock;
use futures::FutureExt;
use futures::future::BoxFuture;
use sqlx::any::AnyPoolOptions;
use sqlx::{AnyConnection, Connection, Executor};
use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;
use till_core::fiscal::FiscalKey;
use tokio::sync::{mpsc, oneshot};

/// A unit of work: runs inside one transaction, may be run more than once (PostgreSQL retries
/// it after a lost race), so it must not have effects outside the connection.
pub(crate) type Work<I, T> = for<'a> fn(&'a mut Conn, &'a I) -> BoxFuture<'a, Result<T, StoreError>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

impl Engine {
    pub fn from_url(url: &str) -> Result<Engine, StoreError> {
        if url.starts_with("sqlite:") {
            Ok(Engine::Sqlite)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Ok(Engine::Postgres)
        } else {
            Err(StoreError::Config(
                "database URL must start with sqlite:// or postgres://".to_owned(),
            ))
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Sqlite => "sqlite",
            Engine::Postgres => "postgres",
        }
    }
}

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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqliteSynchronous {
    Full,
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
        }
    }
}

/// The database behind till. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Engine,
    url: String,
    readers: Readers,
    writer: Writer,
    max_retries: u32,
    /// The key sealing new journal entries.
    fiscal_key: RwLock<Option<Arc<Sealer>>>,
    /// Stores seen in the database. Stores are never deleted, so a hit needs no query.
    known_stores: RwLock<HashSet<String>>,
    catalog: CatalogCache,
    sessions: SessionCache,
    /// Where each register's next ticket goes, as far as this process knows.
    ticket_heads: TicketHeads,
}

enum Writer {
    Sqlite(mpsc::Sender<Box<dyn Job>>),
    Postgres,
}

impl Store {
    pub(crate) fn known_stores(&self) -> &RwLock<HashSet<String>> {
        &self.inner.known_stores
    }

    pub(crate) fn catalog_cache(&self) -> &CatalogCache {
        &self.inner.catalog
    }

    pub(crate) fn session_cache(&self) -> &SessionCache {
        &self.inner.sessions
    }

    pub(crate) fn ticket_heads(&self) -> &TicketHeads {
        &self.inner.ticket_heads
    }

    /// Connects without touching the schema; call [`Store::migrate`] before use.
    pub async fn connect(url: &str, options: &StoreOptions) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let engine = Engine::from_url(url)?;
        let (url, readers, writer) = match engine {
            Engine::Sqlite => {
                let path = sqlite_path(url)?;
                create_private(&path)?;
                let writer = connect_sqlite_writer(&path, options.sqlite_synchronous)?;
                let checkpointer = Checkpointer::start(&path, synchronous_pragma(options.sqlite_synchronous))?;
                let readers = Readers::Sqlite(SqliteReaders::new(path, options.max_connections as usize));
                let (sender, receiver) = mpsc::channel(options.max_batch.max(1) * 16);
                // Its own thread: the writer is the one path every sale takes in turn, and
                // runs SQLite's work itself instead of queueing it behind request handlers.
                let max_batch = options.max_batch.max(1);
                std::thread::Builder::new()
                    .name("till-sqlite-writer".into())
                    .spawn(move || sqlite_writer_thread(writer, receiver, max_batch, checkpointer))
                    .map_err(|error| StoreError::Config(format!("the SQLite writer could not start: {error}")))?;
                (sqlite_url_creating_file(url), readers, Writer::Sqlite(sender))
            }
            Engine::Postgres => {
                let statement_timeout = options.statement_timeout.as_millis();
                let pool = AnyPoolOptions::new()
                    .max_connections(options.max_connections.max(1))
                    .acquire_timeout(options.acquire_timeout)
                    // A ping on every acquire is one more round trip per query under load. A
                    // connection used within the last second is taken to work; one idle longer
                    // (the server may have restarted meanwhile) is pinged first.
                    .test_before_acquire(false)
                    .before_acquire(|conn, meta| {
                        Box::pin(async move {
                            if meta.idle_for > IDLE_BEFORE_PING {
                                sqlx::Connection::ping(conn).await?;
                            }
                            Ok(true)
                        })
                    })
                    // Generic plans: left to choose, PostgreSQL plans a prepared statement
                    // afresh for each of its first executions, and a sale's statement of CTEs
                    // has many shapes and a hundred parameters. Every statement here finds rows
                    // by key, so its plan does not depend on the values bound.
                    .after_connect(move |conn, _| {
                        Box::pin(async move {
                            let set = format!(
                                "SET statement_timeout = {statement_timeout}; SET lock_timeout = {statement_timeout}; \
                                 SET plan_cache_mode = force_generic_plan"
                            );
                            conn.execute(sqlx::AssertSqlSafe(set)).await.map(drop)
                        })
                    })
                    .connect(url)
                    .await?;
                (url.to_owned(), Readers::Postgres(pool), Writer::Postgres)
            }
        };
        let store = Store {
            inner: Arc::new(Inner {
                engine,
                url,
                readers,
                writer,
                max_retries: options.max_retries,
                fiscal_key: RwLock::new(None),
                known_stores: RwLock::new(HashSet::new()),
                catalog: CatalogCache::new(options.catalog_cache_ttl),
                sessions: SessionCache::new(options.session_cache_ttl),
                ticket_heads: TicketHeads::default(),
            }),
        };
        if engine == Engine::Postgres {
            tokio::spawn(fold_stock_moves_while_open(Arc::downgrade(&store.inner)));
        }
        Ok(store)
    }

    pub fn engine(&self) -> Engine {
        self.inner.engine
    }

    /// Brings the schema up to date. Safe to run from several nodes at once on PostgreSQL
    /// (sqlx holds an advisory lock while it migrates).
    pub async fn migrate(&self) -> Result<(), StoreError> {
        let mut migrator = match self.inner.engine {
            Engine::Sqlite => migrations::sqlite(),
            Engine::Postgres => migrations::postgres(),
        };
        // In a rolling deploy the first node of a new release migrates while nodes of the
        // previous one still run, and may restart: they must accept migrations they do not
        // know. Releases only add to the schema, so the older code still finds what it reads.
        migrator.set_ignore_missing(true);
        match self.inner.engine {
            Engine::Sqlite => {
                // Its own connection: migrations manage their own transactions, which cannot
                // nest inside the writer's batches.
                let mut conn = AnyConnection::connect(&self.inner.url).await?;
                conn.execute("PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON")
                    .await?;
                migrator.run(&mut conn).await.map_err(migrate_error)?;
                conn.close().await?;
            }
            Engine::Postgres => {
                let pool = self.postgres_pool()?;
                migrator.run(pool).await.map_err(migrate_error)?
            }
        }
        Ok(())
    }

    /// Succeeds when the database answers a trivial query and, on SQLite, the writer every
    /// sale goes through is still running.
    pub async fn ping(&self) -> Result<(), StoreError> {
        if let Writer::Sqlite(queue) = &self.inner.writer
            && queue.is_closed()
        {
            return Err(StoreError::WriterStopped);
        }
        query("SELECT 1").fetch_one(&self.inner.readers).await?;
        Ok(())
    }

    /// Runs a read that may take seconds (a register's whole journal, an archive's period) on
    /// a connection of its own, where it holds up no request: SQLite reads run on the calling
    /// thread, so there it goes to the blocking pool; PostgreSQL's wait on the network, so
    /// there it stays on the caller's task.
    pub(crate) async fn long_read<T, F>(&self, read: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut Conn) -> BoxFuture<'c, Result<T, StoreError>> + Send + 'static,
    {
        let mut conn = self.reader().acquire().await?;
        match self.inner.engine {
            Engine::Postgres => read(&mut conn).await,
            Engine::Sqlite => {
                let runtime = tokio::runtime::Handle::current();
                tokio::task::spawn_blocking(move || runtime.block_on(read(&mut conn)))
                    .await
                    .map_err(|_| StoreError::Corrupt("a long read stopped before its end".to_owned()))?
            }
        }
    }

    pub async fn close(&self) {
        self.inner.readers.close().await;
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
        &self.inner.readers
    }

    fn postgres_pool(&self) -> Result<&sqlx::AnyPool, StoreError> {
        self.inner
            .readers
            .postgres()
            .ok_or_else(|| StoreError::Config("PostgreSQL without a pool".to_owned()))
    }

    /// Runs `work` on `input` in a transaction and returns once its effects are durable.
    pub(crate) async fn write<I, T>(&self, input: I, work: Work<I, T>) -> Result<T, StoreError>
    where
        I: Send + Sync + 'static,
        T: Send + 'static,
    {
        match &self.inner.writer {
            Writer::Sqlite(queue) => {
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
            Writer::Postgres => self.write_postgres(&input, work).await,
        }
    }

    /// PostgreSQL: runs `batch` outside any transaction. It is one statement there, which
    /// commits whole, durably, or fails whole.
    pub(crate) async fn write_one_statement(&self, batch: Batch) -> Result<(), StoreError> {
        if self.inner.engine != Engine::Postgres {
            return Err(StoreError::Config("one-statement writes are for PostgreSQL".to_owned()));
        }
        let mut conn = self.inner.readers.acquire().await?;
        batch.run(&mut conn).await
    }

    async fn write_postgres<I, T>(&self, input: &I, work: Work<I, T>) -> Result<T, StoreError> {
        let mut attempt = 0;
        loop {
            let result: Result<T, StoreError> = async {
                let pool = self.postgres_pool()?;
                let mut conn = Conn::postgres_transaction(pool.begin().await?);
                let outcome = work(&mut conn, input).await;
                let tx = conn
                    .into_postgres_transaction()
                    .ok_or_else(|| StoreError::Corrupt("a PostgreSQL write lost its transaction".to_owned()))?;
                match outcome {
                    Ok(value) => {
                        tx.commit().await?;
                        Ok(value)
                    }
                    Err(error) => {
                        // A failed rollback only means the connection is gone; the
                        // transaction is void either way.
                        let _ = tx.rollback().await;
                        Err(error)
                    }
                }
            }
            .await;
            match result {
                Err(error) if error.is_retryable() && attempt < self.inner.max_retries => {
                    attempt += 1;
                    tracing::debug!(attempt, "transaction lost a race; running it again");
                    tokio::time::sleep(backoff(attempt)).await;
                }
                // Still losing after every retry: nothing was written, and the client may
                // send the same request again; that is a busy answer, not a failure.
                Err(StoreError::Database(DbError::Postgres(error))) if crate::error::is_retryable(&error) => {
                    return Err(StoreError::Contended(DbError::Postgres(error)));
                }
                other => return other,
            }
        }
    }
}

/// Folds the stock moves sales queue (see `stock.rs`) every [`stock::FOLD_EVERY`], at once
/// again while a backlog remains, until the store is dropped or closed. The first fold comes
/// one period after connecting, once the schema is migrated.
async fn fold_stock_moves_while_open(inner: Weak<Inner>) {
    let mut pause = stock::FOLD_EVERY;
    loop {
        tokio::time::sleep(pause).await;
        let Some(inner) = inner.upgrade() else { return };
        let store = Store { inner };
        if store.reader().is_closed() {
            return;
        }
        pause = match store.fold_stock_moves().await {
            Ok(folded) => {
                metrics::counter!(STOCK_MOVES_FOLDED).increment(folded);
                match folded >= stock::FOLD_LIMIT as u64 {
                    true => Duration::ZERO,
                    false => stock::FOLD_EVERY,
                }
            }
            Err(error) => {
                tracing::warn!(%error, "stock moves not folded; levels still count them; trying again");
                stock::FOLD_EVERY
            }
        };
    }
}

/// Stock moves of PostgreSQL sales added into their articles' rows.
const STOCK_MOVES_FOLDED: &str = "till_stock_moves_folded_total";

fn migrate_error(error: sqlx::migrate::MigrateError) -> StoreError {
    match error {
        sqlx::migrate::MigrateError::Execute(error) => StoreError::from(error),
        other => StoreError::Corrupt(format!("schema migration failed: {other}")),
    }
}

/// How long a pooled PostgreSQL connection may sit idle before it is pinged on acquire.
const IDLE_BEFORE_PING: Duration = Duration::from_secs(1);

/// Grows with the attempt and spreads contenders apart with a little jitter from the clock.
fn backoff(attempt: u32) -> Duration {
    let jitter = u64::from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0),
    ) % 5_000;
    Duration::from_micros(2_000 * u64::from(attempt) + jitter)
}

/// Creates the database file, readable and writable by the service's user alone, if it does
/// not exist yet: it holds PIN hashes and customer identifiers. SQLite gives its log and
/// shared-memory files the database file's permissions.
fn create_private(path: &std::path::Path) -> Result<(), StoreError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(StoreError::Config(format!(
            "cannot create the database file {}: {error}",
            path.display()
        ))),
    }
}

fn sqlite_url_creating_file(url: &str) -> String {
    if url.contains("mode=") {
        url.to_owned()
    } else if url.contains('?') {
        format!("{url}&mode=rwc")
    } else {
        format!("{url}?mode=rwc")
    }
}

fn connect_sqlite_writer(path: &std::path::Path, synchronous: SqliteSynchronous) -> Result<Conn, StoreError> {
    // Frames held until the commit's sync are safe only where every commit syncs.
    let log_writes = match synchronous {
        SqliteSynchronous::Full => LogWrites::Gathered,
        SqliteSynchronous::Normal => LogWrites::PerFrame,
    };
    let conn = open_sqlite(path, log_writes)?;
    // Savepoint journals in memory rather than temporary files, and a page cache (32 MiB) that
    // holds the indexes every sale touches. The log is copied back by the checkpointer's
    // thread; the writer's own checkpoint is only its backstop.
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -32768; \
         PRAGMA wal_autocheckpoint = {WRITER_BACKSTOP_PAGES}; {}",
        synchronous_pragma(synchronous)
    ))?;
    Ok(Conn::sqlite(conn))
}

/// The SQLite writer's nice value. Every sale waits for the writer in turn, so when the cores
/// are busy, a writer queued behind request handlers holds up all of them; with the load
/// generator on the same two cores, running it ahead gave 7 to 11 % more sales on the means of
/// alternating runs (docs/performance.md).
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

fn synchronous_pragma(synchronous: SqliteSynchronous) -> &'static str {
    match synchronous {
        SqliteSynchronous::Full => "PRAGMA synchronous = FULL",
        SqliteSynchronous::Normal => "PRAGMA synchronous = NORMAL",
    }
}

/// A queued unit of work with its input and the caller waiting for it.
trait Job: Send {
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
            (_, Err(error)) => Err(StoreError::CommitFailed(error)),
            (None, Ok(())) => Err(StoreError::Corrupt("a write was never run".to_owned())),
        };
        // The caller may have gone away (client disconnected); the write stands regardless.
        let _ = self.reply.send(result);
    }
}

/// The writer thread's body: asks to run ahead of request handlers, then runs the writer on a
/// runtime of its own until the queue closes.
fn sqlite_writer_thread(
    writer: Conn,
    queue: mpsc::Receiver<Box<dyn Job>>,
    max_batch: usize,
    checkpointer: Checkpointer,
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
        Ok(runtime) => runtime.block_on(run_sqlite_writer(writer, queue, max_batch, checkpointer)),
        Err(error) => tracing::error!(%error, "the SQLite writer could not start"),
    }
}

async fn run_sqlite_writer(
    mut conn: Conn,
    mut queue: mpsc::Receiver<Box<dyn Job>>,
    max_batch: usize,
    checkpointer: Checkpointer,
) {
    let mut batch: Vec<Box<dyn Job>> = Vec::with_capacity(max_batch);
    while queue.recv_many(&mut batch, max_batch).await > 0 {
        let committed = run_batch(&mut conn, &mut batch).await.map_err(Arc::new);
        match &committed {
            Ok(()) => checkpointer.after_commit(&conn),
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
    tracing::debug!(
        jobs = batch.len(),
        refused,
        work_us = worked.as_micros() as u64,
        commit_us = (started.elapsed() - worked).as_micros() as u64,
        "SQLite batch"
    );
    committed
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
    let sql = crate::sql::numbered_placeholders(sql);
    let mut plan = conn
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .expect("the statement prepares");
    plan.query_map(rusqlite::params_from_iter(params), |row| row.get::<_, String>(3))
        .and_then(|steps| steps.collect())
        .expect("the plan reads")
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let Writer::Sqlite(queue) = &store.inner.writer else {
            unreachable!("a SQLite store")
        };
        queue.send(Box::new(Crash)).await.ok().unwrap();
        for _ in 0..300 {
            if queue.is_closed() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(queue.is_closed(), "the writer thread ended");
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
        let mut conn = connect_sqlite_writer(&dir.path().join("t.db"), SqliteSynchronous::Full).unwrap();
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
