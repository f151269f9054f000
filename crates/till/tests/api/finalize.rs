//! finalizeSale end to end: every rule of the interface document's finalize section, each row
//! of its error table, the validation matrix, idempotency and concurrency. Every 201 body is
//! checked against a JSON Schema written from the interface document.

use crate::harness::{BAGUETTE, BOOK, Engine, MUG, Shop, TestServer, line, sku};
use crate::on_both_engines;
use futures::StreamExt;
use futures::future::join_all;
use futures::stream::FuturesUnordered;
use serde_json::{Value, json};

async fn a_sale_is_priced_from_the_catalog_not_the_cart(engine: Engine) {
    let shop = Shop::open(engine).await;
    let mut stale = line("l1", MUG, 2);
    stale["unitPrice"] = json!(999);
    stale["vatRate"] = json!(10);
    // The till sent a stale price but asks for the right total: the server's price stands.
    let reply = shop
        .finalize(&shop.sale("t1", vec![stale.clone(), line("l2", BAGUETTE, 1)], 3030))
        .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let transaction = &reply.body["transaction"];
    assert_eq!(transaction["lines"][0]["unitPrice"], 1450);
    assert_eq!(
        transaction["totals"],
        json!({"subtotal": 3030, "total": 3030, "itemCount": 3, "lineCount": 2})
    );
    assert_eq!(transaction["status"], "completed");
    assert_eq!(transaction["type"], "sale");
    assert_eq!(reply.body["ticket"]["totalCents"], 3030);
    // A total computed from the stale price is refused, and the message says where it differs.
    let refused = shop.finalize(&shop.sale("t2", vec![stale], 1998)).await;
    refused.assert_error(422, "BUSINESS_RULE_VIOLATION");
    let message = refused.body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("19.98") && message.contains("29.00") && message.contains("line l1"),
        "{message}"
    );
    shop.server.stop().await;
}

async fn the_cash_rounding_tolerance_is_a_setting(engine: Engine) {
    let shop = Shop::open_with(engine, |c| c.cash_rounding_tolerance_cents = 2).await;
    assert_eq!(
        shop.finalize(&shop.sale("t1", vec![line("l1", MUG, 1)], 1448))
            .await
            .status,
        201
    );
    assert_eq!(
        shop.finalize(&shop.sale("t2", vec![line("l1", MUG, 1)], 1452))
            .await
            .status,
        201
    );
    shop.finalize(&shop.sale("t3", vec![line("l1", MUG, 1)], 1447))
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    shop.server.stop().await;
}

async fn custom_lines_are_trusted_and_move_no_stock(engine: Engine) {
    let shop = Shop::open(engine).await;
    let gift_card = json!({"id": "g", "skuId": null, "quantity": 1, "unitPrice": 5000, "vatRate": 0, "free": false, "custom": true});
    let reply = shop
        .finalize(&shop.sale("t1", vec![gift_card, line("l1", BAGUETTE, 1)], 5130))
        .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let lines = &reply.body["transaction"]["lines"];
    assert_eq!(lines[0]["skuId"], "0".repeat(64));
    assert_eq!(lines[0]["unitPrice"], 5000);
    assert_eq!(
        reply.body["stockMovements"],
        json!([{"skuId": sku(BAGUETTE.0), "deltaQuantity": -1}])
    );
    shop.server.stop().await;
}

async fn a_replay_returns_the_same_bytes_and_changes_nothing(engine: Engine) {
    let shop = Shop::open(engine).await;
    let mut sale = shop.sale("t1", vec![line("l1", MUG, 2)], 2900);
    sale["customerId"] = json!("c-1");
    let first = shop.finalize(&sale).await;
    assert_eq!(first.status, 201);
    // Key order and whitespace do not make a different request.
    let reordered: Value = serde_json::from_str(&serde_json::to_string_pretty(&sale).unwrap()).unwrap();
    let again = shop.finalize(&reordered).await;
    assert_eq!(again.status, 201);
    assert_eq!(again.text, first.text, "byte-identical replay");
    assert_eq!(shop.stock(MUG).await, -2, "stock moved once");
    let loyalty = shop.server.get("/v1/customers/c-1/loyalty", &shop.server.admin()).await;
    assert_eq!(loyalty.body["points"], 29, "points accrued once");
    assert_eq!(shop.verify("r1").await["chains"]["ticket"], 1);
    let read = shop.server.get("/v1/sales/t1", &shop.till).await;
    assert_eq!(read.text, first.text);
    shop.server
        .get("/v1/sales/nope", &shop.till)
        .await
        .assert_error(404, "NOT_FOUND");
    shop.server.stop().await;
}

async fn a_replay_is_answered_after_the_price_changed(engine: Engine) {
    let shop = Shop::open(engine).await;
    let sale = shop.sale("t1", vec![line("l1", MUG, 2)], 2900);
    let first = shop.finalize(&sale).await;
    assert_eq!(first.status, 201, "{}", first.text);
    // The mug costs more now: the same request would be refused as a new sale (its amount due
    // no longer settles), but it is the sale already booked, so it replays.
    shop.server.provision_sku(MUG.0, 1600, MUG.2).await;
    let again = shop.finalize(&sale).await;
    assert_eq!(again.status, 201, "{}", again.text);
    assert_eq!(again.text, first.text, "byte-identical replay");
    assert_eq!(again.headers["x-idempotent-replay"], "true");
    // Other content under the same id is still a conflict, not a price error.
    let other = shop.sale("t1", vec![line("l1", MUG, 3)], 4350);
    shop.finalize(&other).await.assert_error(409, "CONFLICT");
    assert_eq!(shop.stock(MUG).await, -2, "stock moved once");
    assert_eq!(shop.verify("r1").await["chains"]["ticket"], 1);
    shop.server.stop().await;
}

