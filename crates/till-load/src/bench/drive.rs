//! Sending the drafted sales: a closed loop of clients or an open loop at a fixed rate, each
//! latency into an HDR histogram, every failure counted and the first few kept.

use super::workload::{Draft, Paid, Workload};
use super::{BenchPlan, Mix};
use crate::wire::Wire;
use anyhow::{Context, Result, ensure};
use hdrhistogram::Histogram;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A drafted body with its transaction id, which is also the ticket number.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Finalize<'a> {
    transaction_id: &'a str,
    number: &'a str,
    /// Drawn at the send, for a mix whose drafts name no customer of their own.
    #[serde(skip_serializing_if = "Option::is_none")]
    customer_id: Option<&'a str>,
    #[serde(flatten)]
    draft: &'a Value,
}

/// What the measured window saw.
pub(super) struct Outcome {
    pub(super) sales: u64,
    /// Acknowledged sales, warm-up included.
    pub(super) all_sales: u64,
    pub(super) failures: u64,
    pub(super) lines: u64,
    pub(super) paid: PaidCounts,
    pub(super) elapsed: Duration,
    pub(super) histogram: Histogram<u64>,
    pub(super) samples: Vec<String>,
}

/// Measured sales by what paid them besides the card.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PaidCounts {
    pub(super) gift_card: u64,
    pub(super) loyalty: u64,
    /// Drafted with stored value, sent paid by card because its budget was spent.
    pub(super) fell_back: u64,
}

impl PaidCounts {
    fn count(&mut self, paid: Paid) {
        match paid {
            Paid::Card => {}
            Paid::GiftCard => self.gift_card += 1,
            Paid::Loyalty => self.loyalty += 1,
            Paid::FellBack => self.fell_back += 1,
        }
    }

    fn add(&mut self, other: PaidCounts) {
        self.gift_card += other.gift_card;
        self.loyalty += other.loyalty;
        self.fell_back += other.fell_back;
    }
}

#[derive(Default)]
struct Tally {
    sales: u64,
    warm_up_sales: u64,
    failures: u64,
    lines: u64,
    paid: PaidCounts,
    samples: Vec<String>,
}

impl Tally {
    fn record(&mut self, ok: Result<Paid, String>, lines: usize) {
        match ok {
            Ok(paid) => {
                self.sales += 1;
                self.lines += lines as u64;
                self.paid.count(paid);
            }
            Err(sample) => {
                self.failures += 1;
                if self.samples.len() < 5 {
                    self.samples.push(sample);
                }
            }
        }
    }

    /// What the window of `elapsed` saw, its latencies in `histogram`.
    fn outcome(self, histogram: Histogram<u64>, elapsed: Duration) -> Outcome {
        Outcome {
            sales: self.sales,
            all_sales: self.sales + self.warm_up_sales,
            failures: self.failures,
            lines: self.lines,
            paid: self.paid,
            elapsed,
            histogram,
            samples: self.samples,
        }
    }

    /// A sale sent before the measured window: only counted, or reported when it failed.
    fn record_warm_up(&mut self, ok: Result<Paid, String>) {
        match ok {
            Ok(_) => self.warm_up_sales += 1,
            Err(sample) => self.record(Err(sample), 0),
        }
    }
}

impl Outcome {
    /// What `self` and `other`, two windows of the same mix, saw together.
    pub(super) fn merge(mut self, other: Outcome) -> Result<Outcome> {
        self.sales += other.sales;
        self.all_sales += other.all_sales;
        self.failures += other.failures;
        self.lines += other.lines;
        self.paid.add(other.paid);
        self.elapsed += other.elapsed;
        self.histogram.add(&other.histogram).context("merging histograms")?;
        self.samples.extend(other.samples);
        self.samples.truncate(5);
        Ok(self)
    }
}

fn histogram() -> Result<Histogram<u64>> {
    // 1 µs to 10 minutes, three significant digits.
    Histogram::new_with_bounds(1, 600_000_000, 3).context("histogram")
}

/// One sale as the till runs it: for the card-attempts mix, the attempt asked for and its
/// approval recorded first, then the sale naming it.
async fn send(
    wire: &Wire,
    workload: &Workload,
    mix: Mix,
    till: usize,
    draft: &Draft,
    transaction_id: &str,
    customer_id: Option<&str>,
) -> Result<Paid, String> {
    let token = &workload.shop.tills[till].token;
    let (body, paid) = workload.body_of(draft);
    let through_attempt;
    let body = match mix {
        Mix::CardAttempts => {
            through_attempt = approved_attempt(wire, workload, till, body, transaction_id).await?;
            &through_attempt
        }
        _ => body,
    };
    let body = Finalize {
        transaction_id,
        number: transaction_id,
        customer_id,
        draft: body,
    };
    let body = serde_json::to_string(&body).map_err(|error| error.to_string())?;
    match wire.post_json("/v1/checkout/finalize", token, body).await {
        Ok(answer) if answer.status == 201 => Ok(paid),
        Ok(answer) => Err(format!("{} {}", answer.status, String::from_utf8_lossy(&answer.body))),
        Err(error) => Err(format!("{error:#}")),
    }
}

