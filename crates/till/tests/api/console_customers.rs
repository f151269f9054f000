//! The console's customer pages in the browser's place: the search finds a customer by a phone
//! number in a French form, the profile form writes through the same use case as `PUT` with
//! the source `console` (and a bad field changes nothing, shown again in the page's language),
//! the export is the API's, and erasing needs its scope and a confirmation, after which no
//! personal value is shown.

use crate::console::{Page, browser_in, form_token, open, post_form, read};
use crate::customers::urlencode;
use crate::harness::{Engine, MUG, Shop, TestServer, line};
use crate::on_both_engines;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_DISPOSITION, CONTENT_TYPE, COOKIE, LOCATION};
use serde_json::{Value, json};

on_both_engines!(
    the_search_finds_a_customer_by_a_phone_number_in_a_french_form,
    the_profile_form_writes_the_profile_and_its_consent_from_the_console,
    a_bad_email_is_shown_again_with_its_problem_and_changes_nothing,
    the_export_is_the_apis_for_a_token_that_may_read_customers,
    erasing_needs_its_scope_and_a_confirmation_and_leaves_no_personal_value,
);

const MARIE: &str = "/console/customers/c-1";

async fn marie(server: &TestServer) {
    let body = json!({"displayName": "Marie-Hélène Martin", "email": "marie.martin@example.fr",
        "phone": "+33612345678", "postalCode": "75011", "groups": ["staff"], "notes": "Préfère le matin",
        "consent": {"marketingEmail": true, "marketingSms": false, "eReceipt": false}});
    let put = server.put("/v1/customers/c-1", &server.admin(), body).await;
    assert_eq!(put.status, 201, "{}", put.text);
}

/// A page in French, as a browser that asks for it.
async fn open_in_french(server: &TestServer, path: &str, token: &str) -> Page {
    let response = browser_in(Some("fr"))
        .get(format!("{}{path}", server.base))
        .header(COOKIE, format!("till_console={token}"))
        .send()
        .await
        .expect("sent");
    read(response).await
}

/// The customers a search page lists, in order.
fn listed(page: &Page) -> Vec<String> {
    assert_eq!(page.status, StatusCode::OK, "{}", page.html);
    page.html
        .split("<tr data-customer=\"")
        .skip(1)
        .map(|rest| rest[..rest.find('"').unwrap()].to_owned())
        .collect()
}

async fn the_search_finds_a_customer_by_a_phone_number_in_a_french_form(engine: Engine) {
    let server = TestServer::start(engine).await;
    let token = server.admin();
    marie(&server).await;
    let other = json!({"displayName": "Paul Durand", "phone": "+33698765432"});
    assert_eq!(server.put("/v1/customers/c-2", &token, other).await.status, 201);
    let search = |q: &str| format!("/console/customers?q={}", urlencode(q));

    for form in ["06 12 34 56 78", "06.12.34.56.78", "+33 6 12 34 56 78", "0033612345678"] {
        assert_eq!(listed(&open(&server, &search(form), &token).await), ["c-1"], "{form}");
    }
    let found = open_in_french(&server, &search("06 12 34 56 78"), &token).await;
    assert!(found.html.contains("<html lang=\"fr\""), "{}", found.html);
    assert!(found.html.contains("Marie-Hélène Martin"), "{}", found.html);
    assert!(found.html.contains("+33612345678") && found.html.contains("marie.martin@example.fr"));
    assert!(
        found.html.contains("href=\"/console/customers/c-1\""),
        "a link to the profile: {}",
        found.html
    );
    // The same answers as the API's list, for words, an address and a group.
    for (query, expected) in [
        ("?q=marie", vec!["c-1"]),
        ("?q=durand", vec!["c-2"]),
        ("?q=MARIE.MARTIN%40example.fr", vec!["c-1"]),
        ("?group=staff", vec!["c-1"]),
        ("?q=paul&group=staff", vec![]),
        ("", vec!["c-1", "c-2"]),
    ] {
        assert_eq!(
            listed(&open(&server, &format!("/console/customers{query}"), &token).await),
            expected,
            "{query}"
        );
        let api = server.get(&format!("/v1/customers{query}"), &token).await;
        let ids: Vec<&str> = api.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item["customerId"].as_str().unwrap())
            .collect();
        assert_eq!(ids, expected, "the API's {query}");
    }
    // Fields left blank are not given, as a browser sends them.
    assert_eq!(
        listed(&open(&server, "/console/customers?q=&group=", &token).await),
        ["c-1", "c-2"]
    );
    // A page at a time, with a link to the next one.
    let first = open(&server, "/console/customers?limit=1", &token).await;
    assert_eq!(listed(&first), ["c-1"]);
    let start = first.html.find("class=\"next\" href=\"").expect("a next page") + "class=\"next\" href=\"".len();
    let next = first.html[start..start + first.html[start..].find('"').unwrap()].replace("&amp;", "&");
    assert_eq!(
        listed(&open(&server, &format!("{next}&limit=1"), &token).await),
        ["c-2"]
    );
    // A token that may not read customers is refused, and sees no link to the page.
    let clerk = server.token("clerk", "pos.sales.read");
    let refused = open(&server, "/console/customers", &clerk).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(refused.html.contains("pos.customers.read"), "{}", refused.html);
    assert!(
        !open(&server, "/console/sales", &clerk)
            .await
            .html
            .contains("href=\"/console/customers\"")
    );
    server.stop().await;
}

