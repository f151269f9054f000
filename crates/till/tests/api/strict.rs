//! Every input is read as strictly as the document describes it: path and query parameters pass
//! the checks body fields pass, a JSON body never holds a key twice, a field the server does not
//! keep is still type-checked, integral numbers count as integers however they are written, and
//! a refusal says what is wrong.

use crate::harness::{Engine, Reply, TestServer, sku};
use crate::harness::{Shop, line};
use crate::on_both_engines;
use reqwest::Method;
use serde_json::{Value, json};

const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);

/// Sends `text` as a JSON body, byte for byte.
async fn send_text(server: &TestServer, method: Method, path: &str, token: &str, text: &str) -> Reply {
    let text = text.to_owned();
    server
        .send(|http, base| {
            http.request(method, format!("{base}{path}"))
                .bearer_auth(token)
                .header("content-type", "application/json")
                .body(text)
        })
        .await
}

/// Every path parameter of every documented operation, one at a time holding a NUL byte, is
/// refused with a 400 naming it; before, PostgreSQL answered 500 where a route passed the raw
/// text on.
async fn every_path_parameter_is_checked_as_text(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    let mut checked = 0;
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let parameters = operation["parameters"].as_array().cloned().unwrap_or_default();
            let names: Vec<&str> = parameters
                .iter()
                .filter(|p| p["in"] == "path")
                .map(|p| p["name"].as_str().unwrap())
                .collect();
            for bad in &names {
                let concrete = names.iter().fold(path.clone(), |concrete, name| {
                    let value = if name == bad {
                        "a%00b".to_owned()
                    } else {
                        valid_value(name)
                    };
                    concrete.replace(&format!("{{{name}}}"), &value)
                });
                let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
                let body = (method != Method::GET).then(|| json!({}));
                let reply = server.call(method.clone(), &concrete, Some(&admin), body).await;
                reply.assert_error(400, "VALIDATION_FAILED");
                assert_eq!(reply.fields(), [*bad], "{method} {concrete}: {}", reply.text);
                checked += 1;
            }
        }
    }
    assert!(checked >= 25, "only {checked} path parameters were found");
    // The same checks as a body field: empty, too long, a control character.
    for (path, field) in [
        (format!("/v1/stores/{}", "x".repeat(256)), "storeId"),
        ("/v1/fiscal/archives/a%0Ab".to_owned(), "archiveId"),
        ("/v1/sales/%7F/returns".to_owned(), "transactionId"),
    ] {
        let reply = server.get(&path, &admin).await;
        reply.assert_error(400, "VALIDATION_FAILED");
        assert_eq!(reply.fields(), [field], "{path}");
    }
    server.stop().await;
}

/// A value each path parameter accepts.
fn valid_value(name: &str) -> String {
    match name {
        "skuId" => sku("anything"),
        "chain" => "ticket".to_owned(),
        _ => "x".to_owned(),
    }
}

async fn query_parameters_are_checked_as_text(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    let cases = [
        ("/v1/elevation-events?managerSubject=a%00b", "managerSubject"),
        ("/v1/elevation-events?registerId=a%00b", "registerId"),
        ("/v1/elevation-events?managerSubject=", "managerSubject"),
        ("/v1/elevation-events?registerId=%FF", "registerId"),
        (
            "/v1/elevation-events?managerSubject=a&managerSubject=b",
            "managerSubject",
        ),
        ("/v1/promotions?storeId=a%00b", "storeId"),
        ("/v1/promotions?active=yes", "active"),
    ];
    for (path, field) in cases {
        let reply = server.get(path, &admin).await;
        reply.assert_error(400, "VALIDATION_FAILED");
        assert_eq!(reply.fields(), [field], "{path}: {}", reply.text);
    }
    assert_eq!(
        server
            .get("/v1/elevation-events?managerSubject=mathis", &admin)
            .await
            .status,
        200
    );
    assert_eq!(
        server.get("/v1/promotions?storeId=s1&active=true", &admin).await.status,
        200
    );
    server.stop().await;
}

