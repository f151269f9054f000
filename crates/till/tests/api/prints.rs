//! Receipts shown and printed: reading a receipt seals nothing, however often; a print is a
//! write that records the original, then DUPLICATA 1, 2... each sealed in the register's
//! duplicate chain; a print sent again under its print id is answered, not made again; the
//! console's sale page prints through the same use case. Every format carries the ticket's
//! proof, which verifies against the published keys: the text's last lines, the ESC/POS bytes'
//! QR command (the bytes read back by a decoder of their own here), the HTML's QR code (read
//! by Debian's `zbarimg`).

use crate::harness::{Reply, TestServer};
use crate::harness::{Shop, line, read_qr_code};
use crate::on_both_engines;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, COOKIE, ORIGIN};
use serde_json::{Value, json};

on_both_engines!(
    showing_a_receipt_seals_nothing_and_prints_seal_an_original_then_duplicatas,
    a_print_sent_again_under_its_id_is_answered_not_made_again,
    the_consoles_print_button_prints_through_the_same_use_case,
    every_format_carries_the_mentions_french_law_asks,
    every_format_carries_the_tickets_proof_and_escpos_reads_back_as_the_text,
    a_printed_receipt_links_to_its_public_page_which_verifies_its_proof,
);

const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);
const BAGUETTE: (&str, i64, f64) = ("Baguette", 130, 5.5);

/// Sells `lines` on the shop's till at the server's price, paid by card.
pub(crate) async fn sold(shop: &Shop, transaction: &str, lines: Vec<Value>) {
    let cart = json!({"storeId": "s1", "cart": {"lines": lines.clone(), "freeLineSequence": 0}});
    let quoted = shop.server.post("/v1/checkout/price", &shop.till, cart).await;
    assert_eq!(quoted.status, 200, "{}", quoted.text);
    let total = quoted.body["totals"]["total"].as_i64().unwrap();
    let reply = shop.finalize(&shop.sale(transaction, lines, total)).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
}

async fn duplicates(shop: &Shop) -> usize {
    let path = "/v1/fiscal/registers/r1/chains/duplicate";
    let reply = shop
        .server
        .get(path, &shop.server.token("auditor", "pos.fiscal.read"))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.body["entries"].as_array().map_or(0, Vec::len)
}

async fn print(shop: &Shop, token: &str, body: Option<Value>) -> Reply {
    shop.server
        .call(reqwest::Method::POST, "/v1/sales/t1/prints", Some(token), body)
        .await
}

fn header(reply: &Reply, name: &str) -> String {
    reply.headers[name].to_str().unwrap().to_owned()
}

