//! Promotion rules over HTTP (the replace contract of the interface document, point by point),
//! promotions and coupons applied at finalize, the pricing dry run, and the rule cache.

use crate::harness::{Engine, Reply, TestServer, sku};
use crate::harness::{Shop, line};
use crate::on_both_engines;
use futures::future::join_all;
use serde_json::{Value, json};

const BAGUETTE: (&str, i64, f64) = ("Baguette", 130, 5.5);
const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);
const BOOK: (&str, i64, f64) = ("Livre", 2490, 5.5);

fn window() -> Value {
    json!({"validFrom": "2020-01-01T00:00:00Z", "validUntil": "2099-12-31T23:59:59Z"})
}

fn with_window(mut rule: Value) -> Value {
    for (key, value) in window().as_object().unwrap() {
        rule.as_object_mut()
            .unwrap()
            .entry(key.clone())
            .or_insert(value.clone());
    }
    rule
}

/// Buy `buy` mugs, get `get` more at `percent`.
fn mug_bogo(id: &str, buy: i64, get: i64, percent: i64) -> Value {
    with_window(json!({
        "id": id, "type": "bogo", "name": format!("{buy}+{get} mugs"),
        "buy": {"productIds": [sku(MUG.0)], "quantity": buy},
        "get": {"productIds": [sku(MUG.0)], "quantity": get, "percentBps": percent},
    }))
}

fn breakfast_bundle(id: &str, price: i64) -> Value {
    with_window(json!({
        "id": id, "type": "bundle", "name": "Breakfast",
        "components": [{"productId": sku(BAGUETTE.0), "quantity": 2}, {"productId": sku(MUG.0), "quantity": 1}],
        "priceCents": price,
    }))
}

fn basket_percent(id: &str, percent: i64, minimum: i64) -> Value {
    with_window(
        json!({"id": id, "type": "percent_off", "name": "Basket", "percentBps": percent, "minSubtotalCents": minimum}),
    )
}

impl Shop {
    async fn promote(&self, rule: Value) -> Reply {
        let reply = self.server.post("/v1/promotions", &self.server.admin(), rule).await;
        assert!(reply.status == 201 || reply.status == 200, "{}", reply.text);
        reply
    }

    async fn quote(&self, lines: Vec<Value>, extra: Value) -> Reply {
        let mut body = json!({"storeId": "s1", "cart": {"lines": lines, "freeLineSequence": 0}});
        for (key, value) in extra.as_object().unwrap() {
            body[key] = value.clone();
        }
        self.server.post("/v1/checkout/price", &self.till, body).await
    }

    /// What the server says `lines` cost, without discounts.
    pub(crate) async fn total_of(&self, lines: Vec<Value>) -> i64 {
        let quote = self.quote(lines, json!({})).await;
        assert_eq!(quote.status, 200, "{}", quote.text);
        quote.body["totals"]["total"].as_i64().unwrap()
    }
}

