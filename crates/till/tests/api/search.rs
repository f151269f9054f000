//! The catalog search (docs/stock.md): `GET /v1/catalog/skus?q=` finds an article by a
//! barcode or by the words of its name, folded for case and accents, a page at a time; and
//! `till catalog import`, the streaming import of a catalog file.

use crate::harness::{Engine, Reply, TestServer, sku};
use crate::on_both_engines;
use serde_json::{Value, json};

const EAN: &str = "4006381333931";
/// The same barcode as the EAN-13 `0036000291452`.
const UPC: &str = "036000291452";

async fn put(server: &TestServer, name: &str, barcodes: &[&str]) {
    let body = json!({"name": name, "priceCents": 250, "vatRate": 20, "barcodes": barcodes});
    let reply = server
        .put(&format!("/v1/catalog/skus/{}", sku(name)), &server.admin(), body)
        .await;
    assert!(reply.status == 200 || reply.status == 201, "{}", reply.text);
}

/// `GET /v1/catalog/skus` with these query pairs.
async fn list(server: &TestServer, pairs: &[(&str, &str)]) -> Reply {
    let mut url = reqwest::Url::parse("http://till/v1/catalog/skus").unwrap();
    url.query_pairs_mut().extend_pairs(pairs);
    let path = format!("{}?{}", url.path(), url.query().unwrap_or_default());
    server.get(&path, &server.admin()).await
}

/// The names a search finds on its first page (of up to 500).
async fn found(server: &TestServer, q: &str) -> Vec<String> {
    let reply = list(server, &[("q", q), ("limit", "500")]).await;
    assert_eq!(reply.status, 200, "{q}: {}", reply.text);
    assert_eq!(reply.body["nextCursor"], Value::Null, "{q}");
    names(&reply)
}

fn names(reply: &Reply) -> Vec<String> {
    reply.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["name"].as_str().unwrap().to_owned())
        .collect()
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

async fn words_and_a_prefix_find_articles_whatever_their_case_and_accents(engine: Engine) {
    let server = TestServer::start(engine).await;
    for name in ["Crème brûlée vanille", "Crêpe au sucre", "Café crème", "Thé vert"] {
        put(&server, name, &[]).await;
    }
    assert_eq!(
        sorted(found(&server, "creme").await),
        ["Café crème", "Crème brûlée vanille"]
    );
    assert_eq!(found(&server, "CRÈME Bru").await, ["Crème brûlée vanille"]);
    assert_eq!(found(&server, "vanille, crem").await, ["Crème brûlée vanille"]);
    assert_eq!(
        sorted(found(&server, "cr").await),
        ["Café crème", "Crème brûlée vanille", "Crêpe au sucre"]
    );
    // Every word but the last must be whole.
    assert!(found(&server, "crem bru").await.is_empty());
    assert!(found(&server, "chocolat").await.is_empty());
    // A whole word with a prefix: the article must hold both.
    assert_eq!(found(&server, "creme caf").await, ["Café crème"]);
    server.stop().await;
}

async fn a_barcode_finds_the_article_carrying_it(engine: Engine) {
    let server = TestServer::start(engine).await;
    put(&server, "Mug", &[UPC]).await;
    put(&server, "Tasse 4006381333931", &[]).await;
    for code in [UPC, "0036000291452", "00036000291452"] {
        assert_eq!(found(&server, code).await, ["Mug"], "{code}");
    }
    // A barcode no article carries finds nothing, even in a name.
    assert!(found(&server, EAN).await.is_empty());
    // Digits that are not a barcode are a word.
    assert_eq!(found(&server, "400638").await, ["Tasse 4006381333931"]);
    server.stop().await;
}

