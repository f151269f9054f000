//! SQLite: the database file, its one writer ([`writer`]), its readers, the checkpointer
//! ([`checkpointer`]) and the writer's log shim ([`gathered_log`]).

pub(crate) mod checkpointer;
pub(crate) mod gathered_log;
pub mod page_cache;
#[cfg(test)]
mod power_cut;
pub(crate) mod writer;

use super::Work;
use super::sql::{Conn, Readers};
use crate::db::{SqliteSynchronous, StoreOptions};
use crate::error::StoreError;
use checkpointer::{Checkpointer, WRITER_BACKSTOP_PAGES};
use sqlx::{AnyConnection, Connection, Executor};
use std::ffi::CStr;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::mpsc;
use writer::Job;

/// The writer's side of a SQLite database: the queue its thread takes units from, and what
/// starting maintenance needs.
pub(crate) struct Writer {
    queue: mpsc::Sender<Box<dyn Job>>,
    /// Set when maintenance starts; the writer's thread nudges it after each commit.
    checkpointer: Arc<OnceLock<Checkpointer>>,
    /// Held while the checkpointer starts, so that it starts once.
    starting: Mutex<()>,
    /// Set once the stock fold is started.
    folding: std::sync::atomic::AtomicBool,
    files: Files,
    synchronous: SqliteSynchronous,
    /// The URL migrations connect with.
    url: String,
}

/// Where a database's connections open their files.
#[derive(Clone, Debug)]
pub(crate) struct Files {
    pub path: PathBuf,
    /// The VFS every connection opens its files through: the platform's (`None`) or, in
    /// tests, one that models a power cut.
    pub vfs: Option<&'static CStr>,
}

/// Opens the database at `url` and starts its writer's thread; `vfs` as in [`Files`].
pub(crate) fn connect(
    url: &str,
    options: &StoreOptions,
    vfs: Option<&'static CStr>,
) -> Result<(Readers, Writer), StoreError> {
    if let Err(error) = page_cache::install() {
        tracing::warn!(%error, "SQLite started before its page cache was wrapped; commits may scan the cache");
    }
    let files = Files {
        path: sqlite_path(url)?,
        vfs,
    };
    create_private(&files.path)?;
    let conn = connect_writer(
        &files,
        options.sqlite_synchronous,
        options.sqlite_gathered_log,
        options.sqlite_writer_cache_mib,
    )?;
    let readers = Readers::Sqlite(SqliteReaders::new(files.clone(), options.max_connections as usize));
    let checkpointer = Arc::new(OnceLock::new());
    let max_batch = options.max_batch.max(1);
    let queue = writer::spawn(conn, max_batch, checkpointer.clone())?;
    let writer = Writer {
        queue,
        checkpointer,
        starting: Mutex::new(()),
        folding: std::sync::atomic::AtomicBool::new(false),
        files,
        synchronous: options.sqlite_synchronous,
        url: url_creating_file(url),
    };
    Ok((readers, writer))
}

impl Writer {
    /// Queues `work` for the writer's next batch and waits for the batch's commit.
    pub(crate) async fn write<I, T>(&self, input: I, work: Work<I, T>) -> Result<T, StoreError>
    where
        I: Send + Sync + 'static,
        T: Send + 'static,
    {
        writer::submit(&self.queue, input, work).await
    }

    /// Units of work waiting for the writer's next batch.
    pub(crate) fn queued(&self) -> u64 {
        (self.queue.max_capacity() - self.queue.capacity()) as u64
    }

    /// Whether the writer's thread has ended: nothing can be written any more.
    pub(crate) fn stopped(&self) -> bool {
        self.queue.is_closed()
    }

    /// Starts the thread that copies the log back into the database file, unless it runs.
    pub(crate) fn start_checkpointer(&self) -> Result<(), StoreError> {
        let _one_start = self.starting.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if self.checkpointer.get().is_none() {
            let started = Checkpointer::start(&self.files, synchronous_pragma(self.synchronous))?;
            let _ = self.checkpointer.set(started);
        }
        Ok(())
    }

