//! The stock ledger, counts and transfers (docs/stock.md): every change of stock is a
//! movement with its reason and reference, the level is their sum, a count racing sales loses
//! none of them, and a transfer that arrives short records the difference.

use crate::events::read_feed;
use crate::harness::{Engine, Reply, sku};
use crate::harness::{Shop, line};
use crate::on_both_engines;
use futures::future::join_all;
use serde_json::{Value, json};

const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);
const BOOK: (&str, i64, f64) = ("Livre", 2490, 5.5);

/// Every movement of an article in store `store`, following the cursor `limit` at a time.
async fn movements(shop: &Shop, store: &str, article: &str, limit: usize) -> Vec<Value> {
    let admin = shop.server.admin();
    let base = format!("/v1/stores/{store}/stock/{}/movements?limit={limit}", sku(article));
    let mut all = Vec::new();
    let mut path = base.clone();
    loop {
        let page = shop.server.get(&path, &admin).await;
        assert_eq!(page.status, 200, "{}", page.text);
        let items = page.body["items"].as_array().unwrap();
        assert!(items.len() <= limit);
        all.extend(items.iter().cloned());
        match page.body["nextCursor"].as_str() {
            Some(cursor) => path = format!("{base}&cursor={cursor}"),
            None => return all,
        }
    }
}

async fn level(shop: &Shop, store: &str, article: &str) -> i64 {
    let path = format!("/v1/stores/{store}/stock/{}", sku(article));
    let reply = shop.server.get(&path, &shop.server.admin()).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.body["onHand"].as_i64().unwrap()
}

fn total(movements: &[Value]) -> i64 {
    movements.iter().map(|m| m["deltaQuantity"].as_i64().unwrap()).sum()
}

fn reasons(movements: &[Value]) -> Vec<(String, Option<String>, i64)> {
    movements
        .iter()
        .map(|m| {
            (
                m["reason"].as_str().unwrap().to_owned(),
                m["reference"].as_str().map(str::to_owned),
                m["deltaQuantity"].as_i64().unwrap(),
            )
        })
        .collect()
}

async fn count(shop: &Shop, store: &str, count_id: &str, lines: &[(&str, i64)]) -> Reply {
    let body = json!({
        "countId": count_id,
        "lines": lines.iter().map(|(a, q)| json!({"skuId": sku(a), "countedQuantity": q})).collect::<Vec<_>>(),
    });
    shop.server
        .post(&format!("/v1/stores/{store}/stock-counts"), &shop.server.admin(), body)
        .await
}

