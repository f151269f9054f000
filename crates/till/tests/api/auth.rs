//! Credentials: every way a token can be wrong gets a 401 with `WWW-Authenticate: Bearer`, and a
//! valid token without the operation's scope gets a 403.

use crate::harness::{Engine, SECRET, TestServer};
use crate::on_both_engines;
use axum::Json;
use axum::routing::get;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

const READ: &str = "/v1/stores/anywhere";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn jwks() -> Value {
    let keys: Value = serde_json::from_str(&std::fs::read_to_string(fixture("jwk-public.json")).unwrap()).unwrap();
    json!({"keys": [keys["rsa"], keys["ec"]]})
}

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// Standard claims for a store reader, adjusted by `edit`.
fn claims(edit: impl FnOnce(&mut Value)) -> Value {
    let mut claims = json!({
        "sub": "auditor", "scope": "pos.catalog.read", "iss": "till-dev", "aud": "till",
        "iat": now(), "exp": now() + 600,
    });
    edit(&mut claims);
    claims
}

fn hs256(claims: &Value) -> String {
    encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(SECRET.as_bytes()),
    )
    .unwrap()
}

fn signed(alg: Algorithm, kid: &str, claims: &Value) -> String {
    let mut header = Header::new(alg);
    header.kid = Some(kid.to_owned());
    let key = match alg {
        Algorithm::RS256 => EncodingKey::from_rsa_pem(&std::fs::read(fixture("rsa-private.pem")).unwrap()).unwrap(),
        Algorithm::ES256 => EncodingKey::from_ec_pem(&std::fs::read(fixture("ec-private.pem")).unwrap()).unwrap(),
        other => panic!("no fixture key for {other:?}"),
    };
    encode(&header, claims, &key).unwrap()
}

/// A server reading the identity provider's keys from a file in its own data directory, which
/// goes with the server.
async fn with_jwks_file(engine: Engine) -> TestServer {
    TestServer::start_with(engine, |config| {
        let path = config.data_dir.join("jwks.json");
        std::fs::write(&path, jwks().to_string()).unwrap();
        config.jwt_jwks_file = Some(path);
    })
    .await
}

async fn assert_unauthorized(server: &TestServer, token: &str) {
    let reply = server.get(READ, token).await;
    reply.assert_error(401, "UNAUTHORIZED");
    let challenge = reply.headers.get("www-authenticate").and_then(|v| v.to_str().ok());
    assert_eq!(challenge, Some("Bearer"), "WWW-Authenticate on {}", reply.text);
}

async fn valid_tokens_reach_the_handler(engine: Engine) {
    let server = with_jwks_file(engine).await;
    for token in [
        hs256(&claims(|_| {})),
        signed(Algorithm::RS256, "rsa-1", &claims(|_| {})),
        signed(Algorithm::ES256, "ec-1", &claims(|_| {})),
    ] {
        // Authenticated and authorized: the store simply does not exist.
        server.get(READ, &token).await.assert_error(404, "NOT_FOUND");
    }
    server.stop().await;
}

async fn missing_or_garbage_credentials_are_refused(engine: Engine) {
    let server = TestServer::start(engine).await;
    let reply = server.call(reqwest::Method::GET, READ, None, None).await;
    reply.assert_error(401, "UNAUTHORIZED");
    assert_eq!(reply.headers.get("www-authenticate").unwrap(), "Bearer");
    for token in ["garbage", "a.b.c", "eyJhbGciOiJIUzI1NiJ9.e30", ""] {
        assert_unauthorized(&server, token).await;
    }
    let basic = server
        .send(|http, base| http.get(format!("{base}{READ}")).basic_auth("admin", Some("pw")))
        .await;
    basic.assert_error(401, "UNAUTHORIZED");
    server.stop().await;
}