    /// Whether the stock fold is to be started now: true once, for the first caller.
    pub(crate) fn start_stock_fold(&self) -> bool {
        !self.folding.swap(true, std::sync::atomic::Ordering::Relaxed)
    }

    /// Runs `migrator` on a connection of its own: migrations manage their own transactions,
    /// which cannot nest inside the writer's batches.
    pub(crate) async fn migrate(&self, migrator: &sqlx::migrate::Migrator) -> Result<(), StoreError> {
        let mut conn = AnyConnection::connect(&self.url).await.map_err(crate::error::db)?;
        conn.execute("PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON")
            .await
            .map_err(crate::error::db)?;
        migrator.run(&mut conn).await.map_err(crate::migrations::error)?;
        conn.close().await.map_err(crate::error::db)?;
        Ok(())
    }

    #[cfg(test)]
    pub(crate) fn queue(&self) -> &mpsc::Sender<Box<dyn Job>> {
        &self.queue
    }
}

/// The writer's connection. At `synchronous = FULL` its log goes through the gathered-log shim
/// unless `gathered_log` is off or the shim refuses this SQLite.
fn connect_writer(
    files: &Files,
    synchronous: SqliteSynchronous,
    gathered_log: bool,
    cache_mib: u32,
) -> Result<Conn, StoreError> {
    // Frames held until the commit's sync are safe only where every commit syncs.
    let vfs = match (synchronous, gathered_log) {
        (SqliteSynchronous::Full, true) => match gathered_log::register(files.vfs) {
            Ok(shim) => Some(shim),
            Err(error) => {
                tracing::warn!(%error, "the SQLite writer writes its log through SQLite's own VFS");
                files.vfs
            }
        },
        _ => files.vfs,
    };
    let conn = open(&files.path, vfs)?;
    // Savepoint journals in memory rather than temporary files, and a page cache that holds
    // the indexes every sale touches. The log is copied back by the checkpointer's thread; the
    // writer's own checkpoint is only its backstop.
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -{}; \
         PRAGMA wal_autocheckpoint = {WRITER_BACKSTOP_PAGES}; {}",
        i64::from(cache_mib) * 1024,
        synchronous_pragma(synchronous)
    ))
    .map_err(crate::error::db)?;
    Ok(Conn::sqlite(conn))
}

pub(crate) fn synchronous_pragma(synchronous: SqliteSynchronous) -> &'static str {
    match synchronous {
        SqliteSynchronous::Full => "PRAGMA synchronous = FULL",
        SqliteSynchronous::Normal => "PRAGMA synchronous = NORMAL",
    }
}

/// Settings SQLite takes once per process, before it initializes: called before anything that
/// opens a file or finds a VFS.
pub(crate) fn process_settings() {
    static PROCESS_SETTINGS: std::sync::Once = std::sync::Once::new();
    PROCESS_SETTINGS.call_once(|| {
        // SQLite's memory statistics take a process-wide mutex on every allocation, and
        // nothing here reads them. This must precede SQLite's initialization; if something
        // initialized it first, the call is refused and changes nothing.
        // SAFETY: SQLITE_CONFIG_MEMSTATUS takes one int; sqlite3_config is safe to call
        // before sqlite3_initialize, and answers SQLITE_MISUSE after it.
        unsafe {
            rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as std::ffi::c_int);
        }
    });
}

/// Opens the database file through `vfs` (the platform's when `None`) with the settings every
/// connection shares.
pub(crate) fn open(path: &Path, vfs: Option<&CStr>) -> Result<rusqlite::Connection, StoreError> {
    process_settings();
    let conn = match vfs {
        None => rusqlite::Connection::open(path).map_err(crate::error::db)?,
        Some(vfs) => rusqlite::Connection::open_with_flags_and_vfs(path, rusqlite::OpenFlags::default(), vfs)
            .map_err(crate::error::db)?,
    };
    conn.execute_batch("PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON")
        .map_err(crate::error::db)?;
    // A sale's statements differ by their number of rows; keep the common shapes prepared.
    conn.set_prepared_statement_cache_capacity(256);
    // Plans made without looking at bound values: otherwise SQLite reads the value bound to
    // a `LIMIT $n` when it plans, and so prepares such a statement again each time it is
    // bound, which a kept statement is for.
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .map_err(crate::error::db)?;
    Ok(conn)
}

