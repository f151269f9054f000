//! Writes sample invoices' CII XML into a directory, for scripts/invoice-validate to check with
//! the official Factur-X schemas and EN 16931 rules, each with the answer the API keeps beside it
//! (`NAME.json`), from which till-api's example `invoice_pdfs` draws its PDF:
//!
//!     cargo run -p till-core --example invoice_samples -- DIR
//!
//! The sales are made here as a till would have committed them: lines with their quantities,
//! VAT-inclusive prices and reductions, the VAT per rate as pricing computes it.

use jiff::civil::{Date, date};
use jiff::tz::TimeZone;
use std::error::Error;
use std::path::PathBuf;
use till_core::fiscal::jet;
use till_core::fiscal::payload::{OriginalTicket, SaleRecord, SaleRecordLine, SaleRecordVat};
use till_core::ids::InvoiceId;
use till_core::ids::StoreId;
use till_core::invoice::issue::sha256_hex;
use till_core::invoice::{
    self, Buyer, BuyerText, CreditOf, Invoice, InvoiceAnswer, InvoiceKind, InvoiceNumber, Issue, Issued, cii,
};
use till_core::money::{Cents, VatRate};
use till_core::pricing::vat_totals;
use till_core::returns::{ReturnableLine, ReturnableSale, ReturnedUnits, plan_return};
use till_core::seller::{
    AddressLine, CountryCode, LegalName, PostalAddress, PostalCode, SellerIdentity, Siren, VatNumber,
};

const STORE: &str = "paris-marais";