async fn expiry_and_not_before_are_enforced_with_leeway(engine: Engine) {
    let server = TestServer::start(engine).await;
    // Expired beyond the 60 s leeway.
    assert_unauthorized(&server, &hs256(&claims(|c| c["exp"] = json!(now() - 120)))).await;
    // Expired within the leeway still passes: clocks drift.
    server
        .get(READ, &hs256(&claims(|c| c["exp"] = json!(now() - 10))))
        .await
        .assert_error(404, "NOT_FOUND");
    // Not valid before a time beyond the leeway.
    assert_unauthorized(&server, &hs256(&claims(|c| c["nbf"] = json!(now() + 300)))).await;
    // exp is required.
    let no_exp = claims(|c| {
        c.as_object_mut().unwrap().remove("exp");
    });
    assert_unauthorized(&server, &hs256(&no_exp)).await;
    server.stop().await;
}

async fn issuer_and_audience_are_required_and_checked(engine: Engine) {
    let server = TestServer::start(engine).await;
    assert_unauthorized(&server, &hs256(&claims(|c| c["iss"] = json!("someone-else")))).await;
    assert_unauthorized(&server, &hs256(&claims(|c| c["aud"] = json!("another-service")))).await;
    for claim in ["aud", "iss", "sub"] {
        let token = hs256(&claims(|c| {
            c.as_object_mut().unwrap().remove(claim);
        }));
        assert_unauthorized(&server, &token).await;
    }
    // An audience list containing ours is fine.
    let listed = hs256(&claims(|c| c["aud"] = json!(["other", "till"])));
    server.get(READ, &listed).await.assert_error(404, "NOT_FOUND");
    server.stop().await;
}

/// `iss` and `sub` are single strings: a list, even one naming the trusted issuer, or any other
/// type is refused.
async fn an_issuer_or_subject_that_is_not_a_string_is_refused(engine: Engine) {
    let server = TestServer::start(engine).await;
    for (claim, value) in [
        ("iss", json!(["till-dev"])),
        ("iss", json!(["till-dev", "someone-else"])),
        ("iss", json!({"name": "till-dev"})),
        ("iss", json!(1)),
        ("iss", json!(null)),
        ("sub", json!(["auditor"])),
        ("sub", json!(42)),
        ("sub", json!({"id": "auditor"})),
        ("sub", json!(true)),
    ] {
        let token = hs256(&claims(|c| c[claim] = value.clone()));
        let reply = server.get(READ, &token).await;
        assert_eq!(reply.status, 401, "{claim} = {value}: {}", reply.text);
        reply.assert_error(401, "UNAUTHORIZED");
    }
    server.stop().await;
}

async fn forged_algorithms_are_refused(engine: Engine) {
    let server = with_jwks_file(engine).await;
    // alg none: no signature at all.
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims(|_| {}).to_string());
    assert_unauthorized(&server, &format!("{header}.{payload}.")).await;
    // HS256 "signed" with the RSA public key, the classic key-confusion attack.
    let public_pem = std::fs::read(fixture("rsa-public.pem")).unwrap();
    let mut confused = Header::new(Algorithm::HS256);
    confused.kid = Some("rsa-1".to_owned());
    let token = encode(&confused, &claims(|_| {}), &EncodingKey::from_secret(&public_pem)).unwrap();
    assert_unauthorized(&server, &token).await;
    // An algorithm outside the allow-list, even with a valid key.
    let rs384 = {
        let mut header = Header::new(Algorithm::RS384);
        header.kid = Some("rsa-1".to_owned());
        let key = EncodingKey::from_rsa_pem(&std::fs::read(fixture("rsa-private.pem")).unwrap()).unwrap();
        encode(&header, &claims(|_| {}), &key).unwrap()
    };
    assert_unauthorized(&server, &rs384).await;
    // The EC key presented under the RSA algorithm.
    assert_unauthorized(&server, &signed(Algorithm::ES256, "rsa-1", &claims(|_| {}))).await;
    server.stop().await;
}

