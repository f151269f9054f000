//! What storage offers the use cases: one capability per resource family, each a trait the
//! storage crate implements for both engines, with the records it reads and writes, its errors
//! and the windows it pages by. A use case names the capabilities it needs; the binary hands
//! the app a store that has them all ([`Storage`]). docs/architecture.md, "Capabilities".

pub mod access;
pub mod catalog;
pub mod customers;
pub mod dry_run;
pub mod durability;
pub mod feed;
pub mod fiscal;
pub mod health;
pub mod invoices;
pub mod kept;
pub mod offers;
pub mod payments;
pub mod people;
pub mod receipt_mail;
pub mod sales;
pub mod sessions;
pub mod stock;
pub mod stored_value;
pub mod sync;

pub use health::{Engine, Health};
use jiff::Timestamp;
use std::sync::Arc;
use thiserror::Error;
use till_core::fiscal::ChainKind;
use till_core::ids::{CouponCode, CustomerId, NewIdError, RegisterId, SessionId, SkuId, TransactionId};
pub use till_core::stored_value::InstrumentRefusal;

/// Where a read may be served. A standby (`TILL_DATABASE_READ_URL`) takes load off the primary
/// but lags it by a moment, and may show two transactions in another order than the primary
/// did: it serves what the back office reads (reports, searches, exports), never what a till
/// reads after writing it, nor anything a decision is taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadAt {
    Primary,
    Standby,
}

/// What a driver said when the database failed: kept for the logs, never shown to a client.
#[derive(Clone, Debug)]
pub struct Cause(pub Arc<dyn std::error::Error + Send + Sync>);

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Cause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

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
    Unavailable(#[source] Cause),
    /// The write kept losing races (serialization failures, deadlocks) past the retries, or
    /// waited on a lock or a statement longer than the configured timeout. Nothing was
    /// written; the same request may be sent again.
    #[error("database contended")]
    Contended(#[source] Cause),
    /// A write met a row another transaction had just written (an article two writes created
    /// at once); run again, it finds that row and takes it into account. The writer does so.
    #[error("database raced")]
    Raced(#[source] Cause),
    #[error("database error")]
    Database(#[source] Cause),
    /// Stored data that cannot be read back into domain types.
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// The shared commit of a batch of writes failed; none of them was kept.
    #[error("commit failed")]
    CommitFailed(#[source] Cause),
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
    /// A profile is written for a customer whose personal data was erased: the id is retired.
    CustomerErased,
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
    /// The customer left a group whose promotion priced the sale.
    CustomerLeftGroup(CustomerId),
    /// A payment attempt a card tender (its index) captures was captured, voided or orphaned
    /// since the sale was checked.
    PaymentMoved(usize),
    /// Another return gave money back to the payment a return's `card` tender (its index)
    /// refunds since the return was checked.
    RefundMoved(usize),
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

/// Where a page starts and how many rows it reads.
#[derive(Clone, Debug)]
pub struct Window<K> {
    /// The key of the last item the previous page showed; `None` for the first page.
    pub after: Option<K>,
    /// How many rows to read at most.
    pub take: usize,
}

/// The key of a list read newest first: an instant, then the id that orders the items of one
/// instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Newest<Id> {
    pub at: Timestamp,
    pub id: Id,
}

/// Every capability at once: what the app is given. A use case reaches only the capabilities
/// it names.
pub trait Storage:
    sales::SalesBook
    + fiscal::FiscalJournal
    + sessions::Sessions
    + stored_value::StoredValue
    + catalog::Catalog
    + offers::Promotions
    + offers::Coupons
    + stock::Stock
    + feed::Feed
    + people::People
    + customers::Customers
    + payments::Payments
    + invoices::Invoices
    + receipt_mail::ReceiptMail
    + access::Access
    + durability::Durability
    + sync::Snapshots
    + Health
{
}

impl<T> Storage for T where
    T: sales::SalesBook
        + fiscal::FiscalJournal
        + sessions::Sessions
        + stored_value::StoredValue
        + catalog::Catalog
        + offers::Promotions
        + offers::Coupons
        + stock::Stock
        + feed::Feed
        + people::People
        + customers::Customers
        + payments::Payments
        + invoices::Invoices
        + receipt_mail::ReceiptMail
        + access::Access
        + durability::Durability
        + sync::Snapshots
        + Health
{
}
