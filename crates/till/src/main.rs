//! `till`: serve, migrate, mint development tokens, run the demo, serve an agent's tools.

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use till::config::{Config, LogFormat, Overrides};
use till::{bundle, catalog_import, demo, fiscal, server, token};
use till_api::SystemClock;
use tracing_subscriber::EnvFilter;

#[derive(Parser)]
#[command(
    name = "till",
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("BUILT_FROM_COMMIT"), ")"),
    about = "The point-of-sale backend: sales, manager approvals, promotions, NF525 journal."
)]
struct Cli {
    /// Configuration file (default: $TILL_CONFIG, else ./till.toml when present).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// Database URL: sqlite://PATH or postgres://... (TILL_DATABASE_URL).
    #[arg(long, global = true)]
    database_url: Option<String>,
    /// Directory of the embedded database and generated keys (TILL_DATA_DIR).
    #[arg(long, global = true)]
    data_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP service.
    Serve {
        /// Address to bind (TILL_LISTEN).
        #[arg(long)]
        listen: Option<String>,
        /// Load demo data, open a demo till session and print ready-to-paste tokens.
        #[arg(long)]
        demo: bool,
        /// `text` or `json` logs (TILL_LOG_FORMAT).
        #[arg(long)]
        log_format: Option<String>,
    },
    /// Run the service with demo data (same as `serve --demo`).
    Demo {
        #[arg(long)]
        listen: Option<String>,
    },
    /// Bring the database schema up to date, then exit.
    Migrate,
    /// The fiscal journal's tools: audit, offline archive check, key rotation.
    Fiscal {
        #[command(subcommand)]
        action: FiscalAction,
    },
    /// The catalog's tools: a streaming import for a catalog of any size.
    Catalog {
        #[command(subcommand)]
        action: CatalogAction,
    },
    /// Serve the agent tools (Model Context Protocol) on standard input and output, acting with
    /// the token: what an MCP-capable assistant runs. Logs go to standard error.
    Mcp {
        /// The bearer token the agent acts with: an access token (JWT) or a register-session
        /// token; the tools it sees and what they may do follow its scopes (TILL_MCP_TOKEN).
        #[arg(long, env = "TILL_MCP_TOKEN", hide_env_values = true)]
        token: String,
    },
    /// Mint a development access token signed with TILL_JWT_SECRET.
    Token {
        /// The subject (`sub`).
        #[arg(long)]
        sub: String,
        /// Space-separated scopes and permissions, such as "pos.sales.finalize pos.sales.read".
        #[arg(long, default_value = "")]
        scope: String,
        /// Lifetime in seconds.
        #[arg(long, default_value_t = 3600)]
        ttl: u64,
    },
}

