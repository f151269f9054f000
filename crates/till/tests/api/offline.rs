//! Tills that keep selling while the network is down (docs/offline.md): a queued sale
//! carries the instant it was rung, is priced as of then, and, when its session was closed in
//! the meantime, is booked late: sealed at its arrival, kept out of the session's sealed Z
//! report, shown apart in the register's next one and in the day that received it.

use crate::harness::{Engine, TestServer, sku};
use crate::harness::{Shop, line};
use crate::journal::codes;
use crate::on_both_engines;
use futures::future::join_all;
use jiff::{Span, Timestamp};
use serde_json::{Value, json};
use std::collections::BTreeMap;

const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);
const BAGUETTE: (&str, i64, f64) = ("Baguette", 130, 5.5);
const BOOK: (&str, i64, f64) = ("Livre", 2490, 5.5);

fn at(text: &str) -> Timestamp {
    text.parse().expect("an instant")
}

fn utc(instant: Timestamp) -> String {
    instant.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

impl Shop {
    /// A sale of one `article` paid by card, rung at `issued_at` on `session`.
    fn rung(&self, transaction: &str, session: &str, article: (&str, i64, f64), issued_at: Timestamp) -> Value {
        let mut sale = self.sale(transaction, vec![line("l1", article, 1)], article.1);
        sale["sessionId"] = json!(session);
        sale["issuedAt"] = json!(utc(issued_at));
        sale
    }

    /// Closes `session` with the back office's token and answers its Z report.
    async fn close_session(&self, session: &str) -> Value {
        let closed = self
            .server
            .post(
                &format!("/v1/register-sessions/{session}/close"),
                &self.server.admin(),
                Value::Null,
            )
            .await;
        assert_eq!(closed.status, 200, "{}", closed.text);
        closed.body
    }
}

/// What a report shows apart, without its tenders.
fn late_part(report: &Value) -> Value {
    json!({"salesCount": report["lateSales"]["salesCount"], "totalCents": report["lateSales"]["totalCents"]})
}

async fn a_sale_reaching_a_closed_session_is_booked_late_and_shown_apart(engine: Engine) {
    let start = at("2028-03-01T08:00:00Z");
    let shop = Shop::open_at(engine, start, |_| {}).await;
    let clock = &shop.server.clock;
    let sold = shop.finalize(&shop.sale("t1", vec![line("l1", MUG, 1)], MUG.1)).await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    // The till goes offline and rings two sales; the back office closes its session.
    clock.advance(std::time::Duration::from_secs(600));
    let offline = shop.server.clock_now();
    let queued = [
        shop.rung("t2", &shop.session, BAGUETTE, offline),
        shop.rung("t3", &shop.session, MUG, offline + Span::new().minutes(2)),
    ];
    clock.advance(std::time::Duration::from_secs(1800));
    let first_z = shop.close_session(&shop.session).await;
    assert_eq!(
        (first_z["salesCount"].clone(), first_z["totalCents"].clone()),
        (json!(1), json!(MUG.1))
    );
    assert!(first_z.get("lateSales").is_none(), "{first_z}");

    // Back online: the session's token still authenticates, and the queue is booked late.
    clock.advance(std::time::Duration::from_secs(60));
    for sale in &queued {
        let booked = shop.finalize(sale).await;
        assert_eq!(booked.status, 201, "{}", booked.text);
        let again = shop.finalize(sale).await;
        assert_eq!(again.text, booked.text, "a late sale sent twice is booked once");
    }
    assert_eq!(
        shop.close_session(&shop.session).await,
        first_z,
        "a sealed Z report never changes"
    );

    // The next shift on the register: one sale of its own, and one more late sale of the
    // first shift sent with the new session's token.
    let (session, till) = shop.server.open_session("s1", "r1", "camille", "1234").await;
    let own = shop.rung("t4", &session, BOOK, shop.server.clock_now());
    assert_eq!(shop.finalize_as(&till, &own).await.status, 201);
    let late = shop.rung("t5", &shop.session, BAGUETTE, offline + Span::new().minutes(3));
    let booked = shop.finalize_as(&till, &late).await;
    assert_eq!(booked.status, 201, "{}", booked.text);

    let x = shop
        .server
        .get(&format!("/v1/register-sessions/{session}/x-report"), &till)
        .await;
    assert_eq!(x.status, 200, "{}", x.text);
    let late_total = BAGUETTE.1 + MUG.1 + BAGUETTE.1;
    assert_eq!(
        (x.body["salesCount"].clone(), x.body["totalCents"].clone()),
        (json!(1), json!(BOOK.1))
    );
    assert_eq!(late_part(&x.body), json!({"salesCount": 3, "totalCents": late_total}));
    assert_eq!(
        x.body["lateSales"]["tenders"],
        json!([{"method": "card", "appliedCents": late_total}])
    );
    // The late sales were paid into the first shift's drawer: this one expects none of it.
    assert_eq!(x.body["expectedCashCents"], 0);
    let second_z = shop.close_session(&session).await;
    for field in [
        "salesCount",
        "totalCents",
        "tenders",
        "vat",
        "lateSales",
        "expectedCashCents",
    ] {
        assert_eq!(
            second_z[field], x.body[field],
            "{field}: the X and the Z of the same sales"
        );
    }

    // A third shift shows no late sale again.
    let (third, third_till) = shop.server.open_session("s1", "r1", "camille", "1234").await;
    let x = shop
        .server
        .get(&format!("/v1/register-sessions/{third}/x-report"), &third_till)
        .await;
    assert!(x.body.get("lateSales").is_none(), "{}", x.text);

    // The technical events record the first late sale after each gap: t2 (after t1) and t5
    // (after t4), not t3, which followed t2.
    let codes = codes(&shop.chain("r1", "event").await);
    assert_eq!(codes.iter().filter(|code| **code == 1040).count(), 2, "{codes:?}");

    // The day that received them shows them apart among its tickets.
    clock.advance(std::time::Duration::from_secs(24 * 3600));
    let (_, fourth_till) = shop.server.open_session("s1", "r1", "camille", "1234").await;
    assert!(!fourth_till.is_empty());
    let closures = shop.closures().await;
    let day = closures
        .iter()
        .find(|c| c["period"] == "DAY" && c["periodFrom"] == "2028-03-01")
        .unwrap_or_else(|| panic!("no closure of the day: {closures:?}"));
    assert_eq!(day["ticketCount"], 5);
    assert_eq!(day["late"], json!({"salesCount": 3, "totalCents": late_total}));
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], true, "{verdict}");
    shop.server.stop().await;
}

