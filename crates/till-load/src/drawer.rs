//! The two costs of the cash drawer and offline tills (docs/drawer.md, docs/offline.md).
//!
//! The X report of a big session: one till books many sales on one session, then asks for
//! its X report again and again, each request sent when the one before it was answered. The
//! report is computed from the session's sales every time, so its latency grows with them;
//! it is shown beside the target.
//!
//! A late-sale burst: tills that lost the network keep ringing, each queued body keeping the
//! instant it was rung (`issuedAt`); meanwhile their sessions are closed; when the network
//! comes back the whole queue arrives at once, and each sale must be booked as a late sale of
//! its closed session. Its rate is compared with a burst of as many sales on open sessions,
//! sent just before in the same run. A tenth of the late sales is then sent again: each must
//! be answered as a replay, with the first answer's body.
//!
//! One node serves, on a new database. Sales go over the load generator's own connections
//! (`wire`), written before their burst starts, so that the measured time is the server's.

use crate::bench::baseline::create_postgres_database;
use crate::bench::engine_of;
use crate::client::Client;
use crate::cluster::{Cluster, NodeConfig};
use crate::reads::{Rate, Timing, histogram, rate, timing};
use crate::shop::{Shop, ShopSpec, Till, admin_token, provision};
use crate::wire::{Answer, Wire};
use anyhow::{Context, Result, bail};
use jiff::Timestamp;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The target for an X report, in milliseconds: shown, never asserted.
pub const X_REPORT_TARGET_MS: f64 = 50.0;

/// Articles in the catalog, and the most lines a sale has.
const ARTICLES: usize = 1_000;
const MAX_LINES: usize = 10;

/// One sale in ten of the late burst is sent again.
const REPLAY_EVERY: usize = 10;

const FINALIZE: &str = "/v1/checkout/finalize";

