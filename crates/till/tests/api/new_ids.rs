//! Ids of stores, registers and staff made now cannot steer an address (`/`, `?`, `#`, `%`,
//! `..`, spaces, control characters, more than 64 characters): 400 on the id, nothing made.
//! Rows made before with such ids stay readable and usable, and the console writes every id
//! into its addresses percent-encoded, so that a form does what its button says.

use crate::harness::{Engine, TestServer};
use crate::on_both_engines;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, COOKIE, ORIGIN};
use serde_json::json;

on_both_engines!(
    ids_that_steer_an_address_are_refused_when_made,
    the_console_encodes_every_id_it_writes_into_an_address,
);

/// Ids refused, as text and as a percent-encoded path segment, each holding one refused
/// character or form.
const REFUSED: [(&str, &str); 11] = [
    ("a/b", "a%2Fb"),
    ("a?b", "a%3Fb"),
    ("a#b", "a%23b"),
    ("a%b", "a%25b"),
    ("a..b", "a..b"),
    ("..", ".."),
    ("a b", "a%20b"),
    ("a\tb", "a%09b"),
    ("a\u{a0}b", "a%C2%A0b"),
    ("a\u{7f}b", "a%7Fb"),
    (
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    ),
];

async fn ids_that_steer_an_address_are_refused_when_made(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    server.provision_store("s1").await;
    server.provision_staff("camille", "cashier", "1234").await;
    for (text, id) in REFUSED {
        // `..` alone as a path segment would be a step of the path, not an id.
        if id != ".." {
            let store = server
                .put(&format!("/v1/stores/{id}"), &admin, json!({"name": "x"}))
                .await;
            store.assert_error(400, "VALIDATION_FAILED");
            assert_eq!(store.fields(), ["storeId"], "{id}: {}", store.text);
            let body = json!({"displayName": "x", "role": "cashier", "pin": "1234"});
            let staff = server.put(&format!("/v1/staff/{id}"), &admin, body).await;
            staff.assert_error(400, "VALIDATION_FAILED");
            assert_eq!(staff.fields(), ["subject"], "{id}: {}", staff.text);
        }
        let body = json!({"storeId": "s1", "registerId": text, "cashierSubject": "camille", "pin": "1234"});
        let session = server.post("/v1/register-sessions", &admin, body).await;
        session.assert_error(400, "VALIDATION_FAILED");
        assert_eq!(session.fields(), ["registerId"], "{id}: {}", session.text);
    }
    assert_eq!(server.count_rows("stores").await, 1, "nothing was made");
    assert_eq!(server.count_rows("staff").await, 1);
    assert_eq!(server.count_rows("registers").await, 0);
    assert_eq!(server.count_rows("register_sessions").await, 0);

    // The ids the demo and the tests use still pass, up to 64 characters.
    let longest = "y".repeat(64);
    for id in ["paris-marais", "lyon-presqu-ile", "s.1", "magasin_2", longest.as_str()] {
        let reply = server
            .put(&format!("/v1/stores/{id}"), &admin, json!({"name": "x"}))
            .await;
        assert_eq!(reply.status, 201, "{id}: {}", reply.text);
    }
    for id in ["till-1", "reg-0", "r1"] {
        let (session, _) = server.open_session("s1", id, "camille", "1234").await;
        let closed = server
            .post(&format!("/v1/register-sessions/{session}/close"), &admin, json!({}))
            .await;
        assert_eq!(closed.status, 200, "{}", closed.text);
    }

    // A store and a staff member made before the rule keep working under their ids.
    server
        .run_sql(
            "INSERT INTO stores (store_id, name, timezone, currency, siret, created_at, updated_at) \
             VALUES ('old store', 'Old', 'Europe/Paris', 'EUR', NULL, 0, 0)",
        )
        .await
        .unwrap();
    let old = server.get("/v1/stores/old%20store", &admin).await;
    assert_eq!(old.status, 200, "{}", old.text);
    let renamed = server
        .put("/v1/stores/old%20store", &admin, json!({"name": "Renamed"}))
        .await;
    assert_eq!(renamed.status, 200, "{}", renamed.text);
    assert_eq!(renamed.body["name"], "Renamed");
    server.stop().await;
}

