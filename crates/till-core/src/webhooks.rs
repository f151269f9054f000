//! Webhooks (docs/events.md): the event feed pushed to an integrator's URL in the
//! Standard Webhooks form. What a delivery decides without I/O lives here: which URLs and
//! addresses may be called, the signature, when a failed delivery is tried again and when an
//! endpoint is given up on, and how far an endpoint's cursor may move after a batch.

use crate::events::FeedCursor;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use jiff::Timestamp;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

/// The longest webhook URL accepted, in characters.
pub const MAX_URL_CHARS: usize = 2048;

/// What the document states of a webhook URL; the parser below decides the rest.
pub const URL_PATTERN: &str = r"^[Hh][Tt][Tt][Pp][Ss]?://[^\u0000-\u0020\u007F]+$";

/// A URL a delivery may be sent to: http or https, a host, no credentials, at most
/// [`MAX_URL_CHARS`]. Held as the URL parser normalises it (lower-case scheme and host), which
/// is what is called.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookUrl(url::Url);

/// Why a text is not a webhook URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrlRefusal {
    #[error("must be at most 2048 characters")]
    TooLong,
    #[error("must not contain spaces or control characters")]
    Spaces,
    #[error("is not a URL")]
    NotAUrl,
    #[error("must start with http:// or https://")]
    NotHttp,
    #[error("must not carry a user name or a password")]
    Credentials,
    #[error("must name a host")]
    NoHost,
}

/// Where a URL's host leads: an address written in it, or a name still to be resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host<'a> {
    Address(IpAddr),
    Name(&'a str),
}

impl WebhookUrl {
    pub fn parse(text: &str) -> Result<WebhookUrl, UrlRefusal> {
        if text.chars().count() > MAX_URL_CHARS {
            return Err(UrlRefusal::TooLong);
        }
        // The URL standard drops tabs and new lines and trims spaces; a URL that needs that is
        // refused rather than read as another.
        if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(UrlRefusal::Spaces);
        }
        let url = url::Url::parse(text).map_err(|_| UrlRefusal::NotAUrl)?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(UrlRefusal::NotHttp);
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlRefusal::Credentials);
        }
        if url.host().is_none() {
            return Err(UrlRefusal::NoHost);
        }
        // Normalising may lengthen it (a trailing `/`, an international name in punycode): the
        // bound is on what was sent, as the document states it, and so bounds what is kept.
        Ok(WebhookUrl(url))
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    pub fn host(&self) -> Host<'_> {
        match self.0.host() {
            Some(url::Host::Ipv4(address)) => Host::Address(IpAddr::V4(address)),
            Some(url::Host::Ipv6(address)) => Host::Address(IpAddr::V6(address)),
            Some(url::Host::Domain(name)) => Host::Name(name),
            // `parse` refuses a URL without a host.
            None => Host::Name(""),
        }
    }

    /// The port a connection goes to: the URL's, or its scheme's.
    pub fn port(&self) -> u16 {
        self.0.port_or_known_default().unwrap_or(80)
    }
}

/// Which part of the address space an address belongs to. Deliveries go to [`Reach::Global`]
/// addresses only (unless the operator allows private ones): anything else may be a service
/// inside the deployment's own network that a webhook URL must not be able to reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    Global,
    Loopback,
    Private,
    LinkLocal,
    Unspecified,
    Multicast,
    /// Set aside for documentation, benchmarks, transition mechanisms or future use.
    Reserved,
}

impl Reach {
    pub fn of(address: IpAddr) -> Reach {
        match address {
            IpAddr::V4(address) => reach_v4(address),
            IpAddr::V6(address) => reach_v6(address),
        }
    }

    /// Where a host name leads by its name alone, before it is resolved: `localhost` and every
    /// name under it (in any case, with or without the final dot) are loopback names, answered
    /// by the machine itself whatever a DNS server says; any other name is known once resolved.
    pub fn of_name(name: &str) -> Option<Reach> {
        let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
        (name == "localhost" || name.ends_with(".localhost")).then_some(Reach::Loopback)
    }

