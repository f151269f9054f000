//! Engine mechanics: how a unit of work, a read and a batch reach each engine's disk, and the
//! background work each engine needs. Business modules reach the database through
//! [`Database`] alone: write a unit, read, run a batch, start maintenance; the one thing they
//! may choose their statements by is how writers meet on it ([`Writers`]).
//!
//! All SQL is written once, with `$n` placeholders and portable types, and runs through
//! [`sql`] on either engine. What differs per engine is how a write reaches the disk:
//!
//! - SQLite has one writer connection owned by a thread. Writers queue units of work; the
//!   thread runs every unit waiting at that moment in one transaction and acknowledges them
//!   only after the single durable COMMIT (group commit, [`sqlite::writer`]). Reads use
//!   read-only connections of their own and run on the caller's thread. Another thread copies
//!   the write-ahead log back into the database file ([`sqlite::checkpointer`]), and at
//!   `synchronous = FULL` the writer hands a commit's log frames to the file in a few writes
//!   rather than two per page ([`sqlite::gathered_log`]).
//! - PostgreSQL runs each unit in its own transaction on a pooled connection and runs it again
//!   when the database aborts it for a serialization failure or a deadlock; a batch may also
//!   run as one statement outside any transaction. Each node folds the stock moves sales queue
//!   into the articles' rows ([`postgres::stock_fold`]); on SQLite the writer folds the
//!   movements written since its last fold ([`sqlite_stock_fold`]).
//!
//! Callers see one method, [`Database::write`], and never know which path they took.

mod background;
pub(crate) mod batch;
mod postgres;
pub(crate) mod sql;
pub mod sqlite;

pub use postgres::stock_fold::FOLD_LIMIT;

use crate::db::StoreOptions;
use crate::error::StoreError;
use crate::migrations;
use batch::Batch;
use futures::future::BoxFuture;
use sql::{Conn, Readers, query};
use std::sync::Weak;

/// A unit of work: runs inside one transaction, may be run more than once (PostgreSQL retries
/// it after a lost race), so it must not have effects outside the connection.
pub(crate) type Work<I, T> = for<'a> fn(&'a mut Conn, &'a I) -> BoxFuture<'a, Result<T, StoreError>>;

pub use till_app::storage::Engine;
use till_app::storage::ReadAt;
use till_app::storage::health::Connections;

/// The engine a database URL names.
pub trait EngineOf: Sized {
    fn from_url(url: &str) -> Result<Self, StoreError>;
}

/// How writers meet on an engine.
pub(crate) trait WritersOf {
    fn writers(self) -> Writers;
}

impl EngineOf for Engine {
    fn from_url(url: &str) -> Result<Engine, StoreError> {
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
}

impl WritersOf for Engine {
    fn writers(self) -> Writers {
        match self {
            Engine::Sqlite => Writers::One,
            Engine::Postgres => Writers::Many,
        }
    }
}

/// What is at `url` (see [`crate::db::Found`]), opening it read-only.
pub(crate) async fn inspect(url: &str) -> Result<crate::db::Found, StoreError> {
    use crate::db::Found;
    let (engine, latest) = match Engine::from_url(url)? {
        Engine::Sqlite => (Engine::Sqlite, migrations::sqlite()),
        Engine::Postgres => (Engine::Postgres, migrations::postgres()),
    };
    let latest = latest.iter().map(|m| m.version).max().unwrap_or_default();
    let applied = match engine {
        Engine::Sqlite => {
            let path = sqlite::sqlite_path(url)?;
            match std::fs::metadata(&path) {
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Found::NoFile(path)),
                Err(error) => {
                    return Err(StoreError::Config(format!("cannot read {}: {error}", path.display())));
                }
                Ok(meta) if !meta.is_file() => return Ok(Found::NotTill),
                Ok(_) => {}
            }
            tokio::task::spawn_blocking(move || sqlite::applied_migration(&path))
                .await
                .map_err(|_| StoreError::Config("the database could not be read".to_owned()))??
        }
        Engine::Postgres => postgres::applied_migration(url).await?,
    };
    Ok(match applied {
        None => Found::NotTill,
        Some(version) if version < latest => Found::Behind,
        Some(_) => Found::Current,
    })
}

