//! A till's snapshot of its store (docs/sync.md): everything it sells with in one consistent
//! read, and the feed cursor after which every change it missed is named.

use crate::events::{read_feed, read_feed_after};
use crate::harness::{Engine, Reply, Shop, TestServer, sku};
use crate::on_both_engines;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

on_both_engines!(
    a_snapshot_holds_what_a_till_of_its_store_sells_with,
    the_feed_after_a_snapshot_names_every_change_it_missed,
    a_snapshot_taken_while_prices_change_is_consistent_with_its_cursor,
    bad_snapshot_requests_are_refused,
);

/// The snapshot's lines, after checking it is NDJSON that begins with its head and ends with
/// its end line.
fn lines(reply: &Reply) -> Vec<Value> {
    assert_eq!(reply.status, 200, "{}", reply.text);
    let content_type = reply.headers.get("content-type").and_then(|v| v.to_str().ok());
    assert_eq!(content_type, Some("application/x-ndjson"));
    assert!(reply.text.ends_with('\n'), "every line ends with a newline");
    let lines: Vec<Value> = reply
        .text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    assert_eq!(
        lines.first().map(|l| &l["type"]),
        Some(&json!("head")),
        "{}",
        reply.text
    );
    assert_eq!(lines.last().map(|l| &l["type"]), Some(&json!("end")), "{}", reply.text);
    lines
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|line| line["type"] == kind).collect()
}

async fn snapshot(server: &TestServer, store: &str) -> Vec<Value> {
    let token = server.token("till-app", "pos.catalog.read");
    lines(&server.get(&format!("/v1/sync/snapshot?storeId={store}"), &token).await)
}

fn promotion(id: &str, extra: Value) -> Value {
    let mut rule = json!({"id": id, "type": "percent_off", "name": id, "percentBps": 500,
        "minSubtotalCents": 0, "validFrom": "2020-01-01T00:00:00Z", "validUntil": "2099-12-31T23:59:59Z"});
    for (key, value) in extra.as_object().unwrap() {
        rule[key] = value.clone();
    }
    rule
}

