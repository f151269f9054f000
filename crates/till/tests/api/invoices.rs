//! Invoices for business customers: issued for committed sales of a store with its seller
//! identity, their lines, VAT and totals the sales' to the cent; answered as JSON and as a
//! Factur-X PDF holding the XML; numbered without gaps per store and year under concurrent
//! requests; a sale invoiced once; an id answered again; every bad input and refusal in the
//! envelope; credit invoices for returns of invoiced sales; the journal's seal; e-reporting
//! and the bundle with invoiced sales; scopes; agents read invoices but never issue them.

use crate::harness::{BAGUETTE, BOOK, Engine, MUG, Reply, Shop, line};
use crate::on_both_engines;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

on_both_engines!(
    an_invoice_of_one_sale_and_of_several_adds_up_to_the_sales,
    the_pdf_holds_the_xml_of_the_invoice,
    numbers_have_no_gap_under_concurrent_requests,
    a_sale_is_invoiced_once_and_an_id_answers_again,
    every_bad_input_and_refusal_is_answered_in_the_envelope,
    a_partial_return_of_an_invoiced_sale_is_credited_citing_the_invoice,
    the_journal_seals_each_invoice_and_still_verifies,
    e_reporting_lists_invoiced_sales_apart_and_the_bundle_reconciles,
    scopes_guard_invoices_and_agents_only_read_them,
    the_consoles_sale_page_issues_the_invoice_and_links_its_pdf,
);

const START: &str = "2026-11-24T09:00:00Z";

fn identity() -> Value {
    json!({"name": "s1", "siret": "73282932000074", "legalName": "Till Épicerie SAS",
           "address": {"line1": "12 rue des Archives", "postalCode": "75004", "city": "Paris", "country": "FR"},
           "siren": "732829320", "vatNumber": "FR44732829320"})
}

fn buyer() -> Value {
    json!({"name": "Boulangerie Martin SARL", "siren": "303265045", "vatNumber": "FR40303265045",
           "address": {"line1": "3 rue du Four", "postalCode": "75006", "city": "Paris", "country": "FR"}})
}

/// The shop of the other tests, its store with a complete seller identity.
async fn shop(engine: Engine) -> Shop {
    let shop = Shop::open_at(engine, START.parse().unwrap(), |_| {}).await;
    let reply = shop.server.put("/v1/stores/s1", &shop.server.admin(), identity()).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    shop
}

/// Sells `lines` at the server's price, paid by card; answers the total.
async fn sell(shop: &Shop, transaction: &str, lines: Vec<Value>) -> i64 {
    let cart = json!({"storeId": "s1", "cart": {"lines": lines.clone(), "freeLineSequence": 0}});
    let quoted = shop.server.post("/v1/checkout/price", &shop.till, cart).await;
    assert_eq!(quoted.status, 200, "{}", quoted.text);
    let total = quoted.body["totals"]["total"].as_i64().unwrap();
    let reply = shop.finalize(&shop.sale(transaction, lines, total)).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    total
}

fn writer(shop: &Shop) -> String {
    shop.server.token("office", "pos.invoices.write")
}

async fn issue(shop: &Shop, invoice: &str, tickets: &[&str]) -> Reply {
    let body = json!({"invoiceId": invoice, "storeId": "s1", "transactionIds": tickets, "buyer": buyer()});
    shop.server.post("/v1/invoices", &writer(shop), body).await
}

