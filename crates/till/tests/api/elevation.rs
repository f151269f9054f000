//! Manager elevation: the grant, its single use at finalize, the PIN lockout, the rate limiter,
//! every row of the interface document's elevation error table, and the audit trail.

use crate::harness::{Engine, Reply};
use crate::harness::{Shop, line};
use crate::on_both_engines;
use futures::future::join_all;
use serde_json::{Value, json};
use std::time::Duration;

const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);

impl Shop {
    /// The till asks for `manager`'s approval.
    pub(crate) async fn ask(&self, manager: &str, pin: &str, operation: &str, percent: i64) -> Reply {
        let body = json!({"managerSubject": manager, "pin": pin, "operation": operation, "percentBps": percent});
        self.server.post("/v1/elevation-grants", &self.till, body).await
    }

    pub(crate) async fn with_token(&self, token: &str, body: &Value) -> Reply {
        let reply = self
            .server
            .send(|http, base| {
                http.post(format!("{base}/v1/checkout/finalize"))
                    .bearer_auth(&self.till)
                    .header("x-elevation-token", token)
                    .json(body)
            })
            .await;
        assert!(reply.status != 500, "{}", reply.text);
        reply
    }

    /// A mug with `percent` off the ticket: beyond the cashier's own 5 % once above 500.
    fn discounted(&self, transaction: &str, percent: i64) -> Value {
        let total = 1450 - (1450 * percent + 5_000) / 10_000;
        let mut sale = self.sale(transaction, vec![line("l1", MUG, 1)], total);
        sale["declaredDiscounts"] = json!([{"id": "d", "reason": "manager_goodwill", "scope": "ticket", "basis": "percent", "percentBps": percent}]);
        sale
    }
}

async fn managers(shop: &Shop) {
    let admin = shop.server.admin();
    let lucie = json!({"displayName": "Lucie", "role": "manager", "pin": "2468", "discountLimit": {"percentBps": 2000, "amountCents": 2000}});
    assert_eq!(shop.server.put("/v1/staff/lucie", &admin, lucie).await.status, 201);
    shop.server.provision_staff("paul", "cashier", "1357").await;
}

async fn a_grant_approves_one_sale_once(engine: Engine) {
    let shop = Shop::open(engine).await;
    let before = shop.server.get("/v1/staff/camille", &shop.server.admin()).await.body["scopes"].clone();
    let grant = shop.ask("mathis", "9876", "discount.ticket", 1000).await;
    assert_eq!(grant.status, 201, "{}", grant.text);
    let token = grant.str("token");
    assert!(token.starts_with("pos_el_") && token.len() == 50);
    assert_eq!(grant.body["scope"], "pos.discount.override");
    assert_eq!(grant.body["operation"], "discount.ticket");
    assert!(grant.str("grantId").starts_with("grt_"));
    let expires: jiff::Timestamp = grant.str("expiresAt").parse().unwrap();
    let ttl = expires.duration_since(shop.server.clock_now()).as_secs();
    assert!((299..=300).contains(&ttl), "expires in {ttl} s");
    // Without the token the discount is refused; with it, the sale goes through.
    let sale = shop.discounted("t1", 1000);
    shop.finalize(&sale).await.assert_error(403, "FORBIDDEN");
    let first = shop.with_token(&token, &sale).await;
    assert_eq!(first.status, 201, "{}", first.text);
    // Spent: it approves nothing else...
    shop.with_token(&token, &shop.discounted("t2", 1000))
        .await
        .assert_error(403, "FORBIDDEN");
    // ...and a replay of the approved sale needs no token at all.
    let replay = shop.finalize(&sale).await;
    assert_eq!(replay.text, first.text);
    // The cashier's own grants never changed.
    let after = shop.server.get("/v1/staff/camille", &shop.server.admin()).await.body["scopes"].clone();
    assert_eq!(before, after);
    shop.server.stop().await;
}

