//! The invoice as UN/CEFACT Cross Industry Invoice XML (D16B), the form a Factur-X PDF embeds
//! as `factur-x.xml`, in the EN 16931 profile (guideline `urn:cen.eu:en16931:2017`). Elements
//! come in the order the Factur-X schema sets; every amount has two decimals, in euros.
//!
//! The buyer is named as an invoice must name it; nothing of a loyalty account, a customer
//! profile or the staff who rang the tickets is written.

use super::{Buyer, Invoice, InvoiceKind, InvoiceLine, InvoiceSeller, VatBreakdown, VatCategory};
use crate::money::{Cents, VatRate};
use crate::seller::{PostalAddress, Siren, VatNumber};
use jiff::civil::Date;
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};
use std::borrow::Cow;
use std::io;

pub const GUIDELINE: &str = "urn:cen.eu:en16931:2017";
const CURRENCY: &str = "EUR";
/// UN/ECE recommendation 20: one unit.
const UNIT: &str = "C62";
/// ISO 6523: the French registry (SIREN).
const SIREN_SCHEME: &str = "0002";
/// UNTDID 5189: discount.
const DISCOUNT: &str = "95";

const NAMESPACES: [(&str, &str); 4] = [
    (
        "xmlns:rsm",
        "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100",
    ),
    ("xmlns:qdt", "urn:un:unece:uncefact:data:standard:QualifiedDataType:100"),
    (
        "xmlns:ram",
        "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100",
    ),
    (
        "xmlns:udt",
        "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100",
    ),
];

type Xml = Writer<Vec<u8>>;

/// The invoice's CII XML, UTF-8.
pub fn xml(invoice: &Invoice) -> io::Result<Vec<u8>> {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    w.create_element("rsm:CrossIndustryInvoice")
        .with_attributes(NAMESPACES)
        .write_inner_content(|w| {
            nest(w, "rsm:ExchangedDocumentContext", |w| {
                nest(w, "ram:GuidelineSpecifiedDocumentContextParameter", |w| {
                    text(w, "ram:ID", GUIDELINE)
                })
            })?;
            document(w, invoice)?;
            nest(w, "rsm:SupplyChainTradeTransaction", |w| {
                for (index, line) in invoice.lines.iter().enumerate() {
                    item(w, invoice, index, line)?;
                }
                agreement(w, &invoice.seller, &invoice.buyer)?;
                delivery(w, invoice)?;
                settlement(w, invoice)
            })
        })?;
    Ok(w.into_inner())
}

/// BT-1, BT-3, BT-2 and the notes (BG-1): the tickets it covers and the mentions French law
/// asks of an invoice between businesses.
fn document(w: &mut Xml, invoice: &Invoice) -> io::Result<()> {
    nest(w, "rsm:ExchangedDocument", |w| {
        text(w, "ram:ID", &invoice.number.to_string())?;
        text(w, "ram:TypeCode", invoice.type_code())?;
        nest(w, "ram:IssueDateTime", |w| {
            date(w, "udt:DateTimeString", invoice.issued_on)
        })?;
        note(w, &tickets_note(invoice), "AAI")?;
        for (content, subject) in MENTIONS {
            note(w, content, subject)?;
        }
        Ok(())
    })
}

/// The mentions French law asks of an invoice between businesses, with their UNTDID 4451
/// subject codes: no discount for early payment, late-payment penalties, the fixed recovery fee.
pub const MENTIONS: [(&str, &str); 3] = [
    ("Pas d'escompte pour paiement anticipé.", "AAB"),
    ("Pénalités de retard : trois fois le taux d'intérêt légal.", "PMD"),
    (
        "Indemnité forfaitaire pour frais de recouvrement en cas de retard de paiement : 40 €.",
        "PMT",
    ),
];

/// Why a line at VAT 0 bears none: a multi-purpose voucher's VAT is due when it is spent.
pub const VOUCHER_EXEMPTION: &str = "Bon d'achat à usages multiples : TVA due lors de son utilisation";

