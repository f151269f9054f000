use thiserror::Error;
use till_core::fiscal::ChainKind;
use till_core::ids::{CouponCode, NewIdError, RegisterId, SessionId, SkuId, TransactionId};
pub use till_core::stored_value::InstrumentRefusal;

/// What can go wrong below the HTTP layer. Variants other than `Database`, `Unavailable` and
/// `Corrupt` describe a business outcome the caller turns into a 4xx answer.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("{0} not found")]
    NotFound(&'static str),
    /// A uniqueness rule held: another writer got there first or the state forbids it.
    #[error("conflict: {0:?}")]
    Conflict(Conflict),
    /// A write its unit depended on changed no row, so nothing was kept; what was missing (or
    /// already there) is for the caller to find out.
    #[error("not written")]
    NotWritten,
    /// A domain rule refused the write after looking at stored state.
    #[error("refused by a rule: {0:?}")]
    Rule(Rule),
    /// The stored state the write was computed from changed before it could commit (another
    /// return of the same sale got there first); nothing was written, computing again may work.
    #[error("stale: {0:?}")]
    Stale(Stale),
    /// An authorization presented with the write no longer holds (a spent elevation grant).
    #[error("forbidden: {0:?}")]
    Forbidden(Forbidden),
    /// The database could not be reached in time (pool exhausted, connection refused).
    #[error("database unavailable")]
    Unavailable(#[source] DbError),
    /// The write kept losing races (serialization failures, deadlocks) past the retries, or
    /// waited on a lock or a statement longer than the configured timeout. Nothing was
    /// written; the same request may be sent again.
    #[error("database contended")]
    Contended(#[source] DbError),
    /// A write met a row another transaction had just written (an article two writes created
    /// at once); run again, it finds that row and takes it into account. The writer does so.
    #[error("database raced")]
    Raced(#[source] DbError),
    #[error("database error")]
    Database(#[source] DbError),
    /// Stored data that cannot be read back into domain types.
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// The shared commit of a batch of writes failed; none of them was kept.
    #[error("commit failed")]
    CommitFailed(#[source] std::sync::Arc<DbError>),
    /// The SQLite writer task is gone (the service is shutting down).
    #[error("the database writer has stopped")]
    WriterStopped,
    #[error("{0}")]
    Config(String),
}

/// Why a write was refused by a domain rule. The API layer words each reason for the person
/// at the till.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    /// A ticket names a session the store does not know.
    SessionUnknown(SessionId),
    /// A ticket names a session closed (or expired) before it could be booked.
    SessionClosed(SessionId),
    /// The coupon reached its `maxRedemptions` before this sale could redeem it.
    CouponExhausted(CouponCode),
    /// A ticket falls in a period the register was closed through early.
    PeriodClosed { register_id: String, through: String },
    /// The register's current day is asked to close early while `session` is open on it.
    SessionOpenOnDay {
        register_id: String,
        day: String,
        session: SessionId,
    },
    /// A coupon's `maxRedemptions` set below the redemptions it already has.
    RedemptionsAboveMaximum { redemptions: i64 },
    /// A new staff member is put without a PIN.
    PinNeeded,
    /// An article not in the catalog yet is written with a price that starts later: its
    /// first price starts now.
    FirstPriceLater(SkuId),
    /// A stored-value tender (its index in the tender set) cannot be taken.
    Tender { tender: usize, why: InstrumentRefusal },
    /// A cart line selling a gift card cannot activate or load it.
    GiftCardLine { line_id: String, why: InstrumentRefusal },
    /// A store or a staff member that does not exist yet is put with an id that cannot name a
    /// new one; one made before the rule keeps its id.
    NewId { of: NewIdOf, problem: NewIdError },
}

/// What a refused new id was to name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewIdOf {
    Store,
    Staff,
}

/// What changed under a write computed from stored state; nothing was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stale {
    /// A twin with the same transaction id shared the commit and was rolled back with it.
    TwinNotKept(TransactionId),
    /// Another return against this original sale committed meanwhile.
    ReturnRaced(TransactionId),
    /// The units returned of one of the original's lines moved since they were read.
    ReturnedUnitsMoved,
    /// A chain of the register grew within an archive's period while the archive was read.
    ChainGrew { chain: ChainKind, register_id: String },
}

/// An authorization presented with a write that no longer holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Forbidden {
    /// The elevation grant was spent by another sale or expired before the commit.
    GrantSpentOrExpired,
}

/// A write that another writer's got ahead of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Conflict {
    /// Another till opened a session on the register between the check and the insert.
    RegisterAlreadyOpen(RegisterId),
    /// A gift card with this code exists.
    GiftCardExists,
    /// The barcode (as written) belongs to another article.
    BarcodeTaken { barcode: String, sku: SkuId },
}

