//! The console in the browser's place: signing in sets a cookie no script can read and no
//! other site sends, pages refuse plainly without sign-in or scope, a form that writes needs
//! its token and this origin (and changes nothing otherwise), and today's figures are the
//! sales report's.

use crate::harness::{Engine, TestServer};
use crate::on_both_engines;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, COOKIE, LOCATION, ORIGIN, SET_COOKIE};
use serde_json::json;

on_both_engines!(
    signing_in_sets_an_http_only_same_site_cookie_and_pages_allow_no_script,
    a_bad_token_or_no_cookie_leads_back_to_the_sign_in_page,
    a_token_without_a_pages_scope_sees_a_refusal_naming_it,
    a_form_that_writes_needs_its_token_and_this_origin,
    todays_figures_are_the_sales_reports,
    the_stock_page_shows_the_latest_movements,
    an_unknown_console_page_is_a_page_with_the_consoles_headers,
    signing_out_keeps_a_copied_cookie_out,
);

/// A browser that follows no redirect, so that each answer can be checked.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

struct Page {
    status: StatusCode,
    headers: reqwest::header::HeaderMap,
    html: String,
}

async fn read(response: reqwest::Response) -> Page {
    Page {
        status: response.status(),
        headers: response.headers().clone(),
        html: response.text().await.expect("body"),
    }
}

async fn sign_in(server: &TestServer, token: &str) -> Page {
    let response = browser()
        .post(format!("{}/console/sign-in", server.base))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(format!("token={token}"))
        .send()
        .await
        .expect("sent");
    read(response).await
}

async fn open(server: &TestServer, path: &str, token: &str) -> Page {
    let response = browser()
        .get(format!("{}{path}", server.base))
        .header(COOKIE, format!("till_console={token}"))
        .send()
        .await
        .expect("sent");
    read(response).await
}

/// Posts a form the way a browser of this origin does, with `fields` urlencoded already.
async fn post_form(server: &TestServer, path: &str, token: &str, fields: &str, origin: &str) -> Page {
    let response = browser()
        .post(format!("{}{path}", server.base))
        .header(COOKIE, format!("till_console={token}"))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(ORIGIN, origin)
        .body(fields.to_owned())
        .send()
        .await
        .expect("sent");
    read(response).await
}

/// The value of attribute `attribute` on the element whose id is `id`.
fn attribute(html: &str, id: &str, attribute: &str) -> String {
    let start = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no element {id} in {html}"));
    let element = &html[start..html[start..].find('>').map_or(html.len(), |end| start + end)];
    let marker = format!("{attribute}=\"");
    let value = &element[element
        .find(&marker)
        .unwrap_or_else(|| panic!("no {attribute} in {element}"))
        + marker.len()..];
    value[..value.find('"').expect("closing quote")].to_owned()
}

/// The form token the page's forms carry.
fn form_token(html: &str) -> String {
    let marker = "name=\"csrf\" value=\"";
    let start = html.find(marker).unwrap_or_else(|| panic!("no form token in {html}")) + marker.len();
    html[start..start + html[start..].find('"').expect("closing quote")].to_owned()
}

