//! Receipts sent by e-mail through a real SMTP server (aiosmtpd) the tests start: the mail
//! carries the receipt as text and as HTML whose QR code reads back as the ticket's proof; a
//! one-off address is gone from the database once delivered; a customer receives it only with
//! their consent; a send asked again under its id is not queued twice; and a mail server that
//! is down, while the node itself restarts, delays the mail, which then arrives once.

use crate::harness::{Engine, MailSink, Shop, free_port, line, read_qr_code};
use crate::on_both_engines;
use crate::prints::{proof_of, sold};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

on_both_engines!(
    a_receipt_sent_by_email_arrives_once_with_its_text_its_html_and_its_proof,
    a_customer_receives_their_receipt_only_with_their_consent,
    a_send_asked_again_under_its_id_is_not_queued_twice_and_bad_asks_change_nothing,
    a_mail_server_down_while_the_node_restarts_delays_the_mail_which_arrives_once,
    the_consoles_send_button_emails_through_the_same_use_case,
    erasing_a_customer_lets_go_of_a_receipt_waiting_for_their_address,
);

const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);

fn mail_to(url: String) -> impl FnOnce(&mut till::config::Config) {
    move |config| {
        config.smtp_url = Some(url);
        config.smtp_from = Some("Boutique <tickets@example.fr>".to_owned());
        config.smtp_retry_first_ms = 200;
    }
}

async fn send(shop: &Shop, transaction: &str, body: Value) -> crate::harness::Reply {
    shop.server
        .post(&format!("/v1/sales/{transaction}/receipt/send"), &shop.till, body)
        .await
}

async fn sends(shop: &Shop, transaction: &str) -> Vec<Value> {
    let reply = shop
        .server
        .get(&format!("/v1/sales/{transaction}/receipt/sends"), &shop.till)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.body["sends"].as_array().cloned().unwrap_or_default()
}