/// How units of work meet on an engine: what business code may choose its statements by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Writers {
    /// One writer runs every unit in turn (SQLite): nothing writes between a unit's statements,
    /// and a row a unit updates holds nobody else up.
    One,
    /// Units run at once on many connections and nodes (PostgreSQL): a row a unit updates
    /// stays locked until it commits, and a race between units is the database's to settle.
    Many,
}

/// The database beneath a store: its readers, its writer and its background work.
pub(crate) struct Database {
    engine: Engine,
    readers: Readers,
    /// A standby's readers, for the reads that may lag ([`ReadAt::Standby`]).
    standby: Option<Readers>,
    writer: Writer,
}

enum Writer {
    Sqlite(sqlite::Writer),
    Postgres(postgres::Writer),
}

impl Database {
    /// Opens the database at `url`. Nothing runs in the background until
    /// [`Database::start_maintenance`].
    pub(crate) async fn connect(url: &str, options: &StoreOptions) -> Result<Database, StoreError> {
        sqlx::any::install_default_drivers();
        let engine = Engine::from_url(url)?;
        let (readers, writer) = match engine {
            Engine::Sqlite => {
                let (readers, writer) = sqlite::connect(url, options, None)?;
                (readers, Writer::Sqlite(writer))
            }
            Engine::Postgres => {
                let (readers, writer) = postgres::connect(url, options).await?;
                (readers, Writer::Postgres(writer))
            }
        };
        let standby = match (&options.read_url, engine) {
            (None, _) => None,
            (Some(read_url), Engine::Postgres) if Engine::from_url(read_url)? == Engine::Postgres => {
                Some(postgres::connect_standby(read_url, options).await?)
            }
            (Some(_), _) => {
                return Err(StoreError::Config(
                    "a read URL names a PostgreSQL standby of a PostgreSQL database".to_owned(),
                ));
            }
        };
        Ok(Database {
            engine,
            readers,
            standby,
            writer,
        })
    }

    /// A SQLite database whose files go through the VFS `vfs`, for tests that model the disk.
    #[cfg(test)]
    pub(crate) fn connect_through(
        url: &str,
        options: &StoreOptions,
        vfs: &'static std::ffi::CStr,
    ) -> Result<Database, StoreError> {
        sqlx::any::install_default_drivers();
        let (readers, writer) = sqlite::connect(url, options, Some(vfs))?;
        Ok(Database {
            engine: Engine::Sqlite,
            readers,
            standby: None,
            writer: Writer::Sqlite(writer),
        })
    }

    pub(crate) fn engine(&self) -> Engine {
        self.engine
    }

    pub(crate) fn writers(&self) -> Writers {
        self.engine.writers()
    }

    /// The connections that serve reads.
    pub(crate) fn readers(&self) -> &Readers {
        &self.readers
    }

    /// The connections that serve reads at `at`: the standby's when there is one.
    pub(crate) fn readers_at(&self, at: ReadAt) -> &Readers {
        match (at, &self.standby) {
            (ReadAt::Standby, Some(standby)) => standby,
            _ => &self.readers,
        }
    }

    /// This node's connections and the writer's queue, as they stand.
    pub(crate) fn connections(&self) -> Connections {
        let (busy, idle, most) = self.readers.counts();
        Connections {
            busy,
            idle,
            most,
            writer_queue: match &self.writer {
                Writer::Sqlite(writer) => Some(writer.queued()),
                Writer::Postgres(_) => None,
            },
        }
    }