async fn every_change_is_a_movement_and_the_level_is_their_sum(engine: Engine) {
    let shop = Shop::open(engine).await;
    let admin = shop.server.admin();
    let mug = format!("/v1/stores/s1/stock/{}", sku(MUG.0));
    assert_eq!(shop.server.put(&mug, &admin, json!({"onHand": 20})).await.status, 200);
    for i in 0..3 {
        let sale = shop.sale(&format!("t{i}"), vec![line("l1", MUG, 2)], 2900);
        assert_eq!(shop.finalize(&sale).await.status, 201);
    }
    let counted = count(&shop, "s1", "c-1", &[(MUG.0, 11)]).await;
    assert_eq!(counted.status, 201, "{}", counted.text);
    assert_eq!(
        counted.body["lines"],
        json!([{"skuId": sku(MUG.0), "countedQuantity": 11, "previousQuantity": 14, "deltaQuantity": -3}])
    );
    let sale = shop.sale("t3", vec![line("l1", MUG, 1)], 1450);
    assert_eq!(shop.finalize(&sale).await.status, 201);
    // A page of two, so the list is read across pages.
    let ledger = movements(&shop, "s1", MUG.0, 2).await;
    let t = |i: usize| Some(format!("t{i}"));
    assert_eq!(
        reasons(&ledger),
        [
            ("adjustment".to_owned(), None, 20),
            ("sale".to_owned(), t(0), -2),
            ("sale".to_owned(), t(1), -2),
            ("sale".to_owned(), t(2), -2),
            ("count".to_owned(), Some("c-1".to_owned()), -3),
            ("sale".to_owned(), t(3), -1),
        ]
    );
    assert_eq!(total(&ledger), 10);
    assert_eq!(level(&shop, "s1", MUG.0).await, 10);
    let ids: Vec<i64> = ledger.iter().map(|m| m["id"].as_i64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    assert!(ledger.iter().all(|m| m["storeId"] == "s1" && m["skuId"] == sku(MUG.0)));
    // An article never moved in the store has an empty ledger; an unknown one is a 404.
    assert_eq!(movements(&shop, "s1", BOOK.0, 10).await, Vec::<Value>::new());
    let unknown = format!("/v1/stores/s1/stock/{}/movements", sku("Nothing"));
    shop.server.get(&unknown, &admin).await.assert_error(404, "NOT_FOUND");
    let elsewhere = format!("/v1/stores/s9/stock/{}/movements", sku(MUG.0));
    shop.server.get(&elsewhere, &admin).await.assert_error(404, "NOT_FOUND");
    shop.server.stop().await;
}

/// Sixteen sellers sell mugs one after another while a count of the mugs is recorded: every
/// sale committed before the count is in the level it replaced, every sale after it moves the
/// counted level, and none is lost either way.
async fn a_count_racing_sixteen_sellers_loses_no_sale(engine: Engine) {
    const SELLERS: usize = 16;
    const SALES_EACH: usize = 6;
    let shop = Shop::open(engine).await;
    let admin = shop.server.admin();
    let mug = format!("/v1/stores/s1/stock/{}", sku(MUG.0));
    let initial = 1_000;
    assert_eq!(
        shop.server.put(&mug, &admin, json!({"onHand": initial})).await.status,
        200
    );
    let seller = |s: usize| {
        let shop = &shop;
        async move {
            for i in 0..SALES_EACH {
                let sale = shop.sale(&format!("t{s}-{i}"), vec![line("l1", MUG, 1)], 1450);
                let sold = shop.finalize(&sale).await;
                assert_eq!(sold.status, 201, "{}", sold.text);
            }
        }
    };
    let counter = async {
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        count(&shop, "s1", "c-race", &[(MUG.0, 500)]).await
    };
    let (_, counted) = futures::join!(join_all((0..SELLERS).map(seller)), counter);
    assert_eq!(counted.status, 201, "{}", counted.text);
    let previous = counted.body["lines"][0]["previousQuantity"].as_i64().unwrap();
    let sold = (SELLERS * SALES_EACH) as i64;
    let sold_before = initial - previous;
    assert!((0..=sold).contains(&sold_before), "the count saw {previous}");
    let expected = 500 - (sold - sold_before);
    assert_eq!(level(&shop, "s1", MUG.0).await, expected);
    let ledger = movements(&shop, "s1", MUG.0, 500).await;
    assert_eq!(total(&ledger), expected, "the level is the ledger's sum");
    let sales = ledger.iter().filter(|m| m["reason"] == "sale").count();
    assert_eq!(sales, SELLERS * SALES_EACH, "one movement per sale");
    // Once the queue is folded (PostgreSQL), the level is still the same.
    while shop.server.store().fold_stock_moves().await.unwrap() > 0 {}
    assert_eq!(level(&shop, "s1", MUG.0).await, expected);
    shop.server.stop().await;
}

async fn a_count_is_answered_again_not_applied_twice(engine: Engine) {
    let shop = Shop::open(engine).await;
    let lines = [(MUG.0, 8), (BOOK.0, 3)];
    let first = count(&shop, "s1", "c-1", &lines).await;
    assert_eq!(first.status, 201, "{}", first.text);
    assert_eq!(first.body["lines"][0]["skuId"], sku(MUG.0), "lines in the order sent");
    let sale = shop.sale("t0", vec![line("l1", MUG, 1)], 1450);
    assert_eq!(shop.finalize(&sale).await.status, 201);
    let again = count(&shop, "s1", "c-1", &lines).await;
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.body, first.body);
    assert_eq!(
        level(&shop, "s1", MUG.0).await,
        7,
        "the sale after the count still counts"
    );
    count(&shop, "s1", "c-1", &[(MUG.0, 9), (BOOK.0, 3)])
        .await
        .assert_error(409, "CONFLICT");
    assert_eq!(level(&shop, "s1", MUG.0).await, 7);
    // Refusals that move nothing.
    count(&shop, "s9", "c-2", &[(MUG.0, 1)])
        .await
        .assert_error(404, "NOT_FOUND");
    let unknown = count(&shop, "s1", "c-3", &[(MUG.0, 1), ("Nothing", 1)]).await;
    unknown.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(unknown.text.contains("lines.1.skuId"), "{}", unknown.text);
    let twice = count(&shop, "s1", "c-4", &[(MUG.0, 1), (MUG.0, 2)]).await;
    twice.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(twice.fields(), ["lines.1.skuId"]);
    let negative = count(&shop, "s1", "c-5", &[(MUG.0, -1)]).await;
    assert_eq!(negative.fields(), ["lines.0.countedQuantity"]);
    let admin = shop.server.admin();
    let empty = shop
        .server
        .post(
            "/v1/stores/s1/stock-counts",
            &admin,
            json!({"countId": "c-6", "lines": []}),
        )
        .await;
    assert_eq!(empty.fields(), ["lines"]);
    assert_eq!(level(&shop, "s1", MUG.0).await, 7);
    assert_eq!(
        movements(&shop, "s1", MUG.0, 50).await.len(),
        2,
        "the count and the sale"
    );
    // Counting needs pos.stock.write.
    let reader = shop.server.token("viewer", "pos.stock.read");
    let body = json!({"countId": "c-7", "lines": [{"skuId": sku(MUG.0), "countedQuantity": 1}]});
    shop.server
        .post("/v1/stores/s1/stock-counts", &reader, body)
        .await
        .assert_error(403, "FORBIDDEN");
    shop.server.stop().await;
}

