//! The console in the browser's place: signing in sets a cookie no script can read and no
//! other site sends, pages refuse plainly without sign-in or scope, a form that writes needs
//! its token and this origin (and changes nothing otherwise), and today's figures are the
//! sales report's.

use crate::harness::{Engine, TestServer};
use crate::on_both_engines;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT_LANGUAGE, CONTENT_TYPE, COOKIE, HeaderMap, HeaderValue, LOCATION, ORIGIN, SET_COOKIE};
use serde_json::json;

on_both_engines!(
    the_registers_page_lists_the_open_sessions_card_payments,
    signing_in_sets_an_http_only_same_site_cookie_and_pages_allow_no_script,
    a_bad_token_or_no_cookie_leads_back_to_the_sign_in_page,
    a_token_without_a_pages_scope_sees_a_refusal_naming_it,
    a_form_that_writes_needs_its_token_and_this_origin,
    todays_figures_are_the_sales_reports,
    the_stock_page_shows_the_latest_movements,
    an_unknown_console_page_is_a_page_with_the_consoles_headers,
    signing_out_keeps_a_copied_cookie_out,
    the_language_is_the_visitors_choice_else_the_browsers_else_the_default,
    amounts_and_names_are_written_in_the_pages_language,
    deactivating_a_promotion_asks_first,
    a_cashier_sees_the_pages_it_may_open_and_is_refused_the_others,
    the_favicon_is_an_svg_image_every_page_links,
);

/// A browser that follows no redirect, so that each answer can be checked, and asks for
/// English pages.
fn browser() -> reqwest::Client {
    browser_in(Some("en"))
}

/// A browser that sends `accept_language`, or no `Accept-Language` at all.
pub(crate) fn browser_in(accept_language: Option<&str>) -> reqwest::Client {
    let mut headers = HeaderMap::new();
    if let Some(languages) = accept_language {
        headers.insert(ACCEPT_LANGUAGE, HeaderValue::from_str(languages).expect("a header"));
    }
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .default_headers(headers)
        .build()
        .expect("client")
}

pub(crate) struct Page {
    pub(crate) status: StatusCode,
    pub(crate) headers: reqwest::header::HeaderMap,
    pub(crate) html: String,
}