async fn signing_in_sets_an_http_only_same_site_cookie_and_pages_allow_no_script(engine: Engine) {
    let server = TestServer::start(engine).await;
    let token = server.admin();
    let signed = sign_in(&server, &token).await;
    assert_eq!(signed.status, StatusCode::SEE_OTHER, "{}", signed.html);
    assert_eq!(signed.headers[LOCATION], "/console");
    let cookie = signed.headers[SET_COOKIE].to_str().unwrap();
    assert!(cookie.starts_with(&format!("till_console={token};")), "{cookie}");
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/console"] {
        assert!(
            cookie.split("; ").any(|part| part == attribute),
            "{attribute} in {cookie}"
        );
    }
    // Served over plain HTTP here: a Secure cookie would never come back.
    assert!(!cookie.contains("Secure"), "{cookie}");

    for path in [
        "/console",
        "/console/registers",
        "/console/sales",
        "/console/promotions",
        "/console/stored-value",
        "/console/stock",
    ] {
        let page = open(&server, path, &token).await;
        assert_eq!(page.status, StatusCode::OK, "{path}: {}", page.html);
        assert!(
            page.headers[CONTENT_TYPE].to_str().unwrap().starts_with("text/html"),
            "{path}"
        );
        let policy = page.headers["content-security-policy"].to_str().unwrap();
        assert!(
            policy.contains("default-src 'none'") && policy.contains("style-src 'self'"),
            "{policy}"
        );
        assert!(
            !policy.contains("unsafe-inline") && !policy.contains("script-src"),
            "{policy}"
        );
        assert!(
            !page.html.contains("<script") && !page.html.contains("style=\""),
            "{path}"
        );
        // The token is in the cookie, never in the page.
        assert!(!page.html.contains(&token), "{path}");
    }
    let css = server
        .call(reqwest::Method::GET, "/console/static/console.css", None, None)
        .await;
    assert_eq!(css.status, 200);
    assert!(css.headers[CONTENT_TYPE].to_str().unwrap().starts_with("text/css"));
    server.stop().await;
}

async fn a_bad_token_or_no_cookie_leads_back_to_the_sign_in_page(engine: Engine) {
    let server = TestServer::start(engine).await;
    let refused = sign_in(&server, "not.a.token").await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert!(refused.html.contains("not valid"), "{}", refused.html);
    assert!(
        refused.html.contains("<form"),
        "the form is shown again: {}",
        refused.html
    );
    assert!(!refused.headers.contains_key(SET_COOKIE));
    let blank = sign_in(&server, "").await;
    assert_eq!(blank.status, StatusCode::BAD_REQUEST, "{}", blank.html);

    let anonymous = read(browser().get(format!("{}/console", server.base)).send().await.unwrap()).await;
    assert_eq!(anonymous.status, StatusCode::SEE_OTHER);
    assert_eq!(anonymous.headers[LOCATION], "/console/sign-in");
    assert!(!anonymous.headers.contains_key(SET_COOKIE));
    let slash = read(browser().get(format!("{}/console/", server.base)).send().await.unwrap()).await;
    assert_eq!(slash.status, StatusCode::PERMANENT_REDIRECT);
    assert_eq!(slash.headers[LOCATION], "/console");
    // A cookie whose token no longer authenticates (here: signed with another secret) is
    // cleared on the way.
    let forged = till::token::mint(
        "another-secret-that-is-long-enough-for-hs256",
        &server.config.jwt_issuer,
        &server.config.jwt_audience,
        "mallory",
        "pos.reports.read",
        jiff::Timestamp::now(),
        std::time::Duration::from_secs(600),
    );
    let stale = open(&server, "/console/sales", &forged).await;
    assert_eq!(stale.status, StatusCode::SEE_OTHER);
    assert_eq!(stale.headers[LOCATION], "/console/sign-in");
    assert!(stale.headers[SET_COOKIE].to_str().unwrap().contains("Max-Age=0"));
    server.stop().await;
}

async fn a_token_without_a_pages_scope_sees_a_refusal_naming_it(engine: Engine) {
    let server = TestServer::start(engine).await;
    let reader = server.token("clerk", "pos.sales.read");
    assert_eq!(sign_in(&server, &reader).await.status, StatusCode::SEE_OTHER);
    let today = open(&server, "/console", &reader).await;
    assert_eq!(today.status, StatusCode::FORBIDDEN, "{}", today.html);
    assert!(today.html.contains("pos.reports.read"), "{}", today.html);
    let promotions = open(&server, "/console/promotions", &reader).await;
    assert_eq!(promotions.status, StatusCode::FORBIDDEN);
    assert!(
        promotions.html.contains("pos.promotions.read or pos.promotions.write"),
        "{}",
        promotions.html
    );
    // The scope it holds opens the page that needs it.
    assert_eq!(open(&server, "/console/sales", &reader).await.status, StatusCode::OK);
    server.stop().await;
}