async fn other_content_under_a_used_transaction_id_is_a_conflict(engine: Engine) {
    let shop = Shop::open(engine).await;
    assert_eq!(
        shop.finalize(&shop.sale("t1", vec![line("l1", MUG, 1)], 1450))
            .await
            .status,
        201
    );
    let changed = shop.finalize(&shop.sale("t1", vec![line("l1", MUG, 2)], 2900)).await;
    changed.assert_error(409, "CONFLICT");
    // The elevation header is not part of the content.
    let same = shop
        .server
        .send(|http, base| {
            http.post(format!("{base}/v1/checkout/finalize"))
                .bearer_auth(&shop.till)
                .header("x-elevation-token", "pos_el_whatever")
                .json(&shop.sale("t1", vec![line("l1", MUG, 1)], 1450))
        })
        .await;
    assert_eq!(same.status, 201);
    assert_eq!(shop.stock(MUG).await, -1);
    shop.server.stop().await;
}

async fn a_refused_sale_stores_nothing(engine: Engine) {
    let shop = Shop::open(engine).await;
    let wrong = shop.finalize(&shop.sale("t1", vec![line("l1", MUG, 1)], 1000)).await;
    wrong.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert_eq!(shop.stock(MUG).await, 0);
    // The corrected request with the same id goes through.
    assert_eq!(
        shop.finalize(&shop.sale("t1", vec![line("l1", MUG, 1)], 1450))
            .await
            .status,
        201
    );
    shop.server.stop().await;
}

async fn the_store_network_is_checked_once_it_has_a_store(engine: Engine) {
    let server = TestServer::start(engine).await;
    server.provision_sku(MUG.0, MUG.1, MUG.2).await;
    server.provision_staff("camille", "cashier", "1234").await;
    // No store yet: any storeId is accepted.
    let (session, till) = server.open_session("anywhere", "r1", "camille", "1234").await;
    let shop = Shop { server, session, till };
    let mut sale = shop.sale("t1", vec![line("l1", MUG, 1)], 1450);
    sale["storeId"] = json!("anywhere");
    assert_eq!(shop.finalize(&sale).await.status, 201, "empty network");
    shop.server.provision_store("paris").await;
    sale["transactionId"] = json!("t2");
    let reply = shop.finalize(&sale).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(reply.fields(), ["storeId"]);
    shop.server.stop().await;
}

async fn declared_discounts_need_the_authority_to_grant_them(engine: Engine) {
    let shop = Shop::open(engine).await;
    let discount = |percent: i64| json!([{"id": "d1", "reason": "manual_markdown", "scope": "ticket", "basis": "percent", "percentBps": percent}]);
    // 5 % of 19.70 (98.5, rounded to 99) is within the cashier's own limit (5 %, 5.00).
    let mut within = shop.sale("t1", vec![line("l1", MUG, 1), line("l2", BAGUETTE, 4)], 1871);
    within["declaredDiscounts"] = discount(500);
    assert_eq!(shop.finalize(&within).await.status, 201);
    // 10 % is not: 403, and nothing is stored.
    let mut beyond = shop.sale("t2", vec![line("l1", MUG, 1), line("l2", BAGUETTE, 4)], 1773);
    beyond["declaredDiscounts"] = discount(1000);
    let refused = shop.finalize(&beyond).await;
    refused.assert_error(403, "FORBIDDEN");
    assert!(refused.text.contains("x-elevation-token"));
    shop.server
        .get("/v1/sales/t2", &shop.till)
        .await
        .assert_error(404, "NOT_FOUND");
    // A principal with price:override may grant it.
    let manager = shop.server.token("mathis", "pos.sales.finalize price:override");
    assert_eq!(shop.finalize_as(&manager, &beyond).await.status, 201);
    // A token principal without it, and with no staff record, may grant nothing.
    let bot = shop.server.token("integration", "pos.sales.finalize");
    let mut small = shop.sale("t3", vec![line("l1", MUG, 1)], 1449);
    small["declaredDiscounts"] =
        json!([{"id": "d", "reason": "damaged_goods", "scope": "ticket", "basis": "amount", "amountCents": 1}]);
    shop.finalize_as(&bot, &small).await.assert_error(403, "FORBIDDEN");
    shop.server.stop().await;
}

