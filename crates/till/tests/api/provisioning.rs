//! The back office's routes: each one's validation, scope and happy path.

use crate::harness::{Engine, TestServer, sku};
use crate::on_both_engines;
use serde_json::{Value, json};

async fn stores_are_created_replaced_and_read(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    let body = json!({"name": "Marais", "timezone": "Europe/Paris", "currency": "EUR", "siret": "73282932000074"});
    let created = server.put("/v1/stores/paris-1", &admin, body).await;
    assert_eq!(created.status, 201, "{}", created.text);
    assert_eq!(created.body["storeId"], "paris-1");
    let replaced = server
        .put("/v1/stores/paris-1", &admin, json!({"name": "Marais bis"}))
        .await;
    assert_eq!(replaced.status, 200);
    // A full replace: absent optional fields fall back to their defaults.
    assert_eq!(replaced.body["timezone"], "Europe/Paris");
    assert_eq!(replaced.body["currency"], "EUR");
    assert!(replaced.body.get("siret").is_none(), "{}", replaced.text);
    let read = server
        .get("/v1/stores/paris-1", &server.token("bo", "pos.catalog.read"))
        .await;
    assert_eq!(read.body["name"], "Marais bis");
    server.stop().await;
}

async fn store_bodies_are_validated(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    let bad = json!({"name": "", "timezone": "Mars/Olympus", "currency": "euro", "siret": "123"});
    let reply = server.put("/v1/stores/paris-1", &admin, bad).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(reply.fields(), ["name", "timezone", "currency", "siret"]);
    server
        .put("/v1/stores/paris-1", &admin, json!({}))
        .await
        .assert_error(400, "VALIDATION_FAILED");
    let long = "x".repeat(256);
    let reply = server
        .put(&format!("/v1/stores/{long}"), &admin, json!({"name": "x"}))
        .await;
    assert_eq!(reply.fields(), ["storeId"]);
    let writer = server.token("bo", "pos.catalog.read");
    server
        .put("/v1/stores/paris-1", &writer, json!({"name": "x"}))
        .await
        .assert_error(403, "FORBIDDEN");
    server
        .get("/v1/stores/paris-1", &admin)
        .await
        .assert_error(404, "NOT_FOUND");
    server.stop().await;
}

/// A French company's identity: SIREN 732829320, its VAT number, a SIRET of it.
fn identified(name: &str) -> Value {
    json!({"name": name, "siret": "73282932000074", "legalName": "Till Épicerie SAS",
           "address": {"line1": "12 rue des Archives", "line2": "Bâtiment B", "postalCode": "75004",
                       "city": "Paris", "country": "FR"},
           "siren": "732829320", "vatNumber": "FR44732829320"})
}

async fn a_store_keeps_the_sellers_identity_its_receipts_print(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    let created = server.put("/v1/stores/paris-1", &admin, identified("Marais")).await;
    assert_eq!(created.status, 201, "{}", created.text);
    let read = server.get("/v1/stores/paris-1", &admin).await;
    for field in ["legalName", "address", "siren", "vatNumber", "siret"] {
        assert_eq!(read.body[field], identified("Marais")[field], "{field}: {}", read.text);
    }
    assert_eq!(read.body, created.body);
    // Abroad: a Belgian address and VAT number, no SIREN.
    let brussels = json!({"name": "Bruxelles", "legalName": "Till Belgique SRL",
        "address": {"line1": "Rue Neuve 1", "postalCode": "1000", "city": "Bruxelles", "country": "BE"},
        "vatNumber": "BE0123456749"});
    let created = server.put("/v1/stores/brussels-1", &admin, brussels).await;
    assert_eq!(created.status, 201, "{}", created.text);
    assert!(created.body.get("siren").is_none());
    assert!(created.body["address"].get("line2").is_none());
    // A full replace without it: the identity goes, as every optional field does.
    let bare = server
        .put("/v1/stores/paris-1", &admin, json!({"name": "Marais"}))
        .await;
    assert_eq!(bare.status, 200, "{}", bare.text);
    for field in ["legalName", "address", "siren", "vatNumber"] {
        assert!(bare.body.get(field).is_none(), "{field}: {}", bare.text);
    }
    server.stop().await;
}