async fn showing_a_receipt_seals_nothing_and_prints_seal_an_original_then_duplicatas(engine: crate::harness::Engine) {
    let shop = Shop::open(engine).await;
    sold(&shop, "t1", vec![line("l1", MUG, 1), line("l2", BAGUETTE, 3)]).await;
    // Shown twice (a proxy's prefetch, a retried GET): nothing is recorded, nothing sealed.
    for _ in 0..2 {
        let shown = shop.server.get("/v1/sales/t1/receipt", &shop.till).await;
        assert_eq!(shown.status, 200, "{}", shown.text);
        assert!(header(&shown, "content-type").starts_with("text/plain"));
        assert_eq!(header(&shown, "x-till-prints"), "0");
        assert!(
            shown.text.contains("NE VAUT PAS TICKET") && shown.text.contains("Jamais imprimé"),
            "{}",
            shown.text
        );
        assert!(!shown.text.contains("DUPLICATA"), "{}", shown.text);
        assert!(shown.headers.get("x-till-print").is_none());
    }
    assert_eq!(duplicates(&shop).await, 0, "showing a receipt seals nothing");

    // The first print is the original; the second DUPLICATA 1, sealed.
    let first = print(&shop, &shop.till, None).await;
    assert_eq!(first.status, 201, "{}", first.text);
    assert_eq!(header(&first, "x-till-print"), "1");
    assert!(
        first.text.contains("TOTAL TTC") && !first.text.contains("DUPLICATA"),
        "{}",
        first.text
    );
    assert!(!first.text.contains("NE VAUT PAS TICKET"));
    assert!(first.text.lines().all(|l| l.chars().count() <= 48), "{}", first.text);
    assert_eq!(duplicates(&shop).await, 0, "the original is no reprint");
    let second = print(&shop, &shop.till, Some(json!({}))).await;
    assert_eq!(second.status, 201, "{}", second.text);
    assert_eq!(header(&second, "x-till-print"), "2");
    assert!(second.text.contains("DUPLICATA n° 1"), "{}", second.text);
    assert_eq!(duplicates(&shop).await, 1);

    // Shown again, it lists both prints and still seals nothing.
    let shown = shop.server.get("/v1/sales/t1/receipt", &shop.till).await;
    assert_eq!(header(&shown, "x-till-prints"), "2");
    for expected in [
        "Imprimé 2 fois",
        "Impression 1 : original",
        "Impression 2 : DUPLICATA n° 1",
    ] {
        assert!(shown.text.contains(expected), "{expected} missing from\n{}", shown.text);
    }
    assert!(shown.text.lines().all(|l| l.chars().count() <= 48), "{}", shown.text);
    let html = shop
        .server
        .send(|http, base| {
            http.get(format!("{base}/v1/sales/t1/receipt"))
                .bearer_auth(&shop.till)
                .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8")
        })
        .await;
    assert!(header(&html, "content-type").starts_with("text/html"), "{}", html.text);
    assert!(html.text.contains("Impression 2 : DUPLICATA n° 1"), "{}", html.text);
    let plain = shop
        .server
        .send(|http, base| {
            http.get(format!("{base}/v1/sales/t1/receipt?format=text"))
                .bearer_auth(&shop.till)
                .header("accept", "text/html")
        })
        .await;
    assert!(
        header(&plain, "content-type").starts_with("text/plain"),
        "format wins over Accept"
    );
    let printed_html = shop
        .server
        .send(|http, base| {
            http.post(format!("{base}/v1/sales/t1/prints"))
                .bearer_auth(&shop.till)
                .header("accept", "text/html")
        })
        .await;
    assert_eq!(printed_html.status, 201, "{}", printed_html.text);
    assert!(header(&printed_html, "content-type").starts_with("text/html"));
    assert!(printed_html.text.contains("DUPLICATA n° 2"), "{}", printed_html.text);
    assert_eq!(duplicates(&shop).await, 2);

    // Refusals change nothing.
    for path in ["/v1/sales/nope/receipt", "/v1/sales/nope/prints"] {
        let method = if path.ends_with("prints") {
            reqwest::Method::POST
        } else {
            reqwest::Method::GET
        };
        shop.server
            .call(method, path, Some(&shop.till), None)
            .await
            .assert_error(404, "NOT_FOUND");
    }
    shop.server
        .get("/v1/sales/t1/receipt?format=pdf", &shop.till)
        .await
        .assert_error(400, "VALIDATION_FAILED");
    let unreadable = print(&shop, &shop.till, Some(json!({"printId": ""}))).await;
    unreadable.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(unreadable.fields(), ["printId"]);
    let without_scope = shop.server.token("bo", "pos.catalog.read");
    print(&shop, &without_scope, None).await.assert_error(403, "FORBIDDEN");
    // A till of another store reaches none of this store's receipts.
    shop.server.provision_store("s2").await;
    let (_, elsewhere) = shop.server.open_session("s2", "r2", "mathis", "9876").await;
    print(&shop, &elsewhere, None).await.assert_error(404, "NOT_FOUND");
    shop.server
        .get("/v1/sales/t1/receipt", &elsewhere)
        .await
        .assert_error(404, "NOT_FOUND");
    assert_eq!(duplicates(&shop).await, 2);
    assert_eq!(shop.verify("r1").await["ok"], true);
    shop.server.stop().await;
}