async fn the_replace_contract_point_by_point(engine: Engine) {
    let shop = Shop::open(engine).await;
    let admin = shop.server.admin();
    // Replace never creates: an unknown id is a 404, and so is the read after it.
    let unknown = shop
        .server
        .put("/v1/promotions/nope/rule", &admin, mug_bogo("nope", 2, 1, 10_000))
        .await;
    unknown.assert_error(404, "NOT_FOUND");
    shop.server
        .get("/v1/promotions/nope/rule", &admin)
        .await
        .assert_error(404, "NOT_FOUND");
    // The upsert creates, then replaces.
    let mut rule = mug_bogo("mugs", 2, 1, 10_000);
    rule["maxApplications"] = json!(3);
    rule["validFrom"] = json!("2026-01-01T00:00:00+01:00");
    let created = shop.promote(rule.clone()).await;
    assert_eq!(created.status, 201);
    assert_eq!(
        created.body["validFrom"], "2025-12-31T23:00:00Z",
        "answered as a UTC instant"
    );
    assert_eq!(created.body["active"], true);
    assert_eq!(created.headers["etag"], "\"1\"");
    assert_eq!(shop.promote(rule.clone()).await.status, 200);
    // Read the live rule: its ETag is the version to send back.
    let live = shop
        .server
        .get(
            "/v1/promotions/mugs/rule",
            &shop.server.token("bo", "pos.promotions.read"),
        )
        .await;
    assert_eq!(live.status, 200);
    let etag = live.headers["etag"].to_str().unwrap().to_owned();
    assert_eq!(etag, "\"2\"");
    // A full replace: the path id wins over the body's; absent fields are gone.
    let mut replacement = live.body.clone();
    replacement["id"] = json!("something-else");
    replacement.as_object_mut().unwrap().remove("maxApplications");
    replacement["name"] = json!("Renamed");
    let replaced = shop
        .server
        .send(|http, base| {
            http.put(format!("{base}/v1/promotions/mugs/rule"))
                .bearer_auth(&admin)
                .header("if-match", &etag)
                .json(&replacement)
        })
        .await;
    assert_eq!(replaced.status, 200, "{}", replaced.text);
    assert_eq!(replaced.body["id"], "mugs");
    assert_eq!(replaced.body["name"], "Renamed");
    assert!(replaced.body.get("maxApplications").is_none(), "{}", replaced.text);
    shop.server
        .get("/v1/promotions/something-else/rule", &admin)
        .await
        .assert_error(404, "NOT_FOUND");
    // The ETag read before is now stale: 412, nothing changed.
    let stale = shop
        .server
        .send(|http, base| {
            http.put(format!("{base}/v1/promotions/mugs/rule"))
                .bearer_auth(&admin)
                .header("if-match", &etag)
                .json(&rule)
        })
        .await;
    stale.assert_error(412, "PRECONDITION_FAILED");
    assert_eq!(
        shop.server.get("/v1/promotions/mugs/rule", &admin).await.body["name"],
        "Renamed"
    );
    // Without If-Match the replace is unconditional; the mechanics may change wholesale.
    let bundle = shop
        .server
        .put("/v1/promotions/mugs/rule", &admin, breakfast_bundle("ignored", 1500))
        .await;
    assert_eq!(bundle.status, 200);
    assert_eq!(bundle.body["type"], "bundle");
    assert!(bundle.body.get("buy").is_none());
    assert_eq!(bundle.headers["etag"], "\"4\"");
    shop.server.stop().await;
}

async fn rule_bodies_are_validated_per_variant(engine: Engine) {
    let shop = Shop::open(engine).await;
    let admin = shop.server.admin();
    let post = |body: Value| shop.server.post("/v1/promotions", &admin, body);
    let reply = post(json!({"id": "x", "type": "cashback", "name": "X", "validFrom": "2026-01-01T00:00:00Z", "validUntil": "2026-01-02T00:00:00Z"})).await;
    assert_eq!(reply.fields(), ["type"]);
    let backwards = with_window(json!({"id": "x", "type": "percent_off", "name": "X", "percentBps": 100,
        "validFrom": "2026-06-01T00:00:00Z", "validUntil": "2026-05-01T00:00:00+02:00"}));
    assert_eq!(post(backwards).await.fields(), ["validUntil"]);
    let bogo = with_window(json!({"id": "x", "type": "bogo", "name": "X",
        "buy": {"productIds": [], "quantity": 0}, "get": {"productIds": ["nope"], "quantity": 1, "percentBps": 0},
        "maxApplications": 0}));
    assert_eq!(
        post(bogo).await.fields(),
        [
            "buy.productIds",
            "buy.quantity",
            "get.productIds.0",
            "get.percentBps",
            "maxApplications"
        ]
    );
    let bundle = with_window(json!({"id": "x", "type": "bundle", "name": "X",
        "components": [{"productId": sku("a"), "quantity": 1}, {"productId": sku("a"), "quantity": 2}]}));
    assert_eq!(post(bundle).await.fields(), ["components.1.productId", "priceCents"]);
    let percent = json!({"type": "percent_off", "name": "", "percentBps": 10001, "storeIds": [], "priority": 1.5,
        "validFrom": "2026-02-30T00:00:00Z"});
    assert_eq!(
        post(percent).await.fields(),
        [
            "id",
            "name",
            "validFrom",
            "validUntil",
            "priority",
            "storeIds",
            "percentBps"
        ]
    );
    let reader = shop.server.token("bo", "pos.promotions.read");
    shop.server
        .post("/v1/promotions", &reader, basket_percent("p", 100, 0))
        .await
        .assert_error(403, "FORBIDDEN");
    shop.server
        .post("/v1/promotions/p/deactivate", &reader, json!({}))
        .await
        .assert_error(403, "FORBIDDEN");
    shop.server
        .post("/v1/promotions/p/deactivate", &admin, json!({}))
        .await
        .assert_error(404, "NOT_FOUND");
    shop.server.stop().await;
}

