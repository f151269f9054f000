//! What packing a sale's answer and document costs on the request's task, and what reading
//! them back costs, for a 7-line sale shaped like the load generator's (64-digit article ids,
//! each in the answer's lines, its stock movements and the document).

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use till_store::packed::{pack, unpack};

/// Article ids as random as a hash's, so that only their repetition compresses.
fn article_ids(count: usize) -> Vec<String> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..count)
        .map(|_| {
            (0..4)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    format!("{state:016x}")
                })
                .collect()
        })
        .collect()
}

fn sale_texts(lines: usize) -> (String, String) {
    let skus = article_ids(lines);
    let answer_lines: Vec<String> = skus
        .iter()
        .enumerate()
        .map(|(i, sku)| {
            format!(
                r#"{{"skuId":"{sku}","quantity":{},"unitPrice":{}}}"#,
                1 + i % 3,
                995 + 350 * i
            )
        })
        .collect();
    let movements: Vec<String> = skus
        .iter()
        .enumerate()
        .map(|(i, sku)| format!(r#"{{"skuId":"{sku}","deltaQuantity":-{}}}"#, 1 + i % 3))
        .collect();
    let response = format!(
        r#"{{"id":"evt_-P7EOKNo2fNGzZ1J3UKLi-","registerId":"reg-6","transaction":{{"id":"c6-63","number":"c6-63","storeId":"bench-store","sellerId":"cashier-6","customerId":null,"status":"completed","type":"sale","lines":[{}],"totals":{{"subtotal":32650,"total":32650,"itemCount":10,"lineCount":{lines}}}}},"ticket":{{"number":"c6-63","storeId":"bench-store","sellerId":"cashier-6","customerId":null,"subtotalCents":32650,"totalCents":32650,"itemCount":10,"tenders":[{{"method":"card","appliedCents":32650}}],"changeCents":0}},"loyalty":{{"customerId":null,"pointsEarned":0}},"stockMovements":[{}],"emittedAt":"2026-11-24T21:10:29.172706Z"}}"#,
        answer_lines.join(","),
        movements.join(",")
    );
    let document_lines: Vec<String> = skus
        .iter()
        .enumerate()
        .map(|(i, sku)| {
            format!(
                r#"{{"lineId":"l{i}","skuId":"{sku}","label":"Article {}","quantity":{},"unitPriceCents":{},"vatRate":2000,"grossCents":{},"promotionCents":0,"declaredCents":0,"ticketCents":0,"netCents":{}}}"#,
                100 + i * 37,
                1 + i % 3,
                995 + 350 * i,
                (995 + 350 * i) * (1 + i % 3),
                (995 + 350 * i) * (1 + i % 3)
            )
        })
        .collect();
    let detail = format!(
        r#"{{"lines":[{}],"tenders":[{{"tenderId":"p1","method":"card","appliedCents":32650,"presentedCents":32650,"changeCents":0,"forfeitedCents":0}}],"vat":[{{"vatRate":2000,"totalCents":32650,"vatCents":5441}}],"adjustments":[]}}"#,
        document_lines.join(",")
    );
    (response, detail)
}

fn packing(c: &mut Criterion) {
    let (response, detail) = sale_texts(7);
    let packed = pack(&response, &detail).expect("packs");
    eprintln!(
        "a 7-line sale: {} bytes of answer and document, {} packed",
        response.len() + detail.len(),
        packed.len()
    );
    c.bench_function("pack a 7-line sale's answer and document", |b| {
        b.iter(|| pack(black_box(&response), black_box(&detail)))
    });
    c.bench_function("unpack them", |b| b.iter(|| unpack(black_box(&packed))));
}

criterion_group!(benches, packing);
criterion_main!(benches);