async fn declared_discounts_price_exactly(engine: Engine) {
    let shop = Shop::open(engine).await;
    let manager = shop.server.token("mathis", "pos.sales.finalize price:override");
    // 15 % off the mug line: 217.5 -> 218; then 10 % off the ticket; then 1.00 off.
    let mut sale = shop.sale("t1", vec![line("l1", MUG, 1), line("l2", BOOK, 1)], 0);
    sale["declaredDiscounts"] = json!([
        {"id": "a", "reason": "damaged_goods", "scope": "ticket", "basis": "amount", "amountCents": 100},
        {"id": "m", "reason": "damaged_goods", "scope": "line", "basis": "percent", "lineId": "l1", "percentBps": 1500},
        {"id": "p", "reason": "promotional", "scope": "ticket", "basis": "percent", "percentBps": 1000},
    ]);
    // subtotal 3940; mug 1450 - 218 = 1232; running 3722; 10 % = 372.2 -> 372: 3350; minus 100: 3250.
    let total = 3250;
    sale["tenders"] = json!({"amountDue": total, "sequence": 1, "tenders": [
        {"id": "p1", "method": "card", "applied": total, "presented": total, "change": 0, "forfeited": 0}]});
    let reply = shop.finalize_as(&manager, &sale).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(reply.body["transaction"]["totals"]["subtotal"], 3940);
    assert_eq!(reply.body["transaction"]["totals"]["total"], total);
    shop.server.stop().await;
}

async fn empty_carts_and_unknown_articles_are_refused(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.finalize(&shop.sale("t1", vec![], 0))
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    let unknown = json!({"id": "x", "skuId": sku("not in the catalog"), "quantity": 1, "unitPrice": 100, "vatRate": 20, "free": false});
    let reply = shop.finalize(&shop.sale("t2", vec![unknown], 100)).await;
    reply.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(reply.text.contains("not in the catalog"));
    let no_article = json!({"id": "x", "skuId": null, "quantity": 1, "unitPrice": 100, "vatRate": 20, "free": false});
    shop.finalize(&shop.sale("t3", vec![no_article], 100))
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    shop.server.stop().await;
}

async fn tenders_must_settle_the_amount_due(engine: Engine) {
    let shop = Shop::open(engine).await;
    let mut sale = shop.sale("t1", vec![line("l1", MUG, 1)], 1450);
    sale["tenders"]["tenders"] = json!([
        {"id": "cash", "method": "cash", "applied": 1000, "presented": 2000, "change": 1000, "forfeited": 0},
        {"id": "card", "method": "card", "applied": 400, "presented": 400, "change": 0, "forfeited": 0}]);
    let short = shop.finalize(&sale).await;
    short.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(
        short.text.contains("14.00") && short.text.contains("14.50"),
        "{}",
        short.text
    );
    sale["tenders"]["tenders"][1]["applied"] = json!(450);
    sale["tenders"]["tenders"][1]["presented"] = json!(440);
    let unbalanced = shop.finalize(&sale).await;
    unbalanced.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(unbalanced.text.contains("Tender card"), "{}", unbalanced.text);
    sale["tenders"]["tenders"][1]["presented"] = json!(450);
    let paid = shop.finalize(&sale).await;
    assert_eq!(paid.status, 201, "{}", paid.text);
    assert_eq!(paid.body["ticket"]["changeCents"], 1000);
    assert_eq!(
        paid.body["ticket"]["tenders"],
        json!([{"method": "cash", "appliedCents": 1000}, {"method": "card", "appliedCents": 450}])
    );
    shop.server.stop().await;
}

async fn the_register_selects_the_fiscal_chain(engine: Engine) {
    let shop = Shop::open(engine).await;
    let mut sale = shop.sale("t1", vec![line("l1", MUG, 1)], 1450);
    sale["registerId"] = json!("r2");
    shop.finalize(&sale).await.assert_error(422, "BUSINESS_RULE_VIOLATION");
    sale["registerId"] = json!("r1");
    let reply = shop.finalize(&sale).await;
    assert_eq!(reply.body["registerId"], "r1");
    let verdict = shop.verify("r1").await;
    assert_eq!(
        (&verdict["ok"], &verdict["firstFailure"]),
        (&json!(true), &json!(null)),
        "{verdict}"
    );
    // The journal was initialised and the session opened before the one ticket.
    assert_eq!(verdict["chains"], json!({"event": 2, "ticket": 1}));
    assert_eq!(verdict["entries"], 3);
    shop.server
        .get("/v1/fiscal/registers/r2/verify", &shop.server.admin())
        .await
        .assert_error(404, "NOT_FOUND");
    let keys = shop
        .server
        .call(reqwest::Method::GET, "/v1/fiscal/keys", None, None)
        .await;
    let key = &keys.body["keys"][0];
    assert_eq!(
        (key["kty"].as_str(), key["crv"].as_str(), key["alg"].as_str()),
        (Some("EC"), Some("P-256"), Some("ES256"))
    );
    shop.server.stop().await;
}

async fn stock_moves_once_per_article_and_loyalty_accrues(engine: Engine) {
    let shop = Shop::open(engine).await;
    let mut sale = shop.sale(
        "t1",
        vec![line("a", BAGUETTE, 2), line("b", MUG, 1), line("c", BAGUETTE, 1)],
        1840,
    );
    sale["customerId"] = json!("client-7");
    let reply = shop.finalize(&sale).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let mut expected = vec![
        json!({"skuId": sku(BAGUETTE.0), "deltaQuantity": -3}),
        json!({"skuId": sku(MUG.0), "deltaQuantity": -1}),
    ];
    expected.sort_by_key(|m| m["skuId"].as_str().unwrap().to_owned());
    assert_eq!(reply.body["stockMovements"], json!(expected));
    assert_eq!(
        reply.body["loyalty"],
        json!({"customerId": "client-7", "pointsEarned": 18})
    );
    assert_eq!(shop.stock(BAGUETTE).await, -3);
    // A second sale to the same customer adds up; an anonymous sale earns nothing.
    let mut second = shop.sale("t2", vec![line("a", BOOK, 1)], 2490);
    second["customerId"] = json!("client-7");
    shop.finalize(&second).await;
    let anonymous = shop.finalize(&shop.sale("t3", vec![line("a", BOOK, 1)], 2490)).await;
    assert_eq!(
        anonymous.body["loyalty"],
        json!({"customerId": null, "pointsEarned": 0})
    );
    let account = shop
        .server
        .get(
            "/v1/customers/client-7/loyalty",
            &shop.server.token("crm", "pos.customers.read"),
        )
        .await;
    assert_eq!(account.body, json!({"customerId": "client-7", "points": 42}));
    shop.server.stop().await;
}