async fn a_sellers_identity_is_checked_field_by_field_and_refused_whole(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    assert_eq!(
        server
            .put("/v1/stores/paris-1", &admin, identified("Marais"))
            .await
            .status,
        201
    );
    let kept = server.get("/v1/stores/paris-1", &admin).await.body;
    let with = |pointer: &str, value: Value| {
        let mut body = identified("Changed");
        *body.pointer_mut(pointer).unwrap() = value;
        body
    };
    for (body, field, words) in [
        (with("/siren", json!("732829321")), "siren", "check digit"),
        (with("/siren", json!("73282932")), "siren", "9 digits"),
        (with("/vatNumber", json!("FR45732829320")), "vatNumber", "key"),
        (with("/vatNumber", json!("FR40303265045")), "vatNumber", "SIREN given"),
        (with("/vatNumber", json!("US732829320")), "vatNumber", "prefix"),
        (with("/siret", json!("30326504500014")), "siret", "SIREN given"),
        (with("/legalName", json!("   ")), "legalName", "empty"),
        (
            with("/address/postalCode", json!("7500")),
            "address.postalCode",
            "5 digits",
        ),
        (with("/address/country", json!("XX")), "address.country", "ISO 3166"),
        (
            with("/address/line1", json!("12 rue\ndes Archives")),
            "address.line1",
            "control",
        ),
        (
            with(
                "/address",
                json!({"postalCode": "75004", "city": "Paris", "country": "FR"}),
            ),
            "address.line1",
            "required",
        ),
    ] {
        let refused = server.put("/v1/stores/paris-1", &admin, body).await;
        refused.assert_error(400, "VALIDATION_FAILED");
        assert_eq!(refused.fields(), [field], "{}", refused.text);
        assert!(refused.text.contains(words), "{words}: {}", refused.text);
        assert_eq!(
            server.get("/v1/stores/paris-1", &admin).await.body,
            kept,
            "nothing changed"
        );
    }
    server.stop().await;
}

async fn catalog_items_are_priced_with_french_vat_rates(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    for (name, rate) in [
        ("Livre", json!(5.5)),
        ("Journal", json!(2.1)),
        ("Mug", json!(20)),
        ("Sandwich", json!(10)),
    ] {
        let id = sku(name);
        let reply = server
            .put(
                &format!("/v1/catalog/skus/{id}"),
                &admin,
                json!({"name": name, "priceCents": 995, "vatRate": rate}),
            )
            .await;
        assert_eq!(reply.status, 201, "{}", reply.text);
        let read = server
            .get(
                &format!("/v1/catalog/skus/{id}"),
                &server.token("t", "pos.catalog.read"),
            )
            .await;
        assert_eq!(read.body["vatRate"], rate);
        assert_eq!(read.body["priceCents"], 995);
    }
    let id = sku("Livre");
    let reply = server
        .put(
            &format!("/v1/catalog/skus/{id}"),
            &admin,
            json!({"name": "Livre", "priceCents": 1000, "vatRate": 5.555}),
        )
        .await;
    assert_eq!(reply.fields(), ["vatRate"]);
    let reply = server
        .put(
            &format!("/v1/catalog/skus/{id}"),
            &admin,
            json!({"name": "Livre", "priceCents": -1, "vatRate": 5.5}),
        )
        .await;
    assert_eq!(reply.fields(), ["priceCents"]);
    let reply = server
        .put(
            &format!("/v1/catalog/skus/{}", id.to_uppercase()),
            &admin,
            json!({"name": "Livre", "priceCents": 1, "vatRate": 5.5}),
        )
        .await;
    assert_eq!(reply.fields(), ["skuId"]);
    server
        .put(
            &format!("/v1/catalog/skus/{id}"),
            &server.token("t", "pos.catalog.read"),
            json!({}),
        )
        .await
        .assert_error(403, "FORBIDDEN");
    server.stop().await;
}

async fn a_catalog_of_ten_thousand_articles_imports_in_one_request(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    let skus: Vec<Value> = (0..10_000)
        .map(|i| json!({"skuId": sku(&format!("article {i}")), "name": format!("Article {i}"), "priceCents": 100 + i, "vatRate": 20}))
        .collect();
    let reply = server.post("/v1/catalog/import", &admin, json!({"skus": skus})).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body, json!({"created": 10_000, "updated": 0}));
    let read = server
        .get(&format!("/v1/catalog/skus/{}", sku("article 9999")), &admin)
        .await;
    assert_eq!(read.body["priceCents"], 10_099);
    // Importing again replaces.
    let again: Vec<Value> = (0..3)
        .map(|i| json!({"skuId": sku(&format!("article {i}")), "name": "Renamed", "priceCents": 1, "vatRate": 5.5}))
        .collect();
    let reply = server.post("/v1/catalog/import", &admin, json!({"skus": again})).await;
    assert_eq!(reply.body, json!({"created": 0, "updated": 3}));
    server.stop().await;
}

