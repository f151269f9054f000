//! The NF525 journal: closures and their automation, technical events, receipts and sealed
//! reprints, archives verified offline, key rotation, and tampering found and named.

use crate::harness::{Engine, TestServer};
use crate::harness::{Shop, line};
use crate::on_both_engines;
use futures::StreamExt;
use futures::future::join_all;
use futures::stream::FuturesUnordered;
use jiff::Timestamp;
use serde_json::{Value, json};
use std::time::Duration;

const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);
const BAGUETTE: (&str, i64, f64) = ("Baguette", 130, 5.5);
const BOOK: (&str, i64, f64) = ("Livre", 2490, 5.5);

fn at(text: &str) -> Timestamp {
    text.parse().expect("an instant")
}

/// Today in the shop's time zone.
fn shop_today() -> jiff::civil::Date {
    jiff::Zoned::new(Timestamp::now(), jiff::tz::TimeZone::get("Europe/Paris").unwrap()).date()
}

impl Shop {
    pub(crate) async fn chain(&self, register: &str, chain: &str) -> Vec<Value> {
        let path = format!("/v1/fiscal/registers/{register}/chains/{chain}");
        let reply = self
            .server
            .get(&path, &self.server.token("auditor", "pos.fiscal.read"))
            .await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        reply.body["entries"].as_array().cloned().unwrap_or_default()
    }

    pub(crate) async fn closures(&self) -> Vec<Value> {
        let reply = self
            .server
            .get(
                "/v1/fiscal/registers/r1/closures",
                &self.server.token("auditor", "pos.fiscal.read"),
            )
            .await;
        reply.body["closures"].as_array().cloned().unwrap_or_default()
    }

    /// Asks an auditor's archive of r1 from `from` through `to`.
    async fn make_archive(&self, from: jiff::civil::Date, to: jiff::civil::Date) -> crate::harness::Reply {
        let body = json!({"registerId": "r1", "from": from.to_string(), "to": to.to_string()});
        self.server
            .post(
                "/v1/fiscal/archives",
                &self.server.token("auditor", "pos.fiscal.close"),
                body,
            )
            .await
    }

    pub(crate) async fn close(&self, period: &str) -> crate::harness::Reply {
        let token = self.server.token("manager", "pos.fiscal.close");
        self.server
            .post("/v1/fiscal/registers/r1/closures", &token, json!({"period": period}))
            .await
    }

    /// Closes the till's session (its Z report), then `period`: a period not over closes
    /// early only once no session of the register is open.
    pub(crate) async fn close_shift_then(&self, period: &str) -> crate::harness::Reply {
        let close = format!("/v1/register-sessions/{}/close", self.session);
        let shift = self.server.post(&close, &self.server.admin(), json!({})).await;
        assert_eq!(shift.status, 200, "{}", shift.text);
        self.close(period).await
    }

    /// Sells `lines`, paid by card, at whatever the server says they cost.
    async fn sell(&self, transaction: &str, lines: Vec<Value>) -> Value {
        let total = self.total_of(lines.clone()).await;
        let reply = self.finalize(&self.sale(transaction, lines, total)).await;
        assert_eq!(reply.status, 201, "{}", reply.text);
        reply.body
    }

    /// Opens a fresh session on r1 for the cashier (the previous one expired or closed).
    async fn reopen(&mut self) {
        let (session, till) = self.server.open_session("s1", "r1", "camille", "1234").await;
        self.session = session;
        self.till = till;
    }
}

/// The JET codes in the register's event chain, in order.
pub(crate) fn codes(entries: &[Value]) -> Vec<i64> {
    entries
        .iter()
        .map(|e| {
            e["payload"]
                .as_str()
                .unwrap()
                .split(',')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect()
}

async fn the_journal_records_events_and_audits_clean(engine: Engine) {
    let shop = Shop::open(engine).await;
    let grant = shop.ask("mathis", "9876", "discount.ticket", 1000).await.str("token");
    let mut sale = shop.sale("t1", vec![line("l1", MUG, 1)], 1305);
    sale["declaredDiscounts"] =
        json!([{"id": "d", "reason": "manager_goodwill", "scope": "ticket", "basis": "percent", "percentBps": 1000}]);
    let approved = shop.with_token(&grant, &sale).await;
    assert_eq!(approved.status, 201, "{}", approved.text);
    shop.sell("t2", vec![line("l1", BAGUETTE, 3)]).await;
    let close = format!("/v1/register-sessions/{}/close", shop.session);
    assert_eq!(
        shop.server.post(&close, &shop.server.admin(), json!({})).await.status,
        200
    );
    assert_eq!(shop.close("day").await.status, 201);
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], true, "{verdict}");
    assert_eq!(verdict["chains"]["ticket"], 2);
    // Journal initialised, session opened, approval issued and spent, session closed, day closed.
    assert_eq!(codes(&shop.chain("r1", "event").await), [260, 80, 1010, 1020, 40, 50]);
    let closures = shop.chain("r1", "closure").await;
    assert!(closures[0]["payload"].as_str().unwrap().contains(",SHIFT,"));
    assert!(closures[1]["payload"].as_str().unwrap().contains(",DAY,"));
    shop.server.stop().await;
}

