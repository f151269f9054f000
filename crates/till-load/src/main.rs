//! `till-load`: drives a till deployment from outside. `bench` measures finalizeSale
//! throughput and latency against the engine's own durable commit rate; `drawer` the X report
//! of a big session and a burst of late sales from offline tills; `catalog` a chain-sized
//! catalog's import, look-ups and finalize throughput; `crash` kills nodes under
//! load and proves nothing was lost or booked twice.

use anyhow::Context;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;
use till_load::bench::{self, BenchPlan, Mixes, Pace};
use till_load::catalog::{self, CatalogPlan};
use till_load::crash::{self, CrashPlan};
use till_load::drawer::{self, DrawerPlan};
use till_load::prefill::{self, PrefillPlan};
use till_load::reads::{self, ReadsPlan};

#[derive(Parser)]
#[command(name = "till-load", version, about = "Load and crash tests for till deployments.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start the server(s), provision a shop, drive finalizeSale, report throughput, latency
    /// percentiles, peak memory and the baseline ratio. Exits 1 if any sale failed.
    Bench {
        /// `sqlite://FILE` or `postgres://.../NEW_DATABASE`.
        #[arg(long)]
        database_url: String,
        #[arg(long, default_value_t = 1)]
        nodes: usize,
        /// Closed loop: clients each sending the next sale when the last is answered.
        #[arg(long, default_value_t = 16)]
        clients: usize,
        /// Open loop instead: sales due at this rate per second.
        #[arg(long)]
        rate: Option<u64>,
        /// Measured seconds.
        #[arg(long, default_value_t = 20)]
        duration: u64,
        /// Seconds of load before measuring.
        #[arg(long, default_value_t = 3)]
        warmup: u64,
        #[arg(long, default_value_t = 5_000)]
        articles: usize,
        #[arg(long, default_value_t = 16)]
        tills: usize,
        #[arg(long, default_value_t = 1_000)]
        customers: usize,
        /// What the sales are paid with: `plain` (by card), `stored-value` (a fifth partly with
        /// a gift card, a tenth partly with points), or `both` one after the other, with the
        /// ratio of their throughputs.
        #[arg(long, value_enum, default_value_t = Mixes::Plain)]
        mix: Mixes,
        /// Gift cards issued before a stored-value mix, its sales' pool.
        #[arg(long, default_value_t = bench::GIFT_CARDS)]
        gift_cards: usize,
        /// Skip the raw commit-rate baseline.
        #[arg(long)]
        no_baseline: bool,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        #[arg(long)]
        till: Option<PathBuf>,
        #[arg(long)]
        work_dir: Option<PathBuf>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Measure on a copy of this prefilled database (`till-load prefill`) too, in the same
        /// run as the empty one, and report its throughput over the empty database's. The copy
        /// goes beside `--database-url`, named after it.
        #[arg(long)]
        prefilled: Option<String>,
    },
    /// Fill a new database with weeks of the benchmark shop's sales (sealed, reported, in the
    /// feed, each day's sessions and registers closed), through a node in this process whose
    /// clock moves a day at a time.
    Prefill {
        /// `sqlite://FILE` or `postgres://.../NEW_DATABASE`.
        #[arg(long)]
        database_url: String,
        #[arg(long, default_value_t = 2_000_000)]
        sales: u64,
        /// Days the sales are spread over; the last one is yesterday.
        #[arg(long, default_value_t = 30)]
        days: u32,
        #[arg(long, default_value_t = 16)]
        clients: usize,
        /// As `bench` will provision it: the same articles and tills.
        #[arg(long, default_value_t = 5_000)]
        articles: usize,
        #[arg(long, default_value_t = 16)]
        tills: usize,
        #[arg(long)]
        work_dir: Option<PathBuf>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Measure the read side of a prefilled database (`prefill`): sales searches (latency of
    /// each shape), the month's sales report in each grouping, the event feed read from its
    /// start, and its delivery to a webhook receiver in this process. Adds a webhook endpoint
    /// and its deliveries to the database, and deletes the endpoint at the end.
    Reads {
        #[arg(long)]
        database_url: String,
        /// Searches of each shape.
        #[arg(long, default_value_t = 200)]
        searches: usize,
        /// Times each report grouping is asked.
        #[arg(long, default_value_t = 5)]
        reports: usize,
        #[arg(long, default_value_t = 500_000)]
        feed_events: u64,
        #[arg(long, default_value_t = 50_000)]
        deliveries: u64,
        #[arg(long)]
        json: bool,
        #[arg(long)]
        till: Option<PathBuf>,
        #[arg(long)]
        work_dir: Option<PathBuf>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Measure the cash drawer's costs on a new database: the latency of the X report of a
    /// session holding `--sales` sales (beside the target of 50 ms), and the rate of a burst of
    /// `--late` sales rung offline and sent after their sessions were closed, booked as late
    /// sales, against as many sent on open sessions just before. Exits 1 if a sale was refused,
    /// the X report miscounted or a late sale sent again was not answered as a replay.
    Drawer {
        /// `sqlite://FILE` or `postgres://.../NEW_DATABASE`.
        #[arg(long)]
        database_url: String,
        /// Sales booked on the X report's session.
        #[arg(long, default_value_t = 5_000)]
        sales: usize,
        /// X reports timed, one after the other.
        #[arg(long, default_value_t = 50)]
        reports: usize,
        /// Sales of the late burst, and of the on-time burst it is compared with.
        #[arg(long, default_value_t = 1_000)]
        late: usize,
        /// Sales in flight at once; each burst's sales are spread over as many tills.
        #[arg(long, default_value_t = 16)]
        clients: usize,
        #[arg(long)]
        json: bool,
        #[arg(long)]
        till: Option<PathBuf>,
        #[arg(long)]
        work_dir: Option<PathBuf>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// A chain-sized catalog: write an NDJSON file of `--articles` articles, time `till
    /// catalog import` on it (with its peak memory), measure barcode look-ups and searches on
    /// one node serving it, then finalizeSale throughput with it against a catalog of
    /// `--small-articles`, in the same run. Exits 1 if a sale failed.
    Catalog {
        /// `sqlite://FILE` or `postgres://.../NEW_DATABASE`: the big catalog's; the small
        /// one's goes beside it.
        #[arg(long)]
        database_url: String,
        #[arg(long, default_value_t = 1_000_000)]
        articles: usize,
        /// Look-ups of each kind (barcode, prefix, word and prefix).
        #[arg(long, default_value_t = 1_000)]
        lookups: usize,
        /// The small catalog the finalize throughput is compared with.
        #[arg(long, default_value_t = 5_000)]
        small_articles: usize,
        /// Measured seconds of each finalize run.
        #[arg(long, default_value_t = 20)]
        duration: u64,
        #[arg(long, default_value_t = 3)]
        warmup: u64,
        #[arg(long, default_value_t = 16)]
        clients: usize,
        /// Skip the finalize comparison.
        #[arg(long)]
        no_finalize: bool,
        #[arg(long)]
        json: bool,
        #[arg(long)]
        till: Option<PathBuf>,
        #[arg(long)]
        work_dir: Option<PathBuf>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// SIGKILL nodes again and again while tills sell, then check every acknowledged sale,
    /// the stock, the ticket chains and the fiscal audit.
    Crash {
        /// `sqlite://FILE` (one node) or `postgres://.../NEW_DATABASE` (several).
        #[arg(long)]
        database_url: String,
        #[arg(long, default_value_t = 1)]
        nodes: usize,
        #[arg(long, default_value_t = 200)]
        cycles: usize,
        /// Tills selling at once, each on its own register.
        #[arg(long, default_value_t = 8)]
        tills: usize,
        #[arg(long, default_value_t = 50)]
        articles: usize,
        /// The `till` binary (default: next to this one).
        #[arg(long)]
        till: Option<PathBuf>,
        /// Where node logs and keys go (default: a new temporary directory).
        #[arg(long)]
        work_dir: Option<PathBuf>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Sales pay partly with gift cards and customers' points too; then every card's
        /// ledger and the points ledger must hold exactly the acknowledged redemptions.
        #[arg(long)]
        stored_value: bool,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Bench {
            database_url,
            nodes,
            clients,
            rate,
            duration,
            warmup,
            articles,
            tills,
            customers,
            mix,
            gift_cards,
            no_baseline,
            json,
            till,
            work_dir,
            seed,
            prefilled,
        } => {
            let workspace = Workspace::new(till, work_dir)?;
            let plan = BenchPlan {
                binary: workspace.binary.clone(),
                database_url,
                nodes: nodes.max(1),
                pace: match rate {
                    Some(rate) => Pace::Open { rate },
                    None => Pace::Closed { clients },
                },
                duration: Duration::from_secs(duration.max(1)),
                warmup: Duration::from_secs(warmup),
                articles: articles.max(20),
                tills: tills.max(1),
                customers,
                work_dir: workspace.work_dir.clone(),
                seed,
                baseline: !no_baseline,
                env: Vec::new(),
                mixes: mix,
                gift_cards,
            };
            if let Some(prefilled) = prefilled {
                let compared = bench::against_prefilled(&plan, &prefilled)
                    .await
                    .with_context(|| format!("benchmark failed; node logs in {}", plan.work_dir.display()))?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&compared)?);
                } else {
                    for (name, reports) in [("empty database", &compared.empty), ("prefilled", &compared.prefilled)] {
                        println!("== {name}");
                        reports.iter().for_each(print_report);
                        println!();
                    }
                    println!(
                        "prefilled         {:.2}x the empty database's throughput ({} sales stored before)",
                        compared.prefilled_over_empty, compared.stored_before
                    );
                }
                workspace.clean_up();
                return compared
                    .empty
                    .iter()
                    .chain(&compared.prefilled)
                    .try_for_each(bench::check);
            }
            let reports = bench::run(&plan)
                .await
                .with_context(|| format!("benchmark failed; node logs in {}", plan.work_dir.display()))?;
            let ratio = bench::stored_value_over_plain(&reports);
            if json {
                let shown = match (&reports[..], ratio) {
                    ([report], _) => serde_json::to_value(report)?,
                    (_, ratio) => serde_json::json!({"runs": reports, "storedValueOverPlain": ratio}),
                };
                println!("{}", serde_json::to_string_pretty(&shown)?);
            } else {
                for (n, report) in reports.iter().enumerate() {
                    if n > 0 {
                        println!();
                    }
                    print_report(report);
                }
                if let Some(ratio) = ratio {
                    println!();
                    println!("stored value      {ratio:.2}x the plain mix's throughput");
                }
            }
            workspace.clean_up();
            reports.iter().try_for_each(bench::check)
        }
        Command::Prefill {
            database_url,
            sales,
            days,
            clients,
            articles,
            tills,
            work_dir,
            seed,
        } => {
            let workspace = Workspace::new(None, work_dir)?;
            let plan = PrefillPlan {
                database_url,
                sales,
                days,
                clients,
                articles: articles.max(20),
                tills: tills.max(1),
                work_dir: workspace.work_dir.clone(),
                seed,
            };
            let report = prefill::run(&plan).await.context("prefill failed")?;
            println!(
                "prefilled {}: {} sales over {} days ({} to {}) in {:.1} s, {:.0} sales/s",
                till::server::redact(&plan.database_url),
                report.sales,
                report.days,
                report.first_day,
                report.last_day,
                report.seconds,
                report.per_second
            );
            workspace.clean_up();
            Ok(())
        }
        Command::Reads {
            database_url,
            searches,
            reports,
            feed_events,
            deliveries,
            json,
            till,
            work_dir,
            seed,
        } => {
            let workspace = Workspace::new(till, work_dir)?;
            let plan = ReadsPlan {
                binary: workspace.binary.clone(),
                database_url,
                work_dir: workspace.work_dir.clone(),
                searches: searches.max(1),
                reports: reports.max(1),
                feed_events,
                deliveries: deliveries.max(1),
                seed,
            };
            let report = reads::run(&plan)
                .await
                .with_context(|| format!("reads failed; node log in {}", plan.work_dir.display()))?;
            show(&report, json, print_reads)?;
            workspace.clean_up();
            Ok(())
        }
        Command::Drawer {
            database_url,
            sales,
            reports,
            late,
            clients,
            json,
            till,
            work_dir,
            seed,
        } => {
            let workspace = Workspace::new(till, work_dir)?;
            let plan = DrawerPlan {
                binary: workspace.binary.clone(),
                database_url,
                work_dir: workspace.work_dir.clone(),
                sales: sales.max(1),
                reports: reports.max(1),
                late: late.max(1),
                clients: clients.max(1),
                seed,
            };
            let report = drawer::run(&plan)
                .await
                .with_context(|| format!("drawer failed; node log in {}", plan.work_dir.display()))?;
            show(&report, json, print_drawer)?;
            workspace.clean_up();
            drawer::check(&report)
        }
        Command::Catalog {
            database_url,
            articles,
            lookups,
            small_articles,
            duration,
            warmup,
            clients,
            no_finalize,
            json,
            till,
            work_dir,
            seed,
        } => {
            let workspace = Workspace::new(till, work_dir)?;
            let finalize = (!no_finalize)
                .then(|| -> anyhow::Result<BenchPlan> {
                    Ok(BenchPlan {
                        binary: workspace.binary.clone(),
                        database_url: bench::sibling(&database_url, "small")?,
                        nodes: 1,
                        pace: Pace::Closed { clients },
                        duration: Duration::from_secs(duration.max(1)),
                        warmup: Duration::from_secs(warmup),
                        articles: small_articles.clamp(20, articles.max(20)),
                        tills: 16,
                        customers: 1_000,
                        work_dir: workspace.work_dir.join("finalize"),
                        seed,
                        baseline: false,
                        env: Vec::new(),
                        mixes: Mixes::Plain,
                        gift_cards: bench::GIFT_CARDS,
                    })
                })
                .transpose()?;
            let plan = CatalogPlan {
                binary: workspace.binary.clone(),
                database_url,
                work_dir: workspace.work_dir.clone(),
                articles: articles.max(1),
                lookups: lookups.max(1),
                finalize,
                seed,
            };
            let report = catalog::run(&plan)
                .await
                .with_context(|| format!("catalog failed; logs in {}", plan.work_dir.display()))?;
            show(&report, json, print_catalog)?;
            workspace.clean_up();
            match &report.finalize {
                Some(finalize) if finalize.failures > 0 => anyhow::bail!("{} sales failed", finalize.failures),
                _ => Ok(()),
            }
        }
        Command::Crash {
            database_url,
            nodes,
            cycles,
            tills,
            articles,
            till,
            work_dir,
            seed,
            stored_value,
        } => {
            let workspace = Workspace::new(till, work_dir)?;
            let plan = CrashPlan {
                binary: workspace.binary.clone(),
                database_url,
                nodes: nodes.max(1),
                cycles,
                tills: tills.max(1),
                articles: articles.max(4),
                work_dir: workspace.work_dir.clone(),
                seed,
                stored_value,
            };
            println!(
                "crash test: {} node(s), {} kills, {} tills, {}{}",
                plan.nodes,
                plan.cycles,
                plan.tills,
                till::server::redact(&plan.database_url),
                if stored_value { ", stored value" } else { "" }
            );
            let report = crash::run(&plan)
                .await
                .with_context(|| format!("crash test failed; node logs in {}", plan.work_dir.display()))?;
            println!(
                "ok: {} kills, {} sales acknowledged and found, {} resends after kills, stock and its ledger, {} chains and the event feed exact, \
                 fiscal audit passed, in {:.1} s",
                report.kills,
                report.sales,
                report.resends,
                plan.tills,
                report.elapsed.as_secs_f64()
            );
            if stored_value {
                println!(
                    "ok: {} sales paid partly by gift card, {} with points: every redemption in its ledger once, \
                     none other, every balance exact",
                    report.gift_card_sales, report.loyalty_sales
                );
            }
            workspace.clean_up();
            Ok(())
        }
    }
}

/// Where a run's nodes come from and write: the `till` binary (by default the one beside this
/// one) and a work directory (by default a temporary one, removed after a successful run and
/// kept with the nodes' logs after a failed one).
struct Workspace {
    binary: PathBuf,
    work_dir: PathBuf,
    temporary: bool,
}

impl Workspace {
    fn new(till: Option<PathBuf>, work_dir: Option<PathBuf>) -> anyhow::Result<Workspace> {
        let binary = match till {
            Some(path) => path,
            None => std::env::current_exe()?.with_file_name("till"),
        };
        let temporary = work_dir.is_none();
        let work_dir = match work_dir {
            Some(dir) => {
                std::fs::create_dir_all(&dir)?;
                dir
            }
            // A name of its own: a failed run leaves its directory (the node logs) behind, and
            // a later process may get the same id.
            None => tempfile::Builder::new().prefix("till-load-").tempdir()?.keep(),
        };
        Ok(Workspace {
            binary,
            work_dir,
            temporary,
        })
    }

    fn clean_up(self) {
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.work_dir);
        }
    }
}

