//! What rendering a receipt costs once its sale is read and its proof signed: the text, the
//! HTML page (its proof and its public page's link drawn as SVG QR codes), the ESC/POS bytes,
//! and the e-mail's HTML with its proof as a PNG image.

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::hint::black_box;
use till_api::receipt::{self, Columns, Rendering};
use till_app::receipts::{ProvenReceipt, Receipt};
use till_core::fiscal::payload::SaleRecord;

/// A three-line sale paid by card, as the load generator rings them.
fn proven() -> ProvenReceipt {
    let line = |id: &str, label: &str, quantity: i64, unit: i64, rate: i64| {
        json!({"lineId": id, "skuId": format!("{:064x}", unit), "label": label, "quantity": quantity,
               "unitPriceCents": unit, "vatRate": rate, "grossCents": quantity * unit, "promotionCents": 0,
               "declaredCents": 0, "ticketCents": 0, "netCents": quantity * unit})
    };
    let sale: SaleRecord = serde_json::from_value(json!({
        "transactionId": "c3-18421", "number": "T-c3-18421", "kind": "sale", "storeId": "paris-marais",
        "sellerId": "camille", "customerId": null, "sessionId": "ses_0123456789abcdefghijkl",
        "registerId": "till-3", "subtotalCents": 2010, "totalCents": 2010, "itemCount": 4,
        "changeCents": 0, "pointsEarned": 0, "couponCode": null, "issuedAt": null,
        "emittedAt": 1_795_000_000_000_000i64, "late": false,
        "lines": [line("l1", "Baguette tradition", 2, 130, 550), line("l2", "Mug Marais", 1, 1450, 2000),
                  line("l3", "Croissant au beurre", 1, 300, 550)],
        "tenders": [{"tenderId": "p1", "method": "card", "appliedCents": 2010, "presentedCents": 2010,
                     "changeCents": 0, "forfeitedCents": 0, "reference": null, "referenceLast4": null,
                     "referenceDigest": null}],
        "vat": [{"vatRate": 550, "totalCents": 560, "vatCents": 29}, {"vatRate": 2000, "totalCents": 1450, "vatCents": 242}],
        "adjustments": [], "original": null
    }))
    .expect("a sale record");
    ProvenReceipt {
        receipt: Receipt {
            sale,
            seq: 18_421,
            signature: "MEUCIQDx4a0vNn5D5cQ0pS8H1t6pR2m3k9wXyZ0aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0u".to_owned(),
            store: None,
            seller_name: Some("Camille".to_owned()),
            instruments: vec![None],
            prints: Vec::new(),
            link_token: Some("AbCdEfGhIjKlMnOpQrStUv".to_owned()),
        },
        proof: "TILL1:till-3:18421:2010:2026-11-18T08:26:40Z:k-2026-01:\
                MEUCIQDx4a0vNn5D5cQ0pS8H1t6pR2m3k9wXyZ0aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uVwXyZ0123456789abcdef"
            .to_owned(),
        link: Some("https://receipts.example.com/r/AbCdEfGhIjKlMnOpQrStUv".to_owned()),
    }
}

fn render(c: &mut Criterion) {
    let receipt = proven();
    c.bench_function("receipt as text (48 columns)", |b| {
        b.iter(|| receipt::text(black_box(&receipt), Rendering::Shown, Columns::Wide))
    });
    c.bench_function("receipt as HTML (two SVG QR codes)", |b| {
        b.iter(|| receipt::html(black_box(&receipt), Rendering::Shown))
    });
    c.bench_function("receipt as ESC/POS bytes", |b| {
        b.iter(|| {
            receipt::escpos::bytes(&receipt::printed_lines(
                black_box(&receipt),
                Rendering::Shown,
                Columns::Wide,
            ))
        })
    });
    c.bench_function("receipt as an e-mail's HTML and PNG QR code", |b| {
        b.iter(|| {
            let html = receipt::mail_html(black_box(&receipt), "proof");
            (html, receipt::qr_png(&receipt.proof))
        })
    });
}

criterion_group!(benches, render);
criterion_main!(benches);