async fn a_print_sent_again_under_its_id_is_answered_not_made_again(engine: crate::harness::Engine) {
    let shop = Shop::open(engine).await;
    sold(&shop, "t1", vec![line("l1", MUG, 1)]).await;
    let original = print(&shop, &shop.till, Some(json!({"printId": "till-1-print-1"}))).await;
    assert_eq!(original.status, 201, "{}", original.text);
    let again = print(&shop, &shop.till, Some(json!({"printId": "till-1-print-1"}))).await;
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(header(&again, "x-idempotent-replay"), "true");
    assert_eq!(header(&again, "x-till-print"), "1");
    assert_eq!(again.text, original.text);
    let reprint = print(&shop, &shop.till, Some(json!({"printId": "till-1-print-2"}))).await;
    assert_eq!(reprint.status, 201, "{}", reprint.text);
    assert!(reprint.text.contains("DUPLICATA n° 1"));
    for _ in 0..2 {
        let replayed = print(&shop, &shop.till, Some(json!({"printId": "till-1-print-2"}))).await;
        assert_eq!(replayed.status, 200, "{}", replayed.text);
        assert_eq!(header(&replayed, "x-till-print"), "2");
        assert!(replayed.text.contains("DUPLICATA n° 1"));
    }
    assert_eq!(duplicates(&shop).await, 1, "one reprint, however often it was sent");
    let shown = shop.server.get("/v1/sales/t1/receipt", &shop.till).await;
    assert_eq!(header(&shown, "x-till-prints"), "2");
    shop.server.stop().await;
}