/// A sale's lines as `GET /v1/sales/{id}/lines` explains them.
async fn explained(shop: &Shop, transaction: &str) -> Value {
    let reply = shop
        .server
        .get(
            &format!("/v1/sales/{transaction}/lines"),
            &shop.server.token("clerk", "pos.sales.read"),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.body
}

async fn an_invoice_of_one_sale_and_of_several_adds_up_to_the_sales(engine: Engine) {
    let shop = shop(engine).await;
    let t1 = sell(&shop, "t1", vec![line("l1", MUG, 1), line("l2", BAGUETTE, 3)]).await;
    let t2 = sell(&shop, "t2", vec![line("l1", BOOK, 2)]).await;
    let t3 = sell(&shop, "t3", vec![line("l1", MUG, 2), line("l2", BOOK, 1)]).await;

    let one = issue(&shop, "inv-1", &["t1"]).await;
    assert_eq!(one.status, 201, "{}", one.text);
    assert_eq!(one.body["number"], "F-s1-2026-000001");
    assert_eq!(one.body["kind"], "invoice");
    assert_eq!(one.body["issuedOn"], "2026-11-24");
    assert_eq!(one.body["seller"]["name"], "Till Épicerie SAS");
    assert_eq!(one.body["seller"]["siren"], "732829320");
    assert_eq!(one.body["buyer"]["vatNumber"], "FR40303265045");
    assert_eq!(one.body["totals"]["withVatCents"], t1);
    assert_eq!(one.body["totals"]["dueCents"], 0);
    // Each line's net with VAT and VAT are the sale's, as its explanation gives them.
    let lines = explained(&shop, "t1").await;
    for (invoiced, sold) in one.body["lines"]
        .as_array()
        .unwrap()
        .iter()
        .zip(lines["lines"].as_array().unwrap())
    {
        assert_eq!(invoiced["netWithVatCents"], sold["netCents"], "{invoiced} {sold}");
        assert_eq!(invoiced["vatCents"], sold["vatCents"], "{invoiced} {sold}");
        assert_eq!(invoiced["quantity"], sold["quantity"]);
        let (net, vat) = (
            invoiced["netCents"].as_i64().unwrap(),
            invoiced["vatCents"].as_i64().unwrap(),
        );
        assert_eq!(net + vat, invoiced["netWithVatCents"].as_i64().unwrap());
    }
    let vat_of = |body: &Value| -> Vec<(String, i64)> {
        body["vat"]
            .as_array()
            .unwrap()
            .iter()
            .map(|rate| (rate["vatRate"].to_string(), rate["vatCents"].as_i64().unwrap()))
            .collect()
    };
    assert_eq!(vat_of(&one.body), vec![("20".to_owned(), 242), ("5.5".to_owned(), 20)]);
    let totals = &one.body["totals"];
    assert_eq!(
        totals["withoutVatCents"].as_i64().unwrap() + totals["vatCents"].as_i64().unwrap(),
        t1
    );

    let several = issue(&shop, "inv-2", &["t2", "t3"]).await;
    assert_eq!(several.status, 201, "{}", several.text);
    assert_eq!(several.body["number"], "F-s1-2026-000002");
    assert_eq!(several.body["totals"]["withVatCents"], t2 + t3);
    let tickets: Vec<&str> = several.body["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["transactionId"].as_str().unwrap())
        .collect();
    assert_eq!(tickets, ["t2", "t3"]);
    assert_eq!(several.body["lines"].as_array().unwrap().len(), 3);
    let vat_sum: i64 = vat_of(&several.body).iter().map(|(_, vat)| vat).sum();
    assert_eq!(vat_sum, several.body["totals"]["vatCents"].as_i64().unwrap());

    // Read back as issued, byte for byte, and listed newest first.
    let read = shop.server.get("/v1/invoices/inv-2", &writer(&shop)).await;
    assert_eq!(read.status, 200);
    assert_eq!(read.text, several.text);
    let listed = shop.server.get("/v1/invoices?storeId=s1&limit=1", &writer(&shop)).await;
    assert_eq!(listed.status, 200, "{}", listed.text);
    assert_eq!(listed.body["items"][0]["number"], "F-s1-2026-000002");
    let next = listed.body["nextCursor"].as_str().unwrap().to_owned();
    let rest = shop
        .server
        .get(
            &format!("/v1/invoices?storeId=s1&limit=1&cursor={next}"),
            &writer(&shop),
        )
        .await;
    assert_eq!(rest.body["items"][0]["number"], "F-s1-2026-000001");
    assert_eq!(rest.body["items"][0]["transactionIds"], json!(["t1"]));
    assert_eq!(rest.body["nextCursor"], Value::Null);
    let later = shop.server.get("/v1/invoices?from=2026-11-25", &writer(&shop)).await;
    assert_eq!(later.body["items"], json!([]));
}

/// The XML a PDF embeds: krilla writes the file uncompressed, as it came.
fn embedded_xml(pdf: &[u8]) -> &[u8] {
    let start = pdf.windows(5).position(|w| w == b"<?xml").expect("an XML in the PDF");
    let end_tag = b"</rsm:CrossIndustryInvoice>";
    let end = pdf[start..]
        .windows(end_tag.len())
        .position(|w| w == end_tag)
        .expect("the XML's end")
        + start
        + end_tag.len();
    &pdf[start..end]
}

async fn the_pdf_holds_the_xml_of_the_invoice(engine: Engine) {
    let shop = shop(engine).await;
    let total = sell(&shop, "t1", vec![line("l1", MUG, 1), line("l2", BAGUETTE, 3)]).await;
    let issued = issue(&shop, "inv-1", &["t1"]).await;
    assert_eq!(issued.status, 201, "{}", issued.text);
    let pdf = |accept: &'static str| {
        let token = writer(&shop);
        shop.server.send(move |http, base| {
            http.get(format!("{base}/v1/invoices/inv-1"))
                .bearer_auth(token)
                .header("accept", accept)
        })
    };
    let first = pdf("application/pdf").await;
    assert_eq!(first.status, 200);
    assert_eq!(first.headers["content-type"], "application/pdf");
    let bytes = first.text.as_bytes();
    assert!(bytes.starts_with(b"%PDF-"));
    let xml = embedded_xml(bytes);
    let digest: String = Sha256::digest(xml).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        json!(digest),
        issued.body["fiscal"]["xmlSha256"],
        "the XML sealed is the one embedded"
    );
    let xml = std::str::from_utf8(xml).unwrap();
    let euros = |cents: i64| format!("{}.{:02}", cents / 100, cents % 100);
    for expected in [
        "<ram:ID>F-s1-2026-000001</ram:ID>".to_owned(),
        format!("<ram:GrandTotalAmount>{}</ram:GrandTotalAmount>", euros(total)),
        format!(
            "<ram:TaxTotalAmount currencyID=\"EUR\">{}</ram:TaxTotalAmount>",
            euros(issued.body["totals"]["vatCents"].as_i64().unwrap())
        ),
        "<ram:Name>Boulangerie Martin SARL</ram:Name>".to_owned(),
    ] {
        assert!(xml.contains(&expected), "{expected} missing from\n{xml}");
    }
    // Every copy is the same file; JSON is preferred unless the PDF is asked first.
    let again = pdf("application/pdf, application/json;q=0.5").await;
    assert_eq!(again.text.as_bytes(), bytes);
    let json = pdf("application/json, application/pdf;q=0.5").await;
    assert_eq!(json.text, issued.text);
}

