//! PostgreSQL: a pool of connections, each unit of work in a transaction of its own, run again
//! when it loses a race, the stock fold ([`stock_fold`]) and the feed sequencer
//! ([`feed_sequencer`]).

pub(crate) mod feed_sequencer;
mod hosts;
pub(crate) mod stock_fold;

use super::Work;
use super::sql::{Conn, Readers};
use crate::db::StoreOptions;
use crate::error::{Classified, StoreError};
use hosts::{Follower, Hosts};
use sqlx::Executor;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// How long a pooled connection may sit idle before it is pinged on acquire.
const IDLE_BEFORE_PING: Duration = Duration::from_secs(1);

/// Prepared statements each connection keeps. A sale's one statement takes a shape per line
/// count, customer and stored-value tender, and with the reads these are a few hundred: past
/// the driver's default, statements are evicted and prepared again, which PostgreSQL pays for
/// in planning and the node in a round trip.
const STATEMENTS_KEPT: usize = 1024;

/// The writer's side of a PostgreSQL database: every unit on a pooled connection.
pub(crate) struct Writer {
    /// How often a unit aborted by a lost race is run again before giving up.
    max_retries: u32,
    /// Set once the stock fold is started.
    folding: AtomicBool,
    /// Set once the feed sequencer is started.
    sequencing: AtomicBool,
    /// The primary among the hosts of a URL that names several.
    follower: Option<Arc<Follower>>,
    /// Set once the follower's watch is started.
    following: AtomicBool,
}

/// How often a node that follows the primary itself asks whether it moved.
const FOLLOW_EVERY: Duration = Duration::from_secs(1);

pub(crate) async fn connect(url: &str, options: &StoreOptions) -> Result<(Readers, Writer), StoreError> {
    let (follower, url) = match Hosts::of(url)? {
        Some(hosts) => {
            let (follower, primary) = Follower::start(hosts).await?;
            (Some(Arc::new(follower)), primary)
        }
        None => (None, url.to_owned()),
    };
    let pool = open_pool(&url, options, follower.clone(), Role::Primary).await?;
    let writer = Writer {
        max_retries: options.max_retries,
        folding: AtomicBool::new(false),
        sequencing: AtomicBool::new(false),
        follower,
        following: AtomicBool::new(false),
    };
    Ok((Readers::Postgres(pool), writer))
}

/// The readers of a standby, for the reads that may lag: its connections only read.
pub(crate) async fn connect_standby(url: &str, options: &StoreOptions) -> Result<Readers, StoreError> {
    if Hosts::of(url)?.is_some() {
        return Err(StoreError::Config(
            "the read URL names one host: a standby, or a proxy in front of the standbys".to_owned(),
        ));
    }
    Ok(Readers::Postgres(open_pool(url, options, None, Role::Standby).await?))
}

/// What a pool's connections are for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Primary,
    Standby,
}