/// How much of the database file a reader maps; SQLite lowers it to the most it was built to
/// map. The writer does not map: the pages it changes are copied into its cache anyway.
pub(crate) const READER_MAP_BYTES: u64 = 1 << 32;

/// Read-only SQLite connections, opened when needed and kept for the next read.
pub(crate) struct SqliteReaders {
    files: Files,
    idle: Mutex<Vec<rusqlite::Connection>>,
    keep: usize,
    /// Connections lent and not yet back.
    lent: AtomicUsize,
}

impl SqliteReaders {
    fn new(files: Files, keep: usize) -> Arc<SqliteReaders> {
        Arc::new(SqliteReaders {
            files,
            idle: Mutex::new(Vec::new()),
            keep: keep.max(1),
            lent: AtomicUsize::new(0),
        })
    }

    pub(crate) fn lease(self: &Arc<Self>) -> Result<Lease, StoreError> {
        let idle = self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).pop();
        let conn = match idle {
            Some(conn) => conn,
            None => {
                let conn = open(&self.files.path, self.files.vfs)?;
                // Readers never write: the writer is the only writer. A reader maps the file so
                // that a search over a big catalog reads its index pages from the system's
                // cache in place, rather than copying each into its own small cache.
                conn.execute_batch(&format!(
                    "PRAGMA query_only = ON; PRAGMA mmap_size = {READER_MAP_BYTES}"
                ))
                .map_err(crate::error::db)?;
                conn
            }
        };
        self.lent.fetch_add(1, Ordering::Relaxed);
        Ok(Lease {
            conn: Some(conn),
            pool: self.clone(),
        })
    }

    /// Connections lent, and idle.
    pub(crate) fn counts(&self) -> (u64, u64) {
        let idle = self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).len();
        (self.lent.load(Ordering::Relaxed) as u64, idle as u64)
    }

    /// Closes the idle connections.
    pub(crate) fn clear(&self) {
        self.idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clear();
    }
}

/// A reader connection, back in the pool when dropped.
pub(crate) struct Lease {
    conn: Option<rusqlite::Connection>,
    pool: Arc<SqliteReaders>,
}

impl Deref for Lease {
    type Target = rusqlite::Connection;

    fn deref(&self) -> &rusqlite::Connection {
        self.conn.as_ref().expect("a lease holds its connection until dropped")
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.pool.lent.fetch_sub(1, Ordering::Relaxed);
            let mut idle = self.pool.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if idle.len() < self.pool.keep {
                idle.push(conn);
            }
        }
    }
}

/// The file behind a `sqlite://PATH[?options]` URL.
pub(crate) fn sqlite_path(url: &str) -> Result<PathBuf, StoreError> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .ok_or_else(|| StoreError::Config("a SQLite URL starts with sqlite://".to_owned()))?;
    let path = rest.split('?').next().unwrap_or_default();
    if path.is_empty() || path == ":memory:" {
        return Err(StoreError::Config(
            "SQLite needs a database file (sqlite://PATH); an in-memory database is not shared".to_owned(),
        ));
    }
    Ok(PathBuf::from(path))
}

/// The last schema migration applied to the SQLite database at `path`, opened read-only;
/// `None` when it is no database or holds no till schema.
pub(crate) fn applied_migration(path: &Path) -> Result<Option<i64>, StoreError> {
    process_settings();
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let Ok(conn) = rusqlite::Connection::open_with_flags(path, flags) else {
        return Ok(None);
    };
    let read = || -> rusqlite::Result<Option<i64>> {
        let tables: i64 = conn.query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
            [],
            |row| row.get(0),
        )?;
        if tables == 0 {
            return Ok(None);
        }
        conn.query_row("SELECT MAX(version) FROM _sqlx_migrations WHERE success", [], |row| {
            row.get(0)
        })
    };
    // A file that is not a SQLite database fails its first read.
    Ok(read().unwrap_or(None))
}

