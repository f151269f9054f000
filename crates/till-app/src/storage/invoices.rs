//! Invoices for business customers (docs/invoices.md): kept with their XML and answer, each
//! ticket invoiced once, numbered without gaps per store and year, sealed in the journal.

use super::*;
use jiff::Timestamp;
use jiff::civil::Date;
use till_core::ids::{InvoiceId, StoreId, TransactionId};
use till_core::invoice::{Draft, InvoiceRefusal};

/// An invoice to keep: what it is made of, and the fingerprint of the request that asked it.
#[derive(Clone, Debug)]
pub struct NewInvoice {
    pub draft: Draft,
    /// The SHA-256 of the request's canonical form: the same id asked again with the same
    /// request is answered again, with another is refused.
    pub fingerprint: String,
}

/// An invoice as kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredInvoice {
    pub invoice_id: InvoiceId,
    pub store_id: StoreId,
    pub number: String,
    pub credit: bool,
    pub issued_on: Date,
    pub issued_at: Timestamp,
    pub fingerprint: String,
    /// The answer as written when it was issued (an `InvoiceAnswer`), answered again as is.
    pub answer: String,
    /// Its CII XML, as sealed.
    pub xml: Vec<u8>,
    /// The tickets it covers, in order.
    pub transaction_ids: Vec<TransactionId>,
}

/// How keeping an invoice went.
#[derive(Clone, Debug)]
pub enum IssueOutcome {
    Issued(StoredInvoice),
    /// Kept earlier under this id for the same request: answered again.
    Replayed(StoredInvoice),
    /// Kept earlier under this id for another request.
    IdTaken(StoredInvoice),
    /// A ticket of the request is on another invoice already.
    AlreadyInvoiced {
        transaction_id: TransactionId,
        number: String,
    },
    /// The domain refused the tickets once numbered (only a change of the records since the
    /// use case read them does).
    Refused(InvoiceRefusal),
}

/// An invoice as a list shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvoiceSummary {
    pub invoice_id: InvoiceId,
    pub store_id: StoreId,
    pub number: String,
    pub credit: bool,
    /// The invoice a credit invoice credits.
    pub credits: Option<InvoiceId>,
    pub issued_on: Date,
    pub issued_at: Timestamp,
    pub buyer_name: String,
    /// VAT included; positive on a credit invoice too.
    pub total_cents: i64,
    pub transaction_ids: Vec<TransactionId>,
}

impl InvoiceSummary {
    /// Its place in a list's order.
    pub fn key(&self) -> Newest<InvoiceId> {
        Newest {
            at: self.issued_at,
            id: self.invoice_id.clone(),
        }
    }
}

/// Which invoices a list answers; every filter given must hold.
#[derive(Clone, Debug, Default)]
pub struct InvoiceFilter {
    pub store_id: Option<StoreId>,
    /// Issued on or after this day.
    pub from: Option<Date>,
    /// Issued on or before this day.
    pub to: Option<Date>,
}

/// An invoice's XML and the digest its event sealed, for the journal's audit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SealedInvoice {
    pub number: String,
    /// The entry of the register's event chain that sealed it.
    pub event_seq: i64,
    pub xml: Vec<u8>,
}

/// Invoices.
#[async_trait::async_trait]
pub trait Invoices: Send + Sync {
    /// Keeps the invoice `new` asks for, in one transaction: the store's next number of the
    /// issue's year, the invoice made with it by [`Draft::issue`], each ticket linked to it
    /// (a ticket is invoiced once), and its technical event sealed in its first ticket's
    /// register. An invoice id seen before is answered from what it kept.
    async fn issue_invoice(&self, new: NewInvoice) -> Result<IssueOutcome, StoreError>;
    async fn invoice(&self, invoice_id: &InvoiceId) -> Result<Option<StoredInvoice>, StoreError>;
    /// The invoice covering a ticket, if one does.
    async fn invoice_covering(&self, transaction_id: &TransactionId) -> Result<Option<InvoiceSummary>, StoreError>;
    /// The invoices `filter` admits, newest issued first, in `window`, read `at`.
    async fn list_invoices(
        &self,
        filter: &InvoiceFilter,
        window: &Window<Newest<InvoiceId>>,
        at: ReadAt,
    ) -> Result<Vec<InvoiceSummary>, StoreError>;
    /// The invoices sealed in `register_id`'s event chain, for the audit of its journal.
    async fn sealed_invoices(&self, register_id: &str) -> Result<Vec<SealedInvoice>, StoreError>;
}
