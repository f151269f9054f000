//! Card payments end to end (docs/payments.md): an attempt recorded before the terminal is
//! asked, its outcome, the sale that captures it in its own transaction, the orphan an
//! approval no sale took becomes, and the refusals that leave everything as it was.

use crate::harness::{Engine, Reply, Shop, line};
use crate::on_both_engines;
use futures::future::join_all;
use serde_json::{Value, json};
use std::time::Duration;

const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);

on_both_engines!(
    an_attempt_is_recorded_once_by_its_id,
    an_outcome_settles_an_attempt_once,
    no_field_of_an_outcome_keeps_a_card_number,
    a_sale_captures_its_approved_attempt_in_its_transaction,
    a_sale_refused_on_its_card_tender_changes_nothing,
    a_partial_approval_leaves_the_rest_to_other_tenders,
    ten_sales_racing_for_one_attempt_capture_it_once,
    an_approval_no_sale_took_becomes_an_orphan_to_void,
    a_till_reaches_its_own_session_s_attempts_only,
    a_return_gives_back_to_the_card_at_most_what_it_captured,
    ten_returns_racing_for_one_card_stay_within_its_capture,
    the_x_and_z_reports_add_up_each_terminal_and_the_audit_checks_them,
);

/// A sale of `mugs` mugs paid by `tenders` (as [`tender`] builds them).
fn sale_paid(shop: &Shop, transaction: &str, mugs: i64, tenders: Vec<Value>) -> Value {
    let mut sale = shop.sale(transaction, vec![line("l1", MUG, mugs)], 0);
    let due: i64 = tenders.iter().map(|t| t["applied"].as_i64().unwrap()).sum();
    sale["tenders"] = json!({"amountDue": due, "sequence": 1, "tenders": tenders});
    sale
}

fn tender(id: &str, method: &str, applied: i64, reference: Option<&str>) -> Value {
    json!({"id": id, "method": method, "applied": applied, "presented": applied, "change": 0,
           "forfeited": 0, "reference": reference})
}

impl Shop {
    async fn ask_card(&self, payment: &str, amount: i64) -> Reply {
        let body = json!({"paymentId": payment, "sessionId": self.session, "amountCents": amount,
                          "method": "card", "terminalId": "tpe-1", "provider": "acquirer-a"});
        self.server.post("/v1/payments", &self.till, body).await
    }

    async fn outcome(&self, payment: &str, body: Value) -> Reply {
        self.server
            .post(&format!("/v1/payments/{payment}/outcome"), &self.till, body)
            .await
    }

    async fn payment(&self, payment: &str) -> Value {
        let reply = self.server.get(&format!("/v1/payments/{payment}"), &self.till).await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        reply.body
    }

    /// An attempt approved for `amount` by the terminal.
    async fn approved(&self, payment: &str, amount: i64) {
        assert_eq!(self.ask_card(payment, amount).await.status, 201);
        let approved = self
            .outcome(
                payment,
                json!({"status": "authorized", "authorizedCents": amount,
                                     "authorizationCode": "A1B2C3", "cardBrand": "CB", "last4": "4242"}),
            )
            .await;
        assert_eq!(approved.status, 200, "{}", approved.text);
    }

    /// A return of `mugs` mugs of `original`, refunded by `tenders`.
    async fn return_to(&self, transaction: &str, original: &str, mugs: i64, tenders: Vec<Value>) -> Reply {
        let due: i64 = tenders.iter().map(|t| t["applied"].as_i64().unwrap()).sum();
        let body = json!({
            "transactionId": transaction, "originalTransactionId": original, "number": transaction,
            "storeId": "s1", "sellerId": "camille", "sessionId": self.session,
            "lines": [{"lineId": "l1", "quantity": mugs}],
            "tenders": {"amountDue": due, "sequence": 1, "tenders": tenders},
        });
        self.server.post("/v1/returns", &self.till, body).await
    }

    async fn sales_count(&self) -> i64 {
        self.server.count_rows("sales").await
    }
}