/// Creates the database file, readable and writable by the service's user alone, if it does
/// not exist yet: it holds PIN hashes and customer identifiers. SQLite gives its log and
/// shared-memory files the database file's permissions.
fn create_private(path: &Path) -> Result<(), StoreError> {
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

fn url_creating_file(url: &str) -> String {
    if url.contains("mode=") {
        url.to_owned()
    } else if url.contains('?') {
        format!("{url}&mode=rwc")
    } else {
        format!("{url}?mode=rwc")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The name of the VFS `conn` opened its files through.
    fn vfs_of(conn: &Conn) -> String {
        let conn = conn.as_sqlite().expect("a SQLite connection");
        let mut vfs: *mut rusqlite::ffi::sqlite3_vfs = std::ptr::null_mut();
        // SAFETY: SQLITE_FCNTL_VFS_POINTER writes the connection's VFS, which SQLite never
        // frees, into `vfs`.
        unsafe {
            let code = rusqlite::ffi::sqlite3_file_control(
                conn.handle(),
                c"main".as_ptr(),
                rusqlite::ffi::SQLITE_FCNTL_VFS_POINTER,
                (&raw mut vfs).cast(),
            );
            assert_eq!(code, rusqlite::ffi::SQLITE_OK);
            CStr::from_ptr((*vfs).zName).to_string_lossy().into_owned()
        }
    }

    #[test]
    fn the_writer_goes_through_the_gathered_log_at_full_unless_it_is_switched_off() {
        let dir = tempfile::tempdir().unwrap();
        let files = Files {
            path: dir.path().join("till.db"),
            vfs: None,
        };
        let shim = gathered_log::VFS_NAME.to_string_lossy();
        let writer = |synchronous, gathered| vfs_of(&connect_writer(&files, synchronous, gathered, 32).unwrap());
        assert_eq!(writer(SqliteSynchronous::Full, true), shim);
        assert_ne!(writer(SqliteSynchronous::Full, false), shim);
        assert_ne!(
            writer(SqliteSynchronous::Normal, true),
            shim,
            "NORMAL publishes frames before syncing"
        );
    }

    /// A change of the bundled SQLite fails here until the power-cut test has passed on it and
    /// its version joins the ones the shim was verified against.
    #[test]
    fn the_bundled_sqlite_is_one_the_gathered_log_was_verified_against() {
        assert!(
            gathered_log::VERIFIED.contains(&rusqlite::version_number()),
            "SQLite {} is not among the versions the gathered log was verified against",
            rusqlite::version()
        );
    }

    /// A kept statement is prepared once, whatever `LIMIT` it is bound with from one run to
    /// the next: a page read or a sale's stock write does not pay SQLite's planner each time.
    #[test]
    fn a_statement_bound_with_another_limit_is_not_prepared_again() {
        let dir = tempfile::tempdir().unwrap();
        let conn = open(&dir.path().join("till.db"), None).unwrap();
        conn.execute_batch("CREATE TABLE n (v INTEGER PRIMARY KEY); INSERT INTO n (v) VALUES (1), (2), (3)")
            .unwrap();
        let mut page = conn
            .prepare("SELECT v FROM n WHERE v > ?1 ORDER BY v LIMIT ?2")
            .unwrap();
        for (after, take) in [(0, 1), (1, 2), (0, 3), (2, 1)] {
            let seen: Vec<i64> = page
                .query_map([after, take], |row| row.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(seen, (after + 1..=3).take(take as usize).collect::<Vec<_>>());
        }
        assert_eq!(page.get_status(rusqlite::StatementStatus::RePrepare), 0);
    }
}