/// `limit` is refused out of 1 to 1000 rather than silently clamped.
async fn an_out_of_range_limit_is_refused(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    for limit in ["0", "-1", "1001", "1.5", "ten", "9007199254740992"] {
        let reply = server.get(&format!("/v1/elevation-events?limit={limit}"), &admin).await;
        reply.assert_error(400, "VALIDATION_FAILED");
        let errors = reply.field_errors();
        assert_eq!(errors.len(), 1, "{limit}: {}", reply.text);
        assert_eq!(errors[0].0, "limit");
        assert!(errors[0].1.contains("from 1 to 1000"), "{limit}: {}", errors[0].1);
    }
    for limit in ["1", "1000", "5.0"] {
        let reply = server.get(&format!("/v1/elevation-events?limit={limit}"), &admin).await;
        assert_eq!(reply.status, 200, "{limit}: {}", reply.text);
    }
    server.stop().await;
}

/// A key given twice is refused wherever it sits, so that nothing reading the first value can
/// disagree with what the server would have booked; nothing is written.
async fn a_repeated_key_is_refused_at_any_depth(engine: Engine) {
    let shop = Shop::open(engine).await;
    let sale = serde_json::to_string(&shop.sale("dup-2", vec![line("l1", MUG, 1)], 1450)).unwrap();
    let twice = sale.replacen("{", "{\"transactionId\":\"dup-1\",", 1);
    let reply = send_text(&shop.server, Method::POST, "/v1/checkout/finalize", &shop.till, &twice).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(reply.fields(), ["transactionId"], "{}", reply.text);
    assert!(reply.field_errors()[0].1.contains("more than once"), "{}", reply.text);

    let nested = sale.replacen("\"quantity\":1", "\"quantity\":1,\"quantity\":9", 1);
    assert_ne!(nested, sale);
    let reply = send_text(&shop.server, Method::POST, "/v1/checkout/finalize", &shop.till, &nested).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(reply.fields(), ["cart.lines.0.quantity"], "{}", reply.text);

    let admin = shop.server.admin();
    for id in ["dup-1", "dup-2"] {
        shop.server
            .get(&format!("/v1/sales/{id}"), &admin)
            .await
            .assert_error(404, "NOT_FOUND");
    }
    // The same sale written once is booked.
    let reply = send_text(&shop.server, Method::POST, "/v1/checkout/finalize", &shop.till, &sale).await;
    assert_eq!(reply.status, 201, "{}", reply.text);

    // Every body, not finalize's alone.
    let reply = send_text(
        &shop.server,
        Method::PUT,
        "/v1/stores/s2",
        &admin,
        r#"{"name":"a","name":"b"}"#,
    )
    .await;
    assert_eq!(reply.fields(), ["name"], "{}", reply.text);
    shop.server
        .get("/v1/stores/s2", &admin)
        .await
        .assert_error(404, "NOT_FOUND");
    shop.server.stop().await;
}

/// The body of a replace may carry the rule's id, which the path's replaces; it is still an
/// id, and anything else is refused.
async fn a_replaced_rules_body_id_is_type_checked(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    let rule = |id: Value| {
        json!({"id": id, "type": "percent_off", "name": "Basket", "percentBps": 500,
               "validFrom": "2020-01-01T00:00:00Z", "validUntil": "2099-12-31T23:59:59Z"})
    };
    assert_eq!(
        server.post("/v1/promotions", &admin, rule(json!("p1"))).await.status,
        201
    );
    for bad in [json!(-438075), json!(""), json!("a\u{0}b"), json!(["p1"])] {
        let reply = server.put("/v1/promotions/p1/rule", &admin, rule(bad.clone())).await;
        reply.assert_error(400, "VALIDATION_FAILED");
        assert_eq!(reply.fields(), ["id"], "{bad}: {}", reply.text);
    }
    // Absent, or another id: the path's wins.
    let mut without = rule(json!(null));
    without.as_object_mut().unwrap().remove("id");
    for body in [without, rule(json!("p2"))] {
        let reply = server.put("/v1/promotions/p1/rule", &admin, body).await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        assert_eq!(reply.body["id"], "p1");
    }
    server
        .get("/v1/promotions/p2/rule", &admin)
        .await
        .assert_error(404, "NOT_FOUND");
    server.stop().await;
}