async fn sales_too_old_in_the_future_or_of_another_register_are_refused(engine: Engine) {
    let start = at("2028-03-01T08:00:00Z");
    let shop = Shop::open_at(engine, start, |config| config.max_sale_age_hours = 2).await;
    shop.server.provision_staff("lea", "cashier", "4321").await;
    let (other, _) = shop.server.open_session("s1", "r2", "lea", "4321").await;
    shop.close_session(&other).await;
    shop.server.clock.advance(std::time::Duration::from_secs(3 * 3600));
    let now = shop.server.clock_now();
    let refused = [
        (
            shop.rung("old", &shop.session, MUG, now - Span::new().hours(2).seconds(1)),
            "2 hours",
        ),
        (
            shop.rung("ahead", &shop.session, MUG, now + Span::new().minutes(5).seconds(1)),
            "5 minutes ahead",
        ),
        (
            shop.rung("other", &other, MUG, now - Span::new().minutes(1)),
            "belongs to session",
        ),
    ];
    for (sale, why) in &refused {
        let reply = shop.finalize(sale).await;
        reply.assert_error(422, "BUSINESS_RULE_VIOLATION");
        assert!(reply.text.contains(why), "{why}: {}", reply.text);
    }
    assert_eq!(
        shop.server.count_rows("sales").await,
        0,
        "a refused sale changes nothing"
    );
    // The bounds themselves are inside.
    for (transaction, issued_at) in [
        ("oldest", now - Span::new().hours(2)),
        ("newest", now + Span::new().minutes(5)),
    ] {
        let booked = shop
            .finalize(&shop.rung(transaction, &shop.session, MUG, issued_at))
            .await;
        assert_eq!(booked.status, 201, "{transaction}: {}", booked.text);
    }
    shop.server.stop().await;
}

