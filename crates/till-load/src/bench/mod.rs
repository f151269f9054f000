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
//!
//! The stored-value mix sends the same carts with a fifth paid partly with a gift card and a
//! tenth partly with points (docs/stored-value.md). Measured with the plain mix on the same
//! nodes and database, in windows ordered plain, stored value, stored value, plain (each half
//! the duration), neither mix gains from coming later, when caches are warm, or loses from a
//! database grown by the other: the two throughputs compare within one run. On PostgreSQL each
//! window starts from a checkpoint, so that the one the WAL's growth would start does not fall
//! on the middle windows alone.

pub(crate) mod baseline;
mod drive;
mod proc;
mod workload;

use super::client::Client;
use super::cluster::{Cluster, NodeConfig};
use super::shop::{ShopSpec, admin_token, provision};
use super::wire::Wire;
use anyhow::{Result, bail, ensure};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use workload::Workload;
pub use workload::{GIFT_CARDS, customer_name};

/// What the sales of one measured window are paid with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mix {
    /// By card, as before stored value existed.
    Plain,
    /// The same carts, a fifth paid half with a gift card, a tenth about a tenth with points.
    StoredValue,
    /// The same carts, none naming a customer.
    Anonymous,
    /// The same carts, each naming a customer of the directory.
    Named,
    /// The same carts paid by card through the payment-attempt ledger: the attempt asked
    /// for, its approval recorded, then the sale capturing it (three requests a sale).
    CardAttempts,
}

impl Mix {
    pub fn name(self) -> &'static str {
        match self {
            Mix::Plain => "plain",
            Mix::StoredValue => "stored-value",
            Mix::Anonymous => "anonymous",
            Mix::Named => "named",
            Mix::CardAttempts => "card-attempts",
        }
    }

    /// Starts its transaction ids, so that mixes run one after the other never reuse one.
    fn ids(self) -> &'static str {
        match self {
            Mix::Plain => "",
            Mix::StoredValue => "sv-",
            Mix::Anonymous => "anon-",
            Mix::Named => "named-",
            Mix::CardAttempts => "att-",
        }
    }
}

/// The mixes a run measures, one after the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mixes {
    Plain,
    StoredValue,
    /// Both on the same nodes and database, in windows of half the duration: plain, stored
    /// value, stored value, plain.
    Both,
    /// The carts with no customer against the same each naming one of `--customers`, as
    /// `Both` orders its windows: anonymous, named, named, anonymous.
    Customers,
    /// The plain mix against the same carts paid through card payment attempts: plain,
    /// attempts, attempts, plain.
    Cards,
}

impl Mixes {
    /// The measured windows, in order.
    pub fn order(self) -> &'static [Mix] {
        match self {
            Mixes::Plain => &[Mix::Plain],
            Mixes::StoredValue => &[Mix::StoredValue],
            Mixes::Both => &[Mix::Plain, Mix::StoredValue, Mix::StoredValue, Mix::Plain],
            Mixes::Customers => &[Mix::Anonymous, Mix::Named, Mix::Named, Mix::Anonymous],
            Mixes::Cards => &[Mix::Plain, Mix::CardAttempts, Mix::CardAttempts, Mix::Plain],
        }
    }

    fn runs(self, mix: Mix) -> bool {
        self.order().contains(&mix)
    }
}

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
    pub mixes: Mixes,
    /// Gift cards in the stored-value mix's pool.
    pub gift_cards: usize,
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

