//! Why a use case refused, as a value. The API layer words each reason once, with its status;
//! a refused request changed nothing.

use crate::storage::StoreError;
use crate::storage::access::GrantOperation;
use crate::storage::sessions::OpenRefusal;
use till_core::ids::{
    CountId, CouponCode, MovementId, RegisterId, SendId, SessionId, SkuId, StoreId, Subject, TransactionId, TransferId,
};
use till_core::money::{Bps, Cents};
use till_core::offline::IssuedAtProblem;
use till_core::pricing::PricingError;
use till_core::returns::ReturnError;
use till_core::settlement::SettlementError;
use till_core::stored_value::{RefundPolicyError, TenderProblem};

/// How a use case failed.
#[derive(Debug)]
pub enum Error {
    /// A rule of the use case refused the request.
    Refused(Refusal),
    /// Storage failed, or refused by a rule of its own.
    Store(StoreError),
    /// What should not happen (an answer that could not be written, a task that died); the
    /// API logs it and answers a generic 500.
    Internal(Box<dyn std::error::Error + Send + Sync>),
}

impl Error {
    pub(crate) fn internal(error: impl std::error::Error + Send + Sync + 'static) -> Error {
        Error::Internal(Box::new(error))
    }

    /// A refusal of a ticket that a twin request with the same transaction id may explain:
    /// one that refuses the content or the state, not a failure nor a transaction id taken.
    pub(crate) fn may_hide_a_twin(&self) -> bool {
        match self {
            Error::Refused(refusal) => !matches!(refusal, Refusal::DifferentContent),
            Error::Store(error) => matches!(
                error,
                StoreError::Rule(_) | StoreError::Stale(_) | StoreError::Forbidden(_) | StoreError::NotFound(_)
            ),
            Error::Internal(_) => false,
        }
    }
}

/// For logs: storage's and internal errors in their own words, a refusal by its name (the API
/// words refusals for people).
impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Refused(refusal) => write!(f, "refused: {refusal:?}"),
            Error::Store(error) => error.fmt(f),
            Error::Internal(error) => error.fmt(f),
        }
    }
}

impl From<Refusal> for Error {
    fn from(refusal: Refusal) -> Self {
        Error::Refused(refusal)
    }
}

impl From<StoreError> for Error {
    fn from(error: StoreError) -> Self {
        Error::Store(error)
    }
}