/// The profile form's fields, urlencoded, with the form token.
fn fields(csrf: &str, pairs: &[(&str, &str)]) -> String {
    let mut body = format!("csrf={csrf}");
    for (name, value) in pairs {
        body.push_str(&format!("&{name}={}", urlencode(value)));
    }
    body
}

async fn the_profile_form_writes_the_profile_and_its_consent_from_the_console(engine: Engine) {
    let server = TestServer::start(engine).await;
    let token = server.admin();
    marie(&server).await;
    let page = open(&server, MARIE, &token).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.html);
    for shown in [
        "Marie-Hélène Martin",
        "marie.martin@example.fr",
        "+33612345678",
        "75011",
        "Préfère le matin",
    ] {
        assert!(page.html.contains(shown), "{shown}: {}", page.html);
    }
    assert!(page.html.contains("id=\"consent-history\""), "{}", page.html);
    assert!(
        page.html
            .contains("data-flag=\"marketingEmail\" data-granted=\"true\" data-source=\"api\""),
        "{}",
        page.html
    );
    let csrf = form_token(&page.html);
    let form = fields(
        &csrf,
        &[
            ("displayName", "Marie Martin"),
            ("email", "Marie@Exemple.FR"),
            ("phone", "07 11 22 33 44"),
            ("postalCode", "69002"),
            ("birthDate", "1990-05-17"),
            ("groups", "vip\r\nstaff\r\n"),
            ("notes", "Deux lignes\r\nde notes"),
            ("marketingSms", "yes"),
            ("eReceipt", "yes"),
        ],
    );
    let saved = post_form(&server, MARIE, &token, &form, &server.base).await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.html);
    assert_eq!(saved.headers[LOCATION], MARIE);

    let read = server.get("/v1/customers/c-1", &token).await;
    assert_eq!(read.body["displayName"], "Marie Martin");
    assert_eq!(read.body["email"], "marie@exemple.fr");
    assert_eq!(read.body["phone"], "+33711223344");
    assert_eq!(read.body["postalCode"], "69002");
    assert_eq!(read.body["birthDate"], "1990-05-17");
    assert_eq!(read.body["groups"], json!(["staff", "vip"]));
    assert_eq!(read.body["notes"], "Deux lignes\r\nde notes");
    assert_eq!(
        read.body["consent"],
        json!({"marketingEmail": false, "marketingSms": true, "eReceipt": true})
    );
    let export = server.get("/v1/customers/c-1/export", &token).await;
    let history: Vec<(String, bool, String)> = export.body["consentHistory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| {
            (
                change["flag"].as_str().unwrap().to_owned(),
                change["granted"].as_bool().unwrap(),
                change["source"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let console = |flag: &str, granted| (flag.to_owned(), granted, "console".to_owned());
    assert_eq!(history.len(), 4, "{history:?}");
    assert_eq!(history[0], ("marketingEmail".to_owned(), true, "api".to_owned()));
    for change in [
        console("marketingEmail", false),
        console("marketingSms", true),
        console("eReceipt", true),
    ] {
        assert!(history.contains(&change), "{change:?} in {history:?}");
    }
    // The page shows the profile as written, and the history with the console as source.
    let shown = open(&server, MARIE, &token).await;
    assert!(shown.html.contains("data-source=\"console\""), "{}", shown.html);
    assert!(shown.html.contains("marie@exemple.fr") && shown.html.contains("17 May 1990"));

    // Saving the same form again changes no consent: nothing more in the history.
    let again = post_form(&server, MARIE, &token, &form, &server.base).await;
    assert_eq!(again.status, StatusCode::SEE_OTHER, "{}", again.html);
    let export = server.get("/v1/customers/c-1/export", &token).await;
    assert_eq!(export.body["consentHistory"].as_array().unwrap().len(), 4);

    // Without the form token, or without the write scope, nothing is written.
    let forged = post_form(&server, MARIE, &token, "displayName=Forg%C3%A9e", &server.base).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN, "{}", forged.html);
    let reader = server.token("reader", "pos.customers.read");
    let reader_page = open(&server, MARIE, &reader).await;
    assert_eq!(reader_page.status, StatusCode::OK);
    assert!(
        !reader_page.html.contains("class=\"profile\""),
        "no form: {}",
        reader_page.html
    );
    assert!(reader_page.html.contains("pos.customers.write"), "{}", reader_page.html);
    let reader_form = fields(&form_token(&reader_page.html), &[("displayName", "Lectrice")]);
    let refused = post_form(&server, MARIE, &reader, &reader_form, &server.base).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.html);
    assert_eq!(
        server.get("/v1/customers/c-1", &token).await.body["displayName"],
        "Marie Martin"
    );
    // A customer nobody named has no page.
    assert_eq!(
        open(&server, "/console/customers/nobody", &token).await.status,
        StatusCode::NOT_FOUND
    );
    server.stop().await;
}

