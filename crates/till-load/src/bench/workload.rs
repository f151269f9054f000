//! What the load generator sends: a shop's carts drafted and priced up front, as the server
//! will price them, and the promotions in force that both sides must agree on.

use super::BenchPlan;
use crate::client::Client;
use crate::shop::{Shop, Till};
use anyhow::{Context, Result, ensure};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use till_core::ids::{SkuId, StoreId};
use till_core::money::{Bps, Cents, VatRate};
use till_core::pricing::{LineToPrice, PricingInput, price};
use till_core::promotions::{PromoLine, PromotionRule, RuleBook, apply_promotions};
use till_core::sale::{DeclaredDiscount, DeclaredKind, DiscountReason};

/// A cart drafted and priced before the run, ready to send once its transaction id is in.
pub(super) struct Draft {
    /// The request body but its transaction id and ticket number.
    pub(super) body: Value,
    pub(super) lines: usize,
}

/// Carts drafted per till. Drafting one (picking articles, pricing it as the server will,
/// writing its JSON) cost the load generator about as much CPU as the server spent on the
/// sale, on the cores the server was measured on; drafting them up front leaves that CPU to
/// the server (docs/performance.md, "The load generator"). 256 per till is far more variety
/// than the server could notice.
const CARTS_PER_TILL: usize = 256;

/// Prices carts the way the server will: same catalog, same rules, same engine.
struct Pricer {
    store: StoreId,
    catalog: HashMap<String, (Cents, VatRate)>,
    rules: RuleBook,
}

impl Pricer {
    fn total(&self, lines: &[(String, i64)], declared: &[DeclaredDiscount]) -> Result<i64> {
        let to_price: Vec<LineToPrice> = lines
            .iter()
            .enumerate()
            .map(|(i, (sku, quantity))| {
                let (unit_price, vat_rate) = self.catalog[sku];
                LineToPrice {
                    line_id: format!("l{i}"),
                    unit_price,
                    quantity: *quantity,
                    vat_rate,
                }
            })
            .collect();
        let skus: Vec<SkuId> = lines.iter().map(|(sku, _)| SkuId::from_trusted(sku.clone())).collect();
        let candidates = self.rules.candidates(skus.iter(), &self.store, jiff::Timestamp::now());
        let promo_lines: Vec<PromoLine> = to_price
            .iter()
            .zip(&skus)
            .map(|(line, sku)| PromoLine {
                line_id: line.line_id.clone(),
                sku: Some(sku.clone()),
                unit_price: line.unit_price,
                quantity: line.quantity,
            })
            .collect();
        let promotions = apply_promotions(&candidates, &promo_lines)?;
        let priced = price(&PricingInput {
            lines: &to_price,
            promotions: promotions.reductions,
            basket_promotions: promotions.basket,
            declared,
            coupon: None,
        })
        .map_err(|e| anyhow::anyhow!("pricing: {e}"))?;
        Ok(priced.total.get())
    }
}

