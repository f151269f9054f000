//! Effective-dated catalog prices (docs/offline.md): a price may be scheduled for a later
//! instant, and a sale is priced with the price in force when it was rung, however late it
//! reaches the server: a till that was offline through a price change charges what it showed.

use crate::harness::{Engine, Reply, TestServer, sku};
use crate::harness::{Shop, line};
use crate::on_both_engines;
use jiff::Timestamp;
use serde_json::{Value, json};

/// The shop's mug, as [`Shop`] provisions it.
const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);
/// The mug's next price, with another VAT rate: the pair is dated together.
const RAISED: (&str, i64, f64) = ("Mug", 1600, 10.0);

/// The shop opens at 09:00 in Paris.
const OPENS: &str = "2026-03-02T08:00:00Z";

fn at(text: &str) -> Timestamp {
    text.parse().expect("an instant")
}

async fn open(engine: Engine) -> Shop {
    Shop::open_at(engine, at(OPENS), |_| {}).await
}

fn mug_path() -> String {
    format!("/v1/catalog/skus/{}", sku("Mug"))
}

/// Writes the mug at `article`'s price, from `effective_from` when given.
async fn put_mug(server: &TestServer, article: (&str, i64, f64), effective_from: Option<&str>) -> Reply {
    let mut body = json!({"name": article.0, "priceCents": article.1, "vatRate": article.2});
    if let Some(instant) = effective_from {
        body["effectiveFrom"] = json!(instant);
    }
    server.put(&mug_path(), &server.admin(), body).await
}

async fn read_mug(server: &TestServer) -> Value {
    let reply = server.get(&mug_path(), &server.admin()).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.body
}

/// A price and its VAT rate.
type Price = (i64, f64);

/// A scheduled price: its instant, price and VAT rate.
type Scheduled = (String, i64, f64);

/// The mug's current price and VAT rate, and its scheduled prices.
fn prices(article: &Value) -> (Price, Vec<Scheduled>) {
    let scheduled = article["scheduledPrices"]
        .as_array()
        .unwrap_or_else(|| panic!("no scheduledPrices in {article}"))
        .iter()
        .map(|p| {
            (
                p["effectiveFrom"].as_str().unwrap().to_owned(),
                p["priceCents"].as_i64().unwrap(),
                p["vatRate"].as_f64().unwrap(),
            )
        })
        .collect();
    let current = (
        article["priceCents"].as_i64().unwrap(),
        article["vatRate"].as_f64().unwrap(),
    );
    (current, scheduled)
}

/// A one-mug sale the till priced at `article`'s price, rung at `issued_at` (now if none).
fn mug_sale(shop: &Shop, transaction: &str, article: (&str, i64, f64), issued_at: Option<&str>) -> Value {
    let mut sale = shop.sale(transaction, vec![line("l1", article, 1)], article.1);
    if let Some(instant) = issued_at {
        sale["issuedAt"] = json!(instant);
    }
    sale
}

/// The unit price and VAT rate `server` quotes for one mug rung at `issued_at` (now if none).
async fn quoted(server: &TestServer, till: &str, issued_at: Option<&str>) -> Price {
    let mut body = json!({"storeId": "s1", "cart": {"freeLineSequence": 0, "lines": [line("l1", MUG, 1)]}});
    if let Some(instant) = issued_at {
        body["issuedAt"] = json!(instant);
    }
    let reply = server.post("/v1/checkout/price", till, body).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let quoted = &reply.body["lines"][0];
    (
        quoted["unitPrice"].as_i64().unwrap(),
        quoted["vatRate"].as_f64().unwrap(),
    )
}

/// The unit price a committed sale charged for its one line, and its total.
fn charged(reply: &Reply) -> (i64, i64) {
    assert_eq!(reply.status, 201, "{}", reply.text);
    let transaction = &reply.body["transaction"];
    (
        transaction["lines"][0]["unitPrice"].as_i64().unwrap(),
        transaction["totals"]["total"].as_i64().unwrap(),
    )
}

