//! Sales reports: each grouping on known sales and returns to the cent, local days and hours
//! across midnight and clock changes in stores of different zones, the same numbers whether
//! sessions are open or closed (or were closed before rollups existed), CSV, and every
//! refusal.

use crate::harness::{Engine, Reply, TestServer, sku};
use crate::on_both_engines;
use jiff::Timestamp;
use serde_json::{Value, json};

const BAGUETTE: (&str, i64, f64) = ("Baguette", 130, 5.5);
const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);
const BOOK: (&str, i64, f64) = ("Livre", 2490, 5.5);

/// An open register session and its till's token.
struct Till {
    store: String,
    session: String,
    token: String,
}

fn instant(text: &str) -> Timestamp {
    text.parse().expect("an instant")
}

/// A server whose clock reads `start`, with the articles and two staff members, and a store
/// `s1` in Paris (the default zone).
async fn shop(engine: Engine, start: &str) -> TestServer {
    let server = TestServer::start_at(engine, instant(start), |_| {}).await;
    server.provision_store("s1").await;
    for (name, price, vat) in [BAGUETTE, MUG, BOOK] {
        server.provision_sku(name, price, vat).await;
    }
    server.provision_staff("camille", "cashier", "1234").await;
    server.provision_staff("mathis", "manager", "9876").await;
    server
}

async fn open_till(server: &TestServer, store: &str, register: &str) -> Till {
    let (session, token) = server.open_session(store, register, "camille", "1234").await;
    Till {
        store: store.to_owned(),
        session,
        token,
    }
}

fn line(id: &str, article: (&str, i64, f64), quantity: i64) -> Value {
    json!({"id": id, "skuId": sku(article.0), "quantity": quantity, "unitPrice": article.1,
           "vatRate": article.2, "free": false})
}

fn tenders(paid: &[(&str, i64)]) -> Value {
    let due: i64 = paid.iter().map(|(_, amount)| amount).sum();
    let tenders: Vec<Value> = paid
        .iter()
        .enumerate()
        .map(|(i, (method, amount))| {
            json!({"id": format!("p{i}"), "method": method, "applied": amount, "presented": amount,
                   "change": 0, "forfeited": 0})
        })
        .collect();
    json!({"amountDue": due, "sequence": 1, "tenders": tenders})
}

/// Sells `lines` at `at` on `till`, by `seller`, paid as `paid` says.
async fn sell(
    server: &TestServer,
    till: &Till,
    at: &str,
    transaction: &str,
    seller: &str,
    lines: Vec<Value>,
    paid: &[(&str, i64)],
) {
    server.clock.set(instant(at));
    let body = json!({
        "transactionId": transaction, "number": format!("T-{transaction}"), "storeId": till.store,
        "sellerId": seller, "customerId": null, "sessionId": till.session,
        "cart": {"lines": lines, "freeLineSequence": 0}, "tenders": tenders(paid),
    });
    let reply = server.post("/v1/checkout/finalize", &till.token, body).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
}

/// Gives `units` of line `line` of `original` back at `at`, refunded by card.
async fn give_back(server: &TestServer, till: &Till, at: &str, transaction: &str, original: &str, refund: i64) {
    server.clock.set(instant(at));
    let body = json!({
        "transactionId": transaction, "originalTransactionId": original, "number": format!("R-{transaction}"),
        "storeId": till.store, "sellerId": "camille", "sessionId": till.session,
        "lines": [{"lineId": "l1", "quantity": 1}], "tenders": tenders(&[("card", refund)]),
    });
    let reply = server.post("/v1/returns", &till.token, body).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
}

async fn close(server: &TestServer, till: &Till) {
    let path = format!("/v1/register-sessions/{}/close", till.session);
    let reply = server.post(&path, &server.admin(), json!({})).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
}

async fn report(server: &TestServer, query: &str) -> Reply {
    let reply = server.get(&format!("/v1/reports/sales?{query}"), &server.admin()).await;
    assert_eq!(reply.status, 200, "{query}: {}", reply.text);
    reply
}

