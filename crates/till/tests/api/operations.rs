//! What an operator relies on: health, readiness, metrics, the document, the journal's key.

use crate::harness::{Engine, TestServer};
use crate::harness::{Shop, line};
use crate::on_both_engines;
use reqwest::Method;
use serde_json::json;
use std::path::PathBuf;

async fn health_readiness_and_metrics_answer_without_credentials(engine: Engine) {
    let server = TestServer::start(engine).await;
    let health = server.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(health.body, json!({"status": "ok"}));
    let ready = server.call(Method::GET, "/readyz", None, None).await;
    let engine_name = match engine {
        Engine::Sqlite => "sqlite",
        Engine::Postgres => "postgres",
    };
    assert_eq!(ready.body, json!({"status": "ok", "database": engine_name}));
    server.get("/v1/stores/x", &server.admin()).await;
    let metrics = server.call(Method::GET, "/metrics", None, None).await;
    assert!(
        metrics.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    assert!(metrics.text.contains("till_http_requests_total{"), "{}", metrics.text);
    assert!(
        metrics.text.contains("route=\"/v1/stores/{storeId}\""),
        "{}",
        metrics.text
    );
    let document = server.call(Method::GET, "/v1/openapi.json", None, None).await;
    assert_eq!(document.text, till_api::openapi::document_json());
    server.stop().await;
}

/// The series of the request metrics whose labels a made-up request could reach: a method
/// outside the standard ones, or a path no route matches. Each series once, without its value.
async fn open_ended_series(server: &TestServer) -> std::collections::BTreeSet<String> {
    let metrics = server.call(Method::GET, "/metrics", None, None).await;
    assert_eq!(metrics.status, 200, "{}", metrics.text);
    metrics
        .text
        .lines()
        .filter(|line| line.starts_with("till_http_"))
        .filter(|line| line.contains("method=\"other\"") || line.contains("route=\"unmatched\""))
        .map(|line| line.rsplit_once(' ').map_or(line, |(series, _)| series).to_owned())
        .collect()
}

/// Made-up methods and paths are counted under closed labels: once each kind of request has
/// been seen, 200 more of them, every one with a method and a path of its own, add no series.
async fn made_up_methods_and_paths_add_no_metrics_series(engine: Engine) {
    let server = TestServer::start(engine).await;
    let shapes = |n: usize| {
        [
            format!("/made-up/{n}"),
            format!("/v1/stores/made-up-{n}"),
            format!("/healthz?n={n}"),
            format!("/v1/made-up-{n}/deeper/{n}"),
        ]
    };
    let standard = [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::PATCH,
        Method::OPTIONS,
    ];
    // Every kind of request once: the closed labels they are counted under now exist.
    for path in shapes(0) {
        let made_up = Method::from_bytes(b"MADEUP").unwrap();
        for method in standard.iter().cloned().chain([made_up]) {
            server.call(method, &path, None, None).await;
        }
    }
    let before = open_ended_series(&server).await;
    assert!(!before.is_empty());
    for n in 1..=200 {
        let method = Method::from_bytes(format!("MADEUP{n}").as_bytes()).unwrap();
        let path = &shapes(n)[n % 4];
        let reply = server.call(method, path, None, None).await;
        assert!((400..500).contains(&reply.status), "{path}: {}", reply.status);
        server
            .call(
                standard[n % standard.len()].clone(),
                &format!("/made-up-{n}"),
                None,
                None,
            )
            .await;
    }
    let after = open_ended_series(&server).await;
    assert_eq!(after, before, "no new series");
    let metrics = server.call(Method::GET, "/metrics", None, None).await;
    assert!(!metrics.text.contains("MADEUP"), "no method as it was sent");
    assert!(!metrics.text.contains("made-up"), "no path as it was sent");
    server.stop().await;
}

/// The samples of `/metrics`, by series (name and labels, as written).
fn samples(text: &str) -> std::collections::BTreeMap<String, f64> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').expect("a series and its value");
            (series.to_owned(), value.parse().expect("a number"))
        })
        .collect()
}

