//! `till-load drawer`: measures the X report of a big session and a burst of late sales, and
//! prints the result.

use super::{RunArgs, show};
use anyhow::Context;
use till_load::drawer::{self, DrawerPlan};

// The arguments of `till-load drawer`, as the command line gives them.
#[derive(clap::Args)]
pub(crate) struct DrawerArgs {
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
    #[command(flatten)]
    run: RunArgs,
}

pub(crate) async fn run(args: DrawerArgs) -> anyhow::Result<()> {
    let DrawerArgs {
        database_url,
        sales,
        reports,
        late,
        clients,
        json,
        run,
    } = args;
    let workspace = run.workspace()?;
    let plan = DrawerPlan {
        binary: workspace.binary.clone(),
        database_url,
        work_dir: workspace.work_dir.clone(),
        sales: sales.max(1),
        reports: reports.max(1),
        late: late.max(1),
        clients: clients.max(1),
        seed: run.seed,
    };
    let report = drawer::run(&plan)
        .await
        .with_context(|| format!("drawer failed; node log in {}", plan.work_dir.display()))?;
    show(&report, json, print_drawer)?;
    workspace.clean_up();
    drawer::check(&report)
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
