//! The cost of rendering a receipt (docs/receipts.md): one node books sales, then one client
//! asks for their receipts again and again in each format (text, HTML, ESC/POS), each request
//! sent when the one before it was answered. The latency is measured from sending to the
//! whole answer read, so it holds the HTTP round trip as well as the rendering and the
//! proof's signature; it is shown beside the target.

use crate::bench::baseline::create_postgres_database;
use crate::bench::engine_of;
use crate::client::Client;
use crate::cluster::{Cluster, NodeConfig};
use crate::drawer::{burst, queue};
use crate::reads::{Timing, histogram, timing};
use crate::shop::{ShopSpec, admin_token, provision};
use crate::wire::Wire;
use anyhow::{Result, bail};
use reqwest::Method;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// The target for a receipt's rendering, in milliseconds: shown, never asserted.
pub const RENDER_TARGET_MS: f64 = 1.0;

const ARTICLES: usize = 1_000;
const TILLS: usize = 4;

/// Each format by the `Accept` a printer's driver or a browser sends.
const FORMATS: [(&str, &str); 3] = [
    ("text", "text/plain"),
    ("html", "text/html"),
    ("escpos", "application/vnd.escpos"),
];

#[derive(Clone, Debug)]
pub struct ReceiptsPlan {
    pub binary: PathBuf,
    pub database_url: String,
    pub work_dir: PathBuf,
    /// Sales booked, whose receipts are asked in turn.
    pub sales: usize,
    /// Receipts asked per format, after as many not timed.
    pub renders: usize,
    pub seed: u64,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptsReport {
    pub engine: String,
    pub sales: u64,
    /// One per format, named after it.
    pub formats: Vec<Timing>,
    pub target_ms: f64,
}

/// One node on a new database with a shop provisioned and `sales` sales booked: what the
/// receipts' figures and the e-mail queue's are measured on.
pub(crate) struct Booked {
    pub cluster: Cluster,
    pub client: Client,
    pub admin: String,
    /// The sales' transaction ids.
    pub sales: Vec<String>,
}

/// Starts the node with the further `TILL_*` settings `env` and books the sales.
pub(crate) async fn booked_node(
    binary: &std::path::Path,
    database_url: &str,
    work_dir: &std::path::Path,
    sales: usize,
    seed: u64,
    env: Vec<(String, String)>,
) -> Result<Booked> {
    std::fs::create_dir_all(work_dir)?;
    if engine_of(database_url) == "postgres" {
        create_postgres_database(database_url).await?;
    }
    let key_file = work_dir.join("fiscal-key.pem");
    let _ = std::fs::remove_file(&key_file);
    till::fiscal::new_key(&key_file)?;
    let secret = format!("receipts-secret-{seed}");
    let config = NodeConfig {
        binary: binary.to_path_buf(),
        database_url: database_url.to_owned(),
        jwt_secret: secret.clone(),
        fiscal_key_file: key_file,
        env,
        work_dir: work_dir.to_path_buf(),
    };
    let cluster = Cluster::start(config, 1).await?;
    let client = Client::new(cluster.urls())?;
    let wire = Arc::new(Wire::new(&cluster.urls())?);
    let admin = admin_token(&secret);
    let shop = provision(&client, &admin, &ShopSpec::bench(ARTICLES, TILLS)).await?;
    let queued = queue(&shop, &shop.tills, "receipt-", sales.max(1), seed, |_| None);
    let (answers, _) = burst(&wire, &queued, TILLS).await?;
    if let Some((sale, answer)) = queued.iter().zip(&answers).find(|(_, a)| a.status != 201) {
        bail!("sale {} was answered {}", sale.id, answer.status);
    }
    Ok(Booked {
        cluster,
        client,
        admin,
        sales: queued.into_iter().map(|sale| sale.id).collect(),
    })
}

pub async fn run(plan: &ReceiptsPlan) -> Result<ReceiptsReport> {
    let Booked {
        mut cluster,
        client,
        admin,
        sales,
    } = booked_node(
        &plan.binary,
        &plan.database_url,
        &plan.work_dir,
        plan.sales,
        plan.seed,
        Vec::new(),
    )
    .await?;
    let mut formats = Vec::with_capacity(FORMATS.len());
    for (name, accept) in FORMATS {
        let mut latency = histogram()?;
        let renders = plan.renders.max(1);
        // The first round warms the node's caches and connections; the second is timed.
        for timed in [false, true] {
            for n in 0..renders {
                let path = format!("/v1/sales/{}/receipt", sales[n % sales.len()]);
                let sent = Instant::now();
                let reply = client
                    .with_headers(0, Method::GET, &path, &admin, None, &[("accept", accept)])
                    .await?;
                let took = sent.elapsed();
                reply.expect(200, "receipt")?;
                if timed {
                    latency.saturating_record(took.as_micros() as u64);
                }
            }
        }
        formats.push(timing(name, &latency));
    }
    cluster.kill_all().await?;
    Ok(ReceiptsReport {
        engine: engine_of(&plan.database_url).to_owned(),
        sales: sales.len() as u64,
        formats,
        target_ms: RENDER_TARGET_MS,
    })
}
