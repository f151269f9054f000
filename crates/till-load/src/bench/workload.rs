//! What the load generator sends: a shop's carts drafted and priced up front, as the server
//! will price them, and the promotions in force that both sides must agree on. The stored-value
//! mix sends the same carts, some paid partly with a gift card of a pool issued before the run
//! or with the points of customers who earned them at a sale of their own.

use super::{BenchPlan, Mix};
use crate::client::Client;
use crate::shop::{Shop, Till, paid};
use crate::stored_value::{Budget, Spend, gift_card_share, issue_cards, loyalty_share, point_value, points_of};
use anyhow::{Context, Result, bail, ensure};
use futures::StreamExt;
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
    total: i64,
    /// What it spends of stored value; `None` when the card pays it all.
    spend: Option<DraftSpend>,
}

/// The stored value a drafted sale spends, and the same sale paid by card alone, sent instead
/// once the instrument's budget is spent.
struct DraftSpend {
    /// Index into [`Workload::budgets`].
    budget: usize,
    /// Cents of a card, or points.
    amount: i64,
    paid: Paid,
    by_card: Value,
}

/// What a sent sale was paid with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Paid {
    Card,
    /// Partly with a gift card.
    GiftCard,
    /// Partly with points.
    Loyalty,
    /// By card alone, drafted for stored value whose budget was spent.
    FellBack,
}

/// Gift cards issued before a stored-value run, unless the plan says how many.
pub const GIFT_CARDS: usize = 1_000;

/// Each card's balance: a drafted cart keeps its card for the whole run, and a few carts of
/// one card send it half their total dozens of times a second, so the balance is enough for an
/// hour of that; past it, the sender's reckoning keeps each card within it.
const GIFT_CARD_BALANCE_CENTS: i64 = 100_000_000;

/// Customers who spend points, at most: each earns its points at a sale of its own while
/// provisioning.
const LOYALTY_CUSTOMERS: usize = 100;

/// Points each loyalty customer earns before the run, at one point per currency unit.
const POINTS_EACH: i64 = 10_000_000;