/// A queued sale as the till rang it, and the price the till charged.
struct Queued {
    body: Value,
    total: i64,
}

/// The offline night of issue 40: the till on r1 goes offline at 22:30 while its mug's price
/// changes at 23:00 and the day ends at midnight; the back office closes its shift at 01:30,
/// as the till reconnects and sends 300 queued sales in random order, a tenth of them twice.
async fn a_night_offline_is_booked_once_at_the_prices_of_its_sales(engine: Engine) {
    const QUEUED: usize = 300;
    const NEW_MUG: i64 = 1590;
    // Paris is an hour ahead of UTC in March.
    let start = at("2028-03-01T07:00:00Z");
    let shop = Shop::open_at(engine, start, |config| config.session_ttl_seconds = 24 * 3600).await;
    let server: &TestServer = &shop.server;
    let clock = &server.clock;
    let price_change = at("2028-03-01T22:00:00Z");
    let body = json!({"name": MUG.0, "priceCents": NEW_MUG, "vatRate": MUG.2, "effectiveFrom": utc(price_change)});
    let scheduled = server
        .put(&format!("/v1/catalog/skus/{}", sku(MUG.0)), &server.admin(), body)
        .await;
    assert!(scheduled.status == 200 || scheduled.status == 201, "{}", scheduled.text);

    // Online through the evening.
    clock.set(at("2028-03-01T17:00:00Z"));
    for i in 0..10 {
        let sold = shop
            .finalize(&shop.sale(&format!("day-{i}"), vec![line("l1", MUG, 1)], MUG.1))
            .await;
        assert_eq!(sold.status, 201, "{}", sold.text);
    }
    // 22:30 to 01:30 Paris: the queue, rung every 36 seconds, priced by the till as the
    // catalog stood at each instant.
    let offline = at("2028-03-01T21:30:00Z");
    let queue: Vec<Queued> = (0..QUEUED)
        .map(|i| {
            let issued_at = offline + Span::new().seconds(36 * i as i64);
            let mug_price = if issued_at >= price_change { NEW_MUG } else { MUG.1 };
            let lines = vec![line("l1", (MUG.0, mug_price, MUG.2), 1), line("l2", BAGUETTE, 2)];
            let total = mug_price + 2 * BAGUETTE.1;
            let mut body = shop.sale(&format!("night-{i:03}"), lines, total);
            body["issuedAt"] = json!(utc(issued_at));
            Queued { body, total }
        })
        .collect();
    // 01:30, after the last sale of the queue was rung: the back office closes the shift the
    // till could not close, which closes the day that ended at midnight first.
    clock.set(at("2028-03-02T00:29:50Z"));
    let first_z = shop.close_session(&shop.session).await;
    assert_eq!(first_z["salesCount"], 10);

    // Back online. A tenth sent twice, all in random order, four at a time.
    clock.set(at("2028-03-02T00:30:00Z"));
    let mut sends: Vec<(usize, &Queued)> = queue.iter().chain(queue.iter().step_by(10)).enumerate().collect();
    // A fixed scramble of the sending order: 97 steps around a circle of 331 places.
    sends.sort_by_key(|(order, _)| order * 97 % 331);
    let sends: Vec<&Queued> = sends.into_iter().map(|(_, queued)| queued).collect();
    let mut answers: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for chunk in sends.chunks(4) {
        let replies = join_all(chunk.iter().map(|queued| shop.finalize(&queued.body))).await;
        for (queued, mut reply) in chunk.iter().zip(replies) {
            if reply.status == 409 {
                // Its twin was in flight at the same instant: the till sends it again.
                reply = shop.finalize(&queued.body).await;
            }
            assert!(reply.status == 201 || reply.status == 200, "{}", reply.text);
            assert_eq!(
                reply.body["ticket"]["totalCents"], queued.total,
                "priced as of its issuedAt"
            );
            let id = queued.body["transactionId"].as_str().unwrap().to_owned();
            answers.entry(id).or_default().push(reply.text);
        }
    }
    assert_eq!(answers.len(), QUEUED);
    assert!(
        answers
            .values()
            .all(|bodies| bodies.iter().all(|body| *body == bodies[0])),
        "a sale sent twice is answered the same"
    );
    assert_eq!(
        server.count_rows("sales").await,
        (10 + QUEUED) as i64,
        "each committed once"
    );

    // The next morning a new shift opens, which closes the day that received the queue.
    clock.set(at("2028-03-03T07:00:00Z"));
    let (session, till) = server.open_session("s1", "r1", "camille", "1234").await;
    clock.advance(std::time::Duration::from_secs(60));
    let second_z = shop.close_session(&session).await;
    assert!(!till.is_empty());
    let night_total: i64 = queue.iter().map(|queued| queued.total).sum();
    assert_eq!(
        late_part(&second_z),
        json!({"salesCount": QUEUED, "totalCents": night_total})
    );
    let closures = shop.closures().await;
    let day = |date: &str| {
        closures
            .iter()
            .find(|c| c["period"] == "DAY" && c["periodFrom"] == date)
            .unwrap_or_else(|| panic!("no closure of {date}: {closures:?}"))
            .clone()
    };
    let (first_day, second_day) = (day("2028-03-01"), day("2028-03-02"));
    assert_eq!(
        (first_day["ticketCount"].clone(), first_day["totalCents"].clone()),
        (json!(10), first_z["totalCents"].clone())
    );
    assert!(first_day.get("late").is_none(), "{first_day}");
    assert_eq!(second_day["ticketCount"], QUEUED);
    assert_eq!(second_day["totalCents"], night_total);
    assert_eq!(
        second_day["late"],
        json!({"salesCount": QUEUED, "totalCents": night_total})
    );
    // Every ticket is in one day, and in one Z report or shown apart in one.
    let days_total = first_day["totalCents"].as_i64().unwrap() + second_day["totalCents"].as_i64().unwrap();
    let shifts_total = first_z["totalCents"].as_i64().unwrap()
        + second_z["totalCents"].as_i64().unwrap()
        + second_z["lateSales"]["totalCents"].as_i64().unwrap();
    assert_eq!(days_total, shifts_total);
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], true, "{verdict}");

    // The archive of both days passes the independent audit, and holds the late sales marked.
    let archive = server
        .post(
            "/v1/fiscal/archives",
            &server.token("auditor", "pos.fiscal.close"),
            json!({"registerId": "r1", "from": "2028-03-01", "to": "2028-03-02"}),
        )
        .await;
    assert_eq!(archive.status, 201, "{}", archive.text);
    till_core::fiscal::archive::verify_file(archive.text.as_bytes()).expect("the archive verifies");
    let schema: Value = serde_json::from_str(include_str!("../../../../docs/nf525-archive.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&archive.body)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the archive follows its published schema: {errors:?}"
    );
    let sales = archive.body["archive"]["sales"].as_array().unwrap();
    assert_eq!(sales.iter().filter(|sale| sale["late"] == true).count(), QUEUED);
    assert_eq!(sales.len(), 10 + QUEUED);
    shop.server.stop().await;
}