/// A line as rung: label, quantity, unit price with VAT, rate in hundredths, reductions.
type Rung = (&'static str, i64, i64, i64, i64);

fn main() -> Result<(), Box<dyn Error>> {
    let dir = PathBuf::from(std::env::args().nth(1).ok_or("usage: invoice_samples DIR")?);
    std::fs::create_dir_all(&dir)?;
    let paris = TimeZone::get("Europe/Paris")?;
    let store = StoreId::parse(STORE)?;
    let seller = seller()?;
    let french = Buyer::parse(&BuyerText {
        name: "Boulangerie Martin SARL",
        siren: Some("303265045"),
        vat_number: Some("FR40303265045"),
        line1: "3 rue du Four",
        line2: Some("Cour intérieure"),
        postal_code: "75006",
        city: "Paris",
        country: "FR",
    })
    .map_err(|refused| format!("{refused:?}"))?;
    let belgian = Buyer::parse(&BuyerText {
        name: "Bakkerij Peeters BV",
        siren: None,
        vat_number: Some("BE0123456749"),
        line1: "Grote Markt 1",
        line2: None,
        postal_code: "1000",
        city: "Brussel",
        country: "BE",
    })
    .map_err(|refused| format!("{refused:?}"))?;

    let on = date(2026, 11, 24);
    let issue = |seq: u64, buyer: &Buyer| -> Result<Issue<'_>, Box<dyn Error>> {
        let mut number = InvoiceNumber::first(store.clone(), on.year())?;
        for _ in 1..seq {
            number = InvoiceNumber::next(Some(&number), &store, on.year())?;
        }
        Ok(Issue {
            number,
            issued_on: on,
            store_id: &store,
            seller: &seller,
            buyer: buyer.clone(),
            time_zone: &paris,
        })
    };

    let breakfast = sale(
        "t-0001",
        "T1-0001",
        date(2026, 11, 22),
        &[("Baguette tradition", 4, 130, 550, 0), ("Mug Marais", 1, 1450, 2000, 0)],
    )?;
    let one_sale = invoice::invoice(issue(1, &french)?, std::slice::from_ref(&breakfast))?;

    let week = [
        sale(
            "t-0002",
            "T1-0002",
            date(2026, 11, 20),
            &[("Café moulu 250 g", 3, 649, 550, 0), ("Sac cabas", 1, 299, 2000, 0)],
        )?,
        sale(
            "t-0003",
            "T1-0003",
            date(2026, 11, 21),
            &[("Croissant", 12, 115, 550, 0), ("Jus d'orange 1 L", 2, 389, 550, 0)],
        )?,
        sale(
            "t-0004",
            "T2-0001",
            date(2026, 11, 23),
            &[("Torchon lin", 2, 1290, 2000, 0)],
        )?,
    ];
    let several_sales = invoice::invoice(issue(2, &french)?, &week)?;

    let four_rates = sale(
        "t-0005",
        "T1-0005",
        date(2026, 11, 23),
        &[
            ("Vin rouge AOP 75 cl", 6, 1190, 2000, 1190),
            ("Plat traiteur à emporter", 3, 1275, 1000, 383),
            ("Chocolat noir 100 g", 7, 329, 550, 230),
            ("Le Monde du jour", 2, 350, 210, 35),
            ("Tomates grappe 1 kg", 1, 449, 550, 0),
        ],
    )?;
    let rates_and_discounts = invoice::invoice(issue(3, &french)?, std::slice::from_ref(&four_rates))?;

    let gift = sale(
        "t-0006",
        "T1-0006",
        date(2026, 11, 23),
        &[("Carte cadeau", 1, 5000, 0, 0), ("Coffret thé", 1, 2490, 2000, 249)],
    )?;
    let with_gift_card = invoice::invoice(issue(4, &french)?, std::slice::from_ref(&gift))?;

    let abroad = sale(
        "t-0007",
        "T1-0007",
        date(2026, 11, 24),
        &[("Moutarde de Dijon", 6, 289, 550, 0), ("Tablier", 2, 1990, 2000, 398)],
    )?;
    let foreign_buyer = invoice::invoice(issue(5, &belgian)?, std::slice::from_ref(&abroad))?;

    let returned = return_of(&four_rates, "t-0008", "T1-0008", &[(0, 2), (2, 3)])?;
    let covered = [four_rates.transaction_id.clone()];
    let credited = CreditOf {
        invoice: invoice::InvoiceReference {
            number: rates_and_discounts.number.clone(),
            issued_on: rates_and_discounts.issued_on,
        },
        sales: &covered,
    };
    let credit = invoice::credit_invoice(issue(6, &french)?, &credited, &[returned])?;

    // Each sale of a cent at the standard rate rounds its VAT down to nothing: this many of
    // them stray from BR-S-09 by just under what the rule allows, which till still accepts.
    let mut cents = Vec::new();
    for n in 0..480 {
        cents.push(sale(
            &format!("c-{n}"),
            &format!("T3-{n:04}"),
            date(2026, 11, 24),
            &[("Sachet de sucre", 1, 1, 2000, 0)],
        )?);
    }
    let at_the_edge = invoice::invoice(issue(7, &french)?, &cents)?;

    let samples: [(&str, &Invoice); 7] = [
        ("one-sale", &one_sale),
        ("several-sales", &several_sales),
        ("four-rates-discounts", &rates_and_discounts),
        ("gift-card", &with_gift_card),
        ("foreign-buyer", &foreign_buyer),
        ("credit", &credit),
        ("rounding-at-the-edge", &at_the_edge),
    ];
    for (name, invoice) in samples {
        let path = dir.join(format!("{name}.xml"));
        let xml = cii::xml(invoice)?;
        std::fs::write(&path, &xml)?;
        // The answer the API keeps beside the XML, from which the PDF is drawn
        // (till-api's example `invoice_pdfs`).
        let credits = match &invoice.kind {
            InvoiceKind::Credit(reference) => Some((InvoiceId::parse("four-rates-discounts")?, reference.clone())),
            InvoiceKind::Invoice => None,
        };
        let issued = Issued {
            invoice_id: InvoiceId::parse(name)?,
            invoice: (*invoice).clone(),
            issued_at: invoice.issued_on.to_zoned(paris.clone())?.timestamp(),
            credits,
            xml_sha256: sha256_hex(&xml),
            register_id: invoice
                .tickets
                .first()
                .map(|t| t.register_id.clone())
                .unwrap_or_default(),
            seal: jet::invoice_issued(false, &invoice.number, &[], invoice.totals.with_vat, ""),
            xml,
        };
        let answer = serde_json::to_vec_pretty(&InvoiceAnswer::of(&issued, 1))?;
        std::fs::write(dir.join(format!("{name}.json")), answer)?;
        println!(
            "{} {} {} total {} VAT {}",
            path.display(),
            invoice.number,
            invoice.type_code(),
            invoice.totals.with_vat,
            invoice.totals.vat
        );
    }
    Ok(())
}

fn seller() -> Result<SellerIdentity, Box<dyn Error>> {
    let france = CountryCode::parse("FR")?;
    Ok(SellerIdentity {
        legal_name: Some(LegalName::parse("Till Épicerie SAS")?),
        address: Some(PostalAddress {
            line1: AddressLine::parse("12 rue des Archives")?,
            line2: Some(AddressLine::parse("Bâtiment B")?),
            postal_code: PostalCode::parse("75004", &france)?,
            city: AddressLine::parse("Paris")?,
            country: france,
        }),
        siren: Some(Siren::parse("732829320")?),
        vat_number: Some(VatNumber::parse("FR44732829320")?),
    })
}