#[derive(Subcommand)]
enum FiscalAction {
    /// Audit the journals in the database (every register, or one); exits 1 on a failure.
    /// Where there is no till database it says so and creates nothing.
    Verify {
        /// Only this register.
        #[arg(long)]
        register: Option<String>,
    },
    /// Check an archive file offline, without the database; exits 1 on a failure.
    VerifyArchive {
        /// The archive file from POST /v1/fiscal/archives.
        file: PathBuf,
        /// The JWK set GET /v1/fiscal/keys answered, saved by the auditor: every signature must
        /// verify under one of its keys. Without it, the archive's own keys are used, which
        /// proves the file whole but not who made it.
        #[arg(long, value_name = "KEYS")]
        keys: Option<PathBuf>,
    },
    /// Write an auditor's bundle of one register's closed days: the signed archive, the keys,
    /// the verifier's report, the sequence report of each chain, the FEC, the e-reporting file,
    /// their reconciliation per day and VAT rate, and a signed manifest of SHA-256 sums.
    /// Exits 1 when the archive or the reconciliation does not hold.
    Bundle {
        #[arg(long)]
        register: String,
        /// The first day, `YYYY-MM-DD` in the store's time zone.
        #[arg(long)]
        from: jiff::civil::Date,
        /// The last day, inclusive: today at the latest, in the store's time zone.
        #[arg(long)]
        to: jiff::civil::Date,
        /// The folder to write: a new one, created with its missing parents, or an empty one;
        /// an existing file, link or folder holding anything is refused.
        #[arg(long)]
        out: PathBuf,
    },
    /// Check a bundle offline: the manifest's signature and sums, the archive, the
    /// reconciliation made again from its files; exits 1 on a failure.
    VerifyBundle {
        /// The bundle's folder.
        dir: PathBuf,
        /// The JWK set GET /v1/fiscal/keys answered, saved by the auditor; without it, the
        /// bundle's own keys.json is used.
        #[arg(long, value_name = "KEYS")]
        keys: Option<PathBuf>,
    },
    /// Check the proof a receipt prints as a QR code (`TILL1:...`) against the published keys,
    /// offline: says which register, ticket, total and time it proves; exits 1 when it does
    /// not verify.
    VerifyReceipt {
        /// The QR code's text, as a scanner reads it.
        text: String,
        /// The JWK set GET /v1/fiscal/keys answered, saved by whoever checks.
        #[arg(long, value_name = "KEYS")]
        keys: PathBuf,
    },
    /// Write a new signing key, then point TILL_FISCAL_KEY_FILE at it and restart: new entries
    /// use it, older ones still verify with the key that signed them.
    NewKey {
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Subcommand)]
enum CatalogAction {
    /// Create or replace the articles of an NDJSON file, one per line with the fields of an
    /// item of POST /v1/catalog/import, a chunk per transaction. A bad line (not an article,
    /// longer than 64 KiB, or an id or a barcode an earlier line gave) stops the import with
    /// exit code 1 and its line number; the articles before it are written, and running the
    /// import again on the corrected file is safe.
    Import {
        /// The NDJSON file.
        file: PathBuf,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    return_large_allocations_to_the_system();
    let cli = Cli::parse();
    let mut overrides = Overrides {
        database_url: cli.database_url.clone(),
        data_dir: cli.data_dir.clone(),
        ..Overrides::default()
    };
    match &cli.command {
        Command::Serve { listen, log_format, .. } => {
            overrides.listen = listen.clone();
            overrides.log_format = log_format.clone();
        }
        Command::Demo { listen } => overrides.listen = listen.clone(),
        Command::Migrate
        | Command::Token { .. }
        | Command::Fiscal { .. }
        | Command::Catalog { .. }
        | Command::Mcp { .. } => {}
    }
    let config = Config::load(cli.config.as_deref(), &overrides).context("invalid configuration")?;
    init_logging(&config);
    match cli.command {
        Command::Serve { demo, .. } => serve(config, demo).await,
        Command::Demo { .. } => serve(config, true).await,
        Command::Migrate => {
            server::prepare(&config, Arc::new(SystemClock)).await?;
            println!("database at {} is up to date", server::redact(&config.database_url()));
            Ok(())
        }
        Command::Fiscal { action } => {
            let holds = match action {
                FiscalAction::Verify { register } => fiscal::verify(&config, register.as_deref()).await?,
                FiscalAction::VerifyArchive { file, keys } => fiscal::verify_archive(&file, keys.as_deref())?,
                FiscalAction::Bundle {
                    register,
                    from,
                    to,
                    out,
                } => {
                    if to < from {
                        bail!("--to must not be before --from");
                    }
                    if (to - from).get_days() >= 366 {
                        bail!("--to must be less than a year after --from");
                    }
                    bundle::make(&config, &register, from, to, &out).await?
                }
                FiscalAction::VerifyBundle { dir, keys } => bundle::verify(&dir, keys.as_deref())?,
                FiscalAction::VerifyReceipt { text, keys } => fiscal::verify_receipt(&text, &keys)?,
                FiscalAction::NewKey { out } => {
                    let key_id = fiscal::new_key(&out)?;
                    println!("{}: new key {key_id}", out.display());
                    true
                }
            };
            if !holds {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Catalog {
            action: CatalogAction::Import { file },
        } => {
            let options = till_store::StoreOptions {
                sqlite_writer_cache_mib: catalog_import::SQLITE_CACHE_MIB,
                ..config.store_options()
            };
            let store = server::open_store_with(&config, options).await?;
            let (imported, took) = catalog_import::import_file(&store, &file).await?;
            println!("{}", catalog_import::summary(imported, took));
            store.close().await;
            Ok(())
        }
        Command::Mcp { token } => {
            let config = with_dev_secret(config);
            // The same state as `serve` builds, so that a tool behaves as the API does.
            let service = server::prepare(&config, Arc::new(SystemClock)).await?;
            let served = till_api::mcp::serve_stdio(service.state.clone(), token).await;
            service.store.close().await;
            served.map_err(|error| anyhow::anyhow!("till mcp: {error}"))
        }
        Command::Token { sub, scope, ttl } => {
            let config = with_dev_secret(config);
            let Some(secret) = config.jwt_secret.clone() else {
                bail!(
                    "TILL_JWT_SECRET is not set and {} holds no development secret; `till token` signs \
                     with one of them (`till serve --demo` makes the second)",
                    config.data_dir.join(demo::DEV_SECRET_FILE).display()
                );
            };
            let jwt = token::mint(
                &secret,
                &config.jwt_issuer,
                &config.jwt_audience,
                &sub,
                &scope,
                jiff::Timestamp::now(),
                Duration::from_secs(ttl),
            );
            println!("{jwt}");
            Ok(())
        }
    }
}

/// `config` with the data directory's development secret where no identity provider is set,
/// so that `till token` and `till mcp` work beside a demo as they are, given its `--data-dir`.
fn with_dev_secret(mut config: Config) -> Config {
    if !has_identity_provider(&config) {
        config.jwt_secret = demo::existing_dev_secret(&config.data_dir);
    }
    config
}

fn has_identity_provider(config: &Config) -> bool {
    config.jwt_secret.is_some() || config.jwt_jwks_url.is_some() || config.jwt_jwks_file.is_some()
}

async fn serve(mut config: Config, demo: bool) -> anyhow::Result<()> {
    if demo && config.jwt_secret.is_none() {
        config.jwt_secret = Some(demo::dev_secret(&config.data_dir)?);
    }
    if !has_identity_provider(&config) {
        tracing::warn!(
            "no identity provider is set: every request that needs a token is refused with 401. In \
             production set TILL_JWT_JWKS_URL (or TILL_JWT_JWKS_FILE) to your identity provider's \
             keys. To try till, set TILL_JWT_SECRET to a long random string and mint a first admin \
             token with: till token --sub admin --scope \"{}\" (or run `till serve --demo`)",
            till_core::grant::GrantSet::all().to_words()
        );
    }
    let transport = server::transport(&config).await?;
    let server::Service { state, store } = server::prepare(&config, Arc::new(SystemClock)).await?;
    let listener = tokio::net::TcpListener::bind(&config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let addr = listener.local_addr()?;
    let scheme = transport.scheme();
    tracing::info!(%addr, scheme, database = store.engine().as_str(), "till is serving");
    if demo {
        let session = demo::seed(&state, &store, &config)
            .await
            .context("cannot load the demo data")?;
        let mail = config.smtp_url.as_deref().map(server::redact);
        print_demo(&format!("{scheme}://{addr}"), &session, mail.as_deref());
    }
    server::serve(listener, state, transport, shutdown_signal()).await?;
    tracing::info!("till stopped");
    Ok(())
}

/// Prints the demo's banner, its first sale command last (the tests read up to it). A closed
/// standard output (`till serve --demo | head`) leaves the service running.
fn print_demo(url: &str, session: &demo::DemoSession, mail: Option<&str>) {
    let e_receipts = match mail {
        Some(mail) => format!(
            "E-receipts go through {mail}: the console's sale page sends one, as does\n\
             POST $TILL/v1/sales/{{transactionId}}/receipt/send with {{\"email\": \"you@example.org\"}}."
        ),
        None => "E-receipts are off. To try them, start a local SMTP sink that prints what it gets\n\
                 (python3 -m aiosmtpd -n -l 127.0.0.1:2525 -c aiosmtpd.handlers.Debugging) and the demo with\n\
                 TILL_SMTP_URL=smtp://127.0.0.1:2525 TILL_SMTP_FROM=demo@example.org."
            .to_owned(),
    };
    let banner = format!(
        "\ntill demo is ready on {url}\n\n\
         Paste these into your shell:\n\n\
         export TILL={url}\n\
         export TILL_TOKEN={admin}\n\
         export TILL_SESSION={session_id}\n\
         export TILL_SESSION_TOKEN={session_token}\n\n\
         TILL_TOKEN is a back-office token with every scope (24 h). TILL_SESSION_TOKEN is the till\n\
         {register} of store {store}, opened by cashier {cashier} (PIN {cashier_pin}); manager {manager} has PIN {manager_pin}.\n\
         Gift card {card} holds {card_euros}.{card_cents:02}; customer {customer} has {points} loyalty points.\n\n\
         The console, in a browser (sign in with TILL_TOKEN; the day's earlier sales were rung on {morning}):\n\n\
         # console: {url}/console\n\n\
         The till, in a browser: this address pairs it with register {web_register} (its device token, 24 h),\n\
         then cashier {cashier} opens a session there with PIN {cashier_pin}:\n\n\
         # till: {url}/till#pair={device}&store={store}&register={web_register}\n\n\
         {e_receipts}\n\n\
         A first sale, two baguettes and a mug paid in cash:\n\n{sale}\n",
        admin = session.admin_token,
        session_id = session.session_id,
        session_token = session.token,
        device = session.device_token,
        web_register = demo::WEB_REGISTER,
        register = demo::REGISTER,
        morning = demo::MORNING_REGISTER,
        store = demo::STORE,
        cashier = demo::CASHIER,
        cashier_pin = demo::CASHIER_PIN,
        manager = demo::MANAGER,
        manager_pin = demo::MANAGER_PIN,
        card = demo::GIFT_CARD,
        card_euros = demo::GIFT_CARD_CENTS / 100,
        card_cents = demo::GIFT_CARD_CENTS % 100,
        customer = demo::REGULAR_CUSTOMER,
        points = demo::REGULAR_CUSTOMER_POINTS,
        sale = demo::first_sale_command(),
    );
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
}

fn init_logging(config: &Config) {
    let filter = EnvFilter::try_new(&config.log).unwrap_or_else(|_| EnvFilter::new("info"));
    // Colour codes only for a person at a terminal, never into a file or a log collector.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    if config.log_format == LogFormat::Json {
        builder.json().flatten_event(true).init();
    } else {
        builder.init();
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutdown requested; finishing requests in flight");
}

/// Rust's allocations go to mimalloc. A sale allocates and frees many small objects, often
/// on different runtime threads, and under load glibc's allocator spent a large share of the
/// node's time in malloc and free and in waits on its arena locks; with mimalloc the node
/// serves more sales on both engines (docs/performance.md, "mimalloc and immediate purge").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `purge_delay` option, by its place in `mi_option_t` (mimalloc.h, v3); the sys
/// crate names only some options.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Freed memory goes back to the system at once. Each PIN check (argon2id) takes a large
/// block; mimalloc would otherwise keep freed memory resident for a while (its default), and
/// glibc (SQLite's allocator) would keep such blocks in per-thread arenas for good once its
/// adaptive mmap threshold had risen past them. Under the benchmark's load, mimalloc's default
/// put peak RSS over the memory target and immediate purging keeps it under
/// (docs/performance.md, "mimalloc and immediate purge").
fn return_large_allocations_to_the_system() {
    // SAFETY: mi_option_set stores an option value; it touches no memory of ours.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt sets an allocator parameter under the allocator's own lock; it touches
    // no memory of ours.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_set_at_start_is_mimallocs_purge_delay() {
        // Found by its place in an enum the sys crate does not name: v3's purge_delay is the
        // one with a default of 1,000 ms there. Another place means another option.
        // SAFETY: reading and storing option values touches no memory of ours.
        unsafe {
            assert_eq!(libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY), 1_000);
            return_large_allocations_to_the_system();
            assert_eq!(libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY), 0);
        }
    }
}
