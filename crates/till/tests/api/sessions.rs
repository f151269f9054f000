//! Register sessions: PIN-checked opening, one open session per till, the till's token, close.

use crate::harness::{Engine, TestServer};
use crate::on_both_engines;
use serde_json::json;
use std::time::Duration;

async fn ready(engine: Engine) -> TestServer {
    let server = TestServer::start(engine).await;
    server.provision_store("s1").await;
    server.provision_staff("camille", "cashier", "1234").await;
    server
}

fn open_body(register: &str, cashier: &str, pin: &str) -> serde_json::Value {
    json!({"storeId": "s1", "registerId": register, "cashierSubject": cashier, "pin": pin, "openingFloatCents": 15000})
}

async fn a_session_opens_with_the_right_pin_and_mints_a_token(engine: Engine) {
    let server = ready(engine).await;
    let reply = server
        .post(
            "/v1/register-sessions",
            &server.admin(),
            open_body("r1", "camille", "1234"),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let token = reply.str("token");
    assert!(token.starts_with("pos_st_") && token.len() == 7 + 43, "{token}");
    assert!(reply.str("sessionId").starts_with("ses_"));
    assert_eq!(reply.body["registerId"], "r1");
    assert_eq!(reply.body["cashierSubject"], "camille");
    let scopes = reply.body["scopes"].as_array().unwrap();
    assert!(scopes.contains(&json!("pos.sales.finalize")) && !scopes.contains(&json!("price:override")));
    // The token authenticates the till as the cashier, with the cashier's scopes.
    let session = format!("/v1/register-sessions/{}", reply.str("sessionId"));
    let read = server.get(&session, &token).await;
    assert_eq!(read.body["status"], "open", "{}", read.text);
    assert!(!read.text.contains(&token));
    server
        .put("/v1/stores/s1", &token, json!({"name": "x"}))
        .await
        .assert_error(403, "FORBIDDEN");
    server.stop().await;
}

async fn a_wrong_pin_and_an_unknown_cashier_look_the_same(engine: Engine) {
    let server = ready(engine).await;
    let wrong = server
        .post(
            "/v1/register-sessions",
            &server.admin(),
            open_body("r1", "camille", "9999"),
        )
        .await;
    wrong.assert_error(401, "UNAUTHORIZED");
    let unknown = server
        .post(
            "/v1/register-sessions",
            &server.admin(),
            open_body("r1", "nobody", "1234"),
        )
        .await;
    unknown.assert_error(401, "UNAUTHORIZED");
    assert_eq!(wrong.body, unknown.body);
    // Nothing was opened: the right PIN still opens the till.
    assert_eq!(
        server
            .post(
                "/v1/register-sessions",
                &server.admin(),
                open_body("r1", "camille", "1234")
            )
            .await
            .status,
        201
    );
    server.stop().await;
}

async fn repeated_wrong_pins_lock_the_cashier_out(engine: Engine) {
    let server = ready(engine).await;
    server.provision_staff("lea", "cashier", "5555").await;
    let admin = server.admin();
    for _ in 0..5 {
        server
            .post("/v1/register-sessions", &admin, open_body("r1", "camille", "0000"))
            .await
            .assert_error(401, "UNAUTHORIZED");
    }
    let locked = server
        .post("/v1/register-sessions", &admin, open_body("r1", "camille", "1234"))
        .await;
    locked.assert_error(429, "LOCKED_OUT");
    let retry: u64 = locked.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=900).contains(&retry), "Retry-After {retry}");
    // Another cashier is untouched.
    assert_eq!(
        server
            .post("/v1/register-sessions", &admin, open_body("r2", "lea", "5555"))
            .await
            .status,
        201
    );
    // Once the lock has run out, the right PIN works again.
    server.clock.advance(Duration::from_secs(retry));
    assert_eq!(
        server
            .post("/v1/register-sessions", &admin, open_body("r1", "camille", "1234"))
            .await
            .status,
        201
    );
    server.stop().await;
}

/// One till's wrong PINs lock the cashier out of that till only; wrong PINs spread over
/// several tills lock them out of every till once they reach three times the limit.
async fn wrong_pins_lock_a_register_first_and_every_register_at_three_times_the_limit(engine: Engine) {
    let server = TestServer::start_with(engine, |config| config.pin_max_failures = 2).await;
    server.provision_store("s1").await;
    server.provision_staff("camille", "cashier", "1234").await;
    server.provision_staff("lea", "cashier", "5555").await;
    let admin = server.admin();
    let open = |register: &'static str, cashier: &'static str, pin: &'static str| {
        server.post("/v1/register-sessions", &admin, open_body(register, cashier, pin))
    };
    for _ in 0..2 {
        open("r1", "camille", "0000").await.assert_error(401, "UNAUTHORIZED");
    }
    open("r1", "camille", "1234").await.assert_error(429, "LOCKED_OUT");
    // Another till takes her PIN.
    assert_eq!(open("r2", "camille", "1234").await.status, 201);

    // One wrong PIN at each of six tills: no till reaches two, all of them together reach six.
    for register in ["r3", "r4", "r5", "r6", "r7", "r8"] {
        open(register, "lea", "0000").await.assert_error(401, "UNAUTHORIZED");
    }
    let everywhere = open("r9", "lea", "5555").await;
    everywhere.assert_error(429, "LOCKED_OUT");
    let retry: u64 = everywhere.headers["retry-after"].to_str().unwrap().parse().unwrap();
    server.clock.advance(Duration::from_secs(retry));
    assert_eq!(open("r9", "lea", "5555").await.status, 201);
    server.stop().await;
}