/// Prints `report` as JSON, or as `print` writes it for a person.
fn show<R: serde::Serialize>(report: &R, json: bool, print: fn(&R)) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        print(report);
    }
    Ok(())
}

fn print_report(report: &bench::BenchReport) {
    let l = &report.latency_us;
    let ms = |us: u64| us as f64 / 1000.0;
    println!("engine            {}", report.engine);
    println!("load              {}", report.pace);
    let mix = &report.mix;
    if mix.name == "plain" {
        println!("mix               plain: paid by card");
    } else {
        let share = |n: u64| 100.0 * n as f64 / report.sales.max(1) as f64;
        println!(
            "mix               {}: {:.1} % partly by gift card ({} cards), {:.1} % partly with points \
             ({} customers), {} fell back to card",
            mix.name,
            share(mix.gift_card_sales),
            mix.gift_cards,
            share(mix.loyalty_sales),
            mix.loyalty_customers,
            mix.fell_back_to_card
        );
    }
    println!(
        "sales             {} in {:.1} s ({:.1} lines each), {} failed",
        report.sales, report.seconds, report.lines_per_sale, report.failures
    );
    println!("throughput        {:.0} sales/s", report.per_second);
    println!(
        "latency (ms)      p50 {:.2}  p90 {:.2}  p99 {:.2}  p99.9 {:.2}  max {:.2}",
        ms(l.p50),
        ms(l.p90),
        ms(l.p99),
        ms(l.p999),
        ms(l.max)
    );
    if l.p50 > 0 {
        println!("p99 / p50         {:.2}", l.p99 as f64 / l.p50 as f64);
    }
    let mib = |kib: u64| kib as f64 / 1024.0;
    for (node, (kib, under_load)) in report
        .peak_rss_kib
        .iter()
        .zip(&report.peak_rss_under_load_kib)
        .enumerate()
    {
        match under_load {
            Some(load) => println!(
                "peak RSS node {node}   {:.1} MiB under load, {:.1} MiB with provisioning",
                mib(*load),
                mib(*kib)
            ),
            None => println!("peak RSS node {node}   {:.1} MiB", mib(*kib)),
        }
    }
    let cpu = &report.cpu_us_per_sale;
    println!(
        "CPU per sale      {:.0} µs in the nodes, {:.0} µs in the load generator",
        cpu.nodes, cpu.load_generator
    );
    if let (Some(baseline), Some(ratio)) = (&report.baseline, report.ratio) {
        println!(
            "baseline          {:.0}/s, mean of {:.0} before and {:.0} after the run ({})",
            baseline.per_second, baseline.before, baseline.after, baseline.method
        );
        println!("ratio             {ratio:.2}x");
    }
}

