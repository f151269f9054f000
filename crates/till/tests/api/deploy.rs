//! Rolling deploys: nodes of two releases share one database while the new one rolls out.

use crate::harness::{Engine, TestServer};
use crate::harness::{Shop, line};
use crate::on_both_engines;
use serde_json::json;
use sqlx::Connection;

const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);

/// A node of the previous release restarts after the next release migrated the database:
/// it starts, answers ready, and books sales.
async fn a_node_of_the_previous_release_restarts_on_a_newer_schema(engine: Engine) {
    let shared = tempfile::tempdir().unwrap();
    let shop = Shop::open_with(engine, |c| {
        if engine == Engine::Sqlite {
            c.database_url = Some(format!("sqlite://{}", shared.path().join("till.db").display()));
        }
    })
    .await;
    let sale = shop.sale("t1", vec![line("l1", MUG, 1)], 1450);
    assert_eq!(shop.finalize(&sale).await.status, 201);
    let url = shop.server.config.database_url();
    let (session, till) = (shop.session.clone(), shop.till.clone());
    shop.server.stop().await;

    // What the next release's first node leaves behind: one more applied migration.
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&url).await.unwrap();
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(99_999_i64)
    .bind("a migration of the next release")
    .bind(true)
    .bind(vec![0_u8; 48])
    .bind(0_i64)
    .execute(&mut conn)
    .await
    .unwrap();
    conn.close().await.unwrap();

    let server = TestServer::start_with(engine, |c| c.database_url = Some(url)).await;
    let ready = server.call(reqwest::Method::GET, "/readyz", None, None).await;
    assert_eq!(ready.status, 200, "{}", ready.text);
    let shop = Shop { server, session, till };
    let reply = shop.finalize(&shop.sale("t2", vec![line("l1", MUG, 1)], 1450)).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(shop.stock(MUG).await, -2);
    let verdict = shop
        .server
        .get("/v1/fiscal/registers/r1/verify", &shop.server.admin())
        .await;
    assert_eq!(verdict.body["ok"], json!(true), "{}", verdict.text);
    shop.server.stop().await;
}

on_both_engines!(a_node_of_the_previous_release_restarts_on_a_newer_schema);

/// The data directory and every file the service creates in it are open to the service's user
/// alone: the database holds PIN hashes and customer identifiers, the demo's secret mints
/// admin tokens, the fiscal key seals the journal.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(till_test_without_sqlite, ignore = "SQLite is not among TILL_TEST_ENGINES")]
async fn the_data_directory_is_private() {
    use std::os::unix::fs::PermissionsExt;
    if !Engine::Sqlite.enabled() {
        return;
    }
    let parent = tempfile::tempdir().unwrap();
    let data = parent.path().join("till-data");
    let shop = Shop::open_with(Engine::Sqlite, |c| {
        c.data_dir = data.clone();
        c.database_url = None;
    })
    .await;
    assert_eq!(
        shop.finalize(&shop.sale("t1", vec![line("l1", MUG, 1)], 1450))
            .await
            .status,
        201
    );
    let secret = till::demo::dev_secret(&data).unwrap();
    assert_eq!(
        till::demo::dev_secret(&data).unwrap(),
        secret,
        "read back, not drawn again"
    );
    let mode = |name: &str| {
        let path = data.join(name);
        std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(""), 0o700, "the data directory");
    for file in [
        "till.db",
        "till.db-wal",
        "till.db-shm",
        "fiscal-key.pem",
        "dev-jwt-secret",
    ] {
        assert_eq!(mode(file), 0o600, "{file}");
    }
    shop.server.stop().await;
}