async fn open_pool(
    url: &str,
    options: &StoreOptions,
    follower: Option<Arc<Follower>>,
    role: Role,
) -> Result<sqlx::AnyPool, StoreError> {
    let statement_timeout = options.statement_timeout.as_millis();
    let mut connect = AnyConnectOptions::from_str(url).map_err(crate::error::db)?;
    let kept = connect
        .database_url
        .query_pairs()
        .any(|(name, _)| name == "statement-cache-capacity");
    if !kept {
        connect
            .database_url
            .query_pairs_mut()
            .append_pair("statement-cache-capacity", &STATEMENTS_KEPT.to_string());
    }
    let (acquiring, connecting) = (follower.clone(), follower.is_some());
    AnyPoolOptions::new()
        .max_connections(options.max_connections.max(1))
        .acquire_timeout(options.acquire_timeout)
        // A ping on every acquire is one more round trip per query under load. A connection
        // used within the last second is taken to work; one idle longer (the server may have
        // restarted meanwhile) is pinged first.
        .test_before_acquire(false)
        .before_acquire(move |conn, meta| {
            // A connection to a primary the node has since moved away from is let go.
            let stale = acquiring.as_ref().is_some_and(|f| f.predates_move(meta.age));
            Box::pin(async move {
                if stale {
                    return Ok(false);
                }
                if meta.idle_for > IDLE_BEFORE_PING {
                    sqlx::Connection::ping(conn).await?;
                }
                Ok(true)
            })
        })
        // Generic plans: left to choose, PostgreSQL plans a prepared statement afresh for each
        // of its first executions, and a sale's statement of CTEs has many shapes and a hundred
        // parameters. Every statement here finds rows by key, so its plan does not depend on
        // the values bound.
        .after_connect(move |conn, _| {
            Box::pin(async move {
                let read_only = match role {
                    Role::Primary => "",
                    Role::Standby => "; SET default_transaction_read_only = on",
                };
                // No JIT: till's statements read rows by key, but a generic plan of a keyset page
                // (its LIMIT bound, so guessed large) looks costly enough to be compiled first,
                // which took 250 ms for a 13 ms page of the catalog.
                let set = format!(
                    "SET statement_timeout = {statement_timeout}; SET lock_timeout = {statement_timeout}; \
                     SET plan_cache_mode = force_generic_plan; SET jit = off{read_only}"
                );
                conn.execute(sqlx::AssertSqlSafe(set)).await?;
                // Following the primary itself, the node takes no connection to a standby.
                if connecting {
                    let standby: i32 = sqlx::query_scalar("SELECT CASE WHEN pg_is_in_recovery() THEN 1 ELSE 0 END")
                        .fetch_one(&mut *conn)
                        .await?;
                    if standby == 1 {
                        return Err(sqlx::Error::Io(std::io::Error::other("the host is a standby now")));
                    }
                }
                Ok(())
            })
        })
        .connect_with(connect)
        .await
        .map_err(crate::error::db)
}

/// The last schema migration applied to the PostgreSQL database at `url`, on a connection of
/// its own that writes nothing; `None` when it holds no till schema.
pub(crate) async fn applied_migration(url: &str) -> Result<Option<i64>, StoreError> {
    use sqlx::Connection;
    sqlx::any::install_default_drivers();
    let primary = match Hosts::of(url)? {
        Some(hosts) => hosts.primary().await?.to_owned(),
        None => url.to_owned(),
    };
    let mut conn = sqlx::AnyConnection::connect(&primary).await.map_err(crate::error::db)?;
    let tables: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM information_schema.tables \
         WHERE table_schema = current_schema() AND table_name = '_sqlx_migrations'",
    )
    .fetch_one(&mut conn)
    .await
    .map_err(crate::error::db)?;
    let applied = if tables == 0 {
        None
    } else {
        sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
            .fetch_one(&mut conn)
            .await
            .map_err(crate::error::db)?
    };
    conn.close().await.map_err(crate::error::db)?;
    Ok(applied)
}

/// Runs `migrator` under sqlx's advisory lock, so that nodes starting together apply each
/// migration once.
pub(crate) async fn migrate(readers: &Readers, migrator: &sqlx::migrate::Migrator) -> Result<(), StoreError> {
    migrator.run(pool(readers)?).await.map_err(crate::migrations::error)
}

/// A commit that waits for the synchronous standby as a sale's does, and comes after every
/// commit visible when it starts. A transaction waits for the standby only when it wrote to
/// the log (an id alone is not enough), so it writes a transactional message there, which
/// needs no table and no privilege; logical decoding consumers see it under `till.barrier`.
/// Its commit record follows theirs in the log, and the standby, which takes the log in order,
/// holds them all once it holds it. PostgreSQL ends a statement's timeout before its commit
/// waits for the standby, so no timeout cuts that wait short.
pub(crate) async fn barrier(readers: &Readers) -> Result<(), StoreError> {
    sqlx::query("SELECT pg_logical_emit_message(true, 'till.barrier', '')::text")
        .execute(pool(readers)?)
        .await
        .map_err(crate::error::db)?;
    Ok(())
}