pub(crate) async fn read(response: reqwest::Response) -> Page {
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

pub(crate) async fn open(server: &TestServer, path: &str, token: &str) -> Page {
    let response = browser()
        .get(format!("{}{path}", server.base))
        .header(COOKIE, format!("till_console={token}"))
        .send()
        .await
        .expect("sent");
    read(response).await
}

/// Posts a form the way a browser of this origin does, with `fields` urlencoded already.
pub(crate) async fn post_form(server: &TestServer, path: &str, token: &str, fields: &str, origin: &str) -> Page {
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
pub(crate) fn form_token(html: &str) -> String {
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
        "/console/customers",
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
        ("confirm=yes".to_owned(), origin.as_str()),
        ("csrf=not-the-token&confirm=yes".to_owned(), origin.as_str()),
        (format!("csrf={good}&confirm=yes"), "http://shop.example"),
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
        &format!("csrf={}&confirm=yes", form_token(&other.html)),
        &origin,
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(active().await, true);

    let done = post_form(&server, path, &token, &format!("csrf={good}&confirm=yes"), &origin).await;
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

/// `path` read by a browser sending `accept_language` (or none) and `cookies`.
async fn open_with(server: &TestServer, path: &str, accept_language: Option<&str>, cookies: &str) -> Page {
    let mut request = browser_in(accept_language).get(format!("{}{path}", server.base));
    if !cookies.is_empty() {
        request = request.header(COOKIE, cookies);
    }
    read(request.send().await.expect("sent")).await
}

/// The `lang` of the page's `<html>`.
fn page_language(html: &str) -> &str {
    let start = html.find("<html lang=\"").expect("an html element") + "<html lang=\"".len();
    &html[start..start + html[start..].find('"').expect("closing quote")]
}

/// The language is the one the visitor chose with the switch (a cookie), else the one of
/// `Accept-Language` the console speaks with the highest weight, else `console_language`.
async fn the_language_is_the_visitors_choice_else_the_browsers_else_the_default(engine: Engine) {
    let server = TestServer::start(engine).await;
    let token = server.admin();
    let cookie = format!("till_console={token}");
    // No preference at all: French, the default of a French chain.
    let page = open_with(&server, "/console/sign-in", None, "").await;
    assert_eq!(page_language(&page.html), "fr", "{}", page.html);
    assert!(page.html.contains("Se connecter"), "{}", page.html);
    for (languages, expected) in [
        ("de-DE,de;q=0.9,en;q=0.8,fr;q=0.5", "en"),
        ("en;q=0.4, fr-CA;q=0.7", "fr"),
        ("en-GB,en;q=0.9", "en"),
        ("fr;q=0, en;q=0.1", "en"),
        ("de, it;q=0.5", "fr"),
    ] {
        let page = open_with(&server, "/console/sales", Some(languages), &cookie).await;
        assert_eq!(page.status, StatusCode::OK);
        assert_eq!(page_language(&page.html), expected, "{languages}");
    }
    let english = open_with(&server, "/console/sales", Some("en"), &cookie).await;
    assert!(english.html.contains(">Sales</h1>"), "{}", english.html);
    let french = open_with(&server, "/console/sales", Some("fr"), &cookie).await;
    assert!(french.html.contains(">Ventes</h1>"), "{}", french.html);
    // The switch links to the other language and back to the same page.
    assert!(
        french
            .html
            .contains("href=\"/console/language?to=en&amp;back=%2Fconsole%2Fsales\""),
        "{}",
        french.html
    );

    // The switch keeps the choice in a cookie, which wins over the browser's languages.
    let switched = open_with(
        &server,
        "/console/language?to=en&back=%2Fconsole%2Fsales%3Ftype%3Dsale",
        None,
        "",
    )
    .await;
    assert_eq!(switched.status, StatusCode::SEE_OTHER);
    assert_eq!(switched.headers[LOCATION], "/console/sales?type=sale");
    let chosen = switched.headers[SET_COOKIE].to_str().unwrap().to_owned();
    assert!(chosen.starts_with("till_lang=en;"), "{chosen}");
    assert!(
        chosen.contains("Path=/console") && chosen.contains("HttpOnly"),
        "{chosen}"
    );
    let page = open_with(
        &server,
        "/console/sales",
        Some("fr-FR,fr;q=0.9"),
        &format!("{cookie}; till_lang=en"),
    )
    .await;
    assert_eq!(page_language(&page.html), "en");
    // A refusal is written in the chosen language too.
    let refused = open_with(&server, "/console/nothing-here", Some("en"), "till_lang=fr").await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);
    assert_eq!(page_language(&refused.html), "fr");
    assert!(refused.html.contains("Cette page n’existe pas"), "{}", refused.html);
    // The switch goes back only to a page of the console, and ignores a language it lacks.
    for (query, location) in [
        ("to=en&back=%2F%2Fevil.example%2Fconsole", "/console"),
        ("to=en&back=https%3A%2F%2Fevil.example%2F", "/console"),
        ("to=de&back=%2Fconsole%2Fstock", "/console/stock"),
    ] {
        let switched = open_with(&server, &format!("/console/language?{query}"), None, "").await;
        assert_eq!(switched.status, StatusCode::SEE_OTHER, "{query}");
        assert_eq!(switched.headers[LOCATION], location, "{query}");
        assert_eq!(
            switched.headers.contains_key(SET_COOKIE),
            !query.contains("to=de"),
            "{query}"
        );
    }
    server.stop().await;

    // A deployment for English-speaking staff.
    let server = TestServer::start_with(engine, |config| {
        config.console_language = till::config::ConsoleLanguage::En;
    })
    .await;
    let page = open_with(&server, "/console/sign-in", None, "").await;
    assert_eq!(page_language(&page.html), "en", "{}", page.html);
    assert!(page.html.contains(">Sign in</h1>"), "{}", page.html);
    let page = open_with(&server, "/console/sign-in", Some("fr-FR"), "").await;
    assert_eq!(page_language(&page.html), "fr");
    server.stop().await;
}

/// Amounts, tender methods, sale types and stock reasons in each language: the API's 21300
/// cents are `213,00 €` in French and `€213.00` in English.
async fn amounts_and_names_are_written_in_the_pages_language(engine: Engine) {
    let server = TestServer::start_at(engine, "2026-03-02T08:00:00Z".parse().unwrap(), |_| {}).await;
    server.provision_store("s1").await;
    let bike = server.provision_sku("Vélo", 21300, 20.0).await;
    server.provision_staff("camille", "cashier", "1234").await;
    let (session, till) = server.open_session("s1", "r1", "camille", "1234").await;
    server.clock.set("2026-03-02T09:30:00Z".parse().unwrap());
    let body = json!({"transactionId": "t1", "number": "T1", "storeId": "s1",
        "sellerId": "camille", "customerId": null, "sessionId": session,
        "cart": {"freeLineSequence": 0, "lines": [{"id": "l1", "skuId": bike, "quantity": 1,
            "unitPrice": 21300, "vatRate": 20.0, "free": false}]},
        "tenders": {"amountDue": 21300, "sequence": 2, "tenders": [
            {"id": "p1", "method": "card", "applied": 20000, "presented": 20000, "change": 0, "forfeited": 0},
            {"id": "p2", "method": "meal_voucher", "applied": 1300, "presented": 1300, "change": 0, "forfeited": 0}]}});
    let reply = server.post("/v1/checkout/finalize", &till, body).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let token = server.admin();
    assert_eq!(
        server
            .put(&format!("/v1/stores/s1/stock/{bike}"), &token, json!({"onHand": 4}))
            .await
            .status,
        200
    );
    let listed = server.get("/v1/sales?storeId=s1", &token).await;
    assert_eq!(listed.body["items"][0]["totalCents"], 21300, "{}", listed.text);
    let cookie = format!("till_console={token}");

    let today = "/console?store=s1&date=2026-03-02";
    let french = open_with(&server, today, Some("fr"), &cookie).await;
    assert_eq!(french.status, StatusCode::OK, "{}", french.html);
    let html = &french.html;
    assert!(html.contains("data-value=\"21300\">213,00\u{a0}€<"), "{html}");
    assert!(
        html.contains("200,00\u{a0}€") && html.contains("13,00\u{a0}€"),
        "{html}"
    );
    assert!(
        html.contains(">Carte bancaire<") && html.contains(">Titre-restaurant<"),
        "{html}"
    );
    assert!(!html.contains(">card<") && !html.contains("meal_voucher<"), "{html}");
    assert!(html.contains("lundi 2 mars 2026"), "{html}");
    assert!(html.contains("20\u{a0}%"), "{html}");
    let english = open_with(&server, today, Some("en"), &cookie).await;
    let html = &english.html;
    assert!(html.contains("data-value=\"21300\">€213.00<"), "{html}");
    assert!(html.contains(">Card<") && html.contains(">Meal voucher<"), "{html}");
    assert!(html.contains("Monday 2 March 2026"), "{html}");

    let sales = open_with(&server, "/console/sales", Some("fr"), &cookie).await;
    assert!(sales.html.contains("213,00\u{a0}€"), "{}", sales.html);
    assert!(sales.html.contains(">Vente<"), "{}", sales.html);
    // The instant in the store's zone, Paris at +01:00 in March.
    assert!(sales.html.contains("02/03/2026 10:30"), "{}", sales.html);
    let sales = open_with(&server, "/console/sales", Some("en"), &cookie).await;
    assert!(
        sales.html.contains("€213.00") && sales.html.contains("2 Mar 2026 10:30"),
        "{}",
        sales.html
    );

    let stock = format!("/console/stock?sku={bike}&store=s1");
    let french = open_with(&server, &stock, Some("fr"), &cookie).await;
    assert!(french.html.contains(">Ajustement<"), "{}", french.html);
    let english = open_with(&server, &stock, Some("en"), &cookie).await;
    assert!(english.html.contains(">Adjustment<"), "{}", english.html);
    server.stop().await;
}

/// The list's Deactivate button only asks: the rule stops when the confirmation's button is
/// pressed, with the form token.
async fn deactivating_a_promotion_asks_first(engine: Engine) {
    let server = TestServer::start(engine).await;
    let token = server.admin();
    let rule = json!({"id": "soldes", "name": "Soldes d'hiver", "validFrom": "2026-01-07T07:00:00Z",
        "validUntil": "2026-02-03T22:59:00Z", "priority": 0, "exclusive": false, "active": true,
        "type": "percent_off", "percentBps": 1000});
    assert_eq!(server.post("/v1/promotions", &token, rule).await.status, 201);
    let active = || async { server.get("/v1/promotions/soldes/rule", &token).await.body["active"].clone() };
    let cookie = format!("till_console={token}");
    let list = open_with(&server, "/console/promotions", Some("fr"), &cookie).await;
    // The window in Paris time.
    assert!(
        list.html.contains("07/01/2026 08:00 – 03/02/2026 23:59"),
        "{}",
        list.html
    );
    assert!(list.html.contains("Europe/Paris"), "{}", list.html);
    let good = form_token(&list.html);
    let path = "/console/promotions/soldes/deactivate";

    let asked = post_form(&server, path, &token, &format!("csrf={good}"), &server.base).await;
    assert_eq!(asked.status, StatusCode::OK, "{}", asked.html);
    assert!(asked.html.contains("id=\"confirm\""), "{}", asked.html);
    assert!(
        asked.html.contains("Soldes d&#39;hiver") || asked.html.contains("Soldes d'hiver"),
        "{}",
        asked.html
    );
    assert!(asked.html.contains("name=\"confirm\" value=\"yes\""), "{}", asked.html);
    assert!(asked.html.contains(&format!("value=\"{good}\"")), "{}", asked.html);
    assert!(
        asked.html.contains("href=\"/console/promotions\""),
        "a way back: {}",
        asked.html
    );
    assert_eq!(active().await, true, "asking changes nothing");
    let refused = post_form(&server, path, &token, "confirm=yes", &server.base).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(active().await, true);
    let wrong = post_form(
        &server,
        path,
        &token,
        &format!("csrf={good}&confirm=maybe"),
        &server.base,
    )
    .await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST, "{}", wrong.html);
    assert_eq!(active().await, true);

    let done = post_form(&server, path, &token, &format!("csrf={good}&confirm=yes"), &server.base).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.html);
    assert_eq!(active().await, false);
    let again = post_form(&server, path, &token, &format!("csrf={good}"), &server.base).await;
    assert_eq!(again.status, StatusCode::OK);
    assert!(
        !again.html.contains("name=\"confirm\""),
        "nothing left to confirm: {}",
        again.html
    );
    let unknown = post_form(
        &server,
        "/console/promotions/nope/deactivate",
        &token,
        &format!("csrf={good}"),
        &server.base,
    )
    .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{}", unknown.html);
    server.stop().await;
}