async fn sales_are_booked_on_an_open_session_of_the_till(engine: Engine) {
    let shop = Shop::open(engine).await;
    let mut sale = shop.sale("t1", vec![line("l1", MUG, 1)], 1450);
    sale["sessionId"] = json!("ses_unknown");
    let reply = shop
        .finalize_as(&shop.server.token("bo", "pos.sales.finalize"), &sale)
        .await;
    reply.assert_error(422, "BUSINESS_RULE_VIOLATION");
    // A till's token books on its own session only.
    shop.server.provision_staff("lea", "cashier", "5555").await;
    let (other_session, _) = shop.server.open_session("s1", "r2", "lea", "5555").await;
    sale["sessionId"] = json!(other_session);
    shop.finalize(&sale).await.assert_error(422, "BUSINESS_RULE_VIOLATION");
    // ...and in the session's store.
    shop.server.provision_store("s2").await;
    let mut elsewhere = shop.sale("t1", vec![line("l1", MUG, 1)], 1450);
    elsewhere["storeId"] = json!("s2");
    shop.finalize(&elsewhere)
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    // A closed session books nothing more.
    let close = format!("/v1/register-sessions/{}/close", shop.session);
    assert_eq!(
        shop.server.post(&close, &shop.server.admin(), json!({})).await.status,
        200
    );
    let closed = shop.finalize(&shop.shop_sale()).await;
    closed.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(closed.text.contains("closed"));
    shop.server.stop().await;
}

impl Shop {
    fn shop_sale(&self) -> Value {
        self.sale("t-late", vec![line("l1", MUG, 1)], 1450)
    }
}

async fn a_replay_after_the_session_closed_still_replays(engine: Engine) {
    let shop = Shop::open(engine).await;
    let sale = shop.sale("t1", vec![line("l1", MUG, 1)], 1450);
    let first = shop.finalize(&sale).await;
    let close = format!("/v1/register-sessions/{}/close", shop.session);
    let report = shop.server.post(&close, &shop.server.admin(), json!({})).await;
    assert_eq!(report.body["salesCount"], 1);
    assert_eq!(report.body["totalCents"], 1450);
    assert_eq!(
        report.body["vat"],
        json!([{"vatRate": 20, "totalCents": 1450, "vatCents": 242}])
    );
    let again = shop.finalize(&sale).await;
    assert_eq!(again.status, 201);
    assert_eq!(again.text, first.text);
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], true);
    assert_eq!(verdict["chains"]["ticket"], 1);
    assert_eq!(verdict["chains"]["closure"], 1, "the Z report");
    shop.server.stop().await;
}

async fn the_error_table_rows_for_credentials_and_scopes(engine: Engine) {
    let shop = Shop::open(engine).await;
    let sale = shop.sale("t1", vec![line("l1", MUG, 1)], 1450);
    let anonymous = shop
        .server
        .call(reqwest::Method::POST, "/v1/checkout/finalize", None, Some(sale.clone()))
        .await;
    anonymous.assert_error(401, "UNAUTHORIZED");
    let reader = shop.server.token("x", "pos.sales.read");
    shop.finalize_as(&reader, &sale).await.assert_error(403, "FORBIDDEN");
    let mut return_sale = sale.clone();
    return_sale["type"] = json!("return");
    let seller = shop.server.token("x", "pos.sales.finalize");
    shop.finalize_as(&seller, &return_sale)
        .await
        .assert_error(403, "FORBIDDEN");
    let mut rental = sale;
    rental["type"] = json!("rental");
    let reply = shop.finalize(&rental).await;
    assert_eq!(reply.body["transaction"]["type"], "rental");
    shop.server.stop().await;
}