async fn a_snapshot_holds_what_a_till_of_its_store_sells_with(engine: Engine) {
    let shop = Shop::open(engine).await;
    let server = &shop.server;
    let admin = server.admin();
    server.provision_store("s2").await;
    let (mug, baguette) = (sku("Mug"), sku("Baguette"));
    let later = "2099-01-01T00:00:00Z";
    for (path, body) in [
        (format!("/v1/stores/s1/prices/{mug}"), json!({"priceCents": 1300})),
        (
            format!("/v1/stores/s1/prices/{mug}"),
            json!({"priceCents": 1200, "effectiveFrom": later}),
        ),
        (format!("/v1/stores/s2/prices/{baguette}"), json!({"priceCents": 99})),
        (
            format!("/v1/catalog/skus/{baguette}"),
            json!({"name": "Baguette", "priceCents": 150, "vatRate": 5.5, "effectiveFrom": later}),
        ),
        ("/v1/coupons/TEN".to_owned(), json!({"percentBps": 1000})),
        (
            "/v1/coupons/OFF".to_owned(),
            json!({"percentBps": 1000, "active": false}),
        ),
        (
            "/v1/coupons/OVER".to_owned(),
            json!({"percentBps": 1000, "validUntil": "2021-01-01T00:00:00Z"}),
        ),
    ] {
        let reply = server.put(&path, &admin, body).await;
        assert!(reply.status < 300, "{path}: {}", reply.text);
    }
    for rule in [
        promotion("everywhere", json!({})),
        promotion("here", json!({"storeIds": ["s1"]})),
        promotion("there", json!({"storeIds": ["s2"]})),
        promotion(
            "over",
            json!({"validFrom": "2020-01-01T00:00:00Z", "validUntil": "2021-01-01T00:00:00Z"}),
        ),
        promotion("later", json!({"validFrom": "2098-01-01T00:00:00Z"})),
    ] {
        let reply = server.post("/v1/promotions", &admin, rule).await;
        assert!(reply.status < 300, "{}", reply.text);
    }
    assert_eq!(
        server
            .post("/v1/promotions/there/deactivate", &admin, json!({}))
            .await
            .status,
        200
    );

    let lines = snapshot(server, "s1").await;
    let head = &lines[0];
    let cursor = head["cursor"].as_str().unwrap();
    assert!(cursor.bytes().all(|b| b.is_ascii_digit()), "{head}");
    assert_eq!(head["store"], server.get("/v1/stores/s1", &admin).await.body);

    // Each article as the catalog reads it, with the store's own prices.
    let articles = of_type(&lines, "article");
    assert_eq!(articles.len(), 3, "{lines:?}");
    for article in &articles {
        let id = article["article"]["skuId"].as_str().unwrap();
        let read = server.get(&format!("/v1/catalog/skus/{id}"), &admin).await;
        assert_eq!(article["article"], read.body, "{id}");
    }
    let by_id: BTreeMap<&str, &Value> = articles
        .iter()
        .map(|a| (a["article"]["skuId"].as_str().unwrap(), &a["storePrices"]))
        .collect();
    assert_eq!(
        by_id[mug.as_str()],
        &json!({"priceCents": 1300, "scheduledPrices": [{"effectiveFrom": later, "priceCents": 1200}]})
    );
    // The other store's price is not this store's.
    assert_eq!(
        by_id[baguette.as_str()],
        &json!({"priceCents": null, "scheduledPrices": []})
    );
    let baguette_line = articles.iter().find(|a| a["article"]["skuId"] == baguette).unwrap();
    assert_eq!(baguette_line["article"]["scheduledPrices"][0]["priceCents"], 150);

    // The rules that may run here from now on; coupons that may still be presented.
    let rules: BTreeSet<&str> = of_type(&lines, "promotion")
        .iter()
        .map(|p| p["promotion"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(rules, BTreeSet::from(["everywhere", "here", "later"]));
    let here = of_type(&lines, "promotion")
        .into_iter()
        .find(|p| p["promotion"]["id"] == "here")
        .unwrap();
    let listed = server.get("/v1/promotions?storeId=s1", &admin).await;
    let listed = listed.body["promotions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "here")
        .cloned();
    assert_eq!(Some(here["promotion"].clone()), listed);
    let coupons: Vec<&str> = of_type(&lines, "coupon")
        .iter()
        .map(|c| c["coupon"]["code"].as_str().unwrap())
        .collect();
    assert_eq!(coupons, ["TEN"]);

    // Staff: a name and a role, nothing else (never a PIN).
    let staff: Vec<&Value> = of_type(&lines, "staff");
    assert_eq!(
        staff,
        [
            &json!({"type": "staff", "subject": "camille", "displayName": "Camille", "role": "cashier"}),
            &json!({"type": "staff", "subject": "mathis", "displayName": "mathis", "role": "manager"}),
        ]
    );
    assert_eq!(
        lines.last().unwrap(),
        &json!({"type": "end", "articles": 3, "promotions": 3, "coupons": 1, "staff": 2})
    );

    // Another store's snapshot has its own prices and rules.
    let there = snapshot(server, "s2").await;
    let rules: BTreeSet<&str> = of_type(&there, "promotion")
        .iter()
        .map(|p| p["promotion"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        BTreeSet::from(["everywhere", "later"]),
        "a deactivated rule is left out"
    );
    let baguette_there = of_type(&there, "article")
        .into_iter()
        .find(|a| a["article"]["skuId"] == baguette)
        .unwrap();
    assert_eq!(baguette_there["storePrices"]["priceCents"], 99);
}

async fn the_feed_after_a_snapshot_names_every_change_it_missed(engine: Engine) {
    let shop = Shop::open(engine).await;
    let server = &shop.server;
    let admin = server.admin();
    // The shop's own events (three articles, a session) numbered and released first.
    read_feed(server, "", 4).await;
    let lines = snapshot(server, "s1").await;
    let cursor = lines[0]["cursor"].as_str().unwrap().to_owned();
    let mug = sku("Mug");
    for (path, body) in [
        (
            format!("/v1/catalog/skus/{mug}"),
            json!({"name": "Mug", "priceCents": 1500, "vatRate": 20.0}),
        ),
        (format!("/v1/stores/s1/prices/{mug}"), json!({"priceCents": 1400})),
        ("/v1/coupons/TEN".to_owned(), json!({"percentBps": 1000})),
        (
            "/v1/customers/c-1".to_owned(),
            json!({"displayName": "Marie Curie", "email": "marie@example.fr", "groups": ["trade"]}),
        ),
    ] {
        let reply = server.put(&path, &admin, body).await;
        assert!(reply.status < 300, "{path}: {}", reply.text);
    }
    let deleted = server
        .call(
            reqwest::Method::DELETE,
            &format!("/v1/stores/s1/prices/{mug}"),
            Some(&admin),
            None,
        )
        .await;
    assert!(deleted.status < 300, "{}", deleted.text);

    let kinds = "types=catalog.changed,store_price.changed,coupon.changed,customer.changed";
    let (events, _) = read_feed_after(server, &cursor, kinds, 5).await;
    let seen: Vec<(&str, &Value, &Value)> = events
        .iter()
        .map(|e| (e["type"].as_str().unwrap(), &e["storeId"], &e["data"]))
        .collect();
    assert_eq!(
        seen,
        [
            ("catalog.changed", &Value::Null, &json!({"skuId": mug})),
            (
                "store_price.changed",
                &json!("s1"),
                &json!({"storeId": "s1", "skuId": mug})
            ),
            ("coupon.changed", &Value::Null, &json!({"code": "TEN"})),
            ("customer.changed", &Value::Null, &json!({"customerId": "c-1"})),
            (
                "store_price.changed",
                &json!("s1"),
                &json!({"storeId": "s1", "skuId": mug})
            ),
        ]
    );
    let text = serde_json::to_string(&events).unwrap();
    for personal in ["Marie", "marie@example.fr", "trade"] {
        assert!(!text.contains(personal), "the feed shows {personal}: {text}");
    }
    // A new snapshot has what the events named, and its cursor is past them.
    let again = snapshot(server, "s1").await;
    let after: i64 = again[0]["cursor"].as_str().unwrap().parse().unwrap();
    assert!(after >= events.last().unwrap()["cursor"].as_str().unwrap().parse().unwrap());
    let mug_line = of_type(&again, "article")
        .into_iter()
        .find(|a| a["article"]["skuId"] == mug)
        .unwrap();
    assert_eq!(mug_line["article"]["priceCents"], 1500);
    assert_eq!(mug_line["storePrices"]["priceCents"], Value::Null);
}

/// Prices change while snapshots stream: an article whose price in a snapshot is not its
/// final one must be named by a `catalog.changed` after the snapshot's cursor, and every
/// article is in it.
async fn a_snapshot_taken_while_prices_change_is_consistent_with_its_cursor(engine: Engine) {
    let server = TestServer::start(engine).await;
    server.provision_store("s1").await;
    let admin = server.admin();
    let count = 1_200;
    let ids: Vec<String> = (0..count).map(|n| sku(&format!("Article {n}"))).collect();
    let skus: Vec<Value> = (0..count)
        .map(|n| json!({"skuId": ids[n], "name": format!("Article {n}"), "priceCents": 100, "vatRate": 20.0}))
        .collect();
    let imported = server.post("/v1/catalog/import", &admin, json!({"skus": skus})).await;
    assert!(imported.status < 300, "{}", imported.text);

    let writer = async {
        for round in 0..60 {
            let n = (round * 397) % count;
            let body = json!({"name": format!("Article {n}"), "priceCents": 200 + round as i64, "vatRate": 20.0});
            let reply = server.put(&format!("/v1/catalog/skus/{}", ids[n]), &admin, body).await;
            assert_eq!(reply.status, 200, "{}", reply.text);
        }
    };
    let readers = async {
        let mut taken = Vec::new();
        for _ in 0..6 {
            taken.push(snapshot(&server, "s1").await);
        }
        taken
    };
    let ((), taken) = tokio::join!(writer, readers);
    // One more write, whose event is numbered after every price change's: once it can be read,
    // so can they (on PostgreSQL the feed numbers events a moment after their commit).
    assert_eq!(
        server
            .put("/v1/coupons/LAST", &admin, json!({"percentBps": 100}))
            .await
            .status,
        201
    );
    read_feed(&server, "types=coupon.changed", 1).await;

    let mut finals = BTreeMap::new();
    let mut path = "/v1/catalog/skus?limit=500".to_owned();
    loop {
        let reply = server.get(&path, &admin).await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        for item in reply.body["items"].as_array().unwrap() {
            finals.insert(
                item["skuId"].as_str().unwrap().to_owned(),
                item["priceCents"].as_i64().unwrap(),
            );
        }
        match reply.body["nextCursor"].as_str() {
            Some(next) => path = format!("/v1/catalog/skus?limit=500&cursor={next}"),
            None => break,
        }
    }
    assert_eq!(finals.len(), count, "the catalog read back whole");
    for lines in taken {
        let cursor = lines[0]["cursor"].as_str().unwrap();
        let articles: BTreeMap<String, i64> = of_type(&lines, "article")
            .iter()
            .map(|a| {
                (
                    a["article"]["skuId"].as_str().unwrap().to_owned(),
                    a["article"]["priceCents"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(articles.len(), count, "every article is in the snapshot");
        let stale: BTreeSet<&String> = articles
            .iter()
            .filter(|(id, price)| finals[*id] != **price)
            .map(|(id, _)| id)
            .collect();
        let mut named = BTreeSet::new();
        let mut after = cursor.to_owned();
        loop {
            let path = format!("/v1/events?after={after}&limit=1000&types=catalog.changed");
            let feed = server.get(&path, &admin).await;
            assert_eq!(feed.status, 200, "{}", feed.text);
            let events = feed.body["events"].as_array().unwrap();
            if events.is_empty() {
                break;
            }
            named.extend(events.iter().map(|e| e["data"]["skuId"].as_str().unwrap().to_owned()));
            after = feed.str("nextCursor");
        }
        let missed: Vec<&&String> = stale.iter().filter(|id| !named.contains(id.as_str())).collect();
        assert!(
            missed.is_empty(),
            "changed after the snapshot yet not named after its cursor: {missed:?}"
        );
    }
}

async fn bad_snapshot_requests_are_refused(engine: Engine) {
    let server = TestServer::start(engine).await;
    server.provision_store("s1").await;
    let token = server.token("till-app", "pos.catalog.read");
    server
        .get("/v1/sync/snapshot?storeId=nowhere", &token)
        .await
        .assert_error(404, "NOT_FOUND");
    for query in ["", "?storeId=", "?store=s1"] {
        let reply = server.get(&format!("/v1/sync/snapshot{query}"), &token).await;
        reply.assert_error(400, "VALIDATION_FAILED");
        assert_eq!(reply.fields(), ["storeId"], "{query}: {}", reply.text);
    }
    let seller = server.token("till", "pos.sales.read");
    server
        .get("/v1/sync/snapshot?storeId=s1", &seller)
        .await
        .assert_error(403, "FORBIDDEN");
    let anonymous = server
        .call(reqwest::Method::GET, "/v1/sync/snapshot?storeId=s1", None, None)
        .await;
    anonymous.assert_error(401, "UNAUTHORIZED");
}
