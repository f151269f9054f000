//! An HTTP client for a deployment of one or more nodes, spreading requests over them as a
//! load balancer would, and sending a sale again until some node acknowledges it.

use anyhow::{Result, bail};
use reqwest::Method;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A response, read whole.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub text: String,
    /// Whether it said when to try again.
    pub retry_after: bool,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }

    /// `self` if it is a 200 or a 201 (an idempotent PUT that replaced or created).
    pub fn expect_ok(self, what: &str) -> Result<Reply> {
        if self.status != 200 && self.status != 201 {
            bail!("{what}: {} {}", self.status, self.text);
        }
        Ok(self)
    }

    /// `self` if its status is `expected`, else an error naming what came back.
    pub fn expect(self, expected: u16, what: &str) -> Result<Reply> {
        if self.status != expected {
            bail!("{what}: expected {expected}, got {} {}", self.status, self.text);
        }
        Ok(self)
    }
}

/// How a sale was acknowledged.
#[derive(Clone, Debug)]
pub struct Acknowledged {
    /// The 201 body.
    pub body: String,
    /// Sends it took, the acknowledged one included.
    pub attempts: u32,
}

#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    urls: Arc<Vec<String>>,
    next: Arc<AtomicUsize>,
    /// Answers that are server errors other than a 503 with `Retry-After`: what a node must
    /// never answer, even while its database fails over.
    faults: Arc<Mutex<Faults>>,
}

/// Server errors other than a 503 with `Retry-After`, by status and error code, each with the
/// first answer of its kind.
#[derive(Default)]
pub struct Faults(BTreeMap<(u16, String), (u64, String)>);

impl Faults {
    pub fn count(&self) -> u64 {
        self.0.values().map(|(count, _)| count).sum()
    }

    fn record(&mut self, reply: &Reply, path: &str) {
        let code = reply.json()["error"]["code"]
            .as_str()
            .unwrap_or("no envelope")
            .to_owned();
        let entry = self.0.entry((reply.status, code)).or_insert_with(|| (0, String::new()));
        entry.0 += 1;
        if entry.1.is_empty() {
            entry.1 = format!("{path}: {}", reply.text.chars().take(300).collect::<String>());
        }
    }
}

impl std::fmt::Display for Faults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for ((status, code), (count, first)) in &self.0 {
            writeln!(f, "  {count} x {status} {code}, first: {first}")?;
        }
        Ok(())
    }
}

impl Client {
    pub fn new(urls: Vec<String>) -> Result<Client> {
        let http = http_client(Duration::from_secs(30))?;
        Ok(Client {
            http,
            urls: Arc::new(urls),
            next: Arc::new(AtomicUsize::new(0)),
            faults: Arc::new(Mutex::new(Faults::default())),
        })
    }

    /// Server errors so far other than a 503 with `Retry-After`.
    pub fn faults(&self) -> u64 {
        self.faults
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .count()
    }

    /// Those errors by kind, with an example of each.
    pub fn faults_seen(&self) -> String {
        self.faults
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .to_string()
    }

    pub fn nodes(&self) -> usize {
        self.urls.len()
    }

    /// Sends to node `node`.
    pub async fn to(
        &self,
        node: usize,
        method: Method,
        path: &str,
        token: &str,
        body: Option<&Value>,
    ) -> Result<Reply> {
        self.with_headers(node, method, path, token, body, &[]).await
    }

    /// Sends to node `node` with extra headers.
    pub async fn with_headers(
        &self,
        node: usize,
        method: Method,
        path: &str,
        token: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Result<Reply> {
        let url = format!("{}{path}", self.urls[node % self.urls.len()]);
        let mut request = self.http.request(method, url).bearer_auth(token);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let reply = answer(request).await?;
        if reply.status >= 500 && !(reply.status == 503 && reply.retry_after) {
            self.faults
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .record(&reply, path);
        }
        Ok(reply)
    }

    /// Sends to the next node in turn.
    pub async fn send(&self, method: Method, path: &str, token: &str, body: Option<&Value>) -> Result<Reply> {
        self.to(self.next_node(), method, path, token, body).await
    }

    pub async fn get(&self, path: &str, token: &str) -> Result<Reply> {
        self.send(Method::GET, path, token, None).await
    }

    pub async fn post(&self, path: &str, token: &str, body: &Value) -> Result<Reply> {
        self.send(Method::POST, path, token, Some(body)).await
    }

    pub async fn put(&self, path: &str, token: &str, body: &Value) -> Result<Reply> {
        self.send(Method::PUT, path, token, Some(body)).await
    }

    fn next_node(&self) -> usize {
        self.next.fetch_add(1, Ordering::Relaxed) % self.urls.len()
    }

    /// Finalizes `sale` the way a till must: a lost connection, a node gone or a busy answer
    /// is sent again, to the next node, with the same transaction id, until a 201 comes back.
    /// Idempotency makes the repeats safe. A refusal (4xx) is an error.
    pub async fn finalize_until_acknowledged(
        &self,
        token: &str,
        sale: &Value,
        give_up: Duration,
    ) -> Result<Acknowledged> {
        let what = format!("sale {}", sale["transactionId"]);
        self.post_until_acknowledged("/v1/checkout/finalize", token, sale, &[201], &what, give_up)
            .await
    }

    /// Posts `body` to `path` until one of the `accepted` statuses comes back, as a till sends
    /// an idempotent request: no answer, or a 5xx, is sent again to the next node; any other
    /// answer is an error naming `what`.
    pub async fn post_until_acknowledged(
        &self,
        path: &str,
        token: &str,
        body: &Value,
        accepted: &[u16],
        what: &str,
        give_up: Duration,
    ) -> Result<Acknowledged> {
        let started = std::time::Instant::now();
        let mut attempts = 0;
        loop {
            attempts += 1;
            match self.post(path, token, body).await {
                Ok(reply) if accepted.contains(&reply.status) => {
                    return Ok(Acknowledged {
                        body: reply.text,
                        attempts,
                    });
                }
                Ok(reply) if reply.status < 500 => bail!("{what} refused: {} {}", reply.status, reply.text),
                // 5xx or no answer at all: the node may be down or restarting.
                _ => {}
            }
            if started.elapsed() > give_up {
                bail!("{what} not acknowledged after {attempts} attempts");
            }
            tokio::time::sleep(Duration::from_millis(5 + u64::from(attempts.min(20)))).await;
        }
    }
}

/// Sends `request` and reads its answer whole.
async fn answer(request: reqwest::RequestBuilder) -> Result<Reply> {
    let response = request.send().await?;
    let status = response.status().as_u16();
    let retry_after = response.headers().contains_key(reqwest::header::RETRY_AFTER);
    Ok(Reply {
        status,
        text: response.text().await?,
        retry_after,
    })
}

/// A reqwest client with the process's TLS provider in place (reqwest is built without one).
pub fn http_client(timeout: Duration) -> Result<reqwest::Client> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Ok(reqwest::Client::builder()
        .timeout(timeout)
        .pool_max_idle_per_host(256)
        .build()?)
}
