//! An invoice issued: made with the number storage took for it, written as CII XML, the detail
//! its technical event seals, and the answer the API gives and storage keeps (docs/invoices.md).
//!
//! Storage takes the number inside the transaction that keeps the invoice, so that a rolled
//! back invoice gives its number back; it then runs [`Draft::issue`], which decides everything
//! else from what the use case read, and fills [`InvoiceAnswer`] with the seal it made.

use super::build::InvoiceRefusal;
use super::{
    Buyer, CreditOf, Invoice, InvoiceKind, InvoiceNumber, InvoiceReference, Issue, cii, credit_invoice, invoice,
};
use crate::fiscal::jet;
use crate::fiscal::payload::SaleRecord;
use crate::ids::{InvoiceId, StoreId};
use crate::instant::format_utc;
use crate::seller::{PostalAddress, SellerIdentity};
use jiff::Timestamp;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Everything an invoice is made of but its number.
#[derive(Clone, Debug)]
pub struct Draft {
    pub invoice_id: InvoiceId,
    pub store_id: StoreId,
    /// Now, in the store's time zone: its year is the number's.
    pub issued_on: Date,
    pub issued_at: Timestamp,
    pub seller: SellerIdentity,
    pub buyer: Buyer,
    pub time_zone: TimeZone,
    /// The sales (or, for a credit invoice, the returns) in the order asked.
    pub tickets: Vec<SaleRecord>,
    /// For a credit invoice: the invoice its returns' sales were invoiced on.
    pub credit_of: Option<Credited>,
}

/// The invoice a credit invoice cites.
#[derive(Clone, Debug)]
pub struct Credited {
    pub invoice_id: InvoiceId,
    pub reference: InvoiceReference,
    /// The transaction ids of the sales it covers.
    pub sales: Vec<String>,
}

/// An invoice made with its number, before its seal.
#[derive(Clone, Debug)]
pub struct Issued {
    pub invoice_id: InvoiceId,
    pub invoice: Invoice,
    pub issued_at: Timestamp,
    pub credits: Option<(InvoiceId, InvoiceReference)>,
    /// UTF-8 CII XML, the `factur-x.xml` a PDF embeds.
    pub xml: Vec<u8>,
    /// Lowercase hex.
    pub xml_sha256: String,
    /// The register whose event chain seals it: its first ticket's.
    pub register_id: String,
    pub seal: jet::Recorded,
}

impl Draft {
    /// The invoice numbered `number`, or why these tickets cannot be invoiced together.
    pub fn issue(&self, number: InvoiceNumber) -> Result<Issued, InvoiceRefusal> {
        let issue = Issue {
            number,
            issued_on: self.issued_on,
            store_id: &self.store_id,
            seller: &self.seller,
            buyer: self.buyer.clone(),
            time_zone: &self.time_zone,
        };
        let made = match &self.credit_of {
            None => invoice(issue, &self.tickets)?,
            Some(credited) => {
                let of = CreditOf {
                    invoice: credited.reference.clone(),
                    sales: &credited.sales,
                };
                credit_invoice(issue, &of, &self.tickets)?
            }
        };
        let xml = cii::xml(&made).map_err(|_| InvoiceRefusal::Xml)?;
        let xml_sha256 = hex(&Sha256::digest(&xml));
        let tickets: Vec<&str> = made.tickets.iter().map(|t| t.transaction_id.as_str()).collect();
        let seal = jet::invoice_issued(
            self.credit_of.is_some(),
            &made.number,
            &tickets,
            made.totals.with_vat,
            &xml_sha256,
        );
        let register_id = self
            .tickets
            .first()
            .map(|ticket| ticket.register_id.clone())
            .ok_or(InvoiceRefusal::NoSale)?;
        Ok(Issued {
            invoice_id: self.invoice_id.clone(),
            invoice: made,
            issued_at: self.issued_at,
            credits: self
                .credit_of
                .as_ref()
                .map(|credited| (credited.invoice_id.clone(), credited.reference.clone())),
            xml,
            xml_sha256,
            register_id,
            seal,
        })
    }
}

