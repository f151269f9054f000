//! The load generator: a shop of thousands of articles, tills with open sessions, promotions
//! in force, then finalizeSale as fast as a closed loop of clients can go, or at a fixed
//! open-loop rate. Latency goes into an HDR histogram; in open-loop mode it is measured from
//! the instant each sale was due, not from when it was sent, so a server that falls behind is
//! charged for the wait it causes (no coordinated omission). Every call must succeed.
//!
//! The same run measures a baseline on the same engine and disk: the raw durable commit rate
//! (SQLite: one single-row insert per durable transaction; PostgreSQL: pgbench's TPC-B-like
//! script at the same client count), so each figure is a ratio that holds on any machine. It
//! is measured before the run and again after it, and the ratio is taken against the mean of
//! the two: a shared machine's disk can halve its commit rate from one minute to the next, and
//! the spread between the two says how far one run's ratio can be trusted.

use super::client::Client;
use super::cluster::{Cluster, NodeConfig};
use super::shop::{Shop, ShopSpec, Till, admin_token, provision};
use super::wire::Wire;
use anyhow::{Context, Result, bail, ensure};
use hdrhistogram::Histogram;
use serde_json::{Value, json};
use sqlx::{Connection, Executor};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use till_core::ids::{SkuId, StoreId};
use till_core::money::{Bps, Cents, VatRate};
use till_core::pricing::{LineToPrice, PricingInput, price};
use till_core::promotions::{PromoLine, PromotionRule, RuleBook, apply_promotions};
use till_core::sale::{DeclaredDiscount, DeclaredKind, DiscountReason};

#[derive(Clone, Copy, Debug)]
pub enum Pace {
    /// This many clients, each sending its next sale when the last one is answered.
    Closed { clients: usize },
    /// Sales due at this many per second, sent when due whatever the server's state.
    Open { rate: u64 },
}

#[derive(Clone, Debug)]
pub struct BenchPlan {
    pub binary: PathBuf,
    pub database_url: String,
    pub nodes: usize,
    pub pace: Pace,
    pub duration: Duration,
    pub warmup: Duration,
    pub articles: usize,
    pub tills: usize,
    pub customers: usize,
    pub work_dir: PathBuf,
    pub seed: u64,
    /// Measure the engine's raw durable commit rate too.
    pub baseline: bool,
    /// Further `TILL_*` settings for the nodes.
    pub env: Vec<(String, String)>,
}

/// Latency percentiles in microseconds.
#[derive(Clone, Debug, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Latency {
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Baseline {
    /// What was measured.
    pub method: String,
    /// The mean of the two measurements.
    pub per_second: f64,
    pub before: f64,
    pub after: f64,
}

/// CPU time (user and system) per acknowledged sale, in microseconds: where the machine's CPU
/// goes, node against load generator. It moves with the throughput too (a faster run batches
/// more and switches threads less), so two close builds are still compared by alternating runs.
#[derive(Clone, Debug, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CpuPerSale {
    /// The till nodes together (a database server's own processes are not counted).
    pub nodes: f64,
    /// This load generator, which shares the machine with them.
    pub load_generator: f64,
}

/// One measurement of the baseline.
struct Rate {
    method: String,
    per_second: f64,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BenchReport {
    pub engine: String,
    pub pace: String,
    pub sales: u64,
    pub failures: u64,
    pub seconds: f64,
    pub per_second: f64,
    pub latency_us: Latency,
    /// Lines per sale, on average.
    pub lines_per_sale: f64,
    pub baseline: Option<Baseline>,
    /// Sales per second over the baseline's commits per second.
    pub ratio: Option<f64>,
    /// Each node's peak resident memory over the whole run, provisioning included, in KiB.
    pub peak_rss_kib: Vec<u64>,
    /// Each node's peak resident memory from the first measured sale on (warm-up included), in
    /// KiB; `None` where the peak could not be reset after provisioning.
    pub peak_rss_under_load_kib: Vec<Option<u64>>,
    /// CPU time per acknowledged sale over the whole run, warm-up included.
    pub cpu_us_per_sale: CpuPerSale,
    /// The first failures, as answered.
    pub failure_samples: Vec<String>,
}

/// A cart drafted and priced before the run, ready to send once its transaction id is in.
struct Draft {
    /// The request body but its transaction id and ticket number.
    body: Value,
    lines: usize,
}

/// A drafted body with its transaction id, which is also the ticket number.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Finalize<'a> {
    transaction_id: &'a str,
    number: &'a str,
    #[serde(flatten)]
    draft: &'a Value,
}

