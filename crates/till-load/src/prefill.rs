//! A database filled with weeks of a shop's sales before a benchmark, so that it measures a
//! deployment that has been selling for a while and not an empty one.
//!
//! The sales go through the server's own path, in this process: a node started with a clock
//! this module moves. Every sale is priced, stored, indexed, sealed in its register's chain and
//! put in the feed as a till's would be, each day's sessions are closed (which writes the
//! report rollups) and each register's day is closed, so the chains verify and the month reads
//! as a real one. Only the HTTP hop to another process and the wall clock are left out, which
//! is what makes it fast: days pass in seconds.

use crate::bench::baseline::create_postgres_database;
use crate::client::Client;
use crate::shop::{Shop, ShopSpec, Till, admin_token, open_session, provision};
use crate::wire::Wire;
use anyhow::{Context, Result, bail, ensure};
use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use till_app::ManualClock;

/// The shop's opening hours, local: sales are spread evenly over them.
const OPENS_AT: i8 = 8;
const HOURS_OPEN: u32 = 12;

/// Customers a fifth of the sales name, `cust-0` onwards (the benchmark's own names).
const CUSTOMERS: usize = 1_000;

/// The zone of the benchmark's store (the default of a store created without one).
const ZONE: &str = "Europe/Paris";

#[derive(Clone, Debug)]
pub struct PrefillPlan {
    pub database_url: String,
    pub sales: u64,
    /// Days the sales are spread over, the last one yesterday.
    pub days: u32,
    /// Sales in flight at once.
    pub clients: usize,
    pub articles: usize,
    pub tills: usize,
    pub work_dir: PathBuf,
    pub seed: u64,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrefillReport {
    pub sales: u64,
    pub days: u32,
    pub first_day: Date,
    pub last_day: Date,
    pub seconds: f64,
    pub per_second: f64,
}

pub async fn run(plan: &PrefillPlan) -> Result<PrefillReport> {
    ensure!(plan.days > 0, "at least one day");
    ensure!(
        plan.sales >= u64::from(plan.days),
        "at least one sale a day ({} days)",
        plan.days
    );
    std::fs::create_dir_all(&plan.work_dir)?;
    if !plan.database_url.starts_with("sqlite:") {
        create_postgres_database(&plan.database_url).await?;
    }
    let zone = TimeZone::get(ZONE)?;
    let today = Timestamp::now().to_zoned(zone.clone()).date();
    let first_day = today.checked_sub(i64::from(plan.days).days())?;
    let opening =
        |day: Date| -> Result<Timestamp> { Ok(day.at(OPENS_AT, 0, 0, 0).to_zoned(zone.clone())?.timestamp()) };
    let clock = Arc::new(ManualClock::new(opening(first_day)?));

    let secret = format!("prefill-secret-{}", plan.seed);
    let key_file = plan.work_dir.join("prefill-fiscal-key.pem");
    let _ = std::fs::remove_file(&key_file);
    till::fiscal::new_key(&key_file)?;
    let config = till::config::Config {
        listen: "127.0.0.1:0".into(),
        data_dir: plan.work_dir.join("prefill-node"),
        fiscal_key_file: Some(key_file),
        database_url: Some(plan.database_url.clone()),
        jwt_secret: Some(secret.clone()),
        ..till::config::Config::default()
    };
    let node = till::server::start(&config, clock.clone())
        .await
        .context("starting the prefilling node")?;
    let client = Client::new(vec![node.url()])?;
    let wire = Arc::new(Wire::new(&[node.url()])?);
    let admin = admin_token(&secret);
    let mut shop = Arc::new(provision(&client, &admin, &ShopSpec::bench(plan.articles, plan.tills)).await?);

    let started = Instant::now();
    let mut sold = 0u64;
    for d in 0..plan.days {
        let day = first_day.checked_add(i64::from(d).days())?;
        if d > 0 {
            clock.set(opening(day)?);
            reopen(&client, &admin, Arc::make_mut(&mut shop)).await?;
        }
        let today = plan.sales / u64::from(plan.days) + u64::from(d < (plan.sales % u64::from(plan.days)) as u32);
        for hour in 0..HOURS_OPEN {
            let this_hour = today / u64::from(HOURS_OPEN) + u64::from(u64::from(hour) < today % u64::from(HOURS_OPEN));
            clock.set(opening(day)?.checked_add(i64::from(hour).hours())?);
            let round = u64::from(d * HOURS_OPEN + hour);
            sell(plan, &wire, &shop, &clock, this_hour, round).await?;
            sold += this_hour;
        }
        close_day(&client, &admin, &shop).await?;
        let seconds = started.elapsed().as_secs_f64();
        eprintln!(
            "till-load prefill: {day}: {sold} sales so far, {:.0}/s",
            sold as f64 / seconds.max(0.001)
        );
    }
    let seconds = started.elapsed().as_secs_f64();
    node.stop().await?;
    Ok(PrefillReport {
        sales: sold,
        days: plan.days,
        first_day,
        last_day: first_day.checked_add(i64::from(plan.days - 1).days())?,
        seconds,
        per_second: sold as f64 / seconds.max(0.001),
    })
}

/// Sends `count` sales over the plan's clients, each client on a till of its own, the clock
/// moving on after each so that the hour's sales are spread over it. `round` numbers the
/// hour since the first: it keeps transaction ids apart and seeds the carts.
async fn sell(
    plan: &PrefillPlan,
    wire: &Arc<Wire>,
    shop: &Arc<Shop>,
    clock: &Arc<ManualClock>,
    count: u64,
    round: u64,
) -> Result<()> {
    let clients = plan.clients.clamp(1, shop.tills.len()) as u64;
    let step = Duration::from_secs(3_600) / u32::try_from(count.max(1)).unwrap_or(u32::MAX);
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (wire, shop, clock) = (wire.clone(), shop.clone(), clock.clone());
            let share = count / clients + u64::from(c < count % clients);
            let ids = format!("pf{round}c{c}-");
            let mut rng = fastrand::Rng::with_seed(plan.seed.wrapping_mul(1 << 32).wrapping_add(round * clients + c));
            tokio::spawn(async move {
                let till = &shop.tills[c as usize];
                for n in 0..share {
                    let transaction_id = format!("{ids}{n}");
                    let lines = shop.random_lines(&mut rng, 5);
                    // A fifth of the sales to known customers, as a shop with a loyalty scheme has.
                    let customer = (rng.u8(..5) == 0).then(|| format!("cust-{}", rng.usize(..CUSTOMERS)));
                    let body = shop
                        .sale_paying(till, &transaction_id, &lines, customer.as_deref(), None)
                        .to_string();
                    let answer = wire.post_json("/v1/checkout/finalize", &till.token, body).await?;
                    if answer.status != 201 {
                        bail!(
                            "sale {transaction_id}: {} {}",
                            answer.status,
                            String::from_utf8_lossy(&answer.body)
                        );
                    }
                    clock.advance(step);
                }
                Ok(())
            })
        })
        .collect();
    for task in tasks {
        task.await??;
    }
    Ok(())
}

