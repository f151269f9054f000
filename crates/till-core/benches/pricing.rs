//! Pricing a 50-line cart against 10, 1,000 and 10,000 active promotion rules.
//!
//! In every case the same ten rules touch the cart's articles; the others touch articles the
//! cart does not hold. The rule book indexes rules by article, so the cost should follow the
//! rules that touch the cart, not the size of the book.
//!
//! Then a 7-line cart against rules that each name hundreds of articles, as the load
//! generator's do: the cost should follow the cart's lines, not the length of the rules' lists.
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
        customer_groups: None,
        active: true,
        mechanics,
    }
}

/// A mix of the three kinds, on the articles `first` and `first + 1`.
fn mechanics(n: usize, first: u64) -> Mechanics {
    match n % 3 {
        0 => Mechanics::Bogo {
            buy: BuySide {
                product_ids: vec![sku(first)].into(),
                quantity: 2,
            },
            get: GetSide {
                product_ids: vec![sku(first)].into(),
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
            product_ids: Some(vec![sku(first), sku(first + 1)].into()),
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

/// The load generator's two rules over a catalog of 5,000 articles: a bogo on every 40th
/// article (125 on each side) and 10 % off every 20th from the 7th (250).
fn long_lists() -> RuleBook {
    let every = |step: usize, offset: usize| (0..5_000u64).skip(offset).step_by(step).map(sku).collect();
    RuleBook::new(vec![
        rule(
            0,
            Mechanics::Bogo {
                buy: BuySide {
                    product_ids: every(40, 0),
                    quantity: 2,
                },
                get: GetSide {
                    product_ids: every(40, 0),
                    quantity: 1,
                    percent_bps: Bps::new(5_000).expect("a rate"),
                },
                max_applications: None,
            },
        ),
        rule(
            3,
            Mechanics::PercentOff {
                product_ids: Some(every(20, 7)),
                percent_bps: Bps::new(1_000).expect("a rate"),
                min_subtotal_cents: None,
            },
        ),
    ])
}

fn pricing_long_lists(c: &mut Criterion) {
    let lines: Vec<LineToPrice> = cart().into_iter().take(7).collect();
    // Two lines in the bogo, two in the percentage, three in neither.
    let skus: Vec<SkuId> = [0, 40, 7, 27, 1, 2, 3].into_iter().map(sku).collect();
    let store = StoreId::parse("paris").expect("an id");
    let book = long_lists();
    c.bench_function(
        "price a 7-line cart against a bogo on 125 articles and 10 % off 250",
        |b| b.iter(|| black_box(price_cart(&book, &lines, &skus, &store))),
    );
}

criterion_group!(benches, pricing, pricing_long_lists);
criterion_main!(benches);
