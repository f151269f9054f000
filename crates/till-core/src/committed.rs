//! The types a ticket is committed as: a priced, checked sale (or a return against a receipt)
//! with its lines, tenders, VAT and reductions, the answer it is stored and replayed with, and
//! which way it moves money and goods. Storage writes and seals it as it is.

use crate::ids::{CouponCode, CustomerId, RegisterId, SessionId, SkuId, StoreId, Subject, TransactionId};
use crate::money::{Cents, VatRate};
use crate::pricing::VatTotal;
use crate::sale::{SaleType, Tender};
use crate::stored_value::TicketMoves;
use jiff::Timestamp;
use std::collections::BTreeSet;
use std::sync::Arc;

/// A priced, checked sale ready to be written. `Counted` is how storage counts the units
/// returned of an original sale's lines (see [`ReturnOf::counted`]).
#[derive(Clone, Debug)]
pub struct NewSale<Counted> {
    pub transaction_id: TransactionId,
    pub event_id: String,
    pub fingerprint: String,
    pub kind: SaleType,
    pub number: String,
    pub store_id: StoreId,
    pub seller_id: Subject,
    pub customer_id: Option<CustomerId>,
    pub session_id: SessionId,
    pub register_id: RegisterId,
    pub lines: Vec<NewSaleLine>,
    pub tenders: Vec<Tender>,
    pub vat: Vec<VatTotal>,
    pub subtotal: Cents,
    pub total: Cents,
    pub item_count: i64,
    pub change: Cents,
    pub points_earned: i64,
    /// Units leaving (negative) or entering stock, one entry per article.
    pub stock_moves: Vec<(SkuId, i64)>,
    pub coupon_code: Option<CouponCode>,
    pub issued_at: Option<Timestamp>,
    pub emitted_at: Timestamp,
    /// Booked after its session was closed: sealed at `emitted_at`, its arrival, and kept out
    /// of the session's sealed totals.
    pub late: bool,
    /// The 201 body, stored for byte-identical replays.
    pub response: SaleAnswer,
    /// The elevation grant this sale spends, if its discounts needed one.
    pub spends_grant: Option<String>,
    /// Every reduction, in the order pricing applied them.
    pub adjustments: Vec<Adjustment>,
    /// On a return against a receipt: the sale it gives goods back from.
    pub original: Option<ReturnOf<Counted>>,
    /// Gift cards, credit notes and points the ticket draws on or pays into.
    pub stored_value: TicketMoves,
    /// The customer groups its promotions were for: the commit books it only while the
    /// customer is still in each.
    pub relies_on_groups: BTreeSet<String>,
    /// The card payment attempts its tenders capture, each checked against the state read
    /// before the transaction: the commit captures each only if it is still in that state.
    pub captures: Vec<Capture>,
    /// On a return: what its `card` tenders give back to the original's captured payments,
    /// each checked against what was refunded to the payment when the return was checked.
    pub card_refunds: Vec<CardRefund>,
}

/// A `card` tender's capture of an approved payment attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capture {
    /// The tender's index, which a refusal names (`tenders.tenders.N`).
    pub tender: usize,
    pub payment_id: crate::ids::PaymentId,
    /// `authorized` or `partially_authorized`, as read when the sale was checked.
    pub from: crate::payment::PaymentState,
    pub amount: Cents,
}

/// A return's `card` tender giving money back to a payment its original sale captured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CardRefund {
    /// The tender's index, which a refusal names (`tenders.tenders.N`).
    pub tender: usize,
    /// What had been refunded to the payment when the return was checked: the commit adds
    /// the refund only if it is still that.
    pub refunded_before: Cents,
    /// The refund attempt to record, `refunded`, naming the payment in `refund_of`.
    pub refund: crate::payment::Attempt,
}

/// What a return takes from its original sale, with the state it was computed from: the commit
/// refuses it as stale when another return changed that state in the meantime.
#[derive(Clone, Debug)]
pub struct ReturnOf<Counted> {
    pub transaction_id: TransactionId,
    pub register_id: RegisterId,
    /// The original's ticket sequence.
    pub seq: i64,
    pub lines: Vec<ReturnedLine>,
    /// Refunded and taken back by this return (positive).
    pub refund: Cents,
    pub points_back: i64,
    /// The original's refunded total and points taken back before this return.
    pub refunded_before: Cents,
    pub points_returned_before: i64,
    /// The units returned of the original's lines before this return, as storage read them
    /// with it and in storage's own terms.
    pub counted: Counted,
}

#[derive(Clone, Debug)]
pub struct ReturnedLine {
    /// The original line's position.
    pub line_no: i64,
    pub units: i64,
    pub returned_before: i64,
}

/// Writes a return's answer naming the credit note it is given (its number), for `Reader`.
pub type RenderWithCreditNote = dyn Fn(&str, Reader) -> Result<String, serde_json::Error> + Send + Sync;

/// Who reads a return's answer. The caller, and its replays, learn the code that redeems the
/// credit note the return issues; the event feed, which other systems read, never does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    Caller,
    Feed,
}

/// The 201 body of a sale or a return, as it is stored and replayed.
#[derive(Clone)]
pub enum SaleAnswer {
    /// Complete before the commit.
    Ready(String),
    /// A return's answer names its credit note, whose number is made of the ticket's place in
    /// the register's chain: the commit renders it once it holds that place.
    NamingCreditNote(Arc<RenderWithCreditNote>),
}

/// Why an answer could not be written.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    #[error("a return's answer could not be written: {0}")]
    NotWritten(serde_json::Error),
    #[error("an answer naming a credit note for a ticket without one")]
    NoCreditNote,
}