async fn the_consoles_print_button_prints_through_the_same_use_case(engine: crate::harness::Engine) {
    let shop = Shop::open(engine).await;
    sold(&shop, "t 1/x#y", vec![line("l1", MUG, 1)]).await;
    let server: &TestServer = &shop.server;
    let token = server.admin();
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let cookie = format!("till_console={token}");
    let page = browser
        .get(format!("{}/console/sales/t%201%2Fx%23y", server.base))
        .header(COOKIE, &cookie)
        .header(reqwest::header::ACCEPT_LANGUAGE, "en")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(
        html.contains(r#"action="/console/sales/t%201%2Fx%23y/prints""#),
        "the print form, its id encoded: {html}"
    );
    assert!(html.contains("Jamais imprimé"), "{html}");
    assert_eq!(duplicates(&shop).await, 0, "viewing the sale page seals nothing");
    let marker = "name=\"csrf\" value=\"";
    let start = html.find(marker).expect("a form token") + marker.len();
    let csrf = &html[start..start + html[start..].find('"').unwrap()];
    let press = || {
        browser
            .post(format!("{}/console/sales/t%201%2Fx%23y/prints", server.base))
            .header(COOKIE, &cookie)
            .header(reqwest::header::ACCEPT_LANGUAGE, "en")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(ORIGIN, server.base.clone())
            .body(format!("csrf={csrf}"))
            .send()
    };
    let first = press().await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    let first = first.text().await.unwrap();
    assert!(first.contains("Print 1 recorded: the original"), "{first}");
    assert!(!first.contains("DUPLICATA n°"), "{first}");
    let second = press().await.unwrap().text().await.unwrap();
    assert!(second.contains("DUPLICATA n° 1"), "{second}");
    assert_eq!(duplicates(&shop).await, 1);
    // A form without its token prints nothing.
    let forged = browser
        .post(format!("{}/console/sales/t%201%2Fx%23y/prints", server.base))
        .header(COOKIE, &cookie)
        .header(reqwest::header::ACCEPT_LANGUAGE, "en")
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(ORIGIN, server.base.clone())
        .body("csrf=nope")
        .send()
        .await
        .unwrap();
    assert_ne!(forged.status(), StatusCode::OK);
    assert_eq!(duplicates(&shop).await, 1);
    let shown = shop.server.get("/v1/sales/t%201%2Fx%23y/receipt", &shop.till).await;
    assert_eq!(header(&shown, "x-till-prints"), "2");
    shop.server.stop().await;
}

/// Whether `receipt` says when it was issued: `Ticket {number} du dd/mm/yyyy hh:mm`.
fn dated(receipt: &str, number: &str) -> bool {
    let Some((_, after)) = receipt.split_once(&format!("Ticket {number} du ")) else {
        return false;
    };
    let when: Vec<char> = after.chars().take(16).collect();
    let digits = [0, 1, 3, 4, 6, 7, 8, 9, 11, 12, 14, 15];
    when.len() == 16
        && digits.iter().all(|&i| when[i].is_ascii_digit())
        && (when[2], when[5], when[10], when[13]) == ('/', '/', ' ', ':')
}

/// Every mention French law asks a receipt to carry, in each format: the seller (legal name,
/// address, SIRET, VAT number), the register, the ticket's number and time, each line with its
/// quantity, unit price and VAT rate, the totals per VAT rate, the payment method, and on a
/// reprint DUPLICATA with its number.
async fn every_format_carries_the_mentions_french_law_asks(engine: crate::harness::Engine) {
    let shop = Shop::open(engine).await;
    let identity = json!({"name": "Le Marais", "siret": "73282932000074", "legalName": "Till Épicerie SAS",
        "address": {"line1": "12 rue des Archives", "postalCode": "75004", "city": "Paris", "country": "FR"},
        "siren": "732829320", "vatNumber": "FR44732829320"});
    let put = shop.server.put("/v1/stores/s1", &shop.server.admin(), identity).await;
    assert_eq!(put.status, 200, "{}", put.text);
    sold(&shop, "t1", vec![line("l1", MUG, 1), line("l2", BAGUETTE, 3)]).await;
    let mentions = [
        "Till Épicerie SAS",
        "12 rue des Archives",
        "75004 Paris",
        "SIRET 73282932000074",
        "TVA FR44732829320",
        "Caisse r1",
        // Each line: its label, quantity and unit price, its amount with its rate's letter.
        "Mug",
        "1 x 14,50",
        "14,50 A",
        "Baguette",
        "3 x 1,30",
        "3,90 B",
        // The totals per VAT rate, by letter: the rate, then without VAT, VAT, with VAT.
        "A 20,00 %",
        "12,08",
        "2,42",
        "B 5,50 %",
        "3,70",
        "0,20",
        "TOTAL TTC",
        "18,40",
        "Carte bancaire",
    ];
    let render = |accept: &'static str, print: bool| {
        let (http, base, token) = (shop.server.http.clone(), shop.server.base.clone(), shop.till.clone());
        async move {
            let request = if print {
                http.post(format!("{base}/v1/sales/t1/prints"))
            } else {
                http.get(format!("{base}/v1/sales/t1/receipt"))
            };
            let response = request
                .bearer_auth(token)
                .header("accept", accept)
                .send()
                .await
                .unwrap();
            assert!(response.status().is_success(), "{accept}: {}", response.status());
            let bytes = response.bytes().await.unwrap().to_vec();
            match accept {
                "application/vnd.escpos" => read_escpos(&bytes).lines.join("\n"),
                _ => String::from_utf8(bytes).unwrap(),
            }
        }
    };
    let formats = ["text/plain", "text/html", "application/vnd.escpos"];
    for format in formats {
        let receipt = render(format, false).await;
        for mention in mentions {
            assert!(receipt.contains(mention), "{format}: {mention} in {receipt}");
        }
        assert!(
            dated(&receipt, "T-t1"),
            "{format}: the ticket's number and time in {receipt}"
        );
    }
    // The original print (made here as ESC/POS), then a DUPLICATA in each format.
    assert!(!render("application/vnd.escpos", true).await.contains("DUPLICATA"));
    for (number, format) in formats.into_iter().enumerate() {
        let reprint = render(format, true).await;
        let mark = format!("DUPLICATA n° {}", number + 1);
        assert!(reprint.contains(&mark), "{format}: {mark} in {reprint}");
        assert!(reprint.contains("SIRET 73282932000074"), "{format}: {reprint}");
    }
    shop.server.stop().await;
}

