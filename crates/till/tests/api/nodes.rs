//! Several `till serve` processes on one PostgreSQL database, requests spread over them as a
//! load balancer would: what must hold across nodes holds. PostgreSQL only (SQLite is one
//! process by design).

use crate::harness::{Engine, fresh_postgres_database};
use futures::future::join_all;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;
use till_load::client::{Client, Reply};
use till_load::cluster::{Cluster, NodeConfig};
use till_load::shop::{Shop, ShopSpec, admin_token, provision};
use till_load::stored_value::Spend;

const SECRET: &str = "nodes-test-secret-of-at-least-32-bytes";

/// Three nodes, a client over them, a shop of 8 articles and `registers` tills.
struct Nodes {
    cluster: Cluster,
    client: Client,
    admin: String,
    shop: Shop,
    database_url: String,
    _dir: tempfile::TempDir,
}

impl Nodes {
    /// `None` when PostgreSQL is not part of this run.
    async fn start(registers: usize, env: &[(&str, &str)]) -> Option<Nodes> {
        Nodes::start_through(registers, env, |url| url.to_owned()).await
    }

    /// As [`Nodes::start`], the nodes reaching a new database through the URL `through` makes
    /// of its own.
    async fn start_through(registers: usize, env: &[(&str, &str)], through: fn(&str) -> String) -> Option<Nodes> {
        if !Engine::Postgres.enabled() {
            return None;
        }
        let dir = tempfile::tempdir().expect("temporary directory");
        let key = dir.path().join("fiscal-key.pem");
        till::fiscal::new_key(&key).expect("a signing key");
        let database_url = fresh_postgres_database().await;
        let config = NodeConfig {
            binary: env!("CARGO_BIN_EXE_till").into(),
            database_url: through(&database_url),
            jwt_secret: SECRET.into(),
            fiscal_key_file: key,
            env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            work_dir: dir.path().to_path_buf(),
        };
        let cluster = Cluster::start(config, 3).await.expect("three nodes");
        let client = Client::new(cluster.urls()).expect("a client");
        let admin = admin_token(SECRET);
        let spec = ShopSpec {
            store: "s1".into(),
            articles: 8,
            stock: Some(1_000),
            registers,
            cashier_discount_bps: None,
        };
        let shop = provision(&client, &admin, &spec).await.expect("a shop");
        Some(Nodes {
            cluster,
            client,
            admin,
            shop,
            database_url,
            _dir: dir,
        })
    }

    async fn on(&self, node: usize, path: &str, token: &str, body: &Value) -> Reply {
        self.client
            .to(node, Method::POST, path, token, Some(body))
            .await
            .expect("an answer")
    }

    /// The total `node` quotes for one unit of the shop's article `article`.
    async fn total_of_one(&self, node: usize, article: usize) -> i64 {
        let article = &self.shop.articles[article];
        let cart = json!({"storeId": "s1", "cart": {"freeLineSequence": 0, "lines": [
            {"id": "l1", "skuId": article.sku, "quantity": 1, "unitPrice": article.price, "vatRate": article.vat, "free": false}]}});
        let reply = self.on(node, "/v1/checkout/price", &self.admin, &cart).await;
        reply.json()["totals"]["total"].as_i64().unwrap()
    }

    async fn stock(&self, article: usize) -> i64 {
        let path = format!("/v1/stores/s1/stock/{}", self.shop.articles[article].sku);
        self.client.get(&path, &self.admin).await.unwrap().json()["onHand"]
            .as_i64()
            .unwrap()
    }

    async fn verify(&self, register: &str) -> Value {
        let path = format!("/v1/fiscal/registers/{register}/verify");
        self.client.get(&path, &self.admin).await.unwrap().json()
    }