/// A row as `[key, salesCount, returnsCount, itemCount, totalCents, returnedCents, extras...]`.
fn rows(reply: &Reply) -> Vec<Value> {
    let columns = [
        "key",
        "salesCount",
        "returnsCount",
        "itemCount",
        "totalCents",
        "returnedCents",
        "vatRate",
        "baseCents",
        "vatCents",
        "grossCents",
    ];
    reply.body["rows"]
        .as_array()
        .unwrap_or_else(|| panic!("rows in {}", reply.text))
        .iter()
        .map(|row| {
            let present: Vec<Value> = columns
                .iter()
                .filter(|column| row.get(**column).is_some())
                .map(|column| row[*column].clone())
                .collect();
            assert_eq!(present.len(), row.as_object().unwrap().len(), "{row}");
            Value::Array(present)
        })
        .collect()
}

const MARCH_2: &str = "from=2026-03-02T00:00:00%2B01:00&to=2026-03-03T00:00:00%2B01:00";

/// Two sales and a return on 2 March 2026 in Paris (UTC+1).
async fn known_sales(engine: Engine) -> (TestServer, Till) {
    let server = shop(engine, "2026-03-02T08:00:00Z").await;
    let till = open_till(&server, "s1", "r1").await;
    let t1 = vec![line("l1", MUG, 2), line("l2", BAGUETTE, 1)];
    sell(
        &server,
        &till,
        "2026-03-02T09:05:00Z",
        "t1",
        "camille",
        t1,
        &[("card", 2000), ("cash", 1030)],
    )
    .await;
    let t2 = vec![line("l1", BOOK, 1)];
    sell(
        &server,
        &till,
        "2026-03-02T10:20:00Z",
        "t2",
        "mathis",
        t2,
        &[("cash", 2490)],
    )
    .await;
    give_back(&server, &till, "2026-03-02T10:40:00Z", "r1", "t1", 1450).await;
    (server, till)
}

async fn each_grouping_adds_up_known_sales_and_returns(engine: Engine) {
    let (server, _) = known_sales(engine).await;
    let by = |group: &str| format!("{MARCH_2}&groupBy={group}");
    let totals = json!({"salesCount": 2, "returnsCount": 1, "itemCount": 3, "totalCents": 4070,
                        "returnedCents": -1450, "vatCents": 378, "baseCents": 3692});

    let day = report(&server, &by("day")).await;
    assert_eq!(day.body["totals"], totals);
    assert_eq!(day.body["groupBy"], "day");
    assert_eq!(day.body["from"], "2026-03-01T23:00:00Z");
    assert_eq!(day.body["to"], "2026-03-02T23:00:00Z");
    assert_eq!(rows(&day), [json!(["2026-03-02", 2, 1, 3, 4070, -1450, 378])]);

    let hour = report(&server, &by("hour")).await;
    assert_eq!(hour.body["totals"], totals);
    assert_eq!(
        rows(&hour),
        [
            json!(["2026-03-02T10:00:00+01:00", 1, 0, 3, 3030, 0, 490]),
            json!(["2026-03-02T11:00:00+01:00", 1, 1, 0, 1040, -1450, -112]),
        ]
    );

    let article = report(&server, &by("article")).await;
    assert_eq!(article.body["totals"], totals);
    assert_eq!(
        rows(&article),
        [
            json!([sku(BOOK.0), 1, 0, 1, 2490, 0, 2490]),
            json!([sku(MUG.0), 1, 1, 1, 1450, -1450, 1450]),
            json!([sku(BAGUETTE.0), 1, 0, 1, 130, 0, 130]),
        ]
    );

    let seller = report(&server, &by("seller")).await;
    assert_eq!(seller.body["totals"], totals);
    assert_eq!(
        rows(&seller),
        [
            json!(["mathis", 1, 0, 1, 2490, 0, 130]),
            json!(["camille", 1, 1, 2, 1580, -1450, 248]),
        ]
    );

    let tender = report(&server, &by("tender")).await;
    assert_eq!(tender.body["totals"], totals);
    assert_eq!(
        rows(&tender),
        [json!(["cash", 2, 0, 4, 3520, 0]), json!(["card", 1, 1, 2, 550, -1450])]
    );

    let vat = report(&server, &by("vat")).await;
    assert_eq!(vat.body["totals"], totals);
    assert_eq!(
        rows(&vat),
        [
            json!(["20", 1, 1, 1, 1450, -1450, 20, 1209, 241]),
            json!(["5.5", 2, 0, 2, 2620, 0, 5.5, 2483, 137]),
        ]
    );

    // The store's and the register's filters, and a store that sold nothing.
    let store = report(&server, &format!("{}&storeId=s1&registerId=r1", by("vat"))).await;
    assert_eq!(store.body["rows"], vat.body["rows"]);
    assert_eq!(store.body["storeId"], "s1");
    let elsewhere = report(&server, &format!("{}&storeId=s9", by("day"))).await;
    assert_eq!(elsewhere.body["rows"], json!([]));
    assert_eq!(elsewhere.body["totals"]["salesCount"], 0);
    server.stop().await;
}