/// What paid a window's sales besides the card.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MixReport {
    /// `plain` or `stored-value`.
    pub name: String,
    /// Measured sales paid partly with a gift card.
    pub gift_card_sales: u64,
    /// Measured sales paid partly with points.
    pub loyalty_sales: u64,
    /// Measured sales drafted with stored value but sent paid by card, its budget spent.
    pub fell_back_to_card: u64,
    /// Cards in the pool, and customers with points, the sales drew on.
    pub gift_cards: usize,
    pub loyalty_customers: usize,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BenchReport {
    pub engine: String,
    pub pace: String,
    pub mix: MixReport,
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

/// Provisions, then measures each of the plan's mixes in turn: one report per mix.
pub async fn run(plan: &BenchPlan) -> Result<Vec<BenchReport>> {
    std::fs::create_dir_all(&plan.work_dir)?;
    let before = if plan.baseline {
        Some(baseline::measure(plan).await?)
    } else {
        None
    };
    let key_file = plan.work_dir.join("fiscal-key.pem");
    till::fiscal::new_key(&key_file)?;
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
        baseline::create_postgres_database(&plan.database_url).await?;
    }
    let mut cluster = Cluster::start(config, plan.nodes).await?;
    let client = Client::new(cluster.urls())?;
    let admin = admin_token(&secret);
    let shop = provision(&client, &admin, &ShopSpec::bench(plan.articles, plan.tills)).await?;
    let workload = Arc::new(Workload::prepare(&client, &admin, shop, plan).await?);

    let pids: Vec<u32> = cluster.nodes.iter().filter_map(|n| n.pid()).collect();
    let wire = Arc::new(Wire::new(&cluster.urls())?);
    // Provisioning sets a peak of its own: every cashier's PIN is hashed and checked with
    // argon2 (a large block each, a few at once). The peak under load is measured from here on.
    let provisioning_peak: Vec<Option<u64>> = pids.iter().map(|pid| proc::peak_rss(*pid)).collect();
    let order = plan.mixes.order();
    // Each mix is measured for the plan's duration in all, over its windows.
    let per_mix = order.iter().filter(|mix| **mix == order[0]).count() as u32;
    let window_plan = BenchPlan {
        duration: plan.duration / per_mix,
        ..plan.clone()
    };
    let mut windows: Vec<Window> = Vec::new();
    for (n, &mix) in order.iter().enumerate() {
        // Transaction ids of their own in each window: a window's sends never replay another's.
        let ids = match n {
            0 => mix.ids().to_owned(),
            n => format!("{}w{n}-", mix.ids()),
        };
        if order.len() > 1 && engine_of(&plan.database_url) == "postgres" {
            baseline::checkpoint(&plan.database_url).await?;
        }
        let window = measure(&pids, &wire, &workload, mix, &ids, &window_plan).await?;
        match windows.iter().position(|w| w.mix == mix) {
            Some(earlier) => {
                let merged = windows.remove(earlier).merge(window)?;
                windows.insert(earlier, merged);
            }
            None => windows.push(window),
        }
    }
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
            let after = baseline::measure(plan).await?;
            Some(Baseline {
                method: before.method,
                per_second: (before.per_second + after.per_second) / 2.0,
                before: before.per_second,
                after: after.per_second,
            })
        }
        None => None,
    };
    Ok(windows
        .into_iter()
        .map(|window| window.report(plan, &workload, &provisioning_peak, baseline.clone()))
        .collect())
}

/// The same benchmark on an empty database and on a copy of a prefilled one.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgainstPrefilled {
    /// Sales the prefilled database held before the run.
    pub stored_before: u64,
    pub empty: Vec<BenchReport>,
    pub prefilled: Vec<BenchReport>,
    /// The prefilled run's throughput over the empty one's (their first mixes).
    pub prefilled_over_empty: f64,
}

/// Runs `plan` on its (new, empty) database and on a copy of `prefilled` beside it, one after
/// the other: which goes first alternates with the seed, so that a series of runs gives
/// neither the warmer machine. The copy is removed afterwards.
pub async fn against_prefilled(plan: &BenchPlan, prefilled: &str) -> Result<AgainstPrefilled> {
    let copy = sibling(&plan.database_url, "prefilled")?;
    baseline::copy_database(prefilled, &copy).await?;
    // The copy leaves gigabytes to write back; whichever run came first would pay for it.
    baseline::settle(&copy).await?;
    let stored_before = baseline::count_sales(&copy).await?;
    let on_empty = BenchPlan {
        work_dir: plan.work_dir.join("empty"),
        ..plan.clone()
    };
    let on_copy = BenchPlan {
        database_url: copy.clone(),
        work_dir: plan.work_dir.join("prefilled"),
        ..plan.clone()
    };
    let (empty, prefilled) = if plan.seed % 2 == 1 {
        let empty = run(&on_empty).await?;
        (empty, run(&on_copy).await?)
    } else {
        let prefilled = run(&on_copy).await?;
        (run(&on_empty).await?, prefilled)
    };
    baseline::remove_copy(&copy).await?;
    let throughput = |reports: &[BenchReport]| reports.first().map_or(0.0, |r| r.per_second);
    Ok(AgainstPrefilled {
        stored_before,
        prefilled_over_empty: throughput(&prefilled) / throughput(&empty).max(f64::MIN_POSITIVE),
        empty,
        prefilled,
    })
}

/// `url` with `-{name}` added to its file's stem (SQLite) or `_{name}` to its database name.
pub fn sibling(url: &str, name: &str) -> Result<String> {
    let (path, query) = url.split_once('?').map_or((url, None), |(p, q)| (p, Some(q)));
    let renamed = match (engine_of(url), path.strip_suffix(".db")) {
        ("sqlite", Some(stem)) => format!("{stem}-{name}.db"),
        ("sqlite", None) => format!("{path}-{name}"),
        _ => format!("{path}_{name}"),
    };
    Ok(match query {
        Some(query) => format!("{renamed}?{query}"),
        None => renamed,
    })
}

/// One mix's measured window: its outcome and what the nodes and this process spent on it.
struct Window {
    mix: Mix,
    outcome: drive::Outcome,
    cpu_us_per_sale: CpuPerSale,
    under_load: Vec<Option<u64>>,
    reset: Vec<bool>,
}

