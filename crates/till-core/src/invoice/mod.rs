//! Invoices for business customers (docs/invoices.md): one or more committed sales of a store
//! made out to a company, numbered `F-{storeId}-{year}-{seq}`, and written as the Cross
//! Industry Invoice XML a Factur-X PDF embeds (profile EN 16931).
//!
//! A till's amounts include VAT; EN 16931's exclude it. [`build`] turns the sales' lines into
//! the standard's lines, VAT breakdown and totals so that the invoice's VAT per rate and its
//! total with VAT are the sales' to the cent, and the standard's sums hold exactly ([`build`]
//! says how it rounds). [`cii`] writes the XML. What is pure lives here; that a sale is
//! invoiced only once, and the next number under concurrent requests, are storage's guards.

pub mod build;
pub mod buyer;
pub mod cii;
pub mod issue;
pub mod number;
pub mod seller;

pub use build::{CreditOf, InvoiceRefusal, Issue, RecordProblem, credit_invoice, invoice};
pub use buyer::{Buyer, BuyerField, BuyerRefusal, BuyerText};
pub use issue::{Credited, Draft, InvoiceAnswer, Issued};
pub use number::{InvoiceNumber, NumberProblem};
pub use seller::{InvoiceSeller, SellerField, SellerGap};

use crate::money::{Cents, VatRate};
use jiff::civil::Date;

/// An invoice, or a credit invoice that cancels part of one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invoice {
    pub number: InvoiceNumber,
    pub kind: InvoiceKind,
    pub issued_on: Date,
    pub seller: InvoiceSeller,
    pub buyer: Buyer,
    /// The tickets it covers, in the order given.
    pub tickets: Vec<Ticket>,
    pub lines: Vec<InvoiceLine>,
    /// One entry per VAT rate, highest rate first.
    pub vat: Vec<VatBreakdown>,
    pub totals: Totals,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InvoiceKind {
    /// A commercial invoice of sales (type code 380).
    Invoice,
    /// A credit invoice of returns of sales an invoice covers (type code 381), naming it.
    Credit(InvoiceReference),
}

/// An invoice as another one cites it (BT-25 and BT-26).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvoiceReference {
    pub number: InvoiceNumber,
    pub issued_on: Date,
}

/// A ticket an invoice covers: its number as the receipt prints it, and the day it was rung,
/// in the store's time zone (the delivery date).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ticket {
    pub transaction_id: String,
    pub number: String,
    pub register_id: String,
    pub on: Date,
}

/// A line of a sale, invoiced. Amounts are positive, a credit invoice's too: its type says
/// which way they go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvoiceLine {
    /// The ticket it was sold on: an index into [`Invoice::tickets`].
    pub ticket: usize,
    pub sku_id: Option<String>,
    /// The article's name when it was sold.
    pub name: String,
    pub quantity: i64,
    pub vat_rate: VatRate,
    /// As the till rang it, VAT included.
    pub unit_price_with_vat: Cents,
    pub net_with_vat: Cents,
    /// The VAT the line's net holds: its sale's VAT at the rate shared over the sale's lines at
    /// that rate, as `GET /v1/sales/{id}/lines` explains it.
    pub vat: Cents,
    /// The price of the line's `quantity` units before its reductions, VAT excluded (BT-146,
    /// with the quantity as its base quantity BT-149).
    pub gross: Cents,
    /// Its promotions, discounts and share of the ticket's reductions, VAT excluded (BT-136).
    pub allowance: Cents,
    /// `gross - allowance`: the line net amount (BT-131).
    pub net: Cents,
}

/// The VAT category of EN 16931 a rate falls in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VatCategory {
    /// `S`: a positive rate.
    Standard,
    /// `E`: a line at zero, which a till rings only for a gift card it sells (a voucher, whose
    /// VAT is due when it is spent).
    Exempt,
}

impl VatCategory {
    pub fn of(rate: VatRate) -> VatCategory {
        if rate.hundredths() == 0 {
            VatCategory::Exempt
        } else {
            VatCategory::Standard
        }
    }

    /// UNTDID 5305.
    pub fn code(self) -> &'static str {
        match self {
            VatCategory::Standard => "S",
            VatCategory::Exempt => "E",
        }
    }
}

/// The VAT at one rate (BG-23).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VatBreakdown {
    pub rate: VatRate,
    pub category: VatCategory,
    /// BT-116: the sum of the line nets at this rate.
    pub taxable: Cents,
    /// BT-117: the sum of the sales' VAT at this rate.
    pub tax: Cents,
}

/// The document totals (BG-22).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Totals {
    /// BT-106, the sum of the line nets.
    pub lines: Cents,
    /// BT-109: the lines' sum, as there are no document-level allowances or charges.
    pub without_vat: Cents,
    /// BT-110, the sum of the breakdown's tax.
    pub vat: Cents,
    /// BT-112: the sales' totals added up.
    pub with_vat: Cents,
    /// BT-113: paid at the till (refunded, on a credit invoice) when the tickets were rung.
    pub paid: Cents,
    /// BT-115: nothing is left to pay.
    pub due: Cents,
}

impl Invoice {
    /// UNTDID 1001: `380` for an invoice, `381` for a credit invoice.
    pub fn type_code(&self) -> &'static str {
        match self.kind {
            InvoiceKind::Invoice => "380",
            InvoiceKind::Credit(_) => "381",
        }
    }

    /// The first and last days its tickets were rung.
    pub fn delivered(&self) -> Option<(Date, Date)> {
        let first = self.tickets.iter().map(|t| t.on).min()?;
        let last = self.tickets.iter().map(|t| t.on).max()?;
        Some((first, last))
    }
}