/// Every family says what it measures; the node names its build, its connections, its
/// writer's queue (SQLite) or pool size (PostgreSQL), the feed's head and its process's use.
async fn the_metrics_describe_the_node_its_database_and_its_build(engine: Engine) {
    let shop = Shop::open(engine).await;
    let sale = shop.sale("t1", vec![line("l1", ("Mug", 1450, 20.0), 1)], 1450);
    assert_eq!(shop.finalize(&sale).await.status, 201);
    let server = &shop.server;
    let metrics = server.call(Method::GET, "/metrics", None, None).await;
    assert_eq!(metrics.status, 200, "{}", metrics.text);

    let helped: Vec<&str> = metrics.text.lines().filter_map(|l| l.strip_prefix("# HELP ")).collect();
    let typed: Vec<&str> = metrics.text.lines().filter_map(|l| l.strip_prefix("# TYPE ")).collect();
    assert!(typed.len() >= 15, "{}", metrics.text);
    for family in &typed {
        let name = family.split(' ').next().unwrap();
        assert!(
            helped.iter().any(|help| help.split(' ').next() == Some(name)),
            "{name} has no # HELP"
        );
    }

    let values = samples(&metrics.text);
    let (ok, version) = server.run_till(&["--version"]);
    assert!(ok, "{version}");
    let commit = version.trim().rsplit_once("(commit ").unwrap().1.trim_end_matches(')');
    let build = format!(
        "till_build_info{{version=\"{}\",commit=\"{commit}\"}}",
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(values.get(&build), Some(&1.0), "{}", metrics.text);
    assert_eq!(values.get("till_database_up"), Some(&1.0));
    assert!(values["process_resident_memory_bytes"] > 0.0);
    assert!(values["process_open_fds"] > 0.0);
    assert!(values.contains_key("process_cpu_seconds_total"));
    assert!(values.contains_key("till_db_connections{state=\"busy\"}"));
    // Open, not necessarily idle: the scrape itself may be holding the only one.
    assert!(
        values["till_db_connections{state=\"idle\"}"] + values["till_db_connections{state=\"busy\"}"] >= 1.0,
        "a reader stays open after the sale"
    );
    match engine {
        Engine::Sqlite => {
            assert_eq!(values.get("till_sqlite_writer_queue_jobs"), Some(&0.0));
            assert!(values["till_sqlite_writer_batch_jobs_count"] >= 1.0);
            assert!(!values.contains_key("till_db_connections_max"));
        }
        Engine::Postgres => {
            assert!(values["till_db_connections_max"] >= 1.0);
            assert!(!values.contains_key("till_sqlite_writer_queue_jobs"));
        }
    }
    // The feed's head is the last event the feed hands out, once every event is numbered:
    // the feed is read only after the numbering has caught up, or its last event could be
    // one the head has already passed.
    let head = |values: &std::collections::BTreeMap<String, f64>| values.get("till_feed_head_position").copied();
    let mut values = values;
    for _ in 0..200 {
        if values.get("till_feed_unplaced_events") == Some(&0.0) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        values = samples(&server.call(Method::GET, "/metrics", None, None).await.text);
    }
    assert_eq!(values.get("till_feed_unplaced_events"), Some(&0.0));
    let token = server.token("erp", "pos.events.read");
    let feed = server.get("/v1/events?limit=1000", &token).await;
    let last = feed.body["events"].as_array().unwrap().last().unwrap()["cursor"].clone();
    assert_eq!(
        head(&values).map(|head| head.to_string()),
        last.as_str().map(str::to_owned)
    );
    shop.server.stop().await;
}

/// The metric names docs/deploy.md's table documents.
fn documented_metrics() -> std::collections::BTreeSet<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let deploy = std::fs::read_to_string(root.join("docs/deploy.md")).unwrap();
    let section = deploy.split("## Metrics and the dashboard").nth(1).unwrap();
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter(|line| line.starts_with("| `"))
        .flat_map(|line| line.split('|').nth(1).unwrap().split('`').skip(1).step_by(2))
        .map(str::to_owned)
        .collect()
}

/// Every family `/metrics` shows is documented, and the Grafana dashboard queries no name the
/// documentation (and so the node) does not have.
async fn the_metrics_and_the_dashboard_use_only_documented_names(engine: Engine) {
    let documented = documented_metrics();
    let shop = Shop::open(engine).await;
    let sale = shop.sale("t1", vec![line("l1", ("Mug", 1450, 20.0), 1)], 1450);
    assert_eq!(shop.finalize(&sale).await.status, 201);
    let metrics = shop.server.call(Method::GET, "/metrics", None, None).await;
    let families: Vec<&str> = metrics
        .text
        .lines()
        .filter_map(|line| line.strip_prefix("# TYPE "))
        .filter_map(|family| family.split(' ').next())
        .collect();
    assert!(families.contains(&"till_sale_commits_total"));
    for family in families {
        assert!(documented.contains(family), "{family} is not in docs/deploy.md");
    }

    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("deploy/grafana-dashboard.json")).unwrap()).unwrap();
    let mut queried = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"].as_str().unwrap();
            for word in expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                if word.starts_with("till_") || word.starts_with("process_") {
                    queried.push(word.to_owned());
                }
            }
        }
    }
    assert!(queried.len() >= 20, "{queried:?}");
    for name in queried {
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix).filter(|base| documented.contains(*base)))
            .unwrap_or(&name);
        assert!(
            documented.contains(family),
            "the dashboard queries {name}, which is not documented"
        );
    }
    shop.server.stop().await;
}