/// What a receipt printer would make of ESC/POS bytes: its lines of text (code page 858), which
/// of them were bold, what its QR command stored, and whether the bytes began with an
/// initialisation and ended with a cut. Written here from the command set, apart from the
/// server's encoder.
#[derive(Debug, Default)]
struct Printed {
    lines: Vec<String>,
    bold: Vec<String>,
    qr: Vec<String>,
    initialised: bool,
    cut_last: bool,
    code_page: Option<u8>,
}

fn read_escpos(bytes: &[u8]) -> Printed {
    let mut printed = Printed {
        initialised: bytes.starts_with(b"\x1b@"),
        ..Printed::default()
    };
    let (mut line, mut bold, mut line_bold) = (Vec::new(), false, false);
    let mut at = 0;
    while at < bytes.len() {
        printed.cut_last = false;
        match bytes[at] {
            b'\n' => {
                let text = oem_cp::decode_string_complete_table(&line, &oem_cp::code_table::DECODING_TABLE_CP858);
                if line_bold {
                    printed.bold.push(text.clone());
                }
                printed.lines.push(text);
                line.clear();
                line_bold = false;
                at += 1;
            }
            0x1b => {
                let (command, argument) = (bytes[at + 1], bytes.get(at + 2).copied());
                match command {
                    b'@' => at += 2,
                    b'E' => {
                        bold = argument == Some(1);
                        at += 3;
                    }
                    b't' => {
                        printed.code_page = argument;
                        at += 3;
                    }
                    b'a' | b'd' => at += 3,
                    other => panic!("ESC {other:#x} is not a command a receipt uses"),
                }
            }
            0x1d if bytes[at + 1] == b'(' && bytes[at + 2] == b'k' => {
                let length = usize::from(u16::from_le_bytes([bytes[at + 3], bytes[at + 4]]));
                let body = &bytes[at + 5..at + 5 + length];
                // Function 80 (cn 49, fn 80, m 48) stores the symbol's data.
                if body.starts_with(&[49, 80, 48]) {
                    printed.qr.push(String::from_utf8(body[3..].to_vec()).unwrap());
                }
                at += 5 + length;
            }
            0x1d if bytes[at + 1] == b'V' => {
                at += if bytes[at + 2] == b'A' { 4 } else { 3 };
                printed.cut_last = true;
            }
            byte => {
                line.push(byte);
                line_bold |= bold;
                at += 1;
            }
        }
    }
    assert!(line.is_empty(), "text after the last line: {line:?}");
    printed
}

/// A print of the sale `t1` from the shop's till, asked as ESC/POS bytes with `query`.
async fn print_escpos(shop: &Shop, query: &str) -> reqwest::Response {
    shop.server
        .http
        .post(format!("{}/v1/sales/t1/prints{query}", shop.server.base))
        .bearer_auth(&shop.till)
        .header("accept", "application/vnd.escpos")
        .send()
        .await
        .unwrap()
}

/// The proof's text from a text receipt: the lines after its heading, joined.
pub(crate) fn proof_of(text: &str) -> String {
    let (_, proof) = text.split_once("Preuve du ticket :\n").expect("a proof heading");
    let proof = proof.split("Ticket en ligne :\n").next().unwrap_or_default();
    proof.lines().collect()
}

/// What zbarimg reads in the QR codes an HTML receipt draws, in their order.
fn read_qr_codes(html: &str) -> Vec<String> {
    html.match_indices("<svg")
        .map(|(start, _)| {
            let end = start + html[start..].find("</svg>").expect("a whole SVG") + "</svg>".len();
            read_qr_code("code.svg", &html[start..end])
        })
        .collect()
}

