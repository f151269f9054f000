//! Lists and the sales search: keyset pages followed by `nextCursor` visit every item once and
//! in order, each item is what the resource's own read answers, cursors and limits are
//! checked, every filter of the sales search and of the session list holds, and each list
//! needs its scope.

use crate::harness::{Engine, Reply, TestServer};
use crate::harness::{Shop, line};
use crate::on_both_engines;
use serde_json::{Value, json};
use std::time::Duration;

const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);

/// Every list, with a scope that reads it.
const LISTS: [(&str, &str); 6] = [
    ("/v1/sales", "pos.sales.read"),
    ("/v1/catalog/skus", "pos.catalog.read"),
    ("/v1/stores", "pos.catalog.read"),
    ("/v1/staff", "pos.staff.read"),
    ("/v1/coupons", "pos.promotions.read"),
    ("/v1/register-sessions", "pos.sessions.close"),
];

/// A walk through a list: its items in the order the pages gave them, and how many pages.
struct Walk {
    items: Vec<Value>,
    pages: usize,
}

/// Follows `nextCursor` from the first page of `path` (which may carry a query) to the last,
/// `limit` items a page (the default when `None`), checking the shape of every page.
async fn walk(server: &TestServer, token: &str, path: &str, limit: Option<usize>) -> Walk {
    let mut query: Vec<String> = limit.map(|limit| format!("limit={limit}")).into_iter().collect();
    let (path, filters) = path.split_once('?').unwrap_or((path, ""));
    query.extend((!filters.is_empty()).then(|| filters.to_owned()));
    let mut walk = Walk {
        items: Vec::new(),
        pages: 0,
    };
    let mut cursor: Option<String> = None;
    loop {
        let mut parts = query.clone();
        parts.extend(cursor.as_ref().map(|cursor| format!("cursor={cursor}")));
        let url = format!("{path}?{}", parts.join("&"));
        let reply = server.get(&url, token).await;
        assert_eq!(reply.status, 200, "{url}: {}", reply.text);
        let body = reply.body.as_object().expect("an object");
        assert_eq!(body.len(), 2, "items and nextCursor alone: {}", reply.text);
        let page = body["items"].as_array().expect("items");
        walk.pages += 1;
        walk.items.extend(page.iter().cloned());
        match &body["nextCursor"] {
            Value::String(next) => {
                assert_eq!(page.len(), limit.unwrap_or(50), "a page before the last is full: {url}");
                cursor = Some(next.clone());
            }
            Value::Null => return walk,
            other => panic!("nextCursor is {other}"),
        }
        assert!(walk.pages < 1_000, "the cursors of {path} go round in circles");
    }
}

fn ids(items: &[Value], key: &str) -> Vec<String> {
    items
        .iter()
        .map(|item| {
            item[key]
                .as_str()
                .unwrap_or_else(|| panic!("{key} in {item}"))
                .to_owned()
        })
        .collect()
}

async fn every_list_starts_empty(engine: Engine) {
    let server = TestServer::start(engine).await;
    for (path, _) in LISTS {
        let reply = server.get(path, &server.admin()).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.text);
        assert_eq!(reply.body, json!({"items": [], "nextCursor": null}), "{path}");
    }
    server.stop().await;
}

on_both_engines!(every_list_starts_empty);

/// Five of each back-office resource; their ids in the lists' order.
async fn provision_fives(server: &TestServer) -> [(&'static str, &'static str, Vec<String>); 4] {
    let admin = server.admin();
    let stores: Vec<String> = (1..=5).map(|n| format!("store-{n}")).collect();
    for store in stores.iter().rev() {
        server.provision_store(store).await;
    }
    let mut skus = Vec::new();
    for n in 1..=5 {
        skus.push(server.provision_sku(&format!("Article {n}"), 100 * n, 20.0).await);
    }
    skus.sort();
    let staff: Vec<String> = (1..=5).map(|n| format!("person-{n}")).collect();
    for subject in staff.iter().rev() {
        server.provision_staff(subject, "cashier", "1234").await;
    }
    let coupons: Vec<String> = (1..=5).map(|n| format!("promo-{n}")).collect();
    for code in coupons.iter().rev() {
        let reply = server
            .put(&format!("/v1/coupons/{code}"), &admin, json!({"percentBps": 500}))
            .await;
        assert_eq!(reply.status, 201, "{}", reply.text);
    }
    [
        ("/v1/stores", "storeId", stores),
        ("/v1/catalog/skus", "skuId", skus),
        ("/v1/staff", "subject", staff),
        ("/v1/coupons", "code", coupons),
    ]
}

