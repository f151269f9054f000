//! The crash test: tills selling without pause while nodes are SIGKILLed and started again,
//! over and over; then the proof that nothing was lost or booked twice. Every sale a till
//! sends is sent again until acknowledged, as a real till must, so at the end every sale is
//! acknowledged exactly once, and the database must hold exactly those sales, their stock
//! movements and their gapless, verifiable tickets, and the event feed exactly their events,
//! once each, without a gap.
//!
//! With stored value, sales are also paid partly with gift cards of a pool and with customers'
//! points; then every card's ledger must hold exactly one redemption per acknowledged sale that
//! spent it, of its amount, and no other, its balance what was issued less those; every
//! customer's points what they earned less what acknowledged sales spent, the points ledger
//! holding exactly those redemptions.

use super::client::Client;
use super::cluster::{Cluster, NodeConfig};
use super::shop::{Shop, ShopSpec, Till, admin_token, provision};
use super::stored_value::{Budget, Spend, gift_card_share, issue_cards, loyalty_share, point_value, points_of};
use anyhow::{Context, Result, bail, ensure};
use futures::StreamExt;
use serde_json::Value;
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
    /// Sales pay partly with gift cards and points too.
    pub stored_value: bool,
}

/// What a run did and found.
#[derive(Clone, Debug, Default)]
pub struct CrashReport {
    pub kills: usize,
    pub sales: usize,
    /// Sends beyond the first, over all sales: the sales a kill interrupted.
    pub resends: u64,
    /// Acknowledged sales paid partly with a gift card, and partly with points.
    pub gift_card_sales: usize,
    pub loyalty_sales: usize,
    pub elapsed: Duration,
}

/// A sale as its till remembers it once acknowledged.
struct Booked {
    transaction_id: String,
    register: String,
    lines: Vec<(usize, i64)>,
    body: String,
    customer: Option<String>,
    spend: Option<Spend>,
}

/// Gift cards in the pool, each of [`CARD_BALANCE_CENTS`]: a few, so that tills race for
/// the same card, and small enough that some run out during a long run.
const CARDS: usize = 8;
const CARD_BALANCE_CENTS: i64 = 200_000;

/// Customers who spend points, each given them by a sale of [`POINTS_QUANTITY`] units.
const LOYALTY_CUSTOMERS: usize = 4;
const POINTS_QUANTITY: i64 = 100_000;

/// The stored value the tills spend, and what each instrument may still give.
struct Pool {
    cards: Vec<(String, Budget)>,
    /// Each customer with the points it may still spend.
    customers: Vec<(String, Budget)>,
    /// Each customer's points once it earned them, before the tills started.
    points_before: Vec<i64>,
    point_value: i64,
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
    let mut booked = Vec::new();
    let pool = if plan.stored_value {
        let (pool, earning) = stored_value_pool(&client, &admin, &shop).await?;
        booked.extend(earning);
        Some(Arc::new(pool))
    } else {
        None
    };