async fn every_format_carries_the_tickets_proof_and_escpos_reads_back_as_the_text(engine: crate::harness::Engine) {
    use till_core::fiscal::archive::KeySet;
    use till_core::fiscal::proof::verify;
    let shop = Shop::open(engine).await;
    let identity = json!({"name": "Le Marais", "legalName": "Till Épicerie SAS",
        "address": {"line1": "12 rue des Archives", "postalCode": "75004", "city": "Paris", "country": "FR"}});
    let put = shop.server.put("/v1/stores/s1", &shop.server.admin(), identity).await;
    assert_eq!(put.status, 200, "{}", put.text);
    sold(&shop, "t1", vec![line("l1", MUG, 1), line("l2", BAGUETTE, 3)]).await;
    let keys = shop.server.get("/v1/fiscal/keys", &shop.till).await;
    assert_eq!(keys.status, 200, "{}", keys.text);
    let keys = KeySet::from_json(keys.text.as_bytes()).unwrap();
    let fetch = |path: String, accept: &'static str| {
        let (http, base, token) = (shop.server.http.clone(), shop.server.base.clone(), shop.till.clone());
        async move {
            let response = http
                .get(format!("{base}{path}"))
                .bearer_auth(token)
                .header("accept", accept)
                .send()
                .await
                .unwrap();
            let status = response.status();
            let kind = response.headers()[CONTENT_TYPE].to_str().unwrap().to_owned();
            (status, kind, response.bytes().await.unwrap().to_vec())
        }
    };

    let mut proofs = Vec::new();
    for columns in [48, 42] {
        let (status, kind, text) = fetch(format!("/v1/sales/t1/receipt?columns={columns}"), "text/plain").await;
        assert_eq!((status, kind.as_str()), (StatusCode::OK, "text/plain; charset=utf-8"));
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.lines().all(|l| l.chars().count() <= columns),
            "{columns} columns:\n{text}"
        );
        let proof = proof_of(&text);
        let (ticket, _) = verify(&proof, &keys).unwrap_or_else(|e| panic!("{proof}: {e}"));
        assert_eq!(
            (ticket.register_id.as_str(), ticket.total_cents),
            ("r1", 1450 + 3 * 130)
        );

        let (status, kind, bytes) = fetch(
            format!("/v1/sales/t1/receipt?columns={columns}"),
            "application/vnd.escpos",
        )
        .await;
        assert_eq!((status, kind.as_str()), (StatusCode::OK, "application/vnd.escpos"));
        let printed = read_escpos(&bytes);
        assert!(printed.initialised && printed.cut_last, "{printed:?}");
        assert_eq!(printed.code_page, Some(19), "code page 858");
        let (before_proof, _) = text.split_once("Preuve du ticket :\n").unwrap();
        assert_eq!(printed.lines, before_proof.lines().collect::<Vec<_>>());
        assert!(printed.lines.iter().any(|l| l.contains("Till Épicerie SAS")));
        assert_eq!(printed.bold.len(), 1, "{:?}", printed.bold);
        assert!(printed.bold[0].starts_with("TOTAL TTC"), "{:?}", printed.bold);
        assert_eq!(
            printed.qr,
            std::slice::from_ref(&proof),
            "the QR command stores the proof"
        );
        proofs.push(proof);
    }
    assert_eq!(proofs[0], proofs[1], "the same proof at every width");

    // The HTML draws the proof as a QR code that a reader decodes to the same text.
    let (status, _, html) = fetch("/v1/sales/t1/receipt".to_owned(), "text/html").await;
    assert_eq!(status, StatusCode::OK);
    let html = String::from_utf8(html).unwrap();
    assert_eq!(read_qr_codes(&html), std::slice::from_ref(&proofs[0]));

    // A print is the same ticket: the original, then a DUPLICATA with its sign and number in
    // the printer's code page, the same proof in its QR code.
    for (number, mark) in [(1, None), (2, Some("*** DUPLICATA n° 1 ***"))] {
        let reply = print_escpos(&shop, "?columns=42").await;
        assert_eq!(reply.status(), StatusCode::CREATED);
        assert_eq!(reply.headers()["x-till-print"], number.to_string().as_str());
        let printed = read_escpos(&reply.bytes().await.unwrap());
        assert_eq!(printed.qr, [proofs[0].clone()]);
        let duplicata = printed.lines.iter().find(|l| l.contains("DUPLICATA"));
        assert_eq!(duplicata.map(|l| l.trim()), mark, "{:?}", printed.lines);
    }

    // A width no printer has is refused, naming the parameter.
    let refused = shop.server.get("/v1/sales/t1/receipt?columns=50", &shop.till).await;
    refused.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(refused.fields(), ["columns"]);
    shop.server.stop().await;
}