async fn twenty_sales_racing_for_one_grant_spend_it_once(engine: Engine) {
    let shop = Shop::open(engine).await;
    let token = shop.ask("mathis", "9876", "discount.ticket", 1000).await.str("token");
    let sales: Vec<Value> = (0..20).map(|i| shop.discounted(&format!("t{i}"), 1000)).collect();
    let replies = join_all(sales.iter().map(|sale| shop.with_token(&token, sale))).await;
    let committed = replies.iter().filter(|r| r.status == 201).count();
    assert_eq!(
        committed,
        1,
        "{:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    assert!(replies.iter().all(|r| r.status == 201 || r.status == 403));
    assert_eq!(shop.stock(MUG).await, -1);
    shop.server.stop().await;
}

/// A till that retries an approved sale while the first attempt is still in flight: the twin
/// finds the grant spent by its own sale, and must get that sale back, not a refusal.
async fn identical_approved_sales_in_flight_commit_once_and_replay(engine: Engine) {
    let shop = Shop::open(engine).await;
    let token = shop.ask("mathis", "9876", "discount.ticket", 1000).await.str("token");
    let sale = shop.discounted("t1", 1000);
    let replies = join_all((0..12).map(|_| shop.with_token(&token, &sale))).await;
    for reply in &replies {
        assert_eq!(reply.status, 201, "{}", reply.text);
        assert_eq!(reply.text, replies[0].text);
    }
    assert_eq!(shop.stock(MUG).await, -1);
    shop.with_token(&token, &shop.discounted("t2", 1000))
        .await
        .assert_error(403, "FORBIDDEN");
    shop.server.stop().await;
}

async fn a_refused_sale_leaves_the_grant_unspent(engine: Engine) {
    let shop = Shop::open(engine).await;
    let token = shop.ask("mathis", "9876", "discount.ticket", 1000).await.str("token");
    let mut wrong = shop.discounted("t1", 1000);
    wrong["tenders"]["amountDue"] = json!(1);
    shop.with_token(&token, &wrong)
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert_eq!(shop.with_token(&token, &shop.discounted("t1", 1000)).await.status, 201);
    shop.server.stop().await;
}

async fn a_grant_is_bound_to_its_session_scope_and_time(engine: Engine) {
    let shop = Shop::open(engine).await;
    // Expired.
    let token = shop.ask("mathis", "9876", "discount.ticket", 1000).await.str("token");
    shop.server.clock.advance(Duration::from_secs(301));
    let expired = shop.with_token(&token, &shop.discounted("t1", 1000)).await;
    expired.assert_error(403, "FORBIDDEN");
    assert!(expired.text.contains("expired"));
    // Wrong operation: a line approval for a ticket discount.
    let line_grant = shop.ask("mathis", "9876", "discount.line", 1000).await.str("token");
    shop.with_token(&line_grant, &shop.discounted("t1", 1000))
        .await
        .assert_error(403, "FORBIDDEN");
    // ...but it approves a line discount.
    let mut line_sale = shop.sale("t2", vec![line("l1", MUG, 1)], 1305);
    line_sale["declaredDiscounts"] = json!([{"id": "d", "reason": "damaged_goods", "scope": "line", "basis": "percent", "lineId": "l1", "percentBps": 1000}]);
    assert_eq!(shop.with_token(&line_grant, &line_sale).await.status, 201);
    // Foreign: issued to another till's session.
    shop.server.provision_staff("lea", "cashier", "5555").await;
    let (_, other_till) = shop.server.open_session("s1", "r2", "lea", "5555").await;
    let body = json!({"managerSubject": "mathis", "pin": "9876", "operation": "discount.ticket", "amountCents": 300});
    let foreign = shop
        .server
        .post("/v1/elevation-grants", &other_till, body)
        .await
        .str("token");
    shop.with_token(&foreign, &shop.discounted("t3", 1000))
        .await
        .assert_error(403, "FORBIDDEN");
    // Too small: approved for 10 %, used for 20 %; then by amount, 6.00 for 7.25.
    let ten = shop.ask("mathis", "9876", "discount.ticket", 1000).await.str("token");
    let larger = shop.with_token(&ten, &shop.discounted("t3", 2000)).await;
    larger.assert_error(403, "FORBIDDEN");
    assert!(larger.text.contains("approved up to 10.00 %"), "{}", larger.text);
    let body = json!({"managerSubject": "mathis", "pin": "9876", "operation": "discount.ticket", "amountCents": 600});
    let six = shop
        .server
        .post("/v1/elevation-grants", &shop.till, body)
        .await
        .str("token");
    shop.with_token(&six, &shop.discounted("t3", 5000))
        .await
        .assert_error(403, "FORBIDDEN");
    assert_eq!(
        shop.with_token(&ten, &shop.discounted("t3", 1000)).await.status,
        201,
        "still unspent"
    );
    // Not a token at all.
    shop.with_token("pos_el_nope", &shop.discounted("t4", 1000))
        .await
        .assert_error(403, "FORBIDDEN");
    shop.server.stop().await;
}

async fn fifty_wrong_pins_lock_the_manager_after_five(engine: Engine) {
    let shop = Shop::open_with(engine, |c| c.elevation_rate_limit = 1_000).await;
    managers(&shop).await;
    let replies = join_all((0..50).map(|_| shop.ask("mathis", "0000", "discount.ticket", 1000))).await;
    let evaluated = replies.iter().filter(|r| r.status == 401).count();
    let locked = replies
        .iter()
        .filter(|r| r.status == 429 && r.body["error"]["code"] == "LOCKED_OUT")
        .count();
    assert!(evaluated <= 5, "{evaluated} wrong PINs evaluated");
    assert_eq!(evaluated + locked, 50);
    // Even the right PIN is refused now, with an honest Retry-After.
    let refused = shop.ask("mathis", "9876", "discount.ticket", 1000).await;
    refused.assert_error(429, "LOCKED_OUT");
    let retry_after: u64 = refused.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=900).contains(&retry_after), "Retry-After {retry_after}");
    // Another manager is untouched.
    assert_eq!(shop.ask("lucie", "2468", "discount.ticket", 1000).await.status, 201);
    shop.server.clock.advance(Duration::from_secs(retry_after - 1));
    shop.ask("mathis", "9876", "discount.ticket", 1000)
        .await
        .assert_error(429, "LOCKED_OUT");
    shop.server.clock.advance(Duration::from_secs(1));
    assert_eq!(shop.ask("mathis", "9876", "discount.ticket", 1000).await.status, 201);
    shop.server.stop().await;
}