    /// How a refusal names it: "a loopback address".
    pub fn described(self) -> &'static str {
        match self {
            Reach::Global => "a public address",
            Reach::Loopback => "a loopback address",
            Reach::Private => "a private address",
            Reach::LinkLocal => "a link-local address",
            Reach::Unspecified => "an unspecified address",
            Reach::Multicast => "a multicast address",
            Reach::Reserved => "a reserved address",
        }
    }
}

/// Whether `address` lies in `network`/`bits`.
fn in_v4(address: Ipv4Addr, network: [u8; 4], bits: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
    u32::from(address) & mask == u32::from(Ipv4Addr::from(network)) & mask
}

fn in_v6(address: Ipv6Addr, network: [u16; 8], bits: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
    u128::from(address) & mask == u128::from(Ipv6Addr::from(network)) & mask
}

/// IANA's special-purpose IPv4 ranges that are not globally reachable.
fn reach_v4(address: Ipv4Addr) -> Reach {
    const RANGES: [([u8; 4], u32, Reach); 17] = [
        ([0, 0, 0, 0], 32, Reach::Unspecified),
        ([0, 0, 0, 0], 8, Reach::Reserved),
        ([10, 0, 0, 0], 8, Reach::Private),
        ([100, 64, 0, 0], 10, Reach::Private),
        ([127, 0, 0, 0], 8, Reach::Loopback),
        ([169, 254, 0, 0], 16, Reach::LinkLocal),
        ([172, 16, 0, 0], 12, Reach::Private),
        ([192, 0, 0, 0], 24, Reach::Reserved),
        ([192, 0, 2, 0], 24, Reach::Reserved),
        ([192, 88, 99, 0], 24, Reach::Reserved),
        ([192, 168, 0, 0], 16, Reach::Private),
        ([198, 18, 0, 0], 15, Reach::Reserved),
        ([198, 51, 100, 0], 24, Reach::Reserved),
        ([203, 0, 113, 0], 24, Reach::Reserved),
        ([224, 0, 0, 0], 4, Reach::Multicast),
        ([240, 0, 0, 0], 4, Reach::Reserved),
        ([255, 255, 255, 255], 32, Reach::Reserved),
    ];
    RANGES
        .iter()
        .find(|(network, bits, _)| in_v4(address, *network, *bits))
        .map_or(Reach::Global, |(_, _, reach)| *reach)
}

/// IPv6 is global only inside 2000::/3, outside the ranges set aside there; an IPv4 address
/// carried in IPv6 (mapped, or behind the well-known NAT64 prefix) reaches what it carries.
fn reach_v6(address: Ipv6Addr) -> Reach {
    let carried = u32::try_from(u128::from(address) & u128::from(u32::MAX)).unwrap_or(0);
    if in_v6(address, [0, 0, 0, 0, 0, 0xffff, 0, 0], 96) || in_v6(address, [0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96) {
        return reach_v4(Ipv4Addr::from(carried));
    }
    const RANGES: [([u16; 8], u32, Reach); 13] = [
        ([0, 0, 0, 0, 0, 0, 0, 0], 128, Reach::Unspecified),
        ([0, 0, 0, 0, 0, 0, 0, 1], 128, Reach::Loopback),
        ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, Reach::LinkLocal),
        ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, Reach::Private),
        ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, Reach::Private),
        ([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48, Reach::Private),
        ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, Reach::Multicast),
        ([0x2001, 0, 0, 0, 0, 0, 0, 0], 23, Reach::Reserved),
        ([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32, Reach::Reserved),
        ([0x2002, 0, 0, 0, 0, 0, 0, 0], 16, Reach::Reserved),
        ([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20, Reach::Reserved),
        ([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16, Reach::Reserved),
        ([0x2000, 0, 0, 0, 0, 0, 0, 0], 3, Reach::Global),
    ];
    RANGES
        .iter()
        .find(|(network, bits, _)| in_v6(address, *network, *bits))
        .map_or(Reach::Reserved, |(_, _, reach)| *reach)
}

/// What a secret's text starts with.
pub const SECRET_PREFIX: &str = "whsec_";

/// Random bytes in a new secret (the specification asks for 24 to 64).
pub const SECRET_BYTES: usize = 32;

/// An endpoint's signing key, shown once as `whsec_` and the key in base64.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret(Vec<u8>);

impl WebhookSecret {
    pub fn from_key(key: [u8; SECRET_BYTES]) -> WebhookSecret {
        WebhookSecret(key.to_vec())
    }

    /// A secret as [`WebhookSecret::to_text`] wrote it.
    pub fn parse(text: &str) -> Option<WebhookSecret> {
        let key = STANDARD.decode(text.strip_prefix(SECRET_PREFIX)?).ok()?;
        (24..=64).contains(&key.len()).then_some(WebhookSecret(key))
    }

    pub fn to_text(&self) -> String {
        format!("{SECRET_PREFIX}{}", STANDARD.encode(&self.0))
    }

    pub fn signer(&self) -> Signer {
        Signer(standardwebhooks::Webhook::from_bytes(self.0.clone()).ok())
    }
}

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookSecret(..)")
    }
}