async fn a_form_that_writes_needs_its_token_and_this_origin(engine: Engine) {
    let server = TestServer::start(engine).await;
    let token = server.admin();
    let rule = json!({"id": "soldes", "name": "Soldes", "validFrom": "2026-01-01T00:00:00Z",
        "validUntil": "2099-01-01T00:00:00Z", "priority": 0, "exclusive": false, "active": true,
        "type": "percent_off", "percentBps": 1000});
    assert_eq!(server.post("/v1/promotions", &token, rule).await.status, 201);
    let page = open(&server, "/console/promotions", &token).await;
    let good = form_token(&page.html);
    let origin = server.base.clone();
    let path = "/console/promotions/soldes/deactivate";
    let active = || async { server.get("/v1/promotions/soldes/rule", &token).await.body["active"].clone() };

    for (fields, from) in [
        (String::new(), origin.as_str()),
        ("csrf=not-the-token".to_owned(), origin.as_str()),
        (format!("csrf={good}"), "http://shop.example"),
    ] {
        let refused = post_form(&server, path, &token, &fields, from).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{fields} from {from}");
        assert!(refused.html.contains("nothing was changed"), "{}", refused.html);
        assert_eq!(active().await, true, "{fields} from {from} changed nothing");
    }
    // Another visitor's token is another form token.
    let other = open(
        &server,
        "/console/promotions",
        &server.token("other", "pos.promotions.write"),
    )
    .await;
    let refused = post_form(
        &server,
        path,
        &token,
        &format!("csrf={}", form_token(&other.html)),
        &origin,
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(active().await, true);

    let done = post_form(&server, path, &token, &format!("csrf={good}"), &origin).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.html);
    assert_eq!(done.headers[LOCATION], "/console/promotions");
    assert_eq!(active().await, false);
    let list = open(&server, "/console/promotions", &token).await;
    assert!(
        list.html.contains("data-promotion=\"soldes\" data-active=\"false\""),
        "{}",
        list.html
    );

    // Signing out needs the token too, then clears the cookie.
    let out = post_form(&server, "/console/sign-out", &token, &format!("csrf={good}"), &origin).await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    assert!(out.headers[SET_COOKIE].to_str().unwrap().contains("Max-Age=0"));
    server.stop().await;
}

