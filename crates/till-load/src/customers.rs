//! A chain-sized customer directory (docs/customers.md): on one node serving a new database,
//! fills the directory with profiles through `PUT /v1/customers/{id}` from concurrent clients,
//! then measures the searches of `GET /v1/customers` and the updates of existing profiles
//! under light concurrency, times the erasure of a customer named by many sales, and finally
//! compares finalizeSale throughput with sales naming a customer of the directory against the
//! same sales naming none, in one run (`bench`'s `customers` mixes).
//!
//! Customer `n` is the benchmark's customer `n` (same id), so the named sales name profiles of
//! the directory. Profiles look like a French chain's: common first and last names (accents,
//! compound first names), e-mail addresses of the usual providers, mobile numbers written in
//! the forms a cashier types, postal codes, a few groups and some consent. Each request of the
//! measured phase is sent by one of a few clients when its previous one was answered: latency
//! as a client sees it, its own HTTP stack included.

use crate::bench::{self, BenchPlan, BenchReport, customer_name};
use crate::client::Client;
use crate::cluster::{Cluster, NodeConfig};
use crate::reads::{Timing, histogram, timing};
use crate::shop::{ShopSpec, admin_token, provision};
use anyhow::{Result, bail};
use futures::StreamExt;
use hdrhistogram::Histogram;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;
use till_core::words::fold;

