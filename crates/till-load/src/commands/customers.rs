//! `till-load customers`: fills a chain-sized customer directory, times its searches, updates
//! and an erasure, compares finalize throughput with and without customers, and prints the
//! result.

use super::{RunArgs, show};
use anyhow::Context;
use std::time::Duration;
use till_load::bench::{self, BenchPlan, Mixes, Pace};
use till_load::customers::{self, CustomersPlan};

// The arguments of `till-load customers`, as the command line gives them.
#[derive(clap::Args)]
pub(crate) struct CustomersArgs {
    /// `sqlite://FILE` or `postgres://.../NEW_DATABASE`.
    #[arg(long)]
    database_url: String,
    #[arg(long, default_value_t = 1_000_000)]
    customers: usize,
    /// Clients writing the directory at once.
    #[arg(long, default_value_t = 16)]
    fill_clients: usize,
    /// Requests of each kind (each search shape, profile updates).
    #[arg(long, default_value_t = 1_000)]
    lookups: usize,
    /// Clients sending them, each when its last was answered.
    #[arg(long, default_value_t = 4)]
    lookup_clients: usize,
    /// Sales naming the customer who is then erased.
    #[arg(long, default_value_t = 10_000)]
    customer_sales: usize,
    #[arg(long, default_value_t = 5_000)]
    articles: usize,
    /// Measured seconds of each finalize mix (two windows each).
    #[arg(long, default_value_t = 20)]
    duration: u64,
    #[arg(long, default_value_t = 3)]
    warmup: u64,
    /// Closed-loop clients of the finalize comparison.
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

const TILLS: usize = 16;

pub(crate) async fn run(args: CustomersArgs) -> anyhow::Result<()> {
    let CustomersArgs {
        database_url,
        customers,
        fill_clients,
        lookups,
        lookup_clients,
        customer_sales,
        articles,
        duration,
        warmup,
        clients,
        no_finalize,
        json,
        run,
    } = args;
    let workspace = run.workspace()?;
    let articles = articles.max(20);
    let finalize = (!no_finalize).then(|| BenchPlan {
        binary: workspace.binary.clone(),
        database_url: database_url.clone(),
        nodes: 1,
        pace: Pace::Closed { clients },
        duration: Duration::from_secs(duration.max(1)),
        warmup: Duration::from_secs(warmup),
        articles,
        tills: TILLS,
        customers: customers.max(1),
        work_dir: workspace.work_dir.join("finalize"),
        seed: run.seed,
        baseline: false,
        env: Vec::new(),
        mixes: Mixes::Customers,
        gift_cards: bench::GIFT_CARDS,
    });
    let plan = CustomersPlan {
        binary: workspace.binary.clone(),
        database_url,
        work_dir: workspace.work_dir.clone(),
        customers: customers.max(1),
        fill_clients: fill_clients.max(1),
        lookups: lookups.max(1),
        lookup_clients: lookup_clients.max(1),
        customer_sales,
        articles,
        tills: TILLS,
        finalize,
        seed: run.seed,
    };
    let report = customers::run(&plan)
        .await
        .with_context(|| format!("customers failed; logs in {}", plan.work_dir.display()))?;
    show(&report, json, print_customers)?;
    if report.failures > 0 {
        anyhow::bail!(
            "{} requests failed; first: {:?}; logs in {}",
            report.failures,
            report.failure_samples,
            plan.work_dir.display()
        );
    }
    workspace.clean_up();
    Ok(())
}

fn print_customers(report: &customers::CustomersReport) {
    let f = &report.fill;
    println!("engine            {}", report.engine);
    println!(
        "fill              {} profiles by PUT in {:.1} s, {:.0}/s ({} clients)",
        report.customers, f.seconds, f.per_second, f.clients
    );
    println!(
        "look-ups (ms)     {} clients, each sending when its last was answered (targets: search p99 under 20, PUT p99 under 5)",
        report.lookup_clients
    );
    for t in report.searches.iter().chain([&report.updates]) {
        println!(
            "  {:<42} {:>5}  p50 {:>7.2}  p99 {:>7.2}  max {:>7.2}",
            t.name, t.count, t.p50_ms, t.p99_ms, t.max_ms
        );
    }
    let e = &report.erasure;
    println!(
        "erasure           {:.1} ms for a customer named by {} sales (target: under 1 s; the sales took {:.1} s)",
        e.ms, e.sales, e.ringing_seconds
    );
    if let Some(c) = &report.finalize {
        println!(
            "finalize          {}, windows anonymous, named, named, anonymous",
            c.pace
        );
        for (name, run) in [("  naming none", &c.anonymous), ("  naming a customer", &c.named)] {
            println!(
                "{name:<20} {:.0} sales/s, p99 {:.2} ms, node CPU {:.0} µs/sale, {} sales, {} failed",
                run.per_second, run.p99_ms, run.cpu_us_per_sale, run.sales, run.failures
            );
        }
        println!(
            "  named / none      {:.3}x the throughput (target: at least 0.95), {:.3}x the CPU per sale",
            c.named_over_anonymous, c.cpu_named_over_anonymous
        );
    }
    println!("failures          {}", report.failures);
}
