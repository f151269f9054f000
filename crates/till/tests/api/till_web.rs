//! The till in the browser (`/till`): the page and each of its files with their type and
//! cache headers, a policy that lets the page reach its own origin only, a service worker
//! allowed to control `/till`, and a plain 404 for anything else under `/till`.

use crate::harness::{Engine, TestServer};
use crate::on_both_engines;
use reqwest::StatusCode;
use reqwest::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH, LOCATION};

on_both_engines!(
    the_page_loads_its_script_and_style_by_version_under_a_strict_policy,
    each_file_has_its_type_and_cache_headers,
    a_file_the_browser_holds_is_not_sent_again,
    the_service_worker_may_control_the_page_and_keeps_the_shell,
    the_trailing_slash_leads_to_the_page_and_other_addresses_are_not_found,
    the_till_is_not_part_of_the_api_document,
);

fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

async fn get(server: &TestServer, path: &str) -> reqwest::Response {
    browser()
        .get(format!("{}{path}", server.base))
        .send()
        .await
        .expect("sent")
}

fn header(response: &reqwest::Response, name: impl reqwest::header::AsHeaderName) -> String {
    response
        .headers()
        .get(name)
        .map(|value| value.to_str().expect("text").to_owned())
        .unwrap_or_default()
}

/// The `?v=` the page names `file` with.
fn version_in(page: &str, file: &str) -> String {
    let start = page
        .find(&format!("/till/{file}?v="))
        .unwrap_or_else(|| panic!("the page names {file}: {page}"))
        + format!("/till/{file}?v=").len();
    page[start..].chars().take_while(|c| c.is_ascii_hexdigit()).collect()
}

fn assert_strict_policy(response: &reqwest::Response, what: &str) {
    let policy = header(response, "content-security-policy");
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "worker-src 'self'",
        "manifest-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ] {
        assert!(policy.contains(directive), "{what}: {directive} in {policy}");
    }
    assert!(
        !policy.contains("unsafe-inline") && !policy.contains("unsafe-eval") && !policy.contains('*'),
        "{what}: {policy}"
    );
    assert_eq!(header(response, "x-content-type-options"), "nosniff", "{what}");
    assert_eq!(header(response, "x-frame-options"), "DENY", "{what}");
}