async fn an_invalid_import_writes_nothing(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    let a = sku("a");
    let skus = json!([
        {"skuId": a, "name": "A", "priceCents": 100, "vatRate": 20},
        {"skuId": sku("b"), "name": "", "priceCents": 100, "vatRate": 20},
        {"skuId": a, "name": "A again", "priceCents": 100, "vatRate": 20},
        {"skuId": "short", "name": "C", "priceCents": 100, "vatRate": 20},
    ]);
    let reply = server.post("/v1/catalog/import", &admin, json!({"skus": skus})).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(reply.fields(), ["skus.1.name", "skus.2.skuId", "skus.3.skuId"]);
    server
        .get(&format!("/v1/catalog/skus/{a}"), &admin)
        .await
        .assert_error(404, "NOT_FOUND");
    server
        .post("/v1/catalog/import", &admin, json!({"skus": "none"}))
        .await
        .assert_error(400, "VALIDATION_FAILED");
    server.stop().await;
}

async fn stock_is_counted_per_store_and_article(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    server.provision_store("s1").await;
    let mug = server.provision_sku("Mug", 1450, 20.0).await;
    let path = format!("/v1/stores/s1/stock/{mug}");
    let reader = server.token("t", "pos.stock.read");
    assert_eq!(
        server.get(&path, &reader).await.body,
        json!({"storeId": "s1", "skuId": mug, "onHand": 0})
    );
    let reply = server.put(&path, &admin, json!({"onHand": 12})).await;
    assert_eq!(reply.body, json!({"storeId": "s1", "skuId": mug, "onHand": 12}));
    assert_eq!(
        server.put(&path, &admin, json!({"onHand": -3})).await.body["onHand"],
        -3
    );
    assert_eq!(server.get(&path, &reader).await.body["onHand"], -3);
    server
        .put(&path, &admin, json!({"onHand": 1.5}))
        .await
        .assert_error(400, "VALIDATION_FAILED");
    server
        .put(&path, &reader, json!({"onHand": 1}))
        .await
        .assert_error(403, "FORBIDDEN");
    server
        .put(&format!("/v1/stores/nowhere/stock/{mug}"), &admin, json!({"onHand": 1}))
        .await
        .assert_error(404, "NOT_FOUND");
    server
        .put(
            &format!("/v1/stores/s1/stock/{}", sku("unknown")),
            &admin,
            json!({"onHand": 1}),
        )
        .await
        .assert_error(404, "NOT_FOUND");
    server
        .get(&format!("/v1/stores/nowhere/stock/{mug}"), &reader)
        .await
        .assert_error(404, "NOT_FOUND");
    server.stop().await;
}