/// A till's wrong PINs lock the manager out at that till only: another till of the chain
/// still takes the manager's PIN.
async fn one_tills_wrong_pins_lock_the_manager_out_of_that_till_only(engine: Engine) {
    let shop = Shop::open(engine).await;
    managers(&shop).await;
    let (_, second_till) = shop.server.open_session("s1", "r2", "paul", "1357").await;
    for _ in 0..5 {
        shop.ask("mathis", "0000", "discount.ticket", 1000)
            .await
            .assert_error(401, "INVALID_CREDENTIAL");
    }
    shop.ask("mathis", "9876", "discount.ticket", 1000)
        .await
        .assert_error(429, "LOCKED_OUT");
    let body = json!({"managerSubject": "mathis", "pin": "9876", "operation": "discount.ticket", "percentBps": 1000});
    let elsewhere = shop.server.post("/v1/elevation-grants", &second_till, body).await;
    assert_eq!(elsewhere.status, 201, "{}", elsewhere.text);
    // The right PIN there does not lift the lock here.
    shop.ask("mathis", "9876", "discount.ticket", 1000)
        .await
        .assert_error(429, "LOCKED_OUT");
    shop.server.stop().await;
}

async fn a_right_pin_resets_the_count(engine: Engine) {
    let shop = Shop::open(engine).await;
    for _ in 0..4 {
        shop.ask("mathis", "0000", "discount.ticket", 1000)
            .await
            .assert_error(401, "INVALID_CREDENTIAL");
    }
    assert_eq!(shop.ask("mathis", "9876", "discount.ticket", 1000).await.status, 201);
    for _ in 0..4 {
        shop.ask("mathis", "0000", "discount.ticket", 1000)
            .await
            .assert_error(401, "INVALID_CREDENTIAL");
    }
    assert_eq!(shop.ask("mathis", "9876", "discount.ticket", 1000).await.status, 201);
    shop.server.stop().await;
}

async fn the_rate_limiter_answers_429_with_retry_after(engine: Engine) {
    let shop = Shop::open_with(engine, |c| {
        c.elevation_rate_limit = 3;
        c.elevation_rate_window_seconds = 60;
    })
    .await;
    for _ in 0..3 {
        assert_eq!(shop.ask("mathis", "9876", "discount.ticket", 1000).await.status, 201);
    }
    let limited = shop.ask("mathis", "9876", "discount.ticket", 1000).await;
    limited.assert_error(429, "RATE_LIMITED");
    let retry_after: u64 = limited.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry_after), "Retry-After {retry_after}");
    shop.server.clock.advance(Duration::from_secs(retry_after));
    assert_eq!(shop.ask("mathis", "9876", "discount.ticket", 1000).await.status, 201);
    shop.server.stop().await;
}

async fn the_error_table_of_the_elevation_channel(engine: Engine) {
    let shop = Shop::open_with(engine, |c| c.grants_max_age_seconds = 3_600).await;
    managers(&shop).await;
    // 401 INVALID_CREDENTIAL: wrong PIN and unknown manager look the same.
    let wrong = shop.ask("mathis", "1111", "discount.ticket", 1000).await;
    wrong.assert_error(401, "INVALID_CREDENTIAL");
    let unknown = shop.ask("nobody", "1111", "discount.ticket", 1000).await;
    assert_eq!(unknown.body, wrong.body);
    // 403 MISSING_AUTHORITY: no price:override, or a size beyond the manager's own limit.
    shop.ask("paul", "1357", "discount.ticket", 1000)
        .await
        .assert_error(403, "MISSING_AUTHORITY");
    shop.ask("lucie", "2468", "discount.ticket", 3000)
        .await
        .assert_error(403, "MISSING_AUTHORITY");
    assert_eq!(shop.ask("lucie", "2468", "discount.ticket", 2000).await.status, 201);
    // 422 NO_ELEVATION_REQUIRED: within the cashier's own 5 %.
    shop.ask("mathis", "9876", "discount.ticket", 500)
        .await
        .assert_error(422, "NO_ELEVATION_REQUIRED");
    // An overstated size still yields a grant of the same single scope.
    let big = shop.ask("mathis", "9876", "discount.line", 50_000).await;
    assert_eq!(big.body["scope"], "pos.discount.override");
    // 403 GRANTS_STALE: the manager's grants were written more than an hour ago.
    shop.server.clock.advance(Duration::from_secs(3_601));
    shop.ask("mathis", "9876", "discount.ticket", 1000)
        .await
        .assert_error(403, "GRANTS_STALE");
    shop.server.provision_staff("mathis", "manager", "9876").await;
    assert_eq!(shop.ask("mathis", "9876", "discount.ticket", 1000).await.status, 201);
    shop.server.stop().await;
}

