//! `till-load`: drives a till deployment from outside. `crash` kills nodes under load and
//! proves nothing was lost or booked twice.

use anyhow::Context;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use till::load::crash::{self, CrashPlan};

#[derive(Parser)]
#[command(name = "till-load", version, about = "Load and crash tests for till deployments.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Crash {
            database_url,
            nodes,
            cycles,
            tills,
            articles,
            till,
            work_dir,
            seed,
        } => {
            let temporary = tempdir()?;
            let plan = CrashPlan {
                binary: match till {
                    Some(path) => path,
                    None => sibling("till")?,
                },
                database_url,
                nodes: nodes.max(1),
                cycles,
                tills: tills.max(1),
                articles: articles.max(4),
                work_dir: work_dir.unwrap_or_else(|| temporary.clone()),
                seed,
            };
            println!(
                "crash test: {} node(s), {} kills, {} tills, {}",
                plan.nodes,
                plan.cycles,
                plan.tills,
                till::server::redact(&plan.database_url)
            );
            let report = crash::run(&plan)
                .await
                .with_context(|| format!("crash test failed; node logs in {}", plan.work_dir.display()))?;
            println!(
                "ok: {} kills, {} sales acknowledged and found, {} resends after kills, stock and {} chains exact, \
                 fiscal audit passed, in {:.1} s",
                report.kills,
                report.sales,
                report.resends,
                plan.tills,
                report.elapsed.as_secs_f64()
            );
            let _ = std::fs::remove_dir_all(temporary);
            Ok(())
        }
    }
}

/// A binary in the same directory as this one.
fn sibling(name: &str) -> anyhow::Result<PathBuf> {
    let me = std::env::current_exe()?;
    Ok(me.with_file_name(name))
}

fn tempdir() -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("till-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
