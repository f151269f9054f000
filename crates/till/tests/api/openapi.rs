//! The OpenAPI document: committed, free of drift, and true to the routes it describes.

use crate::harness::{Engine, TestServer};
use crate::on_both_engines;
use reqwest::Method;
use serde_json::Value;
use std::path::PathBuf;

fn committed_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json")
}

/// Fails when the committed document differs from the code. `TILL_BLESS=1` rewrites it.
#[test]
fn the_committed_document_matches_the_code() {
    let generated = till_api::openapi::document_json();
    let path = committed_path();
    if std::env::var_os("TILL_BLESS").is_some() {
        std::fs::write(&path, generated).expect("write docs/openapi.json");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/openapi.json is stale; regenerate it with TILL_BLESS=1 cargo test -p till --test api the_committed_document"
    );
}

fn operations(document: &Value) -> Vec<(String, String, &Value)> {
    let mut found = Vec::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            if ["get", "put", "post", "delete", "patch"].contains(&method.as_str()) {
                found.push((method.to_uppercase(), path.clone(), operation));
            }
        }
    }
    found
}

#[test]
fn every_operation_declares_its_scopes_tier_and_description() {
    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    assert_eq!(document["openapi"], "3.1.0");
    let tiers = ["allow", "confirm", "avoid", "human"];
    for (method, path, operation) in operations(&document) {
        let id = operation["operationId"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} {path} has no operationId"));
        assert!(operation["x-pos-scopes"].is_array(), "{id} x-pos-scopes");
        assert!(
            tiers.contains(&operation["x-agent-tier"].as_str().unwrap_or("")),
            "{id} x-agent-tier"
        );
        let description = operation["description"].as_str().unwrap_or("");
        assert!(description.len() > 20, "{id} needs an agent-facing description");
        assert!(operation["security"].is_array(), "{id} security");
        // A POST that writes nothing (the pricing dry run) may be tier allow; no other may.
        if method != "GET" && id != "priceCart" {
            assert_ne!(
                operation["x-agent-tier"], "allow",
                "{id} writes, so it cannot be tier allow"
            );
        }
    }
}

/// Every operation that declares scopes refuses an anonymous caller with 401: no route was
/// left without its guard.
async fn every_guarded_operation_refuses_anonymous_callers(engine: Engine) {
    let server = TestServer::start(engine).await;
    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    for (method, path, operation) in operations(&document) {
        let scopes = operation["x-pos-scopes"].as_array().unwrap();
        let concrete = path
            .split('/')
            .map(|segment| {
                if segment.starts_with('{') {
                    "0000000000000000000000000000000000000000000000000000000000000001"
                } else {
                    segment
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let body = (method != Method::GET).then(|| serde_json::json!({}));
        let reply = server.call(method.clone(), &concrete, None, body).await;
        if scopes.is_empty() {
            assert!(
                reply.status < 400 || reply.status == 503,
                "{method} {path} is public but answered {}",
                reply.status
            );
        } else {
            reply.assert_error(401, "UNAUTHORIZED");
        }
    }
    server.stop().await;
}

on_both_engines!(every_guarded_operation_refuses_anonymous_callers);