async fn a_bad_email_is_shown_again_with_its_problem_and_changes_nothing(engine: Engine) {
    let server = TestServer::start(engine).await;
    let token = server.admin();
    marie(&server).await;
    let before = server.get("/v1/customers/c-1/export", &token).await.body;
    let page = open(&server, MARIE, &token).await;
    let form = fields(
        &form_token(&page.html),
        &[
            ("displayName", "Marie Changée"),
            ("email", "marie@localhost"),
            ("marketingSms", "yes"),
        ],
    );
    let refused = post_form(&server, MARIE, &token, &form, &server.base).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.html);
    assert!(
        refused
            .html
            .contains("data-field=\"email\">Must be an e-mail address with a domain"),
        "{}",
        refused.html
    );
    assert!(refused.html.contains("Nothing was saved"), "{}", refused.html);
    assert!(
        refused.html.contains("value=\"marie@localhost\"") && refused.html.contains("value=\"Marie Changée\""),
        "what was typed is shown again: {}",
        refused.html
    );
    assert!(refused.html.contains("aria-invalid=\"true\""), "{}", refused.html);
    // In French, for a French page.
    let response = browser_in(Some("fr"))
        .post(format!("{}{MARIE}", server.base))
        .header(COOKIE, format!("till_console={token}"))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(reqwest::header::ORIGIN, &server.base)
        .body(form.clone())
        .send()
        .await
        .expect("sent");
    let french = read(response).await;
    assert_eq!(french.status, StatusCode::BAD_REQUEST);
    assert!(
        french.html.contains("Doit être une adresse e-mail avec un domaine"),
        "{}",
        french.html
    );
    assert!(french.html.contains("Rien n’a été enregistré"), "{}", french.html);
    let bad_phone = fields(&form_token(&page.html), &[("phone", "06 12 34")]);
    let phone = post_form(&server, MARIE, &token, &bad_phone, &server.base).await;
    assert_eq!(phone.status, StatusCode::BAD_REQUEST);
    assert!(
        phone.html.contains("data-field=\"phone\">Must be a phone number"),
        "{}",
        phone.html
    );

    assert_eq!(
        server.get("/v1/customers/c-1/export", &token).await.body,
        before,
        "nothing changed, the consent history neither"
    );
    server.stop().await;
}

