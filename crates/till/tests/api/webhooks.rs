//! Webhooks (docs/events.md): the feed pushed to a receiver in the Standard Webhooks
//! form, at least once and in feed order, retried, disabled after the retry window, replayed
//! from a cursor, never to a private address unless allowed, never through a redirect, a slow
//! receiver holding up no other. The receiver here is a small server of the test's own that
//! checks every signature with its own implementation of the specification.

use crate::harness::{Engine, TestServer};
use crate::on_both_engines;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::Method;
use serde_json::{Value, json};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

on_both_engines!(
    deliveries_are_signed_complete_and_in_feed_order,
    a_failed_delivery_is_retried_and_the_order_holds_across_it,
    an_endpoint_failing_for_the_whole_window_is_disabled_until_a_replay,
    a_replay_delivers_again_from_its_cursor,
    private_addresses_are_refused_when_created_and_when_delivering,
    localhost_names_are_refused_by_name,
    a_redirect_is_not_followed,
    a_slow_receiver_holds_up_no_other_endpoint,
    an_endpoint_receives_the_types_it_asked_for,
    webhooks_need_their_scopes,
    a_failing_endpoint_and_its_backlog_show_on_the_metrics,
);

/// How the receiver answers a request.
#[derive(Clone)]
pub enum Answer {
    Status(u16),
    /// 302 to another path of the receiver.
    Redirect,
    /// 200 once the gate opens.
    Held(watch::Receiver<bool>),
}

/// The receiver's answer to its `n`-th request (from 0).
pub type Script = Arc<dyn Fn(usize) -> Answer + Send + Sync>;

/// One request as the receiver got it.
#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    pub id: String,
    pub timestamp: String,
    pub signature: String,
    pub body: String,
    /// The status it was (or is being) answered with.
    pub status: u16,
}

impl Received {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

struct Shared {
    got: Mutex<Vec<Received>>,
    script: Script,
}

/// A webhook receiver on 127.0.0.1:0.
pub struct Receiver {
    pub url: String,
    pub port: u16,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl Receiver {
    pub async fn start(script: Script) -> Receiver {
        let shared = Arc::new(Shared {
            got: Mutex::new(Vec::new()),
            script,
        });
        let app = axum::Router::new().fallback(receive).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let port = listener.local_addr().expect("an address").port();
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            url: format!("http://127.0.0.1:{port}/hook"),
            port,
            shared,
            server,
        }
    }

    /// Answers 200 to everything.
    pub async fn accepting() -> Receiver {
        Receiver::start(Arc::new(|_| Answer::Status(200))).await
    }

    pub fn got(&self) -> Vec<Received> {
        self.shared.got.lock().unwrap().clone()
    }

