//! The accountant's exports: the FEC and the e-reporting aggregates, derived from the sealed
//! day closures, checked against those closures and against the checks of the tax
//! administration's test tool that can be made offline.

use crate::harness::{Engine, Reply};
use crate::harness::{Shop, line};
use crate::on_both_engines;
use jiff::Timestamp;
use serde_json::{Value, json};
use till_core::exports::fec::{COLUMNS, check, parse_amount};

const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);
const BAGUETTE: (&str, i64, f64) = ("Baguette", 130, 5.5);
const BOOK: (&str, i64, f64) = ("Livre", 2490, 5.5);

fn at(text: &str) -> Timestamp {
    text.parse().expect("an instant")
}

impl Shop {
    async fn export(&self, what: &str, from: &str, to: &str) -> Reply {
        let path = format!("/v1/exports/{what}?from={from}&to={to}");
        self.server
            .get(&path, &self.server.token("accountant", "pos.fiscal.read"))
            .await
    }

    /// Sells `lines` at catalog prices, paid in full with `method`.
    async fn sell_with(&self, transaction: &str, lines: Vec<Value>, total: i64, method: &str) {
        let mut sale = self.sale(transaction, lines, total);
        sale["tenders"]["tenders"][0]["method"] = json!(method);
        let reply = self.finalize(&sale).await;
        assert_eq!(reply.status, 201, "{}", reply.text);
    }

    /// A new session on r1 the next morning.
    async fn next_morning(&mut self, instant: &str) {
        self.server.clock.set(at(instant));
        let (session, till) = self.server.open_session("s1", "r1", "camille", "1234").await;
        self.session = session;
        self.till = till;
    }

    /// The day closures of r1, by day.
    async fn day_closures(&self) -> Vec<Value> {
        let reply = self
            .server
            .get(
                "/v1/fiscal/registers/r1/closures",
                &self.server.token("auditor", "pos.fiscal.read"),
            )
            .await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        reply.body["closures"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["period"] == "DAY" && c["ticketCount"].as_i64() > Some(0))
            .cloned()
            .collect()
    }
}

/// The file's lines below its header, as their 18 fields.
fn rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip(1)
        .map(|line| line.split('\t').map(str::to_owned).collect())
        .collect()
}

fn column(name: &str) -> usize {
    COLUMNS.iter().position(|c| *c == name).unwrap()
}

/// Credit less debit on `account` on the lines whose label ends with `suffix`.
fn balance_of(rows: &[Vec<String>], account: &str, suffix: &str) -> i64 {
    rows.iter()
        .filter(|r| r[column("CompteNum")] == account && r[column("EcritureLib")].ends_with(suffix))
        .map(|r| parse_amount(&r[column("Credit")]).unwrap() - parse_amount(&r[column("Debit")]).unwrap())
        .sum()
}