async fn days_and_months_close_by_themselves(engine: Engine) {
    // 10:00 in Paris on the last day of March.
    let mut shop = Shop::open_at(engine, at("2026-03-31T08:00:00Z"), |_| {}).await;
    let first = shop.sell("t1", vec![line("l1", MUG, 1)]).await["transaction"]["totals"]["total"]
        .as_i64()
        .unwrap();
    let second = shop.sell("t2", vec![line("l1", BOOK, 2)]).await["transaction"]["totals"]["total"]
        .as_i64()
        .unwrap();
    assert!(shop.closures().await.is_empty(), "nothing closes during the day");
    // The next morning: the shift expired overnight; the first write closes the day and March.
    shop.server.clock.set(at("2026-04-01T07:00:00Z"));
    shop.reopen().await;
    shop.sell("t3", vec![line("l1", BAGUETTE, 1)]).await;
    let closures = shop.closures().await;
    let periods: Vec<(&str, &str)> = closures
        .iter()
        .map(|c| (c["period"].as_str().unwrap(), c["periodFrom"].as_str().unwrap()))
        .collect();
    assert_eq!(periods, [("DAY", "2026-03-31"), ("MONTH", "2026-03-01")]);
    for closure in &closures {
        assert_eq!(closure["totalCents"], first + second);
        assert_eq!(closure["ticketCount"], 2);
        assert_eq!(
            (closure["firstTicketSeq"].as_i64(), closure["lastTicketSeq"].as_i64()),
            (Some(1), Some(2))
        );
        assert_eq!(closure["grandTotalCents"], first + second);
    }
    // New year: April's day and month, then the year, close at the first write of 2027.
    shop.server.clock.set(at("2027-01-04T08:00:00Z"));
    shop.reopen().await;
    let closures = shop.closures().await;
    let year = closures.iter().find(|c| c["period"] == "YEAR").expect("a year closure");
    assert_eq!(year["periodFrom"], "2026-01-01");
    assert_eq!(year["ticketCount"], 3);
    assert_eq!(
        year["totalCents"],
        closures
            .iter()
            .filter(|c| c["period"] == "DAY")
            .map(|c| c["totalCents"].as_i64().unwrap())
            .sum::<i64>()
    );
    assert_eq!(shop.verify("r1").await["ok"], true);
    shop.server.stop().await;
}

/// A day closed early while the till's sales are in flight (the queue of a till that was
/// offline, reaching the server as its shift is closed): each sale is either counted in the
/// day's closure or refused as booked into a closed period, never booked and left out.
async fn a_day_closed_early_counts_exactly_the_sales_it_let_through(engine: Engine) {
    let shop = Shop::open_at(engine, at("2026-06-15T08:00:00Z"), |_| {}).await;
    // The node then knows the till's chain head and day, and trusts its guess of the racing
    // sales' place.
    let opening = shop.sell_until_the_guess_is_trusted().await;
    let sales: Vec<Value> = (opening..opening + 23)
        .map(|i| {
            let mut sale = shop.sale(&format!("t{i}"), vec![line("l1", MUG, 1)], 1450);
            sale["issuedAt"] = json!("2026-06-15T08:00:00Z");
            sale
        })
        .collect();
    shop.server.clock.advance(Duration::from_secs(60));
    let close = format!("/v1/register-sessions/{}/close", shop.session);
    let shift = shop.server.post(&close, &shop.server.admin(), json!({})).await;
    assert_eq!(shift.status, 200, "{}", shift.text);
    let mut pending: FuturesUnordered<_> = sales.iter().map(|s| shop.finalize(s)).collect();
    let first = pending.next().await.expect("23 sales");
    let (mut replies, closed) = futures::join!(pending.collect::<Vec<_>>(), shop.close("day"));
    replies.push(first);
    assert_eq!(closed.status, 201, "{}", closed.text);
    let booked = opening + replies.iter().filter(|r| r.status == 201).count() as i64;
    for refused in replies.iter().filter(|r| r.status != 201) {
        refused.assert_error(422, "BUSINESS_RULE_VIOLATION");
        assert!(refused.text.contains("closed"), "{}", refused.text);
    }
    let day = &closed.body["closures"][0];
    assert_eq!(day["period"], "DAY", "{}", closed.text);
    assert_eq!(day["ticketCount"], booked, "{}", closed.text);
    assert_eq!(day["totalCents"], 1450 * booked, "{}", closed.text);
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], true, "{verdict}");
    assert_eq!(verdict["chains"]["ticket"].as_i64().unwrap_or(0), booked, "{verdict}");
    shop.server.stop().await;
}

async fn a_closed_day_takes_no_more_sales(engine: Engine) {
    let mut shop = Shop::open_at(engine, at("2026-06-15T08:00:00Z"), |_| {}).await;
    shop.sell("t1", vec![line("l1", MUG, 1)]).await;
    shop.server.clock.advance(Duration::from_secs(60));
    let closed = shop.close_shift_then("day").await;
    assert_eq!(closed.status, 201, "{}", closed.text);
    assert_eq!(closed.body["closures"][0]["ticketCount"], 1);
    // A sale the till rang before its shift closed, arriving late, finds the day closed.
    let mut late = shop.sale("t2", vec![line("l1", MUG, 1)], 1450);
    late["issuedAt"] = json!("2026-06-15T08:00:30Z");
    let refused = shop.finalize(&late).await;
    refused.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(refused.text.contains("closed"), "{}", refused.text);
    shop.close("day").await.assert_error(409, "CONFLICT");
    shop.server
        .post(
            "/v1/fiscal/registers/r9/closures",
            &shop.server.admin(),
            json!({"period": "day"}),
        )
        .await
        .assert_error(404, "NOT_FOUND");
    shop.server
        .post(
            "/v1/fiscal/registers/r1/closures",
            &shop.server.admin(),
            json!({"period": "week"}),
        )
        .await
        .assert_error(400, "VALIDATION_FAILED");
    shop.server.clock.set(at("2026-06-16T08:00:00Z"));
    shop.reopen().await;
    shop.sell("t2", vec![line("l1", MUG, 1)]).await;
    assert_eq!(shop.verify("r1").await["ok"], true);
    shop.server.stop().await;
}