/// Waits for `getting` (a connection, or a transaction begun on one, from `pool`); when the
/// pool had no idle connection to hand, the wait is timed.
pub(crate) async fn timed<T>(
    pool: &sqlx::AnyPool,
    getting: impl Future<Output = Result<T, sqlx::Error>>,
) -> Result<T, StoreError> {
    if pool.num_idle() > 0 {
        return getting.await.map_err(crate::error::db);
    }
    let started = std::time::Instant::now();
    let got = getting.await.map_err(crate::error::db);
    crate::metrics::waited_for_connection(started.elapsed());
    got
}

fn pool(readers: &Readers) -> Result<&sqlx::AnyPool, StoreError> {
    readers
        .postgres()
        .ok_or_else(|| StoreError::Config("PostgreSQL without a pool".to_owned()))
}

impl Writer {
    /// Runs `work` in a transaction of its own, again after a lost race.
    pub(crate) async fn write<I, T>(&self, readers: &Readers, input: &I, work: Work<I, T>) -> Result<T, StoreError> {
        let mut attempt = 0;
        loop {
            let result: Result<T, StoreError> = async {
                let pool = pool(readers)?;
                let mut conn = Conn::postgres_transaction(timed(pool, pool.begin()).await?);
                let outcome = work(&mut conn, input).await;
                let tx = conn
                    .into_postgres_transaction()
                    .ok_or_else(|| StoreError::Corrupt("a PostgreSQL write lost its transaction".to_owned()))?;
                match outcome {
                    Ok(value) => {
                        tx.commit().await.map_err(crate::error::db)?;
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
                Err(error) if error.is_retryable() && attempt < self.max_retries => {
                    attempt += 1;
                    tracing::debug!(attempt, "transaction lost a race; running it again");
                    tokio::time::sleep(backoff(attempt)).await;
                }
                // Still losing after every retry: nothing was written, and the client may
                // send the same request again; that is a busy answer, not a failure.
                Err(StoreError::Database(cause)) if crate::error::lost_a_race(&cause) => {
                    return Err(StoreError::Contended(cause));
                }
                Err(StoreError::Raced(error)) => return Err(StoreError::Contended(error)),
                other => return other,
            }
        }
    }

    /// Starts the stock fold, unless it runs (see [`stock_fold::fold_while_open`]).
    pub(crate) fn start_stock_fold<S: Send + Sync + 'static>(
        &self,
        owner: Weak<S>,
        database: fn(&S) -> &super::Database,
    ) {
        if !self.folding.swap(true, Ordering::Relaxed) {
            tokio::spawn(stock_fold::fold_while_open(owner, database));
        }
    }
}

impl Writer {
    /// Starts following the primary, when the URL named several hosts, unless it runs.
    pub(crate) fn start_following<S: Send + Sync + 'static>(
        &self,
        owner: Weak<S>,
        database: fn(&S) -> &super::Database,
    ) {
        if self.follower.is_some() && !self.following.swap(true, Ordering::Relaxed) {
            let cadence = crate::engine::background::Cadence {
                every: FOLLOW_EVERY,
                limit: u64::MAX,
                after_error: FOLLOW_EVERY,
                done: crate::metrics::PRIMARY_MOVES,
                failed: "no host of the database URL is a primary; looking again",
            };
            tokio::spawn(crate::engine::background::repeat_while_open(
                owner,
                database,
                cadence,
                |database| Box::pin(database.follow_primary()),
            ));
        }
    }

    /// Moves the pool to the primary when it moved; answers 1 when it did.
    pub(crate) async fn follow(&self, readers: &Readers) -> Result<u64, StoreError> {
        match &self.follower {
            Some(follower) => follower.follow(pool(readers)?).await,
            None => Ok(0),
        }
    }

    /// Starts the feed sequencer, unless it runs (see [`feed_sequencer::place_while_open`]).
    pub(crate) fn start_feed_sequencer<S: Send + Sync + 'static>(
        &self,
        owner: Weak<S>,
        database: fn(&S) -> &super::Database,
    ) {
        if !self.sequencing.swap(true, Ordering::Relaxed) {
            tokio::spawn(feed_sequencer::place_while_open(owner, database));
        }
    }
}

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