async fn todays_figures_are_the_sales_reports(engine: Engine) {
    let server = TestServer::start_at(engine, "2026-03-02T08:00:00Z".parse().unwrap(), |_| {}).await;
    server.provision_store("s1").await;
    let (baguette, mug) = (
        server.provision_sku("Baguette", 130, 5.5).await,
        server.provision_sku("Mug", 1450, 20.0).await,
    );
    server.provision_staff("camille", "cashier", "1234").await;
    let (session, till) = server.open_session("s1", "r1", "camille", "1234").await;
    let sales = [
        ("2026-03-02T08:10:00Z", vec![(&baguette, 2, 130)], "cash"),
        ("2026-03-02T08:40:00Z", vec![(&mug, 1, 1450)], "card"),
        (
            "2026-03-02T11:05:00Z",
            vec![(&baguette, 1, 130), (&mug, 2, 1450)],
            "card",
        ),
    ];
    for (n, (at, lines, method)) in sales.iter().enumerate() {
        server.clock.set(at.parse().unwrap());
        let due: i64 = lines.iter().map(|(_, quantity, price)| quantity * price).sum();
        let lines: Vec<_> = lines
            .iter()
            .enumerate()
            .map(|(i, (sku, quantity, price))| {
                let vat = if *price == 130 { 5.5 } else { 20.0 };
                json!({"id": format!("l{i}"), "skuId": sku, "quantity": quantity, "unitPrice": price, "vatRate": vat, "free": false})
            })
            .collect();
        let body = json!({"transactionId": format!("t{n}"), "number": format!("T{n}"), "storeId": "s1",
            "sellerId": "camille", "customerId": null, "sessionId": session,
            "cart": {"freeLineSequence": 0, "lines": lines},
            "tenders": {"amountDue": due, "sequence": 1, "tenders": [{"id": "p1", "method": method,
                "applied": due, "presented": due, "change": 0, "forfeited": 0}]}});
        let reply = server.post("/v1/checkout/finalize", &till, body).await;
        assert_eq!(reply.status, 201, "{}", reply.text);
    }
    server.clock.set("2026-03-02T15:00:00Z".parse().unwrap());
    let token = server.admin();
    // Paris is at +01:00 in March before the clocks change.
    let day = "from=2026-03-01T23:00:00Z&to=2026-03-02T23:00:00Z&storeId=s1";
    let by_hour = server
        .get(&format!("/v1/reports/sales?groupBy=hour&{day}"), &token)
        .await;
    let by_vat = server
        .get(&format!("/v1/reports/sales?groupBy=vat&{day}"), &token)
        .await;
    let totals = &by_hour.body["totals"];

    let page = open(&server, "/console?store=s1&date=2026-03-02", &token).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.html);
    let html = &page.html;
    let value = |id: &str| attribute(html, id, "data-value");
    assert_eq!(value("sales-count"), totals["salesCount"].to_string());
    assert_eq!(value("sales-count"), "3");
    assert_eq!(value("revenue"), totals["totalCents"].to_string());
    assert_eq!(value("revenue"), (260 + 1450 + 130 + 2900).to_string());
    assert_eq!(value("vat-total"), by_vat.body["totals"]["vatCents"].to_string());
    // 4740 over three tickets, to the nearest cent.
    assert_eq!(value("average-basket"), "1580");
    // Each hour's bar carries the report's row for it: 09:00 and 12:00 in Paris.
    for row in by_hour.body["rows"].as_array().unwrap() {
        let hour = &row["key"].as_str().unwrap()[11..13];
        let hour = hour.trim_start_matches('0');
        let hour = if hour.is_empty() { "0" } else { hour };
        let bar = format!(
            "data-hour=\"{hour}\" data-sales=\"{}\" data-total=\"{}\"",
            row["salesCount"], row["totalCents"]
        );
        assert!(html.contains(&bar), "{bar} in {html}");
    }
    assert!(html.contains("data-hour=\"9\" data-sales=\"2\""), "{html}");
    assert!(html.contains("data-hour=\"12\" data-sales=\"1\""), "{html}");
    assert!(html.contains("data-hour=\"10\" data-sales=\"0\""), "{html}");
    // Tenders as the report counts them.
    assert!(html.contains("data-method=\"card\" data-total=\"4480\""), "{html}");
    assert!(html.contains("data-method=\"cash\" data-total=\"260\""), "{html}");
    server.stop().await;
}

/// The stock page shows an article's latest movements in a store, newest first, however many
/// came before them and whatever other articles moved in between.
async fn the_stock_page_shows_the_latest_movements(engine: Engine) {
    let server = TestServer::start(engine).await;
    server.provision_store("s1").await;
    let (tea, jam) = (
        server.provision_sku("Tea", 650, 5.5).await,
        server.provision_sku("Jam", 495, 5.5).await,
    );
    let token = server.admin();
    for level in 1..=23 {
        for (sku, on_hand) in [(&tea, level), (&jam, 100 + level)] {
            let path = format!("/v1/stores/s1/stock/{sku}");
            assert_eq!(server.put(&path, &token, json!({"onHand": on_hand})).await.status, 200);
        }
    }
    let ledger = server
        .get(&format!("/v1/stores/s1/stock/{tea}/movements?limit=100"), &token)
        .await;
    let ids: Vec<String> = ledger.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].to_string())
        .collect();
    assert_eq!(ids.len(), 23);

    let page = open(&server, &format!("/console/stock?sku={tea}"), &token).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.html);
    assert!(
        page.html.contains("data-store=\"s1\" data-on-hand=\"23\""),
        "{}",
        page.html
    );
    let shown: Vec<String> = page
        .html
        .split("data-movement=\"")
        .skip(1)
        .map(|rest| rest[..rest.find('"').unwrap()].to_owned())
        .collect();
    let latest: Vec<String> = ids.iter().rev().take(10).cloned().collect();
    assert_eq!(shown, latest);
    let unknown = open(&server, &format!("/console/stock?sku={}", "0".repeat(63) + "1"), &token).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{}", unknown.html);
    server.stop().await;
}