async fn rules_are_listed_by_activity_and_store(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.promote(basket_percent("everywhere", 100, 0)).await;
    let mut paris = basket_percent("paris-only", 100, 0);
    paris["storeIds"] = json!(["paris"]);
    shop.promote(paris).await;
    shop.promote(basket_percent("stopped", 100, 0)).await;
    let stopped = shop
        .server
        .post("/v1/promotions/stopped/deactivate", &shop.server.admin(), json!({}))
        .await;
    assert_eq!(stopped.body["active"], false);
    let reader = shop.server.token("bo", "pos.promotions.read");
    let ids = |reply: Reply| -> Vec<String> {
        reply.body["promotions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        ids(shop.server.get("/v1/promotions", &reader).await),
        ["everywhere", "paris-only", "stopped"]
    );
    assert_eq!(
        ids(shop.server.get("/v1/promotions?active=true", &reader).await),
        ["everywhere", "paris-only"]
    );
    assert_eq!(
        ids(shop
            .server
            .get("/v1/promotions?active=true&storeId=lyon", &reader)
            .await),
        ["everywhere"]
    );
    shop.server
        .get("/v1/promotions?active=maybe", &reader)
        .await
        .assert_error(400, "VALIDATION_FAILED");
    shop.server.stop().await;
}

async fn bogo_and_bundles_apply_at_finalize(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.promote(mug_bogo("mugs", 2, 1, 10_000)).await;
    // Three mugs for the price of two; a fourth and fifth make no second multiple.
    assert_eq!(shop.total_of(vec![line("l1", MUG, 3)]).await, 2900);
    assert_eq!(shop.total_of(vec![line("l1", MUG, 5)]).await, 5800);
    let sale = shop.finalize(&shop.sale("t1", vec![line("l1", MUG, 3)], 2900)).await;
    assert_eq!(sale.status, 201, "{}", sale.text);
    assert_eq!(
        sale.body["transaction"]["totals"],
        json!({"subtotal": 4350, "total": 2900, "itemCount": 3, "lineCount": 1})
    );
    assert_eq!(shop.stock(MUG).await, -3);
    // A till that ignores the promotion and asks for the full price is refused.
    shop.finalize(&shop.sale("t2", vec![line("l1", MUG, 3)], 4350))
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    // The bundle: 2 baguettes and a mug for 15.00 instead of 17.10, twice, from mixed lines.
    shop.server
        .post("/v1/promotions/mugs/deactivate", &shop.server.admin(), json!({}))
        .await;
    shop.promote(breakfast_bundle("breakfast", 1500)).await;
    let lines = vec![line("a", BAGUETTE, 3), line("b", MUG, 2), line("c", BAGUETTE, 2)];
    assert_eq!(shop.total_of(lines).await, 1500 * 2 + 130);
    shop.server.stop().await;
}

async fn percent_rules_minimums_priority_and_exclusivity(engine: Engine) {
    let shop = Shop::open(engine).await;
    let books = with_window(json!({"id": "books", "type": "percent_off", "name": "Books -20%",
        "productIds": [sku(BOOK.0)], "percentBps": 2000, "minSubtotalCents": 4000}));
    shop.promote(books).await;
    assert_eq!(
        shop.total_of(vec![line("l1", BOOK, 1)]).await,
        2490,
        "below the minimum"
    );
    assert_eq!(shop.total_of(vec![line("l1", BOOK, 2)]).await, 3984);
    // A basket percentage stacks on top, on what is left.
    shop.promote(basket_percent("basket", 1000, 0)).await;
    assert_eq!(shop.total_of(vec![line("l1", BOOK, 2)]).await, 3984 - 398);
    // An exclusive rule that applies excludes every other.
    let mut solo = basket_percent("solo", 3000, 0);
    solo["exclusive"] = json!(true);
    solo["priority"] = json!(10);
    shop.promote(solo).await;
    let quote = shop.quote(vec![line("l1", BOOK, 2)], json!({})).await;
    assert_eq!(quote.body["totals"]["total"], 4980 - 1494);
    let applied: Vec<&str> = quote.body["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert_eq!(applied, ["solo"]);
    assert_eq!(quote.body["adjustments"][0]["name"], "Basket");
    shop.server.stop().await;
}

async fn rules_apply_only_in_their_window_and_stores(engine: Engine) {
    let shop = Shop::open(engine).await;
    let mut later = basket_percent("later", 5000, 0);
    later["validFrom"] = json!("2030-01-01T00:00:00Z");
    shop.promote(later).await;
    let mut elsewhere = basket_percent("elsewhere", 5000, 0);
    elsewhere["storeIds"] = json!(["lyon"]);
    shop.promote(elsewhere).await;
    shop.promote(basket_percent("stopped", 5000, 0)).await;
    shop.server
        .post("/v1/promotions/stopped/deactivate", &shop.server.admin(), json!({}))
        .await;
    assert_eq!(shop.total_of(vec![line("l1", MUG, 1)]).await, 1450);
    // At a moment inside the future window, the rule applies.
    let future = shop
        .quote(vec![line("l1", MUG, 1)], json!({"issuedAt": "2031-01-01T00:00:00Z"}))
        .await;
    assert_eq!(future.body["totals"]["total"], 725);
    shop.server.stop().await;
}

async fn the_dry_run_prices_without_writing(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.promote(mug_bogo("mugs", 1, 1, 5_000)).await;
    shop.server
        .put(
            "/v1/coupons/TEN",
            &shop.server.admin(),
            json!({"amountCents": 1000, "maxRedemptions": 1}),
        )
        .await;
    let discount = json!([{"id": "d", "reason": "damaged_goods", "scope": "line", "basis": "percent", "lineId": "b", "percentBps": 1000}]);
    let quote = shop
        .quote(
            vec![line("m", MUG, 2), line("b", BOOK, 1)],
            json!({"couponCode": "TEN", "declaredDiscounts": discount}),
        )
        .await;
    assert_eq!(quote.status, 200, "{}", quote.text);
    let mug = &quote.body["lines"][0];
    assert_eq!(
        (mug["grossCents"].as_i64(), mug["promotionCents"].as_i64()),
        (Some(2900), Some(725))
    );
    let book = &quote.body["lines"][1];
    assert_eq!(book["discountCents"], 249);
    // 2900 - 725 + 2490 - 249 = 4416, minus the 10.00 coupon.
    assert_eq!(quote.body["totals"]["total"], 3416);
    assert_eq!(
        quote.body["coupon"],
        json!({"code": "TEN", "basketCents": 4416, "discountAmountCents": 1000})
    );
    let sources: Vec<&str> = quote.body["adjustments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["promotion", "declared", "coupon"]);
    let vat_total: i64 = quote.body["vat"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["totalCents"].as_i64().unwrap())
        .sum();
    assert_eq!(vat_total, 3416);
    // Nothing was written: no stock moved, the coupon is still unredeemed.
    assert_eq!(shop.stock(MUG).await, 0);
    assert_eq!(
        shop.server.get("/v1/coupons/TEN", &shop.server.admin()).await.body["redemptions"],
        0
    );
    shop.quote(vec![], json!({}))
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    let reader = shop.server.token("catalogue", "pos.catalog.read");
    let body = json!({"storeId": "s1", "cart": {"lines": [line("m", MUG, 1)], "freeLineSequence": 0}});
    assert_eq!(
        shop.server
            .post("/v1/checkout/price", &reader, body.clone())
            .await
            .status,
        200
    );
    shop.server
        .post("/v1/checkout/price", &shop.server.token("x", "pos.sales.read"), body)
        .await
        .assert_error(403, "FORBIDDEN");
    shop.server.stop().await;
}

async fn coupons_apply_with_their_block_in_the_sale_event(engine: Engine) {
    let shop = Shop::open(engine).await;
    let admin = shop.server.admin();
    shop.server
        .put(
            "/v1/coupons/WELCOME",
            &admin,
            json!({"percentBps": 1000, "minBasketCents": 2000}),
        )
        .await;
    let mut sale = shop.sale("t1", vec![line("l1", BOOK, 1)], 2241);
    sale["couponCode"] = json!("WELCOME");
    let reply = shop.finalize(&sale).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(
        reply.body["coupon"],
        json!({"code": "WELCOME", "basketCents": 2490, "discountAmountCents": 249})
    );
    assert_eq!(
        shop.finalize(&sale).await.text,
        reply.text,
        "a replay redeems nothing more"
    );
    assert_eq!(
        shop.server.get("/v1/coupons/WELCOME", &admin).await.body["redemptions"],
        1
    );
    // An amount coupon is capped at the basket.
    shop.server
        .put("/v1/coupons/BIG", &admin, json!({"amountCents": 100000}))
        .await;
    let mut free = shop.sale("t2", vec![line("l1", BAGUETTE, 1)], 0);
    free["couponCode"] = json!("BIG");
    let reply = shop.finalize(&free).await;
    assert_eq!(reply.body["coupon"]["discountAmountCents"], 130, "{}", reply.text);
    shop.server.stop().await;
}

async fn unusable_coupons_are_refused_with_the_reason(engine: Engine) {
    let shop = Shop::open(engine).await;
    let admin = shop.server.admin();
    shop.server
        .put("/v1/coupons/OFF", &admin, json!({"percentBps": 1000, "active": false}))
        .await;
    shop.server
        .put(
            "/v1/coupons/OLD",
            &admin,
            json!({"percentBps": 1000, "validUntil": "2020-01-01T00:00:00Z"}),
        )
        .await;
    shop.server
        .put(
            "/v1/coupons/SOON",
            &admin,
            json!({"percentBps": 1000, "validFrom": "2099-01-01T00:00:00Z"}),
        )
        .await;
    shop.server
        .put(
            "/v1/coupons/RICH",
            &admin,
            json!({"percentBps": 1000, "minBasketCents": 10000}),
        )
        .await;
    shop.server
        .put(
            "/v1/coupons/ONCE",
            &admin,
            json!({"percentBps": 1000, "maxRedemptions": 1}),
        )
        .await;
    let mut once = shop.sale("t0", vec![line("l1", MUG, 1)], 1305);
    once["couponCode"] = json!("ONCE");
    assert_eq!(shop.finalize(&once).await.status, 201);
    for (code, reason) in [
        ("NOPE", "does not exist"),
        ("OFF", "not active"),
        ("OLD", "expired"),
        ("SOON", "not valid yet"),
        ("RICH", "at least 100.00"),
        ("ONCE", "redeemed as many times"),
    ] {
        let mut sale = shop.sale(&format!("t-{code}"), vec![line("l1", MUG, 1)], 1305);
        sale["couponCode"] = json!(code);
        let reply = shop.finalize(&sale).await;
        reply.assert_error(422, "BUSINESS_RULE_VIOLATION");
        assert!(reply.text.contains(reason), "{code}: {}", reply.text);
    }
    shop.server.stop().await;
}

async fn concurrent_redemptions_never_exceed_the_maximum(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.server
        .put(
            "/v1/coupons/THREE",
            &shop.server.admin(),
            json!({"amountCents": 100, "maxRedemptions": 3}),
        )
        .await;
    let sales: Vec<Value> = (0..12)
        .map(|i| {
            let mut sale = shop.sale(&format!("t{i}"), vec![line("l1", MUG, 1)], 1350);
            sale["couponCode"] = json!("THREE");
            sale
        })
        .collect();
    let replies = join_all(sales.iter().map(|s| shop.finalize(s))).await;
    let committed = replies.iter().filter(|r| r.status == 201).count();
    assert_eq!(
        committed,
        3,
        "{:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    assert!(replies.iter().all(|r| r.status == 201 || r.status == 422));
    assert_eq!(
        shop.server.get("/v1/coupons/THREE", &shop.server.admin()).await.body["redemptions"],
        3
    );
    assert_eq!(shop.stock(MUG).await, -3);
    shop.server.stop().await;
}

/// Retries of one sale redeeming a single-use coupon: one redemption, every retry the same sale.
async fn identical_sales_on_a_single_use_coupon_redeem_it_once(engine: Engine) {
    let shop = Shop::open(engine).await;
    let admin = shop.server.admin();
    let coupon = json!({"amountCents": 100, "maxRedemptions": 1});
    shop.server.put("/v1/coupons/ONCE", &admin, coupon).await;
    let mut sale = shop.sale("t1", vec![line("l1", MUG, 1)], 1350);
    sale["couponCode"] = json!("ONCE");
    let replies = join_all((0..12).map(|_| shop.finalize(&sale))).await;
    for reply in &replies {
        assert_eq!(reply.status, 201, "{}", reply.text);
        assert_eq!(reply.text, replies[0].text);
    }
    assert_eq!(shop.server.get("/v1/coupons/ONCE", &admin).await.body["redemptions"], 1);
    assert_eq!(shop.stock(MUG).await, -1);
    shop.server.stop().await;
}

async fn total(server: &TestServer) -> Value {
    let body = json!({"storeId": "s1", "cart": {"lines": [line("m", MUG, 1)], "freeLineSequence": 0}});
    let token = server.token("t", "pos.catalog.read");
    server.post("/v1/checkout/price", &token, body).await.body["totals"]["total"].clone()
}

/// Two nodes on one PostgreSQL: a rule written on one applies on the other once its cache
/// ages past the configured bound, and not before.
async fn another_node_sees_a_rule_within_its_cache_bound(engine: Engine) {
    if engine != Engine::Postgres {
        return; // one SQLite file belongs to one process
    }
    let shop = Shop::open(engine).await;
    let url = shop.server.config.database_url.clone();
    let fresh = TestServer::start_with(engine, |c| {
        c.database_url = url.clone();
        c.promotion_cache_seconds = 0;
    })
    .await;
    let lazy = TestServer::start_with(engine, |c| {
        c.database_url = url.clone();
        c.promotion_cache_seconds = 3_600;
    })
    .await;
    assert_eq!(total(&lazy).await, 1450);
    shop.promote(basket_percent("new", 1000, 0)).await;
    assert_eq!(total(&fresh).await, 1305, "a zero bound sees the write at once");
    assert_eq!(
        total(&lazy).await,
        1450,
        "a one-hour bound keeps its rules for the hour"
    );
    fresh.stop().await;
    lazy.stop().await;
    shop.server.stop().await;
}

async fn rules_for_customer_groups_apply_to_their_members_only(engine: Engine) {
    let shop = Shop::open(engine).await;
    let server = &shop.server;
    let admin = server.admin();
    let mut staff = basket_percent("staff", 2000, 0);
    staff["customerGroups"] = json!(["staff", "family"]);
    let created = shop.promote(staff.clone()).await;
    assert_eq!(created.body["customerGroups"], json!(["family", "staff"]));
    for (groups, field) in [(json!([]), "customerGroups"), (json!(["  "]), "customerGroups.0")] {
        let mut bad = staff.clone();
        bad["customerGroups"] = groups;
        let refused = server.post("/v1/promotions", &admin, bad).await;
        refused.assert_error(400, "VALIDATION_FAILED");
        assert!(refused.fields().contains(&field.to_owned()), "{}", refused.text);
    }
    let put = |id: &str, groups: Value| {
        let path = format!("/v1/customers/{id}");
        let admin = admin.clone();
        async move { server.put(&path, &admin, json!({"groups": groups})).await }
    };
    assert_eq!(put("emp-1", json!(["staff"])).await.status, 201);
    assert_eq!(put("client-7", json!(["newsletter"])).await.status, 201);

    // The dry run: a member gets the rule, anyone else (or no one) does not.
    let member = shop
        .quote(vec![line("l1", MUG, 1)], json!({"customerId": "emp-1"}))
        .await;
    assert_eq!(member.status, 200, "{}", member.text);
    assert_eq!(member.body["totals"]["total"], 1160);
    assert_eq!(member.body["adjustments"][0]["id"], "staff");
    for extra in [
        json!({"customerId": "client-7"}),
        json!({"customerId": "stranger"}),
        json!({"customerId": null}),
        json!({}),
    ] {
        let other = shop.quote(vec![line("l1", MUG, 1)], extra.clone()).await;
        assert_eq!(other.body["totals"]["total"], 1450, "{extra}");
    }

    // Finalize prices alike: the member pays the group's price, a customer outside the group
    // who asks for it is refused.
    let mut sale = shop.sale("t-staff", vec![line("l1", MUG, 1)], 1160);
    sale["customerId"] = json!("emp-1");
    let sold = shop.finalize(&sale).await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    assert_eq!(sold.body["transaction"]["totals"]["total"], 1160);
    let mut outsider = shop.sale("t-outsider", vec![line("l1", MUG, 1)], 1160);
    outsider["customerId"] = json!("client-7");
    shop.finalize(&outsider)
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    outsider["tenders"] = shop.sale("t-outsider", vec![line("l1", MUG, 1)], 1450)["tenders"].clone();
    assert_eq!(shop.finalize(&outsider).await.status, 201);

    // Out of the group, the member pays the full price from the next sale on.
    assert_eq!(put("emp-1", json!([])).await.status, 200);
    let left = shop
        .quote(vec![line("l1", MUG, 1)], json!({"customerId": "emp-1"}))
        .await;
    assert_eq!(left.body["totals"]["total"], 1450);
    let mut again = shop.sale("t-staff-2", vec![line("l1", MUG, 1)], 1160);
    again["customerId"] = json!("emp-1");
    shop.finalize(&again).await.assert_error(422, "BUSINESS_RULE_VIOLATION");
    shop.server.stop().await;
}

on_both_engines!(
    the_replace_contract_point_by_point,
    rule_bodies_are_validated_per_variant,
    rules_are_listed_by_activity_and_store,
    bogo_and_bundles_apply_at_finalize,
    percent_rules_minimums_priority_and_exclusivity,
    rules_apply_only_in_their_window_and_stores,
    rules_for_customer_groups_apply_to_their_members_only,
    the_dry_run_prices_without_writing,
    coupons_apply_with_their_block_in_the_sale_event,
    unusable_coupons_are_refused_with_the_reason,
    concurrent_redemptions_never_exceed_the_maximum,
    identical_sales_on_a_single_use_coupon_redeem_it_once,
    another_node_sees_a_rule_within_its_cache_bound,
);
