//! A chain-sized catalog (docs/stock.md): writes an NDJSON file of articles, times
//! `till catalog import` on it with that process's peak memory, then measures, on one node
//! serving the database, barcode look-ups and searches by name, and finally finalizeSale
//! throughput with that catalog against a catalog of the benchmark's usual 5,000 articles, in
//! the same run (as `bench --prefilled` compares databases).
//!
//! Article `n` is the benchmark shop's article `n` (same id), so the finalize run's sales ring
//! articles of the big catalog. Names are three words of a list of groceries and a weight, so
//! that a search's prefix matches as many articles as it would in a shop; each article has an
//! EAN-13 of the in-store range (prefix 20). Each look-up is sent when the one before it was
//! answered: latency as one client sees it, its own HTTP stack included. A store's snapshot of
//! the whole catalog is then streamed from a node of its own, with that node's peak memory.

use crate::bench::{self, AgainstPrefilled, BenchPlan};
use crate::client::Client;
use crate::cluster::{Cluster, NodeConfig};
use crate::reads::{Timing, histogram, timing};
use crate::shop::{admin_token, sku_of};
use anyhow::{Context, Result, bail, ensure};
use hdrhistogram::Histogram;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;
use till_core::barcode::Gtin;
use till_core::words::fold;

#[derive(Clone, Debug)]
pub struct CatalogPlan {
    pub binary: PathBuf,
    /// The database the catalog is imported into (new).
    pub database_url: String,
    pub work_dir: PathBuf,
    pub articles: usize,
    /// Look-ups of each kind.
    pub lookups: usize,
    /// The finalize comparison, run with this plan's settings (its database is the small
    /// catalog's); `None` skips it.
    pub finalize: Option<BenchPlan>,
    pub seed: u64,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogReport {
    pub engine: String,
    pub articles: usize,
    pub file_mib: f64,
    pub import: ImportRun,
    pub lookups: Vec<Timing>,
    pub snapshot: SnapshotRun,
    pub finalize: Option<FinalizeComparison>,
}

/// A store's snapshot of the whole catalog, streamed.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotRun {
    pub seconds: f64,
    pub lines: u64,
    pub mib: f64,
    /// Peak resident set of the node that served it.
    pub peak_rss_mib: f64,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportRun {
    pub seconds: f64,
    pub per_second: f64,
    /// Peak resident set of the `till catalog import` process.
    pub peak_rss_mib: f64,
    /// What it printed.
    pub summary: String,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FinalizeComparison {
    pub small_articles: usize,
    pub small_per_second: f64,
    pub big_per_second: f64,
    /// The big catalog's throughput over the small one's (target: at least 0.9).
    pub big_over_small: f64,
    pub failures: u64,
}

/// Words names are made of: a shop's, some with accents, several sharing their first letters.
const WORDS: &[&str] = &[
    "chocolat",
    "chocolatine",
    "chou",
    "chouquette",
    "chaud",
    "chèvre",
    "champignon",
    "chips",
    "cidre",
    "citron",
    "café",
    "caramel",
    "carotte",
    "cerise",
    "céleri",
    "crème",
    "crêpe",
    "croissant",
    "confiture",
    "cornichon",
    "baguette",
    "beurre",
    "biscuit",
    "blé",
    "bière",
    "brioche",
    "brocoli",
    "brûlée",
    "bio",
    "blanc",
    "noir",
    "noisette",
    "noix",
    "nature",
    "nectarine",
    "nougat",
    "pain",
    "pâte",
    "pâtes",
    "pêche",
    "poire",
    "pomme",
    "poivre",
    "poulet",
    "praline",
    "prune",
    "purée",
    "lait",
    "laitue",
    "lardon",
    "légume",
    "lentille",
    "levure",
    "limonade",
    "miel",
    "menthe",
    "moutarde",
    "muesli",
    "mangue",
    "madeleine",
    "tarte",
    "thé",
    "tomate",
    "tisane",
    "truffe",
    "thon",
    "vanille",
    "vert",
    "vinaigre",
    "viande",
    "riz",
    "rouge",
    "rillettes",
    "roquefort",
    "sucre",
    "sel",
    "saumon",
    "sardine",
    "sirop",
    "soupe",
    "fromage",
    "fraise",
    "framboise",
    "farine",
    "fenouil",
    "figue",
    "jambon",
    "jus",
    "gâteau",
    "gaufre",
    "huile",
    "haricot",
    "olive",
    "oeuf",
    "orange",
    "oignon",
    "abricot",
    "amande",
    "ananas",
    "avocat",
    "épice",
    "emmental",
    "entier",
    "demi",
    "doux",
    "dinde",
    "yaourt",
    "quiche",
    "kiwi",
    "zeste",
];

/// Article `n`'s name and EAN-13.
fn article(n: usize, seed: u64) -> (String, String) {
    let mut rng = fastrand::Rng::with_seed(seed ^ (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut name = String::new();
    for _ in 0..3 {
        let word = WORDS[rng.usize(0..WORDS.len())];
        if name.is_empty() {
            let mut chars = word.chars();
            name.extend(chars.next().into_iter().flat_map(char::to_uppercase).chain(chars));
        } else {
            name.push(' ');
            name.push_str(word);
        }
    }
    name.push_str(&format!(" {}g", 50 * (1 + n % 20)));
    (name, ean_of(n))
}

/// The EAN-13 of article `n`: `20`, `n` on ten digits, its check digit (the one the core
/// accepts).
fn ean_of(n: usize) -> String {
    let body = format!("20{n:010}");
    (0..10)
        .map(|digit| format!("{body}{digit}"))
        .find(|code| Gtin::parse(code).is_ok())
        .unwrap_or(body)
}

pub async fn run(plan: &CatalogPlan) -> Result<CatalogReport> {
    std::fs::create_dir_all(&plan.work_dir)?;
    let file = plan.work_dir.join("catalog.ndjson");
    let file_mib = write_file(&file, plan.articles, plan.seed)?;
    if bench::engine_of(&plan.database_url) == "postgres" {
        crate::bench::baseline::create_postgres_database(&plan.database_url).await?;
    }
    let import = import(plan, &file).await?;
    let _ = std::fs::remove_file(&file);
    let lookups = lookups(plan).await?;
    let snapshot = snapshot(plan).await?;
    let finalize = match &plan.finalize {
        Some(bench_plan) => Some(compare(
            bench_plan.articles,
            bench::against_prefilled(bench_plan, &plan.database_url).await?,
        )?),
        None => None,
    };
    Ok(CatalogReport {
        engine: bench::engine_of(&plan.database_url).into(),
        articles: plan.articles,
        file_mib,
        import,
        lookups,
        snapshot,
        finalize,
    })
}

/// Writes `articles` lines; answers the file's size in MiB.
fn write_file(path: &Path, articles: usize, seed: u64) -> Result<f64> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    const VAT_RATES: [f64; 4] = [20.0, 10.0, 5.5, 2.1];
    for n in 0..articles {
        let (name, ean) = article(n, seed);
        let line = serde_json::json!({
            "skuId": sku_of(n),
            "name": name,
            "priceCents": 95 + ((n * 7_919) % 50) as i64 * 100,
            "vatRate": VAT_RATES[n % VAT_RATES.len()],
            "barcodes": [ean],
        });
        serde_json::to_writer(&mut out, &line)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(std::fs::metadata(path)?.len() as f64 / (1024.0 * 1024.0))
}

/// Runs `till catalog import` on the file, as the one child process waited for so far.
async fn import(plan: &CatalogPlan, file: &Path) -> Result<ImportRun> {
    let started = Instant::now();
    let mut command = tokio::process::Command::new(&plan.binary);
    // The node refuses a `TILL_*` variable that names no setting, such as the caller's own.
    for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("TILL_")) {
        command.env_remove(name);
    }
    let output = command
        .args(["catalog", "import"])
        .arg(file)
        .env("TILL_DATABASE_URL", &plan.database_url)
        .env("TILL_DATA_DIR", plan.work_dir.join("import"))
        .env("TILL_LOG", "warn")
        .output()
        .await
        .context("cannot run till catalog import")?;
    let seconds = started.elapsed().as_secs_f64();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).trim().to_owned();
    if !output.status.success() {
        bail!(
            "till catalog import failed: {}{}",
            text(&output.stdout),
            text(&output.stderr)
        );
    }
    Ok(ImportRun {
        seconds,
        per_second: plan.articles as f64 / seconds,
        peak_rss_mib: children_peak_rss_kib() as f64 / 1024.0,
        summary: text(&output.stdout),
    })
}

/// The largest peak resident set of the child processes waited for, in KiB (Linux).
fn children_peak_rss_kib() -> u64 {
    // SAFETY: getrusage fills the struct it is given and touches nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    u64::try_from(usage.ru_maxrss).unwrap_or(0)
}

/// One node on the big catalog's database, its files in `plan.work_dir/dir`, and the secret
/// its tokens are signed with.
fn node_config(plan: &CatalogPlan, dir: &str) -> Result<(NodeConfig, String)> {
    let key_file = plan.work_dir.join("fiscal-key.pem");
    if !key_file.exists() {
        till::fiscal::new_key(&key_file)?;
    }
    let secret = format!("catalog-secret-{}", plan.seed);
    let config = NodeConfig {
        binary: plan.binary.clone(),
        database_url: plan.database_url.clone(),
        jwt_secret: secret.clone(),
        fiscal_key_file: key_file,
        env: Vec::new(),
        work_dir: plan.work_dir.join(dir),
    };
    Ok((config, secret))
}

/// The kinds of look-up, each `plan.lookups` times with random articles and words.
async fn lookups(plan: &CatalogPlan) -> Result<Vec<Timing>> {
    let _ = std::fs::remove_file(plan.work_dir.join("fiscal-key.pem"));
    let (config, secret) = node_config(plan, "lookups")?;
    let mut cluster = Cluster::start(config, 1).await?;
    let client = Client::new(cluster.urls())?;
    let admin = admin_token(&secret);
    let mut rng = fastrand::Rng::with_seed(plan.seed);
    let articles = plan.articles.max(1);
    let mut barcode = histogram()?;
    let mut prefix = histogram()?;
    let mut word_and_prefix = histogram()?;
    for _ in 0..plan.lookups {
        let n = rng.usize(0..articles);
        let path = format!("/v1/catalog/barcodes/{}", ean_of(n));
        let found = timed(&client, &admin, &path, &mut barcode).await?;
        ensure!(found["skuId"] == sku_of(n).as_str(), "{path} found {found}");

        let (name, _) = article(rng.usize(0..articles), plan.seed);
        let words: Vec<String> = fold(&name).split(' ').map(str::to_owned).collect();
        let start: String = words[0].chars().take(3).collect();
        let path = format!("/v1/catalog/skus?limit=50&q={}", encode(&start));
        let page = timed(&client, &admin, &path, &mut prefix).await?;
        ensure!(
            !page["items"].as_array().is_none_or(Vec::is_empty),
            "{path} found nothing"
        );

        let start: String = words[1].chars().take(2).collect();
        let path = format!(
            "/v1/catalog/skus?limit=50&q={}",
            encode(&format!("{} {start}", words[0]))
        );
        let page = timed(&client, &admin, &path, &mut word_and_prefix).await?;
        ensure!(
            !page["items"].as_array().is_none_or(Vec::is_empty),
            "{path} found nothing"
        );
    }
    cluster.kill_all().await?;
    Ok(vec![
        timing("barcode look-up", &barcode),
        timing("search: a 3-letter prefix", &prefix),
        timing("search: a word and a prefix", &word_and_prefix),
    ])
}

/// A store's snapshot (docs/sync.md) of the whole catalog, streamed by a node started for it
/// alone, so that its peak resident set is the snapshot's (and the node's start).
async fn snapshot(plan: &CatalogPlan) -> Result<SnapshotRun> {
    let (config, secret) = node_config(plan, "snapshot")?;
    let mut cluster = Cluster::start(config, 1).await?;
    let admin = admin_token(&secret);
    let client = Client::new(cluster.urls())?;
    client
        .send(
            reqwest::Method::PUT,
            "/v1/stores/bench",
            &admin,
            Some(&serde_json::json!({"name": "Bench"})),
        )
        .await?
        .expect_ok("/v1/stores/bench")?;
    let pid = cluster.nodes[0].pid().context("the snapshot's node has no pid")?;
    let url = format!("{}/v1/sync/snapshot?storeId=bench", cluster.urls()[0]);
    let http = crate::client::http_client(std::time::Duration::from_secs(600))?;
    let started = Instant::now();
    let mut response = http.get(&url).bearer_auth(&admin).send().await?;
    ensure!(
        response.status().as_u16() == 200,
        "{url} answered {}",
        response.status()
    );
    let (mut bytes, mut lines, mut tail) = (0_u64, 0_u64, Vec::new());
    while let Some(chunk) = response.chunk().await? {
        bytes += chunk.len() as u64;
        lines += chunk.iter().filter(|b| **b == b'\n').count() as u64;
        // The last line, kept whole across chunks.
        tail.extend_from_slice(&chunk);
        if let Some(end) = tail[..tail.len().saturating_sub(1)].iter().rposition(|b| *b == b'\n') {
            tail.drain(..=end);
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let peak_rss_mib = peak_rss_kib(pid)? as f64 / 1024.0;
    cluster.kill_all().await?;
    let end: serde_json::Value = serde_json::from_slice(&tail).context("the snapshot's last line")?;
    ensure!(
        end["type"] == "end" && end["articles"] == plan.articles,
        "the snapshot ended with {end}, not with its {} articles",
        plan.articles
    );
    Ok(SnapshotRun {
        seconds,
        lines,
        mib: bytes as f64 / (1024.0 * 1024.0),
        peak_rss_mib,
    })
}

/// A running process's peak resident set (`VmHWM`), in KiB (Linux).
fn peak_rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmHWM in the node's status")
}

async fn timed(client: &Client, admin: &str, path: &str, into: &mut Histogram<u64>) -> Result<serde_json::Value> {
    let sent = Instant::now();
    let reply = client.get(path, admin).await?.expect(200, path)?;
    into.record(u64::try_from(sent.elapsed().as_micros()).unwrap_or(u64::MAX).max(1))?;
    Ok(reply.json())
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

fn compare(small_articles: usize, runs: AgainstPrefilled) -> Result<FinalizeComparison> {
    let (Some(small), Some(big)) = (runs.empty.first(), runs.prefilled.first()) else {
        bail!("the finalize runs reported nothing");
    };
    Ok(FinalizeComparison {
        small_articles,
        small_per_second: small.per_second,
        big_per_second: big.per_second,
        big_over_small: runs.prefilled_over_empty,
        failures: small.failures + big.failures,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn articles_carry_valid_barcodes_and_names_of_listed_words() {
        for n in [0, 1, 999_999] {
            let (name, ean) = article(n, 1);
            assert!(Gtin::parse(&ean).is_ok(), "{ean}");
            assert_eq!(ean.len(), 13);
            assert_eq!(name.split(' ').count(), 4, "{name}");
        }
        assert_ne!(ean_of(1), ean_of(2));
    }
}