async fn numbers_have_no_gap_under_concurrent_requests(engine: Engine) {
    let shop = shop(engine).await;
    for i in 0..10 {
        sell(&shop, &format!("t{i}"), vec![line("l1", BAGUETTE, 1)]).await;
    }
    let requests: Vec<_> = (0..10)
        .map(|i| {
            let (invoice, ticket) = (format!("inv-{i}"), format!("t{i}"));
            let shop = &shop;
            async move { issue(shop, &invoice, &[ticket.as_str()]).await }
        })
        .collect();
    let replies = futures::future::join_all(requests).await;
    let mut numbers: Vec<String> = replies
        .iter()
        .map(|reply| {
            assert_eq!(reply.status, 201, "{}", reply.text);
            reply.str("number")
        })
        .collect();
    numbers.sort();
    let expected: Vec<String> = (1..=10).map(|n| format!("F-s1-2026-{n:06}")).collect();
    assert_eq!(numbers, expected);
}

async fn a_sale_is_invoiced_once_and_an_id_answers_again(engine: Engine) {
    let shop = shop(engine).await;
    sell(&shop, "t1", vec![line("l1", MUG, 1)]).await;
    sell(&shop, "t2", vec![line("l1", BOOK, 1)]).await;
    let first = issue(&shop, "inv-1", &["t1"]).await;
    assert_eq!(first.status, 201, "{}", first.text);
    let again = issue(&shop, "inv-1", &["t1"]).await;
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.headers["x-idempotent-replay"], "true");
    assert_eq!(again.text, first.text, "the same bytes");
    let other_request = issue(&shop, "inv-1", &["t2"]).await;
    other_request.assert_error(409, "CONFLICT");
    let twice = issue(&shop, "inv-2", &["t2", "t1"]).await;
    twice.assert_error(409, "CONFLICT");
    assert!(twice.text.contains("F-s1-2026-000001"), "{}", twice.text);
    // Nothing refused took a number: the next invoice is the second.
    let next = issue(&shop, "inv-3", &["t2"]).await;
    assert_eq!(next.status, 201, "{}", next.text);
    assert_eq!(next.body["number"], "F-s1-2026-000002");

    // Two invoices of one sale at once: one is issued, the other refused, and no number lost.
    sell(&shop, "t3", vec![line("l1", MUG, 1)]).await;
    sell(&shop, "t4", vec![line("l1", MUG, 1)]).await;
    let (a, b) = futures::join!(issue(&shop, "inv-4", &["t3"]), issue(&shop, "inv-5", &["t3"]));
    let mut statuses = [a.status, b.status];
    statuses.sort();
    assert_eq!(statuses, [201, 409], "{} {}", a.text, b.text);
    let winner = if a.status == 201 { &a } else { &b };
    assert_eq!(winner.body["number"], "F-s1-2026-000003");
    let after = issue(&shop, "inv-6", &["t4"]).await;
    assert_eq!(after.body["number"], "F-s1-2026-000004", "{}", after.text);
}