async fn following_cursors_visits_every_item_once_in_order(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    for (path, key, expected) in provision_fives(&server).await {
        // Pages of two: two full pages and a last one of one item.
        let pages = walk(&server, &admin, path, Some(2)).await;
        assert_eq!(ids(&pages.items, key), expected, "{path} by id, each once");
        assert_eq!(pages.pages, 3, "{path}");
        // A list that fills its pages exactly ends on a full page, with no empty page after it.
        for (limit, count) in [(5, 1), (1, 5)] {
            let pages = walk(&server, &admin, path, Some(limit)).await;
            assert_eq!(ids(&pages.items, key), expected, "{path} limit {limit}");
            assert_eq!(pages.pages, count, "{path} limit {limit}");
        }
        let all = walk(&server, &admin, path, None).await;
        assert_eq!((all.items.len(), all.pages), (5, 1), "{path}: fifty by default");
        // Each item is what the resource's own read answers.
        for (item, id) in all.items.iter().zip(&expected) {
            let own = server.get(&format!("{path}/{id}"), &admin).await;
            assert_eq!(own.status, 200, "{}", own.text);
            assert_eq!(item, &own.body, "{path}/{id}");
        }
        if path == "/v1/staff" {
            let text = serde_json::to_string(&all.items).unwrap();
            assert!(
                !text.to_lowercase().contains("pin") && !text.contains("argon2"),
                "{text}"
            );
        }
    }
    server.stop().await;
}

on_both_engines!(following_cursors_visits_every_item_once_in_order);

fn refused_on(reply: &Reply, fields: &[&str]) {
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(reply.fields(), fields, "{}", reply.text);
}

async fn limits_and_cursors_are_checked(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    for store in ["a", "b", "c"] {
        server.provision_store(store).await;
    }
    server.provision_staff("camille", "cashier", "1234").await;
    let first = server.get("/v1/stores?limit=1", &admin).await;
    let cursor = first.str("nextCursor");
    assert_eq!(
        server
            .get(&format!("/v1/stores?limit=1&cursor={cursor}"), &admin)
            .await
            .body["items"][0]["storeId"],
        "b"
    );
    for limit in ["0", "501", "-1", "1.5", "ten", ""] {
        refused_on(
            &server.get(&format!("/v1/stores?limit={limit}"), &admin).await,
            &["limit"],
        );
    }
    for limit in ["1", "500", "500.0"] {
        assert_eq!(
            server.get(&format!("/v1/stores?limit={limit}"), &admin).await.status,
            200
        );
    }
    // A cursor edited in any one place, cut short, made up, or not base64url at all.
    let mut edited: Vec<String> = Vec::new();
    for index in [0, cursor.len() / 2, cursor.len() - 1] {
        let mut chars: Vec<char> = cursor.chars().collect();
        chars[index] = if chars[index] == 'A' { 'B' } else { 'A' };
        edited.push(chars.into_iter().collect());
    }
    edited.push(cursor[..cursor.len() - 4].to_owned());
    edited.extend(["AAAAAAAAAAAAAAAAAAAAAAAAAAAA", "not+a/cursor=", "%00", "", "é"].map(str::to_owned));
    edited.push("A".repeat(3000));
    for bad in edited {
        let encoded: String = url_encode(&bad);
        let reply = server.get(&format!("/v1/stores?cursor={encoded}"), &admin).await;
        refused_on(&reply, &["cursor"]);
        assert!(
            !reply.text.contains("base64") && !reply.text.contains("Invalid"),
            "{}",
            reply.text
        );
    }
    // A cursor of one list is no cursor of another.
    refused_on(
        &server.get(&format!("/v1/staff?cursor={cursor}"), &admin).await,
        &["cursor"],
    );
    // Every problem at once.
    refused_on(
        &server.get("/v1/stores?limit=0&cursor=!", &admin).await,
        &["limit", "cursor"],
    );
    refused_on(&server.get("/v1/stores?cursor=a&cursor=b", &admin).await, &["cursor"]);
    // Parameters a list does not read are ignored, as on every other read.
    assert_eq!(server.get("/v1/stores?colour=red", &admin).await.status, 200);
    server.stop().await;
}

