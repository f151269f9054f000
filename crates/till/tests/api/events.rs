//! The event feed (docs/events.md): every fact once, in commit order, with the data the
//! fact's own answer gave; a consumer pages through it by `nextCursor`.

use crate::harness::{Reply, TestServer, sku};
use crate::harness::{Shop, line};
use crate::on_both_engines;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const BAGUETTE: (&str, i64, f64) = ("Baguette", 130, 5.5);
const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);

on_both_engines!(
    every_fact_is_in_the_feed_once_with_its_answer,
    the_feed_pages_by_its_cursor_and_filters_by_type,
    bad_feed_reads_are_refused_by_name,
);

/// Every event after `after`, `limit` at a time, following `nextCursor`, until `count` are
/// read: on PostgreSQL a node's sequencer numbers committed events within milliseconds, so
/// the last ones may take a few reads to appear.
pub async fn read_feed(server: &TestServer, query: &str, count: usize) -> (Vec<Value>, String) {
    read_feed_after(server, "", query, count).await
}

/// [`read_feed`] from the cursor `after` (empty: the feed's start).
pub async fn read_feed_after(server: &TestServer, after: &str, query: &str, count: usize) -> (Vec<Value>, String) {
    let token = server.token("erp", "pos.events.read");
    let (mut events, mut after) = (Vec::new(), after.to_owned());
    let deadline = Instant::now() + Duration::from_secs(20);
    while events.len() < count {
        let separator = if query.is_empty() { "" } else { "&" };
        let path = match after.as_str() {
            "" => format!("/v1/events?{query}"),
            after => format!("/v1/events?after={after}{separator}{query}"),
        };
        let reply = server.get(&path, &token).await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        let page = reply.body["events"].as_array().unwrap().clone();
        let next = reply.str("nextCursor");
        match page.last() {
            Some(last) => assert_eq!(last["cursor"].as_str().unwrap(), next, "nextCursor is the last cursor"),
            None if !after.is_empty() => assert_eq!(next, after, "an empty page keeps the cursor"),
            None => {}
        }
        if page.is_empty() {
            assert!(
                Instant::now() < deadline,
                "only {} events of {count}: {events:?}",
                events.len()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        events.extend(page);
        after = next;
    }
    (events, after)
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

async fn every_fact_is_in_the_feed_once_with_its_answer(engine: crate::harness::Engine) {
    let shop = Shop::open(engine).await;
    let admin = shop.server.admin();
    let sold = shop
        .finalize(&shop.sale("t1", vec![line("l1", MUG, 2)], 2 * MUG.1))
        .await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    let back = json!({
        "transactionId": "r1", "originalTransactionId": "t1", "number": "R-1", "storeId": "s1",
        "sellerId": "camille", "sessionId": shop.session, "lines": [{"lineId": "l1", "quantity": 1}],
        "tenders": {"amountDue": MUG.1, "sequence": 1, "tenders": [
            {"id": "p1", "method": "credit_note", "applied": MUG.1, "presented": MUG.1, "change": 0, "forfeited": 0}]},
    });
    let returned = shop.server.post("/v1/returns", &shop.till, back).await;
    assert_eq!(returned.status, 201, "{}", returned.text);
    let promotion = json!({"id": "promo-1", "type": "percent_off", "name": "Big baskets", "percentBps": 100,
        "minSubtotalCents": 100_000, "validFrom": "2020-01-01T00:00:00Z", "validUntil": "2099-12-31T23:59:59Z"});
    let promoted = shop.server.post("/v1/promotions", &admin, promotion).await;
    assert!(promoted.status < 300, "{}", promoted.text);
    let counted = shop
        .server
        .put(
            &format!("/v1/stores/s1/stock/{}", sku(BAGUETTE.0)),
            &admin,
            json!({"onHand": 40}),
        )
        .await;
    assert_eq!(counted.status, 200, "{}", counted.text);
    let issued = shop
        .server
        .post("/v1/gift-cards", &admin, json!({"balanceCents": 2500}))
        .await;
    assert_eq!(issued.status, 201, "{}", issued.text);
    let code = issued.str("code");
    let blocked = shop
        .server
        .post(&format!("/v1/gift-cards/{code}/block"), &admin, json!({}))
        .await;
    assert!(blocked.status < 300, "{}", blocked.text);
    let closed = shop
        .server
        .post(
            &format!("/v1/register-sessions/{}/close", shop.session),
            &admin,
            json!({}),
        )
        .await;
    assert_eq!(closed.status, 200, "{}", closed.text);

    // The shop's catalog is in the feed too (docs/sync.md); these are the facts of selling.
    let selling = "types=session.opened,sale.completed,creditnote.issued,return.completed,promotion.changed,\
                   stock.adjusted,giftcard.changed,session.closed";
    let (events, _) = read_feed(&shop.server, &format!("limit=3&{selling}"), 9).await;
    assert_eq!(
        types(&events),
        [
            "session.opened",
            "sale.completed",
            "creditnote.issued",
            "return.completed",
            "promotion.changed",
            "stock.adjusted",
            "giftcard.changed",
            "giftcard.changed",
            "session.closed",
        ]
    );
    let mut ids: Vec<&str> = events.iter().map(|e| e["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), events.len(), "every event has an id of its own");
    let cursors: Vec<i64> = events
        .iter()
        .map(|e| e["cursor"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(cursors.windows(2).all(|w| w[0] < w[1]), "{cursors:?}");
    // The data of each event is what the fact's own answer said.
    assert_eq!(events[1]["data"], sold.body);
    // But for the code of the credit note a return issues, which only its caller learns.
    let mut told = returned.body.clone();
    assert!(told.as_object_mut().unwrap().remove("creditNoteCode").is_some());
    assert_eq!(events[3]["data"], told);
    assert_eq!(events[8]["data"], closed.body);
    assert_eq!(events[1]["registerId"], "r1");
    assert_eq!(events[1]["storeId"], "s1");
    assert_eq!(events[2]["data"]["amountCents"], MUG.1);
    assert_eq!(events[5]["data"]["onHand"], 40);
    assert_eq!(events[6]["data"]["activity"], "issue");
    assert_eq!(events[7]["data"]["activity"], "block");
    assert_eq!(events[6]["data"]["last4"], json!(&code[code.len() - 4..]));
    assert!(
        !events[6].to_string().contains(&code),
        "the feed never shows a card's code"
    );
}

async fn the_feed_pages_by_its_cursor_and_filters_by_type(engine: crate::harness::Engine) {
    let shop = Shop::open(engine).await;
    for n in 0..4 {
        let sale = shop.sale(&format!("t{n}"), vec![line("l1", BAGUETTE, 1)], BAGUETTE.1);
        assert_eq!(shop.finalize(&sale).await.status, 201);
    }
    // The shop's three articles, the session's opening and four sales: pages of two, then an
    // exact end.
    let (all, last) = read_feed(&shop.server, "limit=8", 8).await;
    assert_eq!(
        types(&all)[..4],
        [
            "catalog.changed",
            "catalog.changed",
            "catalog.changed",
            "session.opened"
        ]
    );
    let token = shop.server.token("erp", "pos.events.read");
    let past_end = shop.server.get(&format!("/v1/events?after={last}"), &token).await;
    assert_eq!(past_end.body["events"], json!([]));
    assert_eq!(past_end.str("nextCursor"), last);
    let (paged, _) = read_feed(&shop.server, "limit=2", 8).await;
    assert_eq!(paged, all, "pages of two read the same events");
    let (sales, _) = read_feed(&shop.server, "types=sale.completed", 4).await;
    assert_eq!(types(&sales), ["sale.completed"; 4]);
    let ids: Vec<&str> = sales
        .iter()
        .map(|e| e["data"]["transaction"]["id"].as_str().unwrap_or_default())
        .collect();
    let expected: Vec<Value> = all[4..].iter().map(|e| e["data"].clone()).collect();
    let got: Vec<Value> = sales.iter().map(|e| e["data"].clone()).collect();
    assert_eq!(got, expected, "{ids:?}");
    let none = shop
        .server
        .get("/v1/events?types=stock.transferred,cash.moved", &token)
        .await;
    assert_eq!(none.body["events"], json!([]));
    assert_eq!(none.str("nextCursor"), "0", "before the first event the cursor is 0");
}

async fn bad_feed_reads_are_refused_by_name(engine: crate::harness::Engine) {
    let server = TestServer::start(engine).await;
    let token = server.token("erp", "pos.events.read");
    for (query, field) in [
        ("after=abc", "after"),
        ("after=-1", "after"),
        ("after=1.5", "after"),
        ("after=99999999999999999999", "after"),
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("types=orders", "types"),
        ("types=sale.completed,", "types"),
        ("types=", "types"),
    ] {
        let reply: Reply = server.get(&format!("/v1/events?{query}"), &token).await;
        reply.assert_error(400, "VALIDATION_FAILED");
        assert_eq!(reply.fields(), [field], "{query}: {}", reply.text);
    }
    let seller = server.token("till", "pos.sales.read");
    server.get("/v1/events", &seller).await.assert_error(403, "FORBIDDEN");
}
