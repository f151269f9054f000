//! The customer directory: profiles checked and found by name, address and phone number in any
//! form, consent history, bare profiles made by sales, the export, the erasure (complete,
//! idempotent, the journal verifying as before) and the retention job.

use crate::harness::{Engine, TestServer};
use crate::harness::{MUG, Shop, line};
use crate::on_both_engines;
use serde_json::{Value, json};
use std::time::Duration;

on_both_engines!(
    bad_fields_and_personal_ids_are_refused,
    customers_are_found_by_name_address_and_phone,
    consent_changes_are_kept_with_their_source,
    a_sale_to_an_unknown_customer_makes_a_bare_profile,
    erasure_leaves_no_personal_value_and_the_journal_verifying,
    inactive_customers_are_erased_after_the_retention_period,
    concurrent_writes_keep_one_profile_whole,
);

fn writer(server: &TestServer) -> String {
    server.token("back-office", "pos.customers.write pos.customers.read")
}

async fn bad_fields_and_personal_ids_are_refused(engine: Engine) {
    let server = TestServer::start(engine).await;
    let token = writer(&server);
    let cases = [
        ("c-1", json!({"email": "marie"}), "email"),
        ("c-1", json!({"email": "marie@localhost"}), "email"),
        ("c-1", json!({"phone": "06 12 34"}), "phone"),
        ("c-1", json!({"phone": "06 12 34 56 7x"}), "phone"),
        ("c-1", json!({"birthDate": "1990-13-01"}), "birthDate"),
        (
            "c-1",
            json!({"consent": {"marketingEmail": true}}),
            "consent.marketingSms",
        ),
        ("marie@example.fr", json!({"displayName": "Marie"}), "customerId"),
        ("0612345678", json!({"displayName": "Marie"}), "customerId"),
        ("+33612345678", json!({"displayName": "Marie"}), "customerId"),
    ];
    for (id, body, field) in cases {
        let reply = server.put(&format!("/v1/customers/{id}"), &token, body.clone()).await;
        reply.assert_error(400, "VALIDATION_FAILED");
        assert!(
            reply.fields().contains(&field.to_owned()),
            "{id} {body}: {}",
            reply.text
        );
        let read = server.get(&format!("/v1/customers/{id}"), &token).await;
        assert_eq!(read.status, 404, "nothing was written for {id}: {}", read.text);
    }
    assert_eq!(server.count_rows("customer_profiles").await, 0);
    // Without the write scope, a read token cannot write.
    let reader = server.token("reader", "pos.customers.read");
    assert_eq!(server.put("/v1/customers/c-1", &reader, json!({})).await.status, 403);
    server.stop().await;
}

fn ids(reply: &crate::harness::Reply) -> Vec<String> {
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["customerId"].as_str().unwrap().to_owned())
        .collect()
}