async fn an_attempt_is_recorded_once_by_its_id(engine: Engine) {
    let shop = Shop::open(engine).await;
    let first = shop.ask_card("pay-1", 1450).await;
    assert_eq!(first.status, 201, "{}", first.text);
    assert_eq!(first.body["state"], "requested");
    assert_eq!(first.body["kind"], "payment");
    assert_eq!(first.body["amountCents"], 1450);
    assert_eq!(first.body["outcome"], Value::Null);

    let again = shop.ask_card("pay-1", 1450).await;
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.body, first.body, "the same request is answered as first recorded");

    shop.ask_card("pay-1", 1500).await.assert_error(409, "CONFLICT");
    assert_eq!(shop.payment("pay-1").await["amountCents"], 1450);

    for (body, field) in [
        (
            json!({"paymentId": "pay-2", "sessionId": shop.session, "amountCents": 0, "method": "card"}),
            "amountCents",
        ),
        (
            json!({"paymentId": "pay-2", "sessionId": shop.session, "amountCents": 100, "method": "cash"}),
            "method",
        ),
        (
            json!({"paymentId": "pay-2", "sessionId": shop.session, "amountCents": 100, "method": "card",
                   "terminalId": "4970 1012 3456 7890"}),
            "terminalId",
        ),
    ] {
        let refused = shop.server.post("/v1/payments", &shop.till, body).await;
        refused.assert_error(400, "VALIDATION_FAILED");
        assert_eq!(refused.fields(), vec![field.to_owned()], "{}", refused.text);
    }
    shop.server
        .get("/v1/payments/pay-2", &shop.till)
        .await
        .assert_error(404, "NOT_FOUND");

    let admin = shop.server.admin();
    let closed = shop
        .server
        .post(
            &format!("/v1/register-sessions/{}/close", shop.session),
            &admin,
            json!({}),
        )
        .await;
    assert_eq!(closed.status, 200, "{}", closed.text);
    let late = json!({"paymentId": "pay-3", "sessionId": shop.session, "amountCents": 100, "method": "card"});
    shop.server
        .post("/v1/payments", &admin, late)
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    shop.server.stop().await;
}

async fn an_outcome_settles_an_attempt_once(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.ask_card("pay-1", 1450).await;
    // The answer was lost: the attempt waits for a later outcome.
    let lost = shop.outcome("pay-1", json!({"status": "unknown"})).await;
    assert_eq!(lost.status, 200, "{}", lost.text);
    assert_eq!(lost.body["state"], "unknown");

    // An approval of another amount than asked is not an `authorized`.
    shop.outcome("pay-1", json!({"status": "authorized", "authorizedCents": 1400}))
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    shop.outcome(
        "pay-1",
        json!({"status": "partially_authorized", "authorizedCents": 1450}),
    )
    .await
    .assert_error(422, "BUSINESS_RULE_VIOLATION");
    // Declines carry no amount or code.
    let declined_with_amount = shop
        .outcome("pay-1", json!({"status": "declined", "authorizedCents": 1450}))
        .await;
    declined_with_amount.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(declined_with_amount.fields(), vec!["authorizedCents".to_owned()]);
    assert_eq!(shop.payment("pay-1").await["state"], "unknown");

    let settled = json!({"status": "authorized", "authorizedCents": 1450, "authorizationCode": "A1B2C3",
                         "cardBrand": "CB", "last4": "4242", "entryMode": "contactless",
                         "terminalTransactionId": "000123", "terminalReceipt": "CB SANS CONTACT\nMONTANT 14,50 EUR"});
    let approved = shop.outcome("pay-1", settled.clone()).await;
    assert_eq!(approved.status, 200, "{}", approved.text);
    assert_eq!(approved.body["state"], "authorized");
    assert_eq!(approved.body["outcome"]["last4"], "4242");
    assert_eq!(approved.body["outcome"]["terminalReceipt"], settled["terminalReceipt"]);
    assert!(approved.body["authorizedAt"].is_string());

    let replayed = shop.outcome("pay-1", settled).await;
    assert_eq!(replayed.status, 200, "{}", replayed.text);
    assert_eq!(replayed.body, approved.body, "the same outcome again changes nothing");
    shop.outcome("pay-1", json!({"status": "declined"}))
        .await
        .assert_error(409, "CONFLICT");
    assert_eq!(shop.payment("pay-1").await, approved.body);

    shop.ask_card("pay-2", 900).await;
    let declined = shop
        .outcome("pay-2", json!({"status": "declined", "cardBrand": "VISA"}))
        .await;
    assert_eq!(declined.body["state"], "declined", "{}", declined.text);
    shop.outcome("pay-2", json!({"status": "authorized", "authorizedCents": 900}))
        .await
        .assert_error(409, "CONFLICT");
    shop.server
        .post("/v1/payments/pay-2/void", &shop.till, json!({}))
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    shop.server
        .post("/v1/payments/pay-9/outcome", &shop.till, json!({"status": "declined"}))
        .await
        .assert_error(404, "NOT_FOUND");
    shop.server.stop().await;
}