/// The article of those sales: one no promotion applies to (see `promotions`).
const POINTS_ARTICLE: usize = 1;

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
    carts: Vec<Vec<Draft>>,
    /// The same carts, some paid partly with stored value; empty unless the plan runs that mix.
    stored_value_carts: Vec<Vec<Draft>>,
    /// The same carts naming no customer, then each naming one; empty unless the plan runs
    /// those mixes.
    anonymous_carts: Vec<Vec<Draft>>,
    named_carts: Vec<Vec<Draft>>,
    /// What each gift card, then each loyalty customer, may still spend.
    budgets: Vec<Budget>,
    pub(super) gift_cards: usize,
    pub(super) loyalty_customers: usize,
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
            stored_value_carts: Vec::new(),
            anonymous_carts: Vec::new(),
            named_carts: Vec::new(),
            budgets: Vec::new(),
            gift_cards: 0,
            loyalty_customers: 0,
        };
        let mut rng = fastrand::Rng::with_seed(plan.seed);
        workload.carts = (0..workload.shop.tills.len())
            .map(|till| {
                (0..CARTS_PER_TILL)
                    .map(|_| workload.draft(&mut rng, till))
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<_>>()?;
        if plan.mixes.runs(Mix::StoredValue) {
            workload.prepare_stored_value(client, admin, plan).await?;
        }
        if plan.mixes.runs(Mix::Named) || plan.mixes.runs(Mix::Anonymous) {
            // The named mix's customer is drawn at each send (`customer_for`), so that a run
            // touches as many of the directory's rows as a shop's day would, not a few carts'.
            // The finalize body requires the field: null names no one, and the named mix's
            // drafts leave it out for the one added at the send.
            let with_field = |draft: &Draft, null: bool| {
                let mut body = draft.body.clone();
                if let Some(fields) = body.as_object_mut() {
                    match null {
                        true => fields.insert("customerId".to_owned(), Value::Null),
                        false => fields.remove("customerId"),
                    };
                }
                Draft {
                    body,
                    lines: draft.lines,
                    total: draft.total,
                    spend: None,
                }
            };
            workload.anonymous_carts = workload
                .carts
                .iter()
                .map(|carts| carts.iter().map(|draft| with_field(draft, true)).collect())
                .collect();
            workload.named_carts = workload
                .carts
                .iter()
                .map(|carts| carts.iter().map(|draft| with_field(draft, false)).collect())
                .collect();
        }
        Ok(workload)
    }

    /// Issues the pool of gift cards, gives the loyalty customers their points, and drafts the
    /// stored-value mix: the same carts, a fifth paid half with a card of the pool, a tenth
    /// paid about a tenth with points.
    async fn prepare_stored_value(&mut self, client: &Client, admin: &str, plan: &BenchPlan) -> Result<()> {
        let point_value = point_value(&plan.env)?;
        let codes = issue_cards(client, admin, plan.gift_cards.max(1), GIFT_CARD_BALANCE_CENTS).await?;
        let customers: Vec<String> = (0..self.customers.min(LOYALTY_CUSTOMERS)).map(customer_name).collect();
        let points = self.earn_points(client, admin, &customers).await?;
        self.budgets = codes
            .iter()
            .map(|_| Budget::new(GIFT_CARD_BALANCE_CENTS))
            .chain(points.into_iter().map(Budget::new))
            .collect();
        self.gift_cards = codes.len();
        self.loyalty_customers = customers.len();
        let mut rng = fastrand::Rng::with_seed(plan.seed.wrapping_add(1));
        let mut stored_value_carts = Vec::with_capacity(self.carts.len());
        for carts in &self.carts {
            let drafts = carts
                .iter()
                .map(|draft| {
                    let spend = match rng.u8(0..10) {
                        0 | 1 => {
                            let card = rng.usize(0..codes.len());
                            gift_card_share(draft.total).map(|applied| {
                                let spend = Spend::GiftCard {
                                    code: codes[card].clone(),
                                    applied,
                                };
                                (spend, card, applied, Paid::GiftCard, None)
                            })
                        }
                        2 => {
                            let customer = rng.usize(0..customers.len());
                            loyalty_share(draft.total, point_value).map(|applied| {
                                let points = applied / point_value;
                                let who = Some(&customers[customer]);
                                (
                                    Spend::Loyalty { applied },
                                    codes.len() + customer,
                                    points,
                                    Paid::Loyalty,
                                    who,
                                )
                            })
                        }
                        _ => None,
                    };
                    let mut body = draft.body.clone();
                    let spend = spend.map(|(spend, budget, amount, kind, customer)| {
                        body["tenders"] = paid(draft.total, Some(&spend));
                        if let Some(customer) = customer {
                            body["customerId"] = json!(customer);
                        }
                        DraftSpend {
                            budget,
                            amount,
                            paid: kind,
                            by_card: draft.body.clone(),
                        }
                    });
                    Draft {
                        body,
                        lines: draft.lines,
                        total: draft.total,
                        spend,
                    }
                })
                .collect();
            stored_value_carts.push(drafts);
        }
        self.stored_value_carts = stored_value_carts;
        Ok(())
    }

    /// One sale per customer, large enough to earn [`POINTS_EACH`] points at the default rate,
    /// each on a till in turn; answers each customer's points as the server then counts them.
    async fn earn_points(&self, client: &Client, admin: &str, customers: &[String]) -> Result<Vec<i64>> {
        let shop = &self.shop;
        let article = shop
            .articles
            .get(POINTS_ARTICLE)
            .context("a catalog of at least 2 articles")?;
        let quantity = POINTS_EACH * 100 / article.price;
        let lines = [(POINTS_ARTICLE, quantity)];
        let priced = self.pricer.total(&[(article.sku.clone(), quantity)], &[])?;
        if priced != shop.total(&lines) {
            bail!("the article chosen to earn points is under a promotion");
        }
        futures::stream::iter(customers.iter().enumerate().map(|(n, customer)| async move {
            let till = &shop.tills[n % shop.tills.len()];
            let sale = shop.sale_paying(till, &format!("points-{n}"), &lines, Some(customer), None);
            client
                .post("/v1/checkout/finalize", &till.token, &sale)
                .await?
                .expect(201, "a sale earning points")?;
            points_of(client, admin, customer).await
        }))
        .buffered(16)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect()
    }

    /// The drafted carts of `mix`, per till.
    pub(super) fn carts(&self, mix: Mix) -> &[Vec<Draft>] {
        match mix {
            Mix::Plain | Mix::CardAttempts => &self.carts,
            Mix::StoredValue => &self.stored_value_carts,
            Mix::Anonymous => &self.anonymous_carts,
            Mix::Named => &self.named_carts,
        }
    }

    /// The body to send for `draft`, and what pays it: the stored value it drafts if its
    /// instrument's budget still holds its share (taken from it now), else the card alone.
    pub(super) fn body_of<'a>(&self, draft: &'a Draft) -> (&'a Value, Paid) {
        match &draft.spend {
            None => (&draft.body, Paid::Card),
            Some(spend) if self.budgets[spend.budget].take(spend.amount) => (&draft.body, spend.paid),
            Some(spend) => (&spend.by_card, Paid::FellBack),
        }
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
        let customer = (rng.u8(0..10) < 3).then(|| customer_name(rng.usize(0..self.customers)));
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
        Ok(Draft {
            body,
            lines: count,
            total,
            spend: None,
        })
    }

    /// The customer a sale of `mix` names besides its drafted body: one of the directory's,
    /// drawn by `rng`, for the named mix; none for the others.
    pub(super) fn customer_for(&self, mix: Mix, rng: &mut fastrand::Rng) -> Option<String> {
        (mix == Mix::Named).then(|| customer_name(rng.usize(0..self.customers)))
    }

    /// Which of `till`'s carts to send next, picked by `rng`.
    pub(super) fn pick_cart(&self, rng: &mut fastrand::Rng, till: usize) -> usize {
        rng.usize(0..self.carts[till].len())
    }
}

/// The id of the benchmark's customer `n` (`till-load customers` writes their profiles).
pub fn customer_name(n: usize) -> String {
    format!("cust-{n}")
}