/// Every field of the interface's tables, broken one way or another, in one request: every
/// problem comes back in one 400, each with its dot path.
async fn every_problem_of_a_request_is_reported_at_once(engine: Engine) {
    let shop = Shop::open(engine).await;
    let body = json!({
        "transactionId": "", "number": 7, "storeId": "", "sellerId": null,
        "sessionId": "", "registerId": "", "type": "gift", "couponCode": "",
        "issuedAt": "2026-02-30T10:00:00Z",
        "cart": {"lines": [
            {"id": "", "skuId": "ABC", "quantity": 0, "unitPrice": -1, "vatRate": 100.5, "free": "no",
             "custom": 1, "serial": {"serialNumber": "", "warrantyMonths": -1}, "kitId": ""},
            {"id": "l2", "skuId": sku("x"), "quantity": 9007199254740992u64, "unitPrice": 1.5, "vatRate": "20"}
        ]},
        "declaredDiscounts": [
            {"id": "d1", "reason": "because", "scope": "line", "basis": "amount"},
            {"id": "d2", "reason": "promotional", "scope": "line", "basis": "percent", "lineId": "nope", "percentBps": 10001},
            {"id": "d3", "reason": "promotional", "scope": "ticket", "basis": "percent", "percentBps": 0, "lineId": "l2"},
            {"id": "d4", "reason": "promotional", "scope": "ticket", "basis": "amount", "amountCents": 0},
            {"reason": "promotional", "scope": "everything", "basis": "percent"}
        ],
        "tenders": {"amountDue": -5, "sequence": "one", "tenders": [
            {"id": "p", "method": "bitcoin", "applied": 1, "presented": 1, "change": 0},
        ]}
    });
    let reply = shop.finalize(&body).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    let fields = reply.fields();
    let expected = [
        "transactionId",
        "number",
        "storeId",
        "sellerId",
        "customerId",
        "sessionId",
        "registerId",
        "type",
        "cart.lines.0.id",
        "cart.lines.0.skuId",
        "cart.lines.0.quantity",
        "cart.lines.0.unitPrice",
        "cart.lines.0.vatRate",
        "cart.lines.0.free",
        "cart.lines.0.custom",
        "cart.lines.0.serial.serialNumber",
        "cart.lines.0.serial.warrantyMonths",
        "cart.lines.0.kitId",
        "cart.lines.1.quantity",
        "cart.lines.1.unitPrice",
        "cart.lines.1.vatRate",
        "cart.lines.1.free",
        "cart.freeLineSequence",
        "declaredDiscounts.0.reason",
        "declaredDiscounts.0.basis",
        "declaredDiscounts.1.lineId",
        "declaredDiscounts.1.percentBps",
        "declaredDiscounts.2.lineId",
        "declaredDiscounts.2.percentBps",
        "declaredDiscounts.3.amountCents",
        "declaredDiscounts.4.id",
        "declaredDiscounts.4.scope",
        "couponCode",
        "issuedAt",
        "tenders.amountDue",
        "tenders.tenders.0.method",
        "tenders.tenders.0.forfeited",
        "tenders.sequence",
    ];
    for field in expected {
        assert!(fields.iter().any(|f| f == field), "{field} missing from {fields:?}");
    }
    assert_eq!(fields.len(), expected.len(), "unexpected extra problems: {fields:?}");
    shop.server.stop().await;
}

async fn required_fields_and_nullable_customer(engine: Engine) {
    let shop = Shop::open(engine).await;
    let full = shop.sale("t1", vec![line("l1", MUG, 1)], 1450);
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
        let mut body = full.clone();
        body.as_object_mut().unwrap().remove(field);
        let reply = shop.finalize(&body).await;
        reply.assert_error(400, "VALIDATION_FAILED");
        assert_eq!(reply.fields(), [field]);
    }
    for field in ["id", "skuId", "quantity", "unitPrice", "vatRate", "free"] {
        let mut body = full.clone();
        body["cart"]["lines"][0].as_object_mut().unwrap().remove(field);
        assert_eq!(shop.finalize(&body).await.fields(), [format!("cart.lines.0.{field}")]);
    }
    for field in ["id", "method", "applied", "presented", "change", "forfeited"] {
        let mut body = full.clone();
        body["tenders"]["tenders"][0].as_object_mut().unwrap().remove(field);
        assert_eq!(
            shop.finalize(&body).await.fields(),
            [format!("tenders.tenders.0.{field}")]
        );
    }
    // Not JSON at all: one problem on `body`.
    let garbage = shop
        .server
        .send(|http, base| {
            http.post(format!("{base}/v1/checkout/finalize"))
                .bearer_auth(&shop.till)
                .header("content-type", "application/json")
                .body("{\"transactionId\": ")
        })
        .await;
    assert_eq!(garbage.fields(), ["body"]);
    // Nothing above was stored; the complete body goes through, with customerId null.
    assert_eq!(shop.finalize(&full).await.status, 201);
    shop.server.stop().await;
}

async fn issued_at_accepts_utc_calendar_instants_only(engine: Engine) {
    // The articles are priced from before the earliest instant the sales are rung at, and the
    // sales are sent within the hours a sale may wait to be booked.
    let start = "2028-02-28T00:00:00Z".parse().expect("an instant");
    let shop = Shop::open_at(engine, start, |config| config.session_ttl_seconds = 7 * 24 * 3600).await;
    shop.server
        .clock
        .set("2028-03-01T10:00:00Z".parse().expect("an instant"));
    let cases = [
        ("2028-02-29T10:00:00Z", true),
        ("2028-03-01T09:30Z", true),
        ("2028-03-01T09:30:15.123Z", true),
        ("2028-02-30T10:00:00Z", false),
        ("2027-02-29T10:00:00Z", false),
        ("2028-03-01T09:30:00+01:00", false),
        ("2028-03-01T09:30:00", false),
        ("2028-03-01", false),
        ("yesterday", false),
    ];
    for (i, (issued_at, accepted)) in cases.into_iter().enumerate() {
        let mut sale = shop.sale(&format!("t{i}"), vec![line("l1", BAGUETTE, 1)], 130);
        sale["issuedAt"] = json!(issued_at);
        let reply = shop.finalize(&sale).await;
        if accepted {
            assert_eq!(reply.status, 201, "{issued_at}: {}", reply.text);
        } else {
            reply.assert_error(400, "VALIDATION_FAILED");
            assert_eq!(reply.fields(), ["issuedAt"], "{issued_at}");
        }
    }
    shop.server.stop().await;
}