/// A cashier's token (the role's default scopes) signs in to the first page it may open, sees
/// only such pages in the navigation, and is refused the others with a page naming the scope.
async fn a_cashier_sees_the_pages_it_may_open_and_is_refused_the_others(engine: Engine) {
    let server = TestServer::start(engine).await;
    let scopes = till_core::grant::Role::Cashier.default_grants().to_words();
    let cashier = server.token("camille", &scopes);
    let signed = sign_in(&server, &cashier).await;
    assert_eq!(signed.status, StatusCode::SEE_OTHER, "{}", signed.html);
    assert_eq!(signed.headers[LOCATION], "/console/sales");
    let sales = open(&server, "/console/sales", &cashier).await;
    assert_eq!(sales.status, StatusCode::OK, "{}", sales.html);
    let start = sales.html.find("<nav class=\"pages\"").expect("the navigation");
    let nav = &sales.html[start..start + sales.html[start..].find("</nav>").unwrap()];
    for (page, shown) in [
        ("/console/sales\"", true),
        ("/console/stored-value\"", true),
        ("/console\"", false),
        ("/console/registers\"", false),
        ("/console/promotions\"", false),
        ("/console/stock\"", false),
        ("/console/customers\"", false),
    ] {
        assert_eq!(nav.contains(&format!("href=\"{page}")), shown, "{page} in {nav}");
    }
    assert_eq!(
        open(&server, "/console/stored-value", &cashier).await.status,
        StatusCode::OK
    );
    for (page, scope) in [
        ("/console", "pos.reports.read"),
        ("/console/registers", "pos.stores.write or pos.catalog.read"),
        ("/console/promotions", "pos.promotions.read or pos.promotions.write"),
        ("/console/stock", "pos.catalog.read or pos.catalog.write"),
        ("/console/customers", "pos.customers.read or pos.customers.write"),
    ] {
        let refused = open(&server, page, &cashier).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{page}");
        assert!(refused.html.contains(scope), "{page}: {}", refused.html);
    }
    // An administrator signs in to today's page, and sees every page.
    let admin = server.admin();
    assert_eq!(sign_in(&server, &admin).await.headers[LOCATION], "/console");
    server.stop().await;
}