async fn the_channel_can_be_switched_off(engine: Engine) {
    let shop = Shop::open_with(engine, |c| c.elevation_enabled = false).await;
    shop.ask("mathis", "9876", "discount.ticket", 1000)
        .await
        .assert_error(422, "ELEVATION_UNAVAILABLE");
    shop.server.stop().await;
}

async fn only_a_till_may_ask_and_the_size_is_required(engine: Engine) {
    let shop = Shop::open(engine).await;
    let body = json!({"managerSubject": "mathis", "pin": "9876", "operation": "discount.ticket", "percentBps": 1000});
    let jwt = shop.server.token("backoffice", "pos.elevation.request");
    shop.server
        .post("/v1/elevation-grants", &jwt, body)
        .await
        .assert_error(403, "FORBIDDEN");
    let no_size = json!({"managerSubject": "mathis", "pin": "9876", "operation": "discount.ticket"});
    let reply = shop.server.post("/v1/elevation-grants", &shop.till, no_size).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(reply.fields(), ["amountCents"]);
    let bad = json!({"managerSubject": "", "pin": 9876, "operation": "refund", "amountCents": -1});
    let reply = shop.server.post("/v1/elevation-grants", &shop.till, bad).await;
    assert_eq!(reply.fields(), ["managerSubject", "pin", "operation", "amountCents"]);
    shop.server.stop().await;
}

async fn every_outcome_is_in_the_audit_trail(engine: Engine) {
    let shop = Shop::open_with(engine, |c| c.pin_max_failures = 2).await;
    let token = shop.ask("mathis", "9876", "discount.ticket", 1000).await.str("token");
    assert_eq!(shop.with_token(&token, &shop.discounted("t1", 1000)).await.status, 201);
    shop.ask("mathis", "0000", "discount.ticket", 1000).await;
    shop.ask("mathis", "0000", "discount.ticket", 1000).await;
    shop.server
        .get("/v1/elevation-events", &shop.till)
        .await
        .assert_error(403, "FORBIDDEN");
    let admin = shop.server.token("auditor", "pos.staff.read");
    let trail = shop
        .server
        .get("/v1/elevation-events?managerSubject=mathis", &admin)
        .await;
    assert_eq!(trail.status, 200, "{}", trail.text);
    let outcomes: Vec<(String, String)> = trail.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["outcome"].as_str().unwrap().to_owned(),
                e["code"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let expected = [
        ("locked_out", "LOCKED_OUT"),
        ("refused", "INVALID_CREDENTIAL"),
        ("refused", "INVALID_CREDENTIAL"),
        ("spent", ""),
        ("issued", ""),
    ];
    assert_eq!(outcomes, expected.map(|(o, c)| (o.to_owned(), c.to_owned())));
    let spent = &trail.body["events"][3];
    assert_eq!(spent["transactionId"], "t1");
    assert_eq!(spent["registerId"], "r1");
    assert_eq!(spent["cashierSubject"], "camille");
    assert_eq!(spent["operation"], "discount.ticket");
    assert_eq!(spent["percentBps"], 1000);
    let by_register = shop.server.get("/v1/elevation-events?registerId=r9", &admin).await;
    assert_eq!(by_register.body["events"], json!([]));
    shop.server.stop().await;
}

on_both_engines!(
    a_grant_approves_one_sale_once,
    twenty_sales_racing_for_one_grant_spend_it_once,
    identical_approved_sales_in_flight_commit_once_and_replay,
    a_refused_sale_leaves_the_grant_unspent,
    a_grant_is_bound_to_its_session_scope_and_time,
    fifty_wrong_pins_lock_the_manager_after_five,
    one_tills_wrong_pins_lock_the_manager_out_of_that_till_only,
    a_right_pin_resets_the_count,
    the_rate_limiter_answers_429_with_retry_after,
    the_error_table_of_the_elevation_channel,
    the_channel_can_be_switched_off,
    only_a_till_may_ask_and_the_size_is_required,
    every_outcome_is_in_the_audit_trail,
);