async fn customers_are_found_by_name_address_and_phone(engine: Engine) {
    let server = TestServer::start(engine).await;
    let token = writer(&server);
    let marie = json!({"displayName": "Marie-Hélène Martin", "email": "Marie.Martin@Example.fr",
                       "phone": "06 12 34 56 78", "groups": ["staff"]});
    let created = server.put("/v1/customers/c-1", &token, marie).await;
    assert_eq!(created.status, 201, "{}", created.text);
    assert_eq!(created.body["email"], "marie.martin@example.fr");
    assert_eq!(created.body["phone"], "+33612345678");
    assert_eq!(created.body["erasedAt"], Value::Null);
    let martine = json!({"displayName": "Martine Dupont", "phone": "+44 20 7946 0958", "groups": ["trade"]});
    assert_eq!(server.put("/v1/customers/c-2", &token, martine).await.status, 201);
    assert_eq!(
        server
            .put("/v1/customers/c-3", &token, json!({"displayName": "Paul"}))
            .await
            .status,
        201
    );

    let search = |q: &str| format!("/v1/customers?q={}", urlencode(q));
    assert_eq!(ids(&server.get(&search("martin"), &token).await), ["c-1", "c-2"]);
    assert_eq!(ids(&server.get(&search("HELENE mart"), &token).await), ["c-1"]);
    assert_eq!(ids(&server.get(&search("dupont"), &token).await), ["c-2"]);
    assert!(ids(&server.get(&search("durand"), &token).await).is_empty());
    assert_eq!(
        ids(&server.get(&search("MARIE.MARTIN@example.FR"), &token).await),
        ["c-1"]
    );
    for form in [
        "06 12 34 56 78",
        "0612345678",
        "06.12.34.56.78",
        "+33 6 12 34 56 78",
        "+33612345678",
        "0033612345678",
    ] {
        assert_eq!(ids(&server.get(&search(form), &token).await), ["c-1"], "{form}");
    }
    assert_eq!(ids(&server.get(&search("0044 20 7946 0958"), &token).await), ["c-2"]);
    assert_eq!(
        ids(&server.get(&format!("{}&group=trade", search("martin")), &token).await),
        ["c-2"]
    );
    assert_eq!(ids(&server.get("/v1/customers?group=staff", &token).await), ["c-1"]);

    // Keyset pages: one at a time, each customer once.
    let mut seen = Vec::new();
    let mut path = format!("{}&limit=1", search("mar"));
    loop {
        let page = server.get(&path, &token).await;
        seen.extend(ids(&page));
        match page.body["nextCursor"].as_str() {
            Some(cursor) => path = format!("{}&limit=1&cursor={cursor}", search("mar")),
            None => break,
        }
    }
    assert_eq!(seen, ["c-1", "c-2"]);
    let all = server.get("/v1/customers?limit=2", &token).await;
    assert_eq!(ids(&all), ["c-1", "c-2"]);
    let rest = server
        .get(
            &format!("/v1/customers?limit=2&cursor={}", all.str("nextCursor")),
            &token,
        )
        .await;
    assert_eq!(ids(&rest), ["c-3"]);
    server.stop().await;
}

