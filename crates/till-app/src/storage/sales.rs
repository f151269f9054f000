//! The sales book: what a sale is committed with and answers, its receipt and prints, what a
//! return reads of its original, the search and the report's scope.

use super::people::StoreRecord;
use super::*;
use jiff::Timestamp;
use till_core::committed;
use till_core::fiscal::payload::SaleRecord;
use till_core::ids::{CustomerId, PrintId, RegisterId, SessionId, SkuId, StoreId, Subject, TransactionId};
use till_core::money::Cents;
use till_core::report::{GroupBy, Period, Piece};
use till_core::returns::ReturnableSale;
use till_core::sale::SaleType;
use till_core::stored_value::{InstrumentKind, PaidWith};

/// A priced, checked sale ready to be written, with the returned units of its original (on a
/// return) counted as this store counts them.
pub type NewSale = committed::NewSale<ReturnedCounts>;

/// How a commit went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaleOutcome {
    /// Written and sealed with this ticket sequence; `response` is the stored body.
    Committed { fiscal_seq: i64, response: String },
    /// The transaction id was already used; nothing was written.
    Existing { fingerprint: String, response: String },
}

/// What a return takes from its original sale, counted as this store counts returned units.
pub type ReturnOf = committed::ReturnOf<ReturnedCounts>;

/// A committed sale as a return reads it.
#[derive(Clone, Debug)]
pub struct OriginalSale {
    pub transaction_id: TransactionId,
    /// `sale`, `rental`, `repair` or `return`.
    pub kind: String,
    pub store_id: String,
    pub register_id: RegisterId,
    /// Its ticket's sequence in the register's chain.
    pub seq: i64,
    pub customer_id: Option<CustomerId>,
    /// What it was paid with: a return owes stored value its share.
    pub paid_with: PaidWith,
    pub returnable: ReturnableSale,
    /// In the sale's line order, alongside `returnable.lines`.
    pub lines: Vec<OriginalLine>,
    /// The units returned of its lines as read, which a return against it adds to.
    pub counted: ReturnedCounts,
}

/// A return made against a sale.
#[derive(Clone, Debug)]
pub struct ReturnSummary {
    pub transaction_id: String,
    pub credit_note: Option<String>,
    pub register_id: String,
    pub seq: i64,
    /// Negative: the refund.
    pub total_cents: i64,
    pub points_earned: i64,
    pub emitted_at: Timestamp,
    /// `(original line id, units, refund)` per returned line.
    pub lines: Vec<(String, i64, i64)>,
}

/// Which sales a search answers; every filter given must hold.
#[derive(Clone, Debug, Default)]
pub struct SaleFilter {
    pub store_id: Option<StoreId>,
    pub register_id: Option<RegisterId>,
    pub session_id: Option<SessionId>,
    pub customer_id: Option<CustomerId>,
    pub kind: Option<SaleType>,
    /// Emitted at or after this instant.
    pub from: Option<Timestamp>,
    /// Emitted before this instant.
    pub to: Option<Timestamp>,
}

/// A sale as the search lists it: what tells it apart, without its lines.
#[derive(Clone, Debug)]
pub struct SaleSummary {
    pub transaction_id: TransactionId,
    pub number: String,
    pub kind: SaleType,
    pub store_id: StoreId,
    pub register_id: RegisterId,
    pub session_id: SessionId,
    pub seller_id: Subject,
    pub customer_id: Option<CustomerId>,
    /// Negative for a return.
    pub total_cents: i64,
    pub item_count: i64,
    pub emitted_at: Timestamp,
}

impl SaleSummary {
    /// Its place in the search's order.
    pub fn key(&self) -> Newest<TransactionId> {
        Newest {
            at: self.emitted_at,
            id: self.transaction_id.clone(),
        }
    }
}

/// Everything a receipt prints.
#[derive(Clone, Debug)]
pub struct Receipt {
    pub sale: SaleRecord,
    /// The ticket's sequence and signature in the register's ticket chain.
    pub seq: i64,
    pub signature: String,
    pub store: Option<StoreRecord>,
    pub seller_name: Option<String>,
    /// Per tender, in order: the gift card or credit note it moved and its balance after.
    pub instruments: Vec<Option<TenderInstrument>>,
    /// The prints made so far, the original first.
    pub prints: Vec<Print>,
    /// The public page's token, made with the first print.
    pub link_token: Option<String>,
}

/// A print of a receipt: the first is the original, every later one a sealed DUPLICATA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Print {
    pub print_no: i64,
    /// The reprint's entry in the duplicate chain.
    pub duplicate_seq: Option<i64>,
    pub printed_at: Timestamp,
}