async fn unknown_keys_and_tampered_signatures_are_refused(engine: Engine) {
    let server = with_jwks_file(engine).await;
    assert_unauthorized(&server, &signed(Algorithm::RS256, "no-such-key", &claims(|_| {}))).await;
    let token = signed(Algorithm::RS256, "rsa-1", &claims(|_| {}));
    let (head, signature) = token.rsplit_once('.').unwrap();
    let mut bytes = URL_SAFE_NO_PAD.decode(signature).unwrap();
    bytes[10] ^= 0x01;
    assert_unauthorized(&server, &format!("{head}.{}", URL_SAFE_NO_PAD.encode(bytes))).await;
    // Claims swapped under a valid signature.
    let forged_claims = URL_SAFE_NO_PAD.encode(claims(|c| c["scope"] = json!("pos.stores.write")).to_string());
    let parts: Vec<&str> = token.split('.').collect();
    assert_unauthorized(&server, &format!("{}.{forged_claims}.{}", parts[0], parts[2])).await;
    // HS256 is refused when no shared secret is configured.
    let no_secret = TestServer::start_with(engine, |config| config.jwt_secret = None).await;
    assert_unauthorized(&no_secret, &hs256(&claims(|_| {}))).await;
    no_secret.stop().await;
    server.stop().await;
}

async fn opaque_tokens_are_never_parsed_as_jwts(engine: Engine) {
    let server = TestServer::start(engine).await;
    let jwt = hs256(&claims(|_| {}));
    // A valid JWT behind the session prefix is an unknown session token, nothing more.
    assert_unauthorized(&server, &format!("pos_st_{jwt}")).await;
    assert_unauthorized(&server, &format!("pos_st_{}", "A".repeat(43))).await;
    // An elevation token is not a credential.
    assert_unauthorized(&server, &format!("pos_el_{}", "A".repeat(43))).await;
    server.stop().await;
}

async fn a_missing_scope_is_forbidden(engine: Engine) {
    let server = TestServer::start(engine).await;
    let reader = server.token("auditor", "pos.catalog.read");
    let reply = server.put("/v1/stores/s1", &reader, json!({"name": "Nope"})).await;
    reply.assert_error(403, "FORBIDDEN");
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("pos.stores.write")
    );
    // Scopes outside the vocabulary grant nothing.
    let other = server.token("someone", "openid profile pos.everything");
    server.get(READ, &other).await.assert_error(403, "FORBIDDEN");
    // Scopes may also arrive as an array, and permissions in their own claim.
    let listed = hs256(&claims(|c| {
        c["scope"] = json!(["pos.stores.write"]);
        c["permissions"] = json!(["price:override"]);
    }));
    assert_eq!(
        server
            .put("/v1/stores/s1", &listed, json!({"name": "Yes"}))
            .await
            .status,
        201
    );
    server.stop().await;
}

async fn keys_are_read_again_when_an_unknown_kid_arrives(engine: Engine) {
    // An identity provider publishing its JWKS over HTTP; it starts with the RSA key only.
    let all = jwks();
    let published = Arc::new(RwLock::new(json!({"keys": [all["keys"][0]]})));
    let served = published.clone();
    let app = axum::Router::new().route(
        "/jwks",
        get(move || {
            let served = served.clone();
            async move { Json(served.read().unwrap().clone()) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let server = TestServer::start_with(engine, |config| {
        config.jwt_jwks_url = Some(url);
        config.jwt_jwks_min_refresh_seconds = 0;
    })
    .await;
    let rsa = signed(Algorithm::RS256, "rsa-1", &claims(|_| {}));
    let ec = signed(Algorithm::ES256, "ec-1", &claims(|_| {}));
    server.get(READ, &rsa).await.assert_error(404, "NOT_FOUND");
    assert_unauthorized(&server, &ec).await;
    // The provider rotates in the EC key; the next token naming it triggers a refresh.
    *published.write().unwrap() = all;
    server.get(READ, &ec).await.assert_error(404, "NOT_FOUND");
    server.stop().await;
}

on_both_engines!(
    valid_tokens_reach_the_handler,
    missing_or_garbage_credentials_are_refused,
    expiry_and_not_before_are_enforced_with_leeway,
    issuer_and_audience_are_required_and_checked,
    an_issuer_or_subject_that_is_not_a_string_is_refused,
    forged_algorithms_are_refused,
    unknown_keys_and_tampered_signatures_are_refused,
    opaque_tokens_are_never_parsed_as_jwts,
    a_missing_scope_is_forbidden,
    keys_are_read_again_when_an_unknown_kid_arrives,
);