/// A till's queue sent one sale after another: on PostgreSQL, once the node trusts its guess
/// of the till's chain, the late sales after the first are committed in one statement each.
/// The journal records one gap, and every sale is late.
async fn a_queue_sent_in_order_is_one_gap_in_the_journal(engine: Engine) {
    const QUEUED: i64 = 15;
    let start = at("2028-03-01T08:00:00Z");
    let shop = Shop::open_at(engine, start, |_| {}).await;
    let sold = shop.sell_until_the_guess_is_trusted().await;
    let rung = shop.server.clock_now();
    shop.server.clock.advance(std::time::Duration::from_secs(600));
    shop.close_session(&shop.session).await;
    for i in 0..QUEUED {
        let sale = shop.rung(&format!("late-{i}"), &shop.session, MUG, rung + Span::new().seconds(i));
        let booked = shop.finalize(&sale).await;
        assert_eq!(booked.status, 201, "{}", booked.text);
    }
    let codes = codes(&shop.chain("r1", "event").await);
    assert_eq!(codes.iter().filter(|code| **code == 1040).count(), 1, "{codes:?}");
    let (next, till) = shop.server.open_session("s1", "r1", "camille", "1234").await;
    let x = shop
        .server
        .get(&format!("/v1/register-sessions/{next}/x-report"), &till)
        .await;
    assert_eq!(
        late_part(&x.body),
        json!({"salesCount": QUEUED, "totalCents": QUEUED * MUG.1})
    );
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], true, "{verdict}");
    assert_eq!(verdict["chains"]["ticket"], sold + QUEUED);
    shop.server.stop().await;
}