/// Signs deliveries with one endpoint's secret.
pub struct Signer(Option<standardwebhooks::Webhook>);

impl Signer {
    /// The `webhook-signature` header of the message `id` sent at `timestamp` (Unix seconds)
    /// with `body`: `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`.
    pub fn sign(&self, id: &str, timestamp: i64, body: &str) -> String {
        // A key of bytes is always accepted, and a body of text always signs.
        self.0
            .as_ref()
            .and_then(|webhook| webhook.sign(id, timestamp, body.as_bytes()).ok())
            .unwrap_or_default()
    }
}

/// How an attempt failed. Anything but a 2xx answer is a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Answered with a status that is neither 2xx, 3xx nor 410.
    Status(u16),
    /// Answered 3xx: redirects are not followed.
    Redirect(u16),
    /// Answered 410: the receiver wants no more deliveries.
    Gone,
    /// No complete answer within the request timeout.
    Timeout,
    /// No connection, or it broke before the answer.
    Connection,
    /// The host resolved to an address deliveries may not go to.
    AddressRefused,
}

impl Failure {
    pub const KINDS: [&'static str; 6] = ["status", "redirect", "gone", "timeout", "connection", "address_refused"];

    pub fn kind(self) -> &'static str {
        match self {
            Failure::Status(_) => "status",
            Failure::Redirect(_) => "redirect",
            Failure::Gone => "gone",
            Failure::Timeout => "timeout",
            Failure::Connection => "connection",
            Failure::AddressRefused => "address_refused",
        }
    }

    /// The status the receiver answered, if it answered.
    pub fn status(self) -> Option<u16> {
        match self {
            Failure::Status(status) | Failure::Redirect(status) => Some(status),
            Failure::Gone => Some(410),
            Failure::Timeout | Failure::Connection | Failure::AddressRefused => None,
        }
    }

    /// A failure as [`Failure::kind`] and [`Failure::status`] recorded it.
    pub fn from_parts(kind: &str, status: Option<u16>) -> Option<Failure> {
        match (kind, status) {
            ("status", Some(status)) => Some(Failure::Status(status)),
            ("redirect", Some(status)) => Some(Failure::Redirect(status)),
            ("gone", _) => Some(Failure::Gone),
            ("timeout", None) => Some(Failure::Timeout),
            ("connection", None) => Some(Failure::Connection),
            ("address_refused", None) => Some(Failure::AddressRefused),
            _ => None,
        }
    }
}

/// What an answer's status means: delivered on 2xx, else the failure it is.
pub fn answered(status: u16) -> Result<(), Failure> {
    match status {
        200..=299 => Ok(()),
        300..=399 => Err(Failure::Redirect(status)),
        410 => Err(Failure::Gone),
        other => Err(Failure::Status(other)),
    }
}

/// Why an endpoint stopped being tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DisableReason {
    /// Every attempt failed for the whole retry window.
    Failing,
    /// The receiver answered 410 Gone.
    Gone,
}

impl DisableReason {
    pub const ALL: [DisableReason; 2] = [DisableReason::Failing, DisableReason::Gone];