/// Asks for a card payment attempt of the body's card tender, records the terminal's
/// approval, and answers the body with the tender naming the attempt.
async fn approved_attempt(
    wire: &Wire,
    workload: &Workload,
    till: usize,
    body: &Value,
    transaction_id: &str,
) -> Result<Value, String> {
    let till = &workload.shop.tills[till];
    let amount = body["tenders"]["tenders"][0]["applied"]
        .as_i64()
        .ok_or("a draft without a card tender")?;
    let payment_id = format!("pay-{transaction_id}");
    let ask = serde_json::json!({"paymentId": payment_id, "sessionId": till.session, "amountCents": amount,
                                 "method": "card", "terminalId": format!("tpe-{}", till.register)});
    let approval = serde_json::json!({"status": "authorized", "authorizedCents": amount,
                                      "authorizationCode": "A1B2C3", "cardBrand": "CB", "last4": "4242"});
    let outcome = format!("/v1/payments/{payment_id}/outcome");
    for (path, body, status) in [("/v1/payments", ask, 201), (outcome.as_str(), approval, 200)] {
        match wire.post_json(path, &till.token, body.to_string()).await {
            Ok(answer) if answer.status == status => {}
            Ok(answer) => {
                return Err(format!(
                    "{path}: {} {}",
                    answer.status,
                    String::from_utf8_lossy(&answer.body)
                ));
            }
            Err(error) => return Err(format!("{path}: {error:#}")),
        }
    }
    let mut body = body.clone();
    body["tenders"]["tenders"][0]["reference"] = Value::String(payment_id);
    Ok(body)
}

pub(super) async fn closed_loop(
    wire: &Arc<Wire>,
    workload: &Arc<Workload>,
    mix: Mix,
    ids: &str,
    clients: usize,
    plan: &BenchPlan,
) -> Result<Outcome> {
    let start = Instant::now();
    let measure_from = start + plan.warmup;
    let until = measure_from + plan.duration;
    let tasks: Vec<_> = (0..clients.max(1))
        .map(|c| {
            let (wire, workload, ids) = (wire.clone(), workload.clone(), ids.to_owned());
            let seed = plan.seed.wrapping_mul(1_000).wrapping_add(c as u64);
            tokio::spawn(async move {
                let mut rng = fastrand::Rng::with_seed(seed);
                let mut histogram = histogram()?;
                let mut tally = Tally::default();
                let till = c % workload.shop.tills.len();
                let mut n = 0u64;
                loop {
                    n += 1;
                    let draft = &workload.carts(mix)[till][workload.pick_cart(&mut rng, till)];
                    let transaction_id = format!("{ids}c{c}-{n}");
                    let customer = workload.customer_for(mix, &mut rng);
                    let sent = Instant::now();
                    if sent >= until {
                        break;
                    }
                    let ok = send(&wire, &workload, mix, till, draft, &transaction_id, customer.as_deref()).await;
                    if sent >= measure_from {
                        histogram.saturating_record(sent.elapsed().as_micros() as u64);
                        tally.record(ok, draft.lines);
                    } else {
                        tally.record_warm_up(ok);
                    }
                }
                anyhow::Ok((histogram, tally))
            })
        })
        .collect();
    let mut total = histogram()?;
    let mut tally = Tally::default();
    for task in tasks {
        let (h, t) = task.await??;
        total.add(&h).context("merging histograms")?;
        tally.sales += t.sales;
        tally.failures += t.failures;
        tally.lines += t.lines;
        tally.paid.add(t.paid);
        tally.warm_up_sales += t.warm_up_sales;
        tally.samples.extend(t.samples);
    }
    Ok(tally.outcome(total, plan.duration))
}

pub(super) async fn open_loop(
    wire: &Arc<Wire>,
    workload: &Arc<Workload>,
    mix: Mix,
    ids: &str,
    rate: u64,
    plan: &BenchPlan,
) -> Result<Outcome> {
    ensure!(rate > 0, "the rate must be positive");
    let interval = Duration::from_secs_f64(1.0 / rate as f64);
    let shared = Arc::new(Mutex::new((histogram()?, Tally::default())));
    let start = tokio::time::Instant::now() + Duration::from_millis(50);
    let measure_from = start + plan.warmup;
    let until = measure_from + plan.duration;
    let mut rng = fastrand::Rng::with_seed(plan.seed);
    let mut in_flight = tokio::task::JoinSet::new();
    let mut n: u64 = 0;
    loop {
        let due = start + interval.mul_f64(n as f64);
        if due >= until {
            break;
        }
        let till = (n as usize) % workload.shop.tills.len();
        n += 1;
        let cart = workload.pick_cart(&mut rng, till);
        let transaction_id = format!("{ids}o-{n}");
        let customer = workload.customer_for(mix, &mut rng);
        tokio::time::sleep_until(due).await;
        let (wire, workload, shared) = (wire.clone(), workload.clone(), shared.clone());
        in_flight.spawn(async move {
            let draft = &workload.carts(mix)[till][cart];
            let ok = send(&wire, &workload, mix, till, draft, &transaction_id, customer.as_deref()).await;
            // From when the sale was due: waiting for a slow server counts.
            let latency = due.elapsed().as_micros() as u64;
            let mut guard = shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if due >= measure_from {
                guard.0.saturating_record(latency);
                guard.1.record(ok, draft.lines);
            } else {
                guard.1.record_warm_up(ok);
            }
        });
        while in_flight.try_join_next().is_some() {}
    }
    while in_flight.join_next().await.is_some() {}
    let (histogram, tally) = Arc::try_unwrap(shared)
        .map_err(|_| anyhow::anyhow!("requests still running"))?
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    Ok(tally.outcome(histogram, plan.duration))
}
