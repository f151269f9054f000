use super::*;
use crate::fiscal::payload::{OriginalTicket, SaleRecordVat};
use crate::invoice::{BuyerText, cii};
use crate::pricing::vat_totals;
use crate::returns::{ReturnableLine, ReturnableSale, ReturnedUnits, plan_return};
use crate::seller::{AddressLine, CountryCode, LegalName, PostalAddress, PostalCode, Siren, VatNumber};
use jiff::civil::date;
use proptest::prelude::*;

const STORE: &str = "s1";

/// A line as rung: quantity, unit price with VAT, rate in hundredths, reductions.
type Rung = (i64, i64, i64, i64);

fn cents(value: i64) -> Cents {
    Cents::new(value).unwrap()
}

fn rate(hundredths: i64) -> VatRate {
    VatRate::from_hundredths(hundredths).unwrap()
}

fn vat_of(lines: &[SaleRecordLine], sign: i64) -> Vec<SaleRecordVat> {
    let nets = lines.iter().map(|l| (rate(l.vat_rate), cents(sign * l.net_cents)));
    vat_totals(nets)
        .unwrap()
        .into_iter()
        .map(|v| SaleRecordVat {
            vat_rate: v.rate.hundredths(),
            total_cents: sign * v.total.get(),
            vat_cents: sign * v.vat.get(),
        })
        .collect()
}

/// A committed sale of `rung`, as a till records it (with a customer and a cashier, which an
/// invoice never shows).
fn sale(id: &str, rung: &[Rung]) -> SaleRecord {
    let lines: Vec<SaleRecordLine> = rung
        .iter()
        .enumerate()
        .map(|(i, (quantity, unit, rate, reduction))| SaleRecordLine {
            line_id: format!("l{i}"),
            sku_id: Some(format!("sku-{i}")),
            label: Some(format!("Article {i}")),
            quantity: *quantity,
            unit_price_cents: *unit,
            vat_rate: *rate,
            gross_cents: quantity * unit,
            promotion_cents: *reduction,
            declared_cents: 0,
            ticket_cents: 0,
            net_cents: quantity * unit - reduction,
        })
        .collect();
    SaleRecord {
        transaction_id: id.to_owned(),
        number: format!("T-{id}"),
        kind: "sale".to_owned(),
        store_id: STORE.to_owned(),
        seller_id: "cashier-camille".to_owned(),
        customer_id: Some("loyal-client-42".to_owned()),
        session_id: "ses".to_owned(),
        register_id: "r1".to_owned(),
        subtotal_cents: lines.iter().map(|l| l.gross_cents).sum(),
        total_cents: lines.iter().map(|l| l.net_cents).sum(),
        item_count: lines.iter().map(|l| l.quantity).sum(),
        change_cents: 0,
        points_earned: 0,
        coupon_code: None,
        issued_at: Some(1_795_000_000_000_000),
        emitted_at: 1_795_000_000_000_000,
        late: false,
        vat: vat_of(&lines, 1),
        lines,
        tenders: Vec::new(),
        adjustments: Vec::new(),
        original: None,
    }
}

/// The whole of `sale` returned against its receipt.
fn whole_return(sale: &SaleRecord, id: &str) -> SaleRecord {
    let mut back = sale.clone();
    back.transaction_id = id.to_owned();
    back.kind = "return".to_owned();
    for line in &mut back.lines {
        line.gross_cents = -line.gross_cents;
        line.promotion_cents = -line.promotion_cents;
        line.net_cents = -line.net_cents;
    }
    back.vat = vat_of(&back.lines, -1);
    back.total_cents = -sale.total_cents;
    back.original = Some(OriginalTicket {
        transaction_id: sale.transaction_id.clone(),
        register_id: sale.register_id.clone(),
        seq: 1,
    });
    back
}

fn identity() -> SellerIdentity {
    let france = CountryCode::parse("FR").unwrap();
    SellerIdentity {
        legal_name: Some(LegalName::parse("Till Épicerie SAS").unwrap()),
        address: Some(PostalAddress {
            line1: AddressLine::parse("12 rue des Archives").unwrap(),
            line2: None,
            postal_code: PostalCode::parse("75004", &france).unwrap(),
            city: AddressLine::parse("Paris").unwrap(),
            country: france,
        }),
        siren: Some(Siren::parse("732829320").unwrap()),
        vat_number: Some(VatNumber::parse("FR44732829320").unwrap()),
    }
}