#[derive(Clone, Debug)]
pub struct DrawerPlan {
    pub binary: PathBuf,
    pub database_url: String,
    pub work_dir: PathBuf,
    /// Sales booked on the X report's session.
    pub sales: usize,
    /// X reports timed, after one not timed.
    pub reports: usize,
    /// Sales in each burst, late and on time.
    pub late: usize,
    /// Requests in flight at once; each burst's sales are spread over as many tills.
    pub clients: usize,
    pub seed: u64,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DrawerReport {
    pub engine: String,
    pub x_report: XReport,
    /// Sales on open sessions, without `issuedAt`.
    pub on_time: Burst,
    /// The same carts rung offline and sent once their sessions were closed.
    pub late: Burst,
    /// The late burst's rate over the on-time burst's.
    pub late_over_on_time: f64,
    pub replays: Replays,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct XReport {
    /// Booking the session's sales, all on that one session.
    pub session_sales: Burst,
    /// The timed reports, from sending to the whole answer read.
    pub latency: Timing,
    pub target_ms: f64,
    /// The reports' `salesCount`: the first that differs from the sales acknowledged, else
    /// the count they all gave.
    pub reported_sales_count: u64,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Burst {
    pub sent: u64,
    /// Sales answered 201, over the whole burst's time.
    pub acknowledged: Rate,
    pub refused: u64,
    /// The first refused sale in the order they were queued: its id, status and body.
    pub first_refusal: Option<String>,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replays {
    pub sent: u64,
    /// Answered 200 or 201 with the first answer's body, byte for byte.
    pub replayed: u64,
    pub first_mismatch: Option<String>,
}

/// A sale ready to send: its transaction id, its till's token and its body, written.
#[derive(Clone, Debug)]
pub(crate) struct Queued {
    pub(crate) id: String,
    token: String,
    body: String,
}

pub async fn run(plan: &DrawerPlan) -> Result<DrawerReport> {
    std::fs::create_dir_all(&plan.work_dir)?;
    if engine_of(&plan.database_url) == "postgres" {
        create_postgres_database(&plan.database_url).await?;
    }
    let key_file = plan.work_dir.join("fiscal-key.pem");
    let _ = std::fs::remove_file(&key_file);
    till::fiscal::new_key(&key_file)?;
    let secret = format!("drawer-secret-{}", plan.seed);
    let config = NodeConfig {
        binary: plan.binary.clone(),
        database_url: plan.database_url.clone(),
        jwt_secret: secret.clone(),
        fiscal_key_file: key_file,
        // Durable commits, as `bench` measures the usual finalize rate.
        env: vec![("TILL_SQLITE_SYNCHRONOUS".into(), "full".into())],
        work_dir: plan.work_dir.clone(),
    };
    let mut cluster = Cluster::start(config, 1).await?;
    let client = Client::new(cluster.urls())?;
    let wire = Arc::new(Wire::new(&cluster.urls())?);
    let admin = admin_token(&secret);
    let clients = plan.clients.max(1);
    // A till for the X report, then as many for each burst as there are clients.
    let shop = provision(&client, &admin, &ShopSpec::bench(ARTICLES, 1 + 2 * clients)).await?;
    // Every session is open from here on: the late sales are rung after it.
    let offline_from = Timestamp::now();
    let (x_till, burst_tills) = shop.tills.split_first().context("no till provisioned")?;
    let (on_time_tills, late_tills) = burst_tills.split_at(clients);

    let x_report = big_session(&client, &wire, &shop, x_till, plan).await?;

    // Both bursts send the same carts: only their sessions and `issuedAt` differ.
    let on_time_queue = queue(&shop, on_time_tills, "on-time-", plan.late, plan.seed, |_| None);
    let (answers, elapsed) = burst(&wire, &on_time_queue, clients).await?;
    let on_time = tally(&on_time_queue, &answers, elapsed);

    let offline_until = Timestamp::now();
    let late_queue = queue(&shop, late_tills, "late-", plan.late, plan.seed, |n| {
        Some(rung_at(offline_from, offline_until, n, plan.late))
    });
    for till in late_tills {
        close_session(&client, &admin, till).await?;
    }
    let (late_answers, elapsed) = burst(&wire, &late_queue, clients).await?;
    let late = tally(&late_queue, &late_answers, elapsed);
    let replays = replay(&wire, &late_queue, &late_answers, clients).await?;
    cluster.kill_all().await?;

    let late_over_on_time = late.acknowledged.per_second / on_time.acknowledged.per_second.max(f64::MIN_POSITIVE);
    Ok(DrawerReport {
        engine: engine_of(&plan.database_url).to_owned(),
        x_report,
        on_time,
        late,
        late_over_on_time,
        replays,
    })
}

/// Books the plan's sales on `till`'s one session, then times its X report.
async fn big_session(
    client: &Client,
    wire: &Arc<Wire>,
    shop: &Shop,
    till: &Till,
    plan: &DrawerPlan,
) -> Result<XReport> {
    let sales = queue(shop, std::slice::from_ref(till), "x-", plan.sales, plan.seed, |_| None);
    let (answers, elapsed) = burst(wire, &sales, plan.clients.max(1)).await?;
    let session_sales = tally(&sales, &answers, elapsed);
    let acknowledged = session_sales.acknowledged.count;

    // The till asks for its own session's report.
    let path = format!("/v1/register-sessions/{}/x-report", till.session);
    let sales_count = |reply: crate::client::Reply| -> Result<u64> {
        reply.expect(200, "X report")?.json()["salesCount"]
            .as_u64()
            .context("an X report without salesCount")
    };
    let mut reported_sales_count = sales_count(client.get(&path, &till.token).await?)?;
    let mut latency = histogram()?;
    for _ in 0..plan.reports.max(1) {
        let sent = Instant::now();
        let reply = client.get(&path, &till.token).await?;
        latency.saturating_record(sent.elapsed().as_micros() as u64);
        let counted = sales_count(reply)?;
        if reported_sales_count == acknowledged {
            reported_sales_count = counted;
        }
    }
    Ok(XReport {
        session_sales,
        latency: timing("X report", &latency),
        target_ms: X_REPORT_TARGET_MS,
        reported_sales_count,
    })
}

/// `count` sales dealt in turn over `tills`, with ids `{prefix}{n}` and carts drawn from
/// `seed`; `rung(n)` is the instant the `n`th was rung, when it was rung offline.
pub(crate) fn queue(
    shop: &Shop,
    tills: &[Till],
    prefix: &str,
    count: usize,
    seed: u64,
    rung: impl Fn(usize) -> Option<Timestamp>,
) -> Vec<Queued> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..count)
        .map(|n| {
            let till = &tills[n % tills.len()];
            let id = format!("{prefix}{n}");
            let mut sale = shop.sale(till, &id, &shop.random_lines(&mut rng, MAX_LINES));
            if let Some(at) = rung(n) {
                sale["issuedAt"] = json!(at.to_string());
            }
            Queued {
                id,
                token: till.token.clone(),
                body: sale.to_string(),
            }
        })
        .collect()
}

/// The instant the `n`th of `count` sales was rung, the sales spread evenly from just after
/// `from` to `until`, to the millisecond as a till writes it.
fn rung_at(from: Timestamp, until: Timestamp, n: usize, count: usize) -> Timestamp {
    let first = from.as_millisecond() + 1;
    let span = (until.as_millisecond() - first).max(0);
    let step = span * n as i64 / (count.max(2) - 1) as i64;
    Timestamp::from_millisecond(first + step).unwrap_or(until)
}

/// Ends `till`'s session, as a manager does at the end of a shift (the till's own token may
/// not: closing takes pos.sessions.close).
async fn close_session(client: &Client, admin: &str, till: &Till) -> Result<()> {
    let path = format!("/v1/register-sessions/{}/close", till.session);
    client
        .send(reqwest::Method::POST, &path, admin, None)
        .await?
        .expect(200, "close session")?;
    Ok(())
}

/// Sends `queue` over `clients` clients at once, each sending its next sale when the last
/// was answered: the answers in the queue's order, and how long it took.
pub(crate) async fn burst(wire: &Arc<Wire>, queue: &[Queued], clients: usize) -> Result<(Vec<Answer>, Duration)> {
    let started = Instant::now();
    let tasks: Vec<_> = deal(queue, clients)
        .into_iter()
        .map(|hand| {
            let wire = wire.clone();
            tokio::spawn(async move {
                let mut answered = Vec::with_capacity(hand.len());
                for (n, sale) in hand {
                    let answer = wire.post_json(FINALIZE, &sale.token, sale.body).await;
                    answered.push((n, answer.with_context(|| format!("sale {}", sale.id))?));
                }
                anyhow::Ok(answered)
            })
        })
        .collect();
    let mut answers: Vec<Option<Answer>> = queue.iter().map(|_| None).collect();
    for task in tasks {
        for (n, answer) in task.await?? {
            answers[n] = Some(answer);
        }
    }
    let elapsed = started.elapsed();
    let answers = answers
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .context("a sale was not sent")?;
    Ok((answers, elapsed))
}

/// `queue` dealt over `clients` hands in turn, each sale with its place in the queue.
fn deal(queue: &[Queued], clients: usize) -> Vec<Vec<(usize, Queued)>> {
    let mut hands: Vec<Vec<(usize, Queued)>> = vec![Vec::new(); clients.clamp(1, queue.len().max(1))];
    let count = hands.len();
    for (n, sale) in queue.iter().enumerate() {
        hands[n % count].push((n, sale.clone()));
    }
    hands
}

fn tally(queue: &[Queued], answers: &[Answer], elapsed: Duration) -> Burst {
    let acknowledged = answers.iter().filter(|answer| answer.status == 201).count() as u64;
    let first_refusal = queue
        .iter()
        .zip(answers)
        .find(|(_, answer)| answer.status != 201)
        .map(|(sale, answer)| format!("{}: {}", sale.id, shown(answer)));
    Burst {
        sent: queue.len() as u64,
        acknowledged: rate(acknowledged, elapsed),
        refused: queue.len() as u64 - acknowledged,
        first_refusal,
    }
}

/// Sends every tenth acknowledged late sale again; each must come back as the replay of the
/// first, with its body.
async fn replay(wire: &Arc<Wire>, queue: &[Queued], answers: &[Answer], clients: usize) -> Result<Replays> {
    let (again, first): (Vec<Queued>, Vec<&Answer>) = queue
        .iter()
        .zip(answers)
        .step_by(REPLAY_EVERY)
        .filter(|(_, answer)| answer.status == 201)
        .map(|(sale, answer)| (sale.clone(), answer))
        .unzip();
    let (replies, _) = burst(wire, &again, clients).await?;
    Ok(compare_replays(&again, &first, &replies))
}

fn compare_replays(sales: &[Queued], first: &[&Answer], replies: &[Answer]) -> Replays {
    let is_replay = |first: &Answer, reply: &Answer| matches!(reply.status, 200 | 201) && reply.body == first.body;
    let mismatches = || {
        sales
            .iter()
            .zip(first.iter().zip(replies))
            .filter(|(_, (first, reply))| !is_replay(first, reply))
    };
    Replays {
        sent: sales.len() as u64,
        replayed: (sales.len() - mismatches().count()) as u64,
        first_mismatch: mismatches()
            .next()
            .map(|(sale, (first, reply))| format!("{}: first {}, then {}", sale.id, shown(first), shown(reply))),
    }
}

fn shown(answer: &Answer) -> String {
    format!("{} {}", answer.status, String::from_utf8_lossy(&answer.body))
}

/// Fails when the run was wrong, whatever its figures: a sale refused, an X report that
/// miscounts, a replay answered otherwise than the first time.
pub fn check(report: &DrawerReport) -> Result<()> {
    let x = &report.x_report;
    let refused = |what: &str, burst: &Burst| -> Result<()> {
        if let Some(first) = &burst.first_refusal {
            bail!(
                "{what}: {} of {} sales refused; first: {first}",
                burst.refused,
                burst.sent
            );
        }
        Ok(())
    };
    refused("the X report's session", &x.session_sales)?;
    if x.reported_sales_count != x.session_sales.acknowledged.count {
        bail!(
            "the X report counted {} sales; {} were booked on its session",
            x.reported_sales_count,
            x.session_sales.acknowledged.count
        );
    }
    refused("on-time burst", &report.on_time)?;
    refused(
        "late burst (docs/offline.md: a sale of a closed session is booked as a late sale)",
        &report.late,
    )?;
    if let Some(first) = &report.replays.first_mismatch {
        bail!(
            "{} of {} late sales sent again were not answered as replays; first: {first}",
            report.replays.sent - report.replays.replayed,
            report.replays.sent
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn sale(n: usize) -> Queued {
        Queued {
            id: format!("s{n}"),
            token: "tok".into(),
            body: format!("body {n}"),
        }
    }

    fn answer(status: u16, body: &str) -> Answer {
        Answer {
            status,
            body: Bytes::from(body.to_owned()),
        }
    }

    #[test]
    fn offline_sales_are_rung_in_order_within_the_time_offline_to_the_millisecond() {
        let from: Timestamp = "2026-03-01T10:00:00.000400Z".parse().unwrap();
        let until: Timestamp = "2026-03-01T10:05:00.000900Z".parse().unwrap();
        let rung: Vec<Timestamp> = (0..1_000).map(|n| rung_at(from, until, n, 1_000)).collect();
        assert!(rung.windows(2).all(|pair| pair[0] <= pair[1]));
        assert!(rung[0] > from, "rung after the sessions opened");
        assert_eq!(rung[999], "2026-03-01T10:05:00Z".parse::<Timestamp>().unwrap());
        assert!(rung.iter().all(|at| at.subsec_nanosecond() % 1_000_000 == 0));
        assert_eq!(rung[0].to_string(), "2026-03-01T10:00:00.001Z");
        // One sale, or no time offline at all: still after the sessions opened.
        assert_eq!(rung_at(from, until, 0, 1), rung[0]);
        assert_eq!(rung_at(from, from, 5, 10), rung[0]);
    }

    #[test]
    fn a_burst_is_dealt_over_the_clients_each_sale_once() {
        let queue: Vec<Queued> = (0..10).map(sale).collect();
        let hands = deal(&queue, 4);
        assert_eq!(hands.len(), 4);
        let mut places: Vec<usize> = hands.iter().flatten().map(|(n, _)| *n).collect();
        places.sort();
        assert_eq!(places, (0..10).collect::<Vec<_>>());
        assert!(hands.iter().flatten().all(|(n, sale)| sale.id == format!("s{n}")));
        assert_eq!(deal(&queue[..2], 16).len(), 2, "no client without a sale");
    }

    #[test]
    fn a_burst_counts_only_201_and_names_the_first_refusal_in_queue_order() {
        let queue: Vec<Queued> = (0..4).map(sale).collect();
        let answers = [
            answer(201, "{}"),
            answer(422, "closed"),
            answer(201, "{}"),
            answer(409, "conflict"),
        ];
        let burst = tally(&queue, &answers, Duration::from_secs(2));
        assert_eq!((burst.sent, burst.acknowledged.count, burst.refused), (4, 2, 2));
        assert_eq!(burst.acknowledged.per_second, 1.0);
        assert_eq!(burst.first_refusal.as_deref(), Some("s1: 422 closed"));
    }

    #[test]
    fn a_replay_must_answer_the_first_body_with_200_or_201() {
        let sales: Vec<Queued> = (0..4).map(sale).collect();
        let first = [answer(201, "a"), answer(201, "b"), answer(201, "c"), answer(201, "d")];
        let replies = [answer(201, "a"), answer(200, "b"), answer(201, "C"), answer(409, "d")];
        let replays = compare_replays(&sales, &first.iter().collect::<Vec<_>>(), &replies);
        assert_eq!((replays.sent, replays.replayed), (4, 2));
        assert_eq!(replays.first_mismatch.as_deref(), Some("s2: first 201 c, then 201 C"));
    }

    #[test]
    fn check_names_what_went_wrong() {
        let burst = |refused: u64| Burst {
            sent: 10,
            acknowledged: rate(10 - refused, Duration::from_secs(1)),
            refused,
            first_refusal: (refused > 0).then(|| "late-0: 422 closed".to_owned()),
        };
        let report = |reported: u64, late_refused: u64| DrawerReport {
            engine: "sqlite".into(),
            x_report: XReport {
                session_sales: burst(0),
                latency: timing("X report", &histogram().unwrap()),
                target_ms: X_REPORT_TARGET_MS,
                reported_sales_count: reported,
            },
            on_time: burst(0),
            late: burst(late_refused),
            late_over_on_time: 1.0,
            replays: Replays {
                sent: 1,
                replayed: 1,
                first_mismatch: None,
            },
        };
        assert!(check(&report(10, 0)).is_ok());
        let miscounted = check(&report(9, 0)).unwrap_err().to_string();
        assert!(miscounted.contains("counted 9 sales; 10 were booked"), "{miscounted}");
        let late = check(&report(10, 10)).unwrap_err().to_string();
        assert!(
            late.contains("late burst") && late.contains("late-0: 422 closed"),
            "{late}"
        );
    }
}