async fn paging_through_a_broad_prefix_lists_each_match_once_in_order(engine: Engine) {
    let server = TestServer::start(engine).await;
    let mut skus = Vec::new();
    for n in 0..12 {
        // Both words start with "ch": the article is listed once.
        skus.push(json!({"skuId": sku(&format!("cc{n}")), "name": format!("Chocolat chaud {n}"), "priceCents": 300, "vatRate": 10}));
        skus.push(json!({"skuId": sku(&format!("cv{n}")), "name": format!("Chou vert {n}"), "priceCents": 200, "vatRate": 5.5}));
        skus.push(
            json!({"skuId": sku(&format!("t{n}")), "name": format!("Tarte {n}"), "priceCents": 400, "vatRate": 10}),
        );
    }
    let import = server
        .post("/v1/catalog/import", &server.admin(), json!({"skus": skus}))
        .await;
    assert_eq!(import.status, 200, "{}", import.text);
    for (q, expected) in [("ch", 24), ("chocolat ch", 12), ("c", 24)] {
        let whole = found(&server, q).await;
        assert_eq!(whole.len(), expected, "{q}");
        let mut paged = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut pairs = vec![("q", q), ("limit", "5")];
            if let Some(cursor) = &cursor {
                pairs.push(("cursor", cursor));
            }
            let page = list(&server, &pairs).await;
            assert_eq!(page.status, 200, "{q}: {}", page.text);
            assert!(names(&page).len() <= 5);
            paged.extend(names(&page));
            match page.body["nextCursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        assert_eq!(paged, whole, "{q}: the pages, in order, are the whole list");
        let mut distinct = paged.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), expected, "{q}: each match once");
    }
    // A cursor belongs to its search.
    let first = list(&server, &[("q", "ch"), ("limit", "5")]).await;
    let cursor = first.body["nextCursor"].as_str().unwrap();
    let elsewhere = list(&server, &[("q", "cho"), ("cursor", cursor)]).await;
    elsewhere.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(elsewhere.fields(), ["cursor"]);
    server.stop().await;
}

async fn a_rename_replaces_the_words_an_article_is_found_by(engine: Engine) {
    let server = TestServer::start(engine).await;
    put(&server, "Thé vert", &[]).await;
    let rename = json!({"name": "Tisane menthe", "priceCents": 250, "vatRate": 20});
    let renamed = server
        .put(
            &format!("/v1/catalog/skus/{}", sku("Thé vert")),
            &server.admin(),
            rename,
        )
        .await;
    assert_eq!(renamed.status, 200, "{}", renamed.text);
    assert!(found(&server, "the").await.is_empty());
    assert!(found(&server, "vert").await.is_empty());
    assert_eq!(found(&server, "tis").await, ["Tisane menthe"]);
    // An import renames the same way.
    let import = json!({"skus": [{"skuId": sku("Thé vert"), "name": "Thé noir", "priceCents": 250, "vatRate": 20}]});
    assert_eq!(
        server.post("/v1/catalog/import", &server.admin(), import).await.status,
        200
    );
    assert!(found(&server, "menthe").await.is_empty());
    assert_eq!(found(&server, "noir").await, ["Thé noir"]);
    server.stop().await;
}

async fn a_bad_search_is_refused_on_q(engine: Engine) {
    let server = TestServer::start(engine).await;
    put(&server, "Mug", &[]).await;
    let too_long = "a".repeat(101);
    for q in ["", "   ", "!?-", too_long.as_str()] {
        let reply = list(&server, &[("q", q)]).await;
        reply.assert_error(400, "VALIDATION_FAILED");
        assert_eq!(reply.fields(), ["q"], "{q:?}");
    }
    assert_eq!(found(&server, &"m".repeat(100)).await, Vec::<String>::new());
    let all = list(&server, &[]).await;
    assert_eq!(names(&all), ["Mug"]);
    server.stop().await;
}

/// Runs `till catalog import` on `lines` against the server's database.
fn import_file(server: &TestServer, lines: &[String]) -> (bool, String) {
    let path = server.config.data_dir.join("catalog.ndjson");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    server.run_till(&[std::ffi::OsStr::new("catalog"), "import".as_ref(), path.as_os_str()])
}