fn buyer() -> Buyer {
    Buyer::parse(&BuyerText {
        name: "Boulangerie Martin SARL",
        siren: Some("303265045"),
        vat_number: Some("FR40303265045"),
        line1: "3 rue du Four",
        line2: None,
        postal_code: "75006",
        city: "Paris",
        country: "FR",
    })
    .unwrap()
}

struct Fixture {
    store: StoreId,
    seller: SellerIdentity,
    tz: TimeZone,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture {
            store: StoreId::parse(STORE).unwrap(),
            seller: identity(),
            tz: TimeZone::get("Europe/Paris").unwrap(),
        }
    }

    fn issue(&self, seq: u64) -> Issue<'_> {
        let mut number = InvoiceNumber::first(self.store.clone(), 2026).unwrap();
        for _ in 1..seq {
            number = InvoiceNumber::next(Some(&number), &self.store, 2026).unwrap();
        }
        Issue {
            number,
            issued_on: date(2026, 11, 24),
            store_id: &self.store,
            seller: &self.seller,
            buyer: buyer(),
            time_zone: &self.tz,
        }
    }
}

#[test]
fn a_sale_is_invoiced_without_vat_to_the_cent() {
    let f = Fixture::new();
    // Baguettes at the reduced rate, and a mug at the standard rate with a discount.
    let breakfast = sale("t1", &[(4, 130, 550, 0), (1, 1450, 2000, 100)]);
    let invoice = invoice(f.issue(1), std::slice::from_ref(&breakfast)).unwrap();
    assert_eq!(invoice.type_code(), "380");
    assert_eq!(invoice.tickets[0].number, "T-t1");
    let bread = &invoice.lines[0];
    // The bread's net holds its VAT; nothing is taken off.
    assert_eq!(
        (bread.gross, bread.allowance, bread.net, bread.vat),
        (cents(493), Cents::ZERO, cents(493), cents(27))
    );
    let mug = &invoice.lines[1];
    // The discount held VAT too: the allowance is the discount without it.
    assert_eq!(
        (mug.gross, mug.allowance, mug.net, mug.vat),
        (cents(1208), cents(83), cents(1125), cents(225))
    );
    assert_eq!(
        invoice.vat,
        vec![
            VatBreakdown {
                rate: rate(2000),
                category: VatCategory::Standard,
                taxable: cents(1125),
                tax: cents(225)
            },
            VatBreakdown {
                rate: rate(550),
                category: VatCategory::Standard,
                taxable: cents(493),
                tax: cents(27)
            },
        ]
    );
    assert_eq!(
        invoice.totals,
        Totals {
            lines: cents(1618),
            without_vat: cents(1618),
            vat: cents(252),
            with_vat: cents(1870),
            paid: cents(1870),
            due: Cents::ZERO,
        }
    );
    assert_eq!(invoice.totals.with_vat.get(), breakfast.total_cents);
}

#[test]
fn the_vat_of_several_sales_is_theirs_added_up() {
    let f = Fixture::new();
    // Each of these sales rounds its VAT on its own: the invoice keeps their sum.
    let sales: Vec<SaleRecord> = (0..7).map(|i| sale(&format!("t{i}"), &[(1, 199, 2000, 0)])).collect();
    let invoice = invoice(f.issue(1), &sales).unwrap();
    let sealed: i64 = sales.iter().map(|s| s.vat[0].vat_cents).sum();
    assert_eq!(sealed, 7 * 33);
    assert_eq!(invoice.totals.vat.get(), sealed);
    assert_eq!(invoice.totals.with_vat.get(), 7 * 199);
    assert_eq!(invoice.vat[0].taxable.get(), 7 * 199 - sealed);
    assert_eq!(invoice.tickets.len(), 7);
    assert_eq!(invoice.lines[6].ticket, 6);
}

