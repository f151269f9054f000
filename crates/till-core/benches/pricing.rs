//! Pricing a 50-line cart against 10, 1,000 and 10,000 active promotion rules.
//!
//! In every case the same ten rules touch the cart's articles; the others touch articles the
//! cart does not hold. The rule book indexes rules by article, so the cost should follow the
//! rules that touch the cart, not the size of the book.
//!
//!     cargo bench -p till-core --bench pricing

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use till_core::ids::{PromotionId, SkuId, StoreId};
use till_core::money::{Bps, Cents, VatRate};
use till_core::pricing::{LineToPrice, PricingInput, price};
use till_core::promotions::{
    BuySide, Component, GetSide, Mechanics, PromoLine, PromotionRule, RuleBook, apply_promotions,
};

fn sku(n: u64) -> SkuId {
    SkuId::parse(&format!("{n:064x}")).expect("64 hex digits")
}

fn rule(id: usize, mechanics: Mechanics) -> PromotionRule {
    PromotionRule {
        id: PromotionId::parse(&format!("rule-{id}")).expect("an id"),
        name: format!("Rule {id}"),
        valid_from: "2026-01-01T00:00:00Z".parse().expect("an instant"),
        valid_until: "2026-12-31T23:59:59Z".parse().expect("an instant"),
        priority: (id % 3) as i64,
        exclusive: false,
        store_ids: None,
        active: true,
        mechanics,
    }
}

/// A mix of the three kinds, on the articles `first` and `first + 1`.
fn mechanics(n: usize, first: u64) -> Mechanics {
    match n % 3 {
        0 => Mechanics::Bogo {
            buy: BuySide {
                product_ids: vec![sku(first)],
                quantity: 2,
            },
            get: GetSide {
                product_ids: vec![sku(first)],
                quantity: 1,
                percent_bps: Bps::FULL,
            },
            max_applications: None,
        },
        1 => Mechanics::Bundle {
            components: vec![
                Component {
                    product_id: sku(first),
                    quantity: 1,
                },
                Component {
                    product_id: sku(first + 1),
                    quantity: 1,
                },
            ],
            price_cents: Cents::new(1_500).expect("an amount"),
        },
        _ => Mechanics::PercentOff {
            product_ids: Some(vec![sku(first), sku(first + 1)]),
            percent_bps: Bps::new(1_500).expect("a rate"),
            min_subtotal_cents: None,
        },
    }
}

/// `total` rules: ten on the cart's articles (0..50), the rest on articles from 1,000 on.
fn book(total: usize) -> RuleBook {
    let rules = (0..total)
        .map(|n| {
            let first = if n < 10 { (n as u64) * 5 } else { 1_000 + (n as u64) * 2 };
            rule(n, mechanics(n, first))
        })
        .collect();
    RuleBook::new(rules)
}

fn cart() -> Vec<LineToPrice> {
    (0..50)
        .map(|n| LineToPrice {
            line_id: format!("line-{n:02}"),
            unit_price: Cents::new(199 + (n as i64) * 37).expect("an amount"),
            quantity: 1 + (n as i64) % 4,
            vat_rate: VatRate::from_hundredths(if n % 2 == 0 { 2_000 } else { 550 }).expect("a rate"),
        })
        .collect()
}

fn price_cart(book: &RuleBook, lines: &[LineToPrice], skus: &[SkuId], store: &StoreId) -> Cents {
    let at = "2026-06-01T12:00:00Z".parse().expect("an instant");
    let candidates = book.candidates(skus, store, at);
    let promo_lines: Vec<PromoLine> = lines
        .iter()
        .zip(skus)
        .map(|(l, sku)| PromoLine {
            line_id: l.line_id.clone(),
            sku: Some(sku.clone()),
            unit_price: l.unit_price,
            quantity: l.quantity,
        })
        .collect();
    let outcome = apply_promotions(&candidates, &promo_lines).expect("in range");
    let priced = price(&PricingInput {
        lines,
        promotions: outcome.reductions,
        basket_promotions: outcome.basket,
        ..PricingInput::default()
    })
    .expect("in range");
    priced.total
}

fn pricing(c: &mut Criterion) {
    let lines = cart();
    let skus: Vec<SkuId> = (0..50).map(sku).collect();
    let store = StoreId::parse("paris").expect("an id");
    let mut group = c.benchmark_group("price a 50-line cart");
    for rules in [10, 1_000, 10_000] {
        let book = book(rules);
        group.bench_with_input(BenchmarkId::new("active rules", rules), &book, |b, book| {
            b.iter(|| black_box(price_cart(book, &lines, &skus, &store)))
        });
    }
    group.finish();
}

criterion_group!(benches, pricing);
criterion_main!(benches);
