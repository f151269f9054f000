//! The e-mail queue's pace (docs/receipts.md, "By e-mail"): one node, its mailer pointed at a
//! local SMTP sink (Python's aiosmtpd, discarding what it takes), books sales, then clients
//! ask for their receipts by e-mail as fast as the node answers. The pace is the mails the
//! node's counter says were sent, over the time from the first request to the last mail sent;
//! it is shown beside the target.

use crate::receipts::{Booked, booked_node};
use anyhow::{Context, Result, bail};
use futures::StreamExt;
use serde_json::json;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The target for the queue's pace, in mails a second: shown, never asserted.
pub const MAILS_PER_SECOND_TARGET: f64 = 100.0;

/// Requests to send under way at once.
const CLIENTS: usize = 16;

#[derive(Clone, Debug)]
pub struct MailPlan {
    pub binary: PathBuf,
    pub database_url: String,
    pub work_dir: PathBuf,
    /// Sales booked, whose receipts are sent in turn.
    pub sales: usize,
    /// Mails asked for.
    pub mails: usize,
    /// The Python that runs aiosmtpd.
    pub python: String,
    pub seed: u64,
}

#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MailReport {
    pub engine: String,
    pub mails: u64,
    /// From the first request to the last request answered.
    pub queued_seconds: f64,
    /// From the first request to the last mail sent.
    pub sent_seconds: f64,
    pub mails_per_second: f64,
    pub target_per_second: f64,
}

/// aiosmtpd on a port of its own, stopped when dropped.
struct Sink(Child);

impl Drop for Sink {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_sink(python: &str) -> Result<(Sink, u16)> {
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let child = Command::new(python)
        .args([
            "-m",
            "aiosmtpd",
            "-n",
            "-l",
            &format!("127.0.0.1:{port}"),
            "-c",
            "aiosmtpd.handlers.Sink",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("{python} -m aiosmtpd (pip install aiosmtpd) starts a sink"))?;
    let sink = Sink(child);
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_err() {
        if Instant::now() > deadline {
            bail!("the SMTP sink did not start");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok((sink, port))
}

/// The mails the node counted as sent, from its `/metrics`.
async fn sent(booked: &Booked) -> Result<u64> {
    let metrics = booked
        .client
        .get("/metrics", &booked.admin)
        .await?
        .expect(200, "metrics")?;
    Ok(metrics
        .text
        .lines()
        .find_map(|line| line.strip_prefix("till_email_attempts_total{outcome=\"sent\"} "))
        .and_then(|count| count.trim().parse().ok())
        .unwrap_or(0))
}

pub async fn run(plan: &MailPlan) -> Result<MailReport> {
    let (_sink, port) = start_sink(&plan.python)?;
    let env = vec![
        ("TILL_SMTP_URL".to_owned(), format!("smtp://127.0.0.1:{port}")),
        ("TILL_SMTP_FROM".to_owned(), "load@example.org".to_owned()),
    ];
    let mut booked = booked_node(
        &plan.binary,
        &plan.database_url,
        &plan.work_dir,
        plan.sales,
        plan.seed,
        env,
    )
    .await?;
    let mails = plan.mails.max(1);
    let started = Instant::now();
    let answers: Vec<Result<u16>> = futures::stream::iter(0..mails)
        .map(|n| {
            let booked = &booked;
            async move {
                let path = format!("/v1/sales/{}/receipt/send", booked.sales[n % booked.sales.len()]);
                let body = json!({"email": format!("load-{n}@example.org")});
                Ok(booked.client.post(&path, &booked.admin, &body).await?.status)
            }
        })
        .buffer_unordered(CLIENTS)
        .collect()
        .await;
    let queued_seconds = started.elapsed().as_secs_f64();
    for answer in answers {
        let status = answer?;
        if status != 202 {
            bail!("a send was answered {status}");
        }
    }
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut count = sent(&booked).await?;
    while count < mails as u64 {
        if Instant::now() > deadline {
            bail!("{count} of {mails} mails sent in ten minutes");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        count = sent(&booked).await?;
    }
    let sent_seconds = started.elapsed().as_secs_f64();
    booked.cluster.kill_all().await?;
    Ok(MailReport {
        engine: crate::bench::engine_of(&plan.database_url).to_owned(),
        mails: count,
        queued_seconds,
        sent_seconds,
        mails_per_second: count as f64 / sent_seconds.max(f64::EPSILON),
        target_per_second: MAILS_PER_SECOND_TARGET,
    })
}