    /// Runs `work` on `input` in a transaction and returns once its effects are durable.
    pub(crate) async fn write<I, T>(&self, input: I, work: Work<I, T>) -> Result<T, StoreError>
    where
        I: Send + Sync + 'static,
        T: Send + 'static,
    {
        match &self.writer {
            Writer::Sqlite(writer) => writer.write(input, work).await,
            Writer::Postgres(writer) => writer.write(&self.readers, &input, work).await,
        }
    }

    /// Whether [`Database::run_alone`] takes batches: true where a batch is one statement,
    /// which commits whole, durably, or fails whole (PostgreSQL).
    pub(crate) fn batches_run_alone(&self) -> bool {
        matches!(self.writer, Writer::Postgres(_))
    }

    /// Runs `batch` outside any transaction, where [`Database::batches_run_alone`].
    pub(crate) async fn run_alone(&self, batch: Batch) -> Result<(), StoreError> {
        if !self.batches_run_alone() {
            return Err(StoreError::Config("one-statement writes are for PostgreSQL".to_owned()));
        }
        let mut conn = self.readers.acquire().await?;
        batch.run(&mut conn).await
    }

    /// Runs a read that may take seconds (a register's whole journal, an archive's period) on
    /// a connection of its own, where it holds up no request: SQLite reads run on the calling
    /// thread, so there it goes to the blocking pool; PostgreSQL's wait on the network, so
    /// there it stays on the caller's task.
    pub(crate) async fn long_read<T, F>(&self, at: ReadAt, read: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut Conn) -> BoxFuture<'c, Result<T, StoreError>> + Send + 'static,
    {
        let mut conn = self.readers_at(at).acquire().await?;
        match self.engine {
            Engine::Postgres => read(&mut conn).await,
            Engine::Sqlite => {
                let runtime = tokio::runtime::Handle::current();
                tokio::task::spawn_blocking(move || runtime.block_on(read(&mut conn)))
                    .await
                    .map_err(|_| StoreError::Corrupt("a long read stopped before its end".to_owned()))?
            }
        }
    }