async fn the_export_is_the_apis_for_a_token_that_may_read_customers(engine: Engine) {
    let server = TestServer::start(engine).await;
    let token = server.admin();
    marie(&server).await;
    let page = open(&server, MARIE, &token).await;
    assert!(
        page.html.contains("href=\"/console/customers/c-1/export\""),
        "{}",
        page.html
    );
    let download = open(&server, "/console/customers/c-1/export", &token).await;
    assert_eq!(download.status, StatusCode::OK, "{}", download.html);
    assert!(
        download.headers[CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    assert_eq!(
        download.headers[CONTENT_DISPOSITION],
        "attachment; filename=\"customer-c-1.json\""
    );
    let downloaded: Value = serde_json::from_str(&download.html).expect("JSON");
    let api = server.get("/v1/customers/c-1/export", &token).await;
    assert_eq!(downloaded, api.body);
    assert_eq!(downloaded["customer"]["displayName"], "Marie-Hélène Martin");

    // A token that may write profiles but not read them sees the page without the link, and
    // the address refused.
    let writer = server.token("writer", "pos.customers.write");
    let page = open(&server, MARIE, &writer).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.html);
    assert!(!page.html.contains("/console/customers/c-1/export"), "{}", page.html);
    let refused = open(&server, "/console/customers/c-1/export", &writer).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(refused.html.contains("pos.customers.read"), "{}", refused.html);
    assert!(refused.headers[CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
    assert_eq!(
        open(&server, "/console/customers/nobody/export", &token).await.status,
        StatusCode::NOT_FOUND
    );
    server.stop().await;
}

async fn erasing_needs_its_scope_and_a_confirmation_and_leaves_no_personal_value(engine: Engine) {
    let shop = Shop::open(engine).await;
    let server = &shop.server;
    let admin = server.admin();
    marie(server).await;
    let mut sale = shop.sale("t-named", vec![line("l1", MUG, 1)], 1450);
    sale["customerId"] = json!("c-1");
    assert_eq!(shop.finalize(&sale).await.status, 201);
    let points = server.get("/v1/customers/c-1", &admin).await.body["loyaltyPoints"]
        .as_i64()
        .unwrap();
    assert!(points > 0);
    let erase = "/console/customers/c-1/erase";
    let erased = || async { server.get("/v1/customers/c-1", &admin).await.body["erasedAt"].clone() };

    // A token that may read and write customers sees no erase button and is refused.
    let writer = server.token("back-office", "pos.customers.read pos.customers.write");
    let page = open(server, MARIE, &writer).await;
    assert!(!page.html.contains(erase), "{}", page.html);
    assert!(page.html.contains("pos.customers.erase"), "{}", page.html);
    let csrf = form_token(&page.html);
    for body in [format!("csrf={csrf}"), format!("csrf={csrf}&confirm=yes")] {
        let refused = post_form(server, erase, &writer, &body, &server.base).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.html);
        assert!(refused.html.contains("pos.customers.erase"), "{}", refused.html);
    }
    assert_eq!(erased().await, Value::Null);

    // The button asks first: the confirmation names what is lost.
    let page = open(server, MARIE, &admin).await;
    assert!(page.html.contains(&format!("action=\"{erase}\"")), "{}", page.html);
    let csrf = form_token(&page.html);
    let asked = post_form(server, erase, &admin, &format!("csrf={csrf}"), &server.base).await;
    assert_eq!(asked.status, StatusCode::OK, "{}", asked.html);
    assert!(asked.html.contains("id=\"confirm\""), "{}", asked.html);
    for said in [
        format!("the {points} loyalty points left, forfeited"),
        "the consent history (1 change)".to_owned(),
        "keep the bare id".to_owned(),
        "This cannot be undone.".to_owned(),
        "name=\"confirm\" value=\"yes\"".to_owned(),
    ] {
        assert!(asked.html.contains(&said), "{said}: {}", asked.html);
    }
    assert_eq!(erased().await, Value::Null, "asking erases nothing");
    let french = browser_in(Some("fr"))
        .post(format!("{}{erase}", server.base))
        .header(COOKIE, format!("till_console={admin}"))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(reqwest::header::ORIGIN, &server.base)
        .body(format!("csrf={csrf}"))
        .send()
        .await
        .expect("sent");
    let french = read(french).await;
    assert!(
        french
            .html
            .contains(&format!("le solde de {points} points de fidélité, perdus")),
        "{}",
        french.html
    );
    assert!(french.html.contains("irréversible"), "{}", french.html);
    // Without the form token, or with another answer, nothing is erased.
    let forged = post_form(server, erase, &admin, "confirm=yes", &server.base).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let maybe = post_form(
        server,
        erase,
        &admin,
        &format!("csrf={csrf}&confirm=maybe"),
        &server.base,
    )
    .await;
    assert_eq!(maybe.status, StatusCode::BAD_REQUEST);
    assert_eq!(erased().await, Value::Null);

    let done = post_form(server, erase, &admin, &format!("csrf={csrf}&confirm=yes"), &server.base).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.html);
    assert_eq!(done.headers[LOCATION], MARIE);
    assert!(erased().await.is_string());
    let after = server.get("/v1/customers/c-1", &admin).await;
    assert_eq!(after.body["loyaltyPoints"], 0);

    // The page says so, shows no personal value and offers no edit and no erase.
    for page in [
        open(server, MARIE, &admin).await,
        open_in_french(server, MARIE, &admin).await,
    ] {
        assert_eq!(page.status, StatusCode::OK, "{}", page.html);
        assert!(page.html.contains("id=\"erased\""), "{}", page.html);
        assert!(page.html.contains("data-erased=\"true\""), "{}", page.html);
        for personal in [
            "Marie",
            "Hélène",
            "marie.martin@example.fr",
            "+33612345678",
            "75011",
            "staff",
            "Préfère",
        ] {
            assert!(!page.html.contains(personal), "{personal} in {}", page.html);
        }
        assert!(!page.html.contains("class=\"profile\""), "no edit form: {}", page.html);
        assert!(!page.html.contains(&format!("action=\"{erase}\"")), "{}", page.html);
    }
    let text = open(server, MARIE, &admin).await.html;
    assert!(text.contains("personal data was erased"), "{text}");
    // An edit sent anyway is refused by the use case, and writes nothing.
    let late = fields(&csrf, &[("displayName", "Marie")]);
    let refused = post_form(server, MARIE, &admin, &late, &server.base).await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.html);
    assert_eq!(
        server.get("/v1/customers/c-1", &admin).await.body["displayName"],
        Value::Null
    );
    shop.server.stop().await;
}