/// Carts drafted per till. Drafting one (picking articles, pricing it as the server will,
/// writing its JSON) cost the load generator about as much CPU as the server spent on the
/// sale, on the cores the server was measured on; drafting them up front leaves that CPU to
/// the server. 256 per till is far more variety than the server could notice.
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

pub async fn run(plan: &BenchPlan) -> Result<BenchReport> {
    std::fs::create_dir_all(&plan.work_dir)?;
    let before = if plan.baseline {
        Some(baseline(plan).await?)
    } else {
        None
    };
    let key_file = plan.work_dir.join("fiscal-key.pem");
    crate::fiscal::new_key(&key_file)?;
    let secret = format!("bench-secret-{}", plan.seed);
    let mut env = vec![("TILL_SQLITE_SYNCHRONOUS".to_owned(), "full".to_owned())];
    env.extend(plan.env.iter().cloned());
    let config = NodeConfig {
        binary: plan.binary.clone(),
        database_url: plan.database_url.clone(),
        jwt_secret: secret.clone(),
        fiscal_key_file: key_file,
        env,
        work_dir: plan.work_dir.clone(),
    };
    if engine_of(&plan.database_url) == "postgres" {
        create_postgres_database(&plan.database_url).await?;
    }
    let mut cluster = Cluster::start(config, plan.nodes).await?;
    let client = Client::new(cluster.urls())?;
    let admin = admin_token(&secret);
    let spec = ShopSpec {
        store: "bench-store".into(),
        articles: plan.articles,
        stock: None,
        registers: plan.tills,
        cashier_discount_bps: Some(1_000),
    };
    let shop = provision(&client, &admin, &spec).await?;
    let mut rules = Vec::new();
    for rule in promotions(&shop) {
        client
            .post("/v1/promotions", &admin, &rule)
            .await?
            .expect_ok("promotion")?;
        rules.push(serde_json::from_value::<PromotionRule>(rule).context("a promotion rule")?);
    }
    await_promotions_everywhere(&client, &admin, &shop).await?;
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
    let workload = Arc::new(workload);

    let pids: Vec<u32> = cluster.nodes.iter().filter_map(|n| n.pid()).collect();
    let wire = Arc::new(Wire::new(&cluster.urls())?);
    // Provisioning sets a peak of its own: every cashier's PIN is hashed and checked with
    // argon2 (19 MiB each, a few at once). The peak under load is measured from here on.
    let provisioning_peak: Vec<Option<u64>> = pids.iter().map(|pid| peak_rss(*pid)).collect();
    let reset: Vec<bool> = pids.iter().map(|pid| reset_peak_rss(*pid)).collect();
    let cpu_before = (cpu_us(&pids), cpu_us(&[std::process::id()]));
    let outcome = match plan.pace {
        Pace::Closed { clients } => closed_loop(&wire, &workload, clients, plan).await?,
        Pace::Open { rate } => open_loop(&wire, &workload, rate, plan).await?,
    };
    let per_sale = |before: u64, after: u64| after.saturating_sub(before) as f64 / outcome.all_sales.max(1) as f64;
    let cpu_us_per_sale = CpuPerSale {
        nodes: per_sale(cpu_before.0, cpu_us(&pids)),
        load_generator: per_sale(cpu_before.1, cpu_us(&[std::process::id()])),
    };
    let under_load: Vec<Option<u64>> = pids.iter().map(|pid| peak_rss(*pid)).collect();
    let peak_rss_kib = provisioning_peak
        .iter()
        .zip(&under_load)
        .map(|(before, after)| before.max(after).unwrap_or(0))
        .collect();
    let peak_rss_under_load_kib = under_load
        .iter()
        .zip(&reset)
        .map(|(peak, reset)| peak.filter(|_| *reset))
        .collect();
    // The run is checked, not only timed: the tills' chains must verify.
    for till in &workload.shop.tills {
        let path = format!("/v1/fiscal/registers/{}/verify", till.register);
        let verdict = client.get(&path, &admin).await?.expect(200, "verify")?.json();
        ensure!(
            verdict["ok"] == true,
            "register {} fails verification: {verdict}",
            till.register
        );
    }
    cluster.kill_all().await?;

    let baseline = match before {
        Some(before) => {
            let after = baseline(plan).await?;
            Some(Baseline {
                method: before.method,
                per_second: (before.per_second + after.per_second) / 2.0,
                before: before.per_second,
                after: after.per_second,
            })
        }
        None => None,
    };
    let histogram = outcome.histogram;
    let seconds = outcome.elapsed.as_secs_f64();
    let per_second = outcome.sales as f64 / seconds;
    Ok(BenchReport {
        engine: engine_of(&plan.database_url).to_owned(),
        pace: match plan.pace {
            Pace::Closed { clients } => format!("closed loop, {clients} clients"),
            Pace::Open { rate } => format!("open loop, {rate}/s"),
        },
        sales: outcome.sales,
        failures: outcome.failures,
        seconds,
        per_second,
        latency_us: Latency {
            p50: histogram.value_at_quantile(0.50),
            p90: histogram.value_at_quantile(0.90),
            p99: histogram.value_at_quantile(0.99),
            p999: histogram.value_at_quantile(0.999),
            max: histogram.max(),
        },
        lines_per_sale: outcome.lines as f64 / outcome.sales.max(1) as f64,
        ratio: baseline.as_ref().map(|b| per_second / b.per_second),
        baseline,
        peak_rss_kib,
        peak_rss_under_load_kib,
        cpu_us_per_sale,
        failure_samples: outcome.samples,
    })
}