/// A deterministic spread of carts: 1 to 4 lines of the three articles.
fn cart(n: u64) -> Vec<Value> {
    let articles = [MUG, BAGUETTE, BOOK];
    let lines = 1 + (n * 7 % 4) as usize;
    (0..lines)
        .map(|i| {
            line(
                &format!("l{i}"),
                articles[(n as usize + i) % 3],
                1 + ((n * 13 + i as u64) % 5) as i64,
            )
        })
        .collect()
}

fn price(lines: &[Value]) -> i64 {
    lines
        .iter()
        .map(|l| l["unitPrice"].as_i64().unwrap() * l["quantity"].as_i64().unwrap())
        .sum()
}

async fn thousands_of_sales_sum_exactly_into_their_closures(engine: Engine) {
    let mut shop = Shop::open_at(engine, at("2026-09-01T06:00:00Z"), |_| {}).await;
    let mut total = 0;
    let mut n = 0u64;
    for day in 0..4 {
        shop.server.clock.set(
            at("2026-09-01T06:00:00Z")
                .checked_add(jiff::SignedDuration::from_hours(24 * day))
                .unwrap(),
        );
        if day > 0 {
            shop.reopen().await;
        }
        for _ in 0..10 {
            let sales: Vec<Value> = (0..50)
                .map(|_| {
                    n += 1;
                    let lines = cart(n);
                    let due = price(&lines);
                    total += due;
                    shop.sale(&format!("t{n}"), lines, due)
                })
                .collect();
            let replies = join_all(sales.iter().map(|s| shop.finalize(s))).await;
            assert!(replies.iter().all(|r| r.status == 201), "a sale was refused");
        }
    }
    assert_eq!(shop.close_shift_then("day").await.status, 201);
    let closures = shop.closures().await;
    let days: Vec<&Value> = closures.iter().filter(|c| c["period"] == "DAY").collect();
    assert_eq!(days.len(), 4);
    assert_eq!(
        days.iter().map(|c| c["ticketCount"].as_i64().unwrap()).sum::<i64>(),
        2000
    );
    assert_eq!(
        days.iter().map(|c| c["totalCents"].as_i64().unwrap()).sum::<i64>(),
        total
    );
    assert_eq!(days.last().unwrap()["grandTotalCents"], total);
    let vat: i64 = days
        .iter()
        .flat_map(|c| c["vat"].as_array().unwrap())
        .map(|v| v["totalCents"].as_i64().unwrap())
        .sum();
    assert_eq!(vat, total);
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], true, "{verdict}");
    assert_eq!(verdict["chains"]["ticket"], 2000);
    // The chain is read in pages (no statement may outlast a statement timeout): a ticket
    // removed just after a page's end is still found.
    shop.server
        .tamper(
            engine,
            &["DELETE FROM fiscal_entries WHERE kind = 'ticket' AND seq = 501"],
        )
        .await;
    assert_eq!(failure(&shop.verify("r1").await), ("ticket".into(), 502, "gap".into()));
    shop.server.stop().await;
}

/// Three sales of a shift still open.
async fn three_sales(engine: Engine) -> Shop {
    let shop = Shop::open(engine).await;
    for n in 1..=3 {
        shop.sell(&format!("t{n}"), vec![line("l1", MUG, n)]).await;
    }
    shop
}

/// Three sales, their shift and their day closed: the state every tampering test starts from.
async fn closed_day(engine: Engine) -> Shop {
    let shop = three_sales(engine).await;
    assert_eq!(shop.close_shift_then("day").await.status, 201);
    assert_eq!(shop.verify("r1").await["ok"], true);
    shop
}

fn failure(verdict: &Value) -> (String, i64, String) {
    let failure = &verdict["firstFailure"];
    (
        failure["chain"].as_str().unwrap().to_owned(),
        failure["seq"].as_i64().unwrap(),
        failure["kind"].as_str().unwrap().to_owned(),
    )
}

async fn a_changed_sale_field_is_found_and_named(engine: Engine) {
    let shop = closed_day(engine).await;
    let events_before = shop.chain("r1", "event").await.len();
    shop.server
        .edit_sale_document("t2", r#""quantity":2"#, r#""quantity":1"#)
        .await;
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], false);
    assert_eq!(failure(&verdict), ("ticket".into(), 2, "altered".into()));
    assert!(verdict["firstFailure"]["reason"].as_str().unwrap().contains("t2"));
    // The failure is recorded once as a technical event (JET 90), not at every audit.
    shop.verify("r1").await;
    let events = shop.chain("r1", "event").await;
    assert_eq!(events.len(), events_before + 1);
    assert_eq!(codes(&events).last(), Some(&90));
    shop.server.stop().await;
}

/// A sale's packed answer and document that no longer unpack (a byte cut off the end) make its
/// ticket altered in the audit, as a changed field does, not a failed audit.
async fn a_damaged_packed_sale_is_found_as_altered(engine: Engine) {
    // The shift still open: the ticket's own check is what reads the damaged sale.
    let shop = three_sales(engine).await;
    let cut = match engine {
        Engine::Sqlite => "substr(packed, 1, length(packed) - 1)",
        Engine::Postgres => "substring(packed from 1 for length(packed) - 1)",
    };
    shop.server
        .tamper(
            engine,
            &[&format!("UPDATE sales SET packed = {cut} WHERE transaction_id = 't2'")],
        )
        .await;
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], false, "{verdict}");
    assert_eq!(failure(&verdict), ("ticket".into(), 2, "altered".into()));
    shop.server.stop().await;
}

/// Once its shift is closed the shift's check reads the sale too: the damage is still a
/// verdict, never an internal error.
async fn a_damaged_packed_sale_in_a_closed_shift_is_found_as_altered(engine: Engine) {
    let shop = closed_day(engine).await;
    let cut = match engine {
        Engine::Sqlite => "substr(packed, 1, length(packed) - 1)",
        Engine::Postgres => "substring(packed from 1 for length(packed) - 1)",
    };
    shop.server
        .tamper(
            engine,
            &[&format!("UPDATE sales SET packed = {cut} WHERE transaction_id = 't2'")],
        )
        .await;
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], false, "{verdict}");
    assert_eq!(failure(&verdict), ("ticket".into(), 2, "altered".into()));
    shop.server.stop().await;
}