/// The reports of every grouping over `periods`, as answered.
async fn every_report(server: &TestServer, periods: &[&str]) -> Vec<Value> {
    let mut answers = Vec::new();
    for period in periods {
        for group in ["day", "hour", "article", "seller", "tender", "vat"] {
            for scope in ["", "&storeId=s1", "&registerId=r2"] {
                answers.push(report(server, &format!("{period}&groupBy={group}{scope}")).await.body);
            }
        }
    }
    answers
}

async fn closed_and_open_sessions_give_the_same_numbers(engine: Engine) {
    let server = shop(engine, "2026-03-02T07:00:00Z").await;
    let (first, second) = (
        open_till(&server, "s1", "r1").await,
        open_till(&server, "s1", "r2").await,
    );
    let mugs = || vec![line("l1", MUG, 1), line("l2", BAGUETTE, 2)];
    sell(
        &server,
        &first,
        "2026-03-02T08:10:00Z",
        "a1",
        "camille",
        mugs(),
        &[("card", 1710)],
    )
    .await;
    sell(
        &server,
        &second,
        "2026-03-02T08:20:00Z",
        "b1",
        "mathis",
        mugs(),
        &[("cash", 1710)],
    )
    .await;
    sell(
        &server,
        &first,
        "2026-03-02T10:35:00Z",
        "a2",
        "camille",
        vec![line("l1", BOOK, 3)],
        &[("card", 7470)],
    )
    .await;
    give_back(&server, &second, "2026-03-02T11:50:00Z", "b2", "b1", 1450).await;
    sell(
        &server,
        &second,
        "2026-03-02T12:05:00Z",
        "b3",
        "mathis",
        mugs(),
        &[("cash", 1710)],
    )
    .await;
    // Whole UTC days; the local day; windows cutting through both sessions.
    let periods = [
        "from=2026-03-01T00:00:00Z&to=2026-03-04T00:00:00Z",
        MARCH_2,
        "from=2026-03-02T09:30:00Z&to=2026-03-02T12:00:00Z",
        "from=2026-03-02T08:15:00Z&to=2026-03-02T10:45:00Z",
    ];
    let open = every_report(&server, &periods).await;
    assert!(open.iter().any(|answer| answer["totals"]["salesCount"] != 0));

    close(&server, &first).await;
    assert_eq!(every_report(&server, &periods).await, open, "one session closed");
    close(&server, &second).await;
    assert_eq!(every_report(&server, &periods).await, open, "both closed");
    let rolled = server.count_rows("report_rollups").await;
    assert!(rolled > 0);

    // Sessions closed before rollups existed are rolled up by the first report that needs
    // them, once.
    server.run_sql("DELETE FROM report_rollups").await.unwrap();
    let pending = format!(
        "INSERT INTO report_pending (session_id) VALUES ('{}'), ('{}')",
        first.session, second.session
    );
    server.run_sql(&pending).await.unwrap();
    assert_eq!(every_report(&server, &periods).await, open, "rolled up by the report");
    assert_eq!(server.count_rows("report_pending").await, 0);
    assert_eq!(server.count_rows("report_rollups").await, rolled);
    server.stop().await;
}