#[test]
fn a_ticket_is_dated_by_the_stores_clock_and_the_xml_by_its_tickets() {
    let f = Fixture::new();
    let at = |text: &str| text.parse::<jiff::Timestamp>().unwrap().as_microsecond();
    let mut late = sale("t1", &[(1, 100, 2000, 0)]);
    // Past midnight in Paris, still the day before in UTC.
    late.issued_at = Some(at("2026-11-21T23:30:00Z"));
    let mut next = sale("t2", &[(1, 100, 2000, 0)]);
    next.issued_at = None;
    next.emitted_at = at("2026-11-23T09:00:00Z");
    let invoice = invoice(f.issue(1), &[late, next]).unwrap();
    assert_eq!(invoice.tickets[0].on, date(2026, 11, 22));
    assert_eq!(
        invoice.tickets[1].on,
        date(2026, 11, 23),
        "without issuedAt, its arrival"
    );
    assert_eq!(invoice.delivered(), Some((date(2026, 11, 22), date(2026, 11, 23))));
    let xml = String::from_utf8(cii::xml(&invoice).unwrap()).unwrap();
    assert!(xml.contains("<ram:BillingSpecifiedPeriod>"));
    assert!(xml.contains("<udt:DateTimeString format=\"102\">20261122</udt:DateTimeString>"));
    assert!(xml.contains("Tickets de caisse : T-t1 du 22/11/2026, T-t2 du 23/11/2026."));
}

#[test]
fn a_gift_card_sold_is_exempt() {
    let f = Fixture::new();
    let invoice = invoice(f.issue(1), &[sale("t1", &[(1, 5000, 0, 0), (1, 1200, 2000, 0)])]).unwrap();
    let exempt = &invoice.vat[1];
    assert_eq!(
        (exempt.category, exempt.taxable, exempt.tax),
        (VatCategory::Exempt, cents(5000), Cents::ZERO)
    );
    assert_eq!(invoice.totals.with_vat, cents(6200));
}

#[test]
fn what_cannot_be_invoiced_is_refused() {
    let f = Fixture::new();
    let one = sale("t1", &[(1, 100, 2000, 0)]);
    assert_eq!(invoice(f.issue(1), &[]), Err(InvoiceRefusal::NoSale));
    let mut elsewhere = sale("t2", &[(1, 100, 2000, 0)]);
    elsewhere.store_id = "s2".into();
    assert_eq!(
        invoice(f.issue(1), &[one.clone(), elsewhere]),
        Err(InvoiceRefusal::AnotherStore("t2".into()))
    );
    assert_eq!(
        invoice(f.issue(1), &[one.clone(), one.clone()]),
        Err(InvoiceRefusal::Twice("t1".into()))
    );
    assert_eq!(
        invoice(f.issue(1), &[whole_return(&one, "r1")]),
        Err(InvoiceRefusal::AReturn("r1".into()))
    );
    let mut next_year = f.issue(1);
    next_year.issued_on = date(2027, 1, 2);
    assert_eq!(
        invoice(next_year, std::slice::from_ref(&one)),
        Err(InvoiceRefusal::NumberOfAnotherStoreOrYear)
    );
    let unnamed = Fixture {
        seller: SellerIdentity {
            legal_name: None,
            ..identity()
        },
        ..Fixture::new()
    };
    assert_eq!(
        invoice(unnamed.issue(1), std::slice::from_ref(&one)),
        Err(InvoiceRefusal::Seller(SellerGap::Missing(
            crate::invoice::SellerField::LegalName
        )))
    );
}