fn engine_of(url: &str) -> &'static str {
    if url.starts_with("sqlite:") {
        "sqlite"
    } else {
        "postgres"
    }
}

struct Workload {
    shop: Shop,
    pricer: Pricer,
    customers: usize,
    /// [`CARTS_PER_TILL`] drafted carts for each till.
    carts: Vec<Vec<Draft>>,
}

impl Workload {
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
    fn pick_cart(&self, rng: &mut fastrand::Rng, till: usize) -> usize {
        rng.usize(0..self.carts[till].len())
    }
}

/// What the measured window saw.
struct Outcome {
    sales: u64,
    /// Acknowledged sales, warm-up included.
    all_sales: u64,
    failures: u64,
    lines: u64,
    elapsed: Duration,
    histogram: Histogram<u64>,
    samples: Vec<String>,
}

#[derive(Default)]
struct Tally {
    sales: u64,
    warm_up_sales: u64,
    failures: u64,
    lines: u64,
    samples: Vec<String>,
}

impl Tally {
    fn record(&mut self, ok: Result<(), String>, lines: usize) {
        match ok {
            Ok(()) => {
                self.sales += 1;
                self.lines += lines as u64;
            }
            Err(sample) => {
                self.failures += 1;
                if self.samples.len() < 5 {
                    self.samples.push(sample);
                }
            }
        }
    }

    /// A sale sent before the measured window: only counted, or reported when it failed.
    fn record_warm_up(&mut self, ok: Result<(), String>) {
        match ok {
            Ok(()) => self.warm_up_sales += 1,
            Err(sample) => self.record(Err(sample), 0),
        }
    }
}

fn histogram() -> Result<Histogram<u64>> {
    // 1 µs to 10 minutes, three significant digits.
    Histogram::new_with_bounds(1, 600_000_000, 3).context("histogram")
}

async fn send(
    wire: &Wire,
    workload: &Workload,
    till: usize,
    draft: &Draft,
    transaction_id: &str,
) -> Result<(), String> {
    let token = &workload.shop.tills[till].token;
    let body = Finalize {
        transaction_id,
        number: transaction_id,
        draft: &draft.body,
    };
    let body = serde_json::to_string(&body).map_err(|error| error.to_string())?;
    match wire.post_json("/v1/checkout/finalize", token, body).await {
        Ok(answer) if answer.status == 201 => Ok(()),
        Ok(answer) => Err(format!("{} {}", answer.status, String::from_utf8_lossy(&answer.body))),
        Err(error) => Err(format!("{error:#}")),
    }
}

