//! A committed sale's price explained: per line the gross, each reduction with its source, the
//! net and the VAT, adding up to the sale's totals to the cent, for a sale with every kind of
//! reduction and for a return of part of it.

use crate::harness::{Engine, sku};
use crate::harness::{Shop, line};
use crate::on_both_engines;
use serde_json::{Value, json};

on_both_engines!(a_sales_lines_explain_its_price_to_the_cent);

const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);
const BOOK: (&str, i64, f64) = ("Livre", 2490, 5.5);
const BAGUETTE: (&str, i64, f64) = ("Baguette", 130, 5.5);

fn card(amount: i64) -> Value {
    json!({"amountDue": amount, "sequence": 1, "tenders": [
        {"id": "p1", "method": "card", "applied": amount, "presented": amount, "change": 0, "forfeited": 0}
    ]})
}

async fn lines_of(shop: &Shop, transaction: &str) -> Value {
    let reply = shop
        .server
        .get(
            &format!("/v1/sales/{transaction}/lines"),
            &shop.server.token("clerk", "pos.sales.read"),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.body
}

/// Each line's gross less its reductions is its net; the lines add up to the totals given,
/// which are the sale's.
fn assert_adds_up(explained: &Value, subtotal: i64, total: i64) {
    let lines = explained["lines"].as_array().unwrap();
    let (mut gross, mut reduced, mut net, mut vat) = (0, 0, 0, 0);
    for line in lines {
        let reductions: i64 = line["reductions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["amountCents"].as_i64().unwrap())
            .sum();
        let line_gross = line["grossCents"].as_i64().unwrap();
        let line_net = line["netCents"].as_i64().unwrap();
        assert_eq!(line_gross - reductions, line_net, "{line}");
        assert_eq!(
            line_gross.abs(),
            line["quantity"].as_i64().unwrap() * line["unitPriceCents"].as_i64().unwrap(),
            "{line}"
        );
        gross += line_gross;
        reduced += reductions;
        net += line_net;
        vat += line["vatCents"].as_i64().unwrap();
    }
    assert_eq!(gross, subtotal, "{explained}");
    assert_eq!(net, total, "{explained}");
    assert_eq!(explained["subtotalCents"], subtotal);
    assert_eq!(explained["totalCents"], total);
    assert_eq!(explained["reductionCents"], reduced);
    assert_eq!(explained["vatCents"], vat);
}

/// What reductions of `source` and `id` took across the lines.
fn taken(explained: &Value, source: &str, id: &str) -> i64 {
    explained["lines"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|line| line["reductions"].as_array().unwrap())
        .filter(|r| r["source"] == source && r["id"] == id)
        .map(|r| r["amountCents"].as_i64().unwrap())
        .sum()
}

fn reductions_of(explained: &Value, line: &str) -> Vec<(String, String, i64)> {
    explained["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["id"] == line)
        .unwrap_or_else(|| panic!("no line {line} in {explained}"))["reductions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["source"].as_str().unwrap().to_owned(),
                r["id"].as_str().unwrap().to_owned(),
                r["amountCents"].as_i64().unwrap(),
            )
        })
        .collect()
}

async fn a_sales_lines_explain_its_price_to_the_cent(engine: Engine) {
    let shop = Shop::open(engine).await;
    let admin = shop.server.admin();
    let bogo = json!({
        "id": "mugs", "type": "bogo", "name": "2+1 mugs",
        "validFrom": "2020-01-01T00:00:00Z", "validUntil": "2099-12-31T23:59:59Z",
        "buy": {"productIds": [sku(MUG.0)], "quantity": 2},
        "get": {"productIds": [sku(MUG.0)], "quantity": 1, "percentBps": 10000},
    });
    assert_eq!(shop.server.post("/v1/promotions", &admin, bogo).await.status, 201);
    let coupon = shop
        .server
        .put("/v1/coupons/WELCOME", &admin, json!({"amountCents": 100}))
        .await;
    assert!(coupon.status == 201 || coupon.status == 200, "{}", coupon.text);
    let lines = vec![line("l1", MUG, 3), line("l2", BOOK, 1), line("l3", BAGUETTE, 2)];
    let extra = json!({
        "declaredDiscounts": [
            {"id": "damaged", "reason": "damaged_goods", "scope": "line", "basis": "percent", "lineId": "l2", "percentBps": 1000},
            {"id": "goodwill", "reason": "manager_goodwill", "scope": "ticket", "basis": "percent", "percentBps": 500},
        ],
        "couponCode": "WELCOME",
    });
    let mut quote = json!({"storeId": "s1", "cart": {"lines": lines.clone(), "freeLineSequence": 0}});
    let mut sale = shop.sale("t1", lines, 0);
    for (key, value) in extra.as_object().unwrap() {
        quote[key] = value.clone();
        sale[key] = value.clone();
    }
    let quoted = shop.server.post("/v1/checkout/price", &shop.till, quote).await;
    assert_eq!(quoted.status, 200, "{}", quoted.text);
    let total = quoted.body["totals"]["total"].as_i64().unwrap();
    sale["tenders"] = card(total);
    let sold = shop.finalize_as(&admin, &sale).await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    let subtotal = sold.body["transaction"]["totals"]["subtotal"].as_i64().unwrap();
    assert_eq!(sold.body["transaction"]["totals"]["total"], total);

    let explained = lines_of(&shop, "t1").await;
    assert_eq!(explained["transactionId"], "t1");
    assert_eq!(explained["type"], "sale");
    assert_eq!(explained["originalTransactionId"], Value::Null);
    assert_adds_up(&explained, subtotal, total);
    // Each reduction is named by its source, and its shares add up to what it took.
    assert_eq!(taken(&explained, "promotion", "mugs"), 1450, "one mug in three free");
    let mugs = reductions_of(&explained, "l1");
    assert_eq!(mugs[0], ("promotion".to_owned(), "mugs".to_owned(), 1450));
    let book = reductions_of(&explained, "l2");
    assert_eq!(book[0], ("declared".to_owned(), "damaged".to_owned(), 249));
    assert!(
        reductions_of(&explained, "l3")
            .iter()
            .all(|(_, id, _)| id != "damaged" && id != "mugs")
    );
    assert_eq!(taken(&explained, "coupon", "WELCOME"), 100);
    let adjustments = quoted.body["adjustments"].as_array().unwrap();
    for adjustment in adjustments {
        let source = adjustment["source"].as_str().unwrap();
        let id = adjustment["id"].as_str().unwrap();
        assert_eq!(
            taken(&explained, source, id),
            adjustment["amountCents"].as_i64().unwrap(),
            "{adjustment}"
        );
    }
    for line in ["l1", "l2", "l3"] {
        let ids: Vec<String> = reductions_of(&explained, line)
            .into_iter()
            .map(|(_, id, _)| id)
            .collect();
        assert!(
            ids.contains(&"goodwill".to_owned()) && ids.contains(&"WELCOME".to_owned()),
            "{line}: {ids:?}"
        );
    }
    let first = &explained["lines"][0];
    assert_eq!(first["skuId"], sku(MUG.0));
    assert_eq!(first["label"], "Mug");
    assert_eq!(first["vatRate"], 20);
    assert_eq!(explained["lines"][1]["vatRate"], 5.5);
    let promotion = &first["reductions"][0];
    assert_eq!(promotion["name"], "2+1 mugs");
    // The VAT of each rate is shared over its lines: they add up to the sale's VAT.
    let vat: i64 = quoted.body["vat"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rate| rate["vatCents"].as_i64().unwrap())
        .sum();
    assert!(vat > 0);
    assert_eq!(explained["vatCents"], vat);

    // A return of one mug in three and of the book refunds its share of each reduction: the
    // line's net spread over its units, rounded half away from zero.
    let net_of = |line: usize| explained["lines"][line]["netCents"].as_i64().unwrap();
    let refund = (2 * net_of(0) + 3) / 6 + net_of(1);
    let back = json!({
        "transactionId": "r1", "originalTransactionId": "t1", "number": "R-1",
        "storeId": "s1", "sellerId": "camille", "sessionId": shop.session,
        "lines": [{"lineId": "l1", "quantity": 1}, {"lineId": "l2", "quantity": 1}],
        "tenders": card(refund),
    });
    let returned = shop.server.post("/v1/returns", &shop.till, back).await;
    assert_eq!(returned.status, 201, "{}", returned.text);
    let explained = lines_of(&shop, "r1").await;
    assert_eq!(explained["type"], "return");
    assert_eq!(explained["originalTransactionId"], "t1");
    let subtotal = explained["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["grossCents"].as_i64().unwrap())
        .sum::<i64>();
    assert!(subtotal < 0, "a return's amounts are negative: {explained}");
    assert_adds_up(&explained, subtotal, -refund);
    let mug_back = reductions_of(&explained, "l1");
    assert_eq!(mug_back[0].0, "promotion");
    assert_eq!(mug_back[0].1, "mugs");
    assert!(mug_back.iter().all(|(_, _, amount)| *amount <= 0), "{mug_back:?}");
    let book_back = reductions_of(&explained, "l2");
    assert_eq!(book_back[0], ("declared".to_owned(), "damaged".to_owned(), -249));
    assert!(
        book_back
            .iter()
            .any(|(source, id, _)| source == "coupon" && id == "WELCOME")
    );

    shop.server
        .get("/v1/sales/nope/lines", &shop.server.token("clerk", "pos.sales.read"))
        .await
        .assert_error(404, "NOT_FOUND");
    shop.server
        .get("/v1/sales/t1/lines", &shop.server.token("bo", "pos.catalog.read"))
        .await
        .assert_error(403, "FORBIDDEN");
    shop.server.stop().await;
}