/// Lowercase hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 of `bytes` in lowercase hex: what an invoice's seal names of its XML.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// An invoice as the API answers it, kept as written when it was issued: the PDF is drawn
/// from it and its XML, so that every copy is the same.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = InvoiceView, description = "An invoice as issued."))]
pub struct InvoiceAnswer {
    pub invoice_id: String,
    /// `F-{storeId}-{year}-{sequence}`, without gaps per store and year.
    pub number: String,
    #[cfg_attr(feature = "openapi", schema(inline))]
    pub kind: InvoiceKindWord,
    pub store_id: String,
    /// The issue date in the store's time zone, `YYYY-MM-DD`.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    pub issued_on: String,
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::UtcInstant))]
    pub issued_at: String,
    /// ISO 4217; amounts are in its minor unit.
    pub currency: String,
    /// On a credit invoice, the invoice it credits; null on an invoice.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub credits: Option<CreditedAnswer>,
    pub seller: PartyAnswer,
    pub buyer: PartyAnswer,
    /// The tickets it covers, in the order asked.
    pub tickets: Vec<InvoiceTicketAnswer>,
    /// One per line of each ticket, in ticket order.
    pub lines: Vec<InvoiceLineAnswer>,
    /// One per VAT rate, highest first.
    pub vat: Vec<InvoiceVatAnswer>,
    pub totals: InvoiceTotalsAnswer,
    /// That it was paid (a credit invoice: refunded) at the till, and when.
    pub payment_terms: String,
    /// The tickets it covers and the mentions an invoice between businesses carries.
    pub notes: Vec<String>,
    pub fiscal: InvoiceSealAnswer,
}

/// An invoice, or a credit invoice crediting part of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum InvoiceKindWord {
    Invoice,
    Credit,
}

// The invoice a credit invoice credits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = CreditedInvoiceView))]
pub struct CreditedAnswer {
    pub invoice_id: String,
    pub number: String,
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    pub issued_on: String,
}

// The seller or the buyer, as the invoice names them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = InvoicePartyView))]
pub struct PartyAnswer {
    pub name: String,
    /// 9 digits; null when not given (always given for a seller in France).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub siren: Option<String>,
    /// Null when not given (always given for the seller).
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub vat_number: Option<String>,
    pub address: AddressAnswer,
}

// A postal address.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = InvoiceAddressView))]
pub struct AddressAnswer {
    pub line1: String,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub line2: Option<String>,
    pub postal_code: String,
    pub city: String,
    /// ISO 3166-1 alpha-2.
    pub country: String,
}

// A ticket an invoice covers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = InvoiceTicketView))]
pub struct InvoiceTicketAnswer {
    pub transaction_id: String,
    /// As the receipt prints it.
    pub number: String,
    pub register_id: String,
    /// The day it was rung, in the store's time zone.
    #[cfg_attr(feature = "openapi", schema(format = Date))]
    pub sold_on: String,
}

// A line of a ticket, invoiced. Amounts are positive, a credit invoice's too.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = InvoiceLineView))]
pub struct InvoiceLineAnswer {
    /// The ticket it was sold on.
    pub transaction_id: String,
    /// Null for a custom line.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub sku_id: Option<String>,
    pub name: String,
    pub quantity: i64,
    /// In percent (`20`, `5.5`).
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub vat_rate: serde_json::Number,
    /// As the till rang it, VAT included.
    pub unit_price_cents: i64,
    /// The line's net as the ticket holds it, VAT included.
    pub net_with_vat_cents: i64,
    /// The VAT that net holds.
    pub vat_cents: i64,
    /// The price of the line's quantity before its reductions, VAT excluded.
    pub gross_cents: i64,
    /// Its reductions, VAT excluded.
    pub allowance_cents: i64,
    /// `grossCents - allowanceCents`: the line's net, VAT excluded.
    pub net_cents: i64,
}

// The VAT at one rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = InvoiceVatView))]
pub struct InvoiceVatAnswer {
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub vat_rate: serde_json::Number,
    /// EN 16931's category: `S` (standard) or `E` (exempt: a gift card sold, whose VAT is due
    /// when it is spent).
    pub category: String,
    /// The sum of the line nets at this rate, VAT excluded.
    pub taxable_cents: i64,
    /// The sum of the tickets' VAT at this rate.
    pub vat_cents: i64,
}

// The document's totals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = InvoiceTotalsView))]
pub struct InvoiceTotalsAnswer {
    /// VAT excluded.
    pub without_vat_cents: i64,
    pub vat_cents: i64,
    /// The tickets' totals added up.
    pub with_vat_cents: i64,
    /// Paid (refunded) at the till.
    pub paid_cents: i64,
    /// Always 0.
    pub due_cents: i64,
}

// Where the journal sealed the invoice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = InvoiceSealView))]
pub struct InvoiceSealAnswer {
    /// The register of its first ticket.
    pub register_id: String,
    /// `event`: the register's chain of technical events.
    pub chain: String,
    pub seq: i64,
    /// The SHA-256 (hex) of its CII XML, as sealed.
    pub xml_sha256: String,
}

