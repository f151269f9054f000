//! No personal data outside the customer directory: a customer written with values found
//! nowhere else is sold to, sealed, archived, exported and bundled, then erased; every record
//! made on the way, every table, the feed and the server's own log are searched for those
//! values.

use crate::demo::{Demo, first_sale, free_port};
use crate::harness::{Engine, MUG, Shop, fresh_postgres_database, line};
use crate::on_both_engines;
use jiff::Timestamp;
use serde_json::{Value, json};

on_both_engines!(
    personal_values_reach_no_record_and_leave_no_row_once_erased,
    the_server_log_holds_no_personal_value,
);

/// A profile whose every personal value is found nowhere else.
fn profile() -> Value {
    json!({
        "displayName": "Théodorine Vasquelier-Pruneau",
        "email": "t.vasquelier.pruneau@privee-unique.fr",
        "phone": "06 47 83 29 16",
        "postalCode": "2A004",
        "birthDate": "1964-02-29",
        "groups": ["famille-vasquelier"],
        "notes": "Allergique aux pruneaux d'Ostrevent",
        "consent": {"marketingEmail": true, "marketingSms": true, "eReceipt": true}
    })
}

/// The profile's values as they may be written anywhere: as typed, normalised, or in part.
const PERSONAL: [&str; 10] = [
    "Théodorine",
    "Vasquelier",
    "vasquelier",
    "pruneau@privee-unique",
    "+33647832916",
    "647832916",
    "2A004",
    "1964-02-29",
    "famille-vasquelier",
    "Ostrevent",
];

/// The personal values `text` holds, whatever their case.
fn found_in(text: &str) -> Vec<&'static str> {
    let text = text.to_lowercase();
    PERSONAL
        .into_iter()
        .filter(|value| text.contains(&value.to_lowercase()))
        .collect()
}

fn at(text: &str) -> Timestamp {
    text.parse().expect("an instant")
}