fn print_reads(report: &reads::ReadsReport) {
    println!("engine            {}", report.engine);
    let row = |t: &reads::Timing| {
        println!(
            "  {:<30} {:>5}  p50 {:>7.2}  p99 {:>7.2}  max {:>7.2}",
            t.name, t.count, t.p50_ms, t.p99_ms, t.max_ms
        )
    };
    println!("search (ms)");
    report.search.iter().for_each(row);
    row(&report.search_all);
    println!(
        "reports (ms), {} days, {} sales",
        report.report_days, report.report_sales_count
    );
    report.reports.iter().for_each(row);
    let rate =
        |name: &str, r: &reads::Rate| println!("{name:<17} {} in {:.2} s, {:.0}/s", r.count, r.seconds, r.per_second);
    rate("feed read", &report.feed);
    rate("webhook delivery", &report.webhooks);
}

fn print_catalog(report: &catalog::CatalogReport) {
    let i = &report.import;
    println!("engine            {}", report.engine);
    println!(
        "import            {} articles ({:.0} MiB of NDJSON) in {:.1} s, {:.0}/s, peak RSS {:.1} MiB (target: under 60 s)",
        report.articles, report.file_mib, i.seconds, i.per_second, i.peak_rss_mib
    );
    println!("                  {}", i.summary);
    println!("look-ups (ms)     one client, each sent when the last was answered (target: p99 under 5)");
    for t in &report.lookups {
        println!(
            "  {:<30} {:>5}  p50 {:>7.2}  p99 {:>7.2}  max {:>7.2}",
            t.name, t.count, t.p50_ms, t.p99_ms, t.max_ms
        );
    }
    if let Some(f) = &report.finalize {
        println!(
            "finalize          {:.0} sales/s with {} articles, {:.0} with {} articles: {:.2}x (target: at least 0.9), {} failed",
            f.big_per_second, report.articles, f.small_per_second, f.small_articles, f.big_over_small, f.failures
        );
    }
}

fn print_drawer(report: &drawer::DrawerReport) {
    let x = &report.x_report;
    let burst = |name: &str, b: &drawer::Burst| {
        let refused = match b.refused {
            0 => String::new(),
            n => format!(", {n} refused"),
        };
        let r = &b.acknowledged;
        println!(
            "{name:<17} {} of {} booked in {:.2} s, {:.0}/s{refused}",
            r.count, b.sent, r.seconds, r.per_second
        );
    };
    println!("engine            {}", report.engine);
    burst("session sales", &x.session_sales);
    let l = &x.latency;
    println!(
        "X report (ms)     {} reports of {} sales: p50 {:.2}  p99 {:.2}  max {:.2}  (target: under {})",
        l.count, x.reported_sales_count, l.p50_ms, l.p99_ms, l.max_ms, x.target_ms
    );
    burst("on-time burst", &report.on_time);
    burst("late burst", &report.late);
    println!("late / on-time    {:.2}x", report.late_over_on_time);
    let r = &report.replays;
    match r.sent {
        0 => println!("replays           none sent: no late sale was booked"),
        sent => println!(
            "replays           {} of {sent} answered as replays, same body",
            r.replayed
        ),
    }
}
