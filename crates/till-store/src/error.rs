//! How the drivers' errors become the storage errors the use cases know
//! ([`till_app::storage::StoreError`]), and what the engine code asks of them (a race to run
//! again, a constraint that refused a write).

use std::sync::Arc;
use thiserror::Error;
pub use till_app::storage::{Cause, Conflict, Forbidden, InstrumentRefusal, NewIdOf, Rule, Stale, StoreError};

/// An error of either engine's driver.
#[derive(Debug, Error)]
pub enum DbError {
    #[error(transparent)]
    Postgres(sqlx::Error),
    #[error(transparent)]
    Sqlite(rusqlite::Error),
}

impl From<sqlx::Error> for DbError {
    fn from(error: sqlx::Error) -> Self {
        DbError::Postgres(error)
    }
}

impl From<rusqlite::Error> for DbError {
    fn from(error: rusqlite::Error) -> Self {
        DbError::Sqlite(error)
    }
}

fn cause(error: DbError) -> Cause {
    Cause(Arc::new(error))
}

/// The driver's error a storage error carries, when it carries one.
fn driver_error(error: &StoreError) -> Option<&DbError> {
    match error {
        StoreError::Database(cause) => cause.0.downcast_ref::<DbError>(),
        _ => None,
    }
}

/// What the engine code asks of a storage error.
pub(crate) trait Classified {
    /// A lost race the database resolved by aborting us: safe to run the whole unit again.
    fn is_retryable(&self) -> bool;
    /// A write refused for want of a row it needed or because of one already there: a
    /// required write that changed nothing, or a unique, foreign-key or not-null constraint (a
    /// column filled by a look-up that found nothing, such as a sale's open session).
    fn is_refused_write(&self) -> bool;
    /// True when a unique constraint refused the write.
    fn is_unique_violation(&self) -> bool;
    /// A unique key refusing a row that another transaction wrote meanwhile, as
    /// [`StoreError::Raced`]; any other error as it is.
    fn raced_on_key(self) -> StoreError;
}

/// A PostgreSQL serialization failure or deadlock.
pub(crate) fn lost_a_race(cause: &Cause) -> bool {
    matches!(cause.0.downcast_ref::<DbError>(), Some(DbError::Postgres(error)) if is_retryable(error))
}

impl Classified for StoreError {
    fn is_retryable(&self) -> bool {
        match self {
            StoreError::Raced(_) => true,
            StoreError::Database(cause) => lost_a_race(cause),
            _ => false,
        }
    }

    fn is_refused_write(&self) -> bool {
        matches!(self, StoreError::NotWritten)
            || self.is_unique_violation()
            || is_constraint(
                self,
                sqlx::error::ErrorKind::ForeignKeyViolation,
                rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY,
            )
            || is_constraint(
                self,
                sqlx::error::ErrorKind::NotNullViolation,
                rusqlite::ffi::SQLITE_CONSTRAINT_NOTNULL,
            )
    }

    fn is_unique_violation(&self) -> bool {
        match driver_error(self) {
            Some(DbError::Postgres(error)) => is_unique_violation(error),
            Some(DbError::Sqlite(rusqlite::Error::SqliteFailure(error, _))) => matches!(
                error.extended_code,
                rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
            ),
            _ => false,
        }
    }

    fn raced_on_key(self) -> StoreError {
        match self {
            StoreError::Database(cause) if matches!(cause.0.downcast_ref::<DbError>(), Some(DbError::Postgres(e)) if is_unique_violation(e)) => {
                StoreError::Raced(cause)
            }
            other => other,
        }
    }
}

/// True when the constraint named `postgres` on PostgreSQL, `sqlite` on SQLite, refused the write.
fn is_constraint(error: &StoreError, postgres: sqlx::error::ErrorKind, sqlite: std::ffi::c_int) -> bool {
    match driver_error(error) {
        Some(DbError::Postgres(error)) => error.as_database_error().is_some_and(|db| db.kind() == postgres),
        Some(DbError::Sqlite(rusqlite::Error::SqliteFailure(error, _))) => error.extended_code == sqlite,
        _ => false,
    }
}

/// A driver's error as the storage error it means: unreachable, contended, a required write
/// that changed nothing, or a plain database error.
impl From<DbError> for StoreError {
    fn from(error: DbError) -> Self {
        match error {
            DbError::Postgres(error) => postgres(error),
            DbError::Sqlite(error) => sqlite(error),
        }
    }
}

fn postgres(error: sqlx::Error) -> StoreError {
    if matches!(
        error,
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) | sqlx::Error::WorkerCrashed
    ) {
        return StoreError::Unavailable(cause(DbError::Postgres(error)));
    }
    match database_code(&error).as_deref() {
        // The server shut down or dropped the connection (class 08, operator intervention
        // 57P0x), ran out of connections or room (class 53), or is a standby now (25006: a
        // failover demoted it and the connection still points at it): transient, the request
        // may be retried once the primary answers.
        Some(code)
            if code.starts_with("08") || code.starts_with("57P0") || code.starts_with("53") || code == "25006" =>
        {
            StoreError::Unavailable(cause(DbError::Postgres(error)))
        }
        // A primary demoted under a connection already writing: PostgreSQL says it cannot
        // give the transaction an id during recovery as an internal error (XX000), whose
        // message alone tells it apart. Nothing was written; the request may be retried.
        Some("XX000")
            if error
                .as_database_error()
                .is_some_and(|db| db.message().contains("during recovery")) =>
        {
            StoreError::Unavailable(cause(DbError::Postgres(error)))
        }
        // Raised by `till_all_written`: a batch's required write changed no row.
        Some("TL001") => StoreError::NotWritten,
        // PostgreSQL's statement_timeout and lock_timeout.
        Some("57014" | "55P03") => StoreError::Contended(cause(DbError::Postgres(error))),
        _ => StoreError::Database(cause(DbError::Postgres(error))),
    }
}

fn sqlite(error: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode::{CannotOpen, DatabaseBusy, DatabaseLocked, NotADatabase};
    let code = error.sqlite_error_code();
    let error = cause(DbError::Sqlite(error));
    match code {
        // Another process held the database past the busy timeout.
        Some(DatabaseBusy | DatabaseLocked) => StoreError::Contended(error),
        Some(CannotOpen | NotADatabase) => StoreError::Unavailable(error),
        _ => StoreError::Database(error),
    }
}

/// A driver's error as a storage error, for `map_err` where `?` cannot convert it.
pub(crate) fn db<E: Into<DbError>>(error: E) -> StoreError {
    error.into().into()
}

/// PostgreSQL serialization failure or deadlock.
fn is_retryable(error: &sqlx::Error) -> bool {
    matches!(database_code(error).as_deref(), Some("40001" | "40P01"))
}

fn database_code(error: &sqlx::Error) -> Option<String> {
    error.as_database_error()?.code().map(|code| code.into_owned())
}

fn is_unique_violation(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .is_some_and(|db| db.kind() == sqlx::error::ErrorKind::UniqueViolation)
}