    /// Starts the engine's background work, which runs while `owner` lives and its database
    /// (reached through `database`) stays open: SQLite's checkpointer, PostgreSQL's stock fold and
    /// feed sequencer.
    /// A second call changes nothing.
    pub(crate) fn start_maintenance<S: Send + Sync + 'static>(
        &self,
        owner: Weak<S>,
        database: fn(&S) -> &Database,
    ) -> Result<(), StoreError> {
        match &self.writer {
            Writer::Sqlite(writer) => {
                writer.start_checkpointer()?;
                if writer.start_stock_fold() {
                    tokio::spawn(sqlite_stock_fold(owner, database));
                }
                Ok(())
            }
            Writer::Postgres(writer) => {
                writer.start_stock_fold(owner.clone(), database);
                writer.start_feed_sequencer(owner.clone(), database);
                writer.start_following(owner, database);
                Ok(())
            }
        }
    }

    /// Folds stock movements into the articles' rows once: the queued moves (PostgreSQL), the
    /// movements after the fold's mark (SQLite, one write of the writer); answers how many it
    /// folded.
    pub(crate) async fn fold_stock_moves(&self) -> Result<u64, StoreError> {
        match self.engine {
            Engine::Postgres => postgres::stock_fold::fold(&self.readers).await,
            Engine::Sqlite => {
                let slice = self
                    .long_read(ReadAt::Primary, |conn| {
                        Box::pin(crate::stock::fold_slice(conn, crate::stock::FOLD_LIMIT_ONE_WRITER))
                    })
                    .await?;
                let Some(slice) = slice else { return Ok(0) };
                // Each write its own unit: the sales queued meanwhile commit between them.
                for write in slice.writes {
                    self.write(write, |conn, write| Box::pin(crate::stock::fold_into_rows(conn, write)))
                        .await?;
                }
                Ok(slice.moves)
            }
        }
    }

    /// Numbers the feed's committed events without a position, once (PostgreSQL); answers how
    /// many it numbered. SQLite gives each event its position as it writes it.
    pub(crate) async fn place_events(&self) -> Result<u64, StoreError> {
        match self.engine {
            Engine::Postgres => {
                let pass = self.write((), postgres::feed_sequencer::place).await?;
                if pass.high > pass.released {
                    // A pass that numbered nothing saw positions of a pass whose end no node
                    // saw: durable only once a commit after it is.
                    if pass.placed == 0 {
                        self.barrier().await?;
                    }
                    self.write(pass.high, postgres::feed_sequencer::release).await?;
                }
                Ok(pass.placed)
            }
            Engine::Sqlite => Ok(0),
        }
    }

    /// Returns once every commit visible now is as durable as this node's own commits
    /// (`till_app::storage::durability`): on SQLite a commit is visible only once the writer
    /// has made it durable; on PostgreSQL a commit of its own waits for the standby.
    pub(crate) async fn barrier(&self) -> Result<(), StoreError> {
        match self.engine {
            Engine::Postgres => postgres::barrier(&self.readers).await,
            Engine::Sqlite => Ok(()),
        }
    }

    /// Moves to the primary among the URL's hosts when it moved (PostgreSQL with several
    /// hosts); answers 1 when it did.
    pub(crate) async fn follow_primary(&self) -> Result<u64, StoreError> {
        match &self.writer {
            Writer::Postgres(writer) => writer.follow(&self.readers).await,
            Writer::Sqlite(_) => Ok(0),
        }
    }

    /// Brings the schema up to date. Safe to run from several nodes at once on PostgreSQL
    /// (sqlx holds an advisory lock while it migrates).
    pub(crate) async fn migrate(&self) -> Result<(), StoreError> {
        let mut migrator = match self.engine {
            Engine::Sqlite => migrations::sqlite(),
            Engine::Postgres => migrations::postgres(),
        };
        // In a rolling deploy the first node of a new release migrates while nodes of the
        // previous one still run, and may restart: they must accept migrations they do not
        // know. Releases only add to the schema, so the older code still finds what it reads.
        migrator.set_ignore_missing(true);
        match &self.writer {
            Writer::Sqlite(writer) => writer.migrate(&migrator).await,
            Writer::Postgres(_) => postgres::migrate(&self.readers, &migrator).await,
        }
    }

    /// Succeeds when the database answers a trivial query and, on SQLite, the writer every
    /// sale goes through is still running.
    pub(crate) async fn ping(&self) -> Result<(), StoreError> {
        if let Writer::Sqlite(writer) = &self.writer
            && writer.stopped()
        {
            return Err(StoreError::WriterStopped);
        }
        query("SELECT 1").fetch_one(&self.readers).await?;
        Ok(())
    }

    pub(crate) async fn close(&self) {
        if let Some(standby) = &self.standby {
            standby.close().await;
        }
        self.readers.close().await;
    }

    /// The SQLite writer, for tests that drive it directly.
    #[cfg(test)]
    pub(crate) fn sqlite_writer(&self) -> Option<&sqlite::Writer> {
        match &self.writer {
            Writer::Sqlite(writer) => Some(writer),
            Writer::Postgres(_) => None,
        }
    }
}

/// SQLite's stock fold: twice a second, at once again while a backlog remains, until `owner`
/// is dropped or its database closed. The longer between folds, the more movements of one
/// article each fold adds up, and the longer its write holds up the sales behind it.
async fn sqlite_stock_fold<S>(owner: Weak<S>, database: fn(&S) -> &Database) {
    let cadence = background::Cadence {
        every: std::time::Duration::from_millis(500),
        limit: crate::stock::FOLD_LIMIT_ONE_WRITER as u64,
        after_error: std::time::Duration::from_secs(1),
        done: crate::metrics::STOCK_MOVES_FOLDED,
        failed: "stock movements not folded; levels still count them; trying again",
    };
    background::repeat_while_open(owner, database, cadence, |database| {
        Box::pin(database.fold_stock_moves())
    })
    .await
}