on_both_engines!(limits_and_cursors_are_checked);

fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Two stores, three sessions and six sales a minute apart: what the search and the session
/// list are tried on.
struct Chain {
    shop: Shop,
    /// `ses1` on till r1 of s1 (closed), `ses2` on r2 of s2, `ses3` on r1 after ses1.
    sessions: [String; 3],
    /// Each sale's `emittedAt`, `t01` first.
    emitted: Vec<String>,
}

impl Chain {
    async fn build(engine: Engine) -> Chain {
        let shop = Shop::open_with(engine, |config| config.session_ttl_seconds = 3_600).await;
        let server = &shop.server;
        let admin = server.admin();
        server.provision_store("s2").await;
        server.clock.advance(Duration::from_secs(60));
        let (ses2, _) = server.open_session("s2", "r2", "mathis", "9876").await;
        let ses1 = shop.session.clone();
        let sale = |id: &str, store: &str, session: &str, customer: Option<&str>| {
            json!({
                "transactionId": id, "number": format!("T-{id}"), "storeId": store, "sellerId": "camille",
                "customerId": customer, "sessionId": session,
                "cart": {"lines": [line("l1", MUG, 1)], "freeLineSequence": 0},
                "tenders": {"amountDue": 1450, "sequence": 1, "tenders": [
                    {"id": "p1", "method": "card", "applied": 1450, "presented": 1450, "change": 0, "forfeited": 0}]}
            })
        };
        let mut emitted = Vec::new();
        let mut book = async |body: Value| {
            server.clock.advance(Duration::from_secs(60));
            let reply = shop.finalize_as(&admin, &body).await;
            assert_eq!(reply.status, 201, "{}", reply.text);
            emitted.push(reply.str("emittedAt"));
        };
        book(sale("t01", "s1", &ses1, Some("c1"))).await;
        book(sale("t02", "s1", &ses1, None)).await;
        book(sale("t03", "s2", &ses2, Some("c1"))).await;
        let mut refund = sale("t04", "s1", &ses1, Some("c2"));
        refund["type"] = json!("return");
        book(refund).await;
        let close = server
            .post(&format!("/v1/register-sessions/{ses1}/close"), &admin, json!({}))
            .await;
        assert_eq!(close.status, 200, "{}", close.text);
        server.clock.advance(Duration::from_secs(60));
        let (ses3, _) = server.open_session("s1", "r1", "camille", "1234").await;
        book(sale("t05", "s1", &ses3, Some("c1"))).await;
        book(sale("t06", "s2", &ses2, None)).await;
        Chain {
            shop,
            sessions: [ses1, ses2, ses3],
            emitted,
        }
    }

    fn server(&self) -> &TestServer {
        &self.shop.server
    }

    /// The transaction ids the search answers for `query`, in one page.
    async fn search(&self, query: &str) -> Vec<String> {
        let reply = self.server().get(&format!("/v1/sales?{query}"), &self.reader()).await;
        assert_eq!(reply.status, 200, "{query}: {}", reply.text);
        assert_eq!(reply.body["nextCursor"], Value::Null, "{query}");
        ids(reply.body["items"].as_array().unwrap(), "transactionId")
    }

    fn reader(&self) -> String {
        self.server().token("back-office", "pos.sales.read")
    }
}