/// Other nodes apply a new rule once their promotion cache ages (a second by default): wait
/// until every node prices a cart with both rules, so no sale of the run
/// is priced by the load generator and the server with different rules.
async fn await_promotions_everywhere(client: &Client, admin: &str, shop: &Shop) -> Result<()> {
    let line = |id: &str, index: usize, quantity: i64| -> Result<Value> {
        let article = shop.articles.get(index).context("a catalog of at least 8 articles")?;
        Ok(
            json!({"id": id, "skuId": article.sku, "quantity": quantity, "unitPrice": article.price,
                  "vatRate": article.vat, "free": false}),
        )
    };
    // Article 0 is in the bogo, article 7 in the percent_off (see `promotions`).
    let probe = json!({"storeId": shop.store, "cart": {"freeLineSequence": 0,
        "lines": [line("bogo", 0, 3)?, line("percent", 7, 1)?]}});
    let deadline = Instant::now() + Duration::from_secs(30);
    for node in 0..client.nodes() {
        loop {
            let quote = client
                .to(node, reqwest::Method::POST, "/v1/checkout/price", admin, Some(&probe))
                .await?
                .expect(200, "price")?
                .json();
            let applied = quote["adjustments"].to_string();
            if applied.contains("bench-bogo") && applied.contains("bench-percent") {
                break;
            }
            ensure!(Instant::now() < deadline, "node {node} never applied the promotions");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    Ok(())
}

/// Two promotions in force: half price on every third unit of some articles, 10 % off others.
fn promotions(shop: &Shop) -> Vec<Value> {
    let every = |step: usize, offset: usize| -> Vec<&str> {
        shop.articles
            .iter()
            .skip(offset)
            .step_by(step)
            .map(|a| a.sku.as_str())
            .collect()
    };
    let window = ("2020-01-01T00:00:00Z", "2099-12-31T23:59:59Z");
    vec![
        json!({"id": "bench-bogo", "type": "bogo", "name": "Third at half price", "active": true,
               "validFrom": window.0, "validUntil": window.1, "priority": 0, "exclusive": false,
               "buy": {"productIds": every(40, 0), "quantity": 2},
               "get": {"productIds": every(40, 0), "quantity": 1, "percentBps": 5000}}),
        json!({"id": "bench-percent", "type": "percent_off", "name": "10 % off", "active": true,
               "validFrom": window.0, "validUntil": window.1, "priority": 0, "exclusive": false,
               "productIds": every(20, 7), "percentBps": 1000}),
    ]
}

pub(super) struct Workload {
    pub(super) shop: Shop,
    pricer: Pricer,
    customers: usize,
    /// [`CARTS_PER_TILL`] drafted carts for each till.
    pub(super) carts: Vec<Vec<Draft>>,
}

impl Workload {
    /// Puts the promotions in force, waits until every node applies them, and drafts
    /// [`CARTS_PER_TILL`] carts for each of `shop`'s tills.
    pub(super) async fn prepare(client: &Client, admin: &str, shop: Shop, plan: &BenchPlan) -> Result<Workload> {
        let mut rules = Vec::new();
        for rule in promotions(&shop) {
            client
                .post("/v1/promotions", admin, &rule)
                .await?
                .expect_ok("promotion")?;
            rules.push(serde_json::from_value::<PromotionRule>(rule).context("a promotion rule")?);
        }
        await_promotions_everywhere(client, admin, &shop).await?;
        let pricer = Pricer {
            store: StoreId::from_trusted(shop.store.clone()),
            catalog: shop
                .articles
                .iter()
                .map(|a| {
                    let vat = VatRate::from_percent(a.vat).context("a VAT rate")?;
                    Ok((a.sku.clone(), (Cents::new(a.price).context("a price")?, vat)))
                })
                .collect::<Result<_>>()?,
            rules: RuleBook::new(rules),
        };
        let mut workload = Workload {
            shop,
            pricer,
            customers: plan.customers.max(1),
            carts: Vec::new(),
        };
        let mut rng = fastrand::Rng::with_seed(plan.seed);
        workload.carts = (0..workload.shop.tills.len())
            .map(|till| {
                (0..CARTS_PER_TILL)
                    .map(|_| workload.draft(&mut rng, till))
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<_>>()?;
        Ok(workload)
    }

    /// A realistic sale: 3 to 10 lines of 1 to 3 units, one in five with a 5 % ticket
    /// discount the cashier may grant, three in ten for a loyalty customer.
    fn draft(&self, rng: &mut fastrand::Rng, till: usize) -> Result<Draft> {
        let shop = &self.shop;
        let count = rng.usize(3..=10);
        let mut picked: Vec<usize> = Vec::with_capacity(count);
        while picked.len() < count {
            let article = rng.usize(0..shop.articles.len());
            if !picked.contains(&article) {
                picked.push(article);
            }
        }
        let lines: Vec<(String, i64)> = picked
            .iter()
            .map(|a| (shop.articles[*a].sku.clone(), rng.i64(1..=3)))
            .collect();
        let declared = if rng.u8(0..5) == 0 {
            vec![DeclaredDiscount {
                id: "d1".into(),
                reason: DiscountReason::Promotional,
                kind: DeclaredKind::TicketPercent {
                    percent: Bps::new(500).context("bps")?,
                },
            }]
        } else {
            Vec::new()
        };
        let total = self.pricer.total(&lines, &declared)?;
        let customer = (rng.u8(0..10) < 3).then(|| format!("cust-{}", rng.usize(0..self.customers)));
        let t: &Till = &shop.tills[till];
        let cart: Vec<Value> = picked
            .iter()
            .zip(&lines)
            .enumerate()
            .map(|(i, (a, (_, quantity)))| {
                let article = &shop.articles[*a];
                json!({"id": format!("l{i}"), "skuId": article.sku, "quantity": quantity,
                       "unitPrice": article.price, "vatRate": article.vat, "free": false})
            })
            .collect();
        let mut body = json!({
            "storeId": shop.store,
            "sellerId": t.cashier,
            "customerId": customer,
            "sessionId": t.session,
            "cart": {"lines": cart, "freeLineSequence": 0},
            "tenders": {"amountDue": total, "sequence": 1, "tenders": [
                {"id": "p1", "method": "card", "applied": total, "presented": total, "change": 0, "forfeited": 0}
            ]}
        });
        if !declared.is_empty() {
            body["declaredDiscounts"] = json!([
                {"id": "d1", "reason": "promotional", "scope": "ticket", "basis": "percent", "percentBps": 500}
            ]);
        }
        Ok(Draft { body, lines: count })
    }

    /// Which of `till`'s carts to send next, picked by `rng`.
    pub(super) fn pick_cart(&self, rng: &mut fastrand::Rng, till: usize) -> usize {
        rng.usize(0..self.carts[till].len())
    }
}