fn line(name: &str, price: i64) -> String {
    json!({"skuId": sku(name), "name": name, "priceCents": price, "vatRate": 20}).to_string()
}

async fn the_import_command_streams_a_file_and_stops_at_a_bad_line(engine: Engine) {
    let server = TestServer::start(engine).await;
    let mut lines = vec![line("Pain", 120), line("Beurre", 350)];
    lines.push(
        json!({"skuId": sku("Lait"), "name": "Lait entier", "priceCents": 99, "vatRate": 5.5, "barcodes": [EAN]})
            .to_string(),
    );
    let (ok, text) = import_file(&server, &lines);
    assert!(ok, "{text}");
    assert!(text.contains("3 created, 0 updated"), "{text}");
    assert_eq!(found(&server, EAN).await, ["Lait entier"]);
    assert_eq!(found(&server, "lait ent").await, ["Lait entier"]);
    // Again: the same articles, updated.
    lines[0] = line("Pain", 130);
    let (ok, text) = import_file(&server, &lines);
    assert!(ok, "{text}");
    assert!(text.contains("0 created, 3 updated"), "{text}");
    let pain = server
        .get(&format!("/v1/catalog/skus/{}", sku("Pain")), &server.admin())
        .await;
    assert_eq!(pain.body["priceCents"], 130);
    // Two lines of one article: refused as POST /v1/catalog/import refuses it, at the second.
    let (ok, text) = import_file(&server, &[line("Pain", 140), line("Pain", 150)]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("line 2: skuId appears more than once in the file (first on line 1)"),
        "{text}"
    );
    let pain = server
        .get(&format!("/v1/catalog/skus/{}", sku("Pain")), &server.admin())
        .await;
    assert_eq!(pain.body["priceCents"], 140);
    // A bad line stops the import there; the lines before it are written, none after.
    let bad = vec![
        line("Farine", 180),
        json!({"skuId": sku("Sel"), "name": "Sel", "priceCents": -5, "vatRate": 20}).to_string(),
        line("Sucre", 210),
    ];
    let (ok, text) = import_file(&server, &bad);
    assert!(!ok, "{text}");
    assert!(text.contains("line 2: priceCents"), "{text}");
    assert_eq!(found(&server, "farine").await, ["Farine"]);
    assert!(found(&server, "sel").await.is_empty());
    assert!(found(&server, "sucre").await.is_empty());
    let (ok, text) = import_file(&server, &["{not json".to_owned()]);
    assert!(!ok && text.contains("line 1: is not a JSON object"), "{text}");
    // A chunk the database refuses (a barcode another article keeps) is written not at all.
    let taken = vec![
        line("Miel", 600),
        json!({"skuId": sku("Confiture"), "name": "Confiture", "priceCents": 450, "vatRate": 5.5, "barcodes": [EAN]})
            .to_string(),
    ];
    let (ok, text) = import_file(&server, &taken);
    assert!(!ok, "{text}");
    assert!(text.contains("lines 1 to 2"), "{text}");
    assert!(found(&server, "miel").await.is_empty());
    assert_eq!(found(&server, EAN).await, ["Lait entier"]);
    server.stop().await;
}

/// Runs `till catalog import FILE` on the server's database: its exit code (`None` when a
/// signal ended it) and what it printed.
fn import_path(server: &TestServer, path: &std::path::Path) -> (Option<i32>, String) {
    let output = crate::harness::till_command()
        .args([std::ffi::OsStr::new("catalog"), "import".as_ref(), path.as_os_str()])
        .env_remove("TILL_CONFIG")
        .env("TILL_DATABASE_URL", server.config.database_url())
        .env("TILL_DATA_DIR", &server.config.data_dir)
        .env("TILL_LOG", "error")
        .output()
        .expect("the till binary runs");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code(), printed)
}

