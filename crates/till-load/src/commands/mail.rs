//! `till-load mail`: measures the e-mail queue's pace to a local SMTP sink, and prints it.

use super::{RunArgs, show};
use anyhow::Context;
use till_load::mail::{self, MailPlan};

// The arguments of `till-load mail`, as the command line gives them.
#[derive(clap::Args)]
pub(crate) struct MailArgs {
    /// `sqlite://FILE` or `postgres://.../NEW_DATABASE`.
    #[arg(long)]
    database_url: String,
    /// Sales booked, whose receipts are sent in turn.
    #[arg(long, default_value_t = 200)]
    sales: usize,
    /// Mails asked for.
    #[arg(long, default_value_t = 2_000)]
    mails: usize,
    /// The Python that runs aiosmtpd, the sink.
    #[arg(long, default_value = "python3")]
    python: String,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    run: RunArgs,
}

pub(crate) async fn run(args: MailArgs) -> anyhow::Result<()> {
    let MailArgs {
        database_url,
        sales,
        mails,
        python,
        json,
        run,
    } = args;
    let workspace = run.workspace()?;
    let plan = MailPlan {
        binary: workspace.binary.clone(),
        database_url,
        work_dir: workspace.work_dir.clone(),
        sales,
        mails,
        python,
        seed: run.seed,
    };
    let report = mail::run(&plan)
        .await
        .with_context(|| format!("mail failed; node log in {}", plan.work_dir.display()))?;
    show(&report, json, print_mail)?;
    workspace.clean_up();
    Ok(())
}

fn print_mail(report: &mail::MailReport) {
    println!("engine            {}", report.engine);
    println!(
        "mails             {} queued in {:.2} s, sent in {:.2} s",
        report.mails, report.queued_seconds, report.sent_seconds
    );
    println!(
        "pace              {:.0} mails/s  (target: at least {})",
        report.mails_per_second, report.target_per_second
    );
}
