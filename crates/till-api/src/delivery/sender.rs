//! Sending one delivery, and the rule on addresses it is sent to.
//!
//! Unless the operator allows private addresses, a delivery goes to public addresses only:
//! an address written in the URL is checked before the request, a loopback name (`localhost`
//! and the names under it) is refused by its name, and any other name is resolved by
//! [`CheckedResolver`], which checks every address the name resolves to and hands the
//! connection those alone. The connection goes to an address that was checked, so a name
//! whose answer changes between a check and the connection (DNS rebinding) cannot lead it
//! elsewhere. Redirects are never followed, and no proxy is used.

use bytes::Bytes;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::CONTENT_TYPE;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use till_core::webhooks::{Failure, Host, Reach, WebhookUrl, answered};

/// The most of a receiver's answer read, so that its connection can serve the next delivery.
const MOST_ANSWER_READ: usize = 64 * 1024;

/// The longest a new endpoint's name may take to resolve when it is checked.
const RESOLVE_WITHIN: Duration = Duration::from_secs(5);

/// An address, or a name by itself, a delivery may not go to.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{target}, {}", reach.described())]
pub struct AddressRefused {
    /// The address, or the name, as the URL has it.
    pub target: String,
    pub reach: Reach,
}

fn check(address: IpAddr) -> Result<(), AddressRefused> {
    match Reach::of(address) {
        Reach::Global => Ok(()),
        reach => Err(AddressRefused {
            target: address.to_string(),
            reach,
        }),
    }
}

/// A name refused by itself, whatever it resolves to.
fn check_name(name: &str) -> Result<(), AddressRefused> {
    match Reach::of_name(name) {
        Some(reach) => Err(AddressRefused {
            target: name.to_owned(),
            reach,
        }),
        None => Ok(()),
    }
}

/// Whether a new endpoint's URL may be called: the address it names, or every address its
/// name resolves to now. A name that does not resolve now is accepted: every delivery
/// resolves it again and checks what it finds.
pub async fn check_url(url: &WebhookUrl, allow_private: bool) -> Result<(), AddressRefused> {
    if allow_private {
        return Ok(());
    }
    match url.host() {
        Host::Address(address) => check(address),
        Host::Name(name) => {
            check_name(name)?;
            match tokio::time::timeout(RESOLVE_WITHIN, tokio::net::lookup_host((name, url.port()))).await {
                Ok(Ok(mut addresses)) => addresses.try_for_each(|address| check(address.ip())),
                _ => Ok(()),
            }
        }
    }
}

/// Resolves names for deliveries, refusing any name with an address that is not public.
struct CheckedResolver {
    allow_private: bool,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let name = name.as_str().to_owned();
        Box::pin(async move {
            if !allow_private {
                check_name(&name)?;
            }
            let addresses: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            if !allow_private {
                addresses.iter().try_for_each(|address| check(address.ip()))?;
            }
            Ok(Box::new(addresses.into_iter()) as Addrs)
        })
    }
}

/// Sends deliveries over kept-alive connections.
pub(crate) struct Sender {
    client: reqwest::Client,
    allow_private: bool,
}

impl Sender {
    pub(crate) fn new(allow_private: bool, timeout: Duration) -> Result<Sender, reqwest::Error> {
        // reqwest is built without a bundled TLS provider; ring is ours. Installing twice is a
        // harmless no-op error.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(timeout)
            .tcp_nodelay(true)
            .pool_idle_timeout(Duration::from_secs(60))
            .user_agent(concat!("till-webhooks/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(CheckedResolver { allow_private }))
            .build()?;
        Ok(Sender { client, allow_private })
    }

    /// POSTs `body` to `url` with the Standard Webhooks headers; answers the receiver's status
    /// when it was 2xx, else how the attempt failed.
    pub(crate) async fn send(
        &self,
        url: &WebhookUrl,
        id: &str,
        timestamp: i64,
        signature: &str,
        body: Bytes,
    ) -> Result<u16, Failure> {
        if let Host::Address(address) = url.host()
            && !self.allow_private
            && check(address).is_err()
        {
            return Err(Failure::AddressRefused);
        }
        let mut response = self
            .client
            .post(url.as_str())
            .header(CONTENT_TYPE, "application/json")
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp)
            .header("webhook-signature", signature)
            .body(body)
            .send()
            .await
            .map_err(|error| failure_of(&error))?;
        let status = response.status().as_u16();
        // Read the answer (a little of it) so that the connection is free for the next one.
        let mut read = 0;
        while read < MOST_ANSWER_READ
            && let Ok(Some(chunk)) = response.chunk().await
        {
            read += chunk.len();
        }
        answered(status).map(|()| status)
    }
}

/// How a request that got no answer failed.
fn failure_of(error: &reqwest::Error) -> Failure {
    if error.is_timeout() {
        return Failure::Timeout;
    }
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = cause {
        if error.is::<AddressRefused>() {
            return Failure::AddressRefused;
        }
        cause = error.source();
    }
    Failure::Connection
}