async fn no_field_of_an_outcome_keeps_a_card_number(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.ask_card("pay-1", 1450).await;
    let number = "4970 1012 3456 7890";
    for (field, value) in [
        ("last4", "42424"),
        ("last4", "42a4"),
        ("cardBrand", number),
        ("authorizationCode", "4970101234567890"),
        ("entryMode", "4970-1012-3456-7890"),
        ("terminalTransactionId", number),
        ("terminalReceipt", "CB\n4970 1012 3456 7890\nMERCI"),
    ] {
        let mut body = json!({"status": "authorized", "authorizedCents": 1450});
        body[field] = json!(value);
        let refused = shop.outcome("pay-1", body).await;
        refused.assert_error(400, "VALIDATION_FAILED");
        assert_eq!(refused.fields(), vec![field.to_owned()], "{}", refused.text);
        assert!(
            !refused.text.contains("4970"),
            "a refusal never repeats the number: {}",
            refused.text
        );
    }
    assert_eq!(shop.payment("pay-1").await["state"], "requested");
    // The whole number, in each form sent (a shorter run of digits may be in any table).
    for form in [number, "4970101234567890", "4970-1012-3456-7890"] {
        let stored = shop.server.tables_holding(engine, form).await;
        assert!(stored.is_empty(), "no table holds {form}: {stored:?}");
    }
    shop.server.stop().await;
}

async fn a_sale_captures_its_approved_attempt_in_its_transaction(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.approved("pay-1", 2900).await;
    let sale = sale_paid(&shop, "t1", 2, vec![tender("p1", "card", 2900, Some("pay-1"))]);
    let sold = shop.finalize(&sale).await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    let captured = shop.payment("pay-1").await;
    assert_eq!(captured["state"], "captured");
    assert_eq!(captured["capturedBy"], "t1");
    assert!(captured["capturedAt"].is_string());

    // The till sends the sale again (its answer was lost): the same answer, nothing captured twice.
    let again = shop.finalize(&sale).await;
    assert_eq!((again.status, &again.body), (sold.status, &sold.body), "{}", again.text);
    assert_eq!(shop.payment("pay-1").await, captured);

    // Another sale naming the captured attempt is refused.
    let other = sale_paid(&shop, "t2", 2, vec![tender("p1", "card", 2900, Some("pay-1"))]);
    let refused = shop.finalize(&other).await;
    refused.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(refused.text.contains("tenders.tenders.0"), "{}", refused.text);

    let (events, _) = crate::events::read_feed(&shop.server, "types=payment.captured", 1).await;
    assert_eq!(
        events[0]["data"],
        json!({"paymentId": "pay-1", "transactionId": "t1", "amountCents": 2900})
    );
    assert_eq!(events[0]["registerId"], "r1");
    shop.server.stop().await;
}