fn keys(reply: &Reply) -> Vec<String> {
    reply.body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| format!("{} x{}", row["key"].as_str().unwrap(), row["salesCount"]))
        .collect()
}

async fn days_and_hours_are_each_stores_own_across_midnight_and_clock_changes(engine: Engine) {
    // Paris moves its clocks forward at 01:00Z on 29 March 2026; Martinique keeps UTC-4.
    let server = shop(engine, "2026-03-28T21:00:00Z").await;
    let body = json!({"name": "Fort-de-France", "timezone": "America/Martinique"});
    assert_eq!(server.put("/v1/stores/s2", &server.admin(), body).await.status, 201);
    let (paris, martinique) = (
        open_till(&server, "s1", "r1").await,
        open_till(&server, "s2", "r2").await,
    );
    let mug = || vec![line("l1", MUG, 1)];
    for (i, at) in [
        "2026-03-28T22:50:00Z",
        "2026-03-28T23:10:00Z",
        "2026-03-29T00:59:00Z",
        "2026-03-29T01:00:00Z",
    ]
    .into_iter()
    .enumerate()
    {
        sell(
            &server,
            &paris,
            at,
            &format!("p{i}"),
            "camille",
            mug(),
            &[("card", 1450)],
        )
        .await;
    }
    let one = vec![line("l1", BOOK, 1)];
    sell(
        &server,
        &martinique,
        "2026-03-29T02:30:00Z",
        "m1",
        "camille",
        one,
        &[("card", 2490)],
    )
    .await;

    let period = "from=2026-03-28T00:00:00%2B01:00&to=2026-03-30T00:00:00%2B02:00";
    for state in ["open", "closed"] {
        let paris_days = report(&server, &format!("{period}&groupBy=day&storeId=s1")).await;
        assert_eq!(keys(&paris_days), ["2026-03-28 x1", "2026-03-29 x3"], "{state}");
        let paris_hours = report(&server, &format!("{period}&groupBy=hour&storeId=s1")).await;
        assert_eq!(
            keys(&paris_hours),
            [
                "2026-03-28T23:00:00+01:00 x1",
                "2026-03-29T00:00:00+01:00 x1",
                "2026-03-29T01:00:00+01:00 x1",
                "2026-03-29T03:00:00+02:00 x1",
            ],
            "{state}"
        );
        // Across the chain each store counts its own days: 22:30 in Martinique is still the
        // 28th there.
        let chain_days = report(&server, &format!("{period}&groupBy=day")).await;
        assert_eq!(keys(&chain_days), ["2026-03-28 x2", "2026-03-29 x3"], "{state}");
        let chain_hours = report(&server, &format!("{period}&groupBy=hour")).await;
        assert_eq!(
            keys(&chain_hours)[3..],
            ["2026-03-29T03:00:00+02:00 x1", "2026-03-28T22:00:00-04:00 x1"],
            "{state}"
        );
        close(&server, &paris).await;
        close(&server, &martinique).await;
    }
    server.stop().await;

    // Paris moves its clocks back at 01:00Z on 25 October 2026: 02:00 happens twice.
    let server = shop(engine, "2026-10-24T22:00:00Z").await;
    let paris = open_till(&server, "s1", "r1").await;
    for (i, at) in ["2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z"].into_iter().enumerate() {
        sell(
            &server,
            &paris,
            at,
            &format!("o{i}"),
            "camille",
            vec![line("l1", MUG, 1)],
            &[("card", 1450)],
        )
        .await;
    }
    let period = "from=2026-10-25T00:00:00%2B02:00&to=2026-10-26T00:00:00%2B01:00";
    let hours = report(&server, &format!("{period}&groupBy=hour")).await;
    assert_eq!(
        keys(&hours),
        ["2026-10-25T02:00:00+02:00 x1", "2026-10-25T02:00:00+01:00 x1"]
    );
    let days = report(&server, &format!("{period}&groupBy=day")).await;
    assert_eq!(keys(&days), ["2026-10-25 x2"]);
    server.stop().await;
}