/// The data of the feed's `customer.erased` events, once the feed shows at least one.
async fn erasure_events(server: &TestServer) -> Vec<Value> {
    let token = server.token("erp", "pos.events.read");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let feed = server.get("/v1/events?limit=500", &token).await;
        assert_eq!(feed.status, 200, "{}", feed.text);
        let erased: Vec<Value> = feed.body["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|event| event["type"] == "customer.erased")
            .map(|event| event["data"].clone())
            .collect();
        if !erased.is_empty() || std::time::Instant::now() > deadline {
            return erased;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub(crate) fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn consent_changes_are_kept_with_their_source(engine: Engine) {
    let server = TestServer::start(engine).await;
    let token = writer(&server);
    let consent = |email: bool, sms: bool, receipt: bool| json!({"displayName": "Ana", "consent": {"marketingEmail": email, "marketingSms": sms, "eReceipt": receipt}});
    assert_eq!(
        server
            .put("/v1/customers/c-7", &token, consent(true, false, true))
            .await
            .status,
        201
    );
    assert_eq!(
        server
            .put("/v1/customers/c-7", &token, consent(false, false, true))
            .await
            .status,
        200
    );
    // A write without consent leaves it as it stands, and adds no history.
    let kept = server
        .put("/v1/customers/c-7", &token, json!({"displayName": "Ana B"}))
        .await;
    assert_eq!(kept.status, 200, "{}", kept.text);
    assert_eq!(
        kept.body["consent"],
        json!({"marketingEmail": false, "marketingSms": false, "eReceipt": true})
    );

    let export = server.get("/v1/customers/c-7/export", &server.admin()).await;
    assert_eq!(export.status, 200, "{}", export.text);
    let history: Vec<(String, bool, String)> = export.body["consentHistory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert!(c["at"].as_str().is_some());
            (
                c["flag"].as_str().unwrap().to_owned(),
                c["granted"].as_bool().unwrap(),
                c["source"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        history,
        [
            ("marketingEmail".to_owned(), true, "api".to_owned()),
            ("eReceipt".to_owned(), true, "api".to_owned()),
            ("marketingEmail".to_owned(), false, "api".to_owned()),
        ]
    );
    server.stop().await;
}

async fn a_sale_to_an_unknown_customer_makes_a_bare_profile(engine: Engine) {
    let shop = Shop::open(engine).await;
    let mut sale = shop.sale("t-bare", vec![line("l1", MUG, 1)], 1450);
    sale["customerId"] = json!("client-9");
    let sold = shop.finalize(&sale).await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    let profile = shop.server.get("/v1/customers/client-9", &shop.server.admin()).await;
    assert_eq!(profile.status, 200, "{}", profile.text);
    assert_eq!(profile.body["displayName"], Value::Null);
    assert_eq!(profile.body["email"], Value::Null);
    assert!(profile.body["loyaltyPoints"].as_i64().unwrap() > 0, "{}", profile.text);
    assert_eq!(profile.body["erasedAt"], Value::Null);
    shop.server.stop().await;
}

async fn erasure_leaves_no_personal_value_and_the_journal_verifying(engine: Engine) {
    let shop = Shop::open(engine).await;
    let server = &shop.server;
    let admin = server.admin();
    let (name, email, phone) = (
        "Zéphyrine Quaglioni",
        "zephyrine.quaglioni@exemple-unique.fr",
        "06 98 76 54 32",
    );
    let profile = json!({"displayName": name, "email": email, "phone": phone, "postalCode": "75011",
        "birthDate": "1987-04-12", "groups": ["quaglioni-club"], "notes": "Préfère Quaglioni les mardis",
        "consent": {"marketingEmail": true, "marketingSms": true, "eReceipt": true}});
    assert_eq!(server.put("/v1/customers/client-42", &admin, profile).await.status, 201);
    let mut sale = shop.sale("t-named", vec![line("l1", MUG, 1)], 1450);
    sale["customerId"] = json!("client-42");
    assert_eq!(shop.finalize(&sale).await.status, 201);
    let verified = shop.verify("r1").await;

    let export = server.get("/v1/customers/client-42/export", &admin).await;
    assert_eq!(export.status, 200, "{}", export.text);
    assert_eq!(export.body["customer"]["displayName"], name);
    assert_eq!(export.body["tickets"][0]["transactionId"], "t-named");
    assert_eq!(export.body["tickets"][0]["totalCents"], 1450);
    let points = export.body["customer"]["loyaltyPoints"].as_i64().unwrap();
    assert!(points > 0);
    assert_eq!(export.body["loyaltyLedger"][0]["kind"], "earn");
    assert_eq!(export.body["consentHistory"].as_array().unwrap().len(), 3);

    // Erasing needs its own scope: a token that may read and write customers may not.
    let erase = "/v1/customers/client-42/erase";
    assert_eq!(server.post(erase, &writer(server), json!({})).await.status, 403);
    let eraser = server.token("dpo", "pos.customers.erase");
    let erased = server.post(erase, &eraser, json!({})).await;
    assert_eq!(erased.status, 200, "{}", erased.text);
    assert!(erased.body["erasedAt"].as_str().is_some());
    assert_eq!(erased.body["loyaltyPoints"], 0);
    for field in ["displayName", "email", "phone", "postalCode", "birthDate", "notes"] {
        assert_eq!(erased.body[field], Value::Null, "{field}");
    }
    assert_eq!(erased.body["groups"], json!([]));
    let again = server.post(erase, &eraser, json!({})).await;
    assert_eq!(again.status, 200);
    assert_eq!(again.body, erased.body, "erasing twice answers the same");

    for value in [
        name,
        "Quaglioni",
        email,
        "+33698765432",
        "quaglioni-club",
        "1987-04-12",
        "zephyrine",
    ] {
        assert_eq!(
            server.tables_holding(engine, value).await,
            Vec::<String>::new(),
            "{value}"
        );
    }
    let after = server.get("/v1/customers/client-42/export", &admin).await;
    let ledger = after.body["loyaltyLedger"].as_array().unwrap();
    let forfeit = ledger.last().unwrap();
    assert_eq!(
        (forfeit["kind"].as_str(), forfeit["points"].as_i64()),
        (Some("forfeit"), Some(-points))
    );
    assert_eq!(after.body["consentHistory"], json!([]));
    assert_eq!(
        after.body["tickets"][0]["transactionId"], "t-named",
        "sales keep the bare id"
    );
    assert!(ids(&server.get("/v1/customers?q=quaglioni", &admin).await).is_empty());
    assert!(ids(&server.get("/v1/customers?q=0698765432", &admin).await).is_empty());

    assert_eq!(
        erasure_events(server).await,
        [json!({"customerId": "client-42", "reason": "request"})]
    );

    assert_eq!(shop.verify("r1").await, verified, "the journal verifies as before");
    let retired = server
        .put("/v1/customers/client-42", &admin, json!({"displayName": name}))
        .await;
    retired.assert_error(409, "CONFLICT");
    assert_eq!(
        server
            .post("/v1/customers/nobody/erase", &eraser, json!({}))
            .await
            .status,
        404
    );
    shop.server.stop().await;
}

async fn inactive_customers_are_erased_after_the_retention_period(engine: Engine) {
    let start: jiff::Timestamp = "2026-01-05T10:00:00Z".parse().unwrap();
    let server = TestServer::start_at(engine, start, |config| config.customer_retention_days = 30).await;
    let token = writer(&server);
    let body = json!({"displayName": "Oubliée Retentionnelle", "email": "oubliee@retention.example"});
    assert_eq!(server.put("/v1/customers/old-1", &token, body).await.status, 201);
    // Past the day's turn (taken at start) and the retention period of the first customer.
    server.clock.advance(Duration::from_secs(31 * 24 * 3600));
    assert_eq!(
        server
            .put("/v1/customers/new-1", &token, json!({"displayName": "Récente"}))
            .await
            .status,
        201
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let old = server.get("/v1/customers/old-1", &token).await;
        if old.body["erasedAt"].is_string() {
            assert_eq!(old.body["displayName"], Value::Null);
            break;
        }
        assert!(std::time::Instant::now() < deadline, "not erased: {}", old.text);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let recent = server.get("/v1/customers/new-1", &token).await;
    assert_eq!(recent.body["erasedAt"], Value::Null, "{}", recent.text);
    assert_eq!(recent.body["displayName"], "Récente");
    assert!(server.tables_holding(engine, "Retentionnelle").await.is_empty());
    assert_eq!(
        erasure_events(&server).await,
        [json!({"customerId": "old-1", "reason": "retention"})]
    );
    server.stop().await;
}

async fn concurrent_writes_keep_one_profile_whole(engine: Engine) {
    let server = TestServer::start(engine).await;
    let token = writer(&server);
    let writes = (0..8).map(|i| {
        let (server, token) = (&server, &token);
        async move {
            let body = json!({"displayName": format!("Writer{i} Name{i}"), "email": format!("w{i}@example.fr"),
                              "phone": format!("06 00 00 00 0{i}"), "groups": [format!("g{i}")]});
            server.put("/v1/customers/c-race", token, body).await.status
        }
    });
    let statuses = futures::future::join_all(writes).await;
    assert!(statuses.iter().all(|s| *s == 200 || *s == 201), "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 1, "{statuses:?}");
    let held = server.get("/v1/customers/c-race", &token).await;
    let name = held.body["displayName"].as_str().unwrap().to_owned();
    let i = name.trim_start_matches("Writer").split(' ').next().unwrap().to_owned();
    assert_eq!(name, format!("Writer{i} Name{i}"));
    assert_eq!(held.body["email"], format!("w{i}@example.fr"));
    assert_eq!(held.body["phone"], format!("+3360000000{i}"));
    assert_eq!(held.body["groups"], json!([format!("g{i}")]));
    // The search index holds that write alone.
    assert_eq!(ids(&server.get("/v1/customers?q=writer", &token).await), ["c-race"]);
    assert_eq!(server.count_rows("customer_words").await, 2);
    assert_eq!(server.count_rows("customer_groups").await, 1);
    server.stop().await;
}