/// A sale as committed, rung at ten in the morning, Paris time.
fn sale(transaction_id: &str, number: &str, on: Date, rung: &[Rung]) -> Result<SaleRecord, Box<dyn Error>> {
    let mut lines = Vec::new();
    for (index, (label, quantity, unit, rate, reduction)) in rung.iter().enumerate() {
        let gross = quantity * unit;
        lines.push(SaleRecordLine {
            line_id: format!("l{}", index + 1),
            sku_id: None,
            label: Some((*label).to_owned()),
            quantity: *quantity,
            unit_price_cents: *unit,
            vat_rate: *rate,
            gross_cents: gross,
            promotion_cents: *reduction,
            declared_cents: 0,
            ticket_cents: 0,
            net_cents: gross - reduction,
        });
    }
    let vat = vat_by_rate(&lines, 1)?;
    let total: i64 = lines.iter().map(|l| l.net_cents).sum();
    let at = on.at(10, 0, 0, 0).in_tz("Europe/Paris")?.timestamp().as_microsecond();
    Ok(SaleRecord {
        transaction_id: transaction_id.to_owned(),
        number: number.to_owned(),
        kind: "sale".to_owned(),
        store_id: STORE.to_owned(),
        seller_id: "camille".to_owned(),
        customer_id: None,
        session_id: "ses-1".to_owned(),
        register_id: "till-1".to_owned(),
        subtotal_cents: lines.iter().map(|l| l.gross_cents).sum(),
        total_cents: total,
        item_count: lines.iter().map(|l| l.quantity).sum(),
        change_cents: 0,
        points_earned: 0,
        coupon_code: None,
        issued_at: Some(at),
        emitted_at: at,
        late: false,
        lines,
        tenders: Vec::new(),
        vat,
        adjustments: Vec::new(),
        original: None,
    })
}

/// A return against the receipt of `sale`, of `(line index, units)`, priced as the till prices
/// returns, stored with its amounts negative.
fn return_of(
    sale: &SaleRecord,
    transaction_id: &str,
    number: &str,
    units: &[(usize, i64)],
) -> Result<SaleRecord, Box<dyn Error>> {
    let cents = |value: i64| Cents::new(value).ok_or("amount out of range");
    let mut returnable = Vec::new();
    for line in &sale.lines {
        returnable.push(ReturnableLine {
            line_id: line.line_id.clone(),
            quantity: line.quantity,
            returned: 0,
            vat_rate: VatRate::from_hundredths(line.vat_rate).ok_or("rate out of range")?,
            gross: cents(line.gross_cents)?,
            promotion: cents(line.promotion_cents)?,
            declared: cents(line.declared_cents)?,
            net: cents(line.net_cents)?,
        });
    }
    let wanted: Vec<ReturnedUnits> = units
        .iter()
        .map(|(index, units)| ReturnedUnits {
            line_id: sale.lines[*index].line_id.clone(),
            units: *units,
        })
        .collect();
    let plan = plan_return(
        &ReturnableSale {
            total: cents(sale.total_cents)?,
            points_earned: 0,
            refunded: Cents::ZERO,
            points_returned: 0,
            lines: returnable,
        },
        &wanted,
    )?;
    let mut record = sale.clone();
    record.transaction_id = transaction_id.to_owned();
    record.number = number.to_owned();
    record.kind = "return".to_owned();
    record.lines = plan
        .lines
        .iter()
        .map(|refund| {
            let sold = &sale.lines[refund.index];
            SaleRecordLine {
                quantity: refund.units,
                gross_cents: -refund.gross.get(),
                promotion_cents: -refund.promotion.get(),
                declared_cents: -refund.declared.get(),
                ticket_cents: -refund.ticket.get(),
                net_cents: -refund.refund.get(),
                ..sold.clone()
            }
        })
        .collect();
    record.vat = vat_by_rate(&record.lines, -1)?;
    record.total_cents = -plan.refund.get();
    record.subtotal_cents = -plan.subtotal.get();
    record.original = Some(OriginalTicket {
        transaction_id: sale.transaction_id.clone(),
        register_id: sale.register_id.clone(),
        seq: 5,
    });
    Ok(record)
}

/// The VAT per rate pricing computes, stored with the ticket's sign.
fn vat_by_rate(lines: &[SaleRecordLine], sign: i64) -> Result<Vec<SaleRecordVat>, Box<dyn Error>> {
    let mut nets = Vec::new();
    for line in lines {
        let rate = VatRate::from_hundredths(line.vat_rate).ok_or("rate out of range")?;
        nets.push((rate, Cents::new(sign * line.net_cents).ok_or("amount out of range")?));
    }
    Ok(vat_totals(nets)?
        .into_iter()
        .map(|v| SaleRecordVat {
            vat_rate: v.rate.hundredths(),
            total_cents: sign * v.total.get(),
            vat_cents: sign * v.vat.get(),
        })
        .collect())
}