/// A till picks the instant its sale is priced at only within its session: a sale rung 90
/// minutes before its session opened is refused, one a few minutes before (a till's clock a
/// little behind) is booked; once the session is closed, its token books the sales rung before
/// the close as late sales, and nothing rung after it.
async fn a_sale_is_rung_within_its_session_give_or_take_the_clock_skew(engine: Engine) {
    // The articles are in the catalog from 05:00, the early shift runs until 08:00, and the
    // session under test opens at 08:00.
    let mut shop = Shop::open_at(engine, at("2028-03-01T05:00:00Z"), |_| {}).await;
    let clock = shop.server.clock.clone();
    clock.set(at("2028-03-01T08:00:00Z"));
    shop.close_session(&shop.session).await;
    let (session, till) = shop.server.open_session("s1", "r1", "camille", "1234").await;
    shop.session = session;
    shop.till = till;
    clock.set(at("2028-03-01T10:00:00Z"));
    let before = shop
        .finalize(&shop.rung("before", &shop.session, MUG, at("2028-03-01T06:30:00Z")))
        .await;
    before.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(before.text.contains("issuedAt"), "{}", before.text);
    assert!(
        before.text.contains("2028-03-01T08:00:00"),
        "names the opening: {}",
        before.text
    );
    assert_eq!(
        shop.server.count_rows("sales").await,
        0,
        "a refused sale changes nothing"
    );
    let skewed = shop
        .finalize(&shop.rung("skewed", &shop.session, MUG, at("2028-03-01T07:56:00Z")))
        .await;
    assert_eq!(skewed.status, 201, "a till's clock 4 minutes behind: {}", skewed.text);

    // The shift closes at 10:00; its queue reaches the server at 10:30.
    let closed = shop.close_session(&shop.session).await;
    assert_eq!(closed["salesCount"], 1);
    clock.set(at("2028-03-01T10:30:00Z"));
    let after = shop
        .finalize(&shop.rung("after", &shop.session, BAGUETTE, at("2028-03-01T10:06:00Z")))
        .await;
    after.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(after.text.contains("issuedAt"), "{}", after.text);
    assert!(after.text.contains("closed"), "{}", after.text);
    let rung_before = shop
        .finalize(&shop.rung("rung-before", &shop.session, BAGUETTE, at("2028-03-01T09:50:00Z")))
        .await;
    assert_eq!(
        rung_before.status, 201,
        "a late sale rung before the close: {}",
        rung_before.text
    );
    let just_after = shop
        .finalize(&shop.rung("just-after", &shop.session, BAGUETTE, at("2028-03-01T10:04:00Z")))
        .await;
    assert_eq!(just_after.status, 201, "within the skew: {}", just_after.text);
    assert_eq!(shop.server.count_rows("sales").await, 3);

    // The tolerance is the deployment's: at 0, a minute before the opening is refused.
    let strict = Shop::open_at(engine, at("2028-03-01T08:00:00Z"), |config| {
        config.clock_skew_seconds = 0
    })
    .await;
    let early = strict
        .finalize(&strict.rung("early", &strict.session, MUG, at("2028-03-01T07:59:00Z")))
        .await;
    early.assert_error(422, "BUSINESS_RULE_VIOLATION");
    strict.server.stop().await;
    shop.server.stop().await;
}

on_both_engines!(
    a_sale_is_rung_within_its_session_give_or_take_the_clock_skew,
    a_queue_sent_in_order_is_one_gap_in_the_journal,
    a_sale_reaching_a_closed_session_is_booked_late_and_shown_apart,
    sales_too_old_in_the_future_or_of_another_register_are_refused,
    a_night_offline_is_booked_once_at_the_prices_of_its_sales,
);
