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
        "docs/openapi.json is stale; regenerate it with TILL_BLESS=1 cargo test -p till --test api the_committed_document, \
         then the TypeScript types with (cd clients/typescript && npm ci && npm run generate)"
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
        // A POST that writes nothing (the pricing dry run) may be tier allow, and so may the
        // MCP endpoint, whose tools keep their own tiers; no other may.
        if method != "GET" && id != "priceCart" && id != "sendMcpMessage" {
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
            // A public operation serves anyone: at most, a resource its path names is not found
            // (the placeholder id names none).
            let found_or_not = reply.status < 400 || (reply.status == 404 && path.contains('{'));
            assert!(
                found_or_not || reply.status == 503,
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

fn schemas(document: &Value) -> &serde_json::Map<String, Value> {
    document["components"]["schemas"]
        .as_object()
        .expect("component schemas")
}

/// The schema a `$ref` names, or the schema itself.
fn resolve<'a>(document: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(reference) => &schemas(document)[reference.trim_start_matches("#/components/schemas/")],
        None => schema,
    }
}

fn operation<'a>(document: &'a Value, id: &str) -> &'a Value {
    operations(document)
        .into_iter()
        .find(|(_, _, op)| op["operationId"] == id)
        .map(|(_, _, op)| op)
        .unwrap_or_else(|| panic!("no operation {id}"))
}

