//! `till-load catalog`: times a chain-sized catalog's import, look-ups, a store's snapshot and
//! finalize throughput, and prints the result.

use super::{RunArgs, show};
use anyhow::Context;
use std::time::Duration;
use till_load::bench::{self, BenchPlan, Mixes, Pace};
use till_load::catalog::{self, CatalogPlan};

// The arguments of `till-load catalog`, as the command line gives them.
#[derive(clap::Args)]
pub(crate) struct CatalogArgs {
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
    #[command(flatten)]
    run: RunArgs,
}

pub(crate) async fn run(args: CatalogArgs) -> anyhow::Result<()> {
    let CatalogArgs {
        database_url,
        articles,
        lookups,
        small_articles,
        duration,
        warmup,
        clients,
        no_finalize,
        json,
        run,
    } = args;
    let workspace = run.workspace()?;
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
                seed: run.seed,
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
        seed: run.seed,
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
    let s = &report.snapshot;
    println!(
        "snapshot          {} lines ({:.0} MiB of NDJSON) in {:.1} s, node's peak RSS {:.1} MiB (target: under 30 s, under 150 MiB)",
        s.lines, s.mib, s.seconds, s.peak_rss_mib
    );
    if let Some(f) = &report.finalize {
        println!(
            "finalize          {:.0} sales/s with {} articles, {:.0} with {} articles: {:.2}x (target: at least 0.9), {} failed",
            f.big_per_second, report.articles, f.small_per_second, f.small_articles, f.big_over_small, f.failures
        );
    }
}