async fn every_bad_input_and_refusal_is_answered_in_the_envelope(engine: Engine) {
    let shop = shop(engine).await;
    sell(&shop, "t1", vec![line("l1", MUG, 1)]).await;
    let post = |body: Value| {
        let token = writer(&shop);
        let shop = &shop;
        async move { shop.server.post("/v1/invoices", &token, body).await }
    };
    let mut bad_buyer = buyer();
    bad_buyer["name"] = json!(" ");
    bad_buyer["siren"] = json!("303265046");
    bad_buyer["address"]["postalCode"] = json!("750");
    let reply =
        post(json!({"invoiceId": "i", "storeId": "s1", "transactionIds": ["t1", "t1"], "buyer": bad_buyer})).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(
        reply.fields(),
        [
            "transactionIds.1",
            "buyer.name",
            "buyer.siren",
            "buyer.address.postalCode"
        ]
    );
    let mut abroad = buyer();
    abroad["vatNumber"] = json!("FR44732829320");
    let reply = post(json!({"invoiceId": "i", "storeId": "s1", "transactionIds": ["t1"], "buyer": abroad})).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(reply.fields(), ["buyer.vatNumber"], "another SIREN's VAT number");
    let reply = post(json!({"invoiceId": "", "storeId": "s1", "transactionIds": [], "buyer": {"address": 3}})).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(
        reply.fields(),
        ["invoiceId", "transactionIds", "buyer.name", "buyer.address"]
    );

    let unknown = issue(&shop, "i1", &["t1", "nope"]).await;
    unknown.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(unknown.text.contains("transactionIds.1"), "{}", unknown.text);

    // A second store, without an identity, with a sale of its own.
    shop.server.provision_store("s2").await;
    let (session, till) = shop.server.open_session("s2", "r2", "camille", "1234").await;
    let mut sale = shop.sale("u1", vec![line("l1", MUG, 1)], 1450);
    sale["storeId"] = json!("s2");
    sale["sessionId"] = json!(session);
    let sold = shop.finalize_as(&till, &sale).await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    let other_store = issue(&shop, "i2", &["t1", "u1"]).await;
    other_store.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(other_store.text.contains("transactionIds.1"), "{}", other_store.text);
    let body = json!({"invoiceId": "i3", "storeId": "s2", "transactionIds": ["u1"], "buyer": buyer()});
    let no_identity = shop.server.post("/v1/invoices", &writer(&shop), body).await;
    no_identity.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(no_identity.text.contains("legalName"), "{}", no_identity.text);
    let body = json!({"invoiceId": "i4", "storeId": "nowhere", "transactionIds": ["t1"], "buyer": buyer()});
    shop.server
        .post("/v1/invoices", &writer(&shop), body)
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");

    // A return among sales.
    let refund = shop
        .server
        .post(
            "/v1/returns",
            &shop.till,
            return_body(&shop, "r1", "t1", &[("l1", 1)], 1450),
        )
        .await;
    assert_eq!(refund.status, 201, "{}", refund.text);
    sell(&shop, "t2", vec![line("l1", BOOK, 1)]).await;
    let mixed = issue(&shop, "i5", &["t2", "r1"]).await;
    mixed.assert_error(422, "BUSINESS_RULE_VIOLATION");
    // The return of a sale no invoice covers.
    let uninvoiced = issue(&shop, "i6", &["r1"]).await;
    uninvoiced.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(uninvoiced.text.contains("no invoice covers"), "{}", uninvoiced.text);
    // Nothing refused was kept or numbered.
    assert_eq!(shop.server.count_rows("invoices").await, 0);
    let first = issue(&shop, "i7", &["t2"]).await;
    assert_eq!(first.body["number"], "F-s1-2026-000001", "{}", first.text);
}

