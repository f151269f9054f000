//! The cash drawer: movements besides sales, the X report, and a close that seals what the
//! cashier counted (docs/drawer.md).

use crate::harness::Engine;
use crate::harness::{Shop, line};
use crate::on_both_engines;
use serde_json::{Value, json};

/// As the shop's catalog prices it.
const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);

/// A mug sold by card and two paid in cash (one with change), on the shop's till.
async fn sell(shop: &Shop) {
    let by_card = shop.sale("t1", vec![line("l1", MUG, 1)], MUG.1);
    assert_eq!(shop.finalize(&by_card).await.status, 201);
    for (transaction, presented) in [("t2", MUG.1), ("t3", MUG.1 + 550)] {
        let mut cash = shop.sale(transaction, vec![line("l1", MUG, 1)], MUG.1);
        cash["tenders"]["tenders"] = json!([{"id": "p1", "method": "cash", "applied": MUG.1,
            "presented": presented, "change": presented - MUG.1, "forfeited": 0}]);
        let sold = shop.finalize(&cash).await;
        assert_eq!(sold.status, 201, "{}", sold.text);
    }
}

fn movement(id: &str, kind: &str, amount: i64) -> Value {
    json!({"movementId": id, "kind": kind, "amountCents": amount, "reason": "test"})
}

fn tender<'a>(report: &'a Value, method: &str) -> &'a Value {
    report["tenders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["method"] == method)
        .unwrap_or_else(|| panic!("no {method} line in {report}"))
}

async fn the_x_report_equals_the_z_report_and_counts_are_sealed(engine: Engine) {
    let shop = Shop::open(engine).await;
    sell(&shop).await;
    let drawer = format!("/v1/register-sessions/{}", shop.session);
    for (id, kind, amount) in [
        ("m1", "paid_in", 5_000),
        ("m2", "paid_out", 1_200),
        ("m3", "drop", 2_000),
        ("m4", "no_sale", 0),
    ] {
        let moved = shop
            .server
            .post(
                &format!("{drawer}/cash-movements"),
                &shop.till,
                movement(id, kind, amount),
            )
            .await;
        assert_eq!(moved.status, 201, "{}", moved.text);
    }
    let x = shop.server.get(&format!("{drawer}/x-report"), &shop.till).await;
    assert_eq!(x.status, 200, "{}", x.text);
    // No float; two mugs in cash, one paid in, one paid out, one drop.
    let expected_cash = 2 * MUG.1 + 5_000 - 1_200 - 2_000;
    assert_eq!(x.body["expectedCashCents"], expected_cash);
    assert_eq!(tender(&x.body, "cash")["expectedCents"], expected_cash);
    assert_eq!(tender(&x.body, "card")["expectedCents"], MUG.1);
    assert_eq!(
        x.body["movements"],
        json!({"paidInCents": 5_000, "paidOutCents": 1_200, "dropCents": 2_000, "noSaleCount": 1})
    );

    let counted = json!({"counted": [
        {"method": "cash", "countedCents": expected_cash - 100},
        {"method": "card", "countedCents": MUG.1},
        {"method": "cheque", "countedCents": 700},
    ]});
    let z = shop
        .server
        .post(&format!("{drawer}/close"), &shop.server.admin(), counted)
        .await;
    assert_eq!(z.status, 200, "{}", z.text);
    for field in [
        "salesCount",
        "totalCents",
        "vat",
        "movements",
        "expectedCashCents",
        "openingFloatCents",
    ] {
        assert_eq!(x.body[field], z.body[field], "{field} differs between X and Z");
    }
    assert_eq!(x.body["salesCount"], 3);
    let differences: Vec<(&str, &Value, &Value)> = z.body["tenders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["method"].as_str().unwrap(),
                &t["expectedCents"],
                &t["differenceCents"],
            )
        })
        .collect();
    assert_eq!(
        differences,
        [
            ("card", &json!(MUG.1), &json!(0)),
            ("cash", &json!(expected_cash), &json!(-100)),
            ("cheque", &json!(0), &json!(700)),
        ]
    );
    for method in ["card", "cash"] {
        assert_eq!(
            tender(&x.body, method)["appliedCents"],
            tender(&z.body, method)["appliedCents"]
        );
        assert!(
            tender(&x.body, method).get("countedCents").is_none(),
            "an X report counts nothing"
        );
    }
    // Closed: no X report, no movement; the Z report stays as sealed.
    shop.server
        .get(&format!("{drawer}/x-report"), &shop.server.admin())
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    shop.server
        .post(
            &format!("{drawer}/cash-movements"),
            &shop.server.admin(),
            movement("m5", "drop", 10),
        )
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    let again = shop
        .server
        .post(&format!("{drawer}/close"), &shop.server.admin(), json!({}))
        .await;
    assert_eq!(again.body, z.body);
    assert_eq!(shop.verify("r1").await["ok"], true);

    // The counts are part of the sealed record: one changed count fails the audit.
    let lift = match engine {
        Engine::Sqlite => "DROP TRIGGER session_counts_no_update",
        Engine::Postgres => "ALTER TABLE session_counts DISABLE TRIGGER USER",
    };
    shop.server
        .tamper(
            engine,
            &[
                lift,
                "UPDATE session_counts SET counted_cents = counted_cents + 100 WHERE method = 'cash'",
            ],
        )
        .await;
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], false, "{verdict}");
    shop.server.stop().await;
}