/// Every address a page's links and forms lead to.
fn addresses(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    for marker in ["href=\"", "action=\""] {
        for (start, _) in html.match_indices(marker) {
            let value = &html[start + marker.len()..];
            found.push(value[..value.find('"').unwrap()].to_owned());
        }
    }
    found
}

/// A register made before the rule, whose id would re-target the console's forms if it were
/// written into an address as it is.
const HOSTILE: &str = "r 1/../../promotions/X/deactivate#";
const HOSTILE_ENCODED: &str = "r%201%2F..%2F..%2Fpromotions%2FX%2Fdeactivate%23";

async fn the_console_encodes_every_id_it_writes_into_an_address(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    server.provision_store("s1").await;
    server.provision_staff("camille", "cashier", "1234").await;
    let rule = json!({"id": "X", "type": "percent_off", "name": "Everything", "percentBps": 500,
        "validFrom": "2020-01-01T00:00:00Z", "validUntil": "2099-12-31T23:59:59Z"});
    assert_eq!(server.post("/v1/promotions", &admin, rule).await.status, 201);
    server
        .run_sql(&format!(
            "INSERT INTO registers (register_id, store_id, created_at) VALUES ('{HOSTILE}', 's1', 0)"
        ))
        .await
        .unwrap();
    // The register exists: its till still opens sessions under its id.
    let (session, _) = server.open_session("s1", HOSTILE, "camille", "1234").await;
    assert!(!session.is_empty());

    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let cookie = format!("till_console={admin}");
    let page = browser
        .get(format!("{}/console/registers?store=s1", server.base))
        .header(COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    let action = format!(r#"action="/console/registers/{HOSTILE_ENCODED}/verify""#);
    assert!(html.contains(&action), "{action} missing from {html}");
    for address in addresses(&html) {
        assert!(!address.ends_with("/deactivate"), "{address} in {html}");
        assert!(!address.contains(' ') && !address.contains('#'), "{address}");
    }

    // The button verifies that register's journal, and deactivates nothing.
    let marker = "name=\"csrf\" value=\"";
    let start = html.find(marker).expect("a form token") + marker.len();
    let csrf = &html[start..start + html[start..].find('"').unwrap()];
    let verified = browser
        .post(format!("{}/console/registers/{HOSTILE_ENCODED}/verify", server.base))
        .header(COOKIE, &cookie)
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(ORIGIN, server.base.clone())
        .body(format!("csrf={csrf}&store=s1"))
        .send()
        .await
        .unwrap();
    assert_eq!(verified.status(), StatusCode::OK);
    let verdict = verified.text().await.unwrap();
    assert!(
        verdict.contains("data-register=\"r 1/../../promotions/X/deactivate#\""),
        "{verdict}"
    );
    let rules = server.get("/v1/promotions", &admin).await;
    assert_eq!(rules.body["promotions"][0]["active"], true, "{}", rules.text);

    // The stock page's links carry the store's id encoded in their query too.
    server
        .run_sql(
            "INSERT INTO stores (store_id, name, timezone, currency, siret, created_at, updated_at) \
             VALUES ('a&store=b#c', 'Odd', 'Europe/Paris', 'EUR', NULL, 0, 0)",
        )
        .await
        .unwrap();
    let article = server.provision_sku("Mug", 1450, 20.0).await;
    let page = browser
        .get(format!("{}/console/stock?sku={article}", server.base))
        .header(COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(
        html.contains(&format!(
            "href=\"/console/stock?sku={article}&amp;store=a%26store%3Db%23c\""
        )),
        "{html}"
    );
    server.stop().await;
}