    /// The requests answered 2xx, in the order they came.
    pub fn delivered(&self) -> Vec<Received> {
        self.got()
            .into_iter()
            .filter(|r| (200..300).contains(&r.status))
            .collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn receive(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let answer = {
        let mut got = shared.got.lock().unwrap();
        let answer = (shared.script)(got.len());
        got.push(Received {
            path: uri.path().to_owned(),
            id: header("webhook-id"),
            timestamp: header("webhook-timestamp"),
            signature: header("webhook-signature"),
            body: String::from_utf8_lossy(&body).into_owned(),
            status: match &answer {
                Answer::Status(status) => *status,
                Answer::Redirect => 302,
                Answer::Held(_) => 200,
            },
        });
        answer
    };
    match answer {
        Answer::Status(status) => StatusCode::from_u16(status).unwrap().into_response(),
        Answer::Redirect => (StatusCode::FOUND, [("location", "/elsewhere")]).into_response(),
        Answer::Held(mut gate) => {
            let _ = gate.wait_for(|open| *open).await;
            StatusCode::OK.into_response()
        }
    }
}

/// HMAC-SHA256 (RFC 2104), written here from SHA-256 so that the test does not check the
/// server's signature with the server's own code.
fn hmac_sha256(key: &[u8], message: &[u8]) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(Sha256::digest(key).as_slice());
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let inner = Sha256::new()
        .chain_update(block.map(|b| b ^ 0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(block.map(|b| b ^ 0x5c))
        .chain_update(inner.as_slice())
        .finalize()
        .to_vec()
}

/// Whether `received` carries a Standard Webhooks signature by `secret` of its id, timestamp
/// and body, sent within five minutes of now.
pub fn verifies(secret: &str, received: &Received) -> bool {
    let Some(key) = secret.strip_prefix("whsec_").and_then(|key| STANDARD.decode(key).ok()) else {
        return false;
    };
    let Ok(timestamp) = received.timestamp.parse::<i64>() else {
        return false;
    };
    if (jiff::Timestamp::now().as_second() - timestamp).abs() > 300 {
        return false;
    }
    let signed = format!("{}.{}.{}", received.id, received.timestamp, received.body);
    let expected = format!("v1,{}", STANDARD.encode(hmac_sha256(&key, signed.as_bytes())));
    received.signature.split(' ').any(|signature| signature == expected)
}

/// Waits for `probe` to answer, up to a generous bound.
pub async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(std::time::Instant::now() < deadline, "waited in vain for {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// A server that may deliver to 127.0.0.1, retrying within a tenth of a second; a store and
/// an article whose stock counts make the events.
async fn start(engine: Engine, tweak: impl FnOnce(&mut till::config::Config)) -> (TestServer, String) {
    let server = TestServer::start_with(engine, |config| {
        config.webhook_allow_private = true;
        config.webhook_retry_first_ms = 100;
        tweak(config);
    })
    .await;
    server.provision_store("s1").await;
    let sku = server.provision_sku("Mug", 1450, 20.0).await;
    // The article's own event numbered and released first (a moment after its commit on
    // PostgreSQL), so that an endpoint made next starts after it.
    crate::events::read_feed(&server, "", 1).await;
    (server, sku)
}

/// A stock count: one `stock.adjusted` event whose data holds `on_hand`.
async fn count(server: &TestServer, sku: &str, on_hand: i64) {
    let reply = server
        .put(
            &format!("/v1/stores/s1/stock/{sku}"),
            &server.admin(),
            json!({"onHand": on_hand}),
        )
        .await;
    assert!(reply.status < 300, "{}", reply.text);
}

/// Creates an endpoint; answers its id and secret.
async fn subscribe(server: &TestServer, url: &str, types: Option<&[&str]>) -> (String, String) {
    let mut body = json!({"url": url, "description": "the test's receiver"});
    if let Some(types) = types {
        body["types"] = json!(types);
    }
    let reply = server.post("/v1/webhooks", &server.admin(), body).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    (reply.str("id"), reply.str("secret"))
}

/// The endpoint `id` as the list shows it.
async fn endpoint(server: &TestServer, id: &str) -> Value {
    let reply = server.get("/v1/webhooks", &server.admin()).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.body["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["id"] == id)
        .unwrap_or_else(|| panic!("{id} in {}", reply.text))
        .clone()
}

/// The stock counts of the requests, in the order they came.
fn counts(received: &[Received]) -> Vec<i64> {
    received
        .iter()
        .map(|r| r.json()["data"]["onHand"].as_i64().expect("a stock count"))
        .collect()
}

/// The feed's events after `after`, as `GET /v1/events` answers them.
async fn feed_after(server: &TestServer, after: &str) -> Vec<Value> {
    let token = server.token("erp", "pos.events.read");
    let reply = server
        .get(&format!("/v1/events?after={after}&limit=1000"), &token)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.body["events"].as_array().unwrap().clone()
}

async fn deliveries_are_signed_complete_and_in_feed_order(engine: Engine) {
    let (server, sku) = start(engine, |_| {}).await;
    let receiver = Receiver::accepting().await;
    let created = server
        .post(
            "/v1/webhooks",
            &server.admin(),
            json!({"url": receiver.url, "description": "ERP"}),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.text);
    let (id, secret) = (created.str("id"), created.str("secret"));
    assert!(id.starts_with("whk_"), "{id}");
    assert!(secret.starts_with("whsec_"), "{secret}");
    assert!(STANDARD.decode(&secret["whsec_".len()..]).unwrap().len() >= 24);
    assert_eq!(created.body["types"], Value::Null);
    assert_eq!(created.body["state"], "active");
    assert_eq!(created.body["description"], "ERP");
    let start_cursor = created.str("cursor");

    for on_hand in 1..=20 {
        count(&server, &sku, on_hand).await;
    }
    let got = eventually("twenty deliveries", || async {
        let got = receiver.delivered();
        (got.len() >= 20).then_some(got)
    })
    .await;
    assert_eq!(counts(&got), (1..=20).collect::<Vec<_>>(), "each once, in feed order");
    for received in &got {
        assert!(verifies(&secret, received), "signature of {received:?}");
        assert_eq!(received.path, "/hook");
        assert_eq!(
            received.json()["id"],
            json!(received.id),
            "webhook-id is the event's id"
        );
    }
    assert!(
        !verifies("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", &got[0]),
        "another secret"
    );
    // The body is the event exactly as the feed answers it.
    let feed = feed_after(&server, &start_cursor).await;
    let bodies: Vec<Value> = got.iter().map(Received::json).collect();
    assert_eq!(bodies, feed);

    let listed = eventually("the cursor past the last event", || async {
        let listed = endpoint(&server, &id).await;
        (listed["cursor"] == feed[19]["cursor"]).then_some(listed)
    })
    .await;
    assert!(listed.get("secret").is_none(), "the secret is shown once: {listed}");
    assert_eq!(listed["failingSince"], Value::Null);
    let deliveries = server
        .get(&format!("/v1/webhooks/{id}/deliveries?limit=5"), &server.admin())
        .await;
    assert_eq!(deliveries.status, 200, "{}", deliveries.text);
    let attempts = deliveries.body["deliveries"].as_array().unwrap();
    assert_eq!(attempts.len(), 5);
    assert_eq!(attempts[0]["eventId"], feed[19]["id"], "newest first");
    assert_eq!(attempts[4]["eventId"], feed[15]["id"]);
    for attempt in attempts {
        assert_eq!(
            (
                &attempt["delivered"],
                &attempt["statusCode"],
                &attempt["error"],
                &attempt["attempt"]
            ),
            (&json!(true), &json!(200), &Value::Null, &json!(1)),
            "{attempt}"
        );
    }
    server.stop().await;
}

async fn a_failed_delivery_is_retried_and_the_order_holds_across_it(engine: Engine) {
    let (server, sku) = start(engine, |_| {}).await;
    // The second and third requests fail.
    let receiver = Receiver::start(Arc::new(|n| match n {
        1 | 2 => Answer::Status(500),
        _ => Answer::Status(200),
    }))
    .await;
    let (id, secret) = subscribe(&server, &receiver.url, None).await;
    for on_hand in 1..=5 {
        count(&server, &sku, on_hand).await;
    }
    let delivered = eventually("five deliveries", || async {
        let delivered = receiver.delivered();
        (delivered.len() >= 5).then_some(delivered)
    })
    .await;
    assert_eq!(counts(&delivered), [1, 2, 3, 4, 5]);
    let got = receiver.got();
    assert_eq!(
        counts(&got),
        [1, 2, 2, 2, 3, 4, 5],
        "nothing after a failed event until it is delivered"
    );
    assert!(got.iter().all(|r| verifies(&secret, r)));
    assert_eq!(got[1].id, got[3].id, "a retry carries the same webhook-id");

    // The receiver sees a delivery before the server records its answer: wait for all seven.
    let mut attempts = eventually("seven recorded attempts", || async {
        let history = server
            .get(&format!("/v1/webhooks/{id}/deliveries"), &server.admin())
            .await;
        let attempts = history.body["deliveries"].as_array().unwrap().clone();
        (attempts.len() == 7).then_some(attempts)
    })
    .await;
    attempts.reverse();
    let seen: Vec<(i64, bool, Value, Value)> = attempts
        .iter()
        .filter(|a| a["eventId"] == json!(got[1].id))
        .map(|a| {
            (
                a["attempt"].as_i64().unwrap(),
                a["delivered"].as_bool().unwrap(),
                a["statusCode"].clone(),
                a["error"].clone(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (1, false, json!(500), json!("status")),
            (2, false, json!(500), json!("status")),
            (3, true, json!(200), Value::Null),
        ]
    );
    let listed = endpoint(&server, &id).await;
    assert_eq!(listed["state"], "active");
    assert_eq!(
        (&listed["failingSince"], &listed["failures"]),
        (&Value::Null, &json!(0))
    );
    server.stop().await;
}

async fn an_endpoint_failing_for_the_whole_window_is_disabled_until_a_replay(engine: Engine) {
    let (server, sku) = start(engine, |config| config.webhook_retry_window_seconds = 2).await;
    let healthy = Arc::new(AtomicBool::new(false));
    let script = {
        let healthy = healthy.clone();
        Arc::new(move |_| match healthy.load(Ordering::SeqCst) {
            true => Answer::Status(200),
            false => Answer::Status(503),
        })
    };
    let receiver = Receiver::start(script).await;
    let (id, _) = subscribe(&server, &receiver.url, None).await;
    let before = endpoint(&server, &id).await["cursor"].clone();
    count(&server, &sku, 7).await;
    let failing = eventually("a failure", || async {
        let listed = endpoint(&server, &id).await;
        (listed["failingSince"] != Value::Null).then_some(listed)
    })
    .await;
    assert_eq!(failing["state"], "active");
    assert_eq!(failing["lastFailure"], json!({"error": "status", "statusCode": 503}));
    assert_ne!(failing["nextAttemptAt"], Value::Null);

    let disabled = eventually("the endpoint disabled", || async {
        let listed = endpoint(&server, &id).await;
        (listed["state"] == "disabled").then_some(listed)
    })
    .await;
    assert_eq!(disabled["disabled"]["reason"], "failing", "{disabled}");
    assert!(disabled["disabled"]["since"].is_string());
    assert!(
        disabled["disabled"]["message"].as_str().unwrap().contains("HTTP 503"),
        "{disabled}"
    );
    assert_eq!(disabled["nextAttemptAt"], Value::Null);
    assert_eq!(disabled["cursor"], before, "the cursor stays before the failed event");
    let tried = receiver.got();
    assert!(tried.len() >= 3, "retried before giving up: {}", tried.len());
    assert!(tried.iter().all(|r| r.id == tried[0].id), "the same event each time");
    // A disabled endpoint is not tried any more.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(receiver.got().len(), tried.len());

    healthy.store(true, Ordering::SeqCst);
    let replayed = server
        .post(
            &format!("/v1/webhooks/{id}/replay"),
            &server.admin(),
            json!({"after": before}),
        )
        .await;
    assert_eq!(replayed.status, 200, "{}", replayed.text);
    assert_eq!(replayed.body["state"], "active");
    assert_eq!(replayed.body["disabled"], Value::Null);
    let delivered = eventually("the event delivered after the replay", || async {
        let delivered = receiver.delivered();
        (!delivered.is_empty()).then_some(delivered)
    })
    .await;
    assert_eq!(counts(&delivered), [7]);
    server.stop().await;
}

async fn a_replay_delivers_again_from_its_cursor(engine: Engine) {
    let (server, sku) = start(engine, |_| {}).await;
    let receiver = Receiver::accepting().await;
    let (id, _) = subscribe(&server, &receiver.url, None).await;
    let start_cursor = endpoint(&server, &id).await["cursor"].as_str().unwrap().to_owned();
    for on_hand in 1..=5 {
        count(&server, &sku, on_hand).await;
    }
    eventually("five deliveries", || async {
        (receiver.delivered().len() >= 5).then_some(())
    })
    .await;
    let feed = feed_after(&server, &start_cursor).await;
    let (admin, path) = (server.admin(), format!("/v1/webhooks/{id}/replay"));
    let replay = |after: Value| server.post(&path, &admin, json!({"after": after}));
    let replayed = replay(feed[1]["cursor"].clone()).await;
    assert_eq!(replayed.status, 200, "{}", replayed.text);
    assert_eq!(replayed.body["cursor"], feed[1]["cursor"]);
    let delivered = eventually("the replayed events", || async {
        let delivered = receiver.delivered();
        (delivered.len() >= 8).then_some(delivered)
    })
    .await;
    assert_eq!(counts(&delivered), [1, 2, 3, 4, 5, 3, 4, 5]);

    // A cursor past the feed's end would skip what comes next: refused.
    let head: i64 = feed[4]["cursor"].as_str().unwrap().parse().unwrap();
    replay(json!((head + 1000).to_string()))
        .await
        .assert_error(400, "VALIDATION_FAILED");
    assert_eq!(replay(json!(7)).await.fields(), ["after"]);
    assert_eq!(replay(json!("-1")).await.fields(), ["after"]);
    let unknown = server
        .post("/v1/webhooks/whk_nope/replay", &server.admin(), json!({"after": "0"}))
        .await;
    unknown.assert_error(404, "NOT_FOUND");

    let deleted = server
        .call(
            Method::DELETE,
            &format!("/v1/webhooks/{id}"),
            Some(&server.admin()),
            None,
        )
        .await;
    assert_eq!(deleted.status, 204, "{}", deleted.text);
    server
        .call(
            Method::DELETE,
            &format!("/v1/webhooks/{id}"),
            Some(&server.admin()),
            None,
        )
        .await
        .assert_error(404, "NOT_FOUND");
    server
        .get(&format!("/v1/webhooks/{id}/deliveries"), &server.admin())
        .await
        .assert_error(404, "NOT_FOUND");
    count(&server, &sku, 6).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.delivered().len(), 8, "a deleted endpoint gets nothing more");
    server.stop().await;
}

async fn private_addresses_are_refused_when_created_and_when_delivering(engine: Engine) {
    let (server, sku) = start(engine, |config| config.webhook_allow_private = false).await;
    let receiver = Receiver::accepting().await;
    for url in [
        receiver.url.clone(),
        format!("http://localhost:{}/hook", receiver.port),
        "http://[::1]/hook".to_owned(),
        "http://[::ffff:10.0.0.1]/hook".to_owned(),
        "http://10.1.2.3/hook".to_owned(),
        "http://192.168.0.10/hook".to_owned(),
        "http://169.254.169.254/latest/meta-data".to_owned(),
        "http://0.0.0.0/".to_owned(),
        "http://2130706433/".to_owned(),
        "https://[fd00::1]/".to_owned(),
    ] {
        let reply = server.post("/v1/webhooks", &server.admin(), json!({"url": url})).await;
        reply.assert_error(400, "VALIDATION_FAILED");
        assert_eq!(reply.fields(), ["url"], "{url}: {}", reply.text);
    }
    for url in [
        "ftp://example.com/hook",
        "https://user:secret@example.com/hook",
        "example.com/hook",
        "https://example.com/ hook",
    ] {
        let reply = server.post("/v1/webhooks", &server.admin(), json!({"url": url})).await;
        assert_eq!(reply.fields(), ["url"], "{url}: {}", reply.text);
    }
    let long = format!("https://example.com/{}", "a".repeat(2048));
    let reply = server.post("/v1/webhooks", &server.admin(), json!({"url": long})).await;
    assert_eq!(reply.fields(), ["url"]);
    let listed = server.get("/v1/webhooks", &server.admin()).await;
    assert_eq!(listed.body["webhooks"], json!([]), "nothing was created");

    // A name that led elsewhere when the endpoint was made and now resolves to this machine
    // (DNS rebinding): every delivery resolves it again and refuses the address.
    count(&server, &sku, 1).await;
    server
        .run_sql(&format!(
            "INSERT INTO webhook_endpoints (id, url, secret, created_at, delivered_through, due_at) \
             VALUES ('whk_rebound', 'http://localhost:{}/hook', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 0, 0, 0)",
            receiver.port
        ))
        .await
        .expect("an endpoint written past the API");
    let attempt = eventually("a refused attempt", || async {
        let reply = server.get("/v1/webhooks/whk_rebound/deliveries", &server.admin()).await;
        reply.body["deliveries"].as_array().and_then(|a| a.first().cloned())
    })
    .await;
    assert_eq!(
        (&attempt["delivered"], &attempt["error"], &attempt["statusCode"]),
        (&json!(false), &json!("address_refused"), &Value::Null),
        "{attempt}"
    );
    assert!(receiver.got().is_empty(), "nothing reached the loopback address");
    server.stop().await;
}

/// `localhost` and the names under it lead to this machine whatever a DNS server answers:
/// refused by name like a loopback address, when created and when delivering, unless private
/// addresses are allowed.
async fn localhost_names_are_refused_by_name(engine: Engine) {
    let (server, sku) = start(engine, |config| config.webhook_allow_private = false).await;
    for url in [
        "http://localhost./hook",
        "http://LOCALHOST.:8080/hook",
        "http://till.localhost/hook",
        "https://a.b.LocalHost./hook",
        "http://metadata.localhost.:80/",
    ] {
        let reply = server.post("/v1/webhooks", &server.admin(), json!({"url": url})).await;
        reply.assert_error(400, "VALIDATION_FAILED");
        assert_eq!(reply.fields(), ["url"], "{url}: {}", reply.text);
        assert!(reply.text.contains("loopback"), "{url}: {}", reply.text);
    }
    let listed = server.get("/v1/webhooks", &server.admin()).await;
    assert_eq!(listed.body["webhooks"], json!([]), "nothing was created");

    // Written past the API: every delivery refuses the name before resolving it.
    count(&server, &sku, 1).await;
    server
        .run_sql(
            "INSERT INTO webhook_endpoints (id, url, secret, created_at, delivered_through, due_at) \
             VALUES ('whk_named', 'http://till.localhost:9/hook', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 0, 0, 0)",
        )
        .await
        .expect("an endpoint written past the API");
    let attempt = eventually("a refused attempt", || async {
        let reply = server.get("/v1/webhooks/whk_named/deliveries", &server.admin()).await;
        reply.body["deliveries"].as_array().and_then(|a| a.first().cloned())
    })
    .await;
    assert_eq!(attempt["error"], json!("address_refused"), "{attempt}");
    server.stop().await;

    // Allowed, as for any loopback address.
    let (server, _) = start(engine, |_| {}).await;
    let reply = server
        .post(
            "/v1/webhooks",
            &server.admin(),
            json!({"url": "http://till.localhost./hook"}),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    server.stop().await;
}

async fn a_redirect_is_not_followed(engine: Engine) {
    let (server, sku) = start(engine, |_| {}).await;
    let receiver = Receiver::start(Arc::new(|_| Answer::Redirect)).await;
    let (id, _) = subscribe(&server, &receiver.url, None).await;
    count(&server, &sku, 1).await;
    let listed = eventually("a failed attempt", || async {
        let listed = endpoint(&server, &id).await;
        (listed["lastFailure"] != Value::Null).then_some(listed)
    })
    .await;
    assert_eq!(listed["lastFailure"], json!({"error": "redirect", "statusCode": 302}));
    let history = server
        .get(&format!("/v1/webhooks/{id}/deliveries"), &server.admin())
        .await;
    assert_eq!(history.body["deliveries"][0]["error"], "redirect");
    assert!(
        receiver.got().iter().all(|r| r.path == "/hook"),
        "the redirect's target was never called"
    );
    server.stop().await;
}

async fn a_slow_receiver_holds_up_no_other_endpoint(engine: Engine) {
    let (server, sku) = start(engine, |config| config.webhook_timeout_seconds = 60).await;
    let (open, gate) = watch::channel(false);
    let slow = Receiver::start(Arc::new(move |_| Answer::Held(gate.clone()))).await;
    let fast = Receiver::accepting().await;
    subscribe(&server, &slow.url, None).await;
    subscribe(&server, &fast.url, None).await;
    for on_hand in 1..=5 {
        count(&server, &sku, on_hand).await;
    }
    // The slow endpoint's worker may start after the fast one has finished.
    eventually("the slow receiver's first request", || async {
        (!slow.got().is_empty()).then_some(())
    })
    .await;
    let delivered = eventually("the fast receiver's deliveries", || async {
        let delivered = fast.delivered();
        (delivered.len() >= 5).then_some(delivered)
    })
    .await;
    assert_eq!(counts(&delivered), [1, 2, 3, 4, 5]);
    assert_eq!(
        counts(&slow.got()),
        [1],
        "the slow receiver has not answered its first delivery yet"
    );
    open.send(true).unwrap();
    let slow_got = eventually("the slow receiver's deliveries", || async {
        let got = slow.got();
        (got.len() >= 5).then_some(got)
    })
    .await;
    assert_eq!(counts(&slow_got), [1, 2, 3, 4, 5]);
    server.stop().await;
}

async fn an_endpoint_receives_the_types_it_asked_for(engine: Engine) {
    let (server, sku) = start(engine, |_| {}).await;
    let stock_only = Receiver::accepting().await;
    let everything = Receiver::accepting().await;
    let (stock_id, _) = subscribe(&server, &stock_only.url, Some(&["stock.adjusted"])).await;
    subscribe(&server, &everything.url, None).await;
    assert_eq!(endpoint(&server, &stock_id).await["types"], json!(["stock.adjusted"]));
    for on_hand in 1..=3 {
        count(&server, &sku, on_hand).await;
        let card = server
            .post("/v1/gift-cards", &server.admin(), json!({"balanceCents": 500}))
            .await;
        assert_eq!(card.status, 201, "{}", card.text);
    }
    let all = eventually("every event", || async {
        let got = everything.delivered();
        (got.len() >= 6).then_some(got)
    })
    .await;
    let kinds: Vec<String> = all
        .iter()
        .map(|r| r.json()["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["stock.adjusted", "giftcard.changed"].repeat(3));
    let stock = eventually("the stock counts", || async {
        let got = stock_only.delivered();
        (got.len() >= 3).then_some(got)
    })
    .await;
    assert_eq!(counts(&stock), [1, 2, 3]);
    // Its cursor passes the events it does not want.
    let last = all[5].json()["cursor"].clone();
    eventually("the cursor past the last event", || async {
        (endpoint(&server, &stock_id).await["cursor"] == last).then_some(())
    })
    .await;
    assert_eq!(stock_only.got().len(), 3);

    for (types, field) in [
        (json!([]), "types"),
        (json!(["stock.adjusted", "stock.adjusted"]), "types"),
        (json!(["orders"]), "types.0"),
        (json!("stock.adjusted"), "types"),
    ] {
        let reply = server
            .post(
                "/v1/webhooks",
                &server.admin(),
                json!({"url": stock_only.url, "types": types}),
            )
            .await;
        assert_eq!(reply.fields(), [field], "{types}: {}", reply.text);
    }
    server.stop().await;
}

async fn webhooks_need_their_scopes(engine: Engine) {
    let (server, _) = start(engine, |_| {}).await;
    let receiver = Receiver::accepting().await;
    let (id, _) = subscribe(&server, &receiver.url, None).await;
    let body = || json!({"url": receiver.url});
    let events_reader = server.token("erp", "pos.events.read");
    let reader = server.token("erp", "pos.webhooks.read");
    let writer = server.token("ops", "pos.webhooks.write");
    let deliveries = format!("/v1/webhooks/{id}/deliveries");
    let replay = format!("/v1/webhooks/{id}/replay");
    for token in [&events_reader, &reader] {
        server
            .post("/v1/webhooks", token, body())
            .await
            .assert_error(403, "FORBIDDEN");
        server
            .post(&replay, token, json!({"after": "0"}))
            .await
            .assert_error(403, "FORBIDDEN");
        server
            .call(
                Method::DELETE,
                &format!("/v1/webhooks/{id}"),
                Some(token.as_str()),
                None,
            )
            .await
            .assert_error(403, "FORBIDDEN");
    }
    for path in ["/v1/webhooks", deliveries.as_str()] {
        server.get(path, &events_reader).await.assert_error(403, "FORBIDDEN");
        assert_eq!(server.get(path, &reader).await.status, 200);
        assert_eq!(server.get(path, &writer).await.status, 200);
    }
    server
        .call(Method::GET, "/v1/webhooks", None, None)
        .await
        .assert_error(401, "UNAUTHORIZED");
    assert_eq!(server.post("/v1/webhooks", &writer, body()).await.status, 201);
    assert_eq!(server.post(&replay, &writer, json!({"after": "0"})).await.status, 200);
    let listed = server.get("/v1/webhooks", &reader).await;
    assert_eq!(listed.body["webhooks"].as_array().unwrap().len(), 2);
    server.stop().await;
}

/// The value of the series `series` (name and labels, as written) on `/metrics`.
async fn metric(server: &TestServer, series: &str) -> Option<f64> {
    let reply = server.call(Method::GET, "/metrics", None, None).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.text.lines().find_map(|line| {
        let (name, value) = line.rsplit_once(' ')?;
        (name == series).then(|| value.parse().expect("a number"))
    })
}

/// An operator sees an endpoint failing, what waits for it and how old it is, then all of it
/// gone once the receiver answers again.
async fn a_failing_endpoint_and_its_backlog_show_on_the_metrics(engine: Engine) {
    let (server, sku) = start(engine, |config| config.webhook_timeout_seconds = 60).await;
    let (open, gate) = watch::channel(false);
    // The first request fails; the retry waits for the gate, so the endpoint stays failing.
    let receiver = Receiver::start(Arc::new(move |n| match n {
        0 => Answer::Status(503),
        _ => Answer::Held(gate.clone()),
    }))
    .await;
    subscribe(&server, &receiver.url, None).await;
    for on_hand in 1..=3 {
        count(&server, &sku, on_hand).await;
    }
    eventually("the endpoint failing on the metrics", || async {
        let failing = metric(&server, "till_webhook_endpoints{state=\"failing\"}").await;
        (failing == Some(1.0)).then_some(())
    })
    .await;
    assert_eq!(
        metric(&server, "till_webhook_endpoints{state=\"healthy\"}").await,
        Some(0.0)
    );
    assert_eq!(metric(&server, "till_webhook_pending_events").await, Some(3.0));
    let oldest = metric(&server, "till_webhook_oldest_pending_age_seconds")
        .await
        .unwrap();
    assert!((0.0..600.0).contains(&oldest), "{oldest}");
    assert!(
        metric(&server, "till_webhook_attempts_total{outcome=\"status\"}").await >= Some(1.0),
        "the failed attempt is counted by how it failed"
    );

    open.send(true).unwrap();
    eventually("the backlog delivered on the metrics", || async {
        let pending = metric(&server, "till_webhook_pending_events").await;
        let healthy = metric(&server, "till_webhook_endpoints{state=\"healthy\"}").await;
        (pending == Some(0.0) && healthy == Some(1.0)).then_some(())
    })
    .await;
    assert_eq!(
        metric(&server, "till_webhook_endpoints{state=\"failing\"}").await,
        Some(0.0)
    );
    assert_eq!(
        metric(&server, "till_webhook_oldest_pending_age_seconds").await,
        Some(0.0)
    );
    assert_eq!(metric(&server, "till_webhook_longest_failing_seconds").await, Some(0.0));
    assert!(metric(&server, "till_webhook_attempts_total{outcome=\"delivered\"}").await >= Some(3.0));
    server.stop().await;
}