#[test]
fn a_record_that_does_not_add_up_is_refused() {
    let f = Fixture::new();
    let base = sale("t1", &[(2, 100, 2000, 0), (1, 50, 550, 0)]);
    let refused = |change: fn(&mut SaleRecord)| {
        let mut record = base.clone();
        change(&mut record);
        match invoice(f.issue(1), &[record]) {
            Err(InvoiceRefusal::Record {
                transaction_id,
                problem,
            }) if transaction_id == "t1" => problem,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(refused(|r| r.total_cents += 1), RecordProblem::Total);
    assert_eq!(refused(|r| r.vat[0].vat_cents = 300), RecordProblem::Vat);
    assert_eq!(refused(|r| r.vat[0].total_cents += 1), RecordProblem::Vat);
    assert_eq!(refused(|r| r.vat.truncate(1)), RecordProblem::Vat);
    assert_eq!(refused(|r| r.vat[1].vat_rate = 1000), RecordProblem::Vat);
    assert_eq!(refused(|r| r.lines[0].vat_rate = 20_000), RecordProblem::Rate);
    assert_eq!(refused(|r| r.lines[0].quantity = 0), RecordProblem::Quantity);
    assert_eq!(refused(|r| r.lines[0].gross_cents = 100), RecordProblem::Reductions);
    assert_eq!(refused(|r| r.lines[1].unit_price_cents = -50), RecordProblem::Amount);
    assert_eq!(
        refused(|r| {
            r.lines[1].net_cents = -50;
            r.total_cents = 150;
        }),
        RecordProblem::Amount
    );
    assert_eq!(refused(|r| r.total_cents = i64::MAX), RecordProblem::Amount);
    assert_eq!(
        refused(|r| {
            r.lines.clear();
            r.vat.clear();
            r.total_cents = 0;
        }),
        RecordProblem::NoLine
    );
}

#[test]
fn vat_rounded_too_often_for_one_invoice_is_refused() {
    let f = Fixture::new();
    // A sale of a cent at the standard rate holds no VAT, a fraction of a cent short of its
    // base times the rate: hundreds of them stray a whole euro from the rule.
    let cents_sold =
        |n: usize| -> Vec<SaleRecord> { (0..n).map(|i| sale(&format!("t{i}"), &[(1, 1, 2000, 0)])).collect() };
    assert!(invoice(f.issue(1), &cents_sold(400)).is_ok());
    assert_eq!(
        invoice(f.issue(1), &cents_sold(500)),
        Err(InvoiceRefusal::VatRounding(rate(2000)))
    );
}

#[test]
fn a_credit_invoice_cancels_returns_of_the_sales_invoiced() {
    let f = Fixture::new();
    let sold = sale("t1", &[(3, 1450, 2000, 1450), (2, 130, 550, 0)]);
    let original = invoice(f.issue(1), std::slice::from_ref(&sold)).unwrap();
    let covered = vec![sold.transaction_id.clone()];
    let of = CreditOf {
        invoice: InvoiceReference {
            number: original.number.clone(),
            issued_on: original.issued_on,
        },
        sales: &covered,
    };
    let back = whole_return(&sold, "r1");
    let credit = credit_invoice(f.issue(2), &of, std::slice::from_ref(&back)).unwrap();
    assert_eq!(credit.type_code(), "381");
    assert_eq!(credit.kind, InvoiceKind::Credit(of.invoice.clone()));
    assert_eq!(credit.totals, original.totals, "returned whole, it mirrors the invoice");
    assert_eq!(credit.lines, original.lines);

    let other = sale("t9", &[(1, 100, 2000, 0)]);
    assert_eq!(
        credit_invoice(f.issue(2), &of, &[whole_return(&other, "r9")]),
        Err(InvoiceRefusal::NotOfTheInvoice("r9".into()))
    );
    assert_eq!(
        credit_invoice(f.issue(2), &of, std::slice::from_ref(&sold)),
        Err(InvoiceRefusal::NotAReturn("t1".into()))
    );
    let mut without_receipt = back.clone();
    without_receipt.original = None;
    assert_eq!(
        credit_invoice(f.issue(2), &of, &[without_receipt]),
        Err(InvoiceRefusal::NotAReturn("r1".into()))
    );
    let mut early = f.issue(2);
    early.issued_on = date(2026, 11, 1);
    assert_eq!(
        credit_invoice(early, &of, std::slice::from_ref(&back)),
        Err(InvoiceRefusal::BeforeTheInvoice)
    );
    assert_eq!(credit_invoice(f.issue(2), &of, &[]), Err(InvoiceRefusal::NoSale));
}

#[test]
fn the_xml_names_the_parties_and_says_the_invoice_is_paid() {
    let f = Fixture::new();
    let sold = sale("t1", &[(4, 130, 550, 0), (1, 1450, 2000, 100)]);
    let original = invoice(f.issue(1), std::slice::from_ref(&sold)).unwrap();
    let xml = String::from_utf8(cii::xml(&original).unwrap()).unwrap();
    for expected in [
        "<ram:ID>urn:cen.eu:en16931:2017</ram:ID>",
        "<ram:ID>F-s1-2026-000001</ram:ID>",
        "<ram:TypeCode>380</ram:TypeCode>",
        "<udt:DateTimeString format=\"102\">20261124</udt:DateTimeString>",
        "<ram:ID schemeID=\"0002\">732829320</ram:ID>",
        "<ram:ID schemeID=\"VA\">FR44732829320</ram:ID>",
        "<ram:ID schemeID=\"0002\">303265045</ram:ID>",
        "<ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>",
        "<ram:TaxTotalAmount currencyID=\"EUR\">2.52</ram:TaxTotalAmount>",
        "<ram:GrandTotalAmount>18.70</ram:GrandTotalAmount>",
        "<ram:TotalPrepaidAmount>18.70</ram:TotalPrepaidAmount>",
        "<ram:DuePayableAmount>0.00</ram:DuePayableAmount>",
        "<ram:RateApplicablePercent>5.5</ram:RateApplicablePercent>",
        "<ram:BasisQuantity unitCode=\"C62\">4</ram:BasisQuantity>",
        "Facture acquittée",
    ] {
        assert!(xml.contains(expected), "{expected} missing from\n{xml}");
    }
    for private in ["loyal-client-42", "cashier-camille"] {
        assert!(!xml.contains(private), "{private} is written");
    }
    let covered = vec![sold.transaction_id.clone()];
    let of = CreditOf {
        invoice: InvoiceReference {
            number: original.number.clone(),
            issued_on: original.issued_on,
        },
        sales: &covered,
    };
    let credit = credit_invoice(f.issue(2), &of, &[whole_return(&sold, "r1")]).unwrap();
    let xml = String::from_utf8(cii::xml(&credit).unwrap()).unwrap();
    assert!(xml.contains("<ram:TypeCode>381</ram:TypeCode>"));
    assert!(xml.contains(
        "<ram:InvoiceReferencedDocument>\n        <ram:IssuerAssignedID>F-s1-2026-000001</ram:IssuerAssignedID>"
    ));
}

/// Whether `xml` reads to its end as well-formed XML.
fn well_formed(xml: &[u8]) -> bool {
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut buf = Vec::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(quick_xml::events::Event::Eof) => return true,
            Ok(_) => buf.clear(),
            Err(_) => return false,
        }
    }
}