    let stop = Arc::new(AtomicBool::new(false));
    let tills: Vec<_> = (0..plan.tills)
        .map(|t| {
            let (client, shop, stop, pool) = (client.clone(), shop.clone(), stop.clone(), pool.clone());
            let seed = plan.seed.wrapping_add(t as u64);
            tokio::spawn(async move { sell_until_stopped(client, shop, pool, t, seed, stop).await })
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
    let mut resends = 0;
    for till in tills {
        let (sales, extra) = till.await??;
        booked.extend(sales);
        resends += extra;
    }

    check(&client, &admin, &shop, &booked).await?;
    check_feed(&client, &admin, &booked).await?;
    if let Some(pool) = &pool {
        check_stored_value(&client, &admin, pool, &booked).await?;
    }
    cluster.kill_all().await?;
    audit(&plan.database_url, &plan.work_dir, &key_file).await?;
    if let Some(pool) = &pool {
        audit_points_ledger(&plan.database_url, pool, &booked).await?;
    }
    let paid = |kind: fn(&Spend) -> bool| booked.iter().filter(|b| b.spend.as_ref().is_some_and(kind)).count();
    Ok(CrashReport {
        kills,
        sales: booked.len(),
        resends,
        gift_card_sales: paid(|spend| matches!(spend, Spend::GiftCard { .. })),
        loyalty_sales: paid(|spend| matches!(spend, Spend::Loyalty { .. })),
        elapsed: started.elapsed(),
    })
}

/// Issues the pool's cards and gives its customers points, each by a sale on the first till,
/// before any node is killed: answers the pool and those sales.
async fn stored_value_pool(client: &Client, admin: &str, shop: &Shop) -> Result<(Pool, Vec<Booked>)> {
    let codes = issue_cards(client, admin, CARDS, CARD_BALANCE_CENTS).await?;
    let till = &shop.tills[0];
    let (mut customers, mut points_before, mut booked) = (Vec::new(), Vec::new(), Vec::new());
    for n in 0..LOYALTY_CUSTOMERS {
        let customer = format!("crash-customer-{n}");
        let transaction_id = format!("points-{n}");
        let lines = vec![(n % shop.articles.len(), POINTS_QUANTITY)];
        let sale = shop.sale_paying(till, &transaction_id, &lines, Some(&customer), None);
        let ack = client
            .finalize_until_acknowledged(&till.token, &sale, Duration::from_secs(120))
            .await?;
        let points = points_of(client, admin, &customer).await?;
        ensure!(
            points > 0,
            "{customer} earned no points at a sale of {}",
            shop.total(&lines)
        );
        booked.push(Booked {
            transaction_id,
            register: till.register.clone(),
            lines,
            body: ack.body,
            customer: Some(customer.clone()),
            spend: None,
        });
        customers.push((customer, Budget::new(points)));
        points_before.push(points);
    }
    let pool = Pool {
        cards: codes
            .into_iter()
            .map(|code| (code, Budget::new(CARD_BALANCE_CENTS)))
            .collect(),
        customers,
        points_before,
        point_value: point_value(&[])?,
    };
    Ok((pool, booked))
}

impl Pool {
    /// Picks how a sale of `total` is paid: a third partly with a card of the pool, a third
    /// partly with a customer's points, the rest by card alone; by card alone too when the
    /// instrument picked has not enough left. Its share is taken from the instrument's budget.
    fn pick(&self, rng: &mut fastrand::Rng, total: i64) -> (Option<String>, Option<Spend>) {
        match rng.u8(0..3) {
            0 => {
                let (code, budget) = &self.cards[rng.usize(0..self.cards.len())];
                match gift_card_share(total) {
                    Some(applied) if budget.take(applied) => (
                        None,
                        Some(Spend::GiftCard {
                            code: code.clone(),
                            applied,
                        }),
                    ),
                    _ => (None, None),
                }
            }
            1 => {
                let (customer, budget) = &self.customers[rng.usize(0..self.customers.len())];
                match loyalty_share(total, self.point_value) {
                    Some(applied) if budget.take(applied / self.point_value) => {
                        (Some(customer.clone()), Some(Spend::Loyalty { applied }))
                    }
                    _ => (Some(customer.clone()), None),
                }
            }
            _ => (None, None),
        }
    }

    /// Adds what an acknowledged sale of `customer` earned, as its 201 `body` says, to what
    /// they may spend.
    fn earned(&self, customer: &str, body: &str) -> Result<()> {
        let earned = points_earned(body)?;
        if let Some((_, budget)) = self.customers.iter().find(|(name, _)| name == customer) {
            budget.give(earned);
        }
        Ok(())
    }
}

/// The points a sale earned, from its 201 body.
fn points_earned(body: &str) -> Result<i64> {
    let ack: serde_json::Value = serde_json::from_str(body)?;
    ack["loyalty"]["pointsEarned"]
        .as_i64()
        .context("a sale for a customer without pointsEarned")
}

/// One till: sale after sale, each sent until acknowledged, until told to stop.
async fn sell_until_stopped(
    client: Client,
    shop: Arc<Shop>,
    pool: Option<Arc<Pool>>,
    index: usize,
    seed: u64,
    stop: Arc<AtomicBool>,
) -> Result<(Vec<Booked>, u64)> {
    let till: &Till = &shop.tills[index];
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut booked, mut resends) = (Vec::new(), 0u64);
    while !stop.load(Ordering::Relaxed) {
        let transaction_id = format!("{}-{}", till.register, booked.len() + 1);
        let lines = shop.random_lines(&mut rng, 4);
        let (customer, spend) = match &pool {
            Some(pool) => pool.pick(&mut rng, shop.total(&lines)),
            None => (None, None),
        };
        let sale = shop.sale_paying(till, &transaction_id, &lines, customer.as_deref(), spend.as_ref());
        let ack = client
            .finalize_until_acknowledged(&till.token, &sale, Duration::from_secs(120))
            .await?;
        resends += u64::from(ack.attempts - 1);
        if let (Some(pool), Some(customer)) = (&pool, &customer) {
            pool.earned(customer, &ack.body)?;
        }
        booked.push(Booked {
            transaction_id,
            register: till.register.clone(),
            lines,
            body: ack.body,
            customer,
            spend,
        });
    }
    Ok((booked, resends))
}

/// The sum of the movements in the stock ledger at `level_path` (a level's path), every page.
async fn ledger_sum(client: &Client, admin: &str, level_path: &str) -> Result<i64> {
    let mut sum = 0i64;
    let mut cursor: Option<String> = None;
    loop {
        let mut path = format!("{level_path}/movements?limit=500");
        if let Some(cursor) = &cursor {
            path.push_str(&format!("&cursor={cursor}"));
        }
        let page = client.get(&path, admin).await?.expect(200, "stock movements")?.json();
        for movement in page["items"].as_array().context("items")? {
            sum += movement["deltaQuantity"].as_i64().context("deltaQuantity")?;
        }
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return Ok(sum),
        }
    }
}

