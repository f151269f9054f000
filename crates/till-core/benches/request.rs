//! What idempotency costs a finalize request before any I/O: its fingerprint, the SHA-256 of
//! its canonical form, computed for every request on the request's own thread.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use till_core::ids::{CustomerId, SessionId, SkuId, StoreId, Subject, TransactionId};
use till_core::money::{Bps, Cents, VatRate};
use till_core::sale::{
    Cart, CartLine, DeclaredDiscount, DeclaredKind, DiscountReason, SaleRequest, SaleType, Tender, TenderMethod,
    TenderSet,
};

/// A request as the load generator sends them: `lines` catalog lines, a ticket discount, a
/// loyalty customer, paid by card.
fn request(lines: usize) -> SaleRequest {
    let cents = |value| Cents::new(value).expect("an amount");
    SaleRequest {
        transaction_id: TransactionId::parse("c3-18421").expect("an id"),
        number: "c3-18421".into(),
        store_id: StoreId::parse("bench-store").expect("an id"),
        seller_id: Subject::parse("cashier-3").expect("an id"),
        customer_id: Some(CustomerId::parse("cust-12").expect("an id")),
        session_id: SessionId::parse("ses_0123456789abcdefghijkl").expect("an id"),
        register_id: None,
        kind: SaleType::Sale,
        cart: Cart {
            lines: (0..lines)
                .map(|i| CartLine {
                    id: format!("l{i}"),
                    sku_id: Some(SkuId::parse(&format!("{i:064x}")).expect("a SKU")),
                    quantity: 2,
                    unit_price: cents(995),
                    vat_rate: VatRate::from_percent(20.0).expect("a rate"),
                    free: false,
                    custom: false,
                    serial: None,
                    kit_id: None,
                    gift_card: None,
                })
                .collect(),
            free_line_sequence: 0,
        },
        declared_discounts: vec![DeclaredDiscount {
            id: "d1".into(),
            reason: DiscountReason::Promotional,
            kind: DeclaredKind::TicketPercent {
                percent: Bps::new(500).expect("a rate"),
            },
        }],
        coupon_code: None,
        issued_at: None,
        tenders: TenderSet {
            amount_due: cents(13_265),
            tenders: vec![Tender {
                id: "p1".into(),
                method: TenderMethod::Card,
                applied: cents(13_265),
                presented: cents(13_265),
                change: Cents::ZERO,
                forfeited: Cents::ZERO,
                reference: None,
            }],
            sequence: 1,
        },
    }
}

fn fingerprint(c: &mut Criterion) {
    let sale = request(7);
    c.bench_function("fingerprint of a 7-line finalize request", |b| {
        b.iter(|| black_box(&sale).fingerprint())
    });
}

criterion_group!(benches, fingerprint);
criterion_main!(benches);