fn return_body(shop: &Shop, transaction: &str, original: &str, lines: &[(&str, i64)], refund: i64) -> Value {
    json!({
        "transactionId": transaction,
        "originalTransactionId": original,
        "number": format!("R-{transaction}"),
        "storeId": "s1",
        "sellerId": "camille",
        "sessionId": shop.session,
        "lines": lines.iter().map(|(id, units)| json!({"lineId": id, "quantity": units})).collect::<Vec<_>>(),
        "tenders": {"amountDue": refund, "sequence": 1, "tenders": [
            {"id": "p1", "method": "card", "applied": refund, "presented": refund, "change": 0, "forfeited": 0}
        ]},
    })
}

async fn a_partial_return_of_an_invoiced_sale_is_credited_citing_the_invoice(engine: Engine) {
    let shop = shop(engine).await;
    sell(&shop, "t1", vec![line("l1", MUG, 1), line("l2", BAGUETTE, 4)]).await;
    let invoice = issue(&shop, "inv-1", &["t1"]).await;
    assert_eq!(invoice.status, 201, "{}", invoice.text);
    let refund = shop
        .server
        .post(
            "/v1/returns",
            &shop.till,
            return_body(&shop, "r1", "t1", &[("l2", 1)], 130),
        )
        .await;
    assert_eq!(refund.status, 201, "{}", refund.text);
    let credit = issue(&shop, "cr-1", &["r1"]).await;
    assert_eq!(credit.status, 201, "{}", credit.text);
    assert_eq!(credit.body["kind"], "credit");
    assert_eq!(credit.body["number"], "F-s1-2026-000002");
    assert_eq!(
        credit.body["credits"],
        json!({"invoiceId": "inv-1", "number": "F-s1-2026-000001", "issuedOn": "2026-11-24"})
    );
    assert_eq!(credit.body["totals"]["withVatCents"], 130);
    assert_eq!(credit.body["lines"][0]["quantity"], 1);
    assert_eq!(credit.body["lines"][0]["name"], "Baguette");
    assert!(credit.body["paymentTerms"].as_str().unwrap().contains("Avoir"));
    let pdf = shop
        .server
        .send(|http, base| {
            http.get(format!("{base}/v1/invoices/cr-1"))
                .bearer_auth(writer(&shop))
                .header("accept", "application/pdf")
        })
        .await;
    let xml = std::str::from_utf8(embedded_xml(pdf.text.as_bytes()))
        .unwrap()
        .to_owned();
    assert!(xml.contains("<ram:TypeCode>381</ram:TypeCode>"), "{xml}");
    assert!(
        xml.contains("<ram:IssuerAssignedID>F-s1-2026-000001</ram:IssuerAssignedID>"),
        "{xml}"
    );
    // The return is credited once.
    issue(&shop, "cr-2", &["r1"]).await.assert_error(409, "CONFLICT");
}