async fn a_till_has_one_open_session_and_stays_in_its_store(engine: Engine) {
    let server = ready(engine).await;
    let admin = server.admin();
    server.provision_staff("lea", "cashier", "5555").await;
    let (first, _) = server.open_session("s1", "r1", "camille", "1234").await;
    let again = server
        .post("/v1/register-sessions", &admin, open_body("r1", "lea", "5555"))
        .await;
    again.assert_error(409, "CONFLICT");
    assert!(again.text.contains(&first));
    server.provision_store("s2").await;
    let elsewhere = json!({"storeId": "s2", "registerId": "r1", "cashierSubject": "lea", "pin": "5555"});
    server
        .post("/v1/register-sessions", &admin, elsewhere)
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    let nowhere = json!({"storeId": "s9", "registerId": "r9", "cashierSubject": "lea", "pin": "5555"});
    let reply = server.post("/v1/register-sessions", &admin, nowhere).await;
    assert_eq!(reply.fields(), ["storeId"]);
    // Closing frees the till.
    let closed = server
        .post(&format!("/v1/register-sessions/{first}/close"), &admin, json!({}))
        .await;
    assert_eq!(closed.status, 200, "{}", closed.text);
    assert_eq!(
        server
            .post("/v1/register-sessions", &admin, open_body("r1", "lea", "5555"))
            .await
            .status,
        201
    );
    server.stop().await;
}

async fn closing_returns_the_z_report_and_is_repeatable(engine: Engine) {
    let server = ready(engine).await;
    let admin = server.admin();
    let opened = server
        .post("/v1/register-sessions", &admin, open_body("r1", "camille", "1234"))
        .await;
    let (session, token) = (opened.str("sessionId"), opened.str("token"));
    let path = format!("/v1/register-sessions/{session}/close");
    server
        .post(&path, &token, json!({}))
        .await
        .assert_error(403, "FORBIDDEN");
    let first = server.post(&path, &admin, json!({})).await;
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(first.body["sessionId"], json!(session));
    assert_eq!(first.body["openingFloatCents"], 15000);
    assert_eq!(first.body["expectedCashCents"], 15000);
    let second = server.post(&path, &admin, json!({})).await;
    assert_eq!(second.body, first.body);
    let read = server.get(&format!("/v1/register-sessions/{session}"), &admin).await;
    assert_eq!(read.body["status"], "closed");
    server
        .post("/v1/register-sessions/ses_nope/close", &admin, json!({}))
        .await
        .assert_error(404, "NOT_FOUND");
    server.stop().await;
}

async fn a_session_token_expires_with_its_session(engine: Engine) {
    let server = ready(engine).await;
    let (session, token) = server.open_session("s1", "r1", "camille", "1234").await;
    let path = format!("/v1/register-sessions/{session}");
    assert_eq!(server.get(&path, &token).await.status, 200);
    server.clock.advance(Duration::from_secs(16 * 3600 + 1));
    server.get(&path, &token).await.assert_error(401, "UNAUTHORIZED");
    assert_eq!(server.get(&path, &server.admin()).await.body["status"], "expired");
    // An expired shift does not block the till: the next one opens.
    assert_eq!(
        server
            .post(
                "/v1/register-sessions",
                &server.admin(),
                open_body("r1", "camille", "1234")
            )
            .await
            .status,
        201
    );
    server.stop().await;
}

async fn opening_needs_its_scope_and_a_valid_body(engine: Engine) {
    let server = ready(engine).await;
    let cashier_like = server.token("camille", "pos.sales.finalize");
    server
        .post(
            "/v1/register-sessions",
            &cashier_like,
            open_body("r1", "camille", "1234"),
        )
        .await
        .assert_error(403, "FORBIDDEN");
    let reply = server
        .post(
            "/v1/register-sessions",
            &server.admin(),
            json!({"storeId": "", "openingFloatCents": -5}),
        )
        .await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(
        reply.fields(),
        ["storeId", "registerId", "cashierSubject", "pin", "openingFloatCents"]
    );
    server.stop().await;
}

on_both_engines!(
    a_session_opens_with_the_right_pin_and_mints_a_token,
    wrong_pins_lock_a_register_first_and_every_register_at_three_times_the_limit,
    a_wrong_pin_and_an_unknown_cashier_look_the_same,
    repeated_wrong_pins_lock_the_cashier_out,
    a_till_has_one_open_session_and_stays_in_its_store,
    closing_returns_the_z_report_and_is_repeatable,
    a_session_token_expires_with_its_session,
    opening_needs_its_scope_and_a_valid_body,
);