/// Day one: a sale of a mug and two baguettes by card, a book in cash, the mug given back
/// (refunded by card), the shift then the day closed by the back office. Day two: a baguette,
/// closed by the first write of day three.
async fn the_fec_and_e_reporting_add_up_to_the_sealed_closures(engine: Engine) {
    let mut shop = Shop::open_at(engine, at("2026-03-30T08:00:00Z"), |_| {}).await;
    let store = json!({"name": "s1", "siret": "12345678900012"});
    assert_eq!(
        shop.server
            .put("/v1/stores/s1", &shop.server.admin(), store)
            .await
            .status,
        200
    );
    shop.sell_with(
        "t1",
        vec![line("l1", MUG, 1), line("l2", BAGUETTE, 2)],
        1450 + 260,
        "card",
    )
    .await;
    shop.sell_with("t2", vec![line("l1", BOOK, 1)], 2490, "cash").await;
    let give_back = json!({
        "transactionId": "back-1", "originalTransactionId": "t1", "number": "R-back-1",
        "storeId": "s1", "sellerId": "camille", "sessionId": shop.session,
        "lines": [{"lineId": "l1", "quantity": 1}],
        "tenders": {"amountDue": 1450, "sequence": 1, "tenders": [
            {"id": "p1", "method": "card", "applied": 1450, "presented": 1450, "change": 0, "forfeited": 0}]}
    });
    let returned = shop.server.post("/v1/returns", &shop.till, give_back).await;
    assert_eq!(returned.status, 201, "{}", returned.text);
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

    shop.next_morning("2026-03-31T08:00:00Z").await;
    shop.sell_with("t3", vec![line("l1", BAGUETTE, 1)], 130, "card").await;

    // Day two has a sale its closure has not sealed: a period holding it is refused, naming it.
    for what in ["fec", "e-reporting"] {
        let open = shop.export(what, "2026-03-30", "2026-03-31").await;
        assert_eq!(open.status, 422, "{}", open.text);
        let message = open.body["error"]["message"].as_str().unwrap();
        assert!(message.contains("r1") && message.contains("2026-03-31"), "{message}");
    }
    let first_day = shop.export("fec", "2026-03-30", "2026-03-30").await;
    assert_eq!(first_day.status, 200, "{}", first_day.text);
    // The worked example of docs/fiscal.md, line for line: one French label per account, what
    // each line holds in its own label.
    let documented = [
        ("707", "Ventes de marchandises", "Ventes TVA 20%", "0,00", "12,08"),
        ("707", "Ventes de marchandises", "Retours TVA 20%", "12,08", "0,00"),
        ("44571", "TVA collectee", "TVA collectee 20%", "0,00", "2,42"),
        ("44571", "TVA collectee", "TVA sur retours 20%", "2,42", "0,00"),
        ("707", "Ventes de marchandises", "Ventes TVA 5.5%", "0,00", "26,06"),
        ("44571", "TVA collectee", "TVA collectee 5.5%", "0,00", "1,44"),
        (
            "5112",
            "Cartes bancaires a encaisser",
            "Encaissements carte bancaire",
            "17,10",
            "0,00",
        ),
        (
            "5112",
            "Cartes bancaires a encaisser",
            "Remboursements carte bancaire",
            "0,00",
            "14,50",
        ),
        ("530", "Caisse", "Encaissements especes", "24,90", "0,00"),
    ];
    let first_rows = rows(&first_day.text);
    let got: Vec<(&str, &str, &str, &str, &str)> = first_rows
        .iter()
        .map(|r| {
            (
                r[column("CompteNum")].as_str(),
                r[column("CompteLib")].as_str(),
                r[column("EcritureLib")]
                    .strip_prefix("Caisse r1 du 2026-03-30: ")
                    .unwrap_or(&r[column("EcritureLib")]),
                r[column("Debit")].as_str(),
                r[column("Credit")].as_str(),
            )
        })
        .collect();
    assert_eq!(got, documented, "{}", first_day.text);
    for r in &first_rows {
        let fixed = [
            &r[column("EcritureNum")],
            &r[column("EcritureDate")],
            &r[column("PieceRef")],
            &r[column("PieceDate")],
            &r[column("ValidDate")],
        ];
        assert_eq!(
            fixed,
            ["1", "20260330", "Z-r1-2", "20260330", "20260330"],
            "{}",
            first_day.text
        );
    }

    shop.next_morning("2026-04-01T08:00:00Z").await;
    let closures = shop.day_closures().await;
    assert_eq!(closures.len(), 2, "{closures:?}");

    let fec = shop.export("fec", "2026-03-30", "2026-03-31").await;
    assert_eq!(fec.status, 200, "{}", fec.text);
    let header = |name: &str| fec.headers.get(name).unwrap().to_str().unwrap().to_owned();
    assert!(header("content-type").starts_with("text/tab-separated-values"));
    assert_eq!(
        header("content-disposition"),
        "attachment; filename=\"123456789FEC20260331.txt\""
    );
    // What the administration's tool checks: the header, 18 columns, dates, amounts, balance of
    // each entry, gapless numbering, chronological order.
    let checked = check(&fec.text).unwrap_or_else(|defect| panic!("{defect}\n{}", fec.text));
    assert_eq!(checked.entries, 2);
    assert_eq!(
        fec.text.lines().next().unwrap().split('\t').collect::<Vec<_>>(),
        COLUMNS
    );
    let rows = rows(&fec.text);
    assert!(rows.iter().all(|r| r.len() == 18));
    let entries: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[column("EcritureNum")].as_str(), r[column("EcritureDate")].as_str()))
        .collect();
    assert!(entries.windows(2).all(|w| w[0] <= w[1]), "{entries:?}");
    assert_eq!(entries.first(), Some(&("1", "20260330")));
    assert_eq!(entries.last(), Some(&("2", "20260331")));
    assert!(rows.iter().all(|r| r[column("JournalCode")] == "VE"));

    // Per day and rate, the sales and VAT accounts hold the closure's net and VAT.
    for (number, closure) in closures.iter().enumerate() {
        let entry: Vec<Vec<String>> = rows
            .iter()
            .filter(|r| r[column("EcritureNum")] == (number + 1).to_string())
            .cloned()
            .collect();
        for vat in closure["vat"].as_array().unwrap() {
            let rate = format!(" {}%", vat["vatRate"]);
            let (total, tax) = (vat["totalCents"].as_i64().unwrap(), vat["vatCents"].as_i64().unwrap());
            assert_eq!(balance_of(&entry, "707", &rate), total - tax, "707 at{rate}");
            assert_eq!(balance_of(&entry, "44571", &rate), tax, "44571 at{rate}");
        }
    }
    // The mug given back sits on the other side: a debit of sales and a credit of the card.
    let mug_net = 1450 - (1450 * 20 + 60) / 120;
    let back = |account: &str, label: &str| {
        rows.iter()
            .find(|r| r[column("CompteNum")] == account && r[column("EcritureLib")].contains(label))
            .unwrap_or_else(|| panic!("{account} {label}: {}", fec.text))
            .clone()
    };
    let returned = back("707", "Retours TVA 20%");
    assert_eq!(
        (
            parse_amount(&returned[column("Debit")]),
            parse_amount(&returned[column("Credit")])
        ),
        (Some(mug_net), Some(0))
    );
    let refunded = back("5112", "Remboursements carte bancaire");
    assert_eq!(refunded[column("Credit")], "14,50");
    assert_eq!(back("530", "Encaissements especes")[column("Debit")], "24,90");

    // The e-reporting aggregates are the closures' breakdowns, with their tickets counted.
    let report = shop.export("e-reporting", "2026-03-30", "2026-03-31").await;
    assert_eq!(report.status, 200, "{}", report.text);
    let mut expected = Vec::new();
    for closure in &closures {
        for vat in closure["vat"].as_array().unwrap() {
            let (total, tax) = (vat["totalCents"].as_i64().unwrap(), vat["vatCents"].as_i64().unwrap());
            expected.push((closure["periodFrom"].clone(), vat["vatRate"].clone(), total - tax, tax));
        }
    }
    let days = report.body["days"].as_array().unwrap();
    let got: Vec<(Value, Value, i64, i64)> = days
        .iter()
        .map(|d| {
            (
                d["date"].clone(),
                d["vatRate"].clone(),
                d["taxableBaseCents"].as_i64().unwrap(),
                d["vatCents"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, expected);
    let counts: Vec<(&str, String, i64)> = days
        .iter()
        .map(|d| {
            (
                d["date"].as_str().unwrap(),
                d["vatRate"].to_string(),
                d["transactionCount"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        counts,
        [
            ("2026-03-30", "20".to_owned(), 2),
            ("2026-03-30", "5.5".to_owned(), 2),
            ("2026-03-31", "5.5".to_owned(), 1)
        ]
    );
    shop.server.stop().await;
}

async fn exports_need_the_fiscal_read_scope_and_a_sound_period(engine: Engine) {
    let shop = Shop::open_at(engine, at("2026-03-30T08:00:00Z"), |_| {}).await;
    for what in ["fec", "e-reporting"] {
        let path = format!("/v1/exports/{what}?from=2026-03-01&to=2026-03-31");
        let clerk = shop
            .server
            .get(&path, &shop.server.token("clerk", "pos.sales.read"))
            .await;
        assert_eq!(clerk.status, 403, "{}", clerk.text);
        let nothing = shop.export(what, "2026-03-01", "2026-03-29").await;
        assert_eq!(nothing.status, 200, "{}", nothing.text);
        for (from, to, field) in [
            ("2026-03-31", "2026-03-01", "to"),
            ("2026-3-1", "2026-03-31", "from"),
            ("2026-02-30", "2026-03-31", "from"),
            ("2025-03-01", "2026-03-31", "to"),
        ] {
            let bad = shop.export(what, from, to).await;
            assert_eq!(bad.status, 400, "{from} {to}: {}", bad.text);
            assert_eq!(bad.body["error"]["fieldErrors"][0]["field"], field, "{}", bad.text);
        }
    }
    let empty = shop.export("fec", "2026-03-01", "2026-03-29").await;
    assert_eq!(empty.text, format!("{}\r\n", COLUMNS.join("\t")));
    assert_eq!(
        empty.headers.get("content-disposition").unwrap().to_str().unwrap(),
        "attachment; filename=\"FEC20260329.txt\"",
        "no SIRET known: no SIREN in the name"
    );
    let report = shop.export("e-reporting", "2026-03-01", "2026-03-29").await;
    assert_eq!(
        report.body,
        json!({"from": "2026-03-01", "to": "2026-03-29", "days": [], "invoiced": []})
    );
    shop.server.stop().await;
}

/// Exports and archives end today at the latest, in the time zone of every store the period
/// covers: a day not begun in one of them is refused on `to`, and nothing is sealed.
async fn a_period_ending_after_today_is_refused_on_to(engine: Engine) {
    // 21:00 in Paris on 30 March is already 31 March, 08:00, in Noumea.
    let shop = Shop::open_at(engine, at("2026-03-30T20:00:00Z"), |_| {}).await;
    let admin = shop.server.admin();
    let noumea = json!({"name": "Nouméa", "timezone": "Pacific/Noumea"});
    assert_eq!(shop.server.put("/v1/stores/nc", &admin, noumea).await.status, 201);
    let accountant = shop.server.token("accountant", "pos.fiscal.read");
    for what in ["fec", "e-reporting"] {
        for (query, today) in [
            ("to=2026-03-31", "2026-03-30 in Europe/Paris"),
            ("to=2026-03-31&registerId=r1", "2026-03-30 in Europe/Paris"),
            ("to=2026-03-31&storeId=s1", "2026-03-30 in Europe/Paris"),
            ("to=2026-04-01&storeId=nc", "2026-03-31 in Pacific/Noumea"),
        ] {
            let path = format!("/v1/exports/{what}?from=2026-03-01&{query}");
            let refused = shop.server.get(&path, &accountant).await;
            refused.assert_error(400, "VALIDATION_FAILED");
            assert_eq!(
                refused.field_errors(),
                [("to".to_owned(), format!("must not be after today ({today})"))],
                "{path}"
            );
        }
        for query in ["to=2026-03-30", "to=2026-03-31&storeId=nc"] {
            let path = format!("/v1/exports/{what}?from=2026-03-01&{query}");
            let ok = shop.server.get(&path, &accountant).await;
            assert_eq!(ok.status, 200, "{path}: {}", ok.text);
        }
    }
    let archive = |to: &str| json!({"registerId": "r1", "from": "2026-03-01", "to": to});
    let closer = shop.server.token("manager", "pos.fiscal.close pos.fiscal.read");
    let refused = shop
        .server
        .post("/v1/fiscal/archives", &closer, archive("2026-12-31"))
        .await;
    refused.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(
        refused.field_errors(),
        [(
            "to".to_owned(),
            "must not be after today (2026-03-30 in Europe/Paris)".to_owned()
        )]
    );
    assert_eq!(shop.server.count_rows("fiscal_archives").await, 0, "nothing sealed");
    let made = shop
        .server
        .post("/v1/fiscal/archives", &closer, archive("2026-03-30"))
        .await;
    assert_eq!(made.status, 201, "{}", made.text);
    shop.server.stop().await;
}

/// The FEC of a register whose id is not plain ASCII is plain ASCII all the same, with one
/// French label per account whatever the lines of the account hold.
async fn the_fec_is_plain_ascii_with_one_label_per_account(engine: Engine) {
    let shop = Shop::open_at(engine, at("2026-03-30T08:00:00Z"), |_| {}).await;
    let register = "caisse-Élysée";
    let (session, till) = shop.server.open_session("s1", register, "camille", "1234").await;
    for (transaction, method) in [("t1", "card"), ("t2", "cash"), ("t3", "cheque")] {
        let mut sale = shop.sale(
            transaction,
            vec![line("l1", MUG, 1), line("l2", BAGUETTE, 1)],
            1450 + 130,
        );
        sale["sessionId"] = json!(session);
        sale["tenders"]["tenders"][0]["method"] = json!(method);
        let sold = shop.server.post("/v1/checkout/finalize", &till, sale).await;
        assert_eq!(sold.status, 201, "{}", sold.text);
    }
    let closed = shop
        .server
        .post(
            &format!("/v1/register-sessions/{session}/close"),
            &shop.server.admin(),
            json!({}),
        )
        .await;
    assert_eq!(closed.status, 200, "{}", closed.text);
    let day = shop
        .server
        .post(
            "/v1/fiscal/registers/caisse-%C3%89lys%C3%A9e/closures",
            &shop.server.token("manager", "pos.fiscal.close"),
            json!({"period": "day"}),
        )
        .await;
    assert_eq!(day.status, 201, "{}", day.text);
    let fec = shop
        .server
        .get(
            "/v1/exports/fec?from=2026-03-30&to=2026-03-30&registerId=caisse-%C3%89lys%C3%A9e",
            &shop.server.token("accountant", "pos.fiscal.read"),
        )
        .await;
    assert_eq!(fec.status, 200, "{}", fec.text);
    assert!(fec.text.is_ascii(), "{}", fec.text);
    check(&fec.text).unwrap_or_else(|defect| panic!("{defect}\n{}", fec.text));
    let rows = rows(&fec.text);
    let mut labels: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r[column("CompteNum")].clone(), r[column("CompteLib")].clone()))
        .collect();
    labels.sort();
    labels.dedup();
    assert_eq!(
        labels,
        [
            ("44571", "TVA collectee"),
            ("511", "Valeurs a l'encaissement"),
            ("5112", "Cartes bancaires a encaisser"),
            ("530", "Caisse"),
            ("707", "Ventes de marchandises"),
        ]
        .map(|(a, l)| (a.to_owned(), l.to_owned()))
    );
    assert!(
        rows.iter()
            .all(|r| r[column("PieceRef")].starts_with("Z-caisse-Elysee-")
                && r[column("EcritureLib")].starts_with("Caisse caisse-Elysee du 2026-03-30: ")),
        "{}",
        fec.text
    );
    shop.server.stop().await;
}

on_both_engines!(
    the_fec_and_e_reporting_add_up_to_the_sealed_closures,
    exports_need_the_fiscal_read_scope_and_a_sound_period,
    a_period_ending_after_today_is_refused_on_to,
    the_fec_is_plain_ascii_with_one_label_per_account,
);

/// Runs the `till` binary on the test server's database and data directory (its fiscal key).
fn till(args: &[&str], server: &crate::harness::TestServer) -> (bool, String) {
    server.run_till(args)
}

async fn a_bundle_reconciles_and_an_edited_fec_fails_its_manifest_and_reconciliation(engine: Engine) {
    let shop = Shop::open_at(engine, at("2026-03-30T08:00:00Z"), |_| {}).await;
    let store = json!({"name": "s1", "siret": "12345678900012"});
    assert_eq!(
        shop.server
            .put("/v1/stores/s1", &shop.server.admin(), store)
            .await
            .status,
        200
    );
    shop.sell_with(
        "t1",
        vec![line("l1", MUG, 1), line("l2", BAGUETTE, 2)],
        1450 + 260,
        "card",
    )
    .await;
    shop.sell_with("t2", vec![line("l1", BOOK, 1)], 2490, "cash").await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bundle");
    let out_text = out.to_str().unwrap();
    let args = [
        "fiscal",
        "bundle",
        "--register",
        "r1",
        "--from",
        "2026-03-30",
        "--to",
        "2026-03-30",
        "--out",
        out_text,
    ];
    // The day is still open: no bundle, and no archive sealed for it.
    let (made, text) = till(&args, &shop.server);
    assert!(!made && text.contains("2026-03-30"), "{text}");
    assert!(!out.exists());
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
    let (made, text) = till(&args, &shop.server);
    assert!(made, "{text}");

    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let fec_name = "123456789FEC20260330.txt";
    for name in [
        "archive.json",
        "keys.json",
        "verification.txt",
        "e-reporting.json",
        "manifest.json",
        fec_name,
    ] {
        assert!(out.join(name).is_file(), "{name}");
    }
    assert!(
        read("verification.txt").contains(": ok: register r1"),
        "{}",
        read("verification.txt")
    );
    let sequences = read("sequences.csv");
    assert!(sequences.starts_with("chain,first,last,count,gaps\n"), "{sequences}");
    assert!(sequences.lines().skip(1).all(|l| l.ends_with(",none")), "{sequences}");
    assert!(sequences.contains("\nticket,1,2,2,none\n"), "{sequences}");
    let reconciliation = read("reconciliation.csv");
    assert_eq!(reconciliation.lines().count(), 3, "{reconciliation}");
    assert!(
        reconciliation.lines().skip(1).all(|l| l.ends_with(",yes")),
        "{reconciliation}"
    );
    check(&read(fec_name)).expect("the bundle's FEC passes the format's checks");

    // What the auditor trusts: the keys the deployment publishes.
    let keys = shop
        .server
        .call(reqwest::Method::GET, "/v1/fiscal/keys", None, None)
        .await;
    assert_eq!(keys.status, 200, "{}", keys.text);
    let trusted = dir.path().join("trusted-keys.json");
    std::fs::write(&trusted, &keys.text).unwrap();
    let verify = ["fiscal", "verify-bundle", out_text, "--keys", trusted.to_str().unwrap()];
    let (holds, text) = till(&verify, &shop.server);
    assert!(holds, "{text}");
    assert!(
        text.contains("journal, FEC and e-reporting agree on 2 days and rates"),
        "{text}"
    );

    // A euro of sales moved from 5.5 % to 20 %: the file still balances and passes the format's
    // checks, but no longer matches its signed sum nor the journal.
    let edited: String = read(fec_name)
        .split_inclusive('\n')
        .map(|l| match l {
            l if l.contains("Ventes TVA 20%") => l.replace("\t12,08\t", "\t13,08\t"),
            l if l.contains("Ventes TVA 5.5%") => l.replace("\t26,06\t", "\t25,06\t"),
            l => l.to_owned(),
        })
        .collect();
    assert_ne!(edited, read(fec_name));
    check(&edited).expect("still a well-formed FEC");
    std::fs::write(out.join(fec_name), edited).unwrap();
    let (holds, text) = till(&verify, &shop.server);
    assert!(!holds, "{text}");
    assert!(
        text.contains(&format!("FAILED: manifest: {fec_name} does not match its SHA-256")),
        "{text}"
    );
    assert!(
        text.contains("FAILED: reconciliation: 2026-03-30 at 20%: journal 1208/242, FEC 1308/242"),
        "{text}"
    );
    shop.server.stop().await;
}

on_both_engines!(a_bundle_reconciles_and_an_edited_fec_fails_its_manifest_and_reconciliation);