async fn csv_answers_the_same_rows(engine: Engine) {
    let (server, _) = known_sales(engine).await;
    let csv = |query: String| {
        let server = &server;
        async move {
            server
                .send(|http, base| {
                    http.get(format!("{base}/v1/reports/sales?{query}"))
                        .bearer_auth(server.admin())
                        .header("accept", "text/csv")
                })
                .await
        }
    };
    let vat = csv(format!("{MARCH_2}&groupBy=vat")).await;
    assert_eq!(vat.status, 200, "{}", vat.text);
    assert_eq!(vat.headers["content-type"], "text/csv; charset=utf-8");
    assert_eq!(vat.headers["vary"], "accept");
    assert_eq!(
        vat.text,
        "key,salesCount,returnsCount,itemCount,totalCents,returnedCents,vatRate,baseCents,vatCents\n\
         20,1,1,1,1450,-1450,20,1209,241\n\
         5.5,2,0,2,2620,0,5.5,2483,137\n"
    );
    let sellers = csv(format!("{MARCH_2}&groupBy=seller")).await;
    assert_eq!(
        sellers.text,
        "key,salesCount,returnsCount,itemCount,totalCents,returnedCents,vatCents\n\
         mathis,1,0,1,2490,0,130\n\
         camille,1,1,2,1580,-1450,248\n"
    );
    let empty = csv(format!("{MARCH_2}&groupBy=tender&storeId=s9")).await;
    assert_eq!(
        empty.text,
        "key,salesCount,returnsCount,itemCount,totalCents,returnedCents\n"
    );
    // JSON unless CSV is preferred.
    let json = server
        .send(|http, base| {
            http.get(format!("{base}/v1/reports/sales?{MARCH_2}&groupBy=vat"))
                .bearer_auth(server.admin())
                .header("accept", "application/json, text/csv;q=0.5")
        })
        .await;
    assert_eq!(json.body["rows"][0]["key"], "20", "{}", json.text);
    server.stop().await;
}

/// A seller id a spreadsheet would compute (`=`, `+`, `-`, `@`) goes into the CSV as text,
/// after a quote; counts and amounts are numbers and stay so, negative ones included.
async fn a_csv_cell_a_spreadsheet_would_compute_is_written_as_text(engine: Engine) {
    let server = shop(engine, "2026-03-02T08:00:00Z").await;
    let till = open_till(&server, "s1", "r1").await;
    let sellers = ["=1+1", "-2+3", "@SUM(A1)", "+336", "=HYPERLINK(\"http://x\")"];
    for (n, seller) in sellers.iter().enumerate() {
        let at = format!("2026-03-02T09:0{n}:00Z");
        let lines = vec![line("l1", BAGUETTE, 1)];
        sell(&server, &till, &at, &format!("t{n}"), seller, lines, &[("card", 130)]).await;
    }
    give_back(&server, &till, "2026-03-02T09:30:00Z", "back", "t0", 130).await;
    let csv = server
        .send(|http, base| {
            http.get(format!("{base}/v1/reports/sales?{MARCH_2}&groupBy=seller"))
                .bearer_auth(server.admin())
                .header("accept", "text/csv")
        })
        .await;
    assert_eq!(csv.status, 200, "{}", csv.text);
    for row in [
        "\n'=1+1,1,0,1,130,0,",
        "\n'-2+3,1,0,1,130,0,",
        "\n'@SUM(A1),1,0,1,130,0,",
        "\n'+336,1,0,1,130,0,",
        "\n\"'=HYPERLINK(\"\"http://x\"\")\",1,0,1,130,0,",
        "\ncamille,0,1,-1,-130,-130,",
    ] {
        assert!(csv.text.contains(row), "{row:?} in {}", csv.text);
    }
    // JSON carries the ids as they are.
    let json = report(&server, &format!("{MARCH_2}&groupBy=seller")).await;
    let keys: Vec<&str> = json.body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["key"].as_str().unwrap())
        .collect();
    assert!(keys.contains(&"=1+1") && keys.contains(&"-2+3"), "{keys:?}");
    server.stop().await;
}