impl Print {
    /// The DUPLICATA's number: none for the original.
    pub fn duplicata(&self) -> Option<i64> {
        (self.print_no > 1).then(|| self.print_no - 1)
    }
}

/// A print recorded, or found made before under the same print id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Printed {
    pub print: Print,
    /// The print id named a print made before: nothing was recorded now.
    pub replayed: bool,
    /// The sale's public page token: the one given, unless the sale had one already.
    pub link_token: String,
}

/// The sales a report covers.
#[derive(Clone, Debug)]
pub struct ReportScope {
    pub store_id: Option<StoreId>,
    pub register_id: Option<RegisterId>,
    pub period: Period,
}

/// The sales book: a sale committed with its ticket, read back, printed, searched, returned against and added up.
#[async_trait::async_trait]
pub trait SalesBook: Send + Sync {
    async fn commit_sale(&self, sale: NewSale) -> Result<SaleOutcome, StoreError>;
    /// The fingerprint and stored answer of a committed transaction.
    async fn find_sale(&self, transaction_id: &TransactionId) -> Result<Option<(String, String)>, StoreError>;
    /// The store and the stored answer of a committed transaction.
    async fn sale_answer(&self, transaction_id: &TransactionId) -> Result<Option<(StoreId, String)>, StoreError>;
    /// A committed sale's sealed record, with the record of the sale it gives goods back from
    /// when it is a return against a receipt.
    async fn sale_record(
        &self,
        transaction_id: &TransactionId,
    ) -> Result<Option<(SaleRecord, Option<SaleRecord>)>, StoreError>;
    /// The receipt of a committed sale.
    async fn receipt(&self, transaction_id: &TransactionId) -> Result<Option<Receipt>, StoreError>;
    /// Records a print of the receipt; from the second on, seals a DUPLICATA. A print id
    /// recorded before with this sale answers the print it named, and records nothing.
    /// The first print also keeps `link_token` as the sale's public page token.
    async fn record_print(
        &self,
        transaction_id: &TransactionId,
        print_id: Option<&PrintId>,
        link_token: &str,
        operator: &str,
        now: Timestamp,
    ) -> Result<Printed, StoreError>;
    /// The sale whose public receipt page `token` opens.
    async fn linked_receipt(&self, token: &str) -> Result<Option<TransactionId>, StoreError>;
    /// The sale `transaction_id` with what remains returnable of it.
    async fn original_sale(&self, transaction_id: &TransactionId) -> Result<Option<OriginalSale>, StoreError>;
    /// The returns made against `transaction_id`, oldest first.
    async fn returns_against(&self, transaction_id: &TransactionId) -> Result<Vec<ReturnSummary>, StoreError>;
    /// The sales `filter` admits, newest first, in `window`, read `at` the primary or a standby.
    async fn search_sales(
        &self,
        filter: &SaleFilter,
        window: &Window<Newest<TransactionId>>,
        at: ReadAt,
    ) -> Result<Vec<SaleSummary>, StoreError>;
    /// The pieces of a report grouped by `group_by` over `scope`: the rollups of the sessions
    /// closed, and rollups computed from the sales of the sessions still open; read `at`.
    async fn report_pieces(&self, scope: &ReportScope, group_by: GroupBy, at: ReadAt)
    -> Result<Vec<Piece>, StoreError>;
    /// Rolls up the sessions closed before rollups existed that a report over `scope` covers,
    /// each in a transaction of its own; a session another node rolled up meanwhile is left.
    async fn roll_up_pending(&self, scope: &ReportScope) -> Result<(), StoreError>;
}

/// The units returned of a sale's lines, counted in the sale's own row (`returned_units`), as
/// they were read: a return adds to them only if no other return moved them since.
#[derive(Clone, Debug, PartialEq)]
pub struct ReturnedCounts {
    /// The column as read, which a return's update requires unchanged; NULL until a first return.
    pub stored: Option<String>,
    /// Units returned of each line, in line order.
    pub returned: Vec<i64>,
    /// Units sold on each line.
    pub sold: Vec<i64>,
}

/// What a return repeats of an original line.
#[derive(Clone, Debug)]
pub struct OriginalLine {
    pub line_no: i64,
    /// `None` for a custom line, which moves no stock.
    pub sku_id: Option<SkuId>,
    pub label: Option<String>,
    pub unit_price: Cents,
}

/// A gift card or a credit note as a receipt names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TenderInstrument {
    pub kind: InstrumentKind,
    /// A card's last four symbols, a credit note's number.
    pub label: String,
    pub balance_after: i64,
    /// The code that redeems the credit note a return issued, printed on that return's
    /// receipt; `None` for every other tender.
    pub code: Option<String>,
}