/// With a metrics token set, `/metrics` answers that bearer token alone.
async fn the_metrics_token_guards_the_metrics(engine: Engine) {
    let server = TestServer::start_with(engine, |config| {
        config.metrics_token = Some("scrape-me-7f3a".to_owned())
    })
    .await;
    let without = server.call(Method::GET, "/metrics", None, None).await;
    without.assert_error(401, "UNAUTHORIZED");
    assert_eq!(without.headers["www-authenticate"], "Bearer");
    assert!(!without.text.contains("till_http_requests_total"));
    for wrong in ["scrape-me-7f3b", "scrape-me", &server.admin()] {
        let reply = server.call(Method::GET, "/metrics", Some(wrong), None).await;
        reply.assert_error(401, "UNAUTHORIZED");
    }
    let with = server.call(Method::GET, "/metrics", Some("scrape-me-7f3a"), None).await;
    assert_eq!(with.status, 200, "{}", with.text);
    assert!(with.text.contains("till_http_requests_total{"), "{}", with.text);
    // The rest of the operations stays open.
    let health = server.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(health.status, 200);
    server.stop().await;
}

async fn the_configured_fiscal_key_signs_the_journal(engine: Engine) {
    let pem_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ec-private.pem");
    let key = till_core::fiscal::FiscalKey::from_pkcs8_pem(&std::fs::read_to_string(&pem_path).unwrap()).unwrap();
    let shop = Shop::open_with(engine, |config| config.fiscal_key_file = Some(pem_path)).await;
    assert_eq!(
        shop.finalize(&shop.sale("t1", vec![line("l1", ("Mug", 1450, 20.0), 1)], 1450))
            .await
            .status,
        201
    );
    let keys = shop.server.call(Method::GET, "/v1/fiscal/keys", None, None).await;
    assert_eq!(keys.body["keys"][0]["kid"], json!(key.key_id()));
    assert_eq!(shop.verify("r1").await["ok"], true);
    shop.server.stop().await;
}

/// The README's first sale, run against the demo data: it must keep working as documented.
async fn the_demo_sells_the_readme_first_sale(engine: Engine) {
    let server = TestServer::start(engine).await;
    let session = till::demo::seed(server.state(), server.store(), &server.config)
        .await
        .expect("demo data loads");
    let sale = body_of(&till::demo::first_sale_command(), &session.session_id);
    let reply = server.post("/v1/checkout/finalize", &session.token, sale).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(reply.body["transaction"]["totals"]["total"], 1710);
    // The demo's promotion: three baguettes for the price of two.
    let price = json!({"storeId": "paris-marais", "cart": {"freeLineSequence": 0, "lines": [
        {"id": "l1", "skuId": till::demo::sku_id("Baguette tradition").as_str(), "quantity": 3, "unitPrice": 130, "vatRate": 5.5, "free": false}]}});
    let quote = server.post("/v1/checkout/price", &session.token, price).await;
    assert_eq!(quote.body["totals"]["total"], 260, "{}", quote.text);
    // Seeding again (a restart) keeps the data and the session it printed.
    let again = till::demo::seed(server.state(), server.store(), &server.config)
        .await
        .expect("seeding twice works");
    assert_eq!(again, session);
    server.stop().await;
}

/// The body a README `curl -d '...'` command sends, in the session `session_id`.
fn body_of(command: &str, session_id: &str) -> serde_json::Value {
    let body = command
        .split("-d '")
        .nth(1)
        .and_then(|rest| rest.rsplit_once('\''))
        .map(|(json, _)| json)
        .unwrap();
    let body = body.replace("'$TILL_SESSION'", session_id);
    serde_json::from_str(&body).expect("the README's body is JSON")
}