async fn a_changed_total_or_chain_field_is_found(engine: Engine) {
    let shop = closed_day(engine).await;
    shop.server
        .tamper(
            engine,
            &["UPDATE sales SET total_cents = 1 WHERE transaction_id = 't3'"],
        )
        .await;
    assert_eq!(
        failure(&shop.verify("r1").await),
        ("ticket".into(), 3, "altered".into())
    );
    shop.server.stop().await;
    let shop = closed_day(engine).await;
    shop.server
        .tamper(
            engine,
            &["UPDATE fiscal_entries SET signature = 'AAAA' WHERE kind = 'ticket' AND seq = 1"],
        )
        .await;
    let (chain, seq, kind) = failure(&shop.verify("r1").await);
    assert_eq!((chain.as_str(), seq), ("ticket", 1));
    assert!(kind == "signature" || kind == "link", "{kind}");
    shop.server.stop().await;
}

async fn removed_entries_are_found_through_gaps_and_anchors(engine: Engine) {
    // A ticket removed from the middle leaves a gap.
    let shop = closed_day(engine).await;
    shop.server
        .tamper(
            engine,
            &["DELETE FROM fiscal_entries WHERE kind = 'ticket' AND seq = 2"],
        )
        .await;
    assert_eq!(failure(&shop.verify("r1").await), ("ticket".into(), 3, "gap".into()));
    shop.server.stop().await;
    // The newest ticket removed, and the chain's head rewound to hide it: the day closure's
    // anchor still names it.
    let shop = closed_day(engine).await;
    shop.server
        .tamper(
            engine,
            &[
                "DELETE FROM fiscal_entries WHERE kind = 'ticket' AND seq = 3",
                "UPDATE fiscal_heads SET last_seq = 2 WHERE kind = 'ticket'",
            ],
        )
        .await;
    assert_eq!(
        failure(&shop.verify("r1").await),
        ("closure".into(), 2, "anchor".into()),
        "the day closure, sealed after the shift's"
    );
    shop.server.stop().await;
}

fn run(args: &[&str], server: &TestServer) -> (bool, String) {
    server.run_till(args)
}

async fn archives_verify_offline_and_break_on_any_changed_byte(engine: Engine) {
    let shop = closed_day(engine).await;
    let today = shop_today();
    let made = shop.make_archive(today - jiff::Span::new().days(1), today).await;
    assert_eq!(made.status, 201, "{}", made.text);
    let id = made.headers["x-till-archive-id"].to_str().unwrap().to_owned();
    // The file follows its published schema.
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/nf525-archive.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&made.body)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(made.body["archive"]["sales"].as_array().unwrap().len(), 3);
    // Offline, with the binary and no database.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.json");
    std::fs::write(&path, made.text.as_bytes()).unwrap();
    let (ok, output) = run(&["fiscal", "verify-archive", path.to_str().unwrap()], &shop.server);
    assert!(ok, "{output}");
    assert!(output.contains(&made.headers["x-till-archive-sha256"].to_str().unwrap().to_owned()));
    let bytes = made.text.as_bytes();
    for position in (0..bytes.len()).step_by(bytes.len() / 40) {
        let mut changed = bytes.to_vec();
        changed[position] ^= 0x01;
        assert!(
            till_core::fiscal::archive::verify_file(&changed).is_err(),
            "byte {position} changed unnoticed"
        );
    }
    let mut changed = bytes.to_vec();
    changed[bytes.len() / 2] ^= 0x01;
    std::fs::write(&path, &changed).unwrap();
    let (ok, output) = run(&["fiscal", "verify-archive", path.to_str().unwrap()], &shop.server);
    assert!(!ok, "{output}");
    // It can be fetched again, and the journal records it.
    let again = shop
        .server
        .get(
            &format!("/v1/fiscal/archives/{id}"),
            &shop.server.token("auditor", "pos.fiscal.read"),
        )
        .await;
    assert_eq!(again.text, made.text);
    let verdict = shop.verify("r1").await;
    assert_eq!(
        (verdict["ok"].clone(), verdict["chains"]["archive"].clone()),
        (json!(true), json!(1))
    );
    assert_eq!(codes(&shop.chain("r1", "event").await).last(), Some(&20));
    let backwards = json!({"registerId": "r1", "from": "2026-05-02", "to": "2026-05-01"});
    let reply = shop
        .server
        .post("/v1/fiscal/archives", &shop.server.admin(), backwards)
        .await;
    assert_eq!(reply.fields(), ["to"]);
    shop.server.stop().await;
}