prop_compose! {
    fn any_line()(quantity in 1i64..30, unit in 0i64..50_000, rate in prop::sample::select(vec![2000i64, 1000, 550, 210, 0]), off in 0i64..=100)
        -> Rung {
        let gross = quantity * unit;
        (quantity, unit, rate, gross * off / 100)
    }
}

proptest! {
    /// For any sales, the invoice's total with VAT is theirs and its VAT per rate theirs, to
    /// the cent, and the sums EN 16931 defines hold exactly.
    #[test]
    fn totals_are_the_sales_to_the_cent(sales in prop::collection::vec(prop::collection::vec(any_line(), 1..6), 1..8)) {
        let f = Fixture::new();
        let records: Vec<SaleRecord> = sales.iter().enumerate().map(|(i, rung)| sale(&format!("t{i}"), rung)).collect();
        let invoice = invoice(f.issue(1), &records).unwrap();
        let totals = invoice.totals;
        prop_assert_eq!(totals.with_vat.get(), records.iter().map(|s| s.total_cents).sum::<i64>());
        for entry in &invoice.vat {
            let sealed: i64 = records.iter().flat_map(|s| &s.vat).filter(|v| v.vat_rate == entry.rate.hundredths()).map(|v| v.vat_cents).sum();
            prop_assert_eq!(entry.tax.get(), sealed);
            // BR-S-08
            let nets: i64 = invoice.lines.iter().filter(|l| l.vat_rate == entry.rate).map(|l| l.net.get()).sum();
            prop_assert_eq!(entry.taxable.get(), nets);
            // BR-S-09, as the schematron reads it.
            let expected = (entry.taxable.get() * entry.rate.hundredths() + 5_000) / 10_000;
            prop_assert!((entry.tax.get() - expected).abs() < 100);
        }
        // BR-CO-10, -13, -14, -15, -16
        prop_assert_eq!(totals.lines.get(), invoice.lines.iter().map(|l| l.net.get()).sum::<i64>());
        prop_assert_eq!(totals.without_vat, totals.lines);
        prop_assert_eq!(totals.vat.get(), invoice.vat.iter().map(|v| v.tax.get()).sum::<i64>());
        prop_assert_eq!(totals.with_vat.get(), totals.without_vat.get() + totals.vat.get());
        prop_assert_eq!(totals.due.get(), totals.with_vat.get() - totals.paid.get());
        for line in &invoice.lines {
            prop_assert_eq!(line.gross.get() - line.allowance.get(), line.net.get());
            prop_assert_eq!(line.net.get() + line.vat.get(), line.net_with_vat.get());
            prop_assert!(!line.net.is_negative() && !line.allowance.is_negative() && !line.vat.is_negative());
        }
        prop_assert!(well_formed(&cii::xml(&invoice).unwrap()));
    }

    /// Returned whole, sales are credited for exactly what they were invoiced.
    #[test]
    fn a_whole_return_credits_the_invoice(rung in prop::collection::vec(any_line(), 1..6)) {
        let f = Fixture::new();
        let sold = sale("t1", &rung);
        let original = invoice(f.issue(1), std::slice::from_ref(&sold)).unwrap();
        let covered = vec!["t1".to_owned()];
        let of = CreditOf { invoice: InvoiceReference { number: original.number.clone(), issued_on: original.issued_on }, sales: &covered };
        let credit = credit_invoice(f.issue(2), &of, &[whole_return(&sold, "r1")]).unwrap();
        prop_assert_eq!(credit.totals, original.totals);
        prop_assert_eq!(credit.vat, original.vat);
    }

    /// Returns in parts are credited for what they refunded, to the cent, and all of them
    /// together never for more than the invoice.
    #[test]
    fn partial_returns_are_credited_for_their_refunds(
        rung in prop::collection::vec(any_line(), 1..6),
        cuts in prop::collection::vec((0usize..6, 1i64..4), 1..6),
    ) {
        let f = Fixture::new();
        let sold = sale("t1", &rung);
        let original = invoice(f.issue(1), std::slice::from_ref(&sold)).unwrap();
        let mut returnable = ReturnableSale {
            total: cents(sold.total_cents),
            points_earned: 0,
            refunded: Cents::ZERO,
            points_returned: 0,
            lines: sold.lines.iter().map(|l| ReturnableLine {
                line_id: l.line_id.clone(),
                quantity: l.quantity,
                returned: 0,
                vat_rate: rate(l.vat_rate),
                gross: cents(l.gross_cents),
                promotion: cents(l.promotion_cents),
                declared: cents(l.declared_cents),
                net: cents(l.net_cents),
            }).collect(),
        };
        let mut returns = Vec::new();
        for (n, (line, units)) in cuts.into_iter().enumerate() {
            let line = line % returnable.lines.len();
            let units = units.min(returnable.lines[line].remaining());
            if units == 0 { continue; }
            let plan = plan_return(&returnable, &[ReturnedUnits { line_id: returnable.lines[line].line_id.clone(), units }]).unwrap();
            returnable.lines[line].returned += units;
            returnable.refunded = returnable.refunded.checked_add(plan.refund).unwrap();
            let mut back = whole_return(&sold, &format!("r{n}"));
            back.lines = plan.lines.iter().map(|refund| SaleRecordLine {
                quantity: refund.units,
                gross_cents: -refund.gross.get(),
                promotion_cents: -refund.promotion.get(),
                declared_cents: -refund.declared.get(),
                ticket_cents: -refund.ticket.get(),
                net_cents: -refund.refund.get(),
                ..sold.lines[refund.index].clone()
            }).collect();
            back.vat = vat_of(&back.lines, -1);
            back.total_cents = -plan.refund.get();
            returns.push(back);
        }
        prop_assume!(!returns.is_empty());
        let covered = vec!["t1".to_owned()];
        let of = CreditOf { invoice: InvoiceReference { number: original.number.clone(), issued_on: original.issued_on }, sales: &covered };
        let credit = credit_invoice(f.issue(2), &of, &returns).unwrap();
        prop_assert_eq!(credit.totals.with_vat, returnable.refunded);
        prop_assert!(credit.totals.with_vat <= original.totals.with_vat);
        for entry in &credit.vat {
            let sealed: i64 = returns.iter().flat_map(|r| &r.vat).filter(|v| v.vat_rate == entry.rate.hundredths()).map(|v| -v.vat_cents).sum();
            prop_assert_eq!(entry.tax.get(), sealed);
        }
        prop_assert!(well_formed(&cii::xml(&credit).unwrap()));
    }

    /// Whatever a buyer's fields or an article's label hold, the XML is written and reads back.
    #[test]
    fn any_text_makes_well_formed_xml(label in "\\PC{0,20}|[\\x00-\\x1f<>&\"']{0,6}", name in "\\PC{1,20}") {
        let f = Fixture::new();
        let mut sold = sale("t1", &[(1, 100, 2000, 0)]);
        sold.lines[0].label = Some(label);
        let mut issue = f.issue(1);
        if let Ok(renamed) = Buyer::parse(&BuyerText { name: &name, ..BuyerText {
            name: "", siren: None, vat_number: None, line1: "1 rue", line2: None, postal_code: "75001", city: "Paris", country: "FR" } }) {
            issue.buyer = renamed;
        }
        let invoice = invoice(issue, &[sold]).unwrap();
        prop_assert!(well_formed(&cii::xml(&invoice).unwrap()));
    }
}