/// Closes every till's session (its Z report and the report rollups) and its register's day.
async fn close_day(client: &Client, admin: &str, shop: &Shop) -> Result<()> {
    for till in &shop.tills {
        client
            .send(
                reqwest::Method::POST,
                &format!("/v1/register-sessions/{}/close", till.session),
                admin,
                None,
            )
            .await?
            .expect(200, "close session")?;
        client
            .post(
                &format!("/v1/fiscal/registers/{}/closures", till.register),
                admin,
                &json!({"period": "day"}),
            )
            .await?
            .expect_ok("day closure")?;
    }
    Ok(())
}

/// A new session for every till, its cashier the same.
async fn reopen(client: &Client, admin: &str, shop: &mut Shop) -> Result<()> {
    let mut tills = Vec::with_capacity(shop.tills.len());
    for till in &shop.tills {
        let Till { register, cashier, .. } = till.clone();
        tills.push(open_session(client, admin, &shop.store, register, cashier).await?);
    }
    shop.tills = tills;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The month a benchmark stands on: every sale stored once, in its day's opening hours,
    /// every day of every register closed with all its tickets, no session left open, and
    /// the journal passing the full fiscal audit.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_prefill_sells_in_opening_hours_and_closes_every_day() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("month.db");
        let url = format!("sqlite://{}", file.display());
        let plan = PrefillPlan {
            database_url: url.clone(),
            sales: 250,
            days: 3,
            clients: 4,
            articles: 20,
            tills: 4,
            work_dir: dir.path().join("work"),
            seed: 7,
        };
        let report = run(&plan).await.unwrap();
        assert_eq!(report.sales, 250);
        assert_eq!(report.last_day, report.first_day.checked_add(2.days()).unwrap());

        let config = till::config::Config {
            database_url: Some(url),
            data_dir: dir.path().join("audit"),
            fiscal_key_file: Some(plan.work_dir.join("prefill-fiscal-key.pem")),
            ..till::config::Config::default()
        };
        assert!(
            till::fiscal::verify(&config, None).await.unwrap(),
            "the fiscal audit fails"
        );

        let conn = rusqlite::Connection::open(&file).unwrap();
        let zone = TimeZone::get(ZONE).unwrap();
        let mut per_day = std::collections::BTreeMap::<Date, u64>::new();
        let mut statement = conn.prepare("SELECT emitted_at FROM sales").unwrap();
        let emitted = statement.query_map([], |row| row.get::<_, i64>(0)).unwrap();
        for micros in emitted {
            let local = Timestamp::from_microsecond(micros.unwrap())
                .unwrap()
                .to_zoned(zone.clone());
            assert!(
                (OPENS_AT..OPENS_AT + HOURS_OPEN as i8).contains(&local.hour()),
                "a sale at {local}, out of opening hours"
            );
            *per_day.entry(local.date()).or_default() += 1;
        }
        let days: Vec<(Date, u64)> = per_day.into_iter().collect();
        let first = report.first_day;
        let day = |n: i64| first.checked_add(n.days()).unwrap();
        assert_eq!(days, [(first, 84), (day(1), 83), (day(2), 83)]);

        let (closures, closed_tickets): (i64, i64) = conn
            .query_row(
                "SELECT COUNT(*), SUM(ticket_count) FROM fiscal_closures WHERE period = 'DAY'",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .unwrap();
        assert_eq!(
            (closures, closed_tickets),
            (4 * 3, 250),
            "each register's days, closed with every ticket"
        );
        let open: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM register_sessions WHERE closed_at IS NULL",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(open, 0, "a session left open");
    }
}