#[derive(Clone, Debug)]
pub struct CustomersPlan {
    pub binary: PathBuf,
    /// The database the directory is written to (new).
    pub database_url: String,
    pub work_dir: PathBuf,
    pub customers: usize,
    /// Clients writing the directory at once.
    pub fill_clients: usize,
    /// Requests of each kind in the measured phase, shared by `lookup_clients`.
    pub lookups: usize,
    pub lookup_clients: usize,
    /// Sales naming the customer who is then erased.
    pub customer_sales: usize,
    /// The shop those sales are rung in (the benchmark's).
    pub articles: usize,
    pub tills: usize,
    /// The finalize comparison, on the same database; `None` skips it.
    pub finalize: Option<BenchPlan>,
    pub seed: u64,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomersReport {
    pub engine: String,
    pub customers: usize,
    pub fill: Fill,
    pub lookup_clients: usize,
    pub searches: Vec<Timing>,
    pub updates: Timing,
    pub erasure: Erasure,
    pub finalize: Option<FinalizeComparison>,
    /// Requests that did not answer as expected (sales of the finalize runs are counted there).
    pub failures: u64,
    /// The first of them, as answered.
    pub failure_samples: Vec<String>,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fill {
    pub clients: usize,
    pub seconds: f64,
    pub per_second: f64,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Erasure {
    /// Sales naming the customer when they were erased.
    pub sales: usize,
    /// How long ringing those sales took.
    pub ringing_seconds: f64,
    /// The erasure's latency as the client saw it.
    pub ms: f64,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FinalizeComparison {
    pub pace: String,
    pub anonymous: FinalizeRun,
    pub named: FinalizeRun,
    /// The named sales' throughput over the anonymous ones' (target: at least 0.95).
    pub named_over_anonymous: f64,
    /// The nodes' CPU per named sale over that per anonymous sale.
    pub cpu_named_over_anonymous: f64,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FinalizeRun {
    pub sales: u64,
    pub per_second: f64,
    pub p99_ms: f64,
    /// The node's CPU time per acknowledged sale, in microseconds.
    pub cpu_us_per_sale: f64,
    pub failures: u64,
}

/// First names, some compound, some with accents.
const FIRST_NAMES: &str = "Marie Jean Pierre Michel André Philippe Nathalie Isabelle Sylvie Catherine Françoise \
    Christine Monique Jacques Alain Bernard Daniel Patrick Nicolas Christophe Stéphane Sébastien Julien \
    Frédéric Laurent Éric David Thomas Olivier Valérie Sandrine Céline Aurélie Émilie Julie Camille Léa \
    Manon Chloé Inès Sarah Emma Louise Jade Lucas Hugo Louis Gabriel Arthur Raphaël Théo Maël Noé Zoé \
    Anaïs Mathilde Clémence Hélène Agnès Brigitte Josiane Gérard René Thérèse Josée Renée Noël Joël \
    Jean-Pierre Jean-Luc Jean-François Marie-Hélène Marie-Claire Anne-Sophie Pierre-Yves Jean-Baptiste \
    Marie-Thérèse Anne-Laure François Guillaume Antoine Maxime Alexandre Vincent Benoît Jérôme Rémi \
    Cédric Grégory Yannick Loïc Gaëlle Maëlle Solène Océane Margaux Élodie Amélie Pauline Justine \
    Mélanie Virginie Karine Sophie Laure Claire Anne Yves Luc Paul Léon Jules Adèle Rose Alice Lina \
    Mohamed Karim Nadia Fatima Yasmine Sofiane Mehdi Rachid";

/// The commonest family names, some compound or with a particle.
const LAST_NAMES: &str = "Martin Bernard Thomas Petit Robert Richard Durand Dubois Moreau Laurent Simon \
    Michel Lefebvre Leroy Roux David Bertrand Morel Fournier Girard Bonnet Dupont Lambert Fontaine \
    Rousseau Vincent Muller Lefèvre Faure André Mercier Blanc Guérin Boyer Garnier Chevalier François \
    Legrand Gauthier Garcia Perrin Robin Clément Morin Nicolas Henry Roussel Mathieu Gautier Masson \
    Marchand Duval Denis Dumont Marie Lemaire Noël Meyer Dufour Meunier Brun Blanchard Giraud Joly \
    Rivière Lucas Brunet Gaillard Barbier Arnaud Martinez Gérard Roche Renard Schmitt Roy Leroux Colin \
    Vidal Caron Picard Roger Fabre Aubert Lemoine Renaud Dumas Lacroix Olivier Philippe Bourgeois \
    Pierre Benoît Rey Leclerc Payet Rolland Leclercq Guillaume Lecomte Lopez Jean Dupuy Guillot \
    Hubert Berger Carpentier Sanchez Dupuis Moulin Louis Deschamps Huet Vasseur Perez Boucher Fleury \
    Royer Klein Jacquet Adam Paris Poirier Marty Aubry Guyot Carré Charles Renault Charpentier Ménard \
    Maillard Baron Bertin Bailly Hervé Schneider Fernandez Le\u{a0}Gall Collet Léger Bouvier Julien \
    Prévost Millet Perrot Daniel Le\u{a0}Roux Cousin Germain Breton Besson Langlois Rémy Le\u{a0}Goff \
    Pelletier Lévêque Perrier Leblanc Barré Lebrun Marchal Weber Mallet Hamon Boulanger Jacob Monnier \
    Michaud Rodriguez Guichard Gillet Étienne Grondin Poulain Tessier Chevallier Collin Chauvin \
    Da\u{a0}Silva Bouchet Gay Lemaître Bénard Maréchal Humbert Reynaud Antoine Hoarau Perret Barthélemy \
    Cordier Pichon Lejeune Gilbert Lamy Delaunay Pasquier Carlier Laporte";

const DOMAINS: [&str; 10] = [
    "gmail.com",
    "orange.fr",
    "free.fr",
    "laposte.net",
    "sfr.fr",
    "hotmail.fr",
    "wanadoo.fr",
    "yahoo.fr",
    "outlook.fr",
    "icloud.com",
];

/// Groups and the share of customers in each, in percent.
const GROUPS: [(&str, u32); 3] = [("vip", 10), ("pro", 3), ("staff", 1)];

/// The list's page size in the measured searches: a till's screen of names.
const PAGE: usize = 20;

/// A profile as the load generator writes it and later looks it up.
#[derive(Clone, Debug)]
struct Person {
    first: &'static str,
    last: &'static str,
    email: Option<String>,
    /// As written at the till, and in E.164.
    phone: Option<(String, String)>,
    postal_code: String,
    birth_date: Option<String>,
    groups: Vec<&'static str>,
    /// Marketing by e-mail, by SMS, e-receipt; `None` leaves consent as it stands.
    consent: Option<(bool, bool, bool)>,
    notes: Option<&'static str>,
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .into_iter()
        .flat_map(char::to_uppercase)
        .chain(chars)
        .collect()
}

fn names(list: &'static str) -> Vec<&'static str> {
    list.split([' ', '\n']).filter(|name| !name.is_empty()).collect()
}

/// The name lists, split once.
struct Names {
    first: Vec<&'static str>,
    last: Vec<&'static str>,
}

impl Names {
    fn new() -> Names {
        Names {
            first: names(FIRST_NAMES),
            last: names(LAST_NAMES),
        }
    }

    /// Customer `n`'s profile: the same for a seed whenever it is asked for.
    fn person(&self, n: usize, seed: u64) -> Person {
        let mut rng = fastrand::Rng::with_seed(seed ^ (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let first = self.first[rng.usize(0..self.first.len())];
        let last = self.last[rng.usize(0..self.last.len())];
        let local = |name: &str| {
            fold(name)
                .split(|c: char| !c.is_alphanumeric())
                .collect::<Vec<_>>()
                .join("-")
        };
        let email = (rng.u32(0..100) < 85).then(|| {
            let domain = DOMAINS[rng.usize(0..DOMAINS.len())];
            match rng.u8(0..3) {
                0 => format!("{}.{}{n}@{domain}", local(first), local(last)),
                1 => format!(
                    "{}{}{n}@{domain}",
                    local(first).chars().next().unwrap_or('x'),
                    local(last)
                ),
                // Some are typed with capitals; the directory keeps them lowercased.
                _ => format!(
                    "{}.{}.{n}@{domain}",
                    capitalized(&local(first)),
                    capitalized(&local(last))
                ),
            }
        });
        let phone = (rng.u32(0..100) < 70).then(|| {
            // A bijection of the customers below 10^8: each has a number of their own.
            let digits = format!("{:08}", (n as u64 * 7_919 + 1_234_567) % 100_000_000);
            let mobile = if n.is_multiple_of(5) { '7' } else { '6' };
            let d = |range: std::ops::Range<usize>| &digits[range];
            let typed = match n % 3 {
                0 => format!("0{mobile} {} {} {} {}", d(0..2), d(2..4), d(4..6), d(6..8)),
                1 => format!("+33 {mobile} {} {} {} {}", d(0..2), d(2..4), d(4..6), d(6..8)),
                _ => format!("0{mobile}{digits}"),
            };
            (typed, format!("+33{mobile}{digits}"))
        });
        let postal_code = format!("{:02}{:02}0", rng.u32(1..96), rng.u32(0..100));
        let birth_date = (rng.u32(0..100) < 60)
            .then(|| format!("{}-{:02}-{:02}", rng.u32(1940..2007), rng.u32(1..13), rng.u32(1..29)));
        let groups = GROUPS
            .iter()
            .filter(|(_, share)| rng.u32(0..100) < *share)
            .map(|(group, _)| *group)
            .collect();
        let consent = (rng.u32(0..100) < 50).then(|| (rng.bool(), rng.bool(), rng.bool()));
        let notes = (rng.u32(0..100) < 5).then_some("Préfère le ticket papier");
        Person {
            first,
            last,
            email,
            phone,
            postal_code,
            birth_date,
            groups,
            consent,
            notes,
        }
    }
}

impl Person {
    fn display_name(&self) -> String {
        format!("{} {}", self.first, self.last.replace('\u{a0}', " "))
    }

    /// The body of a `PUT` of this profile; `moved` writes another postal code and a note, as
    /// an update at the till would.
    fn body(&self, moved: Option<u32>) -> Value {
        let mut body = json!({
            "displayName": self.display_name(),
            "email": self.email,
            "phone": self.phone.as_ref().map(|(typed, _)| typed),
            "postalCode": match moved {
                Some(code) => format!("{:05}", code % 96_000 + 1_000),
                None => self.postal_code.clone(),
            },
            "birthDate": self.birth_date,
            "groups": self.groups,
            "notes": match moved {
                Some(_) => Some("Adresse mise à jour"),
                None => self.notes,
            },
        });
        if let Some((email, sms, receipt)) = self.consent {
            body["consent"] = json!({"marketingEmail": email, "marketingSms": sms, "eReceipt": receipt});
        }
        body
    }
}

/// Failed requests, counted, the first few kept.
#[derive(Default)]
struct Failures {
    count: u64,
    samples: Vec<String>,
}

impl Failures {
    fn add(&mut self, what: String) {
        self.count += 1;
        if self.samples.len() < 5 {
            self.samples.push(what);
        }
    }
}

/// Failures past which the run stops: a directory this broken measures nothing.
const MAX_FAILURES: u64 = 100;

pub async fn run(plan: &CustomersPlan) -> Result<CustomersReport> {
    std::fs::create_dir_all(&plan.work_dir)?;
    if bench::engine_of(&plan.database_url) == "postgres" {
        bench::baseline::create_postgres_database(&plan.database_url).await?;
    }
    let key_file = plan.work_dir.join("fiscal-key.pem");
    let _ = std::fs::remove_file(&key_file);
    till::fiscal::new_key(&key_file)?;
    let secret = format!("customers-secret-{}", plan.seed);
    let config = NodeConfig {
        binary: plan.binary.clone(),
        database_url: plan.database_url.clone(),
        jwt_secret: secret.clone(),
        fiscal_key_file: key_file,
        // Durable at each commit, as the benchmark's nodes.
        env: vec![("TILL_SQLITE_SYNCHRONOUS".into(), "full".into())],
        work_dir: plan.work_dir.join("directory"),
    };
    let mut cluster = Cluster::start(config, 1).await?;
    let client = Client::new(cluster.urls())?;
    let admin = admin_token(&secret);
    let names = Names::new();
    let failures = Mutex::new(Failures::default());

    let fill = fill(&client, &admin, &names, plan, &failures).await?;
    let (searches, updates) = lookups(&client, &admin, &names, plan, &failures).await?;
    let erasure = erasure(&client, &admin, &names, plan, &failures).await?;
    cluster.kill_all().await?;
    let Failures { mut count, mut samples } = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    let finalize = match &plan.finalize {
        Some(bench_plan) => {
            let reports = bench::run(&BenchPlan {
                database_url: plan.database_url.clone(),
                customers: plan.customers,
                mixes: bench::Mixes::Customers,
                ..bench_plan.clone()
            })
            .await?;
            for report in &reports {
                count += report.failures;
                samples.extend(report.failure_samples.iter().cloned());
            }
            Some(compare(&reports)?)
        }
        None => None,
    };
    samples.truncate(5);
    Ok(CustomersReport {
        engine: bench::engine_of(&plan.database_url).into(),
        customers: plan.customers,
        fill,
        lookup_clients: plan.lookup_clients,
        searches,
        updates,
        erasure,
        finalize,
        failures: count,
        failure_samples: samples,
    })
}

/// Writes every profile, `plan.fill_clients` requests at once.
async fn fill(
    client: &Client,
    admin: &str,
    names: &Names,
    plan: &CustomersPlan,
    failures: &Mutex<Failures>,
) -> Result<Fill> {
    let started = Instant::now();
    let tenth = (plan.customers / 10).max(1);
    let mut writes = futures::stream::iter(0..plan.customers)
        .map(|n| async move {
            let path = format!("/v1/customers/{}", customer_name(n));
            let body = names.person(n, plan.seed).body(None);
            (n, client.put(&path, admin, &body).await)
        })
        .buffer_unordered(plan.fill_clients.max(1));
    let mut done = 0usize;
    while let Some((n, reply)) = writes.next().await {
        match reply {
            Ok(reply) if reply.status == 201 => {}
            Ok(reply) => record(failures, format!("PUT customer {n}: {} {}", reply.status, reply.text))?,
            Err(error) => record(failures, format!("PUT customer {n}: {error:#}"))?,
        }
        done += 1;
        if done.is_multiple_of(tenth) {
            let seconds = started.elapsed().as_secs_f64();
            eprintln!(
                "till-load: {done} profiles written in {seconds:.0} s ({:.0}/s)",
                done as f64 / seconds
            );
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    Ok(Fill {
        clients: plan.fill_clients.max(1),
        seconds,
        per_second: plan.customers as f64 / seconds,
    })
}

fn record(failures: &Mutex<Failures>, what: String) -> Result<()> {
    let mut failures = failures.lock().unwrap_or_else(|e| e.into_inner());
    failures.add(what);
    if failures.count > MAX_FAILURES {
        bail!(
            "more than {MAX_FAILURES} requests failed; first: {:?}",
            failures.samples
        );
    }
    Ok(())
}

/// The measured searches, in the order they are reported, then the updates.
const SHAPES: [&str; 8] = [
    "search: a last name",
    "search: 3 letters of a last name",
    "search: a first name, a last name's start",
    "search: an e-mail address",
    "search: a phone as typed (French forms)",
    "search: a phone in E.164",
    "list: group vip (10 %)",
    "list: group staff (1 %)",
];

/// Each search shape and an update of an existing profile, `plan.lookups` times each, shared
/// by `plan.lookup_clients` clients that each send a request when their last was answered.
async fn lookups(
    client: &Client,
    admin: &str,
    names: &Names,
    plan: &CustomersPlan,
    failures: &Mutex<Failures>,
) -> Result<(Vec<Timing>, Timing)> {
    let clients = plan.lookup_clients.max(1);
    let customers = plan.customers.max(1);
    let mut all = Vec::with_capacity(clients);
    let runs = (0..clients).map(|c| async move {
        let mut rng = fastrand::Rng::with_seed(plan.seed.wrapping_mul(31).wrapping_add(c as u64));
        let mut searches = (0..SHAPES.len()).map(|_| histogram()).collect::<Result<Vec<_>>>()?;
        let mut updates = histogram()?;
        let share = plan.lookups / clients + usize::from(c < plan.lookups % clients);
        for _ in 0..share {
            // A customer with every field the searches need.
            let (n, person) = loop {
                let n = rng.usize(0..customers);
                let person = names.person(n, plan.seed);
                if person.email.is_some() && person.phone.is_some() {
                    break (n, person);
                }
            };
            let (typed, e164) = person.phone.clone().unwrap_or_default();
            let id = customer_name(n);
            let last = person.last.replace('\u{a0}', " ");
            let last_start: String = fold(&last)
                .split(' ')
                .next()
                .unwrap_or_default()
                .chars()
                .take(3)
                .collect();
            let first_word = person.first.split('-').next().unwrap_or(person.first);
            let queries = [
                format!("q={}", encode(&last)),
                format!("q={}", encode(&last_start)),
                format!("q={}", encode(&format!("{first_word} {last_start}"))),
                format!("q={}", encode(person.email.as_deref().unwrap_or_default())),
                format!("q={}", encode(&typed)),
                format!("q={}", encode(&e164)),
                "group=vip".to_owned(),
                "group=staff".to_owned(),
            ];
            for (shape, query) in queries.iter().enumerate() {
                let path = format!("/v1/customers?limit={PAGE}&{query}");
                let sent = Instant::now();
                let reply = client.get(&path, admin).await;
                record_latency(&mut searches[shape], sent)?;
                let page = match reply {
                    Ok(reply) if reply.status == 200 => reply.json(),
                    Ok(reply) => {
                        record(failures, format!("GET {path}: {} {}", reply.status, reply.text))?;
                        continue;
                    }
                    Err(error) => {
                        record(failures, format!("GET {path}: {error:#}"))?;
                        continue;
                    }
                };
                let items = page["items"].as_array().cloned().unwrap_or_default();
                // An e-mail or a phone finds its customer; a name finds them or others before them.
                let found = match shape {
                    3..=5 => items.iter().any(|item| item["customerId"] == id.as_str()),
                    _ => !items.is_empty(),
                };
                if !found {
                    record(failures, format!("GET {path} did not find what it should: {page}"))?;
                }
            }
            let n = rng.usize(0..customers);
            let path = format!("/v1/customers/{}", customer_name(n));
            let body = names.person(n, plan.seed).body(Some(rng.u32(..)));
            let sent = Instant::now();
            let reply = client.put(&path, admin, &body).await;
            record_latency(&mut updates, sent)?;
            match reply {
                Ok(reply) if reply.status == 200 => {}
                Ok(reply) => record(failures, format!("PUT {path}: {} {}", reply.status, reply.text))?,
                Err(error) => record(failures, format!("PUT {path}: {error:#}"))?,
            }
        }
        anyhow::Ok((searches, updates))
    });
    for run in futures::future::join_all(runs).await {
        all.push(run?);
    }
    let mut searches = (0..SHAPES.len()).map(|_| histogram()).collect::<Result<Vec<_>>>()?;
    let mut updates = histogram()?;
    for (theirs, their_updates) in &all {
        for (ours, theirs) in searches.iter_mut().zip(theirs) {
            ours.add(theirs)?;
        }
        updates.add(their_updates)?;
    }
    Ok((
        SHAPES.iter().zip(&searches).map(|(name, h)| timing(name, h)).collect(),
        timing("update of a profile (PUT)", &updates),
    ))
}

fn record_latency(into: &mut Histogram<u64>, sent: Instant) -> Result<()> {
    into.record(u64::try_from(sent.elapsed().as_micros()).unwrap_or(u64::MAX).max(1))?;
    Ok(())
}

/// A customer of the directory named by `plan.customer_sales` sales, then erased: the time of
/// the erasure.
async fn erasure(
    client: &Client,
    admin: &str,
    names: &Names,
    plan: &CustomersPlan,
    failures: &Mutex<Failures>,
) -> Result<Erasure> {
    let shop = provision(
        client,
        admin,
        &ShopSpec::bench(plan.articles.max(20), plan.tills.max(1)),
    )
    .await?;
    let customer = format!("erased-{}", plan.seed);
    let path = format!("/v1/customers/{customer}");
    client
        .put(&path, admin, &names.person(0, plan.seed.wrapping_add(1)).body(None))
        .await?
        .expect_ok("the erased customer's profile")?;
    let started = Instant::now();
    let shop = &shop;
    let mut sales = futures::stream::iter(0..plan.customer_sales)
        .map(|n| {
            let customer = customer.as_str();
            async move {
                let mut rng = fastrand::Rng::with_seed(plan.seed.wrapping_add(n as u64));
                let till = &shop.tills[n % shop.tills.len()];
                let lines = shop.random_lines(&mut rng, 5);
                let sale = shop.sale_paying(till, &format!("erased-{n}"), &lines, Some(customer), None);
                (n, client.post("/v1/checkout/finalize", &till.token, &sale).await)
            }
        })
        .buffer_unordered(16);
    while let Some((n, reply)) = sales.next().await {
        match reply {
            Ok(reply) if reply.status == 201 => {}
            Ok(reply) => record(failures, format!("sale {n}: {} {}", reply.status, reply.text))?,
            Err(error) => record(failures, format!("sale {n}: {error:#}"))?,
        }
    }
    let ringing_seconds = started.elapsed().as_secs_f64();
    let sent = Instant::now();
    let erased = client.post(&format!("{path}/erase"), admin, &json!({})).await?;
    let ms = sent.elapsed().as_secs_f64() * 1000.0;
    let erased = erased.expect(200, "the erasure")?.json();
    if erased["erasedAt"].is_null() || !erased["email"].is_null() {
        record(failures, format!("the erasure answered {erased}"))?;
    }
    // The finalize comparison opens the same registers' sessions again.
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
    }
    Ok(Erasure {
        sales: plan.customer_sales,
        ringing_seconds,
        ms,
    })
}

fn compare(reports: &[BenchReport]) -> Result<FinalizeComparison> {
    let of = |mix: bench::Mix| reports.iter().find(|r| r.mix.name == mix.name());
    let (Some(anonymous), Some(named)) = (of(bench::Mix::Anonymous), of(bench::Mix::Named)) else {
        bail!("the finalize runs reported nothing");
    };
    let run = |r: &BenchReport| FinalizeRun {
        sales: r.sales,
        per_second: r.per_second,
        p99_ms: r.latency_us.p99 as f64 / 1000.0,
        cpu_us_per_sale: r.cpu_us_per_sale.nodes,
        failures: r.failures,
    };
    Ok(FinalizeComparison {
        pace: anonymous.pace.clone(),
        named_over_anonymous: bench::named_over_anonymous(reports).unwrap_or(0.0),
        cpu_named_over_anonymous: named.cpu_us_per_sale.nodes / anonymous.cpu_us_per_sale.nodes.max(f64::MIN_POSITIVE),
        anonymous: run(anonymous),
        named: run(named),
    })
}

/// `text` as a query value: letters and digits as they are, any other byte escaped.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b.is_ascii_alphanumeric() {
            true => char::from(b).to_string(),
            false => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_the_same_for_a_seed_and_phones_are_each_customers_own() {
        let names = Names::new();
        let (a, b) = (names.person(42, 1), names.person(42, 1));
        assert_eq!(a.display_name(), b.display_name());
        assert_eq!(a.email, b.email);
        let phones: std::collections::HashSet<String> = (0..10_000)
            .filter_map(|n| names.person(n, 1).phone.map(|(_, e164)| e164))
            .collect();
        let with_phone = (0..10_000).filter(|n| names.person(*n, 1).phone.is_some()).count();
        assert_eq!(phones.len(), with_phone);
        assert!(phones.iter().all(|phone| phone.len() == 12 && phone.starts_with("+33")));
        assert!(names.last.contains(&"Le\u{a0}Gall") && names.first.contains(&"Marie-Hélène"));
    }
}