    pub fn as_str(self) -> &'static str {
        match self {
            DisableReason::Failing => "failing",
            DisableReason::Gone => "gone",
        }
    }

    pub fn parse(text: &str) -> Option<DisableReason> {
        DisableReason::ALL.into_iter().find(|reason| reason.as_str() == text)
    }
}

/// Failed attempts in a row, on the first event the endpoint has not acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Streak {
    /// The first failure of the streak.
    pub since: Timestamp,
    pub failures: u32,
}

/// When a failed delivery is tried again: after `first_delay`, then after twice the previous
/// delay each time, until `window` has passed since the streak's first failure; the last try
/// falls at the window's end, and if it fails too the endpoint is disabled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    pub first_delay: Duration,
    pub window: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            first_delay: Duration::from_secs(10),
            window: Duration::from_secs(24 * 3600),
        }
    }
}

/// What follows a failed attempt, with the streak it extends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    RetryAt { at: Timestamp, streak: Streak },
    Disable { reason: DisableReason, streak: Streak },
}

impl RetryPolicy {
    /// The wait after the `failures`-th failure in a row (from 1).
    pub fn delay(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(63);
        self.first_delay
            .saturating_mul(1u32.checked_shl(doublings).unwrap_or(u32::MAX))
    }

    /// What follows `failure` at `now`, the endpoint's failures in a row before it being
    /// `streak`.
    pub fn after_failure(&self, failure: Failure, streak: Option<Streak>, now: Timestamp) -> Next {
        let streak = match streak {
            Some(streak) => Streak {
                since: streak.since,
                failures: streak.failures.saturating_add(1),
            },
            None => Streak {
                since: now,
                failures: 1,
            },
        };
        if failure == Failure::Gone {
            return Next::Disable {
                reason: DisableReason::Gone,
                streak,
            };
        }
        let window_end = add(streak.since, self.window);
        if now >= window_end {
            return Next::Disable {
                reason: DisableReason::Failing,
                streak,
            };
        }
        Next::RetryAt {
            at: add(now, self.delay(streak.failures)).min(window_end),
            streak,
        }
    }
}

/// `at` moved on by `by`, or the last instant there is.
fn add(at: Timestamp, by: Duration) -> Timestamp {
    jiff::SignedDuration::try_from(by)
        .ok()
        .and_then(|by| at.checked_add(by).ok())
        .unwrap_or(Timestamp::MAX)
}