/// An address under `/console` that is no page answers a 404 page of the console, with its
/// headers, signed in or not, whatever the method: never the API's JSON.
async fn an_unknown_console_page_is_a_page_with_the_consoles_headers(engine: Engine) {
    let server = TestServer::start(engine).await;
    let token = server.admin();
    for path in [
        "/console/nothing-here",
        "/console/sales/t1/more",
        "/console/static/other.css",
    ] {
        for cookie in [None, Some(token.as_str())] {
            for method in [reqwest::Method::GET, reqwest::Method::POST] {
                let mut request = browser().request(method.clone(), format!("{}{path}", server.base));
                if let Some(token) = cookie {
                    request = request.header(COOKIE, format!("till_console={token}"));
                }
                let page = read(request.send().await.expect("sent")).await;
                let what = format!("{method} {path} signed in: {}", cookie.is_some());
                assert_eq!(page.status, StatusCode::NOT_FOUND, "{what}: {}", page.html);
                assert!(
                    page.headers[CONTENT_TYPE].to_str().unwrap().starts_with("text/html"),
                    "{what}"
                );
                assert!(page.html.contains("<h1>"), "{what}: {}", page.html);
                assert!(serde_json::from_str::<serde_json::Value>(&page.html).is_err(), "{what}");
                let policy = page.headers["content-security-policy"].to_str().unwrap();
                assert!(policy.contains("default-src 'none'"), "{what}: {policy}");
                assert_eq!(page.headers["x-frame-options"], "DENY", "{what}");
                assert_eq!(page.headers["x-content-type-options"], "nosniff", "{what}");
                assert_eq!(page.headers["cache-control"], "no-store", "{what}");
            }
        }
    }
    // The API's own unknown routes stay JSON.
    server
        .get("/v1/nothing-here", &token)
        .await
        .assert_error(404, "NOT_FOUND");
    server.stop().await;
}

/// Signing out keeps the token out of the console on the server: a copy of the cookie taken
/// before opens nothing after, and the token cannot sign in again. The API, which the token
/// belongs to, still takes it; another token still signs in.
async fn signing_out_keeps_a_copied_cookie_out(engine: Engine) {
    let server = TestServer::start(engine).await;
    let token = server.admin();
    let signed = sign_in(&server, &token).await;
    assert_eq!(signed.status, StatusCode::SEE_OTHER, "{}", signed.html);
    let copied =
        signed.headers[SET_COOKIE].to_str().unwrap().split(';').next().unwrap()["till_console=".len()..].to_owned();
    let page = open(&server, "/console/sales", &copied).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.html);

    let out = post_form(
        &server,
        "/console/sign-out",
        &copied,
        &format!("csrf={}", form_token(&page.html)),
        &server.base,
    )
    .await;
    assert_eq!(out.status, StatusCode::SEE_OTHER, "{}", out.html);
    assert_eq!(out.headers[LOCATION], "/console/sign-in");

    for path in ["/console/sales", "/console", "/console/promotions"] {
        let after = open(&server, path, &copied).await;
        assert_eq!(after.status, StatusCode::SEE_OTHER, "{path}: {}", after.html);
        assert_eq!(after.headers[LOCATION], "/console/sign-in");
        assert!(after.headers[SET_COOKIE].to_str().unwrap().contains("Max-Age=0"));
    }
    let again = sign_in(&server, &token).await;
    assert_eq!(again.status, StatusCode::UNAUTHORIZED, "{}", again.html);
    assert!(again.html.contains("signed out"), "{}", again.html);
    assert!(!again.headers.contains_key(SET_COOKIE));

    assert_eq!(
        server.get("/v1/stores", &token).await.status,
        200,
        "the API still takes it"
    );
    let other = server.token("admin", "pos.sales.read");
    assert_eq!(sign_in(&server, &other).await.status, StatusCode::SEE_OTHER);
    assert_eq!(open(&server, "/console/sales", &other).await.status, StatusCode::OK);
    server.stop().await;
}