async fn closed_loop(wire: &Arc<Wire>, workload: &Arc<Workload>, clients: usize, plan: &BenchPlan) -> Result<Outcome> {
    let start = Instant::now();
    let measure_from = start + plan.warmup;
    let until = measure_from + plan.duration;
    let tasks: Vec<_> = (0..clients.max(1))
        .map(|c| {
            let (wire, workload) = (wire.clone(), workload.clone());
            let seed = plan.seed.wrapping_mul(1_000).wrapping_add(c as u64);
            tokio::spawn(async move {
                let mut rng = fastrand::Rng::with_seed(seed);
                let mut histogram = histogram()?;
                let mut tally = Tally::default();
                let till = c % workload.shop.tills.len();
                let mut n = 0u64;
                loop {
                    n += 1;
                    let draft = &workload.carts[till][workload.pick_cart(&mut rng, till)];
                    let transaction_id = format!("c{c}-{n}");
                    let sent = Instant::now();
                    if sent >= until {
                        break;
                    }
                    let ok = send(&wire, &workload, till, draft, &transaction_id).await;
                    if sent >= measure_from {
                        histogram.saturating_record(sent.elapsed().as_micros() as u64);
                        tally.record(ok, draft.lines);
                    } else {
                        tally.record_warm_up(ok);
                    }
                }
                anyhow::Ok((histogram, tally))
            })
        })
        .collect();
    let mut total = histogram()?;
    let mut tally = Tally::default();
    for task in tasks {
        let (h, t) = task.await??;
        total.add(&h).context("merging histograms")?;
        tally.sales += t.sales;
        tally.failures += t.failures;
        tally.lines += t.lines;
        tally.warm_up_sales += t.warm_up_sales;
        tally.samples.extend(t.samples);
    }
    Ok(Outcome {
        sales: tally.sales,
        all_sales: tally.sales + tally.warm_up_sales,
        failures: tally.failures,
        lines: tally.lines,
        elapsed: plan.duration,
        histogram: total,
        samples: tally.samples,
    })
}

async fn open_loop(wire: &Arc<Wire>, workload: &Arc<Workload>, rate: u64, plan: &BenchPlan) -> Result<Outcome> {
    ensure!(rate > 0, "the rate must be positive");
    let interval = Duration::from_secs_f64(1.0 / rate as f64);
    let shared = Arc::new(Mutex::new((histogram()?, Tally::default())));
    let start = tokio::time::Instant::now() + Duration::from_millis(50);
    let measure_from = start + plan.warmup;
    let until = measure_from + plan.duration;
    let mut rng = fastrand::Rng::with_seed(plan.seed);
    let mut in_flight = tokio::task::JoinSet::new();
    let mut n: u64 = 0;
    loop {
        let due = start + interval.mul_f64(n as f64);
        if due >= until {
            break;
        }
        let till = (n as usize) % workload.shop.tills.len();
        n += 1;
        let cart = workload.pick_cart(&mut rng, till);
        let transaction_id = format!("o-{n}");
        tokio::time::sleep_until(due).await;
        let (wire, workload, shared) = (wire.clone(), workload.clone(), shared.clone());
        in_flight.spawn(async move {
            let draft = &workload.carts[till][cart];
            let ok = send(&wire, &workload, till, draft, &transaction_id).await;
            // From when the sale was due: waiting for a slow server counts.
            let latency = due.elapsed().as_micros() as u64;
            let mut guard = shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if due >= measure_from {
                guard.0.saturating_record(latency);
                guard.1.record(ok, draft.lines);
            } else {
                guard.1.record_warm_up(ok);
            }
        });
        while in_flight.try_join_next().is_some() {}
    }
    while in_flight.join_next().await.is_some() {}
    let (histogram, tally) = Arc::try_unwrap(shared)
        .map_err(|_| anyhow::anyhow!("requests still running"))?
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    Ok(Outcome {
        sales: tally.sales,
        all_sales: tally.sales + tally.warm_up_sales,
        failures: tally.failures,
        lines: tally.lines,
        elapsed: plan.duration,
        histogram,
        samples: tally.samples,
    })
}

/// User and system CPU time the processes have used, in microseconds, from `/proc` (Linux;
/// 0 elsewhere).
fn cpu_us(pids: &[u32]) -> u64 {
    // SAFETY: sysconf only reads a configuration value.
    let ticks_per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap_or(0);
    let ticks: u64 = pids
        .iter()
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // Fields after the command name, which may hold spaces, closed by the last ')'.
            let fields: Vec<&str> = stat.get(stat.rfind(')')? + 2..)?.split_whitespace().collect();
            Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
        })
        .sum();
    (ticks * 1_000_000).checked_div(ticks_per_second).unwrap_or(0)
}

