//! Every failure, including the framework's own rejections, arrives as the error envelope with
//! JSON content, never as plain text or internal detail.

use crate::harness::{Engine, TestServer};
use crate::on_both_engines;
use serde_json::json;

async fn malformed_bodies_are_validation_failures_on_body(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    let path = format!("{}/v1/stores/s1", server.base);
    let cases: Vec<(&str, Option<&str>, &str)> = vec![
        ("{\"name\": ", Some("application/json"), "is not valid JSON"),
        ("not json at all", Some("application/json"), "is not valid JSON"),
        ("", Some("application/json"), "is empty"),
        (
            "{\"name\": \"x\"}",
            Some("text/plain"),
            "Content-Type: application/json",
        ),
        ("{\"name\": \"x\"}", None, "Content-Type: application/json"),
        ("[1, 2]", Some("application/json"), "must be a JSON object"),
        ("\"a string\"", Some("application/json"), "must be a JSON object"),
    ];
    for (body, content_type, says) in cases {
        let reply = server
            .send(|http, _| {
                let request = http.put(&path).bearer_auth(&admin).body(body.to_owned());
                match content_type {
                    Some(value) => request.header("content-type", value),
                    None => request,
                }
            })
            .await;
        reply.assert_error(400, "VALIDATION_FAILED");
        let errors = reply.field_errors();
        assert_eq!(errors.len(), 1, "{}", reply.text);
        assert_eq!(errors[0].0, "body");
        assert!(errors[0].1.contains(says), "{body:?} gave {}", reply.text);
    }
    // Nothing was written by any of them.
    server.get("/v1/stores/s1", &admin).await.assert_error(404, "NOT_FOUND");
    server.stop().await;
}

async fn wrong_types_and_ranges_name_their_fields(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    let sku = crate::harness::sku("x");
    let body = json!({"name": 42, "priceCents": 9007199254740992u64, "vatRate": "20"});
    let reply = server.put(&format!("/v1/catalog/skus/{sku}"), &admin, body).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(reply.fields(), ["name", "priceCents", "vatRate"]);
    let reply = server
        .put(
            &format!("/v1/catalog/skus/{sku}"),
            &admin,
            json!({"priceCents": 1.5, "vatRate": 250}),
        )
        .await;
    assert_eq!(reply.fields(), ["name", "priceCents", "vatRate"]);
    server
        .get(&format!("/v1/catalog/skus/{sku}"), &admin)
        .await
        .assert_error(404, "NOT_FOUND");
    server.stop().await;
}

async fn unknown_routes_and_methods_answer_in_the_envelope(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    server
        .get("/v1/nothing-here", &admin)
        .await
        .assert_error(404, "NOT_FOUND");
    server.get("/", &admin).await.assert_error(404, "NOT_FOUND");
    let reply = server
        .call(reqwest::Method::DELETE, "/v1/stores/s1", Some(&admin), None)
        .await;
    reply.assert_error(405, "METHOD_NOT_ALLOWED");
    let allow = reply.headers.get("allow").and_then(|v| v.to_str().ok()).unwrap_or("");
    assert!(allow.contains("PUT") && allow.contains("GET"), "Allow: {allow}");
    let reply = server.call(reqwest::Method::POST, "/healthz", None, None).await;
    reply.assert_error(405, "METHOD_NOT_ALLOWED");
    server.stop().await;
}

async fn oversized_bodies_are_refused_with_413(engine: Engine) {
    let server = TestServer::start_with(engine, |config| config.max_body_bytes = 1024).await;
    let admin = server.admin();
    let big = json!({"name": "x".repeat(2_000)});
    let reply = server.put("/v1/stores/s1", &admin, big).await;
    reply.assert_error(413, "PAYLOAD_TOO_LARGE");
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("1024 bytes"),
        "{}",
        reply.body
    );
    // Under the limit the same route works.
    assert_eq!(
        server.put("/v1/stores/s1", &admin, json!({"name": "x"})).await.status,
        201
    );
    server.stop().await;
}

async fn undecodable_path_parameters_are_validation_failures(engine: Engine) {
    let server = TestServer::start(engine).await;
    let reply = server.get("/v1/stores/%FF%FE", &server.admin()).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    let reply = server.get("/v1/catalog/skus/NOT-HEX", &server.admin()).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(reply.fields(), ["skuId"]);
    server.stop().await;
}

async fn responses_carry_a_request_id(engine: Engine) {
    let server = TestServer::start(engine).await;
    let reply = server.get("/v1/nothing", &server.admin()).await;
    let id = reply
        .headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    assert!(id.starts_with("req_"), "x-request-id {id}");
    let echoed = server
        .send(|http, base| http.get(format!("{base}/healthz")).header("x-request-id", "till-42"))
        .await;
    assert_eq!(echoed.headers.get("x-request-id").unwrap(), "till-42");
    server.stop().await;
}

/// A request id a caller chose is taken only if it is 1 to 64 letters, digits, `.`, `_` or
/// `-`: anything else (which a text log would show as it is) is replaced by one of till's.
async fn unfit_request_ids_are_replaced(engine: Engine) {
    let server = TestServer::start(engine).await;
    let fit = format!("{}.9_z-", "a".repeat(59));
    let echoed = server
        .send(|http, base| http.get(format!("{base}/healthz")).header("x-request-id", fit.as_str()))
        .await;
    assert_eq!(echoed.headers["x-request-id"], fit.as_str());
    let too_long = "a".repeat(65);
    let unfit: [&[u8]; 7] = [
        too_long.as_bytes(),
        b"two words",
        b"req_1 method=GET status=200",
        b"quote\"d",
        b"tab\tin",
        b"semi;colon",
        "caf\u{e9}".as_bytes(),
    ];
    for sent in unfit {
        let value = reqwest::header::HeaderValue::from_bytes(sent).unwrap();
        let reply = server
            .send(|http, base| http.get(format!("{base}/v1/nothing")).header("x-request-id", value))
            .await;
        reply.assert_error(404, "NOT_FOUND");
        let id = reply.headers["x-request-id"].to_str().unwrap();
        assert!(id.starts_with("req_"), "{sent:?} answered {id}");
    }
    server.stop().await;
}

on_both_engines!(
    malformed_bodies_are_validation_failures_on_body,
    unfit_request_ids_are_replaced,
    wrong_types_and_ranges_name_their_fields,
    unknown_routes_and_methods_answer_in_the_envelope,
    oversized_bodies_are_refused_with_413,
    undecodable_path_parameters_are_validation_failures,
    responses_carry_a_request_id,
);