async fn sales_rung_before_and_after_a_price_change_pay_the_price_of_their_instant(engine: Engine) {
    let shop = open(engine).await;
    // At 09:00 the back office schedules the raise for 10:00 in Paris, written with its offset.
    let written = put_mug(&shop.server, RAISED, Some("2026-03-02T10:00:00+01:00")).await;
    assert_eq!(written.status, 200, "{}", written.text);
    let expected = (
        (MUG.1, MUG.2),
        vec![("2026-03-02T09:00:00Z".to_owned(), RAISED.1, RAISED.2)],
    );
    assert_eq!(prices(&written.body), expected, "the answer to the write");
    assert_eq!(prices(&read_mug(&shop.server).await), expected, "the article read back");
    let list = shop.server.get("/v1/catalog/skus", &shop.server.admin()).await;
    for article in list.body["items"].as_array().unwrap() {
        let scheduled = prices(article).1;
        match article["skuId"] == sku("Mug") {
            true => assert_eq!(prices(article), expected, "the mug in the list"),
            false => assert!(scheduled.is_empty(), "{article}"),
        }
    }

    // The dry run prices at its issuedAt, else now.
    let till = shop.till.as_str();
    assert_eq!(quoted(&shop.server, till, None).await, (MUG.1, MUG.2));
    assert_eq!(
        quoted(&shop.server, till, Some("2026-03-02T08:59:59.999999Z")).await,
        (MUG.1, MUG.2)
    );
    assert_eq!(
        quoted(&shop.server, till, Some("2026-03-02T09:00:00Z")).await,
        (RAISED.1, RAISED.2),
        "a price applies from its instant on"
    );

    // A till offline since 09:15 sends two sales at 11:00, rung either side of the change.
    shop.server.clock.set(at("2026-03-02T11:00:00Z"));
    let before = shop
        .finalize(&mug_sale(&shop, "t-before", MUG, Some("2026-03-02T08:30:00Z")))
        .await;
    assert_eq!(charged(&before), (MUG.1, MUG.1), "rung before the change");
    let after = shop
        .finalize(&mug_sale(&shop, "t-after", RAISED, Some("2026-03-02T09:10:00Z")))
        .await;
    assert_eq!(charged(&after), (RAISED.1, RAISED.1), "rung after the change");
    let now = shop.finalize(&mug_sale(&shop, "t-now", RAISED, None)).await;
    assert_eq!(charged(&now), (RAISED.1, RAISED.1), "rung now");
    assert_eq!(
        quoted(&shop.server, till, Some("2026-03-02T08:30:00Z")).await,
        (MUG.1, MUG.2)
    );
    // Before the article was in the catalog it had no price of its own then: its first.
    assert_eq!(
        quoted(&shop.server, till, Some("2026-03-02T07:59:00Z")).await,
        (MUG.1, MUG.2)
    );
    shop.server.stop().await;
}

/// A till's clock a little behind the back office's: a sale rung 90 seconds before its
/// article was created is priced with the article's first price, not refused as unknown, in
/// the sale and in the dry run, in a store with prices of its own too; a later price change
/// still applies by the instant each sale was rung.
async fn a_sale_rung_just_before_its_article_was_created_takes_its_first_price(engine: Engine) {
    const SPOON: (&str, i64, f64) = ("Spoon", 500, 20.0);
    let shop = open(engine).await;
    let server = &shop.server;
    server.clock.set(at("2026-03-02T08:10:00Z"));
    let spoon = server.provision_sku(SPOON.0, SPOON.1, SPOON.2).await;
    let raise =
        json!({"name": SPOON.0, "priceCents": 600, "vatRate": SPOON.2, "effectiveFrom": "2026-03-02T08:30:00Z"});
    let raised = server
        .put(&format!("/v1/catalog/skus/{spoon}"), &server.admin(), raise)
        .await;
    assert_eq!(raised.status, 200, "{}", raised.text);
    server.clock.set(at("2026-03-02T08:40:00Z"));

    let spoon_sale = |transaction: &str, price: i64, issued_at: &str| {
        let mut sale = shop.sale(transaction, vec![line("l1", (SPOON.0, price, SPOON.2), 1)], price);
        sale["issuedAt"] = json!(issued_at);
        sale
    };
    let early = shop
        .finalize(&spoon_sale("t-early", SPOON.1, "2026-03-02T08:08:30Z"))
        .await;
    assert_eq!(
        charged(&early),
        (SPOON.1, SPOON.1),
        "rung 90 s before the article was created"
    );
    let to_the_minute = shop
        .finalize(&spoon_sale("t-minute", SPOON.1, "2026-03-02T08:09Z"))
        .await;
    assert_eq!(charged(&to_the_minute), (SPOON.1, SPOON.1), "an issuedAt to the minute");
    let after = shop.finalize(&spoon_sale("t-after", 600, "2026-03-02T08:31:00Z")).await;
    assert_eq!(charged(&after), (600, 600), "the later price by its instant");

    let quote = |issued_at: &str| {
        json!({"storeId": "s1", "issuedAt": issued_at,
               "cart": {"freeLineSequence": 0, "lines": [line("l1", (SPOON.0, 0, SPOON.2), 1)]}})
    };
    let dry_run = server
        .post("/v1/checkout/price", &shop.till, quote("2026-03-02T08:08:30Z"))
        .await;
    assert_eq!(dry_run.status, 200, "{}", dry_run.text);
    assert_eq!(dry_run.body["lines"][0]["unitPrice"], SPOON.1);

    // A store's own price starts later still: before it, the store sells at the catalog's.
    let own = server
        .put(
            &format!("/v1/stores/s1/prices/{spoon}"),
            &server.admin(),
            json!({"priceCents": 450}),
        )
        .await;
    assert!(own.status == 200 || own.status == 201, "{}", own.text);
    server.clock.set(at("2026-03-02T08:45:00Z"));
    let before_own = shop
        .finalize(&spoon_sale("t-store-early", SPOON.1, "2026-03-02T08:08:30Z"))
        .await;
    assert_eq!(charged(&before_own), (SPOON.1, SPOON.1));
    let own_price = shop.finalize(&spoon_sale("t-store", 450, "2026-03-02T08:42:00Z")).await;
    assert_eq!(charged(&own_price), (450, 450));
    shop.server.stop().await;
}