async fn measure(
    pids: &[u32],
    wire: &Arc<Wire>,
    workload: &Arc<Workload>,
    mix: Mix,
    ids: &str,
    plan: &BenchPlan,
) -> Result<Window> {
    let reset: Vec<bool> = pids.iter().map(|pid| proc::reset_peak_rss(*pid)).collect();
    let cpu_before = (proc::cpu_us(pids), proc::cpu_us(&[std::process::id()]));
    let outcome = match plan.pace {
        Pace::Closed { clients } => drive::closed_loop(wire, workload, mix, ids, clients, plan).await?,
        Pace::Open { rate } => drive::open_loop(wire, workload, mix, ids, rate, plan).await?,
    };
    let per_sale = |before: u64, after: u64| after.saturating_sub(before) as f64 / outcome.all_sales.max(1) as f64;
    let cpu_us_per_sale = CpuPerSale {
        nodes: per_sale(cpu_before.0, proc::cpu_us(pids)),
        load_generator: per_sale(cpu_before.1, proc::cpu_us(&[std::process::id()])),
    };
    let under_load = pids.iter().map(|pid| proc::peak_rss(*pid)).collect();
    Ok(Window {
        mix,
        outcome,
        cpu_us_per_sale,
        under_load,
        reset,
    })
}

impl Window {
    /// Two windows of the same mix as one: their sales, CPU and peaks together.
    fn merge(self, other: Window) -> Result<Window> {
        let (ours, theirs) = (self.outcome.all_sales as f64, other.outcome.all_sales as f64);
        let weighted = |a: f64, b: f64| (a * ours + b * theirs) / (ours + theirs).max(1.0);
        Ok(Window {
            mix: self.mix,
            cpu_us_per_sale: CpuPerSale {
                nodes: weighted(self.cpu_us_per_sale.nodes, other.cpu_us_per_sale.nodes),
                load_generator: weighted(
                    self.cpu_us_per_sale.load_generator,
                    other.cpu_us_per_sale.load_generator,
                ),
            },
            under_load: self
                .under_load
                .iter()
                .zip(&other.under_load)
                .map(|(a, b)| (*a).max(*b))
                .collect(),
            reset: self.reset.iter().zip(&other.reset).map(|(a, b)| *a && *b).collect(),
            outcome: self.outcome.merge(other.outcome)?,
        })
    }

    fn report(
        self,
        plan: &BenchPlan,
        workload: &Workload,
        provisioning_peak: &[Option<u64>],
        baseline: Option<Baseline>,
    ) -> BenchReport {
        let Window {
            mix,
            outcome,
            cpu_us_per_sale,
            under_load,
            reset,
        } = self;
        let peak_rss_kib = provisioning_peak
            .iter()
            .zip(&under_load)
            .map(|(before, after)| (*before).max(*after).unwrap_or(0))
            .collect();
        let peak_rss_under_load_kib = under_load
            .iter()
            .zip(&reset)
            .map(|(peak, reset)| peak.filter(|_| *reset))
            .collect();
        let histogram = outcome.histogram;
        let seconds = outcome.elapsed.as_secs_f64();
        let per_second = outcome.sales as f64 / seconds;
        let stored_value = mix == Mix::StoredValue;
        BenchReport {
            engine: engine_of(&plan.database_url).to_owned(),
            pace: match plan.pace {
                Pace::Closed { clients } => format!("closed loop, {clients} clients"),
                Pace::Open { rate } => format!("open loop, {rate}/s"),
            },
            mix: MixReport {
                name: mix.name().to_owned(),
                gift_card_sales: outcome.paid.gift_card,
                loyalty_sales: outcome.paid.loyalty,
                fell_back_to_card: outcome.paid.fell_back,
                gift_cards: if stored_value { workload.gift_cards } else { 0 },
                loyalty_customers: if stored_value { workload.loyalty_customers } else { 0 },
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
        }
    }
}

/// The stored-value mix's throughput over the plain mix's, when a run measured both.
pub fn stored_value_over_plain(reports: &[BenchReport]) -> Option<f64> {
    throughput_over(reports, Mix::StoredValue, Mix::Plain)
}

/// The throughput of the sales paid through card payment attempts over that of the same
/// carts paid by card alone, when a run measured both.
pub fn card_attempts_over_plain(reports: &[BenchReport]) -> Option<f64> {
    throughput_over(reports, Mix::CardAttempts, Mix::Plain)
}

/// `mix`'s throughput over `base`'s, when a run measured both.
fn throughput_over(reports: &[BenchReport], mix: Mix, base: Mix) -> Option<f64> {
    let of = |mix: Mix| reports.iter().find(|r| r.mix.name == mix.name()).map(|r| r.per_second);
    match (of(base), of(mix)) {
        (Some(base), Some(measured)) if base > 0.0 => Some(measured / base),
        _ => None,
    }
}

pub(crate) fn engine_of(url: &str) -> &'static str {
    if url.starts_with("sqlite:") {
        "sqlite"
    } else {
        "postgres"
    }
}

/// The throughput of the sales naming a customer over that of the same carts naming none,
/// when a run measured both.
pub fn named_over_anonymous(reports: &[BenchReport]) -> Option<f64> {
    throughput_over(reports, Mix::Named, Mix::Anonymous)
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
