//! `till-load prefill`: fills a new database with weeks of the benchmark shop's sales and prints
//! how fast it went.

use super::Workspace;
use anyhow::Context;
use std::path::PathBuf;
use till_load::prefill::{self, PrefillPlan};

// The arguments of `till-load prefill`, as the command line gives them.
#[derive(clap::Args)]
pub(crate) struct PrefillArgs {
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
}

pub(crate) async fn run(args: PrefillArgs) -> anyhow::Result<()> {
    let PrefillArgs {
        database_url,
        sales,
        days,
        clients,
        articles,
        tills,
        work_dir,
        seed,
    } = args;
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