async fn the_page_loads_its_script_and_style_by_version_under_a_strict_policy(engine: Engine) {
    let server = TestServer::start(engine).await;
    let response = get(&server, "/till").await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(&response, CONTENT_TYPE), "text/html; charset=utf-8");
    assert_eq!(
        header(&response, CACHE_CONTROL),
        "no-cache",
        "the page is asked again each time"
    );
    assert!(!header(&response, ETAG).is_empty());
    assert_strict_policy(&response, "the page");
    let page = response.text().await.expect("body");
    assert!(page.starts_with("<!doctype html>"), "{page}");
    assert!(
        page.contains(r#"<link rel="manifest" href="/till/manifest.webmanifest">"#),
        "{page}"
    );
    assert!(page.contains(r#"<script type="module" src="/till/app.js?v="#), "{page}");
    // Nothing inline and nothing from elsewhere: the policy would refuse it.
    assert!(
        !page.contains("<script>") && !page.contains("style=") && !page.contains("http"),
        "{page}"
    );
    for file in ["app.js", "app.css"] {
        let version = version_in(&page, file);
        assert_eq!(version.len(), 16, "{file}: {version}");
        let asset = get(&server, &format!("/till/{file}?v={version}")).await;
        assert_eq!(asset.status(), StatusCode::OK, "{file}");
        assert_eq!(
            header(&asset, CACHE_CONTROL),
            "public, max-age=31536000, immutable",
            "{file} named by its version is kept"
        );
        assert_eq!(
            header(&asset, ETAG),
            format!("\"{version}\""),
            "{file}: the version is the content's"
        );
    }
}

async fn each_file_has_its_type_and_cache_headers(engine: Engine) {
    let server = TestServer::start(engine).await;
    let files = [
        ("/till/app.js", "text/javascript; charset=utf-8", "no-cache"),
        (
            "/till/app.js?v=0000000000000000",
            "text/javascript; charset=utf-8",
            "no-cache",
        ),
        ("/till/app.css", "text/css; charset=utf-8", "no-cache"),
        ("/till/sw.js", "text/javascript; charset=utf-8", "no-cache"),
        ("/till/manifest.webmanifest", "application/manifest+json", "no-cache"),
        ("/till/icon.svg", "image/svg+xml", "public, max-age=86400"),
        ("/till/icon-192.png", "image/png", "public, max-age=86400"),
        ("/till/icon-512.png", "image/png", "public, max-age=86400"),
    ];
    for (path, content_type, cache) in files {
        let response = get(&server, path).await;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        assert_eq!(header(&response, CONTENT_TYPE), content_type, "{path}");
        assert_eq!(header(&response, CACHE_CONTROL), cache, "{path}");
        assert_strict_policy(&response, path);
        let bytes = response.bytes().await.expect("body");
        assert!(!bytes.is_empty(), "{path}");
        if content_type == "image/png" {
            assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "{path}");
        }
    }
    let manifest: serde_json::Value = get(&server, "/till/manifest.webmanifest")
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(manifest["start_url"], "/till");
    assert_eq!(manifest["display"], "standalone");
    let icons = manifest["icons"].as_array().expect("icons");
    for icon in icons {
        let src = icon["src"].as_str().expect("src");
        assert_eq!(get(&server, src).await.status(), StatusCode::OK, "{src}");
    }
    assert!(icons.iter().any(|icon| icon["sizes"] == "512x512"), "{manifest}");
}

async fn a_file_the_browser_holds_is_not_sent_again(engine: Engine) {
    let server = TestServer::start(engine).await;
    for path in ["/till", "/till/sw.js", "/till/app.css"] {
        let first = get(&server, path).await;
        let etag = header(&first, ETAG);
        let again = browser()
            .get(format!("{}{path}", server.base))
            .header(IF_NONE_MATCH, &etag)
            .send()
            .await
            .expect("sent");
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED, "{path}");
        assert_eq!(header(&again, ETAG), etag, "{path}");
        let other = browser()
            .get(format!("{}{path}", server.base))
            .header(IF_NONE_MATCH, "\"0000000000000000\"")
            .send()
            .await
            .expect("sent");
        assert_eq!(other.status(), StatusCode::OK, "{path}: another version is sent whole");
    }
}

async fn the_service_worker_may_control_the_page_and_keeps_the_shell(engine: Engine) {
    let server = TestServer::start(engine).await;
    let page = get(&server, "/till").await.text().await.expect("page");
    let response = get(&server, "/till/sw.js").await;
    assert_eq!(header(&response, "service-worker-allowed"), "/till");
    let worker = response.text().await.expect("worker");
    for file in ["app.js", "app.css"] {
        let named = format!("/till/{file}?v={}", version_in(&page, file));
        assert!(worker.contains(&named), "the worker keeps {named}");
    }
    for file in ["/till/manifest.webmanifest", "/till/icon.svg", "\"/till\""] {
        assert!(worker.contains(file), "the worker keeps {file}");
    }
}

async fn the_trailing_slash_leads_to_the_page_and_other_addresses_are_not_found(engine: Engine) {
    let server = TestServer::start(engine).await;
    let response = get(&server, "/till/").await;
    assert_eq!(response.status(), StatusCode::PERMANENT_REDIRECT);
    assert_eq!(header(&response, LOCATION), "/till");
    for path in [
        "/till/nothing.js",
        "/till/index.html",
        "/till/app.js/more",
        "/till/assets/app.js",
        "/till/..%2fCargo.toml",
    ] {
        let response = get(&server, path).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        assert_eq!(header(&response, CACHE_CONTROL), "no-store", "{path}");
        assert_strict_policy(&response, path);
    }
    let response = browser()
        .post(format!("{}/till", server.base))
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
}

async fn the_till_is_not_part_of_the_api_document(engine: Engine) {
    let server = TestServer::start(engine).await;
    let document: serde_json::Value = get(&server, "/v1/openapi.json").await.json().await.expect("json");
    let paths = document["paths"].as_object().expect("paths");
    assert!(
        paths.keys().all(|path| !path.starts_with("/till")),
        "no /till path in the document"
    );
}
