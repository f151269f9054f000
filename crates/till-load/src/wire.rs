//! The measured requests' own HTTP/1.1 connections.
//!
//! The load generator shares the machine with the nodes it measures, so every microsecond it
//! spends on a request is taken from them. A general client (reqwest) parses the URL, applies
//! its redirect and proxy policies and looks its pool up by host for every request, a large
//! share of the load generator's time (docs/performance.md, "The load generator"). The sales
//! of a run all go to the same few nodes, so they go over kept-alive connections of their own
//! instead: one per request in flight, taken from a node's idle list and put back once the
//! answer is read whole.

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

#[cfg(test)]
mod tests {
    use super::Wire;
    use axum::Router;
    use axum::http::{HeaderMap, StatusCode, header};
    use axum::response::IntoResponse;
    use axum::routing::post;

    /// A node that echoes the bearer token and body with 201, and closes the connection after
    /// every answer when asked to, as a node going away would.
    async fn node(close_after_each: bool) -> String {
        let app = Router::new().route(
            "/echo",
            post(move |headers: HeaderMap, body: String| async move {
                let token = headers[header::AUTHORIZATION].to_str().unwrap_or_default().to_owned();
                let mut answer = (StatusCode::CREATED, format!("{token}|{body}")).into_response();
                if close_after_each {
                    answer
                        .headers_mut()
                        .insert(header::CONNECTION, header::HeaderValue::from_static("close"));
                }
                answer
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{address}")
    }

    #[tokio::test]
    async fn requests_reuse_a_connection_and_dial_again_when_the_node_closed_it() {
        for close_after_each in [false, true] {
            let wire = Wire::new(&[node(close_after_each).await]).unwrap();
            for n in 0..3 {
                let answer = wire.post_json("/echo", "tok", format!("sale {n}")).await.unwrap();
                assert_eq!(answer.status, 201);
                assert_eq!(answer.body, format!("Bearer tok|sale {n}").as_bytes());
            }
            let kept = wire.nodes[0].idle.lock().unwrap().len();
            assert_eq!(
                kept, 1,
                "one connection served the requests in turn (closing: {close_after_each})"
            );
        }
    }

    #[tokio::test]
    async fn requests_go_to_the_nodes_in_turn() {
        let wire = Wire::new(&[node(false).await, node(false).await]).unwrap();
        for n in 0..4 {
            wire.post_json("/echo", "tok", n.to_string()).await.unwrap();
        }
        for node in &wire.nodes {
            assert_eq!(node.idle.lock().unwrap().len(), 1);
        }
    }
}