async fn staff_members_have_roles_pins_and_limits(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    let body = json!({"displayName": "Mathis", "role": "manager", "pin": "9876",
                      "permissions": ["pos.promotions.write"], "discountLimit": {"percentBps": 3000, "amountCents": 5000}});
    let reply = server.put("/v1/staff/mathis", &admin, body).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    // Neither the PIN nor its hash is echoed. (A timestamp may well contain the digits 9876,
    // so values are compared whole rather than searched in the text.)
    assert!(reply.body.get("pin").is_none() && !reply.text.contains("argon2"));
    assert!(
        !json_strings(&reply.body).iter().any(|value| value == "9876"),
        "{}",
        reply.text
    );
    assert_eq!(reply.body["permissions"], json!(["pos.promotions.write"]));
    let scopes = reply.body["scopes"].as_array().unwrap();
    assert!(scopes.contains(&json!("price:override")) && scopes.contains(&json!("pos.sales.finalize")));
    assert_eq!(
        reply.body["discountLimit"],
        json!({"percentBps": 3000, "amountCents": 5000})
    );
    let first_sync = reply.str("grantsSyncedAt");
    server.clock.advance(std::time::Duration::from_secs(60));
    // Without a PIN, an update keeps the current one.
    let reply = server
        .put(
            "/v1/staff/mathis",
            &admin,
            json!({"displayName": "Mathis B.", "role": "cashier"}),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(reply.body.get("discountLimit").is_none());
    assert!(
        reply.str("grantsSyncedAt") > first_sync,
        "grantsSyncedAt moves on each write"
    );
    server.provision_store("s1").await;
    server.open_session("s1", "r1", "mathis", "9876").await;
    let read = server
        .get("/v1/staff/mathis", &server.token("t", "pos.staff.read"))
        .await;
    assert_eq!(read.body["role"], "cashier");
    server.stop().await;
}

async fn staff_bodies_are_validated(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    let reply = server
        .put("/v1/staff/x", &admin, json!({"displayName": "X", "role": "cashier"}))
        .await;
    assert_eq!(reply.fields(), ["pin"], "a new member needs a PIN");
    let bad = json!({"displayName": "", "role": "owner", "pin": "12",
                     "permissions": ["pos.sales.read", "pos.root"], "discountLimit": {"percentBps": 10001}});
    let reply = server.put("/v1/staff/x", &admin, bad).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(
        reply.fields(),
        [
            "displayName",
            "role",
            "pin",
            "permissions.1",
            "discountLimit.percentBps",
            "discountLimit.amountCents"
        ]
    );
    for pin in [json!("123"), json!("1234567890123"), json!("12a4"), json!(1234)] {
        let reply = server
            .put(
                "/v1/staff/x",
                &admin,
                json!({"displayName": "X", "role": "cashier", "pin": pin}),
            )
            .await;
        assert_eq!(reply.fields(), ["pin"], "{pin}");
    }
    server
        .put("/v1/staff/x", &server.token("t", "pos.staff.read"), json!({}))
        .await
        .assert_error(403, "FORBIDDEN");
    server.get("/v1/staff/x", &admin).await.assert_error(404, "NOT_FOUND");
    server.stop().await;
}

async fn coupons_hold_exactly_one_reward_and_a_valid_window(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    let body = json!({"percentBps": 1000, "minBasketCents": 2000, "validFrom": "2026-01-01T00:00:00+01:00",
                      "validUntil": "2026-12-31T23:59Z", "maxRedemptions": 100});
    let reply = server.put("/v1/coupons/BIENVENUE10", &admin, body).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(reply.body["validFrom"], "2025-12-31T23:00:00Z");
    assert_eq!(reply.body["validUntil"], "2026-12-31T23:59:00Z");
    assert_eq!(reply.body["redemptions"], 0);
    assert_eq!(reply.body["active"], true);
    let read = server
        .get("/v1/coupons/BIENVENUE10", &server.token("t", "pos.promotions.read"))
        .await;
    assert_eq!(read.body["percentBps"], 1000);
    let both = server
        .put("/v1/coupons/X", &admin, json!({"percentBps": 10, "amountCents": 10}))
        .await;
    assert_eq!(both.fields(), ["amountCents"]);
    let neither = server.put("/v1/coupons/X", &admin, json!({"active": true})).await;
    assert_eq!(neither.fields(), ["percentBps"]);
    let window = server
        .put(
            "/v1/coupons/X",
            &admin,
            json!({"amountCents": 500, "validFrom": "2026-06-01T00:00:00Z", "validUntil": "2026-05-01T00:00:00Z"}),
        )
        .await;
    assert_eq!(window.fields(), ["validUntil"]);
    let ranges = server
        .put(
            "/v1/coupons/X",
            &admin,
            json!({"percentBps": 0, "maxRedemptions": 0, "validFrom": "2026-02-30T00:00:00Z"}),
        )
        .await;
    assert_eq!(ranges.fields(), ["percentBps", "validFrom", "maxRedemptions"]);
    server
        .put(
            "/v1/coupons/X",
            &server.token("t", "pos.promotions.read"),
            json!({"percentBps": 10}),
        )
        .await
        .assert_error(403, "FORBIDDEN");
    server.get("/v1/coupons/X", &admin).await.assert_error(404, "NOT_FOUND");
    server.stop().await;
}

async fn loyalty_of_an_unknown_customer_is_not_found(engine: Engine) {
    let server = TestServer::start(engine).await;
    server
        .get("/v1/customers/c-1/loyalty", &server.token("t", "pos.customers.read"))
        .await
        .assert_error(404, "NOT_FOUND");
    server
        .get("/v1/customers/c-1/loyalty", &server.token("t", "pos.sales.read"))
        .await
        .assert_error(403, "FORBIDDEN");
    server.stop().await;
}

on_both_engines!(
    stores_are_created_replaced_and_read,
    store_bodies_are_validated,
    a_store_keeps_the_sellers_identity_its_receipts_print,
    a_sellers_identity_is_checked_field_by_field_and_refused_whole,
    catalog_items_are_priced_with_french_vat_rates,
    a_catalog_of_ten_thousand_articles_imports_in_one_request,
    an_invalid_import_writes_nothing,
    stock_is_counted_per_store_and_article,
    staff_members_have_roles_pins_and_limits,
    staff_bodies_are_validated,
    coupons_hold_exactly_one_reward_and_a_valid_window,
    loyalty_of_an_unknown_customer_is_not_found,
);

/// Every string value in `value`, at any depth.
fn json_strings(value: &serde_json::Value) -> Vec<String> {
    match value {
        serde_json::Value::String(text) => vec![text.clone()],
        serde_json::Value::Array(items) => items.iter().flat_map(json_strings).collect(),
        serde_json::Value::Object(map) => map.values().flat_map(json_strings).collect(),
        _ => Vec::new(),
    }
}