async fn a_sale_refused_on_its_card_tender_changes_nothing(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.approved("pay-ok", 1450).await;
    shop.ask_card("pay-asked", 1450).await;
    shop.ask_card("pay-declined", 1450).await;
    shop.outcome("pay-declined", json!({"status": "declined"})).await;
    let (other_session, other_till) = shop.server.open_session("s1", "r2", "mathis", "9876").await;
    let body = json!({"paymentId": "pay-r2", "sessionId": other_session, "amountCents": 1450, "method": "card"});
    assert_eq!(shop.server.post("/v1/payments", &other_till, body).await.status, 201);
    let approval = json!({"status": "authorized", "authorizedCents": 1450});
    assert_eq!(
        shop.server
            .post("/v1/payments/pay-r2/outcome", &other_till, approval)
            .await
            .status,
        200
    );

    let (before, shelf) = (shop.sales_count().await, shop.stock(MUG).await);
    for (case, tenders) in [
        ("no such attempt", vec![tender("p1", "card", 1450, Some("pay-none"))]),
        ("not approved yet", vec![tender("p1", "card", 1450, Some("pay-asked"))]),
        ("declined", vec![tender("p1", "card", 1450, Some("pay-declined"))]),
        ("of another session", vec![tender("p1", "card", 1450, Some("pay-r2"))]),
        (
            "of another amount",
            vec![
                tender("p0", "cash", 450, None),
                tender("p1", "card", 1000, Some("pay-ok")),
            ],
        ),
    ] {
        let index = tenders.len() - 1;
        let refused = shop.finalize(&sale_paid(&shop, "t1", 1, tenders)).await;
        refused.assert_error(422, "BUSINESS_RULE_VIOLATION");
        assert!(
            refused.text.contains(&format!("tenders.tenders.{index}")),
            "{case}: {}",
            refused.text
        );
    }
    assert_eq!(shop.sales_count().await, before, "no refused sale was booked");
    assert_eq!(shop.payment("pay-ok").await["state"], "authorized");
    assert_eq!(shop.stock(MUG).await, shelf, "no unit left the shelf");

    // Attempts are mandatory when the deployment says so.
    shop.server.stop().await;
    let strict = Shop::open_with(engine, |config| config.card_attempts_required = true).await;
    let plain = strict.sale("t1", vec![line("l1", MUG, 1)], 1450);
    let refused = strict.finalize(&plain).await;
    refused.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(refused.text.contains("tenders.tenders.0"), "{}", refused.text);
    strict.approved("pay-1", 1450).await;
    let through = sale_paid(&strict, "t1", 1, vec![tender("p1", "card", 1450, Some("pay-1"))]);
    assert_eq!(strict.finalize(&through).await.status, 201);
    strict.server.stop().await;
}

async fn a_partial_approval_leaves_the_rest_to_other_tenders(engine: Engine) {
    let shop = Shop::open(engine).await;
    assert_eq!(shop.ask_card("pay-1", 2900).await.status, 201);
    let partial = shop
        .outcome(
            "pay-1",
            json!({"status": "partially_authorized", "authorizedCents": 2000}),
        )
        .await;
    assert_eq!(partial.body["state"], "partially_authorized", "{}", partial.text);

    // The approval alone does not pay the sale.
    let short = sale_paid(&shop, "t1", 2, vec![tender("p1", "card", 2000, Some("pay-1"))]);
    let mut short = short;
    short["tenders"]["amountDue"] = json!(2900);
    shop.finalize(&short).await.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert_eq!(shop.payment("pay-1").await["state"], "partially_authorized");

    let sale = sale_paid(
        &shop,
        "t1",
        2,
        vec![
            tender("p1", "card", 2000, Some("pay-1")),
            tender("p2", "cash", 900, None),
        ],
    );
    let sold = shop.finalize(&sale).await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    assert_eq!(shop.payment("pay-1").await["state"], "captured");
    shop.server.stop().await;
}

async fn ten_sales_racing_for_one_attempt_capture_it_once(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.approved("pay-1", 1450).await;
    let shelf = shop.stock(MUG).await;
    let sales: Vec<Value> = (0..10)
        .map(|i| {
            sale_paid(
                &shop,
                &format!("t{i}"),
                1,
                vec![tender("p1", "card", 1450, Some("pay-1"))],
            )
        })
        .collect();
    let replies = join_all(sales.iter().map(|sale| shop.finalize(sale))).await;
    let booked: Vec<usize> = (0..10).filter(|i| replies[*i].status == 201).collect();
    assert_eq!(
        booked.len(),
        1,
        "{:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    for reply in replies.iter().filter(|reply| reply.status != 201) {
        reply.assert_error(422, "BUSINESS_RULE_VIOLATION");
    }
    assert_eq!(shop.sales_count().await, 1);
    assert_eq!(shop.payment("pay-1").await["capturedBy"], format!("t{}", booked[0]));
    assert_eq!(shop.stock(MUG).await, shelf - 1, "one unit left the shelf");
    shop.server.stop().await;
}