/// The README's sale paid with the demo's gift card and its regular customer's points; a
/// restart keeps what they spent instead of issuing and enrolling them again.
async fn the_demo_sells_the_readme_sale_paid_with_a_gift_card_and_points(engine: Engine) {
    use till::demo::{GIFT_CARD, GIFT_CARD_CENTS, REGULAR_CUSTOMER, REGULAR_CUSTOMER_POINTS};
    let server = TestServer::start(engine).await;
    let session = till::demo::seed(server.state(), server.store(), &server.config)
        .await
        .expect("demo data loads");
    let card_path = format!("/v1/gift-cards/{GIFT_CARD}");
    let points_path = format!("/v1/customers/{REGULAR_CUSTOMER}/loyalty");
    let card = server.get(&card_path, &session.token).await;
    assert_eq!(card.body["balanceCents"], GIFT_CARD_CENTS, "{}", card.text);
    let points = server.get(&points_path, &server.admin()).await;
    assert_eq!(points.body["points"], REGULAR_CUSTOMER_POINTS, "{}", points.text);

    let command = till::demo::stored_value_sale_command();
    assert!(
        include_str!("../../../../README.md").contains(&command),
        "the README shows the command as the demo prints it"
    );
    let sale = body_of(&command, &session.session_id);
    let reply = server.post("/v1/checkout/finalize", &session.token, sale).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(reply.body["transaction"]["totals"]["total"], 4170);
    // 30.00 from the card, 1170 points; the 30.00 not paid with points earn 30.
    let left_on_card = GIFT_CARD_CENTS - 3000;
    let points_left = i64::from(REGULAR_CUSTOMER_POINTS) - 1170 + 30;
    let card = server.get(&card_path, &session.token).await;
    assert_eq!(card.body["balanceCents"], left_on_card, "{}", card.text);
    assert_eq!(
        card.body["activities"][1]["transactionId"], "demo-0003",
        "{}",
        card.text
    );
    let points = server.get(&points_path, &server.admin()).await;
    assert_eq!(points.body["points"], points_left, "{}", points.text);
    let customer = till_core::ids::CustomerId::parse(REGULAR_CUSTOMER).unwrap();
    let ledger = server.store().loyalty_ledger(&customer).await.unwrap();
    assert_eq!(ledger.iter().map(|(_, points)| points).sum::<i64>(), points_left);

    till::demo::seed(server.state(), server.store(), &server.config)
        .await
        .expect("seeding twice works");
    let card = server.get(&card_path, &session.token).await;
    assert_eq!(card.body["balanceCents"], left_on_card, "{}", card.text);
    let points = server.get(&points_path, &server.admin()).await;
    assert_eq!(points.body["points"], points_left, "{}", points.text);
    server.stop().await;
}

#[tokio::test]
async fn a_fiscal_key_file_that_is_not_a_key_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("key.pem");
    std::fs::write(&bad, "not a key").unwrap();
    let config = till::config::Config {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.path().to_path_buf(),
        fiscal_key_file: Some(bad),
        ..till::config::Config::default()
    };
    let clock = std::sync::Arc::new(till_api::SystemClock);
    let error = till::server::start(&config, clock)
        .await
        .err()
        .expect("refuses to start");
    assert!(format!("{error:#}").contains("is not a P-256 key"), "{error:#}");
}

/// PostgreSQL restarted, or a proxy cut the node's idle connections: once they have sat idle
/// for a moment, the next request is served on fresh ones instead of failing on a dead one.
#[tokio::test]
#[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
async fn a_node_serves_again_after_its_idle_database_connections_were_cut() {
    if !Engine::Postgres.enabled() {
        return;
    }
    use sqlx::{Connection, Executor};
    let server = TestServer::start(Engine::Postgres).await;
    server.provision_store("s1").await;
    let before = server.get("/v1/stores/s1", &server.admin()).await;
    assert_eq!(before.status, 200);

    let mut admin = sqlx::PgConnection::connect(&server.config.database_url())
        .await
        .unwrap();
    let cut = admin
        .fetch_one(
            "SELECT COUNT(pg_terminate_backend(pid)) AS cut FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        .await
        .unwrap();
    assert!(sqlx::Row::get::<i64, _>(&cut, "cut") > 0, "the node held connections");
    let _ = admin.close().await;
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;

    let after = server.get("/v1/stores/s1", &server.admin()).await;
    assert_eq!(after.status, 200, "{}", after.text);
    assert_eq!(after.body, before.body);
    server.stop().await;
}

on_both_engines!(
    health_readiness_and_metrics_answer_without_credentials,
    made_up_methods_and_paths_add_no_metrics_series,
    the_metrics_token_guards_the_metrics,
    the_metrics_describe_the_node_its_database_and_its_build,
    the_metrics_and_the_dashboard_use_only_documented_names,
    the_configured_fiscal_key_signs_the_journal,
    the_demo_sells_the_readme_first_sale,
    the_demo_sells_the_readme_sale_paid_with_a_gift_card_and_points,
);
