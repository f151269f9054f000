//! The measured requests' own HTTP/1.1 connections.
//!
//! The load generator shares the machine with the nodes it measures, so every microsecond it
//! spends on a request is taken from them. A general client (reqwest) parses the URL, applies
//! its redirect and proxy policies and looks its pool up by host for every request, about a
//! sixth of the load generator's time at 6,000 sales/s. The sales of a run all go to the same
//! few nodes, so they go over kept-alive connections of their own instead: one per request in
//! flight, taken from a node's idle list and put back once the answer is read whole.

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{SendRequest, handshake};
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Request, Uri};
use hyper_util::rt::TokioIo;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::net::TcpStream;

type Sender = SendRequest<Full<Bytes>>;

/// Connections to every node of a deployment, requests spread over the nodes in turn.
pub struct Wire {
    nodes: Vec<Node>,
    next: AtomicUsize,
}

struct Node {
    /// `host:port`, dialled and sent as the `Host` header.
    authority: HeaderValue,
    idle: Mutex<Vec<Sender>>,
}

/// A response, read whole.
pub struct Answer {
    pub status: u16,
    pub body: Bytes,
}

impl Wire {
    /// Connections to the nodes at `urls` (`http://host:port`), dialled when first needed.
    pub fn new(urls: &[String]) -> Result<Wire> {
        let nodes = urls
            .iter()
            .map(|url| {
                let uri: Uri = url.parse().with_context(|| format!("node URL {url}"))?;
                let authority = uri.authority().with_context(|| format!("node URL {url} has no host"))?;
                Ok(Node {
                    authority: HeaderValue::from_str(authority.as_str())?,
                    idle: Mutex::new(Vec::new()),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        anyhow::ensure!(!nodes.is_empty(), "no node to send to");
        Ok(Wire {
            nodes,
            next: AtomicUsize::new(0),
        })
    }

    /// POSTs `body`, JSON already written, to `path` on the next node in turn.
    pub async fn post_json(&self, path: &str, token: &str, body: String) -> Result<Answer> {
        let node = &self.nodes[self.next.fetch_add(1, Ordering::Relaxed) % self.nodes.len()];
        let mut sender = node.connection().await?;
        let request = Request::post(path)
            .header(HOST, node.authority.clone())
            .header(AUTHORIZATION, format!("Bearer {token}"))
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)))?;
        let response = sender.send_request(request).await?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await?.to_bytes();
        // Only a connection whose answer was read whole can carry the next request.
        node.put_back(sender);
        Ok(Answer { status, body })
    }
}

impl Node {
    /// An idle connection that is still open, or a new one.
    async fn connection(&self) -> Result<Sender> {
        while let Some(mut sender) = self.take_idle() {
            // The node may have closed it since (a restart, an idle timeout).
            if sender.ready().await.is_ok() {
                return Ok(sender);
            }
        }
        let host = self.authority.to_str()?;
        let stream = TcpStream::connect(host)
            .await
            .with_context(|| format!("connecting to {host}"))?;
        // A request is one write; waiting to coalesce it with the next would add latency.
        stream.set_nodelay(true)?;
        let (sender, connection) = handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            // Ends when the connection closes; a broken one fails its request, which reports it.
            let _ = connection.await;
        });
        Ok(sender)
    }

    fn take_idle(&self) -> Option<Sender> {
        self.idle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).pop()
    }

    fn put_back(&self, sender: Sender) {
        self.idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(sender);
    }
}