async fn an_approval_no_sale_took_becomes_an_orphan_to_void(engine: Engine) {
    let shop = Shop::open_with(engine, |config| config.payment_orphan_seconds = 120).await;
    shop.approved("pay-1", 1450).await;
    shop.approved("pay-2", 900).await;
    let sold = shop
        .finalize(&sale_paid(
            &shop,
            "t1",
            1,
            vec![tender("p1", "card", 1450, Some("pay-1"))],
        ))
        .await;
    assert_eq!(sold.status, 201, "{}", sold.text);

    shop.server.clock.advance(Duration::from_secs(121));
    let mut orphan = Value::Null;
    for _ in 0..100 {
        orphan = shop.payment("pay-2").await;
        if orphan["state"] == "orphaned" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(orphan["state"], "orphaned");
    assert!(orphan["orphanedAt"].is_string());
    assert_eq!(
        shop.payment("pay-1").await["state"],
        "captured",
        "a captured attempt stays captured"
    );

    let (events, _) = crate::events::read_feed(&shop.server, "types=payment.orphaned", 1).await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0]["data"],
        json!({"paymentId": "pay-2", "sessionId": shop.session, "authorizedCents": 900})
    );
    let listed = shop.server.get("/v1/payments?state=orphaned", &shop.till).await;
    let ids: Vec<&str> = listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["paymentId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["pay-2"], "{}", listed.text);

    // A sale can no longer take it; the terminal gives it back.
    let late = sale_paid(&shop, "t2", 1, vec![tender("p1", "card", 900, Some("pay-2"))]);
    shop.finalize(&late).await.assert_error(422, "BUSINESS_RULE_VIOLATION");
    let voided = shop.server.post("/v1/payments/pay-2/void", &shop.till, json!({})).await;
    assert_eq!(voided.status, 200, "{}", voided.text);
    assert_eq!(voided.body["state"], "voided");
    let again = shop.server.post("/v1/payments/pay-2/void", &shop.till, json!({})).await;
    assert_eq!(again.body, voided.body, "a void sent again changes nothing");
    shop.server
        .post("/v1/payments/pay-1/void", &shop.till, json!({}))
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    shop.server.stop().await;
}

async fn a_till_reaches_its_own_session_s_attempts_only(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.approved("pay-1", 1450).await;
    let (other_session, other_till) = shop.server.open_session("s1", "r2", "mathis", "9876").await;
    shop.server
        .get("/v1/payments/pay-1", &other_till)
        .await
        .assert_error(403, "FORBIDDEN");
    shop.server
        .post("/v1/payments/pay-1/outcome", &other_till, json!({"status": "declined"}))
        .await
        .assert_error(403, "FORBIDDEN");
    let foreign = json!({"paymentId": "pay-2", "sessionId": shop.session, "amountCents": 100, "method": "card"});
    shop.server
        .post("/v1/payments", &other_till, foreign)
        .await
        .assert_error(403, "FORBIDDEN");
    let own = shop.server.get("/v1/payments", &other_till).await;
    assert_eq!(own.body["items"], json!([]), "{}", own.text);

    // The back office reads every session's with pos.sales.read, and writes none with it.
    let reader = shop.server.token("erp", "pos.sales.read");
    let all = shop
        .server
        .get(&format!("/v1/payments?sessionId={}", shop.session), &reader)
        .await;
    assert_eq!(all.status, 200, "{}", all.text);
    assert_eq!(all.body["items"][0]["paymentId"], "pay-1");
    let write = json!({"paymentId": "pay-3", "sessionId": other_session, "amountCents": 100, "method": "card"});
    shop.server
        .post("/v1/payments", &reader, write)
        .await
        .assert_error(403, "FORBIDDEN");
    shop.server
        .get("/v1/payments?state=paid", &reader)
        .await
        .assert_error(400, "VALIDATION_FAILED");
    shop.server.stop().await;
}

