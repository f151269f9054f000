//! The crash test: tills selling without pause while nodes are SIGKILLed and started again,
//! over and over; then the proof that nothing was lost or booked twice. Every sale a till
//! sends is sent again until acknowledged, as a real till must, so at the end every sale is
//! acknowledged exactly once, and the database must hold exactly those sales, their stock
//! movements and their gapless, verifiable tickets.

use super::client::Client;
use super::cluster::{Cluster, NodeConfig};
use super::shop::{Shop, ShopSpec, admin_token, provision};
use anyhow::{Context, Result, bail, ensure};
use futures::StreamExt;
use sqlx::{Connection, Row};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use till::config::Config;

#[derive(Clone, Debug)]
pub struct CrashPlan {
    /// The `till` binary.
    pub binary: PathBuf,
    /// `sqlite://...` or `postgres://...`; the database must be new.
    pub database_url: String,
    pub nodes: usize,
    pub cycles: usize,
    pub tills: usize,
    pub articles: usize,
    pub work_dir: PathBuf,
    pub seed: u64,
}

/// What a run did and found.
#[derive(Clone, Debug, Default)]
pub struct CrashReport {
    pub kills: usize,
    pub sales: usize,
    /// Sends beyond the first, over all sales: the sales a kill interrupted.
    pub resends: u64,
    pub elapsed: Duration,
}

/// A sale as its till remembers it once acknowledged.
struct Booked {
    transaction_id: String,
    register: String,
    lines: Vec<(usize, i64)>,
    body: String,
}

pub async fn run(plan: &CrashPlan) -> Result<CrashReport> {
    let started = Instant::now();
    std::fs::create_dir_all(&plan.work_dir)?;
    let key_file = plan.work_dir.join("fiscal-key.pem");
    till::fiscal::new_key(&key_file)?;
    let secret = format!("crash-test-secret-{}", plan.seed);
    let config = NodeConfig {
        binary: plan.binary.clone(),
        database_url: plan.database_url.clone(),
        jwt_secret: secret.clone(),
        fiscal_key_file: key_file.clone(),
        env: vec![("TILL_SQLITE_SYNCHRONOUS".into(), "full".into())],
        work_dir: plan.work_dir.clone(),
    };
    let mut cluster = Cluster::start(config, plan.nodes).await?;
    let client = Client::new(cluster.urls())?;
    let admin = admin_token(&secret);
    let shop = Arc::new(
        provision(
            &client,
            &admin,
            &ShopSpec {
                store: "crash-store".into(),
                articles: plan.articles,
                stock: Some(1_000_000),
                registers: plan.tills,
                cashier_discount_bps: None,
            },
        )
        .await?,
    );

    let stop = Arc::new(AtomicBool::new(false));
    let tills: Vec<_> = (0..plan.tills)
        .map(|t| {
            let (client, shop, stop) = (client.clone(), shop.clone(), stop.clone());
            let seed = plan.seed.wrapping_add(t as u64);
            tokio::spawn(async move { sell_until_stopped(client, shop, t, seed, stop).await })
        })
        .collect();

    let mut rng = fastrand::Rng::with_seed(plan.seed);
    let mut kills = 0;
    for cycle in 0..plan.cycles {
        tokio::time::sleep(Duration::from_millis(rng.u64(20..120))).await;
        let node = &mut cluster.nodes[cycle % plan.nodes];
        node.kill().await?;
        kills += 1;
        node.start()
            .await
            .with_context(|| format!("restart after kill {kills}"))?;
    }
    stop.store(true, Ordering::Relaxed);
    let mut booked = Vec::new();
    let mut resends = 0;
    for till in tills {
        let (sales, extra) = till.await??;
        booked.extend(sales);
        resends += extra;
    }

    check(&client, &admin, &shop, &booked).await?;
    cluster.kill_all().await?;
    audit(&plan.database_url, &plan.work_dir, &key_file).await?;
    Ok(CrashReport {
        kills,
        sales: booked.len(),
        resends,
        elapsed: started.elapsed(),
    })
}

/// One till: sale after sale, each sent until acknowledged, until told to stop.
async fn sell_until_stopped(
    client: Client,
    shop: Arc<Shop>,
    index: usize,
    seed: u64,
    stop: Arc<AtomicBool>,
) -> Result<(Vec<Booked>, u64)> {
    let till = &shop.tills[index];
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut booked, mut resends) = (Vec::new(), 0u64);
    while !stop.load(Ordering::Relaxed) {
        let transaction_id = format!("{}-{}", till.register, booked.len() + 1);
        let lines = shop.random_lines(&mut rng, 4);
        let sale = shop.sale(till, &transaction_id, &lines);
        let ack = client
            .finalize_until_acknowledged(&till.token, &sale, Duration::from_secs(120))
            .await?;
        resends += u64::from(ack.attempts - 1);
        booked.push(Booked {
            transaction_id,
            register: till.register.clone(),
            lines,
            body: ack.body,
        });
    }
    Ok((booked, resends))
}

