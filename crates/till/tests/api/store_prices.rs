//! Per-store prices (docs/stock.md): a store's own price of an article overrides the
//! catalog's in that store, from its instant on, at finalize and in the price dry run. The VAT
//! rate stays the catalog's.

use crate::harness::{Engine, Reply, TestServer, sku};
use crate::harness::{Shop, line};
use crate::on_both_engines;
use jiff::Timestamp;
use reqwest::Method;
use serde_json::{Value, json};

/// The shop's mug, as [`Shop`] provisions it.
const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);

/// The shop opens at 09:00 in Paris.
const OPENS: &str = "2026-03-02T08:00:00Z";

fn at(text: &str) -> Timestamp {
    text.parse().expect("an instant")
}

/// The shop of [`Shop`] (store `s1`), and a second store `s2` with its own open till.
struct Chain {
    shop: Shop,
    /// The session and till token of register `r2` in store `s2`.
    second: (String, String),
}

async fn open(engine: Engine) -> Chain {
    open_with(engine, |_| {}).await
}

async fn open_with(engine: Engine, tweak: impl FnOnce(&mut till::config::Config)) -> Chain {
    let shop = Shop::open_at(engine, at(OPENS), tweak).await;
    shop.server.provision_store("s2").await;
    let second = shop.server.open_session("s2", "r2", "camille", "1234").await;
    Chain { shop, second }
}

fn price_path(store: &str) -> String {
    format!("/v1/stores/{store}/prices/{}", sku("Mug"))
}

/// Writes `store`'s price of the mug, from `effective_from` when given.
async fn put_price(server: &TestServer, store: &str, cents: i64, effective_from: Option<&str>) -> Reply {
    let mut body = json!({"priceCents": cents});
    if let Some(instant) = effective_from {
        body["effectiveFrom"] = json!(instant);
    }
    server.put(&price_path(store), &server.admin(), body).await
}

/// A store price view: the price now, its source, and the scheduled prices.
type View = (i64, String, Vec<(String, i64)>);

fn view(reply: &Reply) -> View {
    assert!(reply.status == 200 || reply.status == 201, "{}", reply.text);
    let body = &reply.body;
    assert_eq!(body["skuId"], sku("Mug"), "{body}");
    let scheduled = body["scheduledPrices"]
        .as_array()
        .unwrap_or_else(|| panic!("no scheduledPrices in {body}"))
        .iter()
        .map(|p| {
            (
                p["effectiveFrom"].as_str().unwrap().to_owned(),
                p["priceCents"].as_i64().unwrap(),
            )
        })
        .collect();
    (
        body["priceCents"].as_i64().unwrap(),
        body["priceSource"].as_str().unwrap().to_owned(),
        scheduled,
    )
}

async fn read_price(server: &TestServer, store: &str) -> Reply {
    server.get(&price_path(store), &server.admin()).await
}

impl Chain {
    /// A one-mug sale in `store` the till priced at `advisory`, rung at `issued_at` (now if
    /// none).
    fn sale(&self, store: &str, transaction: &str, advisory: i64, issued_at: Option<&str>) -> Value {
        let mut sale = self
            .shop
            .sale(transaction, vec![line("l1", ("Mug", advisory, MUG.2), 1)], advisory);
        if store == "s2" {
            sale["storeId"] = json!("s2");
            sale["sessionId"] = json!(self.second.0);
        }
        if let Some(instant) = issued_at {
            sale["issuedAt"] = json!(instant);
        }
        sale
    }

    fn till(&self, store: &str) -> &str {
        match store {
            "s2" => &self.second.1,
            _ => &self.shop.till,
        }
    }

