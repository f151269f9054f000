//! From committed sales to an invoice's lines, VAT breakdown and totals.
//!
//! A till's amounts include VAT, and each sale's VAT at a rate was computed once on its total
//! at that rate (rounded half away from zero) and sealed in the journal. An EN 16931 invoice
//! states amounts without VAT. The invoice keeps the sealed figures and derives the rest,
//! so that nothing is rounded twice:
//!
//! - the VAT at a rate (BT-117) is the sum of the sales' VAT at that rate, to the cent;
//! - each line's share of it is its sale's VAT at the rate shared over that sale's lines at
//!   the rate in proportion to their nets, by the largest remainder (as
//!   `GET /v1/sales/{id}/lines` explains it), and its net without VAT (BT-131) is its net with
//!   VAT less that share;
//! - the taxable amount at a rate (BT-116) is the sum of those line nets, the invoice's total
//!   without VAT (BT-106, BT-109) their sum, its VAT (BT-110) the sum of the breakdown's, and
//!   its total with VAT (BT-112) the two added: the sales' totals, to the cent.
//!
//! So every sum the standard defines (BR-CO-10, -13, -14, -15, BR-S-08) holds exactly. The VAT
//! at a rate then differs from the taxable amount times the rate by the sales' own roundings,
//! under a cent per sale: BR-S-09 allows less than one unit of currency, and an invoice
//! whose sales would add up to that is refused rather than written with VAT the journal does
//! not hold.
//!
//! A line's reductions (promotions, discounts, its share of ticket reductions) are its line
//! allowance (BT-136) without the VAT they hold; its price (BT-146) is its net plus that
//! allowance, for the line's quantity as base quantity (BT-149), so that price, allowance and
//! net agree exactly however many units it has.

use super::{
    Buyer, Invoice, InvoiceKind, InvoiceLine, InvoiceNumber, InvoiceReference, InvoiceSeller, SellerGap, Ticket,
    Totals, VatBreakdown, VatCategory,
};
use crate::fiscal::payload::{SaleRecord, SaleRecordLine};
use crate::ids::StoreId;
use crate::instant::from_micros;
use crate::money::{Cents, Overflow, VatRate, checked_sum, div_round_half_away};
use crate::pricing::{allocate, vat_included};
use crate::seller::SellerIdentity;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use std::collections::BTreeSet;

/// What an invoice is issued as: its number, its day, its parties.
#[derive(Clone, Debug)]
pub struct Issue<'a> {
    pub number: InvoiceNumber,
    /// In the store's time zone; its year is the number's.
    pub issued_on: Date,
    pub store_id: &'a StoreId,
    /// The store's identity, as kept with its profile.
    pub seller: &'a SellerIdentity,
    pub buyer: Buyer,
    /// The store's, to tell the day each ticket was rung.
    pub time_zone: &'a TimeZone,
}

/// The invoice a credit invoice cancels part of.
#[derive(Clone, Debug)]
pub struct CreditOf<'a> {
    pub invoice: InvoiceReference,
    /// The transaction ids of the sales it covers.
    pub sales: &'a [String],
}

/// Why no invoice can be made of these sales.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InvoiceRefusal {
    #[error("an invoice covers at least one sale")]
    NoSale,
    #[error("the number is of another store, or of another year than the issue date")]
    NumberOfAnotherStoreOrYear,
    #[error("ticket {0} is of another store")]
    AnotherStore(String),
    #[error("ticket {0} is named twice")]
    Twice(String),
    /// A return is credited by a credit invoice, not invoiced.
    #[error("ticket {0} is a return")]
    AReturn(String),
    #[error("ticket {0} is not a return against a receipt")]
    NotAReturn(String),
    #[error("ticket {0} returns goods of a sale the credited invoice does not cover")]
    NotOfTheInvoice(String),
    #[error("a credit invoice cannot be issued before the invoice it credits")]
    BeforeTheInvoice,
    #[error(transparent)]
    Seller(#[from] SellerGap),
    /// A sealed record whose amounts do not add up: only a damaged one.
    #[error("the record of ticket {transaction_id} {problem}")]
    Record {
        transaction_id: String,
        problem: RecordProblem,
    },
    /// The sales' VAT at a rate strays from the standard's rule by a unit of currency or more.
    #[error("the VAT at {0} of so many tickets cannot be stated on one invoice")]
    VatRounding(VatRate),
    #[error("amounts exceed the largest representable value")]
    Overflow,
    #[error("the XML could not be written")]
    Xml,
}