async fn the_sales_search_filters_newest_first(engine: Engine) {
    let chain = Chain::build(engine).await;
    let [ses1, ses2, ses3] = chain.sessions.each_ref().map(String::as_str);
    let cases: [(String, &[&str]); 14] = [
        (String::new(), &["t06", "t05", "t04", "t03", "t02", "t01"]),
        ("storeId=s1".into(), &["t05", "t04", "t02", "t01"]),
        ("storeId=s3".into(), &[]),
        ("registerId=r2".into(), &["t06", "t03"]),
        (format!("sessionId={ses1}"), &["t04", "t02", "t01"]),
        (format!("sessionId={ses2}"), &["t06", "t03"]),
        (format!("sessionId={ses3}"), &["t05"]),
        ("customerId=c1".into(), &["t05", "t03", "t01"]),
        ("type=return".into(), &["t04"]),
        ("type=sale".into(), &["t06", "t05", "t03", "t02", "t01"]),
        ("type=repair".into(), &[]),
        // From inclusive, to exclusive.
        (
            format!("from={}&to={}", chain.emitted[1], chain.emitted[4]),
            &["t04", "t03", "t02"],
        ),
        (format!("from={}", chain.emitted[4]), &["t06", "t05"]),
        (
            format!("storeId=s1&type=sale&customerId=c1&to={}", chain.emitted[4]),
            &["t01"],
        ),
    ];
    for (query, expected) in cases {
        assert_eq!(chain.search(&query).await, expected, "{query}");
    }
    // An instant with an offset is the same instant.
    let at: jiff::Timestamp = chain.emitted[4].parse().unwrap();
    let paris = format!(
        "{}+02:00",
        at.to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(2))).datetime()
    );
    assert_eq!(
        chain.search(&format!("from={}", url_encode(&paris))).await,
        ["t06", "t05"]
    );

    let reply = chain.server().get("/v1/sales", &chain.reader()).await;
    let items = reply.body["items"].as_array().unwrap();
    assert_eq!(
        items[2],
        json!({"transactionId": "t04", "number": "T-t04", "type": "return", "storeId": "s1", "registerId": "r1",
               "sessionId": ses1, "sellerId": "camille", "customerId": "c2", "totalCents": -1450, "itemCount": 1,
               "emittedAt": chain.emitted[3]})
    );
    assert_eq!(items[4]["customerId"], Value::Null, "{}", items[4]);
    assert_eq!(items[0]["registerId"], "r2");
    let times: Vec<String> = ids(items, "emittedAt");
    let mut newest_first = chain.emitted.clone();
    newest_first.reverse();
    assert_eq!(times, newest_first);

    // Pages of a filtered search follow the filter; its cursor is no cursor of another filter.
    let pages = walk(chain.server(), &chain.reader(), "/v1/sales?storeId=s1", Some(2)).await;
    assert_eq!(ids(&pages.items, "transactionId"), ["t05", "t04", "t02", "t01"]);
    assert_eq!(pages.pages, 2);
    let walked = walk(chain.server(), &chain.reader(), "/v1/sales", Some(4)).await;
    assert_eq!(
        ids(&walked.items, "transactionId"),
        ["t06", "t05", "t04", "t03", "t02", "t01"]
    );
    let first = chain
        .server()
        .get("/v1/sales?storeId=s1&limit=1", &chain.reader())
        .await;
    let cursor = first.str("nextCursor");
    for other in ["storeId=s2", "", "storeId=s1&type=sale", "registerId=r1"] {
        let reply = chain
            .server()
            .get(&format!("/v1/sales?{other}&cursor={cursor}"), &chain.reader())
            .await;
        refused_on(&reply, &["cursor"]);
    }
    chain.shop.server.stop().await;
}

on_both_engines!(the_sales_search_filters_newest_first);

async fn the_sales_search_refuses_bad_filters(engine: Engine) {
    let server = TestServer::start(engine).await;
    let token = server.token("back-office", "pos.sales.read");
    let cases = [
        ("type=gift", &["type"][..]),
        ("type=Sale", &["type"]),
        ("from=yesterday", &["from"]),
        ("to=2026-02-30T10:00:00Z", &["to"]),
        ("from=2026-03-01T10:00:00", &["from"]),
        ("from=2026-03-01T10:00:00Z&to=2026-03-01T10:00:00Z", &["to"]),
        ("from=2026-03-02T10:00:00Z&to=2026-03-01T10:00:00Z", &["to"]),
        ("storeId=", &["storeId"]),
        ("customerId=a%00b", &["customerId"]),
        ("limit=501&type=x&registerId=", &["registerId", "type", "limit"]),
    ];
    for (query, fields) in cases {
        let reply = server.get(&format!("/v1/sales?{query}"), &token).await;
        refused_on(&reply, fields);
    }
    let ok = server
        .get(
            "/v1/sales?from=2026-03-01T10:00:00%2B01:00&to=2026-03-01T10:00:00Z&type=rental",
            &token,
        )
        .await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    server.stop().await;
}