/// Waits until the sale's send `id` is no longer queued; answers it.
async fn settled(shop: &Shop, transaction: &str, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let send = sends(shop, transaction)
            .await
            .into_iter()
            .find(|send| send["sendId"] == id)
            .expect("the send is listed");
        if send["state"] != "queued" || Instant::now() > deadline {
            return send;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A mail's decoded parts, by content type.
struct Mail {
    to: String,
    envelope_to: String,
    subject: String,
    text: String,
    html: String,
    png: Vec<u8>,
    png_id: String,
}

fn read(raw: &[u8]) -> Mail {
    let parsed = mailparse::parse_mail(raw).expect("a mail");
    let header = |name: &str| {
        use mailparse::MailHeaderMap;
        parsed.headers.get_first_value(name).unwrap_or_default()
    };
    let mut mail = Mail {
        to: header("To"),
        envelope_to: header("X-RcptTo"),
        subject: header("Subject"),
        text: String::new(),
        html: String::new(),
        png: Vec::new(),
        png_id: String::new(),
    };
    let mut parts = vec![&parsed];
    while let Some(part) = parts.pop() {
        parts.extend(part.subparts.iter());
        match part.ctype.mimetype.as_str() {
            "text/plain" => mail.text = part.get_body().expect("a text body").replace("\r\n", "\n"),
            "text/html" => mail.html = part.get_body().expect("an HTML body"),
            "image/png" => {
                use mailparse::MailHeaderMap;
                mail.png = part.get_body_raw().expect("an image");
                mail.png_id = part.headers.get_first_value("Content-ID").unwrap_or_default();
            }
            _ => {}
        }
    }
    mail
}

async fn a_receipt_sent_by_email_arrives_once_with_its_text_its_html_and_its_proof(engine: Engine) {
    let sink = MailSink::start(free_port());
    let shop = Shop::open_with(engine, mail_to(sink.url())).await;
    sold(&shop, "t1", vec![line("l1", MUG, 2)]).await;
    let address = "jeanne.martin@example.org";

    let queued = send(&shop, "t1", json!({"email": address})).await;
    assert_eq!(queued.status, 202, "{}", queued.text);
    assert_eq!(queued.body["state"], "queued");
    assert_eq!(queued.body["recipient"], "address");
    assert_eq!(queued.body["to"], "j•••@example.org", "the address shows masked");
    let id = queued.body["sendId"].as_str().unwrap().to_owned();

    let sent = settled(&shop, "t1", &id).await;
    assert_eq!(sent["state"], "sent", "{sent}");
    assert_eq!(sent["attempts"], 1);
    assert!(sent["sentAt"].is_string() && sent["to"].is_null(), "{sent}");

    let mails = sink.wait_for(1).await;
    assert_eq!(mails.len(), 1, "one mail");
    let mail = read(&mails[0]);
    assert_eq!(mail.to, address);
    assert_eq!(mail.envelope_to, address);
    assert!(mail.subject.contains("s1"), "{}", mail.subject);

    // The text part is the receipt; the HTML part shows the proof from the attached image.
    let shown = shop.server.get("/v1/sales/t1/receipt", &shop.till).await;
    let proof = proof_of(&shown.text);
    assert!(mail.text.contains("TICKET DÉMATÉRIALISÉ"), "{}", mail.text);
    assert!(
        mail.text.contains("Mug") && mail.text.contains("29,00"),
        "{}",
        mail.text
    );
    assert_eq!(proof_of(&mail.text), proof);
    assert!(mail.html.contains("<img src=\"cid:proof\""), "{}", mail.html);
    assert!(mail.html.contains("29,00"), "{}", mail.html);
    assert_eq!(mail.png_id, "<proof>");
    assert_eq!(
        read_qr_code("code.png", &mail.png),
        proof,
        "the QR code is the ticket's proof"
    );

    // The one-off address is gone once the mail left.
    assert_eq!(shop.server.tables_holding(engine, address).await, Vec::<String>::new());
    let metrics = shop.server.call(reqwest::Method::GET, "/metrics", None, None).await;
    assert!(
        metrics.text.contains("till_email_attempts_total{outcome=\"sent\"}"),
        "{}",
        metrics.text
    );
    assert!(metrics.text.contains("till_email_queued 0"), "{}", metrics.text);
}

async fn a_customer_receives_their_receipt_only_with_their_consent(engine: Engine) {
    let sink = MailSink::start(free_port());
    let shop = Shop::open_with(engine, mail_to(sink.url())).await;
    let admin = shop.server.admin();
    for (id, e_receipt) in [("c-yes", true), ("c-no", false)] {
        let profile = json!({"displayName": id, "email": format!("{id}@example.org"),
            "consent": {"marketingEmail": false, "marketingSms": false, "eReceipt": e_receipt}});
        let put = shop.server.put(&format!("/v1/customers/{id}"), &admin, profile).await;
        assert_eq!(put.status, 201, "{}", put.text);
    }
    for (transaction, customer) in [("t1", json!("c-yes")), ("t2", json!("c-no")), ("t3", Value::Null)] {
        let mut sale = shop.sale(transaction, vec![line("l1", MUG, 1)], 1450);
        sale["customerId"] = customer;
        assert_eq!(shop.finalize(&sale).await.status, 201);
    }

    let queued = send(&shop, "t1", json!({})).await;
    assert_eq!(queued.status, 202, "{}", queued.text);
    assert_eq!(queued.body["recipient"], "customer");
    assert!(queued.body["to"].is_null(), "a customer's address is never shown");
    let id = queued.body["sendId"].as_str().unwrap().to_owned();
    assert_eq!(settled(&shop, "t1", &id).await["state"], "sent");
    let mails = sink.wait_for(1).await;
    assert_eq!(read(&mails[0]).envelope_to, "c-yes@example.org");

    // Without consent, or without a customer, a send needs an address.
    for transaction in ["t2", "t3"] {
        send(&shop, transaction, json!({}))
            .await
            .assert_error(422, "BUSINESS_RULE_VIOLATION");
        assert!(sends(&shop, transaction).await.is_empty());
    }
    let given = send(&shop, "t2", json!({"email": "c-no@example.org"})).await;
    assert_eq!(given.status, 202, "an address given at the till goes: {}", given.text);
    let mails = sink.wait_for(2).await;
    assert_eq!(mails.len(), 2);
}

async fn a_send_asked_again_under_its_id_is_not_queued_twice_and_bad_asks_change_nothing(engine: Engine) {
    // Without a mail server, nothing is queued.
    let plain = Shop::open(engine).await;
    sold(&plain, "t1", vec![line("l1", MUG, 1)]).await;
    send(&plain, "t1", json!({"email": "a@example.org"}))
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(sends(&plain, "t1").await.is_empty());

    let sink = MailSink::start(free_port());
    let shop = Shop::open_with(engine, mail_to(sink.url())).await;
    sold(&shop, "t1", vec![line("l1", MUG, 1)]).await;
    sold(&shop, "t2", vec![line("l1", MUG, 1)]).await;
    let body = json!({"email": "a@example.org", "sendId": "till-send-1"});
    let first = send(&shop, "t1", body.clone()).await;
    assert_eq!(first.status, 202, "{}", first.text);
    assert_eq!(first.body["sendId"], "till-send-1");
    let again = send(&shop, "t1", body.clone()).await;
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.headers["x-idempotent-replay"], "true");
    assert_eq!(again.body["sendId"], "till-send-1");
    send(&shop, "t2", body).await.assert_error(409, "CONFLICT");

    for bad in [
        json!({"email": "not an address"}),
        json!({"email": 42}),
        json!({"sendId": ""}),
    ] {
        let reply = send(&shop, "t1", bad.clone()).await;
        reply.assert_error(400, "VALIDATION_FAILED");
    }
    send(&shop, "nope", json!({"email": "a@example.org"}))
        .await
        .assert_error(404, "NOT_FOUND");
    assert_eq!(settled(&shop, "t1", "till-send-1").await["state"], "sent");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(sink.mails().len(), 1, "one mail for the send asked twice");
    assert_eq!(sends(&shop, "t1").await.len(), 1);
    assert!(sends(&shop, "t2").await.is_empty());
}

async fn a_mail_server_down_while_the_node_restarts_delays_the_mail_which_arrives_once(engine: Engine) {
    let port = free_port();
    let url = format!("smtp://127.0.0.1:{port}");
    let mut shop = Shop::open_with(engine, mail_to(url)).await;
    sold(&shop, "t1", vec![line("l1", MUG, 1)]).await;
    let queued = send(&shop, "t1", json!({"email": "outage@example.org"})).await;
    assert_eq!(queued.status, 202, "{}", queued.text);
    let id = queued.body["sendId"].as_str().unwrap().to_owned();

    // Nothing listens: the attempts fail, and the send waits for the next.
    let deadline = Instant::now() + Duration::from_secs(30);
    let failing = loop {
        let send = sends(&shop, "t1").await.remove(0);
        if send["attempts"].as_u64().unwrap_or(0) >= 2 || Instant::now() > deadline {
            break send;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(failing["state"], "queued", "{failing}");
    assert_eq!(failing["lastFailure"], "unreachable", "{failing}");
    assert!(failing["nextAttemptAt"].is_string(), "{failing}");
    assert_eq!(failing["to"], "o•••@example.org", "held while the mail waits");

    // The node restarts during the outage; then the mail server comes back.
    shop.server.restart().await;
    let sink = MailSink::start(port);
    let sent = settled(&shop, "t1", &id).await;
    assert_eq!(sent["state"], "sent", "{sent}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mails = sink.mails();
    assert_eq!(mails.len(), 1, "the mail arrives once");
    assert_eq!(read(&mails[0]).envelope_to, "outage@example.org");
}

async fn the_consoles_send_button_emails_through_the_same_use_case(engine: Engine) {
    use reqwest::header::{ACCEPT_LANGUAGE, CONTENT_TYPE, COOKIE, ORIGIN};
    let sink = MailSink::start(free_port());
    let shop = Shop::open_with(engine, mail_to(sink.url())).await;
    sold(&shop, "t1", vec![line("l1", MUG, 1)]).await;
    let browser = reqwest::Client::new();
    let cookie = format!("till_console={}", shop.server.admin());
    let page_of = |path: &str| {
        browser
            .get(format!("{}{path}", shop.server.base))
            .header(COOKIE, &cookie)
            .header(ACCEPT_LANGUAGE, "en")
            .send()
    };
    let html = page_of("/console/sales/t1").await.unwrap().text().await.unwrap();
    assert!(
        html.contains(r#"action="/console/sales/t1/receipt/send""#),
        "the send form: {html}"
    );
    let marker = "name=\"csrf\" value=\"";
    let start = html.find(marker).expect("a form token") + marker.len();
    let csrf = &html[start..start + html[start..].find('"').unwrap()];
    let press = |body: String| {
        browser
            .post(format!("{}/console/sales/t1/receipt/send", shop.server.base))
            .header(COOKIE, &cookie)
            .header(ACCEPT_LANGUAGE, "en")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(ORIGIN, shop.server.base.clone())
            .body(body)
            .send()
    };
    // Without an address, and the sale without a customer: refused, nothing queued.
    let refused = press(format!("csrf={csrf}&email=")).await.unwrap();
    assert_eq!(refused.status(), 422);
    assert!(sends(&shop, "t1").await.is_empty());
    // A form without its token sends nothing.
    let forged = press("csrf=nope&email=jeanne%40example.org".to_owned()).await.unwrap();
    assert_eq!(forged.status(), 403);
    assert!(sends(&shop, "t1").await.is_empty());

    let pressed = press(format!("csrf={csrf}&email=jeanne%40example.org")).await.unwrap();
    assert_eq!(pressed.status(), 200);
    let pressed = pressed.text().await.unwrap();
    assert!(pressed.contains("queued for e-mail"), "{pressed}");
    let listed = sends(&shop, "t1").await;
    assert_eq!(listed.len(), 1);
    let id = listed[0]["sendId"].as_str().unwrap().to_owned();
    assert_eq!(settled(&shop, "t1", &id).await["state"], "sent");
    let mails = sink.wait_for(1).await;
    assert_eq!(read(&mails[0]).envelope_to, "jeanne@example.org");
    let html = page_of("/console/sales/t1").await.unwrap().text().await.unwrap();
    assert!(
        html.contains(&format!(r#"data-send="{id}" data-state="sent""#)),
        "{html}"
    );
    assert!(!html.contains("jeanne"), "the address is gone once sent: {html}");
}

async fn erasing_a_customer_lets_go_of_a_receipt_waiting_for_their_address(engine: Engine) {
    // Nothing listens: the mail waits, its address held.
    let shop = Shop::open_with(engine, mail_to(format!("smtp://127.0.0.1:{}", free_port()))).await;
    let admin = shop.server.admin();
    let address = "camille.durand@example.org";
    let profile = json!({"displayName": "Camille Durand", "email": address,
        "consent": {"marketingEmail": false, "marketingSms": false, "eReceipt": false}});
    assert_eq!(shop.server.put("/v1/customers/c-1", &admin, profile).await.status, 201);
    sold(&shop, "t1", vec![line("l1", MUG, 1)]).await;
    let queued = send(&shop, "t1", json!({"email": "Camille.Durand@example.org"})).await;
    assert_eq!(queued.status, 202, "{}", queued.text);
    let holding = shop.server.tables_holding(engine, address).await;
    assert!(holding.contains(&"receipt_sends".to_owned()), "{holding:?}");

    let erased = shop.server.post("/v1/customers/c-1/erase", &admin, json!({})).await;
    assert_eq!(erased.status, 200, "{}", erased.text);
    let given_up = sends(&shop, "t1").await.remove(0);
    assert_eq!(given_up["state"], "failed", "{given_up}");
    assert_eq!(given_up["lastFailure"], "noAddress", "{given_up}");
    assert!(given_up["to"].is_null(), "{given_up}");
    assert_eq!(shop.server.tables_holding(engine, address).await, Vec::<String>::new());
}