async fn personal_values_reach_no_record_and_leave_no_row_once_erased(engine: Engine) {
    let shop = Shop::open_at(engine, at("2026-03-30T08:00:00Z"), |config| {
        config.webhook_allow_private = true
    })
    .await;
    let server = &shop.server;
    let admin = server.admin();
    let store = json!({"name": "s1", "siret": "12345678900012"});
    assert_eq!(server.put("/v1/stores/s1", &admin, store).await.status, 200);
    // An endpoint that never answers: the events stay kept for its replay.
    let hook = json!({"url": "http://127.0.0.1:9/never-answers"});
    let subscribed = server.post("/v1/webhooks", &admin, hook).await;
    assert_eq!(subscribed.status, 201, "{}", subscribed.text);
    let written = server.put("/v1/customers/c-privacy", &admin, profile()).await;
    assert_eq!(written.status, 201, "{}", written.text);
    let mut sale = shop.sale("t-private", vec![line("l1", MUG, 1)], 1450);
    sale["customerId"] = json!("c-privacy");
    let sold = shop.finalize(&sale).await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    let receipt = server.get("/v1/sales/t-private", &admin).await;
    assert_eq!(receipt.status, 200, "{}", receipt.text);

    // The day closed, sealed, archived, exported and bundled.
    let shift = format!("/v1/register-sessions/{}/close", shop.session);
    assert_eq!(server.post(&shift, &admin, json!({})).await.status, 200);
    let manager = server.token("manager", "pos.fiscal.close");
    let day = server
        .post("/v1/fiscal/registers/r1/closures", &manager, json!({"period": "day"}))
        .await;
    assert_eq!(day.status, 201, "{}", day.text);
    let period = json!({"registerId": "r1", "from": "2026-03-30", "to": "2026-03-30"});
    let archive = server.post("/v1/fiscal/archives", &manager, period.clone()).await;
    assert_eq!(archive.status, 201, "{}", archive.text);
    assert!(
        archive.text.contains("c-privacy"),
        "the archive seals the customer's id"
    );
    let accountant = server.token("accountant", "pos.fiscal.read");
    let fec = server
        .get("/v1/exports/fec?from=2026-03-30&to=2026-03-30", &accountant)
        .await;
    assert_eq!(fec.status, 200, "{}", fec.text);
    let e_reporting = server
        .get("/v1/exports/e-reporting?from=2026-03-30&to=2026-03-30", &accountant)
        .await;
    assert_eq!(e_reporting.status, 200, "{}", e_reporting.text);
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("bundle");
    let (made, said) = server.run_till(&[
        "fiscal",
        "bundle",
        "--register",
        "r1",
        "--from",
        "2026-03-30",
        "--to",
        "2026-03-30",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(made, "{said}");
    let mut bundle = String::new();
    for file in std::fs::read_dir(&out).unwrap() {
        bundle.push_str(&std::fs::read_to_string(file.unwrap().path()).unwrap());
    }
    let feed = server.get("/v1/events?limit=500", &admin).await;
    assert_eq!(feed.status, 200, "{}", feed.text);
    assert!(feed.text.contains("c-privacy"), "the feed names the customer by id");
    let verified = shop.verify("r1").await;
    for (record, text) in [
        ("the sale's answer", &sold.text),
        ("the sale read back", &receipt.text),
        ("the archive", &archive.text),
        ("the FEC", &fec.text),
        ("the e-reporting file", &e_reporting.text),
        ("the bundle", &bundle),
        ("the feed", &feed.text),
    ] {
        assert_eq!(found_in(text), Vec::<&str>::new(), "{record}");
    }
    // The values are where they belong, so that the searches below can find them.
    let export = server.get("/v1/customers/c-privacy/export", &admin).await;
    assert_eq!(export.status, 200, "{}", export.text);
    assert_eq!(found_in(&export.text).len(), PERSONAL.len(), "{}", export.text);
    assert!(!server.tables_holding(engine, "Vasquelier").await.is_empty());

    let erased = server.post("/v1/customers/c-privacy/erase", &admin, json!({})).await;
    assert_eq!(erased.status, 200, "{}", erased.text);
    for value in PERSONAL {
        assert_eq!(
            server.tables_holding(engine, value).await,
            Vec::<String>::new(),
            "{value}"
        );
    }
    let after = server.get("/v1/events?limit=500", &admin).await;
    assert_eq!(found_in(&after.text), Vec::<&str>::new(), "the feed after the erasure");
    assert!(after.text.contains("customer.erased"));
    let export = server.get("/v1/customers/c-privacy/export", &admin).await;
    assert_eq!(found_in(&export.text), Vec::<&str>::new(), "{}", export.text);
    // The journal and a new archive of the period are as they were.
    assert_eq!(shop.verify("r1").await, verified);
    let again = server.post("/v1/fiscal/archives", &manager, period).await;
    assert_eq!(again.status, 201, "{}", again.text);
    assert_eq!(found_in(&again.text), Vec::<&str>::new());
    shop.server.stop().await;
}

/// The real server at its most talkative (debug, JSON lines) while a profile is written,
/// searched for by name and phone, refused with a bad address, sold to, exported and erased:
/// none of its values reaches the log.
async fn the_server_log_holds_no_personal_value(engine: Engine) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("till.log");
    let database = match engine {
        Engine::Sqlite => None,
        Engine::Postgres => Some(fresh_postgres_database().await),
    };
    let demo = Demo::start_logging(&dir.path().join("data"), database.as_deref(), free_port(), Some(&log)).await;
    let (base, admin) = (demo.export("TILL"), demo.export("TILL_TOKEN"));
    let http = reqwest::Client::new();
    let send = |method: reqwest::Method, path: &str, body: Option<Value>| {
        let request = http.request(method, format!("{base}{path}")).bearer_auth(&admin);
        let request = match body {
            Some(body) => request.json(&body),
            None => request,
        };
        async move { request.send().await.expect("request sent").status().as_u16() }
    };
    use reqwest::Method;
    // The customer the demo's first sale names.
    let path = "/v1/customers/client-42".to_owned();
    assert!(matches!(send(Method::PUT, &path, Some(profile())).await, 200 | 201));
    let mut refused = profile();
    refused["email"] = json!("t.vasquelier.pruneau@");
    assert_eq!(send(Method::PUT, &path, Some(refused)).await, 400);
    for query in [
        "Vasquelier",
        "06%2047%2083%2029%2016",
        "%2B33647832916",
        "t.vasquelier.pruneau%40privee-unique.fr",
    ] {
        assert_eq!(send(Method::GET, &format!("/v1/customers?q={query}"), None).await, 200);
    }
    assert_eq!(send(Method::GET, &path, None).await, 200);
    assert_eq!(send(Method::GET, &format!("{path}/export"), None).await, 200);
    assert_eq!(first_sale(&base, &demo).await.status(), 201);
    assert_eq!(send(Method::POST, &format!("{path}/erase"), Some(json!({}))).await, 200);
    demo.stop().await;
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(written.contains("till::access"), "the log was written: {written}");
    assert_eq!(found_in(&written), Vec::<&str>::new());
}