/// The note naming the tickets the invoice covers, each with its day.
pub fn tickets_note(invoice: &Invoice) -> String {
    let tickets: Vec<String> = invoice
        .tickets
        .iter()
        .map(|t| format!("{} du {}", t.number, french_date(t.on)))
        .collect();
    format!("Tickets de caisse : {}.", tickets.join(", "))
}

/// BG-25: a line, priced for its whole quantity (base quantity BT-149 equal to BT-129), its
/// reductions as one allowance.
fn item(w: &mut Xml, invoice: &Invoice, index: usize, line: &InvoiceLine) -> io::Result<()> {
    nest(w, "ram:IncludedSupplyChainTradeLineItem", |w| {
        nest(w, "ram:AssociatedDocumentLineDocument", |w| {
            text(w, "ram:LineID", &(index + 1).to_string())?;
            if let Some(ticket) = invoice.tickets.get(line.ticket) {
                nest(w, "ram:IncludedNote", |w| {
                    text(w, "ram:Content", &format!("Ticket {}", ticket.number))
                })?;
            }
            Ok(())
        })?;
        nest(w, "ram:SpecifiedTradeProduct", |w| {
            if let Some(sku) = &line.sku_id {
                text(w, "ram:SellerAssignedID", sku)?;
            }
            text(w, "ram:Name", &line.name)
        })?;
        let quantity = line.quantity.to_string();
        nest(w, "ram:SpecifiedLineTradeAgreement", |w| {
            nest(w, "ram:NetPriceProductTradePrice", |w| {
                amount(w, "ram:ChargeAmount", line.gross)?;
                w.create_element("ram:BasisQuantity")
                    .with_attribute(("unitCode", UNIT))
                    .write_text_content(BytesText::new(&quantity))?;
                Ok(())
            })
        })?;
        nest(w, "ram:SpecifiedLineTradeDelivery", |w| {
            w.create_element("ram:BilledQuantity")
                .with_attribute(("unitCode", UNIT))
                .write_text_content(BytesText::new(&quantity))?;
            Ok(())
        })?;
        nest(w, "ram:SpecifiedLineTradeSettlement", |w| {
            nest(w, "ram:ApplicableTradeTax", |w| {
                text(w, "ram:TypeCode", "VAT")?;
                text(w, "ram:CategoryCode", VatCategory::of(line.vat_rate).code())?;
                text(w, "ram:RateApplicablePercent", &percent(line.vat_rate))
            })?;
            if line.allowance != Cents::ZERO {
                nest(w, "ram:SpecifiedTradeAllowanceCharge", |w| {
                    nest(w, "ram:ChargeIndicator", |w| text(w, "udt:Indicator", "false"))?;
                    amount(w, "ram:ActualAmount", line.allowance)?;
                    text(w, "ram:ReasonCode", DISCOUNT)?;
                    text(w, "ram:Reason", "Remise")
                })?;
            }
            nest(w, "ram:SpecifiedTradeSettlementLineMonetarySummation", |w| {
                amount(w, "ram:LineTotalAmount", line.net)
            })
        })
    })
}

/// BG-4 and BG-7: the seller and the buyer.
fn agreement(w: &mut Xml, seller: &InvoiceSeller, buyer: &Buyer) -> io::Result<()> {
    nest(w, "ram:ApplicableHeaderTradeAgreement", |w| {
        party(
            w,
            "ram:SellerTradeParty",
            seller.legal_name.as_str(),
            seller.siren.as_ref(),
            &seller.address,
            Some(&seller.vat_number),
        )?;
        party(
            w,
            "ram:BuyerTradeParty",
            buyer.name.as_str(),
            buyer.siren.as_ref(),
            &buyer.address,
            buyer.vat_number.as_ref(),
        )
    })
}

