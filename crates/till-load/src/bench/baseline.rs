//! The baseline: the engine's raw durable commit rate on the same disk, measured in the same
//! run, and the databases a run works in: PostgreSQL's created, and prefilled ones copied.

use super::{BenchPlan, Pace, engine_of};
use anyhow::{Context, Result, ensure};
use sqlx::{Connection, Executor};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// One measurement of the baseline.
pub(super) struct Rate {
    pub(super) method: String,
    pub(super) per_second: f64,
}

pub(super) async fn measure(plan: &BenchPlan) -> Result<Rate> {
    let seconds = plan.duration.as_secs().clamp(3, 30);
    match engine_of(&plan.database_url) {
        "sqlite" => sqlite_commit_rate(plan, Duration::from_secs(seconds)).await,
        _ => {
            let clients = match plan.pace {
                Pace::Closed { clients } => clients,
                Pace::Open { .. } => 16,
            };
            pgbench(&plan.database_url, clients, seconds).await
        }
    }
}

/// One single-row insert per durable transaction (WAL, synchronous=FULL), on the disk that
/// holds the benchmark's database: how many times a second this disk makes a commit durable.
/// Through SQLite's own library on a blocking thread of its own, as till's writer does, so that
/// no driver's overhead lowers the rate the sales are held against.
async fn sqlite_commit_rate(plan: &BenchPlan, window: Duration) -> Result<Rate> {
    let file = plan.work_dir.join("baseline.db");
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(file.with_extension("db-wal"));
    let _ = std::fs::remove_file(file.with_extension("db-shm"));
    let per_second = tokio::task::spawn_blocking(move || -> Result<f64> {
        let conn = rusqlite::Connection::open(&file)?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
             CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)",
        )?;
        let mut insert = conn.prepare("INSERT INTO t (v) VALUES (?1)")?;
        let started = Instant::now();
        let mut commits = 0i64;
        while started.elapsed() < window {
            insert.execute([commits])?;
            commits += 1;
        }
        Ok(commits as f64 / started.elapsed().as_secs_f64())
    })
    .await??;
    Ok(Rate {
        method: "SQLite, WAL, synchronous=FULL: one single-row INSERT per transaction, one connection".into(),
        per_second,
    })
}

/// pgbench's built-in TPC-B-like script on a database of its own in the same cluster, at
/// `clients` clients, scale factor = clients (so its rows are not one hot spot).
async fn pgbench(database_url: &str, clients: usize, seconds: u64) -> Result<Rate> {
    let binary = find_pgbench().context("pgbench not found (install postgresql-client or its server binaries)")?;
    sqlx::any::install_default_drivers();
    let database = format!("till_pgbench_{}", std::process::id());
    let (base, _) = split_database(database_url)?;
    let mut admin = sqlx::AnyConnection::connect(&format!("{base}/postgres")).await?;
    admin
        .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {database}")))
        .await?;
    let url = format!("{base}/{database}");
    let init = tokio::process::Command::new(&binary)
        .args(["-i", "-q", "-s", &clients.to_string(), &url])
        .output()
        .await?;
    ensure!(
        init.status.success(),
        "pgbench -i: {}",
        String::from_utf8_lossy(&init.stderr)
    );
    let run = tokio::process::Command::new(&binary)
        .args([
            "-n",
            "-c",
            &clients.to_string(),
            "-j",
            &clients.min(4).to_string(),
            "-T",
            &seconds.to_string(),
            &url,
        ])
        .output()
        .await?;
    let out = String::from_utf8_lossy(&run.stdout).to_string();
    ensure!(
        run.status.success(),
        "pgbench: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let tps = out
        .lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l.trim_start_matches("tps = ").split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok())
        .with_context(|| format!("no tps in pgbench's output: {out}"))?;
    let _ = admin
        .execute(sqlx::AssertSqlSafe(format!("DROP DATABASE {database}")))
        .await;
    admin.close().await?;
    Ok(Rate {
        method: format!("pgbench TPC-B-like, {clients} clients, scale {clients}, same cluster"),
        per_second: tps,
    })
}

/// The cluster's URL and the database named at the end of `url`.
fn split_database(url: &str) -> Result<(&str, &str)> {
    let (base, database) = url.rsplit_once('/').context("a database URL ending in /DATABASE")?;
    let database = database.split('?').next().unwrap_or_default();
    ensure!(
        !database.is_empty() && database.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
        "the database name must be letters, digits and underscores"
    );
    Ok((base, database))
}