/// An error of either engine's driver.
#[derive(Debug, Error)]
pub enum DbError {
    #[error(transparent)]
    Postgres(sqlx::Error),
    #[error(transparent)]
    Sqlite(rusqlite::Error),
}

impl StoreError {
    /// A lost race the database resolved by aborting us: safe to run the whole unit again.
    pub(crate) fn is_retryable(&self) -> bool {
        match self {
            StoreError::Raced(_) => true,
            StoreError::Database(DbError::Postgres(error)) => is_retryable(error),
            _ => false,
        }
    }

    /// A write refused for want of a row it needed or because of one already there: a required
    /// write that changed nothing, or a unique, foreign-key or not-null constraint (a column
    /// filled by a look-up that found nothing, such as a sale's open session).
    pub(crate) fn is_refused_write(&self) -> bool {
        matches!(self, StoreError::NotWritten)
            || self.is_unique_violation()
            || self.is_constraint(
                sqlx::error::ErrorKind::ForeignKeyViolation,
                rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY,
            )
            || self.is_constraint(
                sqlx::error::ErrorKind::NotNullViolation,
                rusqlite::ffi::SQLITE_CONSTRAINT_NOTNULL,
            )
    }

    /// True when the constraint named `postgres` on PostgreSQL, `sqlite` on SQLite, refused the write.
    fn is_constraint(&self, postgres: sqlx::error::ErrorKind, sqlite: std::ffi::c_int) -> bool {
        match self {
            StoreError::Database(DbError::Postgres(error)) => {
                error.as_database_error().is_some_and(|db| db.kind() == postgres)
            }
            StoreError::Database(DbError::Sqlite(rusqlite::Error::SqliteFailure(error, _))) => {
                error.extended_code == sqlite
            }
            _ => false,
        }
    }

    /// A unique key refusing a row that another transaction wrote meanwhile, as
    /// [`StoreError::Raced`]; any other error as it is.
    pub(crate) fn raced_on_key(self) -> StoreError {
        match self {
            StoreError::Database(error) if matches!(&error, DbError::Postgres(e) if is_unique_violation(e)) => {
                StoreError::Raced(error)
            }
            other => other,
        }
    }

    /// True when a unique constraint refused the write.
    pub(crate) fn is_unique_violation(&self) -> bool {
        match self {
            StoreError::Database(DbError::Postgres(error)) => is_unique_violation(error),
            StoreError::Database(DbError::Sqlite(rusqlite::Error::SqliteFailure(error, _))) => matches!(
                error.extended_code,
                rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
            ),
            _ => false,
        }
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        if matches!(
            error,
            sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_)
        ) {
            return StoreError::Unavailable(DbError::Postgres(error));
        }
        match database_code(&error).as_deref() {
            // The server shut down or dropped the connection (class 08, operator intervention
            // 57P0x): transient, the request may be retried once it is back.
            Some(code) if code.starts_with("08") || code.starts_with("57P0") => {
                StoreError::Unavailable(DbError::Postgres(error))
            }
            // Raised by `till_all_written`: a batch's required write changed no row.
            Some("TL001") => StoreError::NotWritten,
            // PostgreSQL's statement_timeout and lock_timeout.
            Some("57014" | "55P03") => StoreError::Contended(DbError::Postgres(error)),
            _ => StoreError::Database(DbError::Postgres(error)),
        }
    }
}

impl From<DbError> for StoreError {
    fn from(error: DbError) -> Self {
        match error {
            DbError::Postgres(error) => error.into(),
            DbError::Sqlite(error) => error.into(),
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode::{CannotOpen, DatabaseBusy, DatabaseLocked, NotADatabase};
        let code = error.sqlite_error_code();
        let error = DbError::Sqlite(error);
        match code {
            // Another process held the database past the busy timeout.
            Some(DatabaseBusy | DatabaseLocked) => StoreError::Contended(error),
            Some(CannotOpen | NotADatabase) => StoreError::Unavailable(error),
            _ => StoreError::Database(error),
        }
    }
}

/// PostgreSQL serialization failure or deadlock.
pub(crate) fn is_retryable(error: &sqlx::Error) -> bool {
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
