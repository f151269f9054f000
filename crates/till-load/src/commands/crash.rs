//! `till-load crash`: kills nodes under load, then checks nothing was lost or booked twice, and
//! prints what was proven.

use super::RunArgs;
use anyhow::Context;
use till_load::crash::{self, CrashPlan};

// The arguments of `till-load crash`, as the command line gives them.
#[derive(clap::Args)]
pub(crate) struct CrashArgs {
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
    #[command(flatten)]
    run: RunArgs,
    /// Sales pay partly with gift cards and customers' points too; then every card's
    /// ledger and the points ledger must hold exactly the acknowledged redemptions.
    #[arg(long)]
    stored_value: bool,
    /// Each sale's card payment goes through a payment attempt (asked, approved, captured);
    /// then every acknowledged sale's attempt must be captured by it, and none other.
    #[arg(long)]
    card_attempts: bool,
}

pub(crate) async fn run(args: CrashArgs) -> anyhow::Result<()> {
    let CrashArgs {
        database_url,
        nodes,
        cycles,
        tills,
        articles,
        run,
        stored_value,
        card_attempts,
    } = args;
    let workspace = run.workspace()?;
    let plan = CrashPlan {
        binary: workspace.binary.clone(),
        database_url,
        nodes: nodes.max(1),
        cycles,
        tills: tills.max(1),
        articles: articles.max(4),
        work_dir: workspace.work_dir.clone(),
        seed: run.seed,
        stored_value,
        card_attempts,
    };
    println!(
        "crash test: {} node(s), {} kills, {} tills, {}{}{}",
        plan.nodes,
        plan.cycles,
        plan.tills,
        till::server::redact(&plan.database_url),
        if stored_value { ", stored value" } else { "" },
        if card_attempts { ", card attempts" } else { "" }
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
    if card_attempts {
        println!(
            "ok: {} sales paid through a card attempt: each captured by its sale, no captured attempt without one",
            report.card_attempt_sales
        );
    }
    workspace.clean_up();
    Ok(())
}