fn party(
    w: &mut Xml,
    element: &str,
    name: &str,
    siren: Option<&Siren>,
    address: &PostalAddress,
    vat: Option<&VatNumber>,
) -> io::Result<()> {
    nest(w, element, |w| {
        text(w, "ram:Name", name)?;
        if let Some(siren) = siren {
            nest(w, "ram:SpecifiedLegalOrganization", |w| {
                w.create_element("ram:ID")
                    .with_attribute(("schemeID", SIREN_SCHEME))
                    .write_text_content(BytesText::new(siren.as_str()))?;
                Ok(())
            })?;
        }
        nest(w, "ram:PostalTradeAddress", |w| {
            text(w, "ram:PostcodeCode", address.postal_code.as_str())?;
            text(w, "ram:LineOne", address.line1.as_str())?;
            if let Some(line2) = &address.line2 {
                text(w, "ram:LineTwo", line2.as_str())?;
            }
            text(w, "ram:CityName", address.city.as_str())?;
            text(w, "ram:CountryID", address.country.as_str())
        })?;
        if let Some(vat) = vat {
            nest(w, "ram:SpecifiedTaxRegistration", |w| {
                w.create_element("ram:ID")
                    .with_attribute(("schemeID", "VA"))
                    .write_text_content(BytesText::new(vat.as_str()))?;
                Ok(())
            })?;
        }
        Ok(())
    })
}

/// BT-72: the day the goods were handed over, the last ticket's (when the tickets were rung
/// over several days, the invoicing period, BG-14, says from when).
fn delivery(w: &mut Xml, invoice: &Invoice) -> io::Result<()> {
    nest(w, "ram:ApplicableHeaderTradeDelivery", |w| match invoice.delivered() {
        Some((_, last)) => nest(w, "ram:ActualDeliverySupplyChainEvent", |w| {
            nest(w, "ram:OccurrenceDateTime", |w| date(w, "udt:DateTimeString", last))
        }),
        None => Ok(()),
    })
}

/// BT-5, BG-23, BG-14, BT-20, BG-22 and, on a credit invoice, BG-3.
fn settlement(w: &mut Xml, invoice: &Invoice) -> io::Result<()> {
    nest(w, "ram:ApplicableHeaderTradeSettlement", |w| {
        text(w, "ram:InvoiceCurrencyCode", CURRENCY)?;
        for rate in &invoice.vat {
            tax(w, rate)?;
        }
        if let Some((first, last)) = invoice.delivered().filter(|(first, last)| first != last) {
            nest(w, "ram:BillingSpecifiedPeriod", |w| {
                nest(w, "ram:StartDateTime", |w| date(w, "udt:DateTimeString", first))?;
                nest(w, "ram:EndDateTime", |w| date(w, "udt:DateTimeString", last))
            })?;
        }
        nest(w, "ram:SpecifiedTradePaymentTerms", |w| {
            text(w, "ram:Description", &payment_terms(invoice))
        })?;
        let totals = &invoice.totals;
        nest(w, "ram:SpecifiedTradeSettlementHeaderMonetarySummation", |w| {
            amount(w, "ram:LineTotalAmount", totals.lines)?;
            amount(w, "ram:TaxBasisTotalAmount", totals.without_vat)?;
            w.create_element("ram:TaxTotalAmount")
                .with_attribute(("currencyID", CURRENCY))
                .write_text_content(BytesText::new(&totals.vat.to_string()))?;
            amount(w, "ram:GrandTotalAmount", totals.with_vat)?;
            amount(w, "ram:TotalPrepaidAmount", totals.paid)?;
            amount(w, "ram:DuePayableAmount", totals.due)
        })?;
        if let InvoiceKind::Credit(original) = &invoice.kind {
            nest(w, "ram:InvoiceReferencedDocument", |w| {
                text(w, "ram:IssuerAssignedID", &original.number.to_string())?;
                nest(w, "ram:FormattedIssueDateTime", |w| {
                    date(w, "qdt:DateTimeString", original.issued_on)
                })
            })?;
        }
        Ok(())
    })
}

