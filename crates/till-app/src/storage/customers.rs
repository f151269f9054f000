//! The customer directory: profiles with their consent history, the search, the export of
//! everything held on one customer, and the erasure of their personal data.

use super::*;
use jiff::Timestamp;
use std::collections::BTreeSet;
use till_core::customer::{Consent, ConsentFlag, ConsentSource, Email, Phone, Profile};
use till_core::ids::CustomerId;
use till_core::words::NameQuery;

/// A customer as the directory holds them: the bare id and points of every customer a sale
/// named, with the profile written for them, if any.
#[derive(Clone, Debug)]
pub struct CustomerRecord {
    pub customer_id: CustomerId,
    pub profile: Profile,
    pub consent: Consent,
    pub loyalty_points: i64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub last_activity_at: Timestamp,
    pub erased_at: Option<Timestamp>,
}

/// A profile write: the profile replaces the one held; a consent left out stands as it was.
pub struct PutCustomer {
    pub customer_id: CustomerId,
    pub profile: Profile,
    pub consent: Option<Consent>,
    pub source: ConsentSource,
}

/// One change of a consent flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsentChange {
    pub flag: ConsentFlag,
    pub granted: bool,
    pub source: ConsentSource,
    pub at: Timestamp,
}

/// A line of a customer's points ledger.
#[derive(Clone, Debug)]
pub struct PointsLine {
    pub kind: String,
    pub points: i64,
    pub transaction_id: Option<String>,
    pub at: Timestamp,
}

/// A sale or a return that names the customer.
#[derive(Clone, Debug)]
pub struct NamedTicket {
    pub transaction_id: String,
    /// `sale` or `return`.
    pub kind: String,
    pub store_id: String,
    pub emitted_at: Timestamp,
    pub total_cents: i64,
}

/// Everything held on one customer.
#[derive(Clone, Debug)]
pub struct CustomerExport {
    pub customer: CustomerRecord,
    pub consent_history: Vec<ConsentChange>,
    pub points: Vec<PointsLine>,
    pub tickets: Vec<NamedTicket>,
}

/// What a list asks for.
#[derive(Clone, Debug)]
pub enum CustomerSearch {
    All,
    Email(Email),
    Phone(Phone),
    Name(NameQuery),
}

/// A list's key: the word a name search found the customer by (empty for the other lists),
/// then the id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomerKey {
    pub word: String,
    pub customer_id: CustomerId,
}

/// Why a customer's personal data was erased.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErasureReason {
    Request,
    Retention,
}

impl ErasureReason {
    pub fn as_str(self) -> &'static str {
        match self {
            ErasureReason::Request => "request",
            ErasureReason::Retention => "retention",
        }
    }
}

#[async_trait::async_trait]
pub trait Customers: Send + Sync {
    async fn get_customer(&self, customer_id: &CustomerId) -> Result<Option<CustomerRecord>, StoreError>;
    /// The groups the customer is in; none for a customer without a profile or not known.
    async fn customer_groups(&self, customer_id: &CustomerId) -> Result<BTreeSet<String>, StoreError>;
    /// Creates or replaces a profile, with a line of consent history for each flag it
    /// changes; `true` when the customer was not known. Refused (`Rule::CustomerErased`) for
    /// an erased customer.
    async fn put_customer(&self, put: PutCustomer, now: Timestamp) -> Result<(CustomerRecord, bool), StoreError>;
    /// The customers `search` finds, in `group` when given, in `window`.
    async fn search_customers(
        &self,
        search: &CustomerSearch,
        group: Option<&str>,
        window: &Window<CustomerKey>,
    ) -> Result<Vec<(CustomerKey, CustomerRecord)>, StoreError>;
    async fn export_customer(&self, customer_id: &CustomerId) -> Result<Option<CustomerExport>, StoreError>;
    /// Deletes every row of the customer's personal data, forfeits their points with a ledger
    /// line, sets `erased_at` and records `customer.erased`, in one transaction; an erased
    /// customer is answered as they are. `None` for a customer never known.
    async fn erase_customer(
        &self,
        customer_id: &CustomerId,
        reason: ErasureReason,
        now: Timestamp,
    ) -> Result<Option<CustomerRecord>, StoreError>;
    /// Takes the retention job's turn for `holder` until `until`, when no node holds it at
    /// `now`; `false` when another does.
    async fn claim_retention(&self, holder: &str, now: Timestamp, until: Timestamp) -> Result<bool, StoreError>;
    /// Customers not erased whose last activity is before `before`, by id after `after`, at
    /// most `limit`. Last activity is not indexed (every sale naming a customer writes it):
    /// the retention job walks every customer by id once a day.
    async fn inactive_customers(
        &self,
        before: Timestamp,
        after: Option<&CustomerId>,
        limit: usize,
    ) -> Result<Vec<CustomerId>, StoreError>;
}