async fn the_favicon_is_an_svg_image_every_page_links(engine: Engine) {
    let server = TestServer::start(engine).await;
    let icon = read(
        browser()
            .get(format!("{}/console/static/favicon.svg", server.base))
            .send()
            .await
            .expect("sent"),
    )
    .await;
    assert_eq!(icon.status, StatusCode::OK);
    assert_eq!(icon.headers[CONTENT_TYPE], "image/svg+xml");
    assert!(
        icon.html.starts_with("<svg") && !icon.html.contains("<script"),
        "{}",
        icon.html
    );
    let token = server.admin();
    for page in [
        open_with(&server, "/console/sign-in", None, "").await,
        open(&server, "/console/sales", &token).await,
    ] {
        assert!(
            page.html
                .contains("<link rel=\"icon\" type=\"image/svg+xml\" href=\"/console/static/favicon.svg\">"),
            "{}",
            page.html
        );
    }
    server.stop().await;
}

async fn the_registers_page_lists_the_open_sessions_card_payments(engine: Engine) {
    use crate::harness::{Shop, line};
    const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);
    let shop = Shop::open(engine).await;
    let server = &shop.server;
    for (payment, outcome) in [
        (
            "pay-1",
            json!({"status": "authorized", "authorizedCents": MUG.1, "cardBrand": "CB", "last4": "4242"}),
        ),
        ("pay-2", json!({"status": "declined"})),
    ] {
        let asked = json!({"paymentId": payment, "sessionId": shop.session, "amountCents": MUG.1,
                           "method": "card", "terminalId": "tpe-7"});
        assert_eq!(server.post("/v1/payments", &shop.till, asked).await.status, 201);
        let path = format!("/v1/payments/{payment}/outcome");
        assert_eq!(server.post(&path, &shop.till, outcome).await.status, 200);
    }
    let mut sale = shop.sale("t1", vec![line("l1", MUG, 1)], MUG.1);
    sale["tenders"]["tenders"][0]["reference"] = json!("pay-1");
    assert_eq!(shop.finalize(&sale).await.status, 201);

    let page = open(server, "/console/registers?store=s1", &server.admin()).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.html);
    let start = page.html.find("<table class=\"card-payments\"").expect("the attempts");
    let table = &page.html[start..start + page.html[start..].find("</table>").unwrap()];
    let rows: Vec<&str> = table.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), 2, "{table}");
    for (row, expected) in rows.iter().zip([
        ["pay-1", "tpe-7", "taken by a sale", "CB •••• 4242", "t1"],
        ["pay-2", "tpe-7", "declined", "", ""],
    ]) {
        for text in expected.iter().filter(|text| !text.is_empty()) {
            assert!(row.contains(text), "{text} in {row}");
        }
    }
    // Who may see the registers but not the payments is told which scope shows them.
    let manager = server.token("lea", "pos.sessions.close pos.catalog.read");
    let page = open(server, "/console/registers?store=s1", &manager).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.html);
    assert!(!page.html.contains("pay-1"), "{}", page.html);
    assert!(page.html.contains("pos.sales.read"), "{}", page.html);
    shop.server.stop().await;
}
