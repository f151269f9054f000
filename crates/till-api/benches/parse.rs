//! What reading a finalize body costs before any pricing or I/O: the JSON text parsed and read
//! into a typed `SaleRequest` (or the list of every problem), on the request's own thread.

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::hint::black_box;
use till_api::extract::parse_json;
use till_api::routes::checkout::request::parse_sale;

/// A body as the load generator sends them: `lines` catalog lines, a ticket discount, a
/// loyalty customer, paid by card.
fn body(lines: usize) -> Vec<u8> {
    let cart: Vec<_> = (0..lines)
        .map(|i| {
            json!({"id": format!("l{i}"), "skuId": format!("{i:064x}"), "quantity": 2,
                   "unitPrice": 995, "vatRate": 20.0, "free": false})
        })
        .collect();
    let total = 995 * 2 * lines as i64;
    json!({
        "transactionId": "c3-18421",
        "number": "c3-18421",
        "storeId": "bench-store",
        "sellerId": "cashier-3",
        "customerId": "cust-12",
        "sessionId": "ses_0123456789abcdefghijkl",
        "cart": {"lines": cart, "freeLineSequence": 0},
        "declaredDiscounts": [
            {"id": "d1", "reason": "promotional", "scope": "ticket", "basis": "percent", "percentBps": 500}
        ],
        "tenders": {"amountDue": total, "sequence": 1, "tenders": [
            {"id": "p1", "method": "card", "applied": total, "presented": total, "change": 0, "forfeited": 0}
        ]}
    })
    .to_string()
    .into_bytes()
}

fn parse(c: &mut Criterion) {
    let bytes = body(7);
    // As the extractor reads a body: one pass that also refuses a repeated key.
    let read = |bytes: &[u8]| {
        let value = parse_json(bytes).expect("JSON");
        parse_sale(&value).is_ok()
    };
    assert!(read(&bytes), "the bench body must be a valid sale");
    c.bench_function("finalize body of 7 lines, bytes to SaleRequest", |b| {
        b.iter(|| read(black_box(&bytes)))
    });
    c.bench_function("finalize body of 7 lines, bytes to serde_json::Value only", |b| {
        b.iter(|| parse_json(black_box(&bytes)).is_ok())
    });
    c.bench_function("finalize body of 7 lines, serde_json's own Value (no key check)", |b| {
        b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(&bytes)).is_ok())
    });
}

criterion_group!(benches, parse);
criterion_main!(benches);
