//! What a till's session token reads: the sales, receipts and register sessions of its own
//! store, another store's being as unknown to it as what does not exist; a back-office token
//! reads every store's. And what a browser may do with an HTML receipt.

use crate::harness::Engine;
use crate::harness::{Shop, line};
use crate::on_both_engines;
use serde_json::{Value, json};

on_both_engines!(
    a_till_reads_the_sales_and_sessions_of_its_own_store_only,
    the_html_receipt_runs_no_script_and_loads_nothing,
);

const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);

/// The transaction ids of a page of sales, or the session ids of a page of sessions.
fn ids(page: &Value, key: &str) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap_or_else(|| panic!("a page: {page}"))
        .iter()
        .map(|item| item[key].as_str().unwrap().to_owned())
        .collect()
}

async fn a_till_reads_the_sales_and_sessions_of_its_own_store_only(engine: Engine) {
    let shop = Shop::open(engine).await;
    let server = &shop.server;
    let admin = server.admin();
    server.provision_store("s2").await;
    let (lyon_session, lyon_till) = server.open_session("s2", "r2", "mathis", "9876").await;
    assert_eq!(
        shop.finalize(&shop.sale("paris-1", vec![line("l1", MUG, 1)], 1450))
            .await
            .status,
        201
    );
    let mut lyon_sale = shop.sale("lyon-1", vec![line("l1", MUG, 1)], 1450);
    lyon_sale["storeId"] = json!("s2");
    lyon_sale["sellerId"] = json!("mathis");
    lyon_sale["sessionId"] = json!(lyon_session);
    let sold = shop.finalize_as(&lyon_till, &lyon_sale).await;
    assert_eq!(sold.status, 201, "{}", sold.text);

    // A sale of another store, read by its id: as if it did not exist.
    let paris = &shop.till;
    for path in [
        "/v1/sales/lyon-1",
        "/v1/sales/lyon-1/receipt",
        "/v1/sales/lyon-1/receipt?format=html",
    ] {
        server.get(path, paris).await.assert_error(404, "NOT_FOUND");
        assert_eq!(server.get(path, &lyon_till).await.status, 200, "{path}");
    }
    let unknown = server.get("/v1/sales/nowhere-1", paris).await;
    let other = server.get("/v1/sales/lyon-1", paris).await;
    assert_eq!(other.body, unknown.body, "the same answer as for no sale at all");
    assert_eq!(server.get("/v1/sales/paris-1", paris).await.status, 200);

    // Nor can it print it, and the refused print counts none: Lyon's till printed it once.
    let prints = "/v1/sales/lyon-1/prints";
    server
        .post(prints, paris, json!({}))
        .await
        .assert_error(404, "NOT_FOUND");
    assert_eq!(server.post(prints, &lyon_till, json!({})).await.status, 201);
    let shown = server.get("/v1/sales/lyon-1/receipt", &admin).await;
    assert_eq!(shown.headers["x-till-prints"], "1", "{}", shown.text);

    // Lists: narrowed to the till's store, empty when it asks for another.
    let listed = server.get("/v1/sales", paris).await;
    assert_eq!(ids(&listed.body, "transactionId"), ["paris-1"], "{}", listed.text);
    let asked = server.get("/v1/sales?storeId=s2", paris).await;
    assert_eq!(asked.status, 200, "{}", asked.text);
    assert_eq!(asked.body, json!({"items": [], "nextCursor": null}));
    let own = server.get("/v1/sales?storeId=s1&limit=1", paris).await;
    assert_eq!(ids(&own.body, "transactionId"), ["paris-1"]);
    let mut everything = ids(&server.get("/v1/sales", &admin).await.body, "transactionId");
    everything.sort();
    assert_eq!(everything, ["lyon-1", "paris-1"]);

    let sessions = server.get("/v1/register-sessions", paris).await;
    assert_eq!(
        ids(&sessions.body, "sessionId"),
        [shop.session.as_str()],
        "{}",
        sessions.text
    );
    let asked = server.get("/v1/register-sessions?storeId=s2&open=true", paris).await;
    assert_eq!(asked.body, json!({"items": [], "nextCursor": null}), "{}", asked.text);
    server
        .get(&format!("/v1/register-sessions/{lyon_session}"), paris)
        .await
        .assert_error(404, "NOT_FOUND");
    let own = server
        .get(&format!("/v1/register-sessions/{}", shop.session), paris)
        .await;
    assert_eq!(own.status, 200, "{}", own.text);
    let all = server.get("/v1/register-sessions", &admin).await;
    assert_eq!(ids(&all.body, "sessionId").len(), 2, "{}", all.text);
    assert_eq!(
        server
            .get(&format!("/v1/register-sessions/{lyon_session}"), &admin)
            .await
            .status,
        200
    );
    shop.server.stop().await;
}

/// The HTML receipt carries a policy that lets it show its own inline style and nothing else:
/// no script, nothing fetched from elsewhere. Its text comes from tills and staff.
async fn the_html_receipt_runs_no_script_and_loads_nothing(engine: Engine) {
    let shop = Shop::open(engine).await;
    let sold = shop.finalize(&shop.sale("t1", vec![line("l1", MUG, 1)], 1450)).await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    let html = shop.server.get("/v1/sales/t1/receipt?format=html", &shop.till).await;
    assert_eq!(html.status, 200, "{}", html.text);
    assert!(html.text.contains("<style>"), "the receipt styles itself inline");
    let policy = html.headers["content-security-policy"].to_str().unwrap();
    let directives: Vec<&str> = policy.split(';').map(str::trim).collect();
    assert!(directives.contains(&"default-src 'none'"), "{policy}");
    assert!(directives.contains(&"base-uri 'none'"), "{policy}");
    assert!(directives.contains(&"form-action 'none'"), "{policy}");
    assert!(!policy.contains("script-src"), "no script of any kind: {policy}");
    let style = directives
        .iter()
        .find(|d| d.starts_with("style-src "))
        .unwrap_or_else(|| panic!("{policy}"));
    for source in style.split_whitespace().skip(1) {
        assert!(
            ["'self'", "'unsafe-inline'"].contains(&source),
            "styles inline or from this origin only: {policy}"
        );
    }
    assert_eq!(html.headers["x-content-type-options"], "nosniff");
    shop.server.stop().await;
}