/// The benchmark runs on a database of its own: created when absent, through the cluster's
/// `postgres` database.
pub(crate) async fn create_postgres_database(url: &str) -> Result<()> {
    sqlx::any::install_default_drivers();
    let (base, database) = split_database(url)?;
    let mut admin = sqlx::AnyConnection::connect(&format!("{base}/postgres")).await?;
    let exists = sqlx::query("SELECT 1 FROM pg_database WHERE datname = $1")
        .bind(database)
        .fetch_optional(&mut admin)
        .await?
        .is_some();
    if !exists {
        admin
            .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {database}")))
            .await?;
    }
    admin.close().await?;
    Ok(())
}

/// Asks PostgreSQL for a checkpoint now, so that a measured window starts from one, whatever
/// the windows before it wrote. A checkpoint PostgreSQL starts on its own when the WAL grows
/// makes the writes after it log whole pages, and would fall on whichever window the volume of
/// WAL reached it in. Needs a role allowed to checkpoint; without one, a warning.
pub(crate) async fn checkpoint(url: &str) -> Result<()> {
    let (base, _) = split_database(url)?;
    let mut admin = sqlx::AnyConnection::connect(&format!("{base}/postgres")).await?;
    if let Err(error) = admin.execute("CHECKPOINT").await {
        eprintln!("till-load: no checkpoint before the window ({error}); checkpoints fall where they may");
    }
    admin.close().await?;
    Ok(())
}

fn find_pgbench() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("pgbench"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("bin/pgbench"))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        found.pop()
    })
}

/// A fresh copy of the database at `from` (a prefilled one, closed) at `to`, replacing what was
/// there: SQLite's file and its log copied, PostgreSQL's database created from `from` as a
/// template (no one may be connected to `from`).
pub(crate) async fn copy_database(from: &str, to: &str) -> Result<()> {
    match (sqlite_path(from), sqlite_path(to)) {
        (Some(from), Some(to)) => {
            for suffix in ["", "-wal", "-shm"] {
                let (source, target) = (format!("{from}{suffix}"), format!("{to}{suffix}"));
                let _ = std::fs::remove_file(&target);
                if std::path::Path::new(&source).exists() {
                    std::fs::copy(&source, &target).with_context(|| format!("copying {source} to {target}"))?;
                }
            }
            Ok(())
        }
        (None, None) => {
            sqlx::any::install_default_drivers();
            let (base, source) = split_database(from)?;
            let (target_base, target) = split_database(to)?;
            ensure!(base == target_base, "a PostgreSQL copy stays on the same cluster");
            let mut admin = sqlx::AnyConnection::connect(&format!("{base}/postgres")).await?;
            admin
                .execute(sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS {target}")))
                .await?;
            admin
                .execute(sqlx::AssertSqlSafe(format!(
                    "CREATE DATABASE {target} TEMPLATE {source}"
                )))
                .await?;
            admin.close().await?;
            Ok(())
        }
        _ => anyhow::bail!("a database is copied to the same engine"),
    }
}

/// Writes back what a copy left to write: PostgreSQL's checkpoint of the new database, then the
/// operating system's dirty pages, so that the runs after it start on a quiet disk.
pub(crate) async fn settle(url: &str) -> Result<()> {
    if sqlite_path(url).is_none() {
        checkpoint(url).await?;
    }
    tokio::task::spawn_blocking(|| {
        // SAFETY: sync(2) takes no arguments and cannot fail.
        unsafe { libc::sync() }
    })
    .await?;
    Ok(())
}

/// The file of a `sqlite://` URL.
fn sqlite_path(url: &str) -> Option<&str> {
    let path = url.strip_prefix("sqlite://")?;
    Some(path.split('?').next().unwrap_or(path))
}

/// Removes a copy made by [`copy_database`]: SQLite's files, or PostgreSQL's database. A copy
/// of a prefilled database is as large as it, and a series of runs would fill the disk.
pub(crate) async fn remove_copy(url: &str) -> Result<()> {
    if let Some(path) = sqlite_path(url) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{path}{suffix}"));
        }
        return Ok(());
    }
    sqlx::any::install_default_drivers();
    let (base, database) = split_database(url)?;
    let mut admin = sqlx::AnyConnection::connect(&format!("{base}/postgres")).await?;
    admin
        .execute(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS {database} WITH (FORCE)"
        )))
        .await?;
    admin.close().await?;
    Ok(())
}

/// The sales a database holds.
pub(crate) async fn count_sales(url: &str) -> Result<u64> {
    sqlx::any::install_default_drivers();
    let mut connection = sqlx::AnyConnection::connect(url).await?;
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM sales")
        .fetch_one(&mut connection)
        .await?;
    connection.close().await?;
    Ok(u64::try_from(count).unwrap_or(0))
}