/// Every reason a use case refuses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    // Booking a ticket on a register session (finalize and returns).
    /// The network has stores, and the request names another.
    StoreNotInNetwork,
    /// A till's token belongs to one session and the request names another.
    TokenOfAnotherSession {
        token: SessionId,
        named: SessionId,
    },
    SessionUnknown(SessionId),
    /// Closed, or expired.
    SessionClosed(SessionId),
    SessionInOtherStore {
        session: SessionId,
        store: StoreId,
        named: StoreId,
    },
    RegisterNotSessions {
        named: RegisterId,
        session: SessionId,
        register: RegisterId,
    },
    /// The transaction id was committed before with other content.
    DifferentContent,
    /// The ticket's `issuedAt` is too old to book, or ahead of the server's clock.
    IssuedAt(IssuedAtProblem),

    // Finalize.
    /// A return without a receipt, without the scope to create returns.
    ReturnNeedsScope,
    CouponWithReturn,
    QuantitiesTooLarge,
    ChangeTooLarge,
    /// A sales report's sums leave the integers a client reads exactly.
    ReportTooLarge,
    /// The tenders do not settle the server's total; `differing` names the first lines the
    /// till priced otherwise, when that explains the amount due.
    Settlement {
        error: SettlementError,
        differing: Vec<PriceGap>,
    },
    /// A stored-value tender (its index) lacks what it draws on.
    Tender {
        tender: usize,
        problem: TenderProblem,
    },
    /// A line selling a gift card cannot.
    GiftCardLine {
        line_id: String,
        problem: CardLineProblem,
    },

    // Pricing a cart (finalize and the dry run).
    EmptyCart,
    /// A line not marked custom names no article.
    LineWithoutArticle {
        line_id: String,
    },
    NotInCatalog {
        line_id: String,
        sku: SkuId,
    },
    Coupon {
        code: CouponCode,
        why: CouponUnusable,
    },
    AmountsTooLarge,
    Pricing(PricingError),

    // Authority over a sale's declared discounts and a return without a receipt.
    /// More than the caller may grant alone; `share` of the subtotal after promotions.
    DiscountsBeyondLimit {
        amount: Cents,
        share: Bps,
        subject: Subject,
    },
    DiscountsNotApproved(Unapproved),
    ReturnNeedsApproval,
    ReturnNotApproved(Unapproved),

    // A committed sale's receipt.
    /// No such sale, or one of another store than a till's token's.
    NoSuchSale(TransactionId),
    /// No receipt's public page has this token.
    NoSuchReceiptLink,
    /// Receipts are not sent by e-mail: no mail server is configured.
    EReceiptsOff,
    /// A send names no address, and the sale has no customer who consented to e-receipts.
    NoReceiptAddress,
    /// The send id names a send of another sale.
    SendIdTaken(SendId),

    // A return against a receipt.
    NoOriginal(TransactionId),
    OriginalIsReturn(TransactionId),
    Return {
        error: ReturnError,
        original: TransactionId,
    },
    /// The tenders do not pay out the refund.
    RefundMismatch {
        error: SettlementError,
        refund: Cents,
    },
    ReturnAmountsTooLarge,
    /// The return's tenders pay out what stored value paid for.
    RefundPolicy(RefundPolicyError),

    // A manager's approval at the till.
    /// Asked with another credential than a register session's token.
    NotATill,
    GrantSessionClosed(SessionId),
    RateLimited {
        retry_after: u64,
    },
    /// Too many wrong PINs; `retry_after` seconds until the next attempt is weighed.
    LockedOut {
        holder: PinHolder,
        retry_after: u64,
    },
    /// An unknown person or a wrong PIN, which are not told apart.
    WrongPin(PinHolder),
    GrantsStale,
    /// The manager may not approve a discount of this size.
    MissingAuthority,
    NoElevationRequired,
    ElevationUnavailable,

    // Staff.
    /// A member not yet known, written without a PIN.
    NewStaffWithoutPin,

    // Register sessions.
    /// The cashier lacks the scope to finalize sales.
    MayNotWorkTill(Subject),
    Open(OpenRefusal),

    // The cash drawer.
    /// Named by the path, and not there.
    NoSuchSession(SessionId),
    /// A till's token reaches its own session's drawer only.
    DrawerOfAnotherSession {
        token: SessionId,
        named: SessionId,
    },
    /// Neither the session's own till token nor the scope to manage sessions.
    DrawerNeedsScope,
    /// The movement id was recorded before for another movement.
    MovementIdTaken(MovementId),
    /// Closed or expired: its drawer was counted with its Z report.
    DrawerClosed(SessionId),

    // Stock counts and transfers.
    Stock(StockRefusal),

    // Card payments.
    Payment(crate::payments::PaymentRefusal),
    /// A `card` tender (its index) cannot capture the attempt it names.
    Capture {
        tender: usize,
        refusal: till_core::payment::CaptureRefusal,
    },
    /// A return's `card` tender (its index) cannot give money back to the payment it names.
    CardRefund {
        tender: usize,
        refusal: till_core::payment::RefundRefusal,
    },

    // Invoices for business customers.
    Invoice(crate::invoices::InvoiceProblem),
}

/// Why a count or a transfer moved no stock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StockRefusal {
    /// The store named by the path or the body is not in the network.
    UnknownStore(StoreId),
    /// The article of a body line (`lines.N.skuId`) is not in the catalog.
    NotInCatalog {
        line: usize,
        sku: SkuId,
    },
    /// The count id was recorded before for another count.
    CountIdTaken(CountId),
    /// The transfer id was recorded before for another transfer.
    TransferIdTaken(TransferId),
    /// A transfer goes from a store to another.
    SameStore,
    NoSuchTransfer(TransferId),
    /// The transfer was received before, with other quantities.
    AlreadyReceived(TransferId),
    /// A receipt line names an article the transfer did not carry.
    NotSent {
        line: usize,
        sku: SkuId,
    },
    /// The receipt does not state an article of the transfer.
    NotStated(SkuId),
}

/// Why a cart line cannot sell a gift card.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CardLineProblem {
    /// A gift card is sold as a custom line.
    NotCustom,
    /// A multi-purpose voucher bears no VAT when sold.
    Taxed,
    /// Sold on a return.
    OnReturn,
}

/// Why a presented coupon cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CouponUnusable {
    Unknown,
    Inactive,
    NotYetValid,
    Expired,
    Exhausted,
}

/// Why an elevation token cannot approve what it is presented for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unapproved {
    NotAToken,
    NoSuchGrant,
    Spent,
    Expired,
    OtherSession,
    /// One approval covers line discounts or ticket discounts, not both.
    LineAndTicket,
    WrongOperation {
        approves: GrantOperation,
        needs: GrantOperation,
    },
    /// The discounts take more than the manager approved (`None`: no such cap).
    TooSmall {
        amount: Option<Cents>,
        percent: Option<Bps>,
        takes: Cents,
    },
    RefundAboveApproval {
        approved: Cents,
        refund: Cents,
    },
    /// A refund is approved by its amount, and the grant names none.
    NoAmount,
}

/// A line the till priced otherwise than the catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriceGap {
    pub line_id: String,
    pub till: Cents,
    pub catalog: Cents,
}

/// Whose PIN is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinHolder {
    /// A manager approving at the till.
    Manager,
    /// A cashier opening a session.
    Cashier,
}