    /// The unit price one mug in `store` was charged, sold at `issued_at` (the sale event
    /// shows no VAT rate: [`Chain::quoted`] and the X report do).
    async fn sell(&self, store: &str, transaction: &str, advisory: i64, issued_at: Option<&str>) -> i64 {
        let sale = self.sale(store, transaction, advisory, issued_at);
        let reply = self.shop.finalize_as(self.till(store), &sale).await;
        assert_eq!(reply.status, 201, "{}", reply.text);
        let line = &reply.body["transaction"]["lines"][0];
        assert_eq!(
            reply.body["transaction"]["totals"]["total"], line["unitPrice"],
            "{}",
            reply.text
        );
        line["unitPrice"].as_i64().unwrap()
    }

    /// The VAT buckets of store `s1`'s session so far: `[{vatRate, totalCents, vatCents}]`.
    async fn vat_so_far(&self) -> Value {
        let path = format!("/v1/register-sessions/{}/x-report", self.shop.session);
        let x = self.shop.server.get(&path, &self.shop.till).await;
        assert_eq!(x.status, 200, "{}", x.text);
        x.body["vat"].clone()
    }

    /// The unit price and VAT rate the dry run quotes for one mug in `store`, rung at
    /// `issued_at`.
    async fn quoted(&self, server: &TestServer, store: &str, issued_at: Option<&str>) -> (i64, f64) {
        quoted(server, self.till(store), store, issued_at).await
    }
}