async fn a_scheduled_price_becomes_current_at_its_instant_with_no_write(engine: Engine) {
    let shop = open(engine).await;
    let written = put_mug(&shop.server, RAISED, Some("2026-03-02T09:00:00Z")).await;
    assert_eq!(written.status, 200, "{}", written.text);
    // A sale before the instant warms this node's cache with the mug.
    let sold = shop.finalize(&mug_sale(&shop, "t1", MUG, None)).await;
    assert_eq!(charged(&sold), (MUG.1, MUG.1));
    // On PostgreSQL, a second node on the same database prices the mug too before the instant.
    let second = match engine {
        Engine::Postgres => {
            let url = shop.server.config.database_url();
            let key = shop.server.config.data_dir.join("fiscal-key.pem");
            let node = TestServer::start_at(engine, at(OPENS), |c| {
                c.database_url = Some(url);
                c.fiscal_key_file = Some(key);
            })
            .await;
            assert_eq!(quoted(&node, &shop.till, None).await, (MUG.1, MUG.2));
            Some(node)
        }
        Engine::Sqlite => None,
    };

    // The instant passes: nothing is written, yet the raise is the price.
    let passed = at("2026-03-02T09:00:01Z");
    shop.server.clock.set(passed);
    let sold = shop.finalize(&mug_sale(&shop, "t2", RAISED, None)).await;
    assert_eq!(charged(&sold), (RAISED.1, RAISED.1));
    assert_eq!(quoted(&shop.server, &shop.till, None).await, (RAISED.1, RAISED.2));
    assert_eq!(prices(&read_mug(&shop.server).await), ((RAISED.1, RAISED.2), vec![]));
    if let Some(node) = second {
        node.clock.set(passed);
        assert_eq!(
            quoted(&node, &shop.till, None).await,
            (RAISED.1, RAISED.2),
            "the second node"
        );
        assert_eq!(prices(&read_mug(&node).await), ((RAISED.1, RAISED.2), vec![]));
        node.stop().await;
    }
    shop.server.stop().await;
}