/// Every operation says what the transport and the server may answer besides its own, in the
/// error envelope: 413, 414, 431, 500, 503, and 408 where it reads a body.
#[test]
fn every_operation_documents_the_refusals_every_request_may_meet() {
    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    for (method, path, operation) in operations(&document) {
        let mut statuses = vec!["413", "414", "431", "500", "503"];
        if operation.get("requestBody").is_some() {
            statuses.push("408");
        }
        for status in statuses {
            let response = &operation["responses"][status];
            assert_eq!(
                response["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/ErrorEnvelope",
                "{method} {path} documents no {status}"
            );
        }
    }
    let code = &schemas(&document)["ErrorBody"]["properties"]["code"]["description"];
    for name in [
        "METHOD_NOT_ALLOWED",
        "REQUEST_TIMEOUT",
        "PRECONDITION_FAILED",
        "PAYLOAD_TOO_LARGE",
        "URI_TOO_LONG",
        "HEADERS_TOO_LARGE",
        "SERVICE_UNAVAILABLE",
    ] {
        assert!(
            code.as_str().unwrap_or("").contains(name),
            "ErrorBody.code does not list {name}"
        );
    }
}

/// Every path and query parameter is documented with the rules its extractor applies: the text
/// rules, or a narrower pattern, enumeration or type.
#[test]
fn every_parameter_is_documented_as_strictly_as_it_is_read() {
    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    for (method, path, operation) in operations(&document) {
        for parameter in operation["parameters"].as_array().into_iter().flatten() {
            if parameter["in"] == "header" {
                continue;
            }
            let schema = resolve(&document, &parameter["schema"]);
            let name = &parameter["name"];
            let typed = ["integer", "boolean"].contains(&schema["type"].as_str().unwrap_or(""));
            assert!(
                schema.get("pattern").is_some() || schema.get("enum").is_some() || typed,
                "{method} {path}: parameter {name} is documented as any text: {schema}"
            );
            if schema["type"] == "integer" {
                assert!(
                    schema.get("minimum").is_some() && schema.get("maximum").is_some(),
                    "{name}"
                );
            }
        }
    }
    let limit = operation(&document, "listElevationEvents")["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "limit")
        .unwrap()["schema"]
        .clone();
    assert_eq!(
        (limit["minimum"].clone(), limit["maximum"].clone()),
        (serde_json::json!(1), serde_json::json!(1000))
    );
}

/// What the interface document requires is required here too, and what is optional is not
/// documented as required or the reverse.
#[test]
fn required_and_nullable_fields_are_documented_as_the_server_reads_them() {
    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    let all = schemas(&document);
    let required = |schema: &str| -> Vec<String> {
        all[schema]["required"]
            .as_array()
            .unwrap_or_else(|| panic!("{schema} has no required list"))
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    let sale = required("SaleRequestBody");
    for field in [
        "transactionId",
        "number",
        "storeId",
        "sellerId",
        "customerId",
        "sessionId",
        "cart",
        "tenders",
    ] {
        assert!(sale.contains(&field.to_owned()), "SaleRequestBody must require {field}");
    }
    assert!(required("CartLineBody").contains(&"skuId".to_owned()));
    for (schema, field) in [("SaleRequestBody", "customerId"), ("CartLineBody", "skuId")] {
        let property = all[schema]["properties"][field].to_string();
        assert!(
            property.contains("\"null\""),
            "{schema}.{field} may be null: {property}"
        );
    }
    for variant in ["BogoRule", "BundleRule", "PercentOffRule"] {
        assert!(
            required(variant).contains(&"id".to_owned()),
            "the upsert requires {variant}.id"
        );
        assert!(
            !all[variant]["properties"]["id"].to_string().contains("null"),
            "{variant}.id is not nullable"
        );
        assert!(!required(&format!("{variant}Replacement")).contains(&"id".to_owned()));
    }
    let grant = required("GrantRequestByAmount");
    for field in ["managerSubject", "pin", "operation", "amountCents"] {
        assert!(
            grant.contains(&field.to_owned()),
            "GrantRequestByAmount must require {field}"
        );
    }
    assert_eq!(
        operation(&document, "replacePromotionRule")["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/PromotionRuleReplacement"
    );
}

/// Client generators read the promotion union: a discriminator on `type` mapping each value to
/// a named shape that carries its own single-valued `type`.
#[test]
fn promotion_rules_are_a_discriminated_union_of_named_shapes() {
    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    for (union, suffix) in [("PromotionRule", ""), ("PromotionRuleReplacement", "Replacement")] {
        let schema = &schemas(&document)[union];
        assert_eq!(schema["discriminator"]["propertyName"], "type", "{union}");
        for (value, shape) in [
            ("bogo", "BogoRule"),
            ("bundle", "BundleRule"),
            ("percent_off", "PercentOffRule"),
        ] {
            let name = format!("{shape}{suffix}");
            let reference = format!("#/components/schemas/{name}");
            assert_eq!(schema["discriminator"]["mapping"][value], reference, "{union}");
            assert!(
                schema["oneOf"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|item| item["$ref"] == reference)
            );
            let variant = &schemas(&document)[&name];
            assert_eq!(
                variant["properties"]["type"]["enum"],
                serde_json::json!([value]),
                "{name}"
            );
            assert!(
                variant["required"]
                    .as_array()
                    .unwrap()
                    .contains(&serde_json::json!("type"))
            );
        }
    }
}

/// The receipt says what it may answer: text or HTML, a print with its number, a receipt shown
/// with the number of prints made.
#[test]
fn the_receipt_documents_both_renderings_and_its_print_number() {
    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    let receipt = operation(&document, "printReceipt");
    for status in ["201", "200"] {
        let printed = &receipt["responses"][status];
        assert!(printed["content"].get("text/plain").is_some() && printed["content"].get("text/html").is_some());
        assert!(printed["headers"].get("x-till-print").is_some());
    }
    let shown = &operation(&document, "getReceipt")["responses"]["200"];
    assert!(shown["content"].get("text/plain").is_some() && shown["content"].get("text/html").is_some());
    assert!(shown["headers"].get("x-till-prints").is_some());
    let format = receipt["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "format")
        .unwrap();
    let format = resolve(&document, &format["schema"]).to_string();
    assert!(format.contains("\"text\"") && format.contains("\"html\""), "{format}");
}

/// The stateful links: a write leads to its read, a rule to its replace, a session to a sale.
#[test]
fn links_lead_from_a_resource_to_its_next_calls() {
    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    let ids: Vec<String> = operations(&document)
        .iter()
        .map(|(_, _, op)| op["operationId"].as_str().unwrap().to_owned())
        .collect();
    for (from, status, to) in [
        ("putStore", "201", "getStore"),
        ("upsertPromotion", "201", "getPromotionRule"),
        ("upsertPromotion", "201", "replacePromotionRule"),
        ("openRegisterSession", "201", "finalizeSale"),
        ("finalizeSale", "201", "getSale"),
    ] {
        let links = &operation(&document, from)["responses"][status]["links"];
        assert!(
            links
                .as_object()
                .is_some_and(|links| links.values().any(|link| link["operationId"] == to)),
            "no link from {from} {status} to {to}"
        );
    }
    for (_, _, op) in operations(&document) {
        for response in op["responses"].as_object().unwrap().values() {
            for link in response["links"].as_object().into_iter().flatten().map(|(_, l)| l) {
                assert!(
                    ids.contains(&link["operationId"].as_str().unwrap().to_owned()),
                    "{link}"
                );
            }
        }
    }
}

/// The patterns the document gives for text and instants accept exactly what the parsers
/// accept, read by a JSON Schema validator as a client would.
#[test]
fn the_documented_patterns_accept_what_the_parsers_accept() {
    use till_core::instant::{Zone, parse_instant};
    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    let validator = |name: &str| {
        let schema = schemas(&document)[name].clone();
        jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let (utc, offset, text) = (validator("UtcInstant"), validator("Instant"), validator("Text"));
    let instants = [
        "2026-03-01T09:30:00Z",
        "2026-03-01T09:30:15.123456789Z",
        "2026-03-01T09:30:15.1234567891Z",
        "2024-02-29T00:00:00Z",
        "2026-02-29T00:00:00Z",
        "9998-12-31T23:59:59Z",
        "9999-12-31T23:59:59Z",
        "0000-06-01T00:00:00Z",
        "0001-01-01T00:00:00Z",
        "2026-03-01T09:30:00+01:00",
        "2026-03-01T09:30:00-23:59",
        "9997-12-31T23:59:00-23:59",
        "9998-01-01T00:00:00+01:00",
        "0002-01-01T00:00:00+23:59",
        "0001-06-01T00:00:00+01:00",
        "2026-03-01T09:30:00+24:00",
        "2026-03-01t09:30:00z",
        "2026-03-01T09:30:00",
        "2026-03-01 09:30:00Z",
    ];
    for instant in instants {
        let value = Value::from(instant);
        assert_eq!(
            utc.is_valid(&value),
            parse_instant(instant, Zone::UtcOnly).is_ok(),
            "UtcInstant and the parser disagree on {instant}"
        );
        assert_eq!(
            offset.is_valid(&value),
            parse_instant(instant, Zone::UtcOrOffset).is_ok(),
            "Instant and the parser disagree on {instant}"
        );
    }
    let long = "é".repeat(255);
    let too_long = "é".repeat(256);
    for sample in [
        "a", "paris-01", " ", "a\u{0}b", "a\nb", "\u{7f}", "\u{85}", "\u{a0}", "", &long, &too_long,
    ] {
        assert_eq!(
            text.is_valid(&Value::from(sample)),
            till_core::ids::check_text(sample).is_ok(),
            "Text and the parser disagree on {sample:?}"
        );
    }
}

/// Every schema of the document, with where it is, found by walking the document: each object
/// that states a `type`, names a `$ref` or combines shapes.
fn every_schema(value: &Value, at: String, found: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(map) => {
            let is_schema = map.get("type").is_some_and(|kind| kind.is_string() || kind.is_array())
                || map.contains_key("$ref")
                || map.contains_key("oneOf")
                || map.contains_key("allOf")
                || map.contains_key("anyOf")
                || map.contains_key("enum");
            if is_schema {
                found.push((at.clone(), value.clone()));
            }
            for (key, inner) in map {
                every_schema(inner, format!("{at}/{key}"), found);
            }
        }
        Value::Array(items) => {
            for (index, inner) in items.iter().enumerate() {
                every_schema(inner, format!("{at}/{index}"), found);
            }
        }
        _ => {}
    }
}

fn admits(schema: &Value, kind: &str) -> bool {
    schema["type"] == kind
        || schema["type"]
            .as_array()
            .is_some_and(|kinds| kinds.contains(&Value::from(kind)))
}

/// A client generator types every object: none is a bare `{"type": "object"}` (which
/// openapi-typescript makes `Record<string, never>`), each names its properties or says what
/// its other properties hold.
#[test]
fn no_object_is_left_untyped() {
    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    let mut found = Vec::new();
    every_schema(&document, String::new(), &mut found);
    assert!(found.len() > 500, "the walk found the schemas");
    for (at, schema) in found {
        if admits(&schema, "object") {
            assert!(
                [
                    "properties",
                    "additionalProperties",
                    "patternProperties",
                    "allOf",
                    "oneOf",
                    "anyOf"
                ]
                .iter()
                .any(|typed| schema.get(*typed).is_some()),
                "{at} is an object of nothing: {schema}"
            );
        }
    }
}

/// A nullable enumeration is a named one or `null` (`oneOf`), never a list of words with `null`
/// among them, which openapi-python-client makes into several identical enumerations.
#[test]
fn nullable_enumerations_are_one_named_enumeration() {
    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    let mut found = Vec::new();
    every_schema(&document, String::new(), &mut found);
    for (at, schema) in &found {
        if let Some(members) = schema["enum"].as_array() {
            assert!(
                !members.contains(&Value::Null) && !admits(schema, "null"),
                "{at} lists null among its words: {schema}"
            );
        }
    }
    let all = schemas(&document);
    let sale_type = &all["SaleRequestBody"]["properties"]["type"]["oneOf"];
    assert_eq!(sale_type[0]["$ref"], "#/components/schemas/SaleType", "{sale_type}");
    assert_eq!(sale_type[1]["type"], "null");
    assert_eq!(
        all["SaleType"]["enum"],
        serde_json::json!(["sale", "rental", "repair", "return"])
    );
    let failure = &all["DeliveryView"]["properties"]["error"]["oneOf"];
    assert_eq!(
        failure[0]["$ref"], "#/components/schemas/DeliveryFailureKind",
        "{failure}"
    );
}

/// Every answer with a body says what the body is; only 202 and 204 have none.
#[test]
fn every_successful_answer_has_a_schema() {
    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    for (method, path, operation) in operations(&document) {
        for (status, response) in operation["responses"].as_object().unwrap() {
            if !status.starts_with('2') {
                continue;
            }
            match response["content"].as_object() {
                Some(content) => {
                    for (media, body) in content {
                        assert!(
                            body.get("schema").is_some(),
                            "{method} {path} {status} {media} has no schema"
                        );
                    }
                }
                None => assert!(
                    ["202", "204"].contains(&status.as_str()),
                    "{method} {path} {status} has no body"
                ),
            }
        }
    }
    let archive = &operation(&document, "makeFiscalArchive")["responses"]["201"]["content"]["application/json"];
    assert_eq!(archive["schema"]["$ref"], "#/components/schemas/Nf525Archive");
    let published: Value = serde_json::from_str(include_str!("../../../../docs/nf525-archive.schema.json")).unwrap();
    let carried = &schemas(&document)["Nf525Archive"];
    assert_eq!(carried["required"], published["required"]);
    assert_eq!(
        carried["properties"]["archive"]["required"], published["properties"]["archive"]["required"],
        "the document carries the archive's published schema"
    );
    assert_eq!(
        carried["properties"]["signature"]["properties"]["algorithm"]["enum"],
        serde_json::json!(["ES256"])
    );
}

/// The feed's event is a union by `type`: each type a named shape with its own `data`, so that
/// a client narrows `data` by testing `type`.
#[test]
fn feed_events_are_a_union_by_type() {
    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    let all = schemas(&document);
    let event = &all["FeedEventView"];
    assert_eq!(event["discriminator"]["propertyName"], "type");
    let shapes = event["oneOf"].as_array().unwrap();
    assert_eq!(shapes.len(), till_core::events::EventType::ALL.len());
    for kind in till_core::events::EventType::ALL {
        let reference = event["discriminator"]["mapping"][kind.as_str()]
            .as_str()
            .unwrap_or_else(|| panic!("{kind:?} has no shape"));
        assert!(shapes.iter().any(|shape| shape["$ref"] == reference));
        let named = serde_json::json!({"$ref": reference});
        let shape = resolve(&document, &named);
        assert_eq!(shape["properties"]["type"]["enum"], serde_json::json!([kind.as_str()]));
        let data = &shape["properties"]["data"];
        assert!(
            data.get("$ref").is_some() || data.get("oneOf").is_some(),
            "{kind:?}: {data}"
        );
    }
    assert_eq!(
        event["discriminator"]["mapping"]["sale.completed"],
        "#/components/schemas/SaleCompletedEvent"
    );
    assert_eq!(
        all["SaleCompletedEvent"]["properties"]["data"]["$ref"],
        "#/components/schemas/SaleEvent"
    );
}

/// The journal's keys are JSON Web Keys with every member named.
#[test]
fn keys_are_json_web_keys() {
    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    let all = schemas(&document);
    assert_eq!(
        all["KeySet"]["properties"]["keys"]["items"]["$ref"],
        "#/components/schemas/Jwk"
    );
    let jwk = &all["Jwk"];
    for member in ["kty", "crv", "x", "y", "kid", "alg", "use"] {
        assert!(
            jwk["required"].as_array().unwrap().contains(&Value::from(member)),
            "{member}"
        );
    }
    assert_eq!(jwk["properties"]["kty"]["enum"], serde_json::json!(["EC"]));
    assert_eq!(jwk["properties"]["crv"]["enum"], serde_json::json!(["P-256"]));
}

/// A validator of answers against the component `name` of the document.
fn answers_of(document: &Value, name: &str) -> jsonschema::Validator {
    let mut root = document.clone();
    root["$ref"] = Value::from(format!("#/components/schemas/{name}"));
    jsonschema::validator_for(&root).unwrap_or_else(|error| panic!("{name}: {error}"))
}

fn assert_answers(validator: &jsonschema::Validator, answer: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(answer)
        .map(|error| format!("{error} at {}", error.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match the document: {errors:?}\n{answer}"
    );
}

/// What the server answers matches the typed schemas: an event of every type of the feed, the
/// keys, a chain and an archive.
async fn the_answers_match_their_typed_schemas(engine: Engine) {
    use crate::harness::{Shop, line};
    use serde_json::json;
    const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);
    let shop = Shop::open_with(engine, |config| config.payment_orphan_seconds = 60).await;
    let server = &shop.server;
    let admin = server.admin();
    server.provision_store("s2").await;
    let sold = shop
        .finalize(&shop.sale("t1", vec![line("l1", MUG, 2)], 2 * MUG.1))
        .await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    // Two card approvals: a sale captures one, the other becomes an orphan.
    let mut payments = Vec::new();
    for payment in ["pay-1", "pay-2"] {
        let asked = json!({"paymentId": payment, "sessionId": shop.session, "amountCents": MUG.1, "method": "card"});
        assert_eq!(server.post("/v1/payments", &shop.till, asked).await.status, 201);
        let approval = json!({"status": "authorized", "authorizedCents": MUG.1, "last4": "4242"});
        let approved = server
            .post(&format!("/v1/payments/{payment}/outcome"), &shop.till, approval)
            .await;
        assert_eq!(approved.status, 200, "{}", approved.text);
        payments.push(approved.body);
    }
    let mut by_card = shop.sale("t2", vec![line("l1", MUG, 1)], MUG.1);
    by_card["tenders"]["tenders"][0]["reference"] = json!("pay-1");
    assert_eq!(shop.finalize(&by_card).await.status, 201);
    server.clock.advance(std::time::Duration::from_secs(61));
    let back = json!({
        "transactionId": "r1", "originalTransactionId": "t1", "number": "R-1", "storeId": "s1",
        "sellerId": "camille", "sessionId": shop.session, "lines": [{"lineId": "l1", "quantity": 1}],
        "tenders": {"amountDue": MUG.1, "sequence": 1, "tenders": [
            {"id": "p1", "method": "credit_note", "applied": MUG.1, "presented": MUG.1, "change": 0, "forfeited": 0}]},
    });
    let returned = server.post("/v1/returns", &shop.till, back).await;
    assert_eq!(returned.status, 201, "{}", returned.text);
    // The card sale's mug comes back to the card.
    let to_card = json!({
        "transactionId": "r2", "originalTransactionId": "t2", "number": "R-2", "storeId": "s1",
        "sellerId": "camille", "sessionId": shop.session, "lines": [{"lineId": "l1", "quantity": 1}],
        "tenders": {"amountDue": MUG.1, "sequence": 1, "tenders": [
            {"id": "p1", "method": "card", "applied": MUG.1, "presented": MUG.1, "change": 0, "forfeited": 0,
             "reference": "pay-1"}]},
    });
    let refunded = server.post("/v1/returns", &shop.till, to_card).await;
    assert_eq!(refunded.status, 201, "{}", refunded.text);
    let listed = server.get("/v1/payments", &shop.till).await;
    assert_eq!(
        listed.body["items"].as_array().map(Vec::len),
        Some(3),
        "{}",
        listed.text
    );
    payments.extend(listed.body["items"].as_array().unwrap().iter().cloned());
    let moved = server
        .post(
            &format!("/v1/register-sessions/{}/cash-movements", shop.session),
            &shop.till,
            json!({"movementId": "m1", "kind": "paid_in", "amountCents": 500, "reason": "float"}),
        )
        .await;
    assert_eq!(moved.status, 201, "{}", moved.text);
    let promotion = json!({"id": "promo-1", "type": "percent_off", "name": "Big baskets", "percentBps": 100,
        "minSubtotalCents": 100_000, "validFrom": "2020-01-01T00:00:00Z", "validUntil": "2099-12-31T23:59:59Z"});
    assert!(server.post("/v1/promotions", &admin, promotion).await.status < 300);
    let stock = format!("/v1/stores/s1/stock/{}", crate::harness::sku(MUG.0));
    assert_eq!(server.put(&stock, &admin, json!({"onHand": 40})).await.status, 200);
    let own_price = format!("/v1/stores/s1/prices/{}", crate::harness::sku(MUG.0));
    assert_eq!(
        server.put(&own_price, &admin, json!({"priceCents": 1400})).await.status,
        201
    );
    assert_eq!(
        server
            .put("/v1/coupons/TEN", &admin, json!({"percentBps": 1000}))
            .await
            .status,
        201
    );
    let transfer = json!({"transferId": "tr-1", "fromStoreId": "s1", "toStoreId": "s2",
        "lines": [{"skuId": crate::harness::sku(MUG.0), "quantity": 3}]});
    let sent = server.post("/v1/stock-transfers", &admin, transfer).await;
    assert_eq!(sent.status, 201, "{}", sent.text);
    let card = server
        .post("/v1/gift-cards", &admin, json!({"balanceCents": 2500}))
        .await;
    assert_eq!(card.status, 201, "{}", card.text);
    let closed = server
        .post(
            &format!("/v1/register-sessions/{}/close", shop.session),
            &admin,
            json!({}),
        )
        .await;
    assert_eq!(closed.status, 200, "{}", closed.text);
    let day = server
        .post("/v1/fiscal/registers/r1/closures", &admin, json!({"period": "day"}))
        .await;
    assert_eq!(day.status, 201, "{}", day.text);
    let customer = server
        .put("/v1/customers/c-1", &admin, json!({"displayName": "Ana"}))
        .await;
    assert_eq!(customer.status, 201, "{}", customer.text);
    let erased = server.post("/v1/customers/c-1/erase", &admin, json!({})).await;
    assert_eq!(erased.status, 200, "{}", erased.text);

    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    let (events, _) = crate::events::read_feed(server, "", 23).await;
    let mut seen: Vec<&str> = events.iter().map(|event| event["type"].as_str().unwrap()).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), till_core::events::EventType::ALL.len(), "{seen:?}");
    let event = answers_of(&document, "FeedEventView");
    let payment = answers_of(&document, "PaymentView");
    for answer in &payments {
        assert_answers(&payment, answer, "a payment attempt");
    }
    for answer in &events {
        assert_answers(&event, answer, answer["type"].as_str().unwrap());
    }
    let keys = server.call(Method::GET, "/v1/fiscal/keys", None, None).await;
    assert_answers(&answers_of(&document, "KeySet"), &keys.body, "the key set");
    assert!(keys.body["keys"][0]["kid"].is_string());
    let chain = server.get("/v1/fiscal/registers/r1/chains/ticket", &admin).await;
    assert_eq!(chain.status, 200, "{}", chain.text);
    assert_answers(&answers_of(&document, "ChainView"), &chain.body, "a chain");
    let paris = jiff::tz::TimeZone::get("Europe/Paris").unwrap();
    let today = jiff::Zoned::new(jiff::Timestamp::now(), paris).date().to_string();
    let archive = server
        .post(
            "/v1/fiscal/archives",
            &admin,
            json!({"registerId": "r1", "from": today, "to": today}),
        )
        .await;
    assert_eq!(archive.status, 201, "{}", archive.text);
    assert_answers(&answers_of(&document, "Nf525Archive"), &archive.body, "an archive");
    shop.server.stop().await;
}

on_both_engines!(the_answers_match_their_typed_schemas);