impl SaleAnswer {
    /// The body `reader` reads of a ticket whose credit-note number, if it has one, is
    /// `credit_note`.
    pub fn render(&self, credit_note: Option<&str>, reader: Reader) -> Result<String, AnswerError> {
        match (self, credit_note) {
            (SaleAnswer::Ready(body), _) => Ok(body.clone()),
            (SaleAnswer::NamingCreditNote(render), Some(number)) => {
                render(number, reader).map_err(AnswerError::NotWritten)
            }
            (SaleAnswer::NamingCreditNote(_), None) => Err(AnswerError::NoCreditNote),
        }
    }

    /// Whether the answer is written for each reader apart.
    pub fn depends_on_reader(&self) -> bool {
        matches!(self, SaleAnswer::NamingCreditNote(_))
    }
}

impl std::fmt::Debug for SaleAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SaleAnswer::Ready(body) => f.debug_tuple("Ready").field(body).finish(),
            SaleAnswer::NamingCreditNote(_) => f.write_str("NamingCreditNote(..)"),
        }
    }
}

/// One reduction of a sale and what it took off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adjustment {
    /// `promotion`, `declared` or `coupon`.
    pub source: &'static str,
    pub source_id: String,
    /// The promotion's name at the time of the sale.
    pub label: Option<String>,
    pub amount: Cents,
}

#[derive(Clone, Debug)]
pub struct NewSaleLine {
    pub line_id: String,
    /// `None` for a custom line.
    pub sku_id: Option<SkuId>,
    /// The article's name at the time of the sale.
    pub label: Option<String>,
    pub quantity: i64,
    pub unit_price: Cents,
    pub vat_rate: VatRate,
    pub gross: Cents,
    pub promotion: Cents,
    pub declared: Cents,
    pub ticket: Cents,
    pub net: Cents,
}

/// Which way a ticket moves money and goods: a sale takes payment and gives goods, a return
/// the reverse. Tickets are stored with their sign, so that every sum over them is net.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sign {
    Sale,
    Return,
}

impl Sign {
    /// A return without a receipt is a sale in reverse; every other kind is a sale.
    pub fn of(kind: SaleType) -> Sign {
        match kind {
            SaleType::Return => Sign::Return,
            _ => Sign::Sale,
        }
    }

    pub fn money(self, amount: Cents) -> Cents {
        match self {
            Sign::Sale => amount,
            Sign::Return => amount.checked_neg(),
        }
    }

    /// Units moving into stock for `quantity` on the ticket.
    pub fn units(self, quantity: i64) -> i64 {
        match self {
            Sign::Sale => -quantity,
            Sign::Return => quantity,
        }
    }

    /// Loyalty points moving into the customer's balance for `points` the amount earns.
    pub fn points(self, points: i64) -> i64 {
        match self {
            Sign::Sale => points,
            Sign::Return => -points,
        }
    }

    pub fn tender(self, tender: &Tender) -> Tender {
        Tender {
            id: tender.id.clone(),
            method: tender.method,
            applied: self.money(tender.applied),
            presented: self.money(tender.presented),
            change: self.money(tender.change),
            forfeited: self.money(tender.forfeited),
            reference: tender.reference.clone(),
        }
    }

    pub fn vat(self, vat: &VatTotal) -> VatTotal {
        VatTotal {
            rate: vat.rate,
            total: self.money(vat.total),
            vat: self.money(vat.vat),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sale::TenderMethod;

    fn cents(value: i64) -> Cents {
        Cents::new(value).unwrap()
    }

    #[test]
    fn a_return_moves_money_goods_and_points_the_other_way() {
        assert_eq!(Sign::of(SaleType::Return), Sign::Return);
        assert_eq!(Sign::of(SaleType::Sale), Sign::Sale);
        assert_eq!(Sign::Sale.money(cents(1250)), cents(1250));
        assert_eq!(Sign::Return.money(cents(1250)).get(), -1250);
        assert_eq!(Sign::Sale.units(3), -3, "a sale takes goods out of stock");
        assert_eq!(Sign::Return.units(3), 3, "a return brings them back");
        assert_eq!(Sign::Return.points(12), -12);
        let tender = Tender {
            id: "t1".into(),
            method: TenderMethod::Cash,
            applied: cents(900),
            presented: cents(1000),
            change: cents(100),
            forfeited: Cents::ZERO,
            reference: None,
        };
        let back = Sign::Return.tender(&tender);
        assert_eq!(
            (back.applied.get(), back.presented.get(), back.change.get()),
            (-900, -1000, -100)
        );
        assert_eq!(Sign::Sale.tender(&tender), tender);
    }

    #[test]
    fn an_answer_naming_a_credit_note_is_written_only_with_one() {
        let ready = SaleAnswer::Ready("{}".into());
        assert_eq!(ready.render(None, Reader::Caller).unwrap(), "{}");
        let naming = SaleAnswer::NamingCreditNote(Arc::new(|number: &str, reader: Reader| {
            Ok(format!("{{\"n\":\"{number}\",\"r\":\"{reader:?}\"}}"))
        }));
        assert_eq!(
            naming.render(Some("AV-r1-000007"), Reader::Caller).unwrap(),
            r#"{"n":"AV-r1-000007","r":"Caller"}"#
        );
        assert_eq!(
            naming.render(Some("AV-r1-000007"), Reader::Feed).unwrap(),
            r#"{"n":"AV-r1-000007","r":"Feed"}"#
        );
        assert!(matches!(
            naming.render(None, Reader::Caller),
            Err(AnswerError::NoCreditNote)
        ));
    }
}