/// A line with no end is refused at its length, not read until the process dies; a barcode
/// on two articles of the file is refused as the API refuses it, wherever the two lines are.
async fn the_import_command_bounds_a_line_and_refuses_a_key_given_twice(engine: Engine) {
    let server = TestServer::start(engine).await;
    let (code, text) = import_path(&server, std::path::Path::new("/dev/zero"));
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("line 1: is longer than 65536 bytes"), "{text}");
    assert!(text.contains("after writing 0 articles"), "{text}");

    let path = server.config.data_dir.join("catalog.ndjson");
    let long = json!({"skuId": sku("Long"), "name": "x".repeat(70_000), "priceCents": 1, "vatRate": 20});
    std::fs::write(
        &path,
        format!("{}\n{long}\n{}\n", line("Farine", 180), line("Sucre", 210)),
    )
    .unwrap();
    let (code, text) = import_path(&server, &path);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("line 2: is longer than 65536 bytes"), "{text}");
    assert_eq!(found(&server, "farine").await, ["Farine"]);
    assert!(found(&server, "sucre").await.is_empty());

    // One barcode on two articles, far apart, in two of its forms.
    let mut lines = vec![
        json!({"skuId": sku("Lait"), "name": "Lait", "priceCents": 99, "vatRate": 5.5, "barcodes": ["0036000291452"]})
            .to_string(),
    ];
    lines.extend((0..50).map(|n| line(&format!("Article {n}"), 100 + n)));
    lines.push(
        json!({"skuId": sku("Yaourt"), "name": "Yaourt", "priceCents": 150, "vatRate": 5.5, "barcodes": [EAN, UPC]})
            .to_string(),
    );
    let (ok, text) = import_file(&server, &lines);
    assert!(!ok, "{text}");
    assert!(
        text.contains("line 52: barcodes.1 is also a barcode of the article on line 1"),
        "{text}"
    );
    assert!(found(&server, "yaourt").await.is_empty());
    assert_eq!(found(&server, UPC).await, ["Lait"]);
    server.stop().await;
}

/// Two writes of one new article at once both succeed, one creating it and the other
/// replacing it (on PostgreSQL the second finds the first's row on the key and runs again), and
/// the article has the words of one name.
async fn two_writes_of_one_new_article_at_once_both_succeed(engine: Engine) {
    let started = TestServer::start(engine).await;
    let server = &started;
    for round in 0..5 {
        let id = sku(&format!("Article {round}"));
        let write = |name: String| {
            let body = json!({"name": name, "priceCents": 250, "vatRate": 20});
            let path = format!("/v1/catalog/skus/{id}");
            async move { server.put(&path, &server.admin(), body).await }
        };
        let (first, second) = tokio::join!(write(format!("Pomme {round}")), write(format!("Poire {round}")));
        let mut statuses = [first.status, second.status];
        statuses.sort();
        assert_eq!(statuses, [200, 201], "{} / {}", first.text, second.text);
        let stored = server.get(&format!("/v1/catalog/skus/{id}"), &server.admin()).await;
        let name = stored.body["name"].as_str().unwrap().to_owned();
        let pomme = found(server, &format!("pomme {round}")).await;
        let poire = found(server, &format!("poire {round}")).await;
        assert_eq!([pomme, poire].concat(), [name], "round {round}");
    }
    started.stop().await;
}

on_both_engines!(
    the_import_command_bounds_a_line_and_refuses_a_key_given_twice,
    words_and_a_prefix_find_articles_whatever_their_case_and_accents,
    a_barcode_finds_the_article_carrying_it,
    paging_through_a_broad_prefix_lists_each_match_once_in_order,
    a_rename_replaces_the_words_an_article_is_found_by,
    a_bad_search_is_refused_on_q,
    the_import_command_streams_a_file_and_stops_at_a_bad_line,
    two_writes_of_one_new_article_at_once_both_succeed,
);