/// Starts a process's peak resident set over from its current size (Linux 4.0 and later,
/// `/proc/PID/clear_refs`); false where that is refused or unknown.
fn reset_peak_rss(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

/// Peak resident set of a process, from `/proc` (Linux).
fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

async fn baseline(plan: &BenchPlan) -> Result<Rate> {
    let seconds = plan.duration.as_secs().clamp(3, 30);
    match engine_of(&plan.database_url) {
        "sqlite" => sqlite_commit_rate(plan, Duration::from_secs(seconds)).await,
        _ => {
            let clients = match plan.pace {
                Pace::Closed { clients } => clients,
                Pace::Open { .. } => 16,
            };
            pgbench(&plan.database_url, clients, seconds).await
        }
    }
}

/// One single-row insert per durable transaction (WAL, synchronous=FULL), on the disk that
/// holds the benchmark's database: how many times a second this disk makes a commit durable.
/// Through SQLite's own library on a blocking thread of its own, as till's writer does, so that
/// no driver's overhead lowers the rate the sales are held against.
async fn sqlite_commit_rate(plan: &BenchPlan, window: Duration) -> Result<Rate> {
    let file = plan.work_dir.join("baseline.db");
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(file.with_extension("db-wal"));
    let _ = std::fs::remove_file(file.with_extension("db-shm"));
    let per_second = tokio::task::spawn_blocking(move || -> Result<f64> {
        let conn = rusqlite::Connection::open(&file)?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
             CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)",
        )?;
        let mut insert = conn.prepare("INSERT INTO t (v) VALUES (?1)")?;
        let started = Instant::now();
        let mut commits = 0i64;
        while started.elapsed() < window {
            insert.execute([commits])?;
            commits += 1;
        }
        Ok(commits as f64 / started.elapsed().as_secs_f64())
    })
    .await??;
    Ok(Rate {
        method: "SQLite, WAL, synchronous=FULL: one single-row INSERT per transaction, one connection".into(),
        per_second,
    })
}

/// pgbench's built-in TPC-B-like script on a database of its own in the same cluster, at
/// `clients` clients, scale factor = clients (so its rows are not one hot spot).
async fn pgbench(database_url: &str, clients: usize, seconds: u64) -> Result<Rate> {
    let binary = find_pgbench().context("pgbench not found (install postgresql-client or its server binaries)")?;
    sqlx::any::install_default_drivers();
    let database = format!("till_pgbench_{}", std::process::id());
    let (base, _) = split_database(database_url)?;
    let mut admin = sqlx::AnyConnection::connect(&format!("{base}/postgres")).await?;
    admin
        .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {database}")))
        .await?;
    let url = format!("{base}/{database}");
    let init = tokio::process::Command::new(&binary)
        .args(["-i", "-q", "-s", &clients.to_string(), &url])
        .output()
        .await?;
    ensure!(
        init.status.success(),
        "pgbench -i: {}",
        String::from_utf8_lossy(&init.stderr)
    );
    let run = tokio::process::Command::new(&binary)
        .args([
            "-n",
            "-c",
            &clients.to_string(),
            "-j",
            &clients.min(4).to_string(),
            "-T",
            &seconds.to_string(),
            &url,
        ])
        .output()
        .await?;
    let out = String::from_utf8_lossy(&run.stdout).to_string();
    ensure!(
        run.status.success(),
        "pgbench: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let tps = out
        .lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l.trim_start_matches("tps = ").split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok())
        .with_context(|| format!("no tps in pgbench's output: {out}"))?;
    let _ = admin
        .execute(sqlx::AssertSqlSafe(format!("DROP DATABASE {database}")))
        .await;
    admin.close().await?;
    Ok(Rate {
        method: format!("pgbench TPC-B-like, {clients} clients, scale {clients}, same cluster"),
        per_second: tps,
    })
}

/// The cluster's URL and the database named at the end of `url`.
fn split_database(url: &str) -> Result<(&str, &str)> {
    let (base, database) = url.rsplit_once('/').context("a database URL ending in /DATABASE")?;
    let database = database.split('?').next().unwrap_or_default();
    ensure!(
        !database.is_empty() && database.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
        "the database name must be letters, digits and underscores"
    );
    Ok((base, database))
}

/// The benchmark runs on a database of its own: created when absent, through the cluster's
/// `postgres` database.
async fn create_postgres_database(url: &str) -> Result<()> {
    sqlx::any::install_default_drivers();
    let (base, database) = split_database(url)?;
    let mut admin = sqlx::AnyConnection::connect(&format!("{base}/postgres")).await?;
    let exists = sqlx::query("SELECT 1 FROM pg_database WHERE datname = $1")
        .bind(database)
        .fetch_optional(&mut admin)
        .await?
        .is_some();
    if !exists {
        admin
            .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {database}")))
            .await?;
    }
    admin.close().await?;
    Ok(())
}

fn find_pgbench() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("pgbench"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("bin/pgbench"))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        found.pop()
    })
}

/// Fails when a run had failures: a load test that hides errors measures nothing.
pub fn check(report: &BenchReport) -> Result<()> {
    if report.failures > 0 {
        bail!(
            "{} of {} sales failed; first: {:?}",
            report.failures,
            report.sales + report.failures,
            report.failure_samples
        );
    }
    if report.sales == 0 {
        bail!("no sale was committed");
    }
    Ok(())
}