/// `5.0` is the integer 5, as JSON Schema counts it, up to 2^53 - 1; a sale written either way
/// is the same sale.
async fn integral_numbers_written_with_a_zero_fraction_are_integers(engine: Engine) {
    let shop = Shop::open(engine).await;
    let admin = shop.server.admin();
    let path = format!("/v1/stores/s1/stock/{}", sku(MUG.0));
    let reply = send_text(
        &shop.server,
        Method::PUT,
        &path,
        &admin,
        r#"{"onHand": 2076629671779215.0}"#,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["onHand"], json!(2076629671779215_i64));
    let reply = send_text(
        &shop.server,
        Method::PUT,
        &path,
        &admin,
        r#"{"onHand": 9007199254740991.0}"#,
    )
    .await;
    assert_eq!(reply.body["onHand"], json!(9007199254740991_i64), "{}", reply.text);
    let reply = send_text(&shop.server, Method::PUT, &path, &admin, r#"{"onHand": 2.5}"#).await;
    assert_eq!(reply.fields(), ["onHand"]);

    let sale = shop.sale("t1", vec![line("l1", MUG, 1)], 1450);
    let written = serde_json::to_string(&sale)
        .unwrap()
        .replace("\"quantity\":1", "\"quantity\":1.0")
        .replace("\"amountDue\":1450", "\"amountDue\":1450.0");
    assert!(written.contains("1.0") && written.contains("1450.0"), "{written}");
    let first = send_text(
        &shop.server,
        Method::POST,
        "/v1/checkout/finalize",
        &shop.till,
        &written,
    )
    .await;
    assert_eq!(first.status, 201, "{}", first.text);
    let again = shop.finalize(&sale).await;
    assert_eq!(
        again.status, 201,
        "the same sale written with integers replays: {}",
        again.text
    );
    assert_eq!(again.headers.get("x-idempotent-replay").unwrap(), "true");
    assert_eq!(again.text, first.text);
    shop.server.stop().await;
}

/// An instant past the accepted years says so, with the range, instead of calling a real date
/// unreal.
async fn an_instant_out_of_range_says_what_is_wrong(engine: Engine) {
    let shop = Shop::open(engine).await;
    let mut sale = shop.sale("t1", vec![line("l1", MUG, 1)], 1450);
    sale["issuedAt"] = json!("9999-12-31T23:59:59Z");
    let reply = shop.finalize(&sale).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    let errors = reply.field_errors();
    assert_eq!(errors[0].0, "issuedAt");
    assert!(
        errors[0].1.contains("out of the accepted range") && errors[0].1.contains("9998"),
        "{}",
        errors[0].1
    );
    sale["issuedAt"] = json!("2026-02-30T10:00:00Z");
    let reply = shop.finalize(&sale).await;
    assert!(
        reply.field_errors()[0].1.contains("not a real calendar date"),
        "{}",
        reply.text
    );
    shop.server.stop().await;
}

/// A VAT rate is the number its two decimals write, as `multipleOf: 0.01` reads it; a time zone
/// is spelled as the database spells it; a PIN is text like any other.
async fn numbers_and_names_are_read_as_documented(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    let path = format!("/v1/catalog/skus/{}", sku("vat"));
    for (rate, accepted) in [
        (json!(0.07), true),
        (json!(5.5), true),
        (json!(0.30000000000000004), false),
        (json!(1e-300), false),
    ] {
        let reply = server
            .put(&path, &admin, json!({"name": "x", "priceCents": 100, "vatRate": rate}))
            .await;
        if accepted {
            assert!(reply.status == 200 || reply.status == 201, "{rate}: {}", reply.text);
        } else {
            assert_eq!(reply.fields(), ["vatRate"], "{rate}: {}", reply.text);
        }
    }
    let reply = server
        .put(
            "/v1/stores/s1",
            &admin,
            json!({"name": "x", "timezone": "europe/paris"}),
        )
        .await;
    assert_eq!(reply.fields(), ["timezone"], "{}", reply.text);
    assert_eq!(
        server
            .put(
                "/v1/stores/s1",
                &admin,
                json!({"name": "x", "timezone": "Europe/Paris"})
            )
            .await
            .status,
        201
    );
    server.provision_staff("camille", "cashier", "1234").await;
    let reply = server
        .post(
            "/v1/register-sessions",
            &admin,
            json!({"storeId": "s1", "registerId": "r1", "cashierSubject": "camille", "pin": "12\u{0}34"}),
        )
        .await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(reply.fields(), ["pin"]);
    server.stop().await;
}

on_both_engines!(
    every_path_parameter_is_checked_as_text,
    query_parameters_are_checked_as_text,
    an_out_of_range_limit_is_refused,
    a_repeated_key_is_refused_at_any_depth,
    a_replaced_rules_body_id_is_type_checked,
    integral_numbers_written_with_a_zero_fraction_are_integers,
    an_instant_out_of_range_says_what_is_wrong,
    numbers_and_names_are_read_as_documented,
);