/// Through the API: every acknowledged sale reads back byte for byte, stock is what the
/// acknowledged sales left and the sum of its ledger, and each register's ticket chain holds
/// exactly its sales and verifies.
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
        let ledger = ledger_sum(client, admin, &path).await?;
        ensure!(
            ledger == on_hand,
            "the ledger of {} adds up to {ledger}, its level is {on_hand}",
            article.sku
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

/// Through the API: the event feed, read from its start by `nextCursor`, holds each
/// acknowledged sale's event once, with the answer the till got, and no other sale; its
/// positions run without a gap. On PostgreSQL the last commits are numbered within moments, so
/// the feed is read again until every sale is there, for at most half a minute.
async fn check_feed(client: &Client, admin: &str, booked: &[Booked]) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let (mut after, mut events) = ("0".to_owned(), Vec::new());
    loop {
        let page = client
            .get(&format!("/v1/events?after={after}&limit=1000"), admin)
            .await?
            .expect(200, "a page of the event feed")?
            .json();
        let read = page["events"].as_array().context("events")?.clone();
        after = page["nextCursor"].as_str().context("nextCursor")?.to_owned();
        let sales = events.iter().filter(|e: &&Value| e["type"] == "sale.completed").count();
        if read.is_empty() && (sales >= booked.len() || Instant::now() > deadline) {
            break;
        }
        if read.is_empty() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        events.extend(read);
    }
    for (n, event) in events.iter().enumerate() {
        ensure!(
            event["cursor"].as_str() == Some(&(n + 1).to_string()),
            "the feed's event {} has cursor {}: a gap or a repeat",
            n + 1,
            event["cursor"]
        );
    }
    let mut seen: HashMap<String, Value> = HashMap::new();
    for event in events.iter().filter(|e| e["type"] == "sale.completed") {
        let id = event["data"]["transaction"]["id"]
            .as_str()
            .context("a sale event's id")?;
        ensure!(
            seen.insert(id.to_owned(), event["data"].clone()).is_none(),
            "sale {id} is twice in the feed"
        );
    }
    for sale in booked {
        let answered: Value = serde_json::from_str(&sale.body)?;
        match seen.remove(&sale.transaction_id) {
            Some(data) => ensure!(
                data == answered,
                "sale {}'s event differs from its answer",
                sale.transaction_id
            ),
            None => bail!("acknowledged sale {} is not in the feed", sale.transaction_id),
        }
    }
    ensure!(
        seen.is_empty(),
        "the feed has sales nobody acknowledged: {:?}",
        seen.keys()
    );
    Ok(())
}