async fn the_journal_seals_each_invoice_and_still_verifies(engine: Engine) {
    let shop = shop(engine).await;
    sell(&shop, "t1", vec![line("l1", MUG, 1)]).await;
    sell(&shop, "t2", vec![line("l1", BOOK, 1)]).await;
    let issued = issue(&shop, "inv-1", &["t1", "t2"]).await;
    assert_eq!(issued.status, 201, "{}", issued.text);
    let seq = issued.body["fiscal"]["seq"].as_i64().unwrap();
    let events = shop
        .server
        .get(
            "/v1/fiscal/registers/r1/chains/event",
            &shop.server.token("auditor", "pos.fiscal.read"),
        )
        .await;
    let entry = events.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["seq"] == seq)
        .unwrap_or_else(|| panic!("{}", events.text))
        .clone();
    let payload = entry["payload"].as_str().unwrap();
    let digest = issued.body["fiscal"]["xmlSha256"].as_str().unwrap();
    assert!(
        payload.starts_with("1050,invoice issued,F-s1-2026-000001 tickets t1 t2 total 39.40 sha256 "),
        "{payload}"
    );
    assert!(payload.contains(digest), "{payload}");
    assert!(
        !payload.contains("Boulangerie") && !payload.contains("Four"),
        "no buyer in the journal: {payload}"
    );
    let verified = shop.verify("r1").await;
    assert_eq!(verified["ok"], true, "{verified}");

    // An invoice's XML changed after its seal is found by the audit.
    let unlock = match engine {
        Engine::Sqlite => "DROP TRIGGER IF EXISTS invoices_no_update",
        Engine::Postgres => "ALTER TABLE invoices DISABLE TRIGGER USER",
    };
    shop.server
        .tamper(
            engine,
            &[unlock, "UPDATE invoices SET xml = REPLACE(xml, '39.40', '9.40')"],
        )
        .await;
    let verified = shop.verify("r1").await;
    assert_eq!(verified["ok"], false, "{verified}");
    assert_eq!(verified["firstFailure"]["chain"], "event", "{verified}");
    assert_eq!(verified["firstFailure"]["seq"], seq, "{verified}");
    assert_eq!(verified["firstFailure"]["kind"], "altered", "{verified}");
}

