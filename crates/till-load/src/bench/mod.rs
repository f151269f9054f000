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

mod baseline;
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

pub async fn run(plan: &BenchPlan) -> Result<BenchReport> {
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
    let spec = ShopSpec {
        store: "bench-store".into(),
        articles: plan.articles,
        stock: None,
        registers: plan.tills,
        cashier_discount_bps: Some(1_000),
    };
    let shop = provision(&client, &admin, &spec).await?;
    let workload = Arc::new(Workload::prepare(&client, &admin, shop, plan).await?);

    let pids: Vec<u32> = cluster.nodes.iter().filter_map(|n| n.pid()).collect();
    let wire = Arc::new(Wire::new(&cluster.urls())?);
    // Provisioning sets a peak of its own: every cashier's PIN is hashed and checked with
    // argon2 (a large block each, a few at once). The peak under load is measured from here on.
    let provisioning_peak: Vec<Option<u64>> = pids.iter().map(|pid| proc::peak_rss(*pid)).collect();
    let reset: Vec<bool> = pids.iter().map(|pid| proc::reset_peak_rss(*pid)).collect();
    let cpu_before = (proc::cpu_us(&pids), proc::cpu_us(&[std::process::id()]));
    let outcome = match plan.pace {
        Pace::Closed { clients } => drive::closed_loop(&wire, &workload, clients, plan).await?,
        Pace::Open { rate } => drive::open_loop(&wire, &workload, rate, plan).await?,
    };
    let per_sale = |before: u64, after: u64| after.saturating_sub(before) as f64 / outcome.all_sales.max(1) as f64;
    let cpu_us_per_sale = CpuPerSale {
        nodes: per_sale(cpu_before.0, proc::cpu_us(&pids)),
        load_generator: per_sale(cpu_before.1, proc::cpu_us(&[std::process::id()])),
    };
    let under_load: Vec<Option<u64>> = pids.iter().map(|pid| proc::peak_rss(*pid)).collect();
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
