//! `till-load crash`: kills nodes under load, then checks nothing was lost or booked twice, and
//! prints what was proven.

use super::RunArgs;
use anyhow::Context;
use till_load::crash::{self, CrashPlan, Nemesis, nemesis::downtimes};

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
    /// Tills also give back lines of their sales and put cash in their drawers; then every
    /// acknowledged return and movement must be recorded once, and none other.
    #[arg(long)]
    counter: bool,
    /// Fail the database over instead of killing nodes: each cycle runs `COMMAND KIND` for
    /// each kind of `--kinds`; the command prints `fault MS` when it strikes and `healthy MS`
    /// once the database is whole again (scripts/failover-nemesis).
    #[arg(long, requires = "kinds")]
    nemesis_command: Option<String>,
    /// The kinds of fault, comma-separated, as the nemesis command names them.
    #[arg(long, value_delimiter = ',')]
    kinds: Vec<String>,
    /// A further `TILL_*` setting of the nodes, `NAME=VALUE`; may be repeated.
    #[arg(long, value_parser = name_value)]
    node_env: Vec<(String, String)>,
}

fn name_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if name.starts_with("TILL_") => Ok((name.to_owned(), value.to_owned())),
        _ => Err(format!("{text:?} is not TILL_NAME=VALUE")),
    }
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
        counter,
        nemesis_command,
        kinds,
        node_env,
    } = args;
    let nemesis = match nemesis_command {
        Some(command) => Nemesis::Database { command, kinds },
        None => Nemesis::Nodes,
    };
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
        counter,
        nemesis,
        env: node_env,
    };
    let faults = match &plan.nemesis {
        Nemesis::Nodes => format!("{} kills", plan.cycles),
        Nemesis::Database { kinds, .. } => format!("{} failovers of each kind ({})", plan.cycles, kinds.join(", ")),
    };
    println!(
        "crash test: {} node(s), {faults}, {} tills, {}{}{}{}",
        plan.nodes,
        plan.tills,
        till::server::redact(&plan.database_url),
        if stored_value { ", stored value" } else { "" },
        if card_attempts { ", card attempts" } else { "" },
        if counter { ", returns and cash movements" } else { "" }
    );
    let report = crash::run(&plan)
        .await
        .with_context(|| format!("crash test failed; node logs in {}", plan.work_dir.display()))?;
    let struck = match &plan.nemesis {
        Nemesis::Nodes => format!("{} kills", report.kills),
        Nemesis::Database { .. } => format!("{} failovers", report.faults.len()),
    };
    println!(
        "ok: {struck}, {} sales acknowledged and found, {} resends, stock and its ledger, {} chains and the event feed exact, \
         fiscal audit passed, in {:.1} s",
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
    if counter {
        println!(
            "ok: {} returns and {} cash movements acknowledged: each recorded once, in its chain, its session \
             and the feed, none other",
            report.returns, report.movements
        );
    }
    if let Nemesis::Database { .. } = &plan.nemesis {
        // One line per fault, its moment in milliseconds since the epoch, to be read beside
        // the database's own logs.
        for (fault, downtime) in &report.faults {
            println!(
                "{} struck at {}: writes stopped {:.1} s",
                fault.kind,
                fault.struck_at,
                *downtime as f64 / 1000.0
            );
        }
        let per_kind: Vec<String> = downtimes(&report.faults)
            .into_iter()
            .map(|(kind, (count, longest, mean))| {
                format!("{kind} x{count} writes stopped {mean:.1} s mean, {longest:.1} s longest")
            })
            .collect();
        println!(
            "failovers {}, acknowledged {} (sales {}, returns {}, cash movements {}), lost 0, server errors 0; {}",
            report.faults.len(),
            report.sales + report.returns + report.movements,
            report.sales,
            report.returns,
            report.movements,
            per_kind.join("; ")
        );
    }
    workspace.clean_up();
    Ok(())
}
