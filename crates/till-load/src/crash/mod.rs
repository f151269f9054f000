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
//!
//! With card attempts, each sale's card payment goes through the payment-attempt ledger as a
//! till runs it: the attempt asked for, its approval recorded, then the sale naming it, each
//! step sent until acknowledged; kills fall anywhere between them. Then every acknowledged
//! sale's attempt must be captured by that sale, and no captured attempt may lack its sale.
//!
//! With counter work, tills also give back a line of a sale now and then and put cash in
//! their drawers; then every acknowledged return is a ticket like a sale, and every
//! acknowledged movement is counted once in its session and the feed.
//!
//! The nemesis is the nodes (killed with SIGKILL in turn and started again) or the database
//! beneath them: an outside command fails it over again and again, by kinds of fault (see
//! scripts/failover-test), and the run reports how long writes stopped each time. Either way
//! no node may answer a server error other than a 503 that says when to try again.

use super::client::Client;
use super::cluster::{Cluster, NodeConfig};
use super::shop::{Shop, ShopSpec, Till, admin_token, provision};
use super::stored_value::{Budget, Spend, gift_card_share, issue_cards, loyalty_share, point_value, points_of};
use anyhow::{Context, Result, ensure};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

mod checks;
mod counter;
pub mod nemesis;
use checks::{audit, audit_points_ledger, check, check_card_attempts, check_feed, check_stored_value};
use counter::{Moved, check_movements, maybe_move_cash, maybe_return};
use nemesis::{Fault, downtime_ms, strike};

/// What fails while the tills sell.
#[derive(Clone, Debug)]
pub enum Nemesis {
    /// The nodes, killed in turn and started again, once per cycle.
    Nodes,
    /// The database: `command KIND` injects a fault of each kind once per cycle.
    Database { command: String, kinds: Vec<String> },
}

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
    /// Each sale's card payment goes through a payment attempt.
    pub card_attempts: bool,
    /// Tills also make returns and put cash in their drawers.
    pub counter: bool,
    pub nemesis: Nemesis,
    /// Further `TILL_*` settings of the nodes.
    pub env: Vec<(String, String)>,
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
    /// Acknowledged sales whose card payment was an attempt they captured.
    pub card_attempt_sales: usize,
    pub returns: usize,
    pub movements: usize,
    /// Each fault of the database with how long writes stopped, in milliseconds.
    pub faults: Vec<(Fault, u64)>,
    pub elapsed: Duration,
}

/// A ticket's kind, as the feed names its event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ticket {
    Sale,
    Return,
}

impl Ticket {
    fn event(self) -> &'static str {
        match self {
            Ticket::Sale => "sale.completed",
            Ticket::Return => "return.completed",
        }
    }
}

/// A ticket as its till remembers it once acknowledged.
struct Booked {
    transaction_id: String,
    register: String,
    kind: Ticket,
    /// Articles and quantities; negative for a return.
    lines: Vec<(usize, i64)>,
    body: String,
    customer: Option<String>,
    spend: Option<Spend>,
    /// The payment attempt its card tender captured.
    payment: Option<String>,
    /// When its till had the acknowledgement, in milliseconds since the epoch.
    acknowledged_at: u64,
}