on_both_engines!(the_sales_search_refuses_bad_filters);

async fn register_sessions_list_by_store_till_and_state(engine: Engine) {
    let chain = Chain::build(engine).await;
    let server = chain.server();
    let [ses1, ses2, ses3] = chain.sessions.each_ref().map(String::as_str);
    let token = server.token("manager", "pos.sessions.close");
    let list = async |query: &str| -> Vec<String> {
        let reply = server.get(&format!("/v1/register-sessions?{query}"), &token).await;
        assert_eq!(reply.status, 200, "{query}: {}", reply.text);
        ids(reply.body["items"].as_array().unwrap(), "sessionId")
    };
    assert_eq!(list("").await, [ses3, ses2, ses1], "newest opened first");
    assert_eq!(list("storeId=s1").await, [ses3, ses1]);
    assert_eq!(list("registerId=r2").await, [ses2]);
    assert_eq!(list("registerId=r1&storeId=s2").await, [] as [&str; 0]);
    assert_eq!(list("open=true").await, [ses3, ses2]);
    assert_eq!(list("open=false").await, [ses1]);
    assert_eq!(list("open=true&storeId=s1").await, [ses3]);
    refused_on(&server.get("/v1/register-sessions?open=yes", &token).await, &["open"]);

    let all = walk(server, &token, "/v1/register-sessions", Some(2)).await;
    assert_eq!(ids(&all.items, "sessionId"), [ses3, ses2, ses1]);
    for item in &all.items {
        let id = item["sessionId"].as_str().unwrap();
        let own = server.get(&format!("/v1/register-sessions/{id}"), &token).await;
        assert_eq!(item, &own.body, "the list shows what the session's read shows");
        assert!(item.get("token").is_none(), "{item}");
    }
    assert_eq!(all.items[2]["status"], "closed");

    // Open means open now: once the sessions expired, none is.
    server.clock.advance(Duration::from_secs(2 * 3_600));
    assert_eq!(list("open=true").await, [] as [&str; 0]);
    assert_eq!(list("open=false").await, [ses3, ses2, ses1]);
    let statuses: Vec<String> = walk(server, &token, "/v1/register-sessions", None)
        .await
        .items
        .iter()
        .map(|item| item["status"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(statuses, ["expired", "expired", "closed"]);
    chain.shop.server.stop().await;
}

on_both_engines!(register_sessions_list_by_store_till_and_state);

async fn each_list_needs_its_scope(engine: Engine) {
    let shop = Shop::open(engine).await;
    let server = &shop.server;
    let unrelated = server.token("stock-clerk", "pos.stock.read pos.stock.write");
    for (path, scope) in LISTS {
        server.get(path, &unrelated).await.assert_error(403, "FORBIDDEN");
        let reader = server.token("reader", scope);
        let reply = server.get(path, &reader).await;
        assert_eq!(reply.status, 200, "{path} with {scope}: {}", reply.text);
    }
    // Opening sessions is a till's grant; listing them is not part of it.
    let opener = server.token("kiosk", "pos.sessions.open");
    server
        .get("/v1/register-sessions", &opener)
        .await
        .assert_error(403, "FORBIDDEN");
    for (path, scope) in [
        ("/v1/register-sessions", "pos.sales.read"),
        ("/v1/stores", "pos.stores.write"),
        ("/v1/catalog/skus", "pos.catalog.write"),
        ("/v1/staff", "pos.staff.write"),
        ("/v1/coupons", "pos.coupons.write"),
    ] {
        assert_eq!(
            server.get(path, &server.token("writer", scope)).await.status,
            200,
            "{path}"
        );
    }
    // A cashier's till reads sales, not the staff.
    assert_eq!(server.get("/v1/sales", &shop.till).await.status, 200);
    server.get("/v1/staff", &shop.till).await.assert_error(403, "FORBIDDEN");
    let sold = shop.finalize(&shop.sale("t1", vec![line("l1", MUG, 1)], 1450)).await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    let found = server.get("/v1/sales", &shop.till).await;
    assert_eq!(found.body["items"][0]["transactionId"], "t1");
    assert_eq!(found.body["items"][0]["storeId"], "s1");
    shop.server.stop().await;
}

on_both_engines!(each_list_needs_its_scope);