async fn e_reporting_lists_invoiced_sales_apart_and_the_bundle_reconciles(engine: Engine) {
    let shop = shop(engine).await;
    sell(&shop, "t1", vec![line("l1", MUG, 1)]).await;
    sell(&shop, "t2", vec![line("l1", MUG, 1), line("l2", BAGUETTE, 2)]).await;
    let invoiced = issue(&shop, "inv-1", &["t2"]).await;
    assert_eq!(invoiced.status, 201, "{}", invoiced.text);
    let shift = format!("/v1/register-sessions/{}/close", shop.session);
    let closed = shop.server.post(&shift, &shop.server.admin(), json!({})).await;
    assert_eq!(closed.status, 200, "{}", closed.text);
    let close = shop
        .server
        .post(
            "/v1/fiscal/registers/r1/closures",
            &shop.server.token("manager", "pos.fiscal.close"),
            json!({"period": "day"}),
        )
        .await;
    assert_eq!(close.status, 201, "{}", close.text);
    let report = shop
        .server
        .get(
            "/v1/exports/e-reporting?from=2026-11-24&to=2026-11-24",
            &shop.server.token("accountant", "pos.fiscal.read"),
        )
        .await;
    assert_eq!(report.status, 200, "{}", report.text);
    // B2C: the first mug alone; invoiced: the second mug and the baguettes.
    assert_eq!(
        report.body["days"],
        json!([
            {"date": "2026-11-24", "vatRate": 20, "taxableBaseCents": 1208, "vatCents": 242, "transactionCount": 1},
            {"date": "2026-11-24", "vatRate": 5.5, "taxableBaseCents": 0, "vatCents": 0, "transactionCount": 0}
        ]),
        "{}",
        report.text
    );
    assert_eq!(
        report.body["invoiced"],
        json!([
            {"date": "2026-11-24", "vatRate": 20, "taxableBaseCents": 1208, "vatCents": 242, "transactionCount": 1},
            {"date": "2026-11-24", "vatRate": 5.5, "taxableBaseCents": 246, "vatCents": 14, "transactionCount": 1}
        ]),
        "{}",
        report.text
    );

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bundle");
    let (made, text) = shop.server.run_till(&[
        "fiscal",
        "bundle",
        "--register",
        "r1",
        "--from",
        "2026-11-24",
        "--to",
        "2026-11-24",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(made, "{text}");
    let reconciliation = std::fs::read_to_string(out.join("reconciliation.csv")).unwrap();
    let rows: Vec<&str> = reconciliation.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{reconciliation}");
    assert!(rows.iter().all(|row| row.ends_with(",yes")), "{reconciliation}");
    let (checked, text) = shop
        .server
        .run_till(&["fiscal", "verify-bundle", out.to_str().unwrap()]);
    assert!(checked, "{text}");
}

async fn scopes_guard_invoices_and_agents_only_read_them(engine: Engine) {
    let shop = shop(engine).await;
    sell(&shop, "t1", vec![line("l1", MUG, 1)]).await;
    let body = json!({"invoiceId": "inv-1", "storeId": "s1", "transactionIds": ["t1"], "buyer": buyer()});
    let reader = shop.server.token("clerk", "pos.sales.read");
    shop.server
        .post("/v1/invoices", &reader, body.clone())
        .await
        .assert_error(403, "FORBIDDEN");
    assert_eq!(issue(&shop, "inv-1", &["t1"]).await.status, 201);
    assert_eq!(shop.server.get("/v1/invoices/inv-1", &reader).await.status, 200);
    assert_eq!(shop.server.get("/v1/invoices", &reader).await.status, 200);
    let stranger = shop.server.token("stock", "pos.catalog.read");
    shop.server
        .get("/v1/invoices/inv-1", &stranger)
        .await
        .assert_error(403, "FORBIDDEN");
    shop.server
        .get("/v1/invoices/nope", &reader)
        .await
        .assert_error(404, "NOT_FOUND");

    // An agent holding the scope lists the reads as tools, never the issue.
    let agent = shop.server.token("agent", "pos.invoices.write pos.sales.read");
    let list = shop
        .server
        .send(|http, base| {
            http.post(format!("{base}/v1/mcp"))
                .bearer_auth(&agent)
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        })
        .await;
    assert_eq!(list.status, 200, "{}", list.text);
    let names: Vec<&str> = list.body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"getInvoice") && names.contains(&"listInvoices"),
        "{names:?}"
    );
    assert!(!names.contains(&"createInvoice"), "{names:?}");
    let call = shop
        .server
        .send(|http, base| {
            http.post(format!("{base}/v1/mcp")).bearer_auth(&agent).json(&json!({
                "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "createInvoice", "arguments": {"body": {
                    "invoiceId": "inv-2", "storeId": "s1", "transactionIds": ["t1"], "buyer": buyer()}}}
            }))
        })
        .await;
    assert_eq!(call.status, 200, "{}", call.text);
    assert!(call.text.contains("is not a tool"), "{}", call.text);
    assert_eq!(shop.server.count_rows("invoices").await, 1, "the agent issued nothing");
}