async fn quoted(server: &TestServer, till: &str, store: &str, issued_at: Option<&str>) -> (i64, f64) {
    let mut body = json!({"storeId": store, "cart": {"freeLineSequence": 0, "lines": [line("l1", MUG, 1)]}});
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

async fn a_store_price_overrides_the_catalog_in_that_store_only(engine: Engine) {
    let chain = open(engine).await;
    let server = &chain.shop.server;
    // A sale before the write warms this node's prices with the mug in s1.
    assert_eq!(chain.sell("s1", "t1", MUG.1, None).await, MUG.1);

    let written = put_price(server, "s1", 1200, None).await;
    assert_eq!(written.status, 201, "the store's first own price: {}", written.text);
    assert_eq!(written.body["storeId"], "s1");
    let own = (1200, "store".to_owned(), vec![]);
    assert_eq!(view(&written), own);
    let again = put_price(server, "s1", 1200, None).await;
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(view(&again), own);
    assert_eq!(view(&read_price(server, "s1").await), own);

    // s1 sells at its own price, with the catalog's VAT rate; s2 at the catalog's.
    assert_eq!(chain.sell("s1", "t2", 1200, None).await, 1200);
    assert_eq!(
        chain.quoted(server, "s1", None).await,
        (1200, MUG.2),
        "the dry run agrees"
    );
    assert_eq!(chain.sell("s2", "u1", MUG.1, None).await, MUG.1);
    assert_eq!(chain.quoted(server, "s2", None).await, (MUG.1, MUG.2));
    let none = read_price(server, "s2").await;
    none.assert_error(404, "NOT_FOUND");
    assert!(none.text.contains("no price of its own"), "{}", none.text);

    // A catalog price change moves s2, not s1; its VAT rate moves both.
    let catalog = json!({"name": "Mug", "priceCents": 1600, "vatRate": 10});
    let changed = server
        .put(&format!("/v1/catalog/skus/{}", sku("Mug")), &server.admin(), catalog)
        .await;
    assert_eq!(changed.status, 200, "{}", changed.text);
    assert_eq!(chain.sell("s1", "t3", 1200, None).await, 1200);
    assert_eq!(chain.quoted(server, "s1", None).await, (1200, 10.0));
    assert_eq!(chain.sell("s2", "u2", 1600, None).await, 1600);
    assert_eq!(chain.quoted(server, "s2", None).await, (1600, 10.0));
    assert_eq!(view(&read_price(server, "s1").await), own);

    // A new price of the store replaces its own.
    let lowered = put_price(server, "s1", 999, None).await;
    assert_eq!(lowered.status, 200, "{}", lowered.text);
    assert_eq!(chain.sell("s1", "t4", 999, None).await, 999);
    // Finalize booked each s1 sale at its price, under the catalog's VAT rate then.
    assert_eq!(
        chain.vat_so_far().await,
        json!([{"vatRate": 20, "totalCents": MUG.1 + 1200, "vatCents": 242 + 200},
               {"vatRate": 10, "totalCents": 1200 + 999, "vatCents": 109 + 91}])
    );
    chain.shop.server.stop().await;
}

async fn a_scheduled_store_price_applies_to_sales_rung_from_its_instant_on(engine: Engine) {
    let chain = open(engine).await;
    let server = &chain.shop.server;
    // The catalog raises the mug at 10:00, with another VAT rate; s1 lowers it from 12:00.
    let raise = json!({"name": "Mug", "priceCents": 1600, "vatRate": 10, "effectiveFrom": "2026-03-02T10:00:00Z"});
    let raised = server
        .put(&format!("/v1/catalog/skus/{}", sku("Mug")), &server.admin(), raise)
        .await;
    assert_eq!(raised.status, 200, "{}", raised.text);
    let written = put_price(server, "s1", 1200, Some("2026-03-02T13:00:00+01:00")).await;
    assert_eq!(written.status, 201, "{}", written.text);
    let scheduled = (
        MUG.1,
        "catalog".to_owned(),
        vec![("2026-03-02T12:00:00Z".to_owned(), 1200)],
    );
    assert_eq!(view(&written), scheduled, "until 12:00 s1 sells at the catalog's price");
    assert_eq!(view(&read_price(server, "s1").await), scheduled);
    // A second write at the same instant replaces the scheduled price.
    let replaced = put_price(server, "s1", 1100, Some("2026-03-02T12:00:00Z")).await;
    assert_eq!(
        view(&replaced),
        (
            MUG.1,
            "catalog".to_owned(),
            vec![("2026-03-02T12:00:00Z".to_owned(), 1100)]
        )
    );
    assert_eq!(chain.sell("s1", "t1", MUG.1, None).await, MUG.1, "rung now");

    // A till offline since 09:00 sends its sales at 13:00: each pays the price of its instant.
    server.clock.set(at("2026-03-02T13:00:00Z"));
    let rung = [
        ("t2", "2026-03-02T09:30:00Z", (MUG.1, MUG.2)),
        ("t3", "2026-03-02T11:59:59.999999Z", (1600, 10.0)),
        ("t4", "2026-03-02T12:00:00Z", (1100, 10.0)),
    ];
    for (transaction, issued_at, price) in rung {
        assert_eq!(
            chain.quoted(server, "s1", Some(issued_at)).await,
            price,
            "quoted at {issued_at}"
        );
        assert_eq!(
            chain.sell("s1", transaction, price.0, Some(issued_at)).await,
            price.0,
            "sold at {issued_at}"
        );
    }
    assert_eq!(chain.sell("s1", "t5", 1100, None).await, 1100, "rung now");
    assert_eq!(chain.sell("s2", "u1", 1600, None).await, 1600, "the other store");
    assert_eq!(
        chain.vat_so_far().await,
        json!([{"vatRate": 20, "totalCents": 2 * MUG.1, "vatCents": 2 * 242},
               {"vatRate": 10, "totalCents": 1600 + 2 * 1100, "vatCents": 145 + 2 * 100}])
    );
    assert_eq!(
        view(&read_price(server, "s1").await),
        (1100, "store".to_owned(), vec![])
    );
    chain.shop.server.stop().await;
}

async fn a_removed_store_price_gives_the_catalog_price_back_from_now_on(engine: Engine) {
    let chain = open(engine).await;
    let server = &chain.shop.server;
    assert_eq!(put_price(server, "s1", 1200, None).await.status, 201);
    let scheduled = put_price(server, "s1", 1100, Some("2026-03-02T12:00:00Z")).await;
    assert_eq!(scheduled.status, 200, "{}", scheduled.text);
    server.clock.set(at("2026-03-02T09:00:00Z"));
    assert_eq!(chain.sell("s1", "t1", 1200, None).await, 1200);

    let removed = server
        .call(Method::DELETE, &price_path("s1"), Some(&server.admin()), None)
        .await;
    assert_eq!(removed.status, 204, "{}", removed.text);
    let none = read_price(server, "s1").await;
    none.assert_error(404, "NOT_FOUND");
    assert!(none.text.contains("no price of its own"), "{}", none.text);
    assert_eq!(chain.sell("s1", "t2", MUG.1, None).await, MUG.1);
    assert_eq!(chain.quoted(server, "s1", None).await, (MUG.1, MUG.2));
    // A sale rung before the removal still pays the store's price then.
    assert_eq!(chain.sell("s1", "t3", 1200, Some("2026-03-02T08:30:00Z")).await, 1200);
    // The price scheduled for 12:00 went with it.
    server.clock.set(at("2026-03-02T12:30:00Z"));
    assert_eq!(chain.sell("s1", "t4", MUG.1, None).await, MUG.1);

    let again = server
        .call(Method::DELETE, &price_path("s1"), Some(&server.admin()), None)
        .await;
    again.assert_error(404, "NOT_FOUND");
    assert!(again.text.contains("no price of its own"), "{}", again.text);
    let unknown = server
        .call(Method::DELETE, &price_path("s9"), Some(&server.admin()), None)
        .await;
    unknown.assert_error(404, "NOT_FOUND");
    assert!(unknown.text.contains("Store not found"), "{}", unknown.text);
    let back = put_price(server, "s1", 1300, None).await;
    assert_eq!(back.status, 201, "its own price again: {}", back.text);
    assert_eq!(chain.sell("s1", "t5", 1300, None).await, 1300);
    chain.shop.server.stop().await;
}

/// Two more nodes on one PostgreSQL database: one that checks the catalog's revision at every
/// sale sees a store price written on the first at once, though it had priced the mug in the
/// store already; one that trusts its prices for an hour keeps them, with no query per sale.
async fn another_node_sees_a_store_price_within_its_cache_bound(engine: Engine) {
    if engine != Engine::Postgres {
        return; // one SQLite file belongs to one process
    }
    let chain = open(engine).await;
    let url = chain.shop.server.config.database_url();
    let key = chain.shop.server.config.data_dir.join("fiscal-key.pem");
    let node = async |seconds: u64| {
        let (url, key) = (url.clone(), key.clone());
        TestServer::start_at(engine, at(OPENS), move |c| {
            c.database_url = Some(url);
            c.fiscal_key_file = Some(key);
            c.catalog_cache_seconds = seconds;
        })
        .await
    };
    let fresh = node(0).await;
    let lazy = node(3_600).await;
    let till = chain.till("s1");
    for server in [&fresh, &lazy] {
        assert_eq!(quoted(server, till, "s1", None).await, (MUG.1, MUG.2), "warm");
    }
    let written = put_price(&chain.shop.server, "s1", 1200, None).await;
    assert_eq!(written.status, 201, "{}", written.text);
    assert_eq!(quoted(&fresh, till, "s1", None).await, (1200, MUG.2), "a zero bound");
    assert_eq!(
        quoted(&lazy, till, "s1", None).await,
        (MUG.1, MUG.2),
        "a one-hour bound keeps its prices for the hour"
    );
    assert_eq!(quoted(&fresh, chain.till("s2"), "s2", None).await, (MUG.1, MUG.2));
    fresh.stop().await;
    lazy.stop().await;
    chain.shop.server.stop().await;
}

async fn bad_writes_are_refused_and_change_nothing(engine: Engine) {
    let chain = open(engine).await;
    let server = &chain.shop.server;
    let admin = server.admin();
    let path = price_path("s1");
    for (body, field) in [
        (json!({}), "priceCents"),
        (json!({"priceCents": -1}), "priceCents"),
        (json!({"priceCents": "1200"}), "priceCents"),
        (json!({"priceCents": 12.5}), "priceCents"),
        (json!({"priceCents": 9007199254740992_i64}), "priceCents"),
        (
            json!({"priceCents": 1200, "effectiveFrom": "tomorrow"}),
            "effectiveFrom",
        ),
        (json!({"priceCents": 1200, "effectiveFrom": 12}), "effectiveFrom"),
    ] {
        let refused = server.put(&path, &admin, body.clone()).await;
        refused.assert_error(400, "VALIDATION_FAILED");
        assert_eq!(refused.fields(), [field], "{body}");
    }
    let refused = server.put(&path, &admin, json!([1200])).await;
    refused.assert_error(400, "VALIDATION_FAILED");

    let past = put_price(server, "s1", 1200, Some("2026-03-02T07:59:00Z")).await;
    past.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(past.text.contains("effectiveFrom"), "{}", past.text);

    let unknown_store = put_price(server, "s9", 1200, None).await;
    unknown_store.assert_error(404, "NOT_FOUND");
    assert!(unknown_store.text.contains("Store"), "{}", unknown_store.text);
    read_price(server, "s9").await.assert_error(404, "NOT_FOUND");
    let spoon = format!("/v1/stores/s1/prices/{}", sku("Spoon"));
    let unknown_article = server.put(&spoon, &admin, json!({"priceCents": 1200})).await;
    unknown_article.assert_error(404, "NOT_FOUND");
    assert!(unknown_article.text.contains("Article"), "{}", unknown_article.text);
    server.get(&spoon, &admin).await.assert_error(404, "NOT_FOUND");
    let bad_sku = server
        .put("/v1/stores/s1/prices/MUG", &admin, json!({"priceCents": 1200}))
        .await;
    bad_sku.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(bad_sku.fields(), ["skuId"]);

    // Nothing was written: s1 has no price of its own and sells at the catalog's.
    read_price(server, "s1").await.assert_error(404, "NOT_FOUND");
    assert_eq!(server.count_rows("store_prices").await, 0);
    assert_eq!(chain.sell("s1", "t1", MUG.1, None).await, MUG.1);
    chain.shop.server.stop().await;
}

async fn store_prices_need_the_catalog_scopes(engine: Engine) {
    let chain = open(engine).await;
    let server = &chain.shop.server;
    let path = price_path("s1");
    let body = json!({"priceCents": 1200});
    for scope in ["pos.catalog.read", "pos.stock.write", "pos.stores.write"] {
        let token = server.token("clerk", scope);
        let refused = server.put(&path, &token, body.clone()).await;
        refused.assert_error(403, "FORBIDDEN");
    }
    let anonymous = server.call(Method::PUT, &path, None, Some(body.clone())).await;
    anonymous.assert_error(401, "UNAUTHORIZED");
    read_price(server, "s1").await.assert_error(404, "NOT_FOUND");

    let writer = server.token("pricing", "pos.catalog.write");
    assert_eq!(server.put(&path, &writer, body).await.status, 201);
    for scope in ["pos.catalog.read", "pos.catalog.write"] {
        let read = server.get(&path, &server.token("clerk", scope)).await;
        assert_eq!(read.status, 200, "{scope}: {}", read.text);
    }
    let refused = server.get(&path, &server.token("clerk", "pos.sales.read")).await;
    refused.assert_error(403, "FORBIDDEN");
    let reader = server.token("clerk", "pos.catalog.read");
    let refused = server.call(Method::DELETE, &path, Some(&reader), None).await;
    refused.assert_error(403, "FORBIDDEN");
    assert_eq!(view(&read_price(server, "s1").await).0, 1200, "still the store's own");
    let removed = server.call(Method::DELETE, &path, Some(&writer), None).await;
    assert_eq!(removed.status, 204, "{}", removed.text);
    chain.shop.server.stop().await;
}

on_both_engines!(
    a_store_price_overrides_the_catalog_in_that_store_only,
    a_scheduled_store_price_applies_to_sales_rung_from_its_instant_on,
    a_removed_store_price_gives_the_catalog_price_back_from_now_on,
    another_node_sees_a_store_price_within_its_cache_bound,
    bad_writes_are_refused_and_change_nothing,
    store_prices_need_the_catalog_scopes,
);