/// The transaction ids of the sales an archive file holds, sorted.
fn archived_sales(file: &Value) -> Vec<String> {
    let mut ids: Vec<String> = file["archive"]["sales"]
        .as_array()
        .unwrap()
        .iter()
        .map(|sale| sale["transactionId"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

/// An archive is read and built away from the writer, then sealed. A ticket of its period
/// written in between is not left out: the seal refuses the draft, and the request reads the
/// journal again.
async fn an_archive_read_before_a_ticket_of_its_period_takes_the_ticket_in(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.sell("t1", vec![line("l1", MUG, 1)]).await;
    let today = shop_today();
    let store = shop.server.store();
    let request = till_store::archives::ArchiveRequest {
        archive_id: "arc_drafted_early".into(),
        register_id: "r1".into(),
        from: today,
        to: today,
        software_version: "test".into(),
    };
    let draft = store
        .draft_archive(&request, Timestamp::now())
        .await
        .unwrap()
        .expect("r1 is a register");
    shop.sell("t2", vec![line("l1", MUG, 2)]).await;
    let sealed = store.seal_archive(draft).await;
    assert!(
        matches!(sealed, Err(till_store::StoreError::Stale(_))),
        "a draft without t2 was sealed"
    );
    assert!(shop.chain("r1", "archive").await.is_empty(), "the refused seal wrote");

    // A draft with nothing written since seals.
    let draft = store.draft_archive(&request, Timestamp::now()).await.unwrap().unwrap();
    let made = store.seal_archive(draft).await.expect("sealed");
    let file: Value = serde_json::from_slice(&made.file).unwrap();
    assert_eq!(archived_sales(&file), ["t1", "t2"]);
    assert!(till_core::fiscal::archive::verify_file(&made.file).is_ok());

    // Through the API, after another sale.
    shop.sell("t3", vec![line("l1", MUG, 1)]).await;
    let made = shop.make_archive(today, today).await;
    assert_eq!(made.status, 201, "{}", made.text);
    assert_eq!(made.body["archive"]["sales"].as_array().unwrap().len(), 3);
    assert_eq!(shop.chain("r1", "archive").await.len(), 2);
    assert_eq!(shop.verify("r1").await["ok"], true);
    shop.server.stop().await;
}

/// An archive of a day in the middle of a register's history reads that day, and still
/// carries what an offline check of it needs: the tickets its closures cover (written the day
/// before), the entry its chains pick up from, and the grand totals it opens on.
async fn an_archive_of_one_day_amid_others_holds_what_checks_it(engine: Engine) {
    let day = |date: &str| date.parse::<jiff::civil::Date>().unwrap();
    let seqs = |file: &Value, kind: &str| -> (i64, Vec<i64>) {
        let chain = file["archive"]["chains"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} chain in {file}"));
        let entries = chain["entries"].as_array().unwrap();
        let seqs = entries.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
        (chain["previousSeq"].as_i64().unwrap(), seqs)
    };
    // Three days in Paris, two sales a day; each day closes at the next day's first sale.
    let mut shop = Shop::open_at(engine, at("2026-10-10T08:00:00Z"), |_| {}).await;
    let mut totals = Vec::new();
    for (n, date) in ["2026-10-10", "2026-10-11", "2026-10-12"].into_iter().enumerate() {
        shop.server.clock.set(at(&format!("{date}T08:00:00Z")));
        if n > 0 {
            shop.reopen().await;
        }
        for k in 1..=2 {
            let sale = shop
                .sell(&format!("t{}", 2 * n + k), vec![line("l1", MUG, k as i64)])
                .await;
            totals.push(sale["transaction"]["totals"]["total"].as_i64().unwrap());
        }
    }
    let days: Vec<Value> = shop
        .closures()
        .await
        .into_iter()
        .filter(|c| c["period"] == "DAY")
        .collect();
    assert_eq!(days.len(), 2, "{days:?}");

    // The 11th: its tickets, and the 10th's, which the closure written on the 11th covers.
    let made = shop.make_archive(day("2026-10-11"), day("2026-10-11")).await;
    assert_eq!(made.status, 201, "{}", made.text);
    assert_eq!(seqs(&made.body, "ticket"), (0, vec![1, 2, 3, 4]));
    assert_eq!(archived_sales(&made.body), ["t1", "t2", "t3", "t4"]);
    assert_eq!(made.body["archive"]["opening"]["grandTotalCents"], 0);
    till_core::fiscal::archive::verify_file(made.text.as_bytes()).expect("the 11th verifies");

    // The 12th picks up after ticket 2, and opens on the grand total closed on the 11th.
    let made = shop.make_archive(day("2026-10-12"), day("2026-10-12")).await;
    assert_eq!(made.status, 201, "{}", made.text);
    let (previous, tickets) = seqs(&made.body, "ticket");
    assert_eq!((previous, tickets), (2, vec![3, 4, 5, 6]));
    let ticket_chain = shop.chain("r1", "ticket").await;
    let anchor = made.body["archive"]["chains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "ticket")
        .map(|c| c["previousSignature"].clone());
    assert_eq!(anchor, Some(ticket_chain[1]["signature"].clone()));
    assert_eq!(archived_sales(&made.body), ["t3", "t4", "t5", "t6"]);
    assert_eq!(
        made.body["archive"]["opening"]["grandTotalCents"],
        totals[0] + totals[1]
    );
    till_core::fiscal::archive::verify_file(made.text.as_bytes()).expect("the 12th verifies");
    assert_eq!(shop.verify("r1").await["ok"], true);
    shop.server.stop().await;
}

async fn the_cli_audits_the_database(engine: Engine) {
    let shop = closed_day(engine).await;
    let (ok, output) = run(&["fiscal", "verify"], &shop.server);
    assert!(ok, "{output}");
    assert!(output.contains("r1: ok"), "{output}");
    shop.server
        .edit_sale_document("t1", r#""method":"card""#, r#""method":"cash""#)
        .await;
    let (ok, output) = run(&["fiscal", "verify", "--register", "r1"], &shop.server);
    assert!(!ok, "{output}");
    assert!(output.contains("r1: FAILED at ticket entry 1"), "{output}");
    shop.server.stop().await;
}

async fn receipts_print_and_reprints_are_sealed(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.server
        .put(
            "/v1/stores/s1",
            &shop.server.admin(),
            json!({"name": "Épicerie <Marais> & Fils", "siret": "73282932000074"}),
        )
        .await;
    shop.sell("t1", vec![line("l1", MUG, 1), line("l2", BAGUETTE, 3)]).await;
    let path = "/v1/sales/t1/prints";
    let first = shop.server.post(path, &shop.till, json!({})).await;
    assert_eq!(first.status, 201, "{}", first.text);
    assert!(
        first.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    assert!(first.text.lines().all(|l| l.chars().count() <= 48), "{}", first.text);
    for expected in [
        "Épicerie <Marais> & Fils",
        "SIRET 73282932000074",
        "Mug",
        "TOTAL TTC",
        "20,00 %",
        "Carte bancaire",
        "Ticket n° 1",
        "Signature ",
        "till 0.1.0",
    ] {
        assert!(first.text.contains(expected), "{expected} missing from\n{}", first.text);
    }
    assert!(!first.text.contains("DUPLICATA"));
    assert!(
        shop.chain("r1", "duplicate").await.is_empty(),
        "the original is not a reprint"
    );
    let second = shop.server.post(path, &shop.till, json!({})).await;
    assert!(second.text.contains("DUPLICATA n° 1"), "{}", second.text);
    assert_eq!(second.headers["x-till-print"], "2");
    let html = shop
        .server
        .post(&format!("{path}?format=html"), &shop.till, json!({}))
        .await;
    assert!(html.headers["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(html.text.contains("&lt;Marais&gt; &amp; Fils") && html.text.contains("DUPLICATA n° 2"));
    assert_eq!(shop.chain("r1", "duplicate").await.len(), 2);
    shop.server
        .post(&format!("{path}?format=pdf"), &shop.till, json!({}))
        .await
        .assert_error(400, "VALIDATION_FAILED");
    assert_eq!(
        shop.chain("r1", "duplicate").await.len(),
        2,
        "a refused print seals nothing"
    );
    shop.server
        .get("/v1/sales/nope/receipt", &shop.till)
        .await
        .assert_error(404, "NOT_FOUND");
    assert_eq!(shop.verify("r1").await["ok"], true);
    shop.server.stop().await;
}

async fn a_rotated_key_signs_new_entries_and_old_ones_still_verify(engine: Engine) {
    let shared = tempfile::tempdir().unwrap();
    let first_key = shared.path().join("first.pem");
    let second_key = shared.path().join("second.pem");
    till::fiscal::new_key(&first_key).unwrap();
    till::fiscal::new_key(&second_key).unwrap();
    let first = Shop::open_with(engine, |c| {
        c.fiscal_key_file = Some(first_key.clone());
        if engine == Engine::Sqlite {
            c.database_url = Some(format!("sqlite://{}", shared.path().join("till.db").display()));
        }
    })
    .await;
    first.sell("t1", vec![line("l1", MUG, 1)]).await;
    let url = first.server.config.database_url();
    let session = (first.session.clone(), first.till.clone());
    first.server.stop().await;
    let server = TestServer::start_with(engine, |c| {
        c.fiscal_key_file = Some(second_key.clone());
        c.database_url = Some(url);
    })
    .await;
    let second = Shop {
        server,
        session: session.0,
        till: session.1,
    };
    second.sell("t2", vec![line("l1", MUG, 1)]).await;
    let keys = second
        .server
        .call(reqwest::Method::GET, "/v1/fiscal/keys", None, None)
        .await;
    assert_eq!(keys.body["keys"].as_array().unwrap().len(), 2);
    let tickets = second.chain("r1", "ticket").await;
    assert_ne!(tickets[0]["keyId"], tickets[1]["keyId"]);
    assert_eq!(second.verify("r1").await["ok"], true);
    second.server.stop().await;
}

/// The journal's entries are verified with the keys it published: not even someone with
/// database access can withdraw or rewrite one.
async fn a_published_key_cannot_be_withdrawn_or_changed(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.sell("t1", vec![line("l1", MUG, 1)]).await;
    for statement in ["DELETE FROM fiscal_keys", "UPDATE fiscal_keys SET public_jwk = '{}'"] {
        let refusal = shop.server.run_sql(statement).await.expect_err(statement);
        assert!(refusal.contains("fiscal keys are append-only"), "{refusal}");
    }
    let keys = shop
        .server
        .call(reqwest::Method::GET, "/v1/fiscal/keys", None, None)
        .await;
    assert_eq!(keys.body["keys"].as_array().unwrap().len(), 1);
    assert_eq!(shop.verify("r1").await["ok"], true);
    shop.server.stop().await;
}

/// The shift's duration does not matter to the journal: a session open across midnight is
/// closed into the next day, and its Z report still seals its own sales.
async fn a_shift_across_midnight_closes_the_day_first(engine: Engine) {
    let shop = Shop::open_at(engine, at("2026-10-10T20:00:00Z"), |_| {}).await;
    shop.sell("t1", vec![line("l1", MUG, 1)]).await;
    shop.server.clock.advance(Duration::from_secs(4 * 3600));
    let close = format!("/v1/register-sessions/{}/close", shop.session);
    let report = shop.server.post(&close, &shop.server.admin(), json!({})).await;
    assert_eq!(report.body["salesCount"], 1);
    let closures = shop.closures().await;
    assert_eq!(closures.len(), 1);
    assert_eq!(closures[0]["periodFrom"], "2026-10-10");
    assert_eq!(shop.verify("r1").await["ok"], true);
    shop.server.stop().await;
}

/// The first sale after midnight closes the day before it takes its own place in the chain:
/// the day's closure ends at the last ticket of that day, and the new ticket follows it.
async fn the_first_sale_after_midnight_closes_the_day_before_its_ticket(engine: Engine) {
    // 23:00 in Paris; the shift goes on past midnight.
    let shop = Shop::open_at(engine, at("2026-10-10T21:00:00Z"), |_| {}).await;
    shop.sell("t1", vec![line("l1", MUG, 1)]).await;
    shop.sell("t2", vec![line("l1", BOOK, 1)]).await;
    shop.server.clock.advance(Duration::from_secs(2 * 3600));
    shop.sell("t3", vec![line("l1", MUG, 1)]).await;
    let closures = shop.closures().await;
    assert_eq!(closures.len(), 1, "{closures:?}");
    assert_eq!(closures[0]["periodFrom"], "2026-10-10");
    assert_eq!(closures[0]["ticketCount"], 2);
    assert_eq!(closures[0]["lastTicketSeq"], 2);
    let tickets = shop.chain("r1", "ticket").await;
    let seqs: Vec<i64> = tickets.iter().map(|t| t["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, [1, 2, 3]);
    assert_eq!(shop.verify("r1").await["ok"], true);
    shop.server.stop().await;
}

/// A shift running past midnight: the day that is over closes by itself at the next write,
/// the shift still open; the current day, not over, closes early only once the shift is
/// closed, and then no session opens on it until the next day.
async fn a_day_that_is_over_closes_with_a_shift_open_the_current_day_once_it_is_closed(engine: Engine) {
    // 23:00 in Paris; the shift goes on past midnight.
    let mut shop = Shop::open_at(engine, at("2026-10-10T21:00:00Z"), |_| {}).await;
    shop.sell("t1", vec![line("l1", MUG, 1)]).await;
    shop.server.clock.advance(Duration::from_secs(2 * 3600));

    // 01:00: closing the day is refused while the shift is open, and seals nothing, not even
    // the day that ended at midnight.
    let refused = shop.close("day").await;
    refused.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(
        refused.text.contains(&shop.session),
        "names the open session: {}",
        refused.text
    );
    assert!(refused.text.contains("2026-10-11"), "names the day: {}", refused.text);
    assert!(shop.chain("r1", "closure").await.is_empty(), "nothing sealed");

    // The day that ended closes at the next write, the shift still open.
    shop.sell("t2", vec![line("l1", MUG, 1)]).await;
    let closures = shop.closures().await;
    let days: Vec<&str> = closures.iter().map(|c| c["periodFrom"].as_str().unwrap()).collect();
    assert_eq!(days, ["2026-10-10"]);

    // Once the shift is closed, the current day closes early; no session opens on it.
    let closed = shop.close_shift_then("day").await;
    assert_eq!(closed.status, 201, "{}", closed.text);
    assert_eq!(closed.body["closures"][0]["periodFrom"], "2026-10-11");
    let body = json!({"storeId": "s1", "registerId": "r1", "cashierSubject": "camille", "pin": "1234"});
    let refused = shop
        .server
        .post("/v1/register-sessions", &shop.server.admin(), body)
        .await;
    refused.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(
        refused.text.contains("2026-10-11") && refused.text.contains("closed"),
        "{}",
        refused.text
    );
    // Another register of the store is not closed.
    shop.server.open_session("s1", "r2", "camille", "1234").await;

    // The next day, the register opens again.
    shop.server.clock.set(at("2026-10-11T22:30:00Z"));
    shop.reopen().await;
    shop.sell("t3", vec![line("l1", MUG, 1)]).await;
    assert_eq!(shop.verify("r1").await["ok"], true);
    shop.server.stop().await;
}

/// `till serve` as a process of its own, and the back office's token for it.
struct Served {
    node: till_load::cluster::Node,
    client: till_load::client::Client,
    admin: String,
    _dir: tempfile::TempDir,
}

const SERVED_SECRET: &str = "served-test-secret-of-at-least-32-bytes";

impl Served {
    async fn start(engine: Engine) -> Served {
        let dir = tempfile::tempdir().expect("temporary directory");
        let key = dir.path().join("fiscal-key.pem");
        till::fiscal::new_key(&key).expect("a signing key");
        let database_url = match engine {
            Engine::Sqlite => format!("sqlite://{}", dir.path().join("till.db").display()),
            Engine::Postgres => crate::harness::fresh_postgres_database().await,
        };
        let config = till_load::cluster::NodeConfig {
            binary: env!("CARGO_BIN_EXE_till").into(),
            database_url,
            jwt_secret: SERVED_SECRET.into(),
            fiscal_key_file: key,
            env: Vec::new(),
            work_dir: dir.path().to_path_buf(),
        };
        let mut node = till_load::cluster::Node::new(0, config).expect("a port");
        node.start().await.expect("till serve starts");
        let client = till_load::client::Client::new(vec![node.url()]).expect("a client");
        Served {
            node,
            client,
            admin: till_load::shop::admin_token(SERVED_SECRET),
            _dir: dir,
        }
    }

    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> (u16, Value, String) {
        let reply = self
            .client
            .send(method, path, token, body.as_ref())
            .await
            .expect("an answer");
        (reply.status, reply.json(), reply.text)
    }

    async fn closure_chain(&self) -> Value {
        let (status, body, text) = self
            .send(
                reqwest::Method::GET,
                "/v1/fiscal/registers/r1/chains/closure",
                &self.admin,
                None,
            )
            .await;
        assert_eq!(status, 200, "{text}");
        body["entries"].clone()
    }
}

/// The day-closure trap, through the real binary: closing the day while a session is open is
/// refused, naming the session, and seals nothing (the register goes on selling); once the
/// session is closed the day closes, a session cannot open on it that day, and the console's
/// registers page says the day is closed.
async fn a_day_closes_early_only_once_its_session_is_closed_through_the_real_binary(engine: Engine) {
    use reqwest::Method;
    let served = Served::start(engine).await;
    let admin = served.admin.as_str();
    // A store whose day is around its noon whatever hour the test runs at: no midnight passes.
    let utc_hour = i64::from(Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).hour());
    let zone = match 12 - utc_hour {
        0 => "Etc/GMT".to_owned(),
        ahead if ahead > 0 => format!("Etc/GMT-{ahead}"),
        behind => format!("Etc/GMT+{}", -behind),
    };
    let today = Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::get(&zone).expect("a zone"))
        .date()
        .to_string();
    let (status, _, text) = served
        .send(
            Method::PUT,
            "/v1/stores/s1",
            admin,
            Some(json!({"name": "s1", "timezone": zone})),
        )
        .await;
    assert_eq!(status, 201, "{text}");
    let mug = crate::harness::sku(MUG.0);
    let article = json!({"name": MUG.0, "priceCents": MUG.1, "vatRate": MUG.2});
    let (status, _, text) = served
        .send(Method::PUT, &format!("/v1/catalog/skus/{mug}"), admin, Some(article))
        .await;
    assert_eq!(status, 201, "{text}");
    let cashier = json!({"displayName": "Camille", "role": "cashier", "pin": "1234"});
    let (status, _, text) = served
        .send(Method::PUT, "/v1/staff/camille", admin, Some(cashier))
        .await;
    assert_eq!(status, 201, "{text}");
    let opening = json!({"storeId": "s1", "registerId": "r1", "cashierSubject": "camille", "pin": "1234"});
    let (status, opened, text) = served
        .send(Method::POST, "/v1/register-sessions", admin, Some(opening.clone()))
        .await;
    assert_eq!(status, 201, "{text}");
    let (session, till) = (opened["sessionId"].as_str().unwrap(), opened["token"].as_str().unwrap());
    let sale = |transaction: &str| {
        json!({"transactionId": transaction, "number": format!("T-{transaction}"), "storeId": "s1",
               "sellerId": "camille", "customerId": null, "sessionId": session,
               "cart": {"freeLineSequence": 0, "lines": [
                   {"id": "l1", "skuId": mug, "quantity": 1, "unitPrice": MUG.1, "vatRate": MUG.2, "free": false}]},
               "tenders": {"amountDue": MUG.1, "sequence": 1, "tenders": [
                   {"id": "p1", "method": "card", "applied": MUG.1, "presented": MUG.1, "change": 0, "forfeited": 0}]}})
    };
    let finalize = |body: Value| served.send(Method::POST, "/v1/checkout/finalize", till, Some(body));
    let (status, _, text) = finalize(sale("t1")).await;
    assert_eq!(status, 201, "{text}");

    let chain_before = served.closure_chain().await;
    let close_day = || {
        served.send(
            Method::POST,
            "/v1/fiscal/registers/r1/closures",
            admin,
            Some(json!({"period": "day"})),
        )
    };
    let (status, refused, text) = close_day().await;
    assert_eq!(status, 422, "{text}");
    assert_eq!(refused["error"]["code"], "BUSINESS_RULE_VIOLATION");
    assert!(text.contains(session), "names the open session: {text}");
    assert_eq!(served.closure_chain().await, chain_before, "nothing sealed");
    let (status, _, text) = finalize(sale("t2")).await;
    assert_eq!(status, 201, "the register still sells: {text}");

    let (status, _, text) = served
        .send(
            Method::POST,
            &format!("/v1/register-sessions/{session}/close"),
            admin,
            None,
        )
        .await;
    assert_eq!(status, 200, "{text}");
    let (status, closed, text) = close_day().await;
    assert_eq!(status, 201, "{text}");
    let day = &closed["closures"][0];
    assert_eq!(
        (day["period"].as_str(), day["periodFrom"].as_str()),
        (Some("DAY"), Some(today.as_str()))
    );
    assert_eq!(day["ticketCount"], 2);

    let (status, refused, text) = served
        .send(Method::POST, "/v1/register-sessions", admin, Some(opening))
        .await;
    assert_eq!(status, 422, "no session opens on a closed day: {text}");
    assert_eq!(refused["error"]["code"], "BUSINESS_RULE_VIOLATION");
    assert!(
        text.contains(&today) && text.contains("closed"),
        "says the day is closed: {text}"
    );

    let page = reqwest::Client::new()
        .get(format!("{}/console/registers", served.node.url()))
        .header(reqwest::header::COOKIE, format!("till_console={admin}"))
        .header(reqwest::header::ACCEPT_LANGUAGE, "en")
        .send()
        .await
        .expect("the console answers");
    assert_eq!(page.status(), 200);
    let html = page.text().await.expect("a page");
    let day: jiff::civil::Date = today.parse().expect("a day");
    let shown = day.strftime("%-d %b %Y").to_string();
    assert!(html.contains(&format!("Day {shown} is closed")), "{html}");
    assert!(html.contains("No session open."), "{html}");
    let mut served = served;
    served.node.kill().await.expect("the process ends");
}

on_both_engines!(
    a_day_that_is_over_closes_with_a_shift_open_the_current_day_once_it_is_closed,
    a_day_closes_early_only_once_its_session_is_closed_through_the_real_binary,
    the_first_sale_after_midnight_closes_the_day_before_its_ticket,
    the_journal_records_events_and_audits_clean,
    days_and_months_close_by_themselves,
    a_closed_day_takes_no_more_sales,
    a_day_closed_early_counts_exactly_the_sales_it_let_through,
    thousands_of_sales_sum_exactly_into_their_closures,
    a_changed_sale_field_is_found_and_named,
    a_damaged_packed_sale_is_found_as_altered,
    a_damaged_packed_sale_in_a_closed_shift_is_found_as_altered,
    a_changed_total_or_chain_field_is_found,
    removed_entries_are_found_through_gaps_and_anchors,
    archives_verify_offline_and_break_on_any_changed_byte,
    an_archive_read_before_a_ticket_of_its_period_takes_the_ticket_in,
    an_archive_of_one_day_amid_others_holds_what_checks_it,
    the_cli_audits_the_database,
    receipts_print_and_reprints_are_sealed,
    a_rotated_key_signs_new_entries_and_old_ones_still_verify,
    a_published_key_cannot_be_withdrawn_or_changed,
    a_shift_across_midnight_closes_the_day_first,
);