async fn a_price_cannot_start_in_the_past(engine: Engine) {
    let shop = open(engine).await;
    let server = &shop.server;
    let refused = put_mug(server, ("Big mug", 1600, 10.0), Some("2026-03-02T07:59:00Z")).await;
    refused.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(refused.text.contains("effectiveFrom"), "{}", refused.text);
    let mug = read_mug(server).await;
    assert_eq!(prices(&mug), ((MUG.1, MUG.2), vec![]), "nothing changed");
    assert_eq!(mug["name"], "Mug");

    // Within a few seconds of now the back office's clock is trusted: the price applies now.
    let written = put_mug(server, RAISED, Some("2026-03-02T07:59:58Z")).await;
    assert_eq!(written.status, 200, "{}", written.text);
    assert_eq!(prices(&written.body), ((RAISED.1, RAISED.2), vec![]));

    // An import is refused whole, naming the article at fault.
    let article = |name: &str, effective_from: &str| json!({"skuId": sku(name), "name": name, "priceCents": 500, "vatRate": 20, "effectiveFrom": effective_from});
    let import = json!({"skus": [article("Spoon", "2026-03-02T08:00:00Z"), article("Mug", "2026-03-01T08:00:00Z")]});
    let refused = server.post("/v1/catalog/import", &server.admin(), import).await;
    refused.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(refused.text.contains("skus.1.effectiveFrom"), "{}", refused.text);
    let spoon = format!("/v1/catalog/skus/{}", sku("Spoon"));
    server.get(&spoon, &server.admin()).await.assert_error(404, "NOT_FOUND");
    assert_eq!(prices(&read_mug(server).await), ((RAISED.1, RAISED.2), vec![]));

    // An article not in the catalog yet takes its first price now.
    let body = json!({"name": "Spoon", "priceCents": 500, "vatRate": 20, "effectiveFrom": "2026-03-03T08:00:00Z"});
    let refused = server.put(&spoon, &server.admin(), body).await;
    refused.assert_error(422, "BUSINESS_RULE_VIOLATION");
    server.get(&spoon, &server.admin()).await.assert_error(404, "NOT_FOUND");

    // An instant that is no instant is the field's error, as ever.
    let refused = put_mug(server, RAISED, Some("tomorrow")).await;
    refused.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(refused.fields(), ["effectiveFrom"]);
    shop.server.stop().await;
}

async fn a_scheduled_price_is_replaced_at_its_instant_and_a_price_without_one_applies_now(engine: Engine) {
    let shop = open(engine).await;
    let server = &shop.server;
    assert_eq!(
        put_mug(server, RAISED, Some("2026-03-02T10:00:00+01:00")).await.status,
        200
    );
    let replaced = put_mug(server, ("Mug", 1700, 20.0), Some("2026-03-02T09:00:00Z")).await;
    assert_eq!(replaced.status, 200, "{}", replaced.text);
    assert_eq!(
        prices(&replaced.body),
        ((MUG.1, MUG.2), vec![("2026-03-02T09:00:00Z".to_owned(), 1700, 20.0)]),
        "the same instant names the same scheduled price"
    );
    // The import schedules too.
    let import = json!({"skus": [{"skuId": sku("Mug"), "name": "Mug", "priceCents": 1800, "vatRate": 20,
                                   "effectiveFrom": "2026-03-02T11:00:00Z"}]});
    let imported = server.post("/v1/catalog/import", &server.admin(), import).await;
    assert_eq!(imported.body, json!({"created": 0, "updated": 1}), "{}", imported.text);

    // A price without effectiveFrom applies at once; those scheduled stay.
    let now = put_mug(server, ("Mug", 1500, 20.0), None).await;
    assert_eq!(now.status, 200, "{}", now.text);
    let scheduled = vec![
        ("2026-03-02T09:00:00Z".to_owned(), 1700, 20.0),
        ("2026-03-02T11:00:00Z".to_owned(), 1800, 20.0),
    ];
    assert_eq!(prices(&now.body), ((1500, 20.0), scheduled.clone()));
    assert_eq!(prices(&read_mug(server).await), ((1500, 20.0), scheduled));
    let sold = shop.finalize(&mug_sale(&shop, "t1", ("Mug", 1500, 20.0), None)).await;
    assert_eq!(charged(&sold), (1500, 1500));

    server.clock.set(at("2026-03-02T09:30:00Z"));
    assert_eq!(
        prices(&read_mug(server).await),
        ((1700, 20.0), vec![("2026-03-02T11:00:00Z".to_owned(), 1800, 20.0)])
    );
    let sold = shop.finalize(&mug_sale(&shop, "t2", ("Mug", 1700, 20.0), None)).await;
    assert_eq!(charged(&sold), (1700, 1700));
    shop.server.stop().await;
}

on_both_engines!(
    sales_rung_before_and_after_a_price_change_pay_the_price_of_their_instant,
    a_scheduled_price_becomes_current_at_its_instant_with_no_write,
    a_price_cannot_start_in_the_past,
    a_scheduled_price_is_replaced_at_its_instant_and_a_price_without_one_applies_now,
    a_sale_rung_just_before_its_article_was_created_takes_its_first_price,
);