async fn duplicate_line_ids_are_refused(engine: Engine) {
    let shop = Shop::open(engine).await;
    let reply = shop
        .finalize(&shop.sale("t1", vec![line("l1", MUG, 1), line("l1", BAGUETTE, 1)], 1580))
        .await;
    assert_eq!(reply.fields(), ["cart.lines.1.id"]);
    shop.server.stop().await;
}

async fn concurrent_identical_finalizes_make_one_sale(engine: Engine) {
    let shop = Shop::open(engine).await;
    let sale = shop.sale("t1", vec![line("l1", MUG, 1), line("l2", BAGUETTE, 2)], 1710);
    let replies = join_all((0..30).map(|_| shop.finalize(&sale))).await;
    let bodies: Vec<&str> = replies
        .iter()
        .filter(|r| r.status == 201)
        .map(|r| r.text.as_str())
        .collect();
    for reply in &replies {
        assert!(reply.status == 201 || reply.status == 409, "{}", reply.text);
    }
    assert!(!bodies.is_empty());
    assert!(bodies.iter().all(|b| *b == bodies[0]), "every 201 is the same body");
    assert_eq!(shop.stock(MUG).await, -1);
    assert_eq!(shop.stock(BAGUETTE).await, -2);
    assert_eq!(shop.verify("r1").await["chains"]["ticket"], 1);
    shop.server.stop().await;
}

async fn concurrent_sales_of_one_article_lose_no_stock(engine: Engine) {
    let shop = Shop::open(engine).await;
    let admin = shop.server.admin();
    let path = format!("/v1/stores/s1/stock/{}", sku(MUG.0));
    shop.server.put(&path, &admin, json!({"onHand": 100})).await;
    let sales: Vec<Value> = (0..40)
        .map(|i| shop.sale(&format!("t{i}"), vec![line("l1", MUG, 1)], 1450))
        .collect();
    let replies = join_all(sales.iter().map(|s| shop.finalize(s))).await;
    assert!(
        replies.iter().all(|r| r.status == 201),
        "{:?}",
        replies.iter().map(|r| &r.text).collect::<Vec<_>>()
    );
    assert_eq!(shop.stock(MUG).await, 60);
    shop.server.stop().await;
}

/// `moves` queued moves of `delta` units of `article` each, as PostgreSQL sales leave them for
/// the fold: a statement for `run_sql`, on either engine.
fn queued_moves(article: &str, delta: i64, moves: i64) -> String {
    format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {moves}) \
         INSERT INTO stock_moves (store_id, sku_id, delta, moved_at) SELECT 's1', '{}', {delta}, i FROM n",
        sku(article)
    )
}

/// `moves` movements of `delta` units of `article` each that no fold has added into its level
/// yet: queued moves on PostgreSQL, movements after the fold's mark on SQLite.
fn unfolded_moves(engine: Engine, article: &str, delta: i64, moves: i64) -> String {
    match engine {
        Engine::Postgres => queued_moves(article, delta, moves),
        Engine::Sqlite => format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {moves}) \
             INSERT INTO stock_movements (store_id, sku_id, delta, reason, moved_at) \
             SELECT 's1', '{}', {delta}, 'sale', i FROM n",
            sku(article)
        ),
    }
}

async fn a_count_stands_for_the_sales_before_it_and_later_sales_move_it(engine: Engine) {
    let shop = Shop::open(engine).await;
    let admin = shop.server.admin();
    let path = format!("/v1/stores/s1/stock/{}", sku(MUG.0));
    for i in 0..3 {
        let sale = shop.sale(&format!("t-before-{i}"), vec![line("l1", MUG, 2)], 2900);
        assert_eq!(shop.finalize(&sale).await.status, 201);
    }
    // Moves of sales not folded yet, as the fold leaves them for up to a second.
    shop.server
        .run_sql(&unfolded_moves(engine, MUG.0, -1, 4))
        .await
        .unwrap();
    assert_eq!(shop.stock(MUG).await, -10, "a level counts the moves still queued");
    let counted = shop.server.put(&path, &admin, json!({"onHand": 50})).await;
    assert_eq!(counted.body["onHand"], 50);
    assert_eq!(shop.stock(MUG).await, 50, "the count stands for every move before it");
    let after = shop.sale("t-after", vec![line("l1", MUG, 1)], 1450);
    assert_eq!(shop.finalize(&after).await.status, 201);
    assert_eq!(shop.stock(MUG).await, 49);
    shop.server.store().fold_stock_moves().await.unwrap();
    assert_eq!(shop.stock(MUG).await, 49, "folding moves no level");
    if engine == Engine::Postgres {
        assert_eq!(shop.server.count_rows("stock_moves").await, 0);
    }
    shop.server.stop().await;
}