/// How far an endpoint's cursor may move after a batch. The batch read the events `read` (in
/// feed order, those of the endpoint's types after `from`), and the first `acknowledged` of
/// them were answered 2xx. The cursor passes every acknowledged event and never one that was
/// not. When every event read was acknowledged and the read came short of its limit
/// (`read_to_end`), nothing of the endpoint's types lies between them and `head`, the feed's
/// last position seen before the read, so the cursor passes the events of other types too.
pub fn delivered_through(
    from: FeedCursor,
    read: &[FeedCursor],
    acknowledged: usize,
    read_to_end: bool,
    head: FeedCursor,
) -> FeedCursor {
    let acknowledged = acknowledged.min(read.len());
    let passed = match acknowledged {
        0 => from,
        n => read[n - 1].max(from),
    };
    if acknowledged == read.len() && read_to_end {
        passed.max(head)
    } else {
        passed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reach(text: &str) -> Reach {
        Reach::of(text.parse().unwrap())
    }

    #[test]
    fn only_public_addresses_are_global() {
        for global in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.215.14",
            "2606:4700:4700::1111",
            "2a00:1450:4007:80e::200e",
        ] {
            assert_eq!(reach(global), Reach::Global, "{global}");
        }
        for (address, expected) in [
            ("127.0.0.1", Reach::Loopback),
            ("127.255.0.9", Reach::Loopback),
            ("::1", Reach::Loopback),
            ("10.1.2.3", Reach::Private),
            ("172.16.0.1", Reach::Private),
            ("172.31.255.255", Reach::Private),
            ("192.168.1.1", Reach::Private),
            ("100.64.0.1", Reach::Private),
            ("fd00::1", Reach::Private),
            ("fec0::1", Reach::Private),
            ("169.254.169.254", Reach::LinkLocal),
            ("fe80::1", Reach::LinkLocal),
            ("0.0.0.0", Reach::Unspecified),
            ("::", Reach::Unspecified),
            ("224.0.0.1", Reach::Multicast),
            ("ff02::1", Reach::Multicast),
            ("255.255.255.255", Reach::Reserved),
            ("240.0.0.1", Reach::Reserved),
            ("0.1.2.3", Reach::Reserved),
            ("192.0.2.1", Reach::Reserved),
            ("198.18.0.1", Reach::Reserved),
            ("2001:db8::1", Reach::Reserved),
            ("2002:a00:1::", Reach::Reserved),
            ("2001::1", Reach::Reserved),
            ("::10.0.0.1", Reach::Reserved),
            ("100::1", Reach::Reserved),
            ("64:ff9b:1::1", Reach::Private),
        ] {
            assert_eq!(reach(address), expected, "{address}");
        }
        assert_eq!(reach("172.32.0.1"), Reach::Global);
        assert_eq!(reach("100.128.0.1"), Reach::Global);
    }

    #[test]
    fn localhost_and_the_names_under_it_are_loopback_by_name() {
        for name in [
            "localhost",
            "localhost.",
            "LocalHost",
            "LOCALHOST.",
            "a.localhost",
            "deep.er.LOCALHOST.",
        ] {
            assert_eq!(Reach::of_name(name), Some(Reach::Loopback), "{name}");
        }
        for name in ["example.com", "localhost.example.com", "notlocalhost", "localhost.."] {
            assert_eq!(Reach::of_name(name), None, "{name}");
        }
    }

    #[test]
    fn an_ipv4_address_inside_ipv6_reaches_what_it_carries() {
        assert_eq!(reach("::ffff:127.0.0.1"), Reach::Loopback);
        assert_eq!(reach("::ffff:10.0.0.1"), Reach::Private);
        assert_eq!(reach("::ffff:169.254.169.254"), Reach::LinkLocal);
        assert_eq!(reach("64:ff9b::192.168.0.1"), Reach::Private);
        assert_eq!(reach("::ffff:8.8.8.8"), Reach::Global);
        assert_eq!(reach("64:ff9b::8.8.8.8"), Reach::Global);
    }

    #[test]
    fn a_webhook_url_is_http_with_a_host_and_no_credentials() {
        let url = WebhookUrl::parse("HTTPS://Hooks.Example.COM:8443/till?x=1").unwrap();
        assert_eq!(url.as_str(), "https://hooks.example.com:8443/till?x=1");
        assert_eq!(url.host(), Host::Name("hooks.example.com"));
        assert_eq!(url.port(), 8443);
        assert_eq!(WebhookUrl::parse("http://example.com").unwrap().port(), 80);
        assert_eq!(WebhookUrl::parse("https://example.com").unwrap().port(), 443);
        for (text, refusal) in [
            ("ftp://example.com/", UrlRefusal::NotHttp),
            ("file:///etc/passwd", UrlRefusal::NotHttp),
            ("example.com/hook", UrlRefusal::NotAUrl),
            ("http://", UrlRefusal::NotAUrl),
            ("http://user:pw@example.com/", UrlRefusal::Credentials),
            ("http://user@example.com/", UrlRefusal::Credentials),
            ("http://example.com:99999/", UrlRefusal::NotAUrl),
            (" http://example.com/", UrlRefusal::Spaces),
            ("http://exa\tmple.com/", UrlRefusal::Spaces),
            ("http://example.com/a b", UrlRefusal::Spaces),
        ] {
            assert_eq!(WebhookUrl::parse(text), Err(refusal), "{text}");
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_CHARS));
        assert_eq!(WebhookUrl::parse(&long), Err(UrlRefusal::TooLong));
        let longest = format!("https://example.com/{}", "a".repeat(MAX_URL_CHARS - 20));
        assert_eq!(longest.len(), MAX_URL_CHARS);
        assert!(WebhookUrl::parse(&longest).is_ok());
    }

    #[test]
    fn an_address_written_in_any_form_is_seen_as_the_address() {
        for (text, address) in [
            ("http://127.0.0.1:8080/", "127.0.0.1"),
            ("http://2130706433/", "127.0.0.1"),
            ("http://0x7f.1/", "127.0.0.1"),
            ("http://[::1]/", "::1"),
            ("http://[::ffff:a00:1]/", "::ffff:10.0.0.1"),
        ] {
            let url = WebhookUrl::parse(text).unwrap();
            assert_eq!(url.host(), Host::Address(address.parse().unwrap()), "{text}");
        }
    }

    #[test]
    fn the_signature_is_the_specifications_example() {
        // The example of the Standard Webhooks reference implementations.
        let secret = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = r#"{"test": 2432232314}"#;
        assert_eq!(
            secret.signer().sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn a_secret_reads_back_from_its_text() {
        let secret = WebhookSecret::from_key([7; SECRET_BYTES]);
        let text = secret.to_text();
        assert!(text.starts_with("whsec_"));
        assert_eq!(WebhookSecret::parse(&text), Some(secret));
        assert_eq!(WebhookSecret::parse("whsec_c2hvcnQ="), None, "too short");
        assert_eq!(WebhookSecret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), None);
    }

    #[test]
    fn an_answer_is_delivered_on_2xx_only() {
        assert_eq!(answered(200), Ok(()));
        assert_eq!(answered(204), Ok(()));
        assert_eq!(answered(302), Err(Failure::Redirect(302)));
        assert_eq!(answered(410), Err(Failure::Gone));
        assert_eq!(answered(500), Err(Failure::Status(500)));
        assert_eq!(answered(404), Err(Failure::Status(404)));
        for failure in [
            Failure::Status(503),
            Failure::Redirect(307),
            Failure::Gone,
            Failure::Timeout,
            Failure::Connection,
            Failure::AddressRefused,
        ] {
            assert!(Failure::KINDS.contains(&failure.kind()));
            assert_eq!(Failure::from_parts(failure.kind(), failure.status()), Some(failure));
        }
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    #[test]
    fn retries_start_within_ten_seconds_double_and_give_up_after_a_day() {
        let policy = RetryPolicy::default();
        let mut streak = None;
        let mut now = at(0);
        let mut waits = Vec::new();
        loop {
            match policy.after_failure(Failure::Status(500), streak, now) {
                Next::RetryAt {
                    at: retry_at,
                    streak: next,
                } => {
                    assert_eq!(next.since, at(0), "the streak keeps its first failure");
                    waits.push(now.duration_until(retry_at).as_secs());
                    streak = Some(next);
                    now = retry_at;
                }
                Next::Disable { reason, streak: last } => {
                    assert_eq!(reason, DisableReason::Failing);
                    assert_eq!(last.failures as usize, waits.len() + 1);
                    break;
                }
            }
        }
        assert_eq!(&waits[..4], [10, 20, 40, 80]);
        assert!(waits.windows(2).all(|w| w[1] <= 2 * w[0]));
        assert_eq!(now, at(24 * 3600), "the last try falls at the window's end");
        assert_eq!(streak.unwrap().failures as usize, waits.len());
    }

    #[test]
    fn a_receiver_that_is_gone_is_given_up_at_once() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.after_failure(Failure::Gone, None, at(0)),
            Next::Disable {
                reason: DisableReason::Gone,
                streak: Streak {
                    since: at(0),
                    failures: 1
                }
            }
        );
        for reason in DisableReason::ALL {
            assert_eq!(DisableReason::parse(reason.as_str()), Some(reason));
        }
    }

    #[test]
    fn the_cursor_passes_acknowledged_events_only() {
        let c = FeedCursor::at;
        let read = [c(12), c(15), c(19)];
        // Every event acknowledged, the read reached the end: past the head.
        assert_eq!(delivered_through(c(10), &read, 3, true, c(25)), c(25));
        // A full read: up to the last event read, the rest is read next.
        assert_eq!(delivered_through(c(10), &read, 3, false, c(25)), c(19));
        // The third failed: up to the second.
        assert_eq!(delivered_through(c(10), &read, 2, true, c(25)), c(15));
        // The first failed: nowhere.
        assert_eq!(delivered_through(c(10), &read, 0, true, c(25)), c(10));
        // Nothing of the endpoint's types: past the others.
        assert_eq!(delivered_through(c(10), &[], 0, true, c(25)), c(25));
    }

    proptest! {
        #[test]
        fn an_ipv4_address_and_its_mapped_form_reach_alike(bits in any::<u32>()) {
            let address = Ipv4Addr::from(bits);
            prop_assert_eq!(Reach::of(IpAddr::V4(address)), Reach::of(IpAddr::V6(address.to_ipv6_mapped())));
        }

        #[test]
        fn private_ranges_are_never_global(low in any::<u32>(), range in 0usize..6) {
            let (network, bits) = [
                ([10, 0, 0, 0], 8), ([172, 16, 0, 0], 12), ([192, 168, 0, 0], 16),
                ([127, 0, 0, 0], 8), ([169, 254, 0, 0], 16), ([100, 64, 0, 0], 10),
            ][range];
            let host_bits = low & (u32::MAX >> bits);
            let address = Ipv4Addr::from(u32::from(Ipv4Addr::from(network)) | host_bits);
            prop_assert_ne!(Reach::of(IpAddr::V4(address)), Reach::Global);
        }

        #[test]
        fn ipv6_outside_2000_slash_3_is_never_global(bits in any::<u128>()) {
            let address = Ipv6Addr::from(bits);
            let carries_v4 = in_v6(address, [0, 0, 0, 0, 0, 0xffff, 0, 0], 96)
                || in_v6(address, [0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96);
            if !carries_v4 && !in_v6(address, [0x2000, 0, 0, 0, 0, 0, 0, 0], 3) {
                prop_assert_ne!(Reach::of(IpAddr::V6(address)), Reach::Global);
            }
        }

        #[test]
        fn a_url_naming_an_address_is_judged_by_that_address(bits in any::<u32>(), port in 1u16..) {
            let address = Ipv4Addr::from(bits);
            let url = WebhookUrl::parse(&format!("http://{address}:{port}/hook")).unwrap();
            prop_assert_eq!(url.host(), Host::Address(IpAddr::V4(address)));
            prop_assert_eq!(url.port(), port);
        }

        #[test]
        fn a_retry_never_falls_past_the_window_and_the_delays_never_shrink(
            failures in 1u32..80, first_ms in 1u64..60_000, window_s in 1u64..200_000, elapsed_ms in 0u64..200_000_000,
        ) {
            let policy = RetryPolicy { first_delay: Duration::from_millis(first_ms), window: Duration::from_secs(window_s) };
            prop_assert!(policy.delay(failures + 1) >= policy.delay(failures));
            let since = at(0);
            let now = add(since, Duration::from_millis(elapsed_ms));
            let streak = Streak { since, failures };
            match policy.after_failure(Failure::Timeout, Some(streak), now) {
                Next::RetryAt { at: next, streak: kept } => {
                    prop_assert!(next > now);
                    prop_assert!(next <= add(since, policy.window));
                    prop_assert_eq!(kept, Streak { since, failures: failures + 1 });
                }
                Next::Disable { reason, streak: kept } => {
                    prop_assert_eq!(reason, DisableReason::Failing);
                    prop_assert!(now >= add(since, policy.window));
                    prop_assert_eq!(kept, Streak { since, failures: failures + 1 });
                }
            }
        }

        #[test]
        fn the_cursor_never_passes_an_event_not_acknowledged(
            gaps in proptest::collection::vec(1i64..5, 0..20), acknowledged in 0usize..25, read_to_end: bool, beyond in 0i64..10,
        ) {
            let from = FeedCursor::at(100);
            let mut position = 100;
            let read: Vec<FeedCursor> = gaps.iter().map(|gap| { position += gap; FeedCursor::at(position) }).collect();
            let head = FeedCursor::at(position + beyond);
            let through = delivered_through(from, &read, acknowledged, read_to_end, head);
            prop_assert!(through >= from);
            prop_assert!(through <= head);
            if let Some(first_unacknowledged) = read.get(acknowledged) {
                prop_assert!(through < *first_unacknowledged);
            }
        }
    }
}
