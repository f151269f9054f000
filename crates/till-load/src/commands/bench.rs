//! `till-load bench`: runs the finalizeSale benchmark (optionally against a prefilled database too)
//! and prints its throughput, latency, memory and baseline report.

use super::RunArgs;
use anyhow::Context;
use std::time::Duration;
use till_load::bench::{self, BenchPlan, Mixes, Pace};

// The arguments of `till-load bench`, as the command line gives them.
#[derive(clap::Args)]
pub(crate) struct BenchArgs {
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
    /// ratio of their throughputs; `cards` measures the plain mix against the same sales paid
    /// through card payment attempts (asked, approved, captured).
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
    #[command(flatten)]
    run: RunArgs,
    /// Measure on a copy of this prefilled database (`till-load prefill`) too, in the same
    /// run as the empty one, and report its throughput over the empty database's. The copy
    /// goes beside `--database-url`, named after it.
    #[arg(long)]
    prefilled: Option<String>,
}

pub(crate) async fn run(args: BenchArgs) -> anyhow::Result<()> {
    let BenchArgs {
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
        run,
        prefilled,
    } = args;
    let workspace = run.workspace()?;
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
        seed: run.seed,
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
    let attempts = bench::card_attempts_over_plain(&reports);
    if json {
        let shown = match &reports[..] {
            [report] => serde_json::to_value(report)?,
            _ => serde_json::json!({"runs": reports, "storedValueOverPlain": ratio,
                                    "cardAttemptsOverPlain": attempts}),
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
        if let Some(attempts) = attempts {
            println!();
            println!("card attempts     {attempts:.2}x the plain mix's throughput");
        }
    }
    workspace.clean_up();
    reports.iter().try_for_each(bench::check)
}

fn print_report(report: &bench::BenchReport) {
    let l = &report.latency_us;
    let ms = |us: u64| us as f64 / 1000.0;
    println!("engine            {}", report.engine);
    println!("load              {}", report.pace);
    let mix = &report.mix;
    if mix.name == "plain" {
        println!("mix               plain: paid by card");
    } else if mix.name == bench::Mix::CardAttempts.name() {
        println!("mix               card-attempts: each sale's card payment asked, approved, then captured");
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