/// PostgreSQL: nodes fold the queued moves at the same time, and each move counts once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn queued_stock_moves_fold_once_however_many_nodes_fold() {
    if !Engine::Postgres.enabled() {
        return;
    }
    let shop = Shop::open(Engine::Postgres).await;
    let admin = shop.server.admin();
    let mug = format!("/v1/stores/s1/stock/{}", sku(MUG.0));
    shop.server.put(&mug, &admin, json!({"onHand": 1000})).await;
    // More than one fold takes, so the folds below split the queue between them.
    let limit = till_store::stock::FOLD_LIMIT;
    shop.server.run_sql(&queued_moves(MUG.0, -1, limit)).await.unwrap();
    shop.server.run_sql(&queued_moves(BAGUETTE.0, 2, 7_000)).await.unwrap();
    let url = shop.server.config.database_url();
    let mut nodes = vec![shop.server.store().clone()];
    for _ in 0..3 {
        let node = till_store::Store::connect(&url, &Default::default()).await.unwrap();
        nodes.push(node);
    }
    let folds = join_all(nodes.iter().map(|node| node.fold_stock_moves())).await;
    let mut folded: u64 = folds.into_iter().map(|fold| fold.unwrap()).sum();
    loop {
        let more = nodes[0].fold_stock_moves().await.unwrap();
        if more == 0 {
            break;
        }
        folded += more;
    }
    assert_eq!(shop.server.count_rows("stock_moves").await, 0);
    assert_eq!(shop.stock(MUG).await, 1000 - limit, "each move of the mug counted once");
    assert_eq!(shop.stock(BAGUETTE).await, 14_000);
    // The server's own folder may have taken some of them meanwhile; the adjustment to 1000
    // was queued too.
    assert!(folded <= limit as u64 + 7_001, "{folded} moves folded");
    for node in nodes.iter().skip(1) {
        node.close().await;
    }
    shop.server.stop().await;
}

/// PostgreSQL: a count and a fold at the same time, each meeting the moves the other is
/// taking. Whichever goes first, the article's level is the count once the queue is folded,
/// and no move of the other article is lost or counted twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn a_count_during_a_fold_stands() {
    if !Engine::Postgres.enabled() {
        return;
    }
    let shop = Shop::open(Engine::Postgres).await;
    let admin = shop.server.admin();
    let mug = format!("/v1/stores/s1/stock/{}", sku(MUG.0));
    let store = shop.server.store().clone();
    for round in 1..=8_i64 {
        shop.server.run_sql(&queued_moves(MUG.0, -1, 3_000)).await.unwrap();
        shop.server.run_sql(&queued_moves(BOOK.0, -1, 3_000)).await.unwrap();
        let count = shop.server.put(&mug, &admin, json!({"onHand": round * 10}));
        // The fold starts with the count, or a little after it, so that either may meet the
        // other's moves first.
        let fold = async {
            tokio::time::sleep(std::time::Duration::from_millis(round as u64 % 4)).await;
            store.fold_stock_moves().await
        };
        let (counted, folded) = futures::join!(count, fold);
        assert_eq!(counted.status, 200, "{}", counted.text);
        folded.unwrap();
        while store.fold_stock_moves().await.unwrap() > 0 {}
        assert_eq!(shop.server.count_rows("stock_moves").await, 0);
        assert_eq!(shop.stock(MUG).await, round * 10, "round {round}");
        assert_eq!(shop.stock(BOOK).await, -3_000 * round, "round {round}");
    }
    shop.server.stop().await;
}

async fn concurrent_sales_on_one_register_keep_a_gapless_chain(engine: Engine) {
    let shop = Shop::open(engine).await;
    // A first ticket, so the node knows the chain's head: the sales below all expect the
    // same next place, and all but one find it taken.
    let first = shop.sale("t-first", vec![line("l1", BAGUETTE, 1)], 130);
    assert_eq!(shop.finalize(&first).await.status, 201);
    let sales: Vec<Value> = (0..32)
        .map(|i| {
            shop.sale(
                &format!("t{i}"),
                vec![line("l1", BAGUETTE, 1 + i % 3)],
                130 * (1 + i % 3),
            )
        })
        .collect();
    let replies = join_all(sales.iter().map(|s| shop.finalize(s))).await;
    assert!(replies.iter().all(|r| r.status == 201));
    let verdict = shop.verify("r1").await;
    assert_eq!(
        (&verdict["ok"], &verdict["chains"]["ticket"]),
        (&json!(true), &json!(33)),
        "{verdict}"
    );
    shop.server.stop().await;
}

/// A till's sales racing the close of its session: each is either booked and counted in the
/// Z report, or refused as booked on a closed session and nowhere to be found.
async fn a_close_racing_sales_counts_exactly_the_sales_it_let_through(engine: Engine) {
    let shop = Shop::open(engine).await;
    // The node then knows the till's chain head and day when the race starts, and trusts its
    // guess, so the racing sales are committed against a prediction of it as well as the
    // checked way.
    let opening = shop.sell_until_the_guess_is_trusted().await;
    let sales: Vec<Value> = (opening..opening + 23)
        .map(|i| shop.sale(&format!("t{i}"), vec![line("l1", MUG, 1)], 1450))
        .collect();
    let close = format!("/v1/register-sessions/{}/close", shop.session);
    let admin = shop.server.admin();
    // The close goes once a first sale is answered, with the others in flight.
    let mut pending: FuturesUnordered<_> = sales.iter().map(|s| shop.finalize(s)).collect();
    let first = pending.next().await.expect("23 sales");
    let (mut replies, report) =
        futures::join!(pending.collect::<Vec<_>>(), shop.server.post(&close, &admin, json!({})));
    replies.push(first);
    assert_eq!(report.status, 200, "{}", report.text);
    let booked = opening + replies.iter().filter(|r| r.status == 201).count() as i64;
    for refused in replies.iter().filter(|r| r.status != 201) {
        refused.assert_error(422, "BUSINESS_RULE_VIOLATION");
        assert!(refused.text.contains("closed"), "{}", refused.text);
    }
    assert_eq!(report.body["salesCount"], booked);
    assert_eq!(report.body["totalCents"], 1450 * booked);
    assert_eq!(
        shop.stock(MUG).await,
        -booked,
        "{:?}",
        replies.iter().map(|r| &r.text).collect::<Vec<_>>()
    );
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], true, "{verdict}");
    assert_eq!(verdict["chains"]["ticket"].as_i64().unwrap_or(0), booked, "{verdict}");
    shop.server.stop().await;
}