/// What does not add up in a sale's record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordProblem {
    #[error("has no line")]
    NoLine,
    #[error("has a line of no unit")]
    Quantity,
    #[error("has an amount of the wrong sign or out of range")]
    Amount,
    #[error("has a VAT rate out of range")]
    Rate,
    #[error("has a line whose net exceeds its gross")]
    Reductions,
    #[error("has a VAT breakdown that is not its lines'")]
    Vat,
    #[error("has a total that is not its lines'")]
    Total,
}

impl From<Overflow> for InvoiceRefusal {
    fn from(_: Overflow) -> Self {
        InvoiceRefusal::Overflow
    }
}

/// Which way a ticket's stored amounts go: a return's are stored negative.
#[derive(Clone, Copy)]
enum Direction {
    Sales,
    Returns,
}

impl Direction {
    fn factor(self) -> i64 {
        match self {
            Direction::Sales => 1,
            Direction::Returns => -1,
        }
    }
}

const RETURN: &str = "return";

/// The invoice of `sales`, committed sales (not returns) of the issuing store.
pub fn invoice(issue: Issue<'_>, sales: &[SaleRecord]) -> Result<Invoice, InvoiceRefusal> {
    if let Some(sale) = sales.iter().find(|sale| sale.kind == RETURN) {
        return Err(InvoiceRefusal::AReturn(sale.transaction_id.clone()));
    }
    assemble(issue, InvoiceKind::Invoice, sales, Direction::Sales)
}

/// The credit invoice of `returns`, returns against receipts of sales that `of` covers.
pub fn credit_invoice(issue: Issue<'_>, of: &CreditOf<'_>, returns: &[SaleRecord]) -> Result<Invoice, InvoiceRefusal> {
    for ticket in returns {
        let original = match (&ticket.original, ticket.kind == RETURN) {
            (Some(original), true) => original,
            _ => return Err(InvoiceRefusal::NotAReturn(ticket.transaction_id.clone())),
        };
        if !of.sales.contains(&original.transaction_id) {
            return Err(InvoiceRefusal::NotOfTheInvoice(ticket.transaction_id.clone()));
        }
    }
    if issue.issued_on < of.invoice.issued_on {
        return Err(InvoiceRefusal::BeforeTheInvoice);
    }
    assemble(
        issue,
        InvoiceKind::Credit(of.invoice.clone()),
        returns,
        Direction::Returns,
    )
}