async fn a_return_gives_back_to_the_card_at_most_what_it_captured(engine: Engine) {
    let shop = Shop::open(engine).await;
    // Four mugs: one on the card, the rest in cash.
    shop.approved("pay-1", 1450).await;
    let sale = sale_paid(
        &shop,
        "t1",
        4,
        vec![
            tender("p1", "card", 1450, Some("pay-1")),
            tender("p2", "cash", 3 * 1450, None),
        ],
    );
    assert_eq!(shop.finalize(&sale).await.status, 201);
    shop.approved("pay-2", 1450).await;
    let other = sale_paid(&shop, "t2", 1, vec![tender("p1", "card", 1450, Some("pay-2"))]);
    assert_eq!(shop.finalize(&other).await.status, 201);
    let sales = shop.sales_count().await;

    // Refused, naming the tender, and nothing is written: more than the card took, a payment
    // of another sale, a payment that does not exist, a payment not captured.
    shop.approved("pay-3", 700).await;
    for (reference, mugs, why) in [
        ("pay-1", 2, "only 14.50 is left"),
        ("pay-2", 1, "not captured by the original sale"),
        ("pay-9", 1, "no such payment"),
        ("pay-3", 1, "authorized, not captured"),
    ] {
        let refused = shop
            .return_to(
                "r0",
                "t1",
                mugs,
                vec![tender("b1", "card", mugs * 1450, Some(reference))],
            )
            .await;
        refused.assert_error(422, "BUSINESS_RULE_VIOLATION");
        assert!(refused.text.contains("tenders.tenders.0"), "{}", refused.text);
        assert!(refused.text.contains(why), "{why}: {}", refused.text);
    }
    assert_eq!(shop.sales_count().await, sales);
    assert_eq!(shop.payment("pay-1").await["refundedCents"], 0);

    // One mug back to the card: the refund is an attempt of its own, and the payment counts it.
    let returned = shop
        .return_to("r1", "t1", 1, vec![tender("b1", "card", 1450, Some("pay-1"))])
        .await;
    assert_eq!(returned.status, 201, "{}", returned.text);
    let payment = shop.payment("pay-1").await;
    assert_eq!(
        (payment["state"].as_str(), payment["refundedCents"].as_i64()),
        (Some("captured"), Some(1450))
    );
    let listed = shop.server.get("/v1/payments?state=refunded", &shop.till).await;
    let refunds = listed.body["items"].as_array().unwrap().clone();
    assert_eq!(refunds.len(), 1, "{}", listed.text);
    let refund = &refunds[0];
    assert_eq!(refund["kind"], "refund");
    assert_eq!(refund["refundOf"], "pay-1");
    assert_eq!(refund["capturedBy"], "r1");
    assert_eq!(refund["amountCents"], 1450);
    assert_eq!(refund["terminalId"], "tpe-1", "counted on the payment's terminal");

    // Sent again (its answer was lost): the same answer, nothing refunded twice.
    let again = shop
        .return_to("r1", "t1", 1, vec![tender("b1", "card", 1450, Some("pay-1"))])
        .await;
    assert_eq!((again.status, &again.body), (returned.status, &returned.body));
    assert_eq!(shop.payment("pay-1").await["refundedCents"], 1450);

    // The card is spent: the next mug goes back in cash.
    let over = shop
        .return_to("r2", "t1", 1, vec![tender("b1", "card", 1450, Some("pay-1"))])
        .await;
    over.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(over.text.contains("only 0.00 is left"), "{}", over.text);
    let cash = shop
        .return_to("r2", "t1", 1, vec![tender("b1", "cash", 1450, None)])
        .await;
    assert_eq!(cash.status, 201, "{}", cash.text);

    let (events, _) = crate::events::read_feed(&shop.server, "types=payment.refunded", 1).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["registerId"], "r1");
    assert_eq!(
        events[0]["data"],
        json!({"paymentId": "pay-1", "refundId": refund["paymentId"], "transactionId": "r1", "amountCents": 1450})
    );
    shop.server.stop().await;
}

async fn ten_returns_racing_for_one_card_stay_within_its_capture(engine: Engine) {
    let shop = Shop::open(engine).await;
    // Ten mugs, two of them on the card.
    shop.approved("pay-1", 2 * 1450).await;
    let sale = sale_paid(
        &shop,
        "t1",
        10,
        vec![
            tender("p1", "card", 2 * 1450, Some("pay-1")),
            tender("p2", "cash", 8 * 1450, None),
        ],
    );
    assert_eq!(shop.finalize(&sale).await.status, 201);
    let racer = &shop;
    let replies = join_all((0..10).map(|i| {
        let transaction = format!("r{i}");
        async move {
            racer
                .return_to(&transaction, "t1", 1, vec![tender("b1", "card", 1450, Some("pay-1"))])
                .await
        }
    }))
    .await;
    let booked = replies.iter().filter(|reply| reply.status == 201).count();
    for reply in replies.iter().filter(|reply| reply.status != 201) {
        reply.assert_error(422, "BUSINESS_RULE_VIOLATION");
    }
    // Each racer that lost saw the winner's refund and tried again: the card takes two.
    assert_eq!(booked, 2, "{:?}", replies.iter().map(|r| r.status).collect::<Vec<_>>());
    assert_eq!(shop.payment("pay-1").await["refundedCents"], 2 * 1450);
    let listed = shop.server.get("/v1/payments?state=refunded", &shop.till).await;
    let refunded: i64 = listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|refund| refund["amountCents"].as_i64().unwrap())
        .sum();
    assert_eq!(refunded, 2 * 1450, "one refund attempt per return kept");
    shop.server.stop().await;
}