async fn a_transfer_that_arrives_short_records_the_difference(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.server.provision_store("s2").await;
    let admin = shop.server.admin();
    assert_eq!(
        count(&shop, "s1", "c-1", &[(MUG.0, 30), (BOOK.0, 10)]).await.status,
        201
    );
    let transfer = json!({"transferId": "tr-1", "fromStoreId": "s1", "toStoreId": "s2", "lines": [
        {"skuId": sku(MUG.0), "quantity": 10}, {"skuId": sku(BOOK.0), "quantity": 4},
    ]});
    let sent = shop.server.post("/v1/stock-transfers", &admin, transfer.clone()).await;
    assert_eq!(sent.status, 201, "{}", sent.text);
    assert_eq!(sent.body["status"], "sent");
    assert_eq!(sent.body["receivedAt"], Value::Null);
    assert_eq!(sent.body["lines"][0]["receivedQuantity"], Value::Null);
    assert_eq!(
        (level(&shop, "s1", MUG.0).await, level(&shop, "s2", MUG.0).await),
        (20, 0)
    );
    // Sent again: answered again, taken out once.
    let again = shop.server.post("/v1/stock-transfers", &admin, transfer.clone()).await;
    assert_eq!((again.status, &again.body), (200, &sent.body));
    assert_eq!(level(&shop, "s1", MUG.0).await, 20);
    let mut other = transfer.clone();
    other["lines"][0]["quantity"] = json!(11);
    shop.server
        .post("/v1/stock-transfers", &admin, other)
        .await
        .assert_error(409, "CONFLICT");
    // Three mugs went missing on the way; the books arrived.
    let receipt = json!({"lines": [
        {"skuId": sku(BOOK.0), "receivedQuantity": 4}, {"skuId": sku(MUG.0), "receivedQuantity": 7},
    ]});
    let receive = "/v1/stock-transfers/tr-1/receive";
    let short = json!({"lines": [{"skuId": sku(MUG.0), "receivedQuantity": 7}]});
    let missing = shop.server.post(receive, &admin, short).await;
    missing.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(missing.text.contains(&sku(BOOK.0)), "{}", missing.text);
    let received = shop.server.post(receive, &admin, receipt.clone()).await;
    assert_eq!(received.status, 201, "{}", received.text);
    assert_eq!(received.body["status"], "received");
    assert_eq!(
        received.body["lines"],
        json!([
            {"skuId": sku(MUG.0), "quantity": 10, "receivedQuantity": 7, "differenceQuantity": -3},
            {"skuId": sku(BOOK.0), "quantity": 4, "receivedQuantity": 4, "differenceQuantity": 0},
        ])
    );
    let read = shop.server.get("/v1/stock-transfers/tr-1", &admin).await;
    assert_eq!((read.status, &read.body), (200, &received.body));
    assert_eq!(
        (level(&shop, "s1", MUG.0).await, level(&shop, "s2", MUG.0).await),
        (20, 7)
    );
    assert_eq!(
        (level(&shop, "s1", BOOK.0).await, level(&shop, "s2", BOOK.0).await),
        (6, 4)
    );
    // Received again: answered again; with other quantities: refused.
    let again = shop.server.post(receive, &admin, receipt).await;
    assert_eq!((again.status, &again.body), (200, &received.body));
    let other = json!({"lines": [
        {"skuId": sku(MUG.0), "receivedQuantity": 10}, {"skuId": sku(BOOK.0), "receivedQuantity": 4},
    ]});
    shop.server
        .post(receive, &admin, other)
        .await
        .assert_error(409, "CONFLICT");
    assert_eq!(level(&shop, "s2", MUG.0).await, 7);
    let tr = Some("tr-1".to_owned());
    assert_eq!(
        reasons(&movements(&shop, "s1", MUG.0, 50).await),
        [
            ("count".to_owned(), Some("c-1".to_owned()), 30),
            ("transfer_out".to_owned(), tr.clone(), -10)
        ]
    );
    assert_eq!(
        reasons(&movements(&shop, "s2", MUG.0, 50).await),
        [("transfer_in".to_owned(), tr, 7)]
    );
    // The feed says so, once when sent and once when received (on PostgreSQL an event shows
    // once every transaction before it has committed: read until both are there).
    let (events, _) = read_feed(&shop.server, "types=stock.transferred", 2).await;
    let statuses: Vec<&Value> = events.iter().map(|e| &e["data"]["status"]).collect();
    assert_eq!(statuses, [&json!("sent"), &json!("received")]);
    assert_eq!(
        events
            .iter()
            .map(|e| e["storeId"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["s1", "s2"]
    );
    shop.server.stop().await;
}

async fn transfers_refuse_what_cannot_move(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.server.provision_store("s2").await;
    let admin = shop.server.admin();
    let body = |id: &str, from: &str, to: &str, article: &str, quantity: i64| {
        json!({"transferId": id, "fromStoreId": from, "toStoreId": to,
               "lines": [{"skuId": sku(article), "quantity": quantity}]})
    };
    let post = |body: Value| shop.server.post("/v1/stock-transfers", &admin, body);
    let same = post(body("a", "s1", "s1", MUG.0, 1)).await;
    same.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(same.fields(), ["toStoreId"]);
    assert_eq!(
        post(body("b", "s1", "s2", MUG.0, 0)).await.fields(),
        ["lines.0.quantity"]
    );
    post(body("c", "s1", "s9", MUG.0, 1))
        .await
        .assert_error(404, "NOT_FOUND");
    post(body("d", "s1", "s2", "Nothing", 1))
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    shop.server
        .get("/v1/stock-transfers/none", &admin)
        .await
        .assert_error(404, "NOT_FOUND");
    let receipt = json!({"lines": [{"skuId": sku(MUG.0), "receivedQuantity": 1}]});
    shop.server
        .post("/v1/stock-transfers/none/receive", &admin, receipt)
        .await
        .assert_error(404, "NOT_FOUND");
    // Nothing of the refused ones moved, and their ids are free.
    assert_eq!(movements(&shop, "s1", MUG.0, 50).await, Vec::<Value>::new());
    assert_eq!(post(body("a", "s1", "s2", MUG.0, 1)).await.status, 201);
    let extra = json!({"lines": [
        {"skuId": sku(MUG.0), "receivedQuantity": 1}, {"skuId": sku(BOOK.0), "receivedQuantity": 1},
    ]});
    let refused = shop.server.post("/v1/stock-transfers/a/receive", &admin, extra).await;
    refused.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(refused.text.contains("lines.1.skuId"), "{}", refused.text);
    assert_eq!(movements(&shop, "s2", MUG.0, 50).await, Vec::<Value>::new());
    let reader = shop.server.token("viewer", "pos.stock.read");
    shop.server
        .post("/v1/stock-transfers", &reader, body("e", "s1", "s2", MUG.0, 1))
        .await
        .assert_error(403, "FORBIDDEN");
    assert_eq!(shop.server.get("/v1/stock-transfers/a", &reader).await.status, 200);
    shop.server.stop().await;
}

on_both_engines!(
    every_change_is_a_movement_and_the_level_is_their_sum,
    a_count_racing_sixteen_sellers_loses_no_sale,
    a_count_is_answered_again_not_applied_twice,
    a_transfer_that_arrives_short_records_the_difference,
    transfers_refuse_what_cannot_move,
);