fn assemble(
    issue: Issue<'_>,
    kind: InvoiceKind,
    tickets: &[SaleRecord],
    direction: Direction,
) -> Result<Invoice, InvoiceRefusal> {
    if tickets.is_empty() {
        return Err(InvoiceRefusal::NoSale);
    }
    if issue.number.store_id() != issue.store_id || issue.number.year() != issue.issued_on.year() {
        return Err(InvoiceRefusal::NumberOfAnotherStoreOrYear);
    }
    let seller = InvoiceSeller::of(issue.seller)?;
    let mut seen = BTreeSet::new();
    let mut covered = Vec::with_capacity(tickets.len());
    let mut lines = Vec::new();
    for (index, ticket) in tickets.iter().enumerate() {
        let id = || ticket.transaction_id.clone();
        if ticket.store_id != issue.store_id.as_str() {
            return Err(InvoiceRefusal::AnotherStore(id()));
        }
        if !seen.insert(ticket.transaction_id.as_str()) {
            return Err(InvoiceRefusal::Twice(id()));
        }
        let rung = from_micros(ticket.issued_at.unwrap_or(ticket.emitted_at));
        covered.push(Ticket {
            transaction_id: id(),
            number: ticket.number.clone(),
            register_id: ticket.register_id.clone(),
            on: rung.to_zoned(issue.time_zone.clone()).date(),
        });
        let of_ticket = ticket_lines(ticket, index, direction).map_err(|problem| InvoiceRefusal::Record {
            transaction_id: id(),
            problem,
        })?;
        lines.extend(of_ticket);
    }
    let vat = breakdown(&lines)?;
    let net = checked_sum(lines.iter().map(|line| line.net))?;
    let tax = checked_sum(vat.iter().map(|rate| rate.tax))?;
    let with_vat = net.checked_add(tax)?;
    Ok(Invoice {
        number: issue.number,
        kind,
        issued_on: issue.issued_on,
        seller,
        buyer: issue.buyer,
        tickets: covered,
        lines,
        vat,
        totals: Totals {
            lines: net,
            without_vat: net,
            vat: tax,
            with_vat,
            paid: with_vat,
            due: Cents::ZERO,
        },
    })
}

/// A ticket's lines, invoiced, with their share of its VAT.
fn ticket_lines(ticket: &SaleRecord, index: usize, direction: Direction) -> Result<Vec<InvoiceLine>, RecordProblem> {
    let amount = |stored: i64| {
        stored
            .checked_mul(direction.factor())
            .and_then(Cents::new)
            .filter(|cents| !cents.is_negative())
            .ok_or(RecordProblem::Amount)
    };
    if ticket.lines.is_empty() {
        return Err(RecordProblem::NoLine);
    }
    let rates = ticket
        .lines
        .iter()
        .map(|line| VatRate::from_hundredths(line.vat_rate).ok_or(RecordProblem::Rate))
        .collect::<Result<Vec<_>, _>>()?;
    let nets = ticket
        .lines
        .iter()
        .map(|line| amount(line.net_cents))
        .collect::<Result<Vec<_>, _>>()?;
    let total = checked_sum(nets.iter().copied()).map_err(|_| RecordProblem::Amount)?;
    if total != amount(ticket.total_cents)? {
        return Err(RecordProblem::Total);
    }
    let vat = line_vat(ticket, &rates, &nets, total, amount)?;
    ticket
        .lines
        .iter()
        .zip(rates)
        .zip(nets.into_iter().zip(vat))
        .map(|((line, rate), (net_with_vat, vat))| invoiced_line(line, index, rate, net_with_vat, vat, amount))
        .collect()
}

/// Each line's share of its ticket's VAT at its rate: the sealed VAT of the rate shared over
/// the lines at that rate in proportion to their nets (largest remainder, ties by line id).
fn line_vat(
    ticket: &SaleRecord,
    rates: &[VatRate],
    nets: &[Cents],
    total: Cents,
    amount: impl Fn(i64) -> Result<Cents, RecordProblem>,
) -> Result<Vec<Cents>, RecordProblem> {
    let mut vat = vec![Cents::ZERO; nets.len()];
    let mut breakdown_total = Cents::ZERO;
    for entry in &ticket.vat {
        let rate = VatRate::from_hundredths(entry.vat_rate).ok_or(RecordProblem::Rate)?;
        let (due, tax) = (amount(entry.total_cents)?, amount(entry.vat_cents)?);
        let mut at_rate: Vec<usize> = (0..nets.len()).filter(|i| rates[*i] == rate).collect();
        at_rate.sort_by(|a, b| ticket.lines[*a].line_id.cmp(&ticket.lines[*b].line_id));
        let weights: Vec<Cents> = at_rate.iter().map(|i| nets[*i]).collect();
        let lines_due = checked_sum(weights.iter().copied()).map_err(|_| RecordProblem::Amount)?;
        let exempt_with_tax = VatCategory::of(rate) == VatCategory::Exempt && tax != Cents::ZERO;
        if at_rate.is_empty() || lines_due != due || tax > due || exempt_with_tax {
            return Err(RecordProblem::Vat);
        }
        let in_order: Vec<usize> = (0..at_rate.len()).collect();
        let shares = allocate(tax, &weights, &in_order).map_err(|_| RecordProblem::Amount)?;
        for (line, share) in at_rate.into_iter().zip(shares) {
            vat[line] = share;
        }
        breakdown_total = breakdown_total.checked_add(due).map_err(|_| RecordProblem::Amount)?;
    }
    if breakdown_total != total {
        return Err(RecordProblem::Vat);
    }
    Ok(vat)
}

