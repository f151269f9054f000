//! What sealing a ticket costs: the digest of the sale record and the ECDSA signature, both
//! paid inside the commit, in the one place every sale of a register passes in turn.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use till_core::fiscal::payload::{self, SaleRecord, SaleRecordLine, SaleRecordTender, SaleRecordVat};
use till_core::fiscal::{FiscalKey, PublicKey};

fn record(lines: usize) -> SaleRecord {
    SaleRecord {
        transaction_id: "c3-18421".into(),
        number: "c3-18421".into(),
        kind: "sale".into(),
        store_id: "bench-store".into(),
        seller_id: "cashier-3".into(),
        customer_id: Some("cust-12".into()),
        session_id: "ses_0123456789abcdefghijkl".into(),
        register_id: "reg-3".into(),
        subtotal_cents: 12_345,
        total_cents: 11_728,
        item_count: 13,
        change_cents: 0,
        points_earned: 117,
        coupon_code: None,
        issued_at: None,
        emitted_at: 1_795_320_707_000_000,
        lines: (0..lines)
            .map(|i| SaleRecordLine {
                line_id: format!("l{i}"),
                sku_id: Some(format!("{i:064x}")),
                label: Some(format!("Article {i}")),
                quantity: 2,
                unit_price_cents: 995,
                vat_rate: 2000,
                gross_cents: 1990,
                promotion_cents: 0,
                declared_cents: 0,
                ticket_cents: 99,
                net_cents: 1891,
            })
            .collect(),
        tenders: vec![SaleRecordTender {
            tender_id: "p1".into(),
            method: "card".into(),
            applied_cents: 11_728,
            presented_cents: 11_728,
            change_cents: 0,
            forfeited_cents: 0,
        }],
        vat: vec![SaleRecordVat {
            vat_rate: 2000,
            total_cents: 11_728,
            vat_cents: 1955,
        }],
        adjustments: vec![],
        original: None,
    }
}

fn sealing(c: &mut Criterion) {
    let key = FiscalKey::from_secret_bytes(&[7u8; 32]).expect("a key");
    let sale = record(7);
    let previous = key.sign("previous");
    c.bench_function("ticket signed string (digest of a 7-line sale record)", |b| {
        b.iter(|| payload::ticket(black_box(&sale), 1842, Some(&previous)))
    });
    let text = payload::ticket(&sale, 1842, Some(&previous));
    c.bench_function("ECDSA P-256 signature of a ticket", |b| {
        b.iter(|| key.sign(black_box(&text)))
    });
    // What an audit pays per entry: the key is read from its JWK once per chain.
    let signature = key.sign(&text);
    let public = PublicKey::from_jwk(key.public_jwk()).expect("the key's own JWK");
    c.bench_function("ECDSA P-256 verification of a ticket's signature", |b| {
        b.iter(|| public.verifies(black_box(&text), &signature))
    });
}

criterion_group!(benches, sealing);
criterion_main!(benches);