/// With a public address, a print links the receipt to its page (a second QR code, its address
/// on a text receipt), the same link on every print; the page needs no credentials, shows the
/// receipt and says its proof verifies; a token no print made finds nothing; a flood of pages
/// is cut short with 429.
async fn a_printed_receipt_links_to_its_public_page_which_verifies_its_proof(engine: crate::harness::Engine) {
    let shop = Shop::open_with(engine, |config| {
        config.public_url = Some("https://receipts.example.com/".to_owned());
    })
    .await;
    sold(&shop, "t1", vec![line("l1", MUG, 1), line("l2", BAGUETTE, 3)]).await;
    let shown = shop.server.get("/v1/sales/t1/receipt", &shop.till).await;
    assert!(
        !shown.text.contains("Ticket en ligne"),
        "no link before a print: {}",
        shown.text
    );

    let first = print(&shop, &shop.till, None).await;
    assert_eq!(first.status, 201, "{}", first.text);
    let (_, link) = first
        .text
        .split_once("Ticket en ligne :\n")
        .expect("a link on the print");
    let link: String = link.lines().collect();
    let token = link
        .strip_prefix("https://receipts.example.com/r/")
        .unwrap_or_else(|| panic!("{link}"));
    assert_eq!(token.len(), 22, "{token}");

    // A DUPLICATA in HTML and one in ESC/POS carry the same link, as a second QR code.
    let proof = proof_of(&first.text);
    let html = shop
        .server
        .send(|client, base| {
            client
                .post(format!("{base}/v1/sales/t1/prints"))
                .bearer_auth(&shop.till)
                .header("accept", "text/html")
        })
        .await;
    assert_eq!(html.status, 201, "{}", html.text);
    assert_eq!(read_qr_codes(&html.text), [proof.clone(), link.clone()]);
    let escpos = print_escpos(&shop, "").await;
    assert_eq!(read_escpos(&escpos.bytes().await.unwrap()).qr, [proof, link.clone()]);

    // The page, without credentials.
    let page = shop
        .server
        .http
        .get(format!("{}/r/{token}", shop.server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.headers()[CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
    let page = page.text().await.unwrap();
    for shown in [
        "Preuve vérifiée",
        "la caisse r1",
        "de 18,40 EUR",
        "NE VAUT PAS TICKET",
        "TOTAL TTC",
    ] {
        assert!(page.contains(shown), "{shown} in {page}");
    }
    for unknown in ["AAAAAAAAAAAAAAAAAAAAAA", "short", "t1"] {
        let reply = shop
            .server
            .send(|client, base| client.get(format!("{base}/r/{unknown}")))
            .await;
        reply.assert_error(404, "NOT_FOUND");
    }

    // Many pages at once: the node answers its burst, then 429 with Retry-After.
    let asks = (0..60).map(|_| {
        let (http, base) = (shop.server.http.clone(), shop.server.base.clone());
        let path = format!("{base}/r/{token}");
        async move { http.get(path).send().await.unwrap() }
    });
    let answers = futures::future::join_all(asks).await;
    let limited: Vec<_> = answers
        .iter()
        .filter(|a| a.status() == StatusCode::TOO_MANY_REQUESTS)
        .collect();
    assert!(!limited.is_empty(), "some of 60 pages at once refused");
    assert!(limited.iter().all(|a| a.headers().contains_key("retry-after")));
    assert!(
        answers
            .iter()
            .all(|a| a.status() == StatusCode::OK || a.status() == StatusCode::TOO_MANY_REQUESTS)
    );
    shop.server.stop().await;
}