fn tax(w: &mut Xml, rate: &VatBreakdown) -> io::Result<()> {
    nest(w, "ram:ApplicableTradeTax", |w| {
        amount(w, "ram:CalculatedAmount", rate.tax)?;
        text(w, "ram:TypeCode", "VAT")?;
        if rate.category == VatCategory::Exempt {
            text(w, "ram:ExemptionReason", VOUCHER_EXEMPTION)?;
        }
        amount(w, "ram:BasisAmount", rate.taxable)?;
        text(w, "ram:CategoryCode", rate.category.code())?;
        text(w, "ram:RateApplicablePercent", &percent(rate.rate))
    })
}

/// BT-20: nothing is due, and says why.
pub fn payment_terms(invoice: &Invoice) -> String {
    let on = invoice
        .delivered()
        .map(|(_, last)| format!(" le {}", french_date(last)))
        .unwrap_or_default();
    match invoice.kind {
        InvoiceKind::Invoice => format!("Facture acquittée : payée en caisse{on}."),
        InvoiceKind::Credit(_) => format!("Avoir remboursé en caisse{on}."),
    }
}

fn note(w: &mut Xml, content: &str, subject: &str) -> io::Result<()> {
    nest(w, "ram:IncludedNote", |w| {
        text(w, "ram:Content", content)?;
        text(w, "ram:SubjectCode", subject)
    })
}

fn nest(w: &mut Xml, element: &str, inner: impl FnOnce(&mut Xml) -> io::Result<()>) -> io::Result<()> {
    w.create_element(element).write_inner_content(inner)?;
    Ok(())
}

fn text(w: &mut Xml, element: &str, value: &str) -> io::Result<()> {
    w.create_element(element)
        .write_text_content(BytesText::new(&xml_chars(value)))?;
    Ok(())
}

fn amount(w: &mut Xml, element: &str, cents: Cents) -> io::Result<()> {
    text(w, element, &cents.to_string())
}

/// A date as UNTDID 2379 format 102 writes it: `YYYYMMDD`.
fn date(w: &mut Xml, element: &str, on: Date) -> io::Result<()> {
    w.create_element(element)
        .with_attribute(("format", "102"))
        .write_text_content(BytesText::new(&on.strftime("%Y%m%d").to_string()))?;
    Ok(())
}

/// A day as French invoices write it: `24/11/2026`.
pub fn french_date(on: Date) -> String {
    on.strftime("%d/%m/%Y").to_string()
}

/// A rate as a percentage, without trailing zeros.
pub fn percent(rate: VatRate) -> String {
    let shown = rate.to_string();
    shown.trim_end_matches('%').to_owned()
}

/// Text as XML 1.0 can carry it: a character it forbids becomes U+FFFD. Names come parsed
/// without control characters, but an article's label is taken as the sale recorded it.
fn xml_chars(text: &str) -> Cow<'_, str> {
    let allowed = |c: char| matches!(c, '\t' | '\n' | '\r') || !(c.is_control() || c == '\u{FFFE}' || c == '\u{FFFF}');
    if text.chars().all(allowed) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().map(|c| if allowed(c) { c } else { '\u{FFFD}' }).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_written_as_percentages() {
        let rate = |h| percent(VatRate::from_hundredths(h).unwrap());
        assert_eq!(
            (rate(2000), rate(550), rate(210), rate(0), rate(1234)),
            ("20".into(), "5.5".into(), "2.1".into(), "0".into(), "12.34".into())
        );
    }

    #[test]
    fn characters_xml_forbids_are_replaced() {
        assert_eq!(xml_chars("Café <b> & co"), "Café <b> & co");
        assert_eq!(xml_chars("a\u{0}b\u{FFFF}"), "a\u{FFFD}b\u{FFFD}");
        assert_eq!(xml_chars("a\u{85}b"), "a\u{FFFD}b", "C1 controls are discouraged too");
    }
}
