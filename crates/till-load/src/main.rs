//! `till-load`: drives a till deployment from outside. `bench` measures finalizeSale
//! throughput and latency against the engine's own durable commit rate; `drawer` the X report
//! of a big session and a burst of late sales from offline tills; `catalog` a chain-sized
//! catalog's import, look-ups and finalize throughput; `customers` a chain-sized customer
//! directory's fill, searches, updates and erasure, and its cost on finalizeSale; `crash` kills nodes under
//! load and proves nothing was lost or booked twice.

mod commands;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "till-load", version, about = "Load and crash tests for till deployments.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start the server(s), provision a shop, drive finalizeSale, report throughput, latency
    /// percentiles, peak memory and the baseline ratio. Exits 1 if any sale failed.
    Bench(commands::bench::BenchArgs),
    /// Fill a new database with weeks of the benchmark shop's sales (sealed, reported, in the
    /// feed, each day's sessions and registers closed), through a node in this process whose
    /// clock moves a day at a time.
    Prefill(commands::prefill::PrefillArgs),
    /// Measure the read side of a prefilled database (`prefill`): sales searches (latency of
    /// each shape), the month's sales report in each grouping, the event feed read from its
    /// start, and its delivery to a webhook receiver in this process. Adds a webhook endpoint
    /// and its deliveries to the database, and deletes the endpoint at the end.
    Reads(commands::reads::ReadsArgs),
    /// Measure the cash drawer's costs on a new database: the latency of the X report of a
    /// session holding `--sales` sales (beside the target of 50 ms), and the rate of a burst of
    /// `--late` sales rung offline and sent after their sessions were closed, booked as late
    /// sales, against as many sent on open sessions just before. Exits 1 if a sale was refused,
    /// the X report miscounted or a late sale sent again was not answered as a replay.
    Drawer(commands::drawer::DrawerArgs),
    /// Time the rendering of receipts on a new database: `--sales` sales booked, then their
    /// receipts asked `--renders` times per format (text, HTML, ESC/POS) by one client, each
    /// from sending to the whole answer read (beside the target of 1 ms). Exits 1 if a
    /// request failed.
    Receipts(commands::receipts::ReceiptsArgs),
    /// Measure the e-mail queue's pace on a new database: `--sales` sales booked, then
    /// `--mails` receipts asked for by e-mail, sent to a local SMTP sink (aiosmtpd).
    Mail(commands::mail::MailArgs),
    /// A chain-sized catalog: write an NDJSON file of `--articles` articles, time `till
    /// catalog import` on it (with its peak memory), measure barcode look-ups and searches on
    /// one node serving it, then finalizeSale throughput with it against a catalog of
    /// `--small-articles`, in the same run. Exits 1 if a sale failed.
    Catalog(commands::catalog::CatalogArgs),
    /// A chain-sized customer directory: fill a new database with `--customers` profiles
    /// through the API, measure its searches and profile updates, time the erasure of a
    /// customer named by `--customer-sales` sales, then finalizeSale throughput with sales
    /// naming a customer against the same naming none, in the same run. Exits 1 if a request
    /// failed.
    Customers(commands::customers::CustomersArgs),
    /// SIGKILL nodes again and again while tills sell, then check every acknowledged sale,
    /// the stock, the ticket chains and the fiscal audit.
    Crash(commands::crash::CrashArgs),
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Bench(args) => commands::bench::run(args).await,
        Command::Prefill(args) => commands::prefill::run(args).await,
        Command::Reads(args) => commands::reads::run(args).await,
        Command::Drawer(args) => commands::drawer::run(args).await,
        Command::Receipts(args) => commands::receipts::run(args).await,
        Command::Mail(args) => commands::mail::run(args).await,
        Command::Catalog(args) => commands::catalog::run(args).await,
        Command::Customers(args) => commands::customers::run(args).await,
        Command::Crash(args) => commands::crash::run(args).await,
    }
}