    /// `node`'s sales committed in one statement, by the checked path, and its guesses of a
    /// till's chain head that missed.
    async fn commit_paths(&self, node: usize) -> (u64, u64, u64) {
        let metrics = self
            .client
            .to(node, Method::GET, "/metrics", &self.admin, None)
            .await
            .unwrap()
            .text;
        let count = |series: &str| {
            metrics
                .lines()
                .find_map(|line| line.strip_prefix(series)?.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        (
            count("till_sale_commits_total{path=\"one_statement\"}"),
            count("till_sale_commits_total{path=\"checked\"}"),
            count("till_sale_predictions_missed_total"),
        )
    }

    /// Sales committed in one statement, over the three nodes.
    async fn one_statement_commits(&self) -> u64 {
        let mut total = 0;
        for node in 0..3 {
            total += self.commit_paths(node).await.0;
        }
        total
    }

    /// Nine sales on each of `tills`, one after the other on the till's node: from then on
    /// the node acts on its guess of the till's chain head and books its sales in one statement.
    async fn warm(&self, tills: std::ops::Range<usize>) {
        join_all(tills.map(|t| async move {
            let till = &self.shop.tills[t];
            for n in 0..9 {
                let sale = self.shop.sale(till, &format!("warm-{t}-{n}"), &[(1, 1)]);
                let reply = self.on(t % 3, "/v1/checkout/finalize", &till.token, &sale).await;
                assert_eq!(reply.status, 201, "{}", reply.text);
            }
        }))
        .await;
    }

    /// `customer`'s points ledger, summed, read from the database.
    async fn points_ledger(&self, customer: &str) -> i64 {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(&self.database_url).await.unwrap();
        sqlx::query_scalar::<_, i64>(
            "SELECT COALESCE(SUM(points), 0)::BIGINT FROM loyalty_activities WHERE customer_id = $1",
        )
        .bind(customer)
        .fetch_one(&mut conn)
        .await
        .unwrap()
    }

    async fn stop(mut self) {
        self.cluster.kill_all().await.expect("nodes stop");
    }
}

fn statuses(replies: &[Reply]) -> Vec<u16> {
    let mut statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    statuses.sort_unstable();
    statuses
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn identical_finalizes_on_different_nodes_make_one_sale() {
    let Some(nodes) = Nodes::start(1, &[]).await else {
        return;
    };
    let till = &nodes.shop.tills[0];
    let sale = nodes.shop.sale(till, "t1", &[(0, 2), (1, 1)]);
    let replies = join_all((0..30).map(|i| nodes.on(i % 3, "/v1/checkout/finalize", &till.token, &sale))).await;
    assert!(replies.iter().all(|r| r.status == 201), "{:?}", statuses(&replies));
    assert!(replies.iter().all(|r| r.text == replies[0].text), "one body, replayed");
    assert_eq!(nodes.stock(0).await, 998, "the stock moved once");
    assert_eq!(nodes.stock(1).await, 999);
    let verdict = nodes.verify(&till.register).await;
    assert_eq!(
        (verdict["ok"].clone(), verdict["chains"]["ticket"].clone()),
        (json!(true), json!(1))
    );
    nodes.stop().await;
}

/// A database URL naming several hosts, the first of which is down: each node finds the one
/// that is a primary, and sells there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn nodes_given_several_hosts_find_the_primary_among_them() {
    let several = |url: &str| {
        let (credentials, host_and_database) = url.split_once('@').expect("a URL with a user");
        format!("{credentials}@127.0.0.1:9,{host_and_database}?target_session_attrs=read-write")
    };
    let Some(nodes) = Nodes::start_through(1, &[], several).await else {
        return;
    };
    let till = &nodes.shop.tills[0];
    let sale = nodes.shop.sale(till, "t1", &[(0, 2)]);
    let replies = join_all((0..3).map(|i| nodes.on(i, "/v1/checkout/finalize", &till.token, &sale))).await;
    assert_eq!(statuses(&replies), [201, 201, 201], "one sale, replayed on the others");
    assert_eq!(nodes.stock(0).await, 998);
    nodes.stop().await;
}

/// With a read URL, the back office's searches and reports are read there, and a till's own
/// searches on the primary. The "standby" here is a till database where nothing was ever sold:
/// a standby that lags for ever, so that each read shows where it was served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn the_back_office_reads_the_standby_and_a_till_its_own_sales_on_the_primary() {
    let Some(lagging) = Nodes::start(1, &[]).await else {
        return;
    };
    let standby_url = lagging.database_url.clone();
    lagging.stop().await;
    let nodes = Nodes::start(1, &[("TILL_DATABASE_READ_URL", standby_url.as_str())])
        .await
        .expect("PostgreSQL");
    let till = &nodes.shop.tills[0];
    let sale = nodes.shop.sale(till, "t1", &[(0, 2)]);
    let sold = nodes.on(0, "/v1/checkout/finalize", &till.token, &sale).await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    let listed = |reply: Reply| reply.json()["items"].as_array().map(Vec::len);
    let own = format!("/v1/sales?sessionId={}", till.session);
    for node in 0..3 {
        let by_till = nodes
            .client
            .to(node, Method::GET, &own, &till.token, None)
            .await
            .unwrap();
        assert_eq!(listed(by_till), Some(1), "a till finds the sale it has just made");
        let by_office = nodes
            .client
            .to(node, Method::GET, &own, &nodes.admin, None)
            .await
            .unwrap();
        assert_eq!(listed(by_office), Some(0), "the back office searches the standby");
    }
    let now = jiff::Timestamp::now().round(jiff::Unit::Hour).unwrap();
    let report = format!(
        "/v1/reports/sales?groupBy=day&storeId=s1&from={}&to={}",
        now - jiff::SignedDuration::from_hours(2),
        now + jiff::SignedDuration::from_hours(2)
    );
    let reply = nodes.client.get(&report, &nodes.admin).await.unwrap();
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(
        reply.json()["totals"]["salesCount"],
        0,
        "the report is read on the standby"
    );
    nodes.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn one_approval_spent_on_two_nodes_at_once_succeeds_once() {
    let Some(nodes) = Nodes::start(1, &[]).await else {
        return;
    };
    let till = &nodes.shop.tills[0];
    let manager = json!({"displayName": "Mathis", "role": "manager", "pin": "9876"});
    let put = nodes
        .client
        .put("/v1/staff/mathis", &nodes.admin, &manager)
        .await
        .unwrap();
    assert_eq!(put.status, 201, "{}", put.text);
    for round in 0..8 {
        let ask =
            json!({"managerSubject": "mathis", "pin": "9876", "operation": "discount.ticket", "percentBps": 1000});
        let grant = nodes.on(round % 3, "/v1/elevation-grants", &till.token, &ask).await;
        assert_eq!(grant.status, 201, "{}", grant.text);
        let token = grant.json()["token"].as_str().unwrap().to_owned();
        let sales: Vec<Value> = (0..3)
            .map(|n| {
                let mut sale = nodes.shop.sale(till, &format!("r{round}-{n}"), &[(2, 1)]);
                let price = nodes.shop.articles[2].price;
                let total = price - (price * 1000 + 5_000) / 10_000;
                sale["declaredDiscounts"] = json!([{"id": "d", "reason": "manager_goodwill", "scope": "ticket", "basis": "percent", "percentBps": 1000}]);
                sale["tenders"]["amountDue"] = json!(total);
                sale["tenders"]["tenders"][0]["applied"] = json!(total);
                sale["tenders"]["tenders"][0]["presented"] = json!(total);
                sale
            })
            .collect();
        let replies = join_all(sales.iter().enumerate().map(|(n, sale)| {
            let headers = [("x-elevation-token", token.as_str())];
            let client = &nodes.client;
            async move {
                client
                    .with_headers(
                        n,
                        Method::POST,
                        "/v1/checkout/finalize",
                        &till.token,
                        Some(sale),
                        &headers,
                    )
                    .await
                    .unwrap()
            }
        }))
        .await;
        assert_eq!(statuses(&replies), [201, 403, 403], "round {round}");
    }
    assert_eq!(nodes.stock(2).await, 1_000 - 8, "one discounted sale per approval");
    nodes.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn wrong_pins_spread_over_nodes_count_toward_one_lockout() {
    let Some(nodes) = Nodes::start(1, &[("TILL_ELEVATION_RATE_LIMIT", "1000")]).await else {
        return;
    };
    let till = &nodes.shop.tills[0];
    let manager = json!({"displayName": "Mathis", "role": "manager", "pin": "9876"});
    nodes
        .client
        .put("/v1/staff/mathis", &nodes.admin, &manager)
        .await
        .unwrap();
    let wrong = json!({"managerSubject": "mathis", "pin": "0000", "operation": "discount.ticket", "percentBps": 1000});
    let replies = join_all((0..30).map(|i| nodes.on(i % 3, "/v1/elevation-grants", &till.token, &wrong))).await;
    let evaluated = replies.iter().filter(|r| r.status == 401).count();
    let locked = replies
        .iter()
        .filter(|r| r.status == 429 && r.text.contains("LOCKED_OUT"))
        .count();
    assert!(
        evaluated <= 5,
        "{evaluated} wrong PINs were evaluated past a limit of 5"
    );
    assert_eq!(evaluated + locked, 30, "{:?}", statuses(&replies));
    // The lockout holds on every node, even for the right PIN.
    let right = json!({"managerSubject": "mathis", "pin": "9876", "operation": "discount.ticket", "percentBps": 1000});
    for node in 0..3 {
        let reply = nodes.on(node, "/v1/elevation-grants", &till.token, &right).await;
        assert_eq!(reply.status, 429, "node {node}: {}", reply.text);
        assert!(reply.text.contains("LOCKED_OUT"), "{}", reply.text);
    }
    nodes.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn a_coupons_redemption_limit_holds_across_nodes() {
    let Some(nodes) = Nodes::start(4, &[]).await else {
        return;
    };
    let coupon = json!({"amountCents": 100, "maxRedemptions": 3});
    let put = nodes
        .client
        .put("/v1/coupons/THREE", &nodes.admin, &coupon)
        .await
        .unwrap();
    assert_eq!(put.status, 201, "{}", put.text);
    let sales: Vec<(String, Value)> = (0..12)
        .map(|n| {
            let till = &nodes.shop.tills[n % 4];
            let mut sale = nodes.shop.sale(till, &format!("c{n}"), &[(3, 2)]);
            let total = nodes.shop.articles[3].price * 2 - 100;
            sale["couponCode"] = json!("THREE");
            sale["tenders"]["amountDue"] = json!(total);
            sale["tenders"]["tenders"][0]["applied"] = json!(total);
            sale["tenders"]["tenders"][0]["presented"] = json!(total);
            (till.token.clone(), sale)
        })
        .collect();
    let replies = join_all(
        sales
            .iter()
            .enumerate()
            .map(|(n, (token, sale))| nodes.on(n % 3, "/v1/checkout/finalize", token, sale)),
    )
    .await;
    let committed = replies.iter().filter(|r| r.status == 201).count();
    assert_eq!(committed, 3, "{:?}", statuses(&replies));
    assert!(replies.iter().all(|r| r.status == 201 || r.status == 422));
    let read = nodes
        .client
        .get("/v1/coupons/THREE", &nodes.admin)
        .await
        .unwrap()
        .json();
    assert_eq!(read["redemptions"], 3);
    assert_eq!(nodes.stock(3).await, 1_000 - 6);
    nodes.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn one_registers_chain_appended_from_three_nodes_stays_gapless() {
    let Some(nodes) = Nodes::start(1, &[]).await else {
        return;
    };
    let till = &nodes.shop.tills[0];
    // Every sale takes the same article: the stock row and the chain head are contended.
    let sales: Vec<Value> = (0..90)
        .map(|n| nodes.shop.sale(till, &format!("t{n}"), &[(5, 1), (n % 4, 1)]))
        .collect();
    let replies = join_all(
        sales
            .iter()
            .enumerate()
            .map(|(n, sale)| nodes.on(n % 3, "/v1/checkout/finalize", &till.token, sale)),
    )
    .await;
    assert!(
        replies.iter().all(|r| r.status == 201),
        "a lost race must never fail a sale: {:?}",
        statuses(&replies)
    );
    assert_eq!(nodes.stock(5).await, 1_000 - 90);
    let verdict = nodes.verify(&till.register).await;
    assert_eq!(verdict["ok"], true, "{verdict}");
    assert_eq!(verdict["chains"]["ticket"], 90);
    let chain = nodes
        .client
        .get(
            &format!("/v1/fiscal/registers/{}/chains/ticket", till.register),
            &nodes.admin,
        )
        .await
        .unwrap()
        .json();
    let seqs: Vec<i64> = chain["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_i64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=90).collect::<Vec<i64>>());
    nodes.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn a_tills_sales_moving_between_nodes_keep_its_chain_gapless() {
    let Some(nodes) = Nodes::start(1, &[]).await else {
        return;
    };
    let till = &nodes.shop.tills[0];
    // One sale at a time, as a till sends them, each to a node a load balancer might pick. A
    // node guesses the till's next ticket from the last one it booked itself, and acts on its
    // guess (one statement) only after eight right ones in a row: a miss costs a sale's writes.
    // Twelve sales on node 0, one on node 1, one back on node 0, then back and forth.
    let mut route = vec![0; 12];
    route.extend([1, 0]);
    route.extend([1, 0].repeat(4));
    for (n, node) in route.iter().enumerate() {
        let sale = nodes.shop.sale(till, &format!("t{n}"), &[(5, 1), (n % 4, 1)]);
        let reply = nodes.on(*node, "/v1/checkout/finalize", &till.token, &sale).await;
        assert_eq!(reply.status, 201, "sale {n} on node {node}: {}", reply.text);
    }
    assert_eq!(nodes.stock(5).await, 1_000 - route.len() as i64);
    let verdict = nodes.verify(&till.register).await;
    assert_eq!(verdict["ok"], true, "{verdict}");
    assert_eq!(verdict["chains"]["ticket"], route.len());
    // Per node: (sales committed in one statement, by the checked path, guesses that missed).
    // Node 0 books t0 with no guess and t1 to t8 checked, each guess right; t9 to t11 in one
    // statement; misses on t13 (node 1 booked t12) and books it checked; then never acts on a
    // guess while the till goes back and forth. Node 1 never has eight right guesses.
    let expected = [(3, 14, 1), (0, 5, 0)];
    for (node, paths) in expected.into_iter().enumerate() {
        assert_eq!(nodes.commit_paths(node).await, paths, "node {node}");
    }
    nodes.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn a_session_closed_on_one_node_books_only_late_sales_on_another() {
    let Some(nodes) = Nodes::start(1, &[("TILL_SESSION_CACHE_SECONDS", "60")]).await else {
        return;
    };
    let till = &nodes.shop.tills[0];
    let finalize = "/v1/checkout/finalize";
    // Node 1 resolves the till's token on a first sale and keeps it, for a minute here.
    let first = nodes
        .on(1, finalize, &till.token, &nodes.shop.sale(till, "t1", &[(0, 1)]))
        .await;
    assert_eq!(first.status, 201, "{}", first.text);
    let close = format!("/v1/register-sessions/{}/close", till.session);
    let report = nodes.on(0, &close, &nodes.admin, &json!({})).await;
    assert_eq!(report.status, 200, "{}", report.text);
    assert_eq!(report.json()["salesCount"], 1);
    // Node 1 still holds the session as open; the commit checks it in the database.
    let refused = nodes
        .on(1, finalize, &till.token, &nodes.shop.sale(till, "t2", &[(0, 1)]))
        .await;
    assert_eq!(refused.status, 422, "{}", refused.text);
    assert!(refused.text.contains("closed"), "{}", refused.text);
    assert_eq!(nodes.stock(0).await, 1_000 - 1);
    // A sale carrying the instant it was rung, as an offline till queues it, is booked there
    // as a late sale: the commit finds the session closed, and the sale is booked again late.
    let mut queued = nodes.shop.sale(till, "t3", &[(0, 1)]);
    queued["issuedAt"] = json!(jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string());
    let late = nodes.on(1, finalize, &till.token, &queued).await;
    assert_eq!(late.status, 201, "{}", late.text);
    assert_eq!(nodes.stock(0).await, 1_000 - 2);
    let verdict = nodes.verify(&till.register).await;
    assert_eq!(verdict["ok"], true, "{verdict}");
    assert_eq!(verdict["chains"]["ticket"], 2);
    nodes.stop().await;
}

/// Sets the discount limit of till 0's cashier to `bps` of a ticket, on node 0.
async fn set_cashier_limit(nodes: &Nodes, bps: i64) {
    let till = &nodes.shop.tills[0];
    let body = json!({"displayName": till.cashier, "role": "cashier", "pin": "2580",
                      "discountLimit": {"percentBps": bps, "amountCents": 1_000_000}});
    let path = format!("/v1/staff/{}", till.cashier);
    let reply = nodes
        .client
        .to(0, Method::PUT, &path, &nodes.admin, Some(&body))
        .await
        .unwrap();
    assert_eq!(reply.status, 200, "{}", reply.text);
}

/// Till 0 sells on node 1 with 5 % off the ticket, at the price node 1 quotes for it.
async fn sell_at_five_percent_off(nodes: &Nodes, transaction: &str) -> Reply {
    let till = &nodes.shop.tills[0];
    let mut sale = nodes.shop.sale(till, transaction, &[(0, 2)]);
    sale["declaredDiscounts"] =
        json!([{"id": "d1", "reason": "promotional", "scope": "ticket", "basis": "percent", "percentBps": 500}]);
    let quote = json!({"storeId": "s1", "cart": sale["cart"], "declaredDiscounts": sale["declaredDiscounts"]});
    let priced = nodes.on(1, "/v1/checkout/price", &till.token, &quote).await;
    assert_eq!(priced.status, 200, "{}", priced.text);
    let total = priced.json()["totals"]["total"].clone();
    sale["tenders"]["amountDue"] = total.clone();
    sale["tenders"]["tenders"][0]["applied"] = total.clone();
    sale["tenders"]["tenders"][0]["presented"] = total;
    nodes.on(1, "/v1/checkout/finalize", &till.token, &sale).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn a_cashier_changed_on_one_node_applies_to_its_till_on_another_within_the_bound() {
    let Some(nodes) = Nodes::start(1, &[("TILL_SESSION_CACHE_SECONDS", "1")]).await else {
        return;
    };
    set_cashier_limit(&nodes, 1_000).await;
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let allowed = sell_at_five_percent_off(&nodes, "t1").await;
    assert_eq!(allowed.status, 201, "{}", allowed.text);
    // Node 0 lowers the cashier's limit below the discount, while node 1 holds the till's
    // session and cashier as it read them. The documented bound is TILL_SESSION_CACHE_SECONDS.
    set_cashier_limit(&nodes, 0).await;
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let refused = sell_at_five_percent_off(&nodes, "t2").await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    nodes.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn a_price_written_on_one_node_applies_on_the_others_within_the_bound() {
    let Some(nodes) = Nodes::start(1, &[("TILL_CATALOG_CACHE_SECONDS", "1")]).await else {
        return;
    };
    let article = &nodes.shop.articles[7];
    let total_on = |node: usize| nodes.total_of_one(node, 7);
    // Every node has priced the article, and holds it in its cache.
    for node in 0..3 {
        assert_eq!(total_on(node).await, article.price);
    }
    let raised = article.price + 250;
    let body = json!({"name": "Raised", "priceCents": raised, "vatRate": article.vat});
    let written = nodes
        .client
        .to(
            0,
            Method::PUT,
            &format!("/v1/catalog/skus/{}", article.sku),
            &nodes.admin,
            Some(&body),
        )
        .await
        .unwrap();
    assert_eq!(written.status, 200, "{}", written.text);
    assert_eq!(total_on(0).await, raised, "the writing node prices it at once");
    // The documented bound is TILL_CATALOG_CACHE_SECONDS: once it has passed, every node does.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    for node in 0..3 {
        assert_eq!(total_on(node).await, raised, "node {node}");
    }
    nodes.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn a_promotion_written_on_one_node_applies_on_the_others_within_the_bound() {
    let Some(nodes) = Nodes::start(1, &[("TILL_PROMOTION_CACHE_SECONDS", "1")]).await else {
        return;
    };
    let article = &nodes.shop.articles[6];
    let total_on = |node: usize| nodes.total_of_one(node, 6);
    // Every node has read the (empty) rules once.
    for node in 0..3 {
        assert_eq!(total_on(node).await, article.price);
    }
    let rule = json!({"id": "half", "type": "percent_off", "name": "Half price", "productIds": [article.sku],
        "percentBps": 5000, "validFrom": "2020-01-01T00:00:00Z", "validUntil": "2099-12-31T23:59:59Z"});
    let written = nodes.on(0, "/v1/promotions", &nodes.admin, &rule).await;
    assert_eq!(written.status, 201, "{}", written.text);
    let half = article.price - (article.price * 5000 + 5_000) / 10_000;
    assert_eq!(total_on(0).await, half, "the writing node applies it at once");
    // The documented bound is TILL_PROMOTION_CACHE_SECONDS: once it has passed, every node does.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    for node in 0..3 {
        assert_eq!(total_on(node).await, half, "node {node}");
    }
    nodes.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn twenty_sales_on_one_gift_card_across_nodes_give_three() {
    let Some(nodes) = Nodes::start(2, &[]).await else {
        return;
    };
    let price = nodes.shop.articles[0].price;
    let issued = nodes
        .client
        .post("/v1/gift-cards", &nodes.admin, &json!({"balanceCents": 3 * price}))
        .await
        .unwrap();
    assert_eq!(issued.status, 201, "{}", issued.text);
    let code = issued.json()["code"].as_str().unwrap().to_owned();
    let sales: Vec<(usize, Value)> = (0..20)
        .map(|n| {
            let till = &nodes.shop.tills[n % 2];
            let mut sale = nodes.shop.sale(till, &format!("g{n}"), &[(0, 1)]);
            sale["tenders"]["tenders"][0]["method"] = json!("gift_card");
            sale["tenders"]["tenders"][0]["reference"] = json!(code);
            (n % 2, sale)
        })
        .collect();
    let replies = join_all(
        sales
            .iter()
            .enumerate()
            .map(|(n, (till, sale))| nodes.on(n % 3, "/v1/checkout/finalize", &nodes.shop.tills[*till].token, sale)),
    )
    .await;
    let booked = replies.iter().filter(|r| r.status == 201).count();
    assert_eq!(booked, 3, "{:?}", statuses(&replies));
    assert!(
        replies.iter().all(|r| r.status == 201 || r.status == 422),
        "{:?}",
        statuses(&replies)
    );
    let card = nodes
        .client
        .get(&format!("/v1/gift-cards/{code}"), &nodes.admin)
        .await
        .unwrap()
        .json();
    assert_eq!(card["balanceCents"], json!(0), "{card}");
    let activities = card["activities"].as_array().unwrap();
    assert_eq!(activities.len(), 4, "one issue, three redemptions: {card}");
    let sum: i64 = activities.iter().map(|a| a["amountCents"].as_i64().unwrap()).sum();
    assert_eq!(sum, 0, "the ledger sums to the balance");
    assert_eq!(nodes.stock(0).await, 1_000 - 3);
    nodes.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn ten_returns_on_three_nodes_refund_a_card_payment_within_its_capture() {
    let Some(nodes) = Nodes::start(2, &[]).await else {
        return;
    };
    let till = &nodes.shop.tills[0];
    let price = nodes.shop.articles[0].price;
    let asked = json!({"paymentId": "pay-1", "sessionId": till.session, "amountCents": 3 * price, "method": "card"});
    assert_eq!(nodes.on(0, "/v1/payments", &till.token, &asked).await.status, 201);
    let approval = json!({"status": "authorized", "authorizedCents": 3 * price});
    let settled = nodes.on(1, "/v1/payments/pay-1/outcome", &till.token, &approval).await;
    assert_eq!(settled.status, 200, "{}", settled.text);
    // Ten units, three of them on the card and the rest in cash.
    let mut sale = nodes.shop.sale(till, "t1", &[(0, 10)]);
    sale["tenders"]["tenders"] = json!([
        {"id": "p1", "method": "card", "applied": 3 * price, "presented": 3 * price, "change": 0, "forfeited": 0, "reference": "pay-1"},
        {"id": "p2", "method": "cash", "applied": 7 * price, "presented": 7 * price, "change": 0, "forfeited": 0}]);
    let sold = nodes.on(2, "/v1/checkout/finalize", &till.token, &sale).await;
    assert_eq!(sold.status, 201, "{}", sold.text);

    // Ten returns of one unit each, from both tills, over the three nodes, all to the card.
    let returns: Vec<(usize, Value)> = (0..10)
        .map(|n| {
            let till = &nodes.shop.tills[n % 2];
            let back = json!({
                "transactionId": format!("r{n}"), "originalTransactionId": "t1", "number": format!("R-{n}"),
                "storeId": "s1", "sellerId": till.cashier, "sessionId": till.session,
                "lines": [{"lineId": "l0", "quantity": 1}],
                "tenders": {"amountDue": price, "sequence": 1, "tenders": [
                    {"id": "b1", "method": "card", "applied": price, "presented": price, "change": 0,
                     "forfeited": 0, "reference": "pay-1"}]}});
            (n % 2, back)
        })
        .collect();
    let replies = join_all(
        returns
            .iter()
            .enumerate()
            .map(|(n, (till, back))| nodes.on(n % 3, "/v1/returns", &nodes.shop.tills[*till].token, back)),
    )
    .await;
    let booked = replies.iter().filter(|r| r.status == 201).count();
    assert!(
        replies.iter().all(|r| r.status == 201 || r.status == 422),
        "{:?}",
        statuses(&replies)
    );
    assert_eq!(
        booked,
        3,
        "each loser saw the winners and tried again: {:?}",
        statuses(&replies)
    );
    let payment = nodes
        .client
        .get("/v1/payments/pay-1", &nodes.admin)
        .await
        .unwrap()
        .json();
    assert_eq!(payment["refundedCents"], json!(booked as i64 * price), "{payment}");
    let refunds = nodes
        .client
        .get("/v1/payments?state=refunded", &nodes.admin)
        .await
        .unwrap()
        .json();
    let given: i64 = refunds["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|refund| refund["amountCents"].as_i64().unwrap())
        .sum();
    assert_eq!(
        given,
        booked as i64 * price,
        "one refund attempt per return kept: {refunds}"
    );
    assert_eq!(nodes.stock(0).await, 1_000 - 10 + booked as i64);
    nodes.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn a_card_drawn_on_in_one_statement_by_many_tills_is_spent_once_with_its_ledger_in_order() {
    let Some(nodes) = Nodes::start(8, &[]).await else {
        return;
    };
    nodes.warm(0..8).await;
    let share = nodes.shop.articles[0].price / 2;
    let issued = nodes
        .client
        .post("/v1/gift-cards", &nodes.admin, &json!({"balanceCents": 3 * share + 1}))
        .await
        .unwrap();
    assert_eq!(issued.status, 201, "{}", issued.text);
    let code = issued.json()["code"].as_str().unwrap().to_owned();
    let before = nodes.one_statement_commits().await;
    let spend = Spend::GiftCard {
        code: code.clone(),
        applied: share,
    };
    let on = &nodes;
    let replies = join_all(nodes.shop.tills.iter().enumerate().map(|(t, till)| {
        let sale = nodes
            .shop
            .sale_paying(till, &format!("card-{t}"), &[(0, 1)], None, Some(&spend));
        async move { on.on(t % 3, "/v1/checkout/finalize", &till.token, &sale).await }
    }))
    .await;
    assert_eq!(statuses(&replies), [201, 201, 201, 422, 422, 422, 422, 422]);
    for refused in replies.iter().filter(|r| r.status == 422) {
        assert!(refused.text.contains("only 0.01 is left"), "{}", refused.text);
    }
    // Each booked sale went in one statement; each refused one was refused by the checked path.
    assert_eq!(nodes.one_statement_commits().await - before, 3);
    let card = nodes
        .client
        .get(&format!("/v1/gift-cards/{code}"), &nodes.admin)
        .await
        .unwrap()
        .json();
    assert_eq!(card["balanceCents"], json!(1), "{card}");
    let activities = card["activities"].as_array().unwrap();
    assert_eq!(activities.len(), 4, "one issue, three redemptions: {card}");
    // Every activity's balance after is the one before it moved by its amount: each ledger row
    // carries the balance its own update left, not the statement's snapshot.
    let mut balance = 0;
    for activity in activities {
        balance += activity["amountCents"].as_i64().unwrap();
        assert_eq!(activity["balanceAfterCents"].as_i64().unwrap(), balance, "{card}");
    }
    nodes.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn points_spent_and_earned_in_one_statement_are_both_kept() {
    let Some(nodes) = Nodes::start(8, &[]).await else {
        return;
    };
    let customer = "cust-one-statement";
    let till = &nodes.shop.tills[0];
    let price = nodes.shop.articles[0].price;
    let point_value = till_load::stored_value::point_value(&[]).unwrap();
    let spent = (price - 1) / point_value;
    // A point earned per currency unit: enough for three such sales, not for eight.
    let units = (3 * spent + 1) * 100 / price + 1;
    let earn = nodes
        .shop
        .sale_paying(till, "earn", &[(0, units)], Some(customer), None);
    let earned = nodes.on(0, "/v1/checkout/finalize", &till.token, &earn).await;
    assert_eq!(earned.status, 201, "{}", earned.text);
    nodes.warm(0..8).await;
    let held = till_load::stored_value::points_of(&nodes.client, &nodes.admin, customer)
        .await
        .unwrap();
    assert!(
        held >= 3 * spent && held < 4 * spent,
        "{held} points for {spent} a sale"
    );
    let before = nodes.one_statement_commits().await;
    let spend = Spend::Loyalty {
        applied: spent * point_value,
    };
    let on = &nodes;
    let replies = join_all(nodes.shop.tills.iter().enumerate().map(|(t, till)| {
        let sale = nodes
            .shop
            .sale_paying(till, &format!("points-{t}"), &[(0, 1)], Some(customer), Some(&spend));
        async move { on.on(t % 3, "/v1/checkout/finalize", &till.token, &sale).await }
    }))
    .await;
    let booked: Vec<&Reply> = replies.iter().filter(|r| r.status == 201).collect();
    assert!(
        replies.iter().all(|r| r.status == 201 || r.status == 422),
        "{:?}",
        statuses(&replies)
    );
    // Alike sales: as many are booked as the points allow one after the other.
    let each_earns = booked[0].json()["loyalty"]["pointsEarned"].as_i64().unwrap();
    let (mut points, mut allowed) = (held, 0);
    while points >= spent && allowed < replies.len() {
        points += each_earns - spent;
        allowed += 1;
    }
    assert_eq!(booked.len(), allowed, "{:?}", statuses(&replies));
    assert_eq!(nodes.one_statement_commits().await - before, allowed as u64);
    let after = till_load::stored_value::points_of(&nodes.client, &nodes.admin, customer)
        .await
        .unwrap();
    assert_eq!(
        after, points,
        "each booked sale spent its points and added those it earned"
    );
    assert_eq!(
        nodes.points_ledger(customer).await,
        after,
        "the ledger sums to the points"
    );
    nodes.stop().await;
}

/// Every event after `after` that a node answers now, following `nextCursor`.
async fn feed_from(nodes: &Nodes, node: usize, after: &mut String, events: &mut Vec<Value>) {
    loop {
        let path = format!("/v1/events?after={after}&limit=1000");
        let page = nodes
            .client
            .to(node, Method::GET, &path, &nodes.admin, None)
            .await
            .expect("a page of the feed");
        assert_eq!(page.status, 200, "{}", page.text);
        let page = page.json();
        let read = page["events"].as_array().unwrap();
        *after = page["nextCursor"].as_str().unwrap().to_owned();
        if read.is_empty() {
            return;
        }
        events.extend(read.iter().cloned());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn a_reader_following_the_feed_sees_every_sale_of_sixteen_tills_on_two_nodes_once_in_order() {
    let Some(nodes) = Nodes::start(16, &[]).await else {
        return;
    };
    const SALES_EACH: usize = 12;
    let writing = std::sync::atomic::AtomicBool::new(true);
    let writers = join_all(nodes.shop.tills.iter().enumerate().map(|(t, till)| {
        let nodes = &nodes;
        async move {
            let mut acknowledged = Vec::new();
            for n in 0..SALES_EACH {
                let id = format!("feed-{t}-{n}");
                let sale = nodes.shop.sale(till, &id, &[(n % 4, 1)]);
                let reply = nodes.on(t % 2, "/v1/checkout/finalize", &till.token, &sale).await;
                assert_eq!(reply.status, 201, "{}", reply.text);
                acknowledged.push(id);
            }
            acknowledged
        }
    }));
    let reader = async {
        let (mut after, mut events) = ("0".to_owned(), Vec::new());
        while writing.load(std::sync::atomic::Ordering::Relaxed) {
            feed_from(&nodes, 2, &mut after, &mut events).await;
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        (after, events)
    };
    let (acknowledged, (mut after, mut events)) = futures::join!(
        async {
            let acknowledged = writers.await;
            writing.store(false, std::sync::atomic::Ordering::Relaxed);
            acknowledged
        },
        reader
    );
    // What committed last is numbered within moments: read on until every sale is there.
    let sales_seen = |events: &[Value]| events.iter().filter(|e| e["type"] == "sale.completed").count();
    for _ in 0..500 {
        if sales_seen(&events) >= 16 * SALES_EACH {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        feed_from(&nodes, 2, &mut after, &mut events).await;
    }
    assert_eq!(sales_seen(&events), 16 * SALES_EACH);
    // Positions run from the first without a gap: the reader went past none it had not read.
    let expected = events.len();
    let cursors: Vec<usize> = events
        .iter()
        .map(|e| e["cursor"].as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(cursors, (1..=expected).collect::<Vec<_>>());
    let mut ids: Vec<&str> = events.iter().map(|e| e["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), expected, "no event twice");
    // Each till's sales in the order it made them, each once.
    for (t, sent) in acknowledged.iter().enumerate() {
        let register = &nodes.shop.tills[t].register;
        let seen: Vec<&str> = events
            .iter()
            .filter(|e| e["type"] == "sale.completed" && e["registerId"] == json!(register))
            .map(|e| e["data"]["transaction"]["id"].as_str().unwrap_or_default())
            .collect();
        let sent: Vec<&str> = sent.iter().map(String::as_str).collect();
        assert_eq!(seen, sent, "till {t}");
    }
    nodes.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn a_killed_nodes_acknowledged_sales_are_in_the_feed() {
    let Some(mut nodes) = Nodes::start(2, &[]).await else {
        return;
    };
    let till = nodes.shop.tills[1].clone();
    let mut acknowledged = Vec::new();
    for n in 0..20 {
        let id = format!("killed-{n}");
        let sale = nodes.shop.sale(&till, &id, &[(0, 1)]);
        let reply = nodes.on(1, "/v1/checkout/finalize", &till.token, &sale).await;
        assert_eq!(reply.status, 201, "{}", reply.text);
        acknowledged.push(id);
    }
    nodes.cluster.nodes[1].kill().await.expect("node 1 killed");
    let (mut after, mut events) = ("0".to_owned(), Vec::new());
    for _ in 0..500 {
        feed_from(&nodes, 0, &mut after, &mut events).await;
        if events.iter().filter(|e| e["type"] == "sale.completed").count() >= acknowledged.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let seen: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "sale.completed")
        .map(|e| e["data"]["transaction"]["id"].as_str().unwrap_or_default())
        .collect();
    let acknowledged: Vec<&str> = acknowledged.iter().map(String::as_str).collect();
    assert_eq!(seen, acknowledged);
    nodes.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn nodes_deliver_every_event_to_each_endpoint_once_and_in_feed_order() {
    let Some(nodes) = Nodes::start(4, &[("TILL_WEBHOOK_ALLOW_PRIVATE", "true")]).await else {
        return;
    };
    let receiver = crate::webhooks::Receiver::accepting().await;
    // Four endpoints on one receiver, told apart by their paths, created on both nodes.
    let mut endpoints = Vec::new();
    for n in 0..4 {
        let url = format!("http://127.0.0.1:{}/endpoint-{n}", receiver.port);
        let reply = nodes
            .on(n % 2, "/v1/webhooks", &nodes.admin, &json!({"url": url}))
            .await;
        assert_eq!(reply.status, 201, "{}", reply.text);
        let created = reply.json();
        let field = |name: &str| created[name].as_str().unwrap().to_owned();
        endpoints.push((format!("/endpoint-{n}"), field("secret"), field("cursor")));
    }
    const SALES_EACH: usize = 10;
    join_all(nodes.shop.tills.iter().enumerate().map(|(t, till)| {
        let nodes = &nodes;
        async move {
            for n in 0..SALES_EACH {
                let sale = nodes.shop.sale(till, &format!("hook-{t}-{n}"), &[(n % 4, 1)]);
                let reply = nodes.on(t % 2, "/v1/checkout/finalize", &till.token, &sale).await;
                assert_eq!(reply.status, 201, "{}", reply.text);
            }
        }
    }))
    .await;
    let lowest = endpoints
        .iter()
        .map(|(_, _, cursor)| cursor.clone())
        .min_by_key(|c| c.parse::<i64>().unwrap());
    let (mut after, mut feed) = (lowest.unwrap(), Vec::new());
    for _ in 0..500 {
        feed_from(&nodes, 0, &mut after, &mut feed).await;
        if feed.iter().filter(|e| e["type"] == "sale.completed").count() >= 4 * SALES_EACH {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut sent = 0;
    for (path, secret, start) in &endpoints {
        let start: i64 = start.parse().unwrap();
        let expected: Vec<&str> = feed
            .iter()
            .filter(|e| e["cursor"].as_str().unwrap().parse::<i64>().unwrap() > start)
            .map(|e| e["id"].as_str().unwrap())
            .collect();
        assert!(expected.len() >= 4 * SALES_EACH);
        let got = crate::webhooks::eventually("every event at each endpoint", || async {
            let got: Vec<crate::webhooks::Received> = receiver.got().into_iter().filter(|r| &r.path == path).collect();
            (got.len() >= expected.len()).then_some(got)
        })
        .await;
        // Every request was answered 200: no attempt failed, so none was sent twice.
        let ids: Vec<&str> = got.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, expected, "{path}: each event once, in feed order");
        assert!(got.iter().all(|r| crate::webhooks::verifies(secret, r)), "{path}");
        sent += expected.len();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.got().len(), sent, "nothing sent twice afterwards");
    nodes.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn receipts_emailed_from_three_nodes_arrive_once_each() {
    let sink = crate::harness::MailSink::start(crate::harness::free_port());
    let url = sink.url();
    let env = [
        ("TILL_SMTP_URL", url.as_str()),
        ("TILL_SMTP_FROM", "tickets@example.org"),
    ];
    let Some(nodes) = Nodes::start(1, &env).await else {
        return;
    };
    let till = &nodes.shop.tills[0];
    for sale in 0..3 {
        let body = nodes.shop.sale(till, &format!("t{sale}"), &[(0, 1)]);
        assert_eq!(
            nodes.on(0, "/v1/checkout/finalize", &till.token, &body).await.status,
            201
        );
    }
    // Thirty sends asked on the three nodes; every node's mailer claims from the one queue.
    let nodes_ref = &nodes;
    let asks = (0..30).map(|n| {
        let body = json!({"email": format!("customer-{n}@example.org")});
        let path = format!("/v1/sales/t{}/receipt/send", n % 3);
        async move { nodes_ref.on(n % 3, &path, &nodes_ref.admin, &body).await }
    });
    let replies = join_all(asks).await;
    assert!(replies.iter().all(|r| r.status == 202), "{:?}", statuses(&replies));
    let mails = sink.wait_for(30).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut recipients: Vec<String> = sink
        .mails()
        .iter()
        .filter_map(|mail| {
            let text = String::from_utf8_lossy(mail).into_owned();
            text.lines()
                .find_map(|line| line.strip_prefix("X-RcptTo: ").map(str::to_owned))
        })
        .collect();
    recipients.sort();
    recipients.dedup();
    assert_eq!(
        (mails.len(), sink.mails().len(), recipients.len()),
        (30, 30, 30),
        "each mail once"
    );
    nodes.stop().await;
}
