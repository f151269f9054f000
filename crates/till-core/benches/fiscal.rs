//! What sealing a ticket costs: the digest of the sale record and the ECDSA signature, both
//! paid inside the commit, in the one place every sale of a register passes in turn. And what
//! writing an archive's canonical text costs.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use till_core::canonical::{to_canonical_string, write_canonical};
use till_core::fiscal::archive::{self, ArchiveChain, ArchiveDocument, Software};
use till_core::fiscal::payload::{self, SaleRecord, SaleRecordLine, SaleRecordTender, SaleRecordVat};
use till_core::fiscal::{ChainKind, Entry, FiscalKey, PublicKey};

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
        late: false,
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
            reference: None,
            reference_last4: None,
            reference_digest: None,
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

/// An archive document of `tickets` tickets of 7 lines, each with its chain entry.
fn archive_document(tickets: usize, key: &FiscalKey) -> ArchiveDocument {
    let signature = key.sign("previous");
    let mut sales = Vec::with_capacity(tickets);
    let mut entries = Vec::with_capacity(tickets);
    for n in 0..tickets {
        let mut sale = record(7);
        sale.transaction_id = format!("c3-{n:06}");
        let seq = i64::try_from(n).expect("a small count") + 1;
        entries.push(Entry {
            register_id: sale.register_id.clone(),
            kind: ChainKind::Ticket,
            seq,
            payload: payload::ticket(&sale, seq, Some(&signature)),
            signature: signature.clone(),
            previous_signature: Some(signature.clone()),
            key_id: key.key_id().to_owned(),
            algorithm: "ES256".into(),
            reference: sale.transaction_id.clone(),
            created_at: jiff::Timestamp::UNIX_EPOCH,
        });
        sales.push(sale);
    }
    ArchiveDocument {
        format: archive::FORMAT.into(),
        archive_id: "arc_bench".into(),
        software: Software {
            name: "till".into(),
            version: "bench".into(),
        },
        register_id: "reg-3".into(),
        period_from: "2026-11-25".into(),
        period_to: "2026-11-25".into(),
        chains: vec![ArchiveChain {
            kind: ChainKind::Ticket,
            previous_seq: 0,
            previous_signature: None,
            entries,
        }],
        sales,
        keys: vec![key.public_jwk().clone()],
        ..ArchiveDocument::default()
    }
}

/// An archive's canonical text, written the way it was before b454a46 (through a `Value` of
/// the document) and the way it is now (streamed by a sorting formatter).
fn archive_text(c: &mut Criterion) {
    let key = FiscalKey::from_secret_bytes(&[7u8; 32]).expect("a key");
    let document = archive_document(1_000, &key);
    c.bench_function("archive text of 1,000 tickets, through a Value", |b| {
        b.iter(|| to_canonical_string(&serde_json::to_value(black_box(&document)).expect("serializes")))
    });
    c.bench_function("archive text of 1,000 tickets, streamed", |b| {
        b.iter(|| {
            let mut text = Vec::new();
            write_canonical(&mut text, black_box(&document)).expect("serializes");
            text
        })
    });
}

criterion_group!(benches, sealing, archive_text);
criterion_main!(benches);
