//! `till-load receipts`: times the rendering of receipts in each format, and prints it.

use super::{RunArgs, show};
use anyhow::Context;
use till_load::receipts::{self, ReceiptsPlan};

// The arguments of `till-load receipts`, as the command line gives them.
#[derive(clap::Args)]
pub(crate) struct ReceiptsArgs {
    /// `sqlite://FILE` or `postgres://.../NEW_DATABASE`.
    #[arg(long)]
    database_url: String,
    /// Sales booked, whose receipts are asked in turn.
    #[arg(long, default_value_t = 200)]
    sales: usize,
    /// Receipts timed per format, one after the other.
    #[arg(long, default_value_t = 1_000)]
    renders: usize,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    run: RunArgs,
}

pub(crate) async fn run(args: ReceiptsArgs) -> anyhow::Result<()> {
    let ReceiptsArgs {
        database_url,
        sales,
        renders,
        json,
        run,
    } = args;
    let workspace = run.workspace()?;
    let plan = ReceiptsPlan {
        binary: workspace.binary.clone(),
        database_url,
        work_dir: workspace.work_dir.clone(),
        sales,
        renders,
        seed: run.seed,
    };
    let report = receipts::run(&plan)
        .await
        .with_context(|| format!("receipts failed; node log in {}", plan.work_dir.display()))?;
    show(&report, json, print_receipts)?;
    workspace.clean_up();
    Ok(())
}

fn print_receipts(report: &receipts::ReceiptsReport) {
    println!("engine            {}", report.engine);
    println!("sales             {}", report.sales);
    for t in &report.formats {
        println!(
            "{:<17} {} receipts: p50 {:.3}  p99 {:.3}  max {:.3} ms  (target: under {} ms)",
            t.name, t.count, t.p50_ms, t.p99_ms, t.max_ms, report.target_ms
        );
    }
}