impl InvoiceAnswer {
    /// The answer of `issued`, sealed at `seq` of its register's event chain.
    pub fn of(issued: &Issued, seq: i64) -> InvoiceAnswer {
        let made = &issued.invoice;
        let ticket_of = |index: usize| made.tickets.get(index);
        InvoiceAnswer {
            invoice_id: issued.invoice_id.as_str().to_owned(),
            number: made.number.to_string(),
            kind: match made.kind {
                InvoiceKind::Invoice => InvoiceKindWord::Invoice,
                InvoiceKind::Credit(_) => InvoiceKindWord::Credit,
            },
            store_id: made.number.store_id().as_str().to_owned(),
            issued_on: made.issued_on.to_string(),
            issued_at: format_utc(issued.issued_at),
            currency: "EUR".to_owned(),
            credits: issued.credits.as_ref().map(|(id, reference)| CreditedAnswer {
                invoice_id: id.as_str().to_owned(),
                number: reference.number.to_string(),
                issued_on: reference.issued_on.to_string(),
            }),
            seller: PartyAnswer {
                name: made.seller.legal_name.as_str().to_owned(),
                siren: made.seller.siren.as_ref().map(|s| s.as_str().to_owned()),
                vat_number: Some(made.seller.vat_number.as_str().to_owned()),
                address: address(&made.seller.address),
            },
            buyer: PartyAnswer {
                name: made.buyer.name.as_str().to_owned(),
                siren: made.buyer.siren.as_ref().map(|s| s.as_str().to_owned()),
                vat_number: made.buyer.vat_number.as_ref().map(|v| v.as_str().to_owned()),
                address: address(&made.buyer.address),
            },
            tickets: made
                .tickets
                .iter()
                .map(|ticket| InvoiceTicketAnswer {
                    transaction_id: ticket.transaction_id.clone(),
                    number: ticket.number.clone(),
                    register_id: ticket.register_id.clone(),
                    sold_on: ticket.on.to_string(),
                })
                .collect(),
            lines: made
                .lines
                .iter()
                .map(|line| InvoiceLineAnswer {
                    transaction_id: ticket_of(line.ticket)
                        .map(|t| t.transaction_id.clone())
                        .unwrap_or_default(),
                    sku_id: line.sku_id.clone(),
                    name: line.name.clone(),
                    quantity: line.quantity,
                    vat_rate: line.vat_rate.as_json_number(),
                    unit_price_cents: line.unit_price_with_vat.get(),
                    net_with_vat_cents: line.net_with_vat.get(),
                    vat_cents: line.vat.get(),
                    gross_cents: line.gross.get(),
                    allowance_cents: line.allowance.get(),
                    net_cents: line.net.get(),
                })
                .collect(),
            vat: made
                .vat
                .iter()
                .map(|rate| InvoiceVatAnswer {
                    vat_rate: rate.rate.as_json_number(),
                    category: rate.category.code().to_owned(),
                    taxable_cents: rate.taxable.get(),
                    vat_cents: rate.tax.get(),
                })
                .collect(),
            totals: InvoiceTotalsAnswer {
                without_vat_cents: made.totals.without_vat.get(),
                vat_cents: made.totals.vat.get(),
                with_vat_cents: made.totals.with_vat.get(),
                paid_cents: made.totals.paid.get(),
                due_cents: made.totals.due.get(),
            },
            payment_terms: cii::payment_terms(made),
            notes: std::iter::once(cii::tickets_note(made))
                .chain(cii::MENTIONS.iter().map(|(mention, _)| (*mention).to_owned()))
                .collect(),
            fiscal: InvoiceSealAnswer {
                register_id: issued.register_id.clone(),
                chain: "event".to_owned(),
                seq,
                xml_sha256: issued.xml_sha256.clone(),
            },
        }
    }
}

fn address(address: &PostalAddress) -> AddressAnswer {
    AddressAnswer {
        line1: address.line1.as_str().to_owned(),
        line2: address.line2.as_ref().map(|l| l.as_str().to_owned()),
        postal_code: address.postal_code.as_str().to_owned(),
        city: address.city.as_str().to_owned(),
        country: address.country.as_str().to_owned(),
    }
}

/// Checks that each invoice's XML, as kept, is the one its technical event sealed:
/// `invoices` are `(number, event seq, XML)` of the register's journal. An XML changed after
/// its seal, or an event that is not an invoice's, is an `altered` entry of the event chain.
pub fn check_sealed_xml<'a>(
    events: &std::collections::HashMap<i64, crate::fiscal::payload::EventRecord>,
    invoices: impl IntoIterator<Item = (&'a str, i64, &'a [u8])>,
) -> Result<usize, crate::fiscal::audit::Failure> {
    use crate::fiscal::ChainKind;
    use crate::fiscal::audit::{Failure, FailureKind};
    let mut checked = 0;
    for (number, seq, xml) in invoices {
        let sealed = events
            .get(&seq)
            .and_then(|event| jet::sealed_invoice_digest(event.code, &event.detail));
        if sealed != Some(sha256_hex(xml).as_str()) {
            return Err(Failure {
                chain: ChainKind::Event,
                seq,
                kind: FailureKind::Altered,
                detail: format!("the XML of invoice {number} is not the one this event sealed"),
            });
        }
        checked += 1;
    }
    Ok(checked)
}