/// Through the API: every acknowledged sale reads back byte for byte, stock is what the
/// acknowledged sales left, and each register's ticket chain holds exactly its sales and
/// verifies.
async fn check(client: &Client, admin: &str, shop: &Shop, booked: &[Booked]) -> Result<()> {
    let mismatches = futures::stream::iter(booked.iter().map(|sale| async move {
        let read = client.get(&format!("/v1/sales/{}", sale.transaction_id), admin).await?;
        anyhow::Ok((read.status != 200 || read.text != sale.body).then(|| sale.transaction_id.clone()))
    }))
    .buffer_unordered(16)
    .collect::<Vec<_>>()
    .await
    .into_iter()
    .collect::<Result<Vec<_>>>()?;
    let lost: Vec<String> = mismatches.into_iter().flatten().collect();
    ensure!(lost.is_empty(), "acknowledged sales missing or changed: {lost:?}");

    let mut sold = vec![0i64; shop.articles.len()];
    for sale in booked {
        for (article, quantity) in &sale.lines {
            sold[*article] += quantity;
        }
    }
    for (article, quantity) in shop.articles.iter().zip(&sold) {
        let path = format!("/v1/stores/{}/stock/{}", shop.store, article.sku);
        let on_hand = client.get(&path, admin).await?.expect(200, "stock")?.json()["onHand"]
            .as_i64()
            .context("onHand")?;
        ensure!(
            on_hand == shop.initial_stock - quantity,
            "stock of {} is {on_hand}, expected {} - {quantity}",
            article.sku,
            shop.initial_stock
        );
    }

    let mut per_register: HashMap<&str, i64> = HashMap::new();
    for sale in booked {
        *per_register.entry(sale.register.as_str()).or_default() += 1;
    }
    for till in &shop.tills {
        let path = format!("/v1/fiscal/registers/{}/verify", till.register);
        let verdict = client.get(&path, admin).await?.expect(200, "verify")?.json();
        ensure!(
            verdict["ok"] == true,
            "register {} fails verification: {verdict}",
            till.register
        );
        let tickets = verdict["chains"]["ticket"].as_i64().unwrap_or(0);
        let expected = per_register.get(till.register.as_str()).copied().unwrap_or(0);
        ensure!(
            tickets == expected,
            "register {} has {tickets} tickets for {expected} acknowledged sales",
            till.register
        );
    }
    Ok(())
}

/// Straight on the database, with every node down: the full fiscal audit as `till fiscal
/// verify` runs it, no ticket sequence missing or taken twice, and on SQLite the file's own
/// integrity check.
async fn audit(database_url: &str, work_dir: &std::path::Path, key_file: &std::path::Path) -> Result<()> {
    let config = Config {
        database_url: Some(database_url.to_owned()),
        data_dir: work_dir.join("audit"),
        fiscal_key_file: Some(key_file.to_path_buf()),
        ..Config::default()
    };
    ensure!(till::fiscal::verify(&config, None).await?, "the fiscal audit failed");
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(database_url).await?;
    let chains = sqlx::query(
        "SELECT register_id, COUNT(*) AS entries, COUNT(DISTINCT seq) AS seqs, MAX(seq) AS last \
         FROM fiscal_entries WHERE kind = 'ticket' GROUP BY register_id",
    )
    .fetch_all(&mut conn)
    .await?;
    for row in &chains {
        let (register, entries, seqs, last): (String, i64, i64, i64) = (
            row.try_get("register_id")?,
            row.try_get("entries")?,
            row.try_get("seqs")?,
            row.try_get("last")?,
        );
        ensure!(
            entries == seqs && seqs == last,
            "register {register}: {entries} tickets, {seqs} distinct sequences, last {last}"
        );
    }
    let sales: i64 = sqlx::query("SELECT COUNT(*) AS n FROM sales WHERE fiscal_seq = 0")
        .fetch_one(&mut conn)
        .await?
        .try_get("n")?;
    ensure!(sales == 0, "{sales} sales without a ticket");
    if database_url.starts_with("sqlite:") {
        let verdict: String = sqlx::query("PRAGMA integrity_check")
            .fetch_one(&mut conn)
            .await?
            .try_get(0)?;
        if verdict != "ok" {
            bail!("SQLite integrity check: {verdict}");
        }
    }
    conn.close().await?;
    Ok(())
}
