//! Barcodes on the catalog's articles (docs/stock.md): checked, one article each
//! whichever form is written or scanned, found by a scan.

use crate::harness::{Engine, TestServer, sku};
use crate::on_both_engines;
use serde_json::{Value, json};

/// A UPC-A, the same barcode as the EAN-13 `0036000291452` and the GTIN-14 `00036000291452`.
const UPC: &str = "036000291452";
const EAN: &str = "4006381333931";

fn article(name: &str, barcodes: Option<&[&str]>) -> Value {
    let mut body = json!({"name": name, "priceCents": 250, "vatRate": 20});
    if let Some(codes) = barcodes {
        body["barcodes"] = json!(codes);
    }
    body
}

async fn put(server: &TestServer, name: &str, barcodes: Option<&[&str]>) -> crate::harness::Reply {
    server
        .put(
            &format!("/v1/catalog/skus/{}", sku(name)),
            &server.admin(),
            article(name, barcodes),
        )
        .await
}

async fn scan(server: &TestServer, code: &str) -> crate::harness::Reply {
    server
        .get(&format!("/v1/catalog/barcodes/{code}"), &server.admin())
        .await
}

async fn a_barcode_finds_its_article_in_any_of_its_forms(engine: Engine) {
    let server = TestServer::start(engine).await;
    let created = put(&server, "Mug", Some(&[EAN, UPC])).await;
    assert_eq!(created.status, 201, "{}", created.text);
    assert_eq!(created.body["barcodes"], json!([EAN, UPC]), "as written, in order");
    for code in [EAN, UPC, "0036000291452", "00036000291452"] {
        let found = scan(&server, code).await;
        assert_eq!(found.status, 200, "{code}: {}", found.text);
        assert_eq!(found.body["skuId"], sku("Mug"), "{code}");
    }
    // A write without barcodes leaves them; one with a list replaces them.
    assert_eq!(put(&server, "Mug", None).await.body["barcodes"], json!([EAN, UPC]));
    assert_eq!(put(&server, "Mug", Some(&[UPC])).await.body["barcodes"], json!([UPC]));
    scan(&server, EAN).await.assert_error(404, "NOT_FOUND");
    // A valid barcode no article carries, and one that is not a barcode.
    scan(&server, "96385074").await.assert_error(404, "NOT_FOUND");
    let misread = scan(&server, "4006381333932").await;
    misread.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(misread.fields(), ["code"]);
    server.stop().await;
}

async fn wrong_and_repeated_barcodes_are_refused_on_their_field(engine: Engine) {
    let server = TestServer::start(engine).await;
    for (codes, field) in [
        (vec!["4006381333932"], "barcodes.0"),
        (vec![EAN, "12345"], "barcodes.1"),
        (vec![UPC, EAN, "0036000291452"], "barcodes.2"),
    ] {
        let reply = put(&server, "Mug", Some(&codes)).await;
        reply.assert_error(400, "VALIDATION_FAILED");
        assert_eq!(reply.fields(), [field], "{codes:?}");
    }
    assert_eq!(
        server
            .get(&format!("/v1/catalog/skus/{}", sku("Mug")), &server.admin())
            .await
            .status,
        404
    );
    server.stop().await;
}

async fn a_barcode_belongs_to_one_article(engine: Engine) {
    let server = TestServer::start(engine).await;
    assert_eq!(put(&server, "Mug", Some(&[UPC])).await.status, 201);
    // Another article claiming it, in another of its forms: refused, and nothing written.
    let refused = put(&server, "Cup", Some(&["0036000291452"])).await;
    refused.assert_error(409, "CONFLICT");
    assert!(refused.text.contains(&sku("Mug")), "{}", refused.text);
    assert_eq!(
        server
            .get(&format!("/v1/catalog/skus/{}", sku("Cup")), &server.admin())
            .await
            .status,
        404
    );
    // Two articles of one import claiming one barcode: the import is refused whole.
    let import = json!({"skus": [
        {"skuId": sku("Plate"), "name": "Plate", "priceCents": 900, "vatRate": 20, "barcodes": [EAN]},
        {"skuId": sku("Bowl"), "name": "Bowl", "priceCents": 700, "vatRate": 20, "barcodes": ["04006381333931"]},
    ]});
    server
        .post("/v1/catalog/import", &server.admin(), import)
        .await
        .assert_error(409, "CONFLICT");
    assert_eq!(
        server
            .get(&format!("/v1/catalog/skus/{}", sku("Plate")), &server.admin())
            .await
            .status,
        404
    );
    // Taken off the first article, it can go on another, in the same import.
    let import = json!({"skus": [
        {"skuId": sku("Mug"), "name": "Mug", "priceCents": 250, "vatRate": 20, "barcodes": []},
        {"skuId": sku("Cup"), "name": "Cup", "priceCents": 300, "vatRate": 20, "barcodes": [UPC]},
    ]});
    let moved = server.post("/v1/catalog/import", &server.admin(), import).await;
    assert_eq!(moved.status, 200, "{}", moved.text);
    assert_eq!(scan(&server, UPC).await.body["skuId"], sku("Cup"));
    server.stop().await;
}

on_both_engines!(
    a_barcode_finds_its_article_in_any_of_its_forms,
    wrong_and_repeated_barcodes_are_refused_on_their_field,
    a_barcode_belongs_to_one_article,
);