fn unix_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
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
        env: [("TILL_SQLITE_SYNCHRONOUS".to_owned(), "full".to_owned())]
            .into_iter()
            .chain(plan.env.iter().cloned())
            .collect(),
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
            let work = Work {
                card_attempts: plan.card_attempts,
                counter: plan.counter,
            };
            tokio::spawn(async move { sell_until_stopped(client, shop, pool, work, t, seed, stop).await })
        })
        .collect();

    let mut rng = fastrand::Rng::with_seed(plan.seed);
    let (mut kills, mut faults) = (0, Vec::new());
    for cycle in 0..plan.cycles {
        match &plan.nemesis {
            Nemesis::Nodes => {
                tokio::time::sleep(Duration::from_millis(rng.u64(20..120))).await;
                let node = &mut cluster.nodes[cycle % plan.nodes];
                node.kill().await?;
                kills += 1;
                node.start()
                    .await
                    .with_context(|| format!("restart after kill {kills}"))?;
            }
            Nemesis::Database { command, kinds } => {
                for kind in kinds {
                    // Load first, so that the fault strikes writes in flight.
                    tokio::time::sleep(Duration::from_millis(rng.u64(1_000..3_000))).await;
                    let fault = strike(command, kind).await?;
                    println!(
                        "{kind} {}: healthy after {:.1} s",
                        cycle + 1,
                        (fault.healthy_at.saturating_sub(fault.struck_at)) as f64 / 1000.0
                    );
                    faults.push(fault);
                }
            }
        }
    }
    // Writes after the last fault, so that its downtime ends with one.
    if !faults.is_empty() {
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let (mut resends, mut moved) = (0, Vec::new());
    for till in tills {
        let sold = till.await??;
        booked.extend(sold.booked);
        moved.extend(sold.moved);
        resends += sold.resends;
    }
    // What was acknowledged is checked first, so that a run with server errors still says
    // whether anything was lost.
    check(&client, &admin, &shop, &booked).await?;
    let events = check_feed(&client, &admin, &booked).await?;
    check_movements(&client, &admin, &shop, &moved, &events).await?;
    if let Some(pool) = &pool {
        check_stored_value(&client, &admin, pool, &booked).await?;
    }
    if plan.card_attempts {
        check_card_attempts(&client, &admin, &booked).await?;
    }
    cluster.kill_all().await?;
    audit(&plan.database_url, &plan.work_dir, &key_file).await?;
    if let Some(pool) = &pool {
        audit_points_ledger(&plan.database_url, pool, &booked).await?;
    }
    ensure!(
        client.faults() == 0,
        "nothing acknowledged was lost, but nodes answered {} server errors other than a 503 with \
         Retry-After:\n{}",
        client.faults(),
        client.faults_seen()
    );
    let paid = |kind: fn(&Spend) -> bool| booked.iter().filter(|b| b.spend.as_ref().is_some_and(kind)).count();
    let mut acknowledged: Vec<u64> = booked.iter().map(|b| b.acknowledged_at).collect();
    acknowledged.sort_unstable();
    let returns = booked.iter().filter(|b| b.kind == Ticket::Return).count();
    Ok(CrashReport {
        kills,
        sales: booked.len() - returns,
        returns,
        movements: moved.len(),
        faults: faults
            .into_iter()
            .map(|fault| {
                let downtime = downtime_ms(&fault, &acknowledged);
                (fault, downtime)
            })
            .collect(),
        resends,
        gift_card_sales: paid(|spend| matches!(spend, Spend::GiftCard { .. })),
        loyalty_sales: paid(|spend| matches!(spend, Spend::Loyalty { .. })),
        card_attempt_sales: booked.iter().filter(|b| b.payment.is_some()).count(),
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
            kind: Ticket::Sale,
            lines,
            body: ack.body,
            customer: Some(customer.clone()),
            spend: None,
            payment: None,
            acknowledged_at: unix_millis(),
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

/// What a till does besides selling.
#[derive(Clone, Copy)]
struct Work {
    card_attempts: bool,
    counter: bool,
}

/// What a till had acknowledged, and how many sends beyond the first it took.
struct Sold {
    booked: Vec<Booked>,
    moved: Vec<Moved>,
    resends: u64,
}

/// One till: sale after sale, each sent until acknowledged, until told to stop.
async fn sell_until_stopped(
    client: Client,
    shop: Arc<Shop>,
    pool: Option<Arc<Pool>>,
    work: Work,
    index: usize,
    seed: u64,
    stop: Arc<AtomicBool>,
) -> Result<Sold> {
    let till: &Till = &shop.tills[index];
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut booked, mut moved, mut resends, mut sold) = (Vec::new(), Vec::new(), 0u64, 0usize);
    while !stop.load(Ordering::Relaxed) {
        sold += 1;
        let transaction_id = format!("{}-{sold}", till.register);
        let lines = shop.random_lines(&mut rng, 4);
        let (customer, spend) = match &pool {
            Some(pool) => pool.pick(&mut rng, shop.total(&lines)),
            None => (None, None),
        };
        let mut sale = shop.sale_paying(till, &transaction_id, &lines, customer.as_deref(), spend.as_ref());
        let payment = match work.card_attempts {
            true => Some(approved_attempt(&client, till, &mut sale, &transaction_id).await?),
            false => None,
        };
        let ack = client
            .finalize_until_acknowledged(&till.token, &sale, Duration::from_secs(120))
            .await?;
        resends += u64::from(ack.attempts - 1);
        if let (Some(pool), Some(customer)) = (&pool, &customer) {
            pool.earned(customer, &ack.body)?;
        }
        let sale = Booked {
            transaction_id,
            register: till.register.clone(),
            kind: Ticket::Sale,
            lines,
            body: ack.body,
            customer,
            spend,
            payment,
            acknowledged_at: unix_millis(),
        };
        if work.counter {
            let given_back = maybe_return(&client, &shop, till, sold, &sale).await?;
            booked.push(sale);
            booked.extend(given_back);
            moved.extend(maybe_move_cash(&client, till, sold, &mut rng).await?);
        } else {
            booked.push(sale);
        }
    }
    Ok(Sold { booked, moved, resends })
}

/// Asks for an attempt of the sale's card tender and records its approval, each sent until
/// acknowledged as a till sends them, then names the attempt in the tender: answers its id.
async fn approved_attempt(
    client: &Client,
    till: &Till,
    sale: &mut serde_json::Value,
    transaction_id: &str,
) -> Result<String> {
    let give_up = Duration::from_secs(120);
    let card = &mut sale["tenders"]["tenders"][0];
    let amount = card["applied"].as_i64().context("a sale without a card tender")?;
    let payment_id = format!("pay-{transaction_id}");
    let ask = serde_json::json!({"paymentId": payment_id, "sessionId": till.session, "amountCents": amount,
                                 "method": "card", "terminalId": format!("tpe-{}", till.register)});
    let what = format!("attempt {payment_id}");
    client
        .post_until_acknowledged("/v1/payments", &till.token, &ask, &[201, 200], &what, give_up)
        .await?;
    let approval = serde_json::json!({"status": "authorized", "authorizedCents": amount, "last4": "4242"});
    let outcome = format!("/v1/payments/{payment_id}/outcome");
    client
        .post_until_acknowledged(&outcome, &till.token, &approval, &[200], &what, give_up)
        .await?;
    card["reference"] = serde_json::Value::String(payment_id.clone());
    Ok(payment_id)
}
