//! `till-load reads`: measures the read side of a prefilled database and prints its timings.

use super::{RunArgs, show};
use anyhow::Context;
use till_load::reads::{self, ReadsPlan};

// The arguments of `till-load reads`, as the command line gives them.
#[derive(clap::Args)]
pub(crate) struct ReadsArgs {
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
    #[command(flatten)]
    run: RunArgs,
}

pub(crate) async fn run(args: ReadsArgs) -> anyhow::Result<()> {
    let ReadsArgs {
        database_url,
        searches,
        reports,
        feed_events,
        deliveries,
        json,
        run,
    } = args;
    let workspace = run.workspace()?;
    let plan = ReadsPlan {
        binary: workspace.binary.clone(),
        database_url,
        work_dir: workspace.work_dir.clone(),
        searches: searches.max(1),
        reports: reports.max(1),
        feed_events,
        deliveries: deliveries.max(1),
        seed: run.seed,
    };
    let report = reads::run(&plan)
        .await
        .with_context(|| format!("reads failed; node log in {}", plan.work_dir.display()))?;
    show(&report, json, print_reads)?;
    workspace.clean_up();
    Ok(())
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