async fn the_consoles_sale_page_issues_the_invoice_and_links_its_pdf(engine: Engine) {
    use reqwest::header::{ACCEPT_LANGUAGE, CONTENT_TYPE, COOKIE, ORIGIN};
    let shop = shop(engine).await;
    sell(&shop, "t1", vec![line("l1", MUG, 1)]).await;
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let cookie = format!("till_console={}", shop.server.admin());
    let page = |language: &'static str| {
        browser
            .get(format!("{}/console/sales/t1", shop.server.base))
            .header(COOKIE, &cookie)
            .header(ACCEPT_LANGUAGE, language)
            .send()
    };
    let html = page("en").await.unwrap().text().await.unwrap();
    assert!(html.contains(r#"action="/console/sales/t1/invoice""#), "{html}");
    assert!(html.contains("Issue an invoice"), "{html}");
    let french = page("fr").await.unwrap().text().await.unwrap();
    assert!(
        french.contains("Émettre une facture") && french.contains("Raison sociale"),
        "{french}"
    );
    let value_of = |html: &str, name: &str| {
        let marker = format!("name=\"{name}\" value=\"");
        let start = html.find(&marker).unwrap_or_else(|| panic!("{name} in {html}")) + marker.len();
        html[start..start + html[start..].find('"').unwrap()].to_owned()
    };
    let (csrf, invoice_id) = (value_of(&html, "csrf"), value_of(&html, "invoiceId"));
    let send = |body: String| {
        browser
            .post(format!("{}/console/sales/t1/invoice", shop.server.base))
            .header(COOKIE, &cookie)
            .header(ACCEPT_LANGUAGE, "en")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(ORIGIN, shop.server.base.clone())
            .body(body)
            .send()
    };
    let fields = format!(
        "invoiceId={invoice_id}&name=Boulangerie+Martin+SARL&siren=303265045&vatNumber=&line1=3+rue+du+Four\
         &postalCode=75006&city=Paris&country=FR"
    );
    // A form without its token issues nothing.
    let forged = send(format!("csrf=nope&{fields}")).await.unwrap();
    assert_ne!(forged.status(), reqwest::StatusCode::OK);
    assert_eq!(shop.server.count_rows("invoices").await, 0);
    // A buyer field refused is named, and nothing is issued.
    let refused = send(format!("csrf={csrf}&{}", fields.replace("75006", "750")))
        .await
        .unwrap();
    assert_ne!(refused.status(), reqwest::StatusCode::OK);
    assert!(refused.text().await.unwrap().contains("postalCode"));
    assert_eq!(shop.server.count_rows("invoices").await, 0);
    let issued = send(format!("csrf={csrf}&{fields}")).await.unwrap();
    assert_eq!(issued.status(), reqwest::StatusCode::OK);
    let issued = issued.text().await.unwrap();
    assert!(
        issued.contains("The invoice is issued.") && issued.contains("F-s1-2026-000001"),
        "{issued}"
    );
    let pdf_link = format!("/console/invoices/{invoice_id}/pdf");
    assert!(issued.contains(&pdf_link), "{issued}");
    assert!(
        !issued.contains(r#"action="/console/sales/t1/invoice""#),
        "invoiced once: no form any more"
    );
    // Sent twice (a reload), the same invoice is answered, not another issued.
    let again = send(format!("csrf={csrf}&{fields}")).await.unwrap();
    assert_eq!(again.status(), reqwest::StatusCode::OK);
    assert_eq!(shop.server.count_rows("invoices").await, 1);
    let pdf = browser
        .get(format!("{}{pdf_link}", shop.server.base))
        .header(COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(pdf.status(), reqwest::StatusCode::OK);
    assert_eq!(pdf.headers()["content-type"], "application/pdf");
    assert!(pdf.bytes().await.unwrap().starts_with(b"%PDF-"));
}