async fn bad_requests_are_refused_naming_the_field(engine: Engine) {
    let server = shop(engine, "2026-03-02T08:00:00Z").await;
    let admin = server.admin();
    let cases = [
        ("groupBy=week", "groupBy"),
        ("", "groupBy"),
        ("groupBy=day&groupBy=hour", "groupBy"),
        ("groupBy=day&from=yesterday", "from"),
        ("groupBy=day&from=2026-02-30T00:00:00Z", "from"),
        ("groupBy=day&from=2026-03-01T10:10:00Z", "from"),
        ("groupBy=day&to=2026-03-01T10:15:30Z", "to"),
        ("groupBy=day&to=2026-03-01T10:07:00%2B00:07", "to"),
        ("groupBy=day&from=2026-03-02T00:00:00Z&to=2026-03-02T00:00:00Z", "to"),
        ("groupBy=day&from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z", "to"),
        ("groupBy=day&from=2025-03-01T00:00:00Z&to=2026-03-02T00:15:00Z", "to"),
        // Without `to`, the period ends with the current quarter hour.
        ("groupBy=day&from=2026-03-02T08:15:00Z", "from"),
        ("groupBy=day&from=2025-03-01T00:00:00Z", "from"),
        ("groupBy=day&storeId=", "storeId"),
        ("groupBy=day&registerId=a%00b", "registerId"),
    ];
    for (query, field) in cases {
        let reply = server.get(&format!("/v1/reports/sales?{query}"), &admin).await;
        reply.assert_error(400, "VALIDATION_FAILED");
        assert_eq!(reply.fields(), [field], "{query}: {}", reply.text);
    }
    // The whole span a leap year allows is fine; so is `to` alone.
    report(&server, "groupBy=day&from=2027-01-01T00:00:00Z&to=2028-01-02T00:00:00Z").await;
    let defaulted = report(&server, "groupBy=day&to=2026-03-02T12:00:00Z").await;
    assert_eq!(defaulted.body["from"], "2026-03-01T12:00:00Z");
    let now = report(&server, "groupBy=day").await;
    assert_eq!(
        (now.body["from"].as_str(), now.body["to"].as_str()),
        (Some("2026-03-01T08:15:00Z"), Some("2026-03-02T08:15:00Z"))
    );
    server.stop().await;
}

async fn the_report_needs_its_scope(engine: Engine) {
    let server = shop(engine, "2026-03-02T08:00:00Z").await;
    let till = open_till(&server, "s1", "r1").await;
    let path = "/v1/reports/sales?groupBy=day";
    let reader = server.token("clerk", "pos.sales.read pos.catalog.read");
    server.get(path, &reader).await.assert_error(403, "FORBIDDEN");
    server.get(path, &till.token).await.assert_error(403, "FORBIDDEN");
    server
        .call(reqwest::Method::GET, path, None, None)
        .await
        .assert_error(401, "UNAUTHORIZED");
    let manager = server.token("boss", "pos.reports.read");
    assert_eq!(server.get(path, &manager).await.status, 200);
    server.stop().await;
}

on_both_engines!(
    each_grouping_adds_up_known_sales_and_returns,
    closed_and_open_sessions_give_the_same_numbers,
    days_and_hours_are_each_stores_own_across_midnight_and_clock_changes,
    csv_answers_the_same_rows,
    a_csv_cell_a_spreadsheet_would_compute_is_written_as_text,
    bad_requests_are_refused_naming_the_field,
    the_report_needs_its_scope,
);