async fn a_changed_movement_fails_the_audit(engine: Engine) {
    let shop = Shop::open(engine).await;
    sell(&shop).await;
    let drawer = format!("/v1/register-sessions/{}", shop.session);
    let moved = shop
        .server
        .post(
            &format!("{drawer}/cash-movements"),
            &shop.till,
            movement("m1", "drop", 1_000),
        )
        .await;
    assert_eq!(moved.status, 201, "{}", moved.text);
    let counted = json!({"counted": [{"method": "cash", "countedCents": 2 * MUG.1 - 1_000}]});
    let z = shop
        .server
        .post(&format!("{drawer}/close"), &shop.server.admin(), counted)
        .await;
    assert_eq!(tender(&z.body, "cash")["differenceCents"], 0, "{}", z.text);
    assert_eq!(shop.verify("r1").await["ok"], true);
    let lift = match engine {
        Engine::Sqlite => "DROP TRIGGER cash_movements_no_update",
        Engine::Postgres => "ALTER TABLE cash_movements DISABLE TRIGGER USER",
    };
    shop.server
        .tamper(
            engine,
            &[
                lift,
                "UPDATE cash_movements SET amount_cents = 900 WHERE movement_id = 'm1'",
            ],
        )
        .await;
    assert_eq!(shop.verify("r1").await["ok"], false);
    shop.server.stop().await;
}