fn invoiced_line(
    line: &SaleRecordLine,
    ticket: usize,
    rate: VatRate,
    net_with_vat: Cents,
    vat: Cents,
    amount: impl Fn(i64) -> Result<Cents, RecordProblem>,
) -> Result<InvoiceLine, RecordProblem> {
    if line.quantity <= 0 {
        return Err(RecordProblem::Quantity);
    }
    let gross_with_vat = amount(line.gross_cents)?;
    let reductions = gross_with_vat
        .checked_sub(net_with_vat)
        .ok()
        .filter(|cents| !cents.is_negative())
        .ok_or(RecordProblem::Reductions)?;
    // A share never exceeds its line's net, and the VAT a sum holds never exceeds it.
    let net = net_with_vat.checked_sub(vat).map_err(|_| RecordProblem::Amount)?;
    let allowance = reductions
        .checked_sub(vat_included(reductions, rate))
        .map_err(|_| RecordProblem::Amount)?;
    let gross = net.checked_add(allowance).map_err(|_| RecordProblem::Amount)?;
    let unit_price_with_vat = Cents::new(line.unit_price_cents)
        .filter(|cents| !cents.is_negative())
        .ok_or(RecordProblem::Amount)?;
    Ok(InvoiceLine {
        ticket,
        sku_id: line.sku_id.clone(),
        name: line.label.clone().unwrap_or_else(|| "Article".to_owned()),
        quantity: line.quantity,
        vat_rate: rate,
        unit_price_with_vat,
        net_with_vat,
        vat,
        gross,
        allowance,
        net,
    })
}

/// The lines' nets and VAT summed per rate, highest rate first, each checked against BR-S-09:
/// the VAT within less than a unit of currency of the taxable amount times the rate.
fn breakdown(lines: &[InvoiceLine]) -> Result<Vec<VatBreakdown>, InvoiceRefusal> {
    let mut by_rate: Vec<VatBreakdown> = Vec::new();
    for line in lines {
        match by_rate.iter_mut().find(|entry| entry.rate == line.vat_rate) {
            Some(entry) => {
                entry.taxable = entry.taxable.checked_add(line.net)?;
                entry.tax = entry.tax.checked_add(line.vat)?;
            }
            None => by_rate.push(VatBreakdown {
                rate: line.vat_rate,
                category: VatCategory::of(line.vat_rate),
                taxable: line.net,
                tax: line.vat,
            }),
        }
    }
    by_rate.sort_by_key(|entry| std::cmp::Reverse(entry.rate));
    for entry in &by_rate {
        let expected = div_round_half_away(
            i128::from(entry.taxable.get()) * i128::from(entry.rate.hundredths()),
            10_000,
        );
        if (i128::from(entry.tax.get()) - expected).abs() >= BR_S_09_TOLERANCE {
            return Err(InvoiceRefusal::VatRounding(entry.rate));
        }
    }
    Ok(by_rate)
}

/// One unit of currency, in cents: BR-S-09's rule as the EN 16931 schematron for CII states it.
const BR_S_09_TOLERANCE: i128 = 100;

#[cfg(test)]
mod tests;