/// Through the API: each card's ledger holds one redemption per acknowledged sale that spent
/// it, of what it spent, and no other; its balance is its issue less those and its ledger adds
/// up to it. Each customer's points are those earned before the tills started, plus what
/// every acknowledged sale of theirs earned, less what they spent.
async fn check_stored_value(client: &Client, admin: &str, pool: &Pool, booked: &[Booked]) -> Result<()> {
    for (code, _) in &pool.cards {
        let mut spent: Vec<(String, i64)> = booked
            .iter()
            .filter_map(|sale| match &sale.spend {
                Some(Spend::GiftCard { code: used, applied }) if used == code => {
                    Some((sale.transaction_id.clone(), -applied))
                }
                _ => None,
            })
            .collect();
        let card = client
            .get(&format!("/v1/gift-cards/{code}"), admin)
            .await?
            .expect(200, "gift card")?
            .json();
        let activities = card["activities"].as_array().context("a card's activities")?;
        let mut redeemed = Vec::new();
        let (mut issued, mut sum) = (0, 0);
        for activity in activities {
            let amount = activity["amountCents"].as_i64().context("amountCents")?;
            sum += amount;
            match activity["kind"].as_str() {
                Some("issue") => issued += amount,
                Some("redeem") => redeemed.push((
                    activity["transactionId"].as_str().unwrap_or_default().to_owned(),
                    amount,
                )),
                other => bail!("card ****{}: unexpected activity {other:?}", tail(code)),
            }
        }
        spent.sort();
        redeemed.sort();
        ensure!(
            redeemed == spent,
            "card ****{}: its ledger redeems {redeemed:?}, the acknowledged sales spent {spent:?}",
            tail(code)
        );
        let balance = card["balanceCents"].as_i64().context("balanceCents")?;
        let left = CARD_BALANCE_CENTS + spent.iter().map(|(_, amount)| amount).sum::<i64>();
        ensure!(
            issued == CARD_BALANCE_CENTS && balance == left && sum == balance,
            "card ****{}: issued {issued}, balance {balance}, ledger sum {sum}, expected {left}",
            tail(code)
        );
    }
    for ((customer, _), before) in pool.customers.iter().zip(&pool.points_before) {
        let mut expected = *before;
        for sale in booked.iter().filter(|sale| sale.customer.as_ref() == Some(customer)) {
            if sale.transaction_id.starts_with("points-") {
                continue;
            }
            expected += points_earned(&sale.body)?;
            if let Some(Spend::Loyalty { applied }) = &sale.spend {
                expected -= applied / pool.point_value;
            }
        }
        let points = points_of(client, admin, customer).await?;
        ensure!(
            points == expected,
            "{customer} has {points} points, expected {expected}"
        );
    }
    Ok(())
}

/// The last four symbols of a card's code, as a receipt shows it.
fn tail(code: &str) -> &str {
    &code[code.len().saturating_sub(4)..]
}

/// Straight on the database, with every node down: the points ledger holds one redemption per
/// acknowledged sale that spent points, of those points, and no other.
async fn audit_points_ledger(database_url: &str, pool: &Pool, booked: &[Booked]) -> Result<()> {
    let mut spent: Vec<(String, String, i64)> = booked
        .iter()
        .filter_map(|sale| match (&sale.spend, &sale.customer) {
            (Some(Spend::Loyalty { applied }), Some(customer)) => Some((
                customer.clone(),
                sale.transaction_id.clone(),
                -applied / pool.point_value,
            )),
            _ => None,
        })
        .collect();
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(database_url).await?;
    let rows = sqlx::query("SELECT customer_id, transaction_id, points FROM loyalty_activities WHERE kind = 'redeem'")
        .fetch_all(&mut conn)
        .await?;
    conn.close().await?;
    let mut redeemed = rows
        .iter()
        .map(|row| {
            Ok((
                row.try_get::<String, _>("customer_id")?,
                row.try_get::<Option<String>, _>("transaction_id")?.unwrap_or_default(),
                row.try_get::<i64, _>("points")?,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    spent.sort();
    redeemed.sort();
    ensure!(
        redeemed == spent,
        "the points ledger redeems {redeemed:?}, the acknowledged sales spent {spent:?}"
    );
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