async fn a_movement_is_recorded_once_and_refused_clearly(engine: Engine) {
    let shop = Shop::open(engine).await;
    let path = format!("/v1/register-sessions/{}/cash-movements", shop.session);
    let events_before = shop.server.count_rows("technical_events").await;
    let first = shop
        .server
        .post(&path, &shop.till, movement("m1", "paid_in", 2_500))
        .await;
    assert_eq!(first.status, 201, "{}", first.text);
    assert_eq!(first.body["kind"], "paid_in");
    assert_eq!(first.body["recordedBy"], "camille");
    assert_eq!(first.body["fiscal"]["chain"], "event");
    let again = shop
        .server
        .post(&path, &shop.till, movement("m1", "paid_in", 2_500))
        .await;
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.body, first.body);
    shop.server
        .post(&path, &shop.till, movement("m1", "paid_in", 2_600))
        .await
        .assert_error(409, "CONFLICT");
    assert_eq!(shop.server.count_rows("cash_movements").await, 1);
    assert_eq!(shop.server.count_rows("technical_events").await, events_before + 1);

    // The amount fits the kind; the kind is one of four.
    let bad = shop.server.post(&path, &shop.till, movement("m2", "no_sale", 5)).await;
    bad.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(bad.fields(), ["amountCents"]);
    let bad = shop.server.post(&path, &shop.till, movement("m2", "paid_out", 0)).await;
    assert_eq!(bad.fields(), ["amountCents"]);
    let bad = shop
        .server
        .post(&path, &shop.till, json!({"kind": "refund", "amountCents": -1}))
        .await;
    assert_eq!(bad.fields(), ["movementId", "kind", "amountCents"]);

    // Who may reach the drawer: its own till, or the back office with the scope.
    shop.server.provision_staff("lea", "cashier", "5555").await;
    let (_, other_till) = shop.server.open_session("s1", "r2", "lea", "5555").await;
    shop.server
        .post(&path, &other_till, movement("m3", "paid_in", 100))
        .await
        .assert_error(403, "FORBIDDEN");
    let seller = shop.server.token("someone", "pos.sales.finalize");
    shop.server
        .post(&path, &seller, movement("m3", "paid_in", 100))
        .await
        .assert_error(403, "FORBIDDEN");
    let reader = shop.server.token("auditor", "pos.fiscal.read");
    shop.server
        .post(&path, &reader, movement("m3", "paid_in", 100))
        .await
        .assert_error(403, "FORBIDDEN");
    let manager = shop.server.token("mathis", "pos.sessions.close");
    let by_manager = shop.server.post(&path, &manager, movement("m3", "drop", 100)).await;
    assert_eq!(by_manager.status, 201, "{}", by_manager.text);
    assert_eq!(by_manager.body["recordedBy"], "mathis");
    shop.server
        .post(
            "/v1/register-sessions/ses_nope/cash-movements",
            &manager,
            movement("m4", "drop", 1),
        )
        .await
        .assert_error(404, "NOT_FOUND");
    shop.server
        .get(&format!("/v1/register-sessions/{}/x-report", shop.session), &other_till)
        .await
        .assert_error(403, "FORBIDDEN");
    assert_eq!(shop.server.count_rows("cash_movements").await, 2);

    // Each movement is in the feed once (on PostgreSQL, once the feed has numbered it).
    let reader = shop.server.token("erp", "pos.events.read");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let feed = shop.server.get("/v1/events?types=cash.moved", &reader).await;
        let ids: Vec<&str> = feed.body["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["data"]["movementId"].as_str().unwrap())
            .collect();
        if ids.len() < 2 && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            continue;
        }
        assert_eq!(ids, ["m1", "m3"], "{}", feed.text);
        break;
    }
    shop.server.stop().await;
}

async fn a_close_refuses_a_bad_count_and_changes_nothing(engine: Engine) {
    let shop = Shop::open(engine).await;
    let path = format!("/v1/register-sessions/{}/close", shop.session);
    let admin = shop.server.admin();
    let twice = json!({"counted": [{"method": "cash", "countedCents": 1}, {"method": "cash", "countedCents": 2}]});
    let bad = shop.server.post(&path, &admin, twice).await;
    bad.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(bad.fields(), ["counted.1.method"]);
    let unknown = json!({"counted": [{"method": "bitcoin", "countedCents": -1}]});
    let bad = shop.server.post(&path, &admin, unknown).await;
    assert_eq!(bad.fields(), ["counted.0.method", "counted.0.countedCents"]);
    let read = shop
        .server
        .get(&format!("/v1/register-sessions/{}", shop.session), &admin)
        .await;
    assert_eq!(read.body["status"], "open", "a refused close closes nothing");
    // No body at all is a close without counts.
    let closed = shop
        .server
        .send(|client, base| client.post(format!("{base}{path}")).bearer_auth(&admin))
        .await;
    assert_eq!(closed.status, 200, "{}", closed.text);
    assert!(closed.body["tenders"].as_array().unwrap().is_empty(), "{}", closed.text);
    shop.server.stop().await;
}

on_both_engines!(
    the_x_report_equals_the_z_report_and_counts_are_sealed,
    a_changed_movement_fails_the_audit,
    a_movement_is_recorded_once_and_refused_clearly,
    a_close_refuses_a_bad_count_and_changes_nothing,
);