/// PostgreSQL: a sale whose statement began while its session was open, and then waited for
/// the close that holds the till's ticket chain, is refused once the close has committed. The
/// close leaves the chain's head where it was but counts its hold, so the node's guess of the
/// head no longer stands; without that count the sale would claim the head, pass the session
/// check on its older snapshot, and be booked after the Z report that left it out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn a_sale_waiting_on_its_sessions_close_is_refused_once_the_close_is_done() {
    if !Engine::Postgres.enabled() {
        return;
    }
    use sqlx::{Connection, Executor, Row};
    let shop = Shop::open(Engine::Postgres).await;
    assert_eq!(shop.sell_until_the_guess_is_trusted().await, 9);
    // Someone holds the till's chain head, so the close and then the sale queue behind it.
    let url = shop.server.config.database_url();
    let mut db = sqlx::PgConnection::connect(&url).await.unwrap();
    db.execute("BEGIN").await.unwrap();
    db.execute("SELECT 1 FROM fiscal_heads WHERE register_id = 'r1' AND kind = 'ticket' FOR UPDATE")
        .await
        .unwrap();
    let waiting = async |db: &mut sqlx::PgConnection, count: i64| {
        for _ in 0..1_000 {
            let row = db
                .fetch_one(
                    "SELECT count(*) AS waiting FROM pg_stat_activity \
                     WHERE datname = current_database() AND wait_event_type = 'Lock'",
                )
                .await
                .unwrap();
            if row.get::<i64, _>("waiting") >= count {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("{count} statements never waited on the chain head");
    };
    let mut watch_close = sqlx::PgConnection::connect(&url).await.unwrap();
    let mut watch_both = sqlx::PgConnection::connect(&url).await.unwrap();
    let admin = shop.server.admin();
    let close_path = format!("/v1/register-sessions/{}/close", shop.session);
    let late_sale = shop.sale("t9", vec![line("l1", MUG, 1)], 1450);
    let (report, late, ()) = futures::join!(
        shop.server.post(&close_path, &admin, json!({})),
        async {
            waiting(&mut watch_close, 1).await;
            shop.finalize(&late_sale).await
        },
        async {
            waiting(&mut watch_both, 2).await;
            db.execute("COMMIT").await.unwrap();
        },
    );
    assert_eq!(report.status, 200, "{}", report.text);
    assert_eq!(
        (&report.body["salesCount"], &report.body["totalCents"]),
        (&json!(9), &json!(9 * 1450))
    );
    late.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(late.text.contains("closed"), "{}", late.text);
    assert_eq!(shop.stock(MUG).await, -9);
    let verdict = shop.verify("r1").await;
    assert_eq!(
        (&verdict["ok"], &verdict["chains"]["ticket"]),
        (&json!(true), &json!(9)),
        "{verdict}"
    );
    shop.server.stop().await;
}

on_both_engines!(
    a_sale_is_priced_from_the_catalog_not_the_cart,
    the_cash_rounding_tolerance_is_a_setting,
    custom_lines_are_trusted_and_move_no_stock,
    a_replay_returns_the_same_bytes_and_changes_nothing,
    a_replay_is_answered_after_the_price_changed,
    other_content_under_a_used_transaction_id_is_a_conflict,
    a_refused_sale_stores_nothing,
    the_store_network_is_checked_once_it_has_a_store,
    declared_discounts_need_the_authority_to_grant_them,
    declared_discounts_price_exactly,
    empty_carts_and_unknown_articles_are_refused,
    tenders_must_settle_the_amount_due,
    the_register_selects_the_fiscal_chain,
    stock_moves_once_per_article_and_loyalty_accrues,
    a_count_stands_for_the_sales_before_it_and_later_sales_move_it,
    sales_are_booked_on_an_open_session_of_the_till,
    a_replay_after_the_session_closed_still_replays,
    the_error_table_rows_for_credentials_and_scopes,
    every_problem_of_a_request_is_reported_at_once,
    required_fields_and_nullable_customer,
    issued_at_accepts_utc_calendar_instants_only,
    duplicate_line_ids_are_refused,
    concurrent_identical_finalizes_make_one_sale,
    concurrent_sales_of_one_article_lose_no_stock,
    concurrent_sales_on_one_register_keep_a_gapless_chain,
    a_close_racing_sales_counts_exactly_the_sales_it_let_through,
);
