//! The read side of a deployment that has sold for a while (a database `till-load prefill`
//! filled): sales searches and their latency, the month's sales report, reading the event
//! feed from its start, and delivering it to a webhook receiver in this process.
//!
//! One node serves, started as `till serve` on the database. The run writes one webhook
//! endpoint and its deliveries into it, and deletes the endpoint at the end. Each request is
//! sent when the one before it was answered: the figures are one client's, latency as that
//! client sees it, its own HTTP stack included.

use crate::client::Client;
use crate::cluster::{Cluster, NodeConfig};
use crate::shop::admin_token;
use anyhow::{Context, Result, bail, ensure};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use hdrhistogram::Histogram;
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where the benchmark's store sells, as a prefill made it.
const STORE: &str = "bench-store";
const ZONE: &str = "Europe/Paris";

#[derive(Clone, Debug)]
pub struct ReadsPlan {
    pub binary: PathBuf,
    pub database_url: String,
    pub work_dir: PathBuf,
    /// Searches of each shape.
    pub searches: usize,
    /// Times each report grouping is asked.
    pub reports: usize,
    /// Events read from the feed's start (fewer when the feed is shorter).
    pub feed_events: u64,
    /// Deliveries counted at the webhook receiver.
    pub deliveries: u64,
    pub seed: u64,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadsReport {
    pub engine: String,
    pub search: Vec<Timing>,
    /// Every search of every shape together.
    pub search_all: Timing,
    pub report_sales_count: u64,
    pub report_days: u32,
    pub reports: Vec<Timing>,
    pub feed: Rate,
    pub webhooks: Rate,
}

/// Latencies of one kind of request, in milliseconds.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Timing {
    pub name: String,
    pub count: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rate {
    pub count: u64,
    pub seconds: f64,
    pub per_second: f64,
}

pub async fn run(plan: &ReadsPlan) -> Result<ReadsReport> {
    std::fs::create_dir_all(&plan.work_dir)?;
    let key_file = plan.work_dir.join("fiscal-key.pem");
    let _ = std::fs::remove_file(&key_file);
    till::fiscal::new_key(&key_file)?;
    let secret = format!("reads-secret-{}", plan.seed);
    let config = NodeConfig {
        binary: plan.binary.clone(),
        database_url: plan.database_url.clone(),
        jwt_secret: secret.clone(),
        fiscal_key_file: key_file,
        env: vec![("TILL_WEBHOOK_ALLOW_PRIVATE".into(), "true".into())],
        work_dir: plan.work_dir.clone(),
    };
    let mut cluster = Cluster::start(config, 1).await?;
    let client = Client::new(cluster.urls())?;
    let admin = admin_token(&secret);
    let mut rng = fastrand::Rng::with_seed(plan.seed);

    let span = Span::of(&client, &admin).await?;
    let search = search(&client, &admin, &span, plan.searches, &mut rng).await?;
    let mut all = histogram()?;
    for (_, histogram) in &search {
        all.add(histogram)?;
    }
    let (report_sales_count, reports) = reports(&client, &admin, &span, plan.reports).await?;
    let feed = read_feed(&client, &admin, plan.feed_events).await?;
    let webhooks = deliver(&client, &admin, plan.deliveries).await?;
    cluster.kill_all().await?;
    Ok(ReadsReport {
        engine: if plan.database_url.starts_with("sqlite:") {
            "sqlite"
        } else {
            "postgres"
        }
        .into(),
        search: search.iter().map(|(name, h)| timing(name, h)).collect(),
        search_all: timing("every search", &all),
        report_sales_count,
        report_days: span.days,
        reports,
        feed,
        webhooks,
    })
}

/// The days the database has sales on, ending with the newest sale's, local to the store.
struct Span {
    first: Timestamp,
    end: Timestamp,
    days: u32,
    /// Closed sessions to search by.
    sessions: Vec<String>,
}

impl Span {
    async fn of(client: &Client, admin: &str) -> Result<Span> {
        let newest = get(client, admin, "/v1/sales?limit=1").await?;
        let Some(emitted) = newest["items"][0]["emittedAt"].as_str() else {
            bail!("the database has no sale: prefill it first (`till-load prefill`)");
        };
        let zone = TimeZone::get(ZONE)?;
        let last_day = emitted.parse::<Timestamp>()?.to_zoned(zone.clone()).date();
        // A month: the 30 days up to the newest sale's.
        let days = 30;
        let first_day = last_day.checked_sub((i64::from(days) - 1).days())?;
        let midnight = |day: jiff::civil::Date| -> Result<Timestamp> { Ok(day.to_zoned(zone.clone())?.timestamp()) };
        let sessions = get(
            client,
            admin,
            &format!("/v1/register-sessions?storeId={STORE}&limit=500"),
        )
        .await?["items"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|s| s["sessionId"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Span {
            first: midnight(first_day)?,
            end: midnight(last_day.tomorrow()?)?,
            days,
            sessions,
        })
    }

    /// A random instant of the span's opening hours' days, on the quarter hour.
    fn instant(&self, rng: &mut fastrand::Rng) -> Timestamp {
        let quarters = (self.end.as_second() - self.first.as_second()) / 900;
        Timestamp::from_second(self.first.as_second() + rng.i64(0..quarters.max(1)) * 900).unwrap_or(self.first)
    }
}

/// A search's path, drawn at random within the span.
type SearchShape = fn(&Span, &mut fastrand::Rng) -> String;

/// The searches a back office makes, each shape `count` times with random values.
async fn search(
    client: &Client,
    admin: &str,
    span: &Span,
    count: usize,
    rng: &mut fastrand::Rng,
) -> Result<Vec<(String, Histogram<u64>)>> {
    let shapes: [(&str, SearchShape); 6] = [
        ("newest sales", |_, _| "/v1/sales?limit=50".into()),
        ("a store's hour", |span, rng| {
            let from = span.instant(rng);
            format!("/v1/sales?storeId={STORE}&from={from}&to={}&limit=50", from + 1.hour())
        }),
        ("a register's day", |span, rng| {
            let from = span.instant(rng);
            format!(
                "/v1/sales?registerId=reg-{}&from={from}&to={}&limit=100",
                rng.usize(0..16),
                from + 24.hours()
            )
        }),
        ("a session", |span, rng| match span.sessions.is_empty() {
            true => "/v1/sales?limit=50".into(),
            false => format!(
                "/v1/sales?sessionId={}&limit=50",
                span.sessions[rng.usize(0..span.sessions.len())]
            ),
        }),
        ("returns", |_, _| "/v1/sales?type=return&limit=50".into()),
        ("a customer", |_, rng| {
            format!("/v1/sales?customerId=cust-{}&limit=50", rng.usize(0..1_000))
        }),
    ];
    let mut timed = Vec::new();
    for (name, shape) in shapes {
        let mut histogram = histogram()?;
        for _ in 0..count {
            let path = shape(span, rng);
            let sent = Instant::now();
            get(client, admin, &path).await?;
            histogram.saturating_record(sent.elapsed().as_micros() as u64);
        }
        timed.push((name.to_owned(), histogram));
    }
    // Paging on: a store's day, five pages of 100 deep.
    let mut histogram = histogram()?;
    for _ in 0..count.div_ceil(5) {
        let from = span.instant(rng);
        let mut path = format!(
            "/v1/sales?storeId={STORE}&from={from}&to={}&limit=100",
            from + 24.hours()
        );
        for _ in 0..5 {
            let sent = Instant::now();
            let page = get(client, admin, &path).await?;
            histogram.saturating_record(sent.elapsed().as_micros() as u64);
            let Some(cursor) = page["nextCursor"].as_str() else {
                break;
            };
            path = format!(
                "/v1/sales?storeId={STORE}&from={from}&to={}&limit=100&cursor={cursor}",
                from + 24.hours()
            );
        }
    }
    timed.push(("a store's day, pages 1 to 5".into(), histogram));
    Ok(timed)
}

/// The month's report in each grouping, `count` times each: the sales it counted and how long
/// each grouping took.
async fn reports(client: &Client, admin: &str, span: &Span, count: usize) -> Result<(u64, Vec<Timing>)> {
    let zone = TimeZone::get(ZONE)?;
    let at = |instant: Timestamp| {
        instant
            .to_zoned(zone.clone())
            .strftime("%Y-%m-%dT%H:%M%:z")
            .to_string()
            .replace('+', "%2B")
    };
    let mut sales = 0;
    let mut timed = Vec::new();
    for grouping in ["day", "hour", "article", "seller", "tender", "vat"] {
        let path = format!(
            "/v1/reports/sales?groupBy={grouping}&storeId={STORE}&from={}&to={}",
            at(span.first),
            at(span.end)
        );
        let mut histogram = histogram()?;
        for _ in 0..count.max(1) {
            let sent = Instant::now();
            let report = get(client, admin, &path).await?;
            histogram.saturating_record(sent.elapsed().as_micros() as u64);
            sales = report["totals"]["salesCount"].as_u64().unwrap_or(0);
        }
        timed.push(timing(&format!("month by {grouping}"), &histogram));
    }
    Ok((sales, timed))
}

/// Follows the feed from its start, pages of 1,000, until `count` events were read or the
/// feed ends.
async fn read_feed(client: &Client, admin: &str, count: u64) -> Result<Rate> {
    let started = Instant::now();
    let mut read = 0u64;
    let mut path = "/v1/events?limit=1000".to_owned();
    while read < count {
        let page = get(client, admin, &path).await?;
        let events = page["events"].as_array().map_or(0, Vec::len) as u64;
        if events == 0 {
            break;
        }
        read += events;
        let next = page["nextCursor"].as_str().context("a feed page without nextCursor")?;
        path = format!("/v1/events?limit=1000&after={next}");
    }
    Ok(rate(read, started.elapsed()))
}

/// Replays the feed from its start to an endpoint on a receiver in this process and counts
/// the deliveries it takes, from the first, until `count` arrived.
async fn deliver(client: &Client, admin: &str, count: u64) -> Result<Rate> {
    let receiver = Arc::new(Receiver::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/hook", listener.local_addr()?);
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(receive))
        .with_state(receiver.clone());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let created = client
        .post(
            "/v1/webhooks",
            admin,
            &json!({"url": url, "description": "till-load reads"}),
        )
        .await?
        .expect(201, "create webhook")?
        .json();
    let id = created["id"].as_str().context("a webhook without id")?.to_owned();
    client
        .post(&format!("/v1/webhooks/{id}/replay"), admin, &json!({"after": "0"}))
        .await?
        .expect_ok("replay")?;
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut first: Option<Instant> = None;
    loop {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let received = receiver.count.load(Ordering::Relaxed);
        if received > 0 && first.is_none() {
            first = Some(Instant::now());
        }
        if received >= count {
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "only {received} of {count} deliveries in five minutes"
        );
    }
    let elapsed = first.map_or(Duration::ZERO, |first| first.elapsed());
    let received = receiver.count.load(Ordering::Relaxed);
    ensure!(
        receiver.unsigned.load(Ordering::Relaxed) == 0,
        "deliveries came without the Standard Webhooks headers"
    );
    client
        .send(reqwest::Method::DELETE, &format!("/v1/webhooks/{id}"), admin, None)
        .await?
        .expect(204, "delete webhook")?;
    server.abort();
    Ok(rate(received, elapsed))
}

#[derive(Default)]
struct Receiver {
    count: AtomicU64,
    unsigned: AtomicU64,
}

async fn receive(State(receiver): State<Arc<Receiver>>, headers: HeaderMap) -> StatusCode {
    let signed = ["webhook-id", "webhook-timestamp", "webhook-signature"]
        .iter()
        .all(|name| headers.contains_key(*name));
    if !signed {
        receiver.unsigned.fetch_add(1, Ordering::Relaxed);
    }
    receiver.count.fetch_add(1, Ordering::Relaxed);
    StatusCode::NO_CONTENT
}

async fn get(client: &Client, admin: &str, path: &str) -> Result<Value> {
    Ok(client.get(path, admin).await?.expect(200, path)?.json())
}

pub(crate) fn histogram() -> Result<Histogram<u64>> {
    Histogram::new_with_bounds(1, 600_000_000, 3).context("histogram")
}

pub(crate) fn timing(name: &str, histogram: &Histogram<u64>) -> Timing {
    let ms = |us: u64| us as f64 / 1000.0;
    Timing {
        name: name.to_owned(),
        count: histogram.len(),
        p50_ms: ms(histogram.value_at_quantile(0.50)),
        p99_ms: ms(histogram.value_at_quantile(0.99)),
        max_ms: ms(histogram.max()),
    }
}

pub(crate) fn rate(count: u64, elapsed: Duration) -> Rate {
    let seconds = elapsed.as_secs_f64();
    Rate {
        count,
        seconds,
        per_second: count as f64 / seconds.max(f64::MIN_POSITIVE),
    }
}