async fn the_x_and_z_reports_add_up_each_terminal_and_the_audit_checks_them(engine: Engine) {
    let shop = Shop::open_with(engine, |config| config.payment_orphan_seconds = 120).await;
    // Terminal 1: a sale's capture, an orphan voided since, a refund by a return.
    shop.approved("pay-1", 2900).await;
    let sold = shop
        .finalize(&sale_paid(
            &shop,
            "t1",
            2,
            vec![tender("p1", "card", 2900, Some("pay-1"))],
        ))
        .await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    shop.approved("pay-2", 900).await;
    shop.server.clock.advance(Duration::from_secs(121));
    for _ in 0..100 {
        if shop.payment("pay-2").await["state"] == "orphaned" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let voided = shop.server.post("/v1/payments/pay-2/void", &shop.till, json!({})).await;
    assert_eq!(voided.body["state"], "voided", "{}", voided.text);
    let back = shop
        .return_to("r1", "t1", 1, vec![tender("b1", "card", 1450, Some("pay-1"))])
        .await;
    assert_eq!(back.status, 201, "{}", back.text);
    // Terminal 2: a decline and an answer lost.
    for (payment, status) in [("pay-3", "declined"), ("pay-4", "unknown")] {
        let body = json!({"paymentId": payment, "sessionId": shop.session, "amountCents": 500,
                          "method": "card", "terminalId": "tpe-2", "provider": "acquirer-b"});
        assert_eq!(shop.server.post("/v1/payments", &shop.till, body).await.status, 201);
        assert_eq!(shop.outcome(payment, json!({"status": status})).await.status, 200);
    }
    let expected = json!([
        {"terminalId": "tpe-1", "provider": "acquirer-a", "authorizedCents": 3800, "capturedCents": 2900,
         "refundedCents": 1450, "orphanCount": 1, "voidCount": 1, "unknownCount": 0},
        {"terminalId": "tpe-2", "provider": "acquirer-b", "authorizedCents": 0, "capturedCents": 0,
         "refundedCents": 0, "orphanCount": 0, "voidCount": 0, "unknownCount": 1},
    ]);
    let drawer = format!("/v1/register-sessions/{}", shop.session);
    let x = shop.server.get(&format!("{drawer}/x-report"), &shop.till).await;
    assert_eq!(x.body["cardPayments"], expected, "{}", x.text);

    let admin = shop.server.admin();
    let z = shop.server.post(&format!("{drawer}/close"), &admin, json!({})).await;
    assert_eq!(z.status, 200, "{}", z.text);
    assert_eq!(z.body["cardPayments"], expected, "{}", z.text);
    assert_eq!(shop.verify("r1").await["ok"], true);

    // The lost answer is settled after the close: the ledger moves, the sealed shift does not.
    let settled = shop.outcome("pay-4", json!({"status": "declined"})).await;
    assert_eq!(settled.body["state"], "declined", "{}", settled.text);
    let again = shop.server.post(&format!("{drawer}/close"), &admin, json!({})).await;
    assert_eq!(again.body, z.body);
    assert_eq!(
        shop.verify("r1").await["ok"],
        true,
        "the audit reads the shift as closed"
    );

    // What the close kept is part of the sealed record: one changed amount fails the audit.
    let lift = match engine {
        Engine::Sqlite => "DROP TRIGGER shift_card_attempts_no_update",
        Engine::Postgres => "ALTER TABLE shift_card_attempts DISABLE TRIGGER USER",
    };
    shop.server
        .tamper(
            engine,
            &[
                lift,
                "UPDATE shift_card_attempts SET authorized_cents = 2800 WHERE payment_id = 'pay-1'",
            ],
        )
        .await;
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], false, "{verdict}");
    shop.server.stop().await;
}
