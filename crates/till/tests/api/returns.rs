//! Returns and credit notes: refunds at exactly what was paid under every promotion and
//! discount shape, partial returns up to the limit, concurrent returns of the last unit,
//! refusals that change nothing, returns without a receipt, and the fiscal journal with
//! negative tickets in it.

use crate::harness::{Engine, Reply, sku};
use crate::harness::{Shop, line};
use crate::on_both_engines;
use futures::future::join_all;
use serde_json::{Value, json};

const BAGUETTE: (&str, i64, f64) = ("Baguette", 130, 5.5);
const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);
const BOOK: (&str, i64, f64) = ("Livre", 2490, 5.5);
const PEN: (&str, i64, f64) = ("Stylo", 255, 20.0);
const COFFEE: (&str, i64, f64) = ("Café", 893, 5.5);

/// What units `before+1 ..= before+units` of a line of `quantity` units and net `net` refund:
/// the line's net spread over its units cumulatively, rounded half away from zero.
fn expected_refund(net: i64, quantity: i64, before: i64, units: i64) -> i64 {
    let share = |parts: i64| (2 * net * parts + quantity) / (2 * quantity);
    share(before + units) - share(before)
}

fn rule(mut rule: Value) -> Value {
    rule["validFrom"] = json!("2020-01-01T00:00:00Z");
    rule["validUntil"] = json!("2099-12-31T23:59:59Z");
    rule
}

/// A sale as the server priced it: per line id, its quantity and net.
struct Sold {
    transaction: String,
    total: i64,
    points: i64,
    lines: Vec<(String, i64, i64)>,
    event: Value,
}

impl Shop {
    async fn with_articles(engine: Engine) -> Shop {
        let shop = Shop::open(engine).await;
        for (name, price, vat) in [PEN, COFFEE] {
            shop.server.provision_sku(name, price, vat).await;
        }
        shop
    }

    /// Sells `lines` to `customer` at the server's price (with `extra` such as declared
    /// discounts or a coupon), paid by card, as an admin who may grant any discount.
    async fn sell_to(&self, transaction: &str, customer: Option<&str>, lines: Vec<Value>, extra: Value) -> Sold {
        let mut quote = json!({"storeId": "s1", "cart": {"lines": lines.clone(), "freeLineSequence": 0}});
        let mut sale = self.sale(transaction, lines, 0);
        for (key, value) in extra.as_object().unwrap() {
            quote[key] = value.clone();
            sale[key] = value.clone();
        }
        let quoted = self.server.post("/v1/checkout/price", &self.till, quote).await;
        assert_eq!(quoted.status, 200, "{}", quoted.text);
        let total = quoted.body["totals"]["total"].as_i64().unwrap();
        sale["customerId"] = json!(customer);
        sale["tenders"] = card(total);
        let reply = self.finalize_as(&self.server.admin(), &sale).await;
        assert_eq!(reply.status, 201, "{}", reply.text);
        Sold {
            transaction: transaction.to_owned(),
            total,
            points: reply.body["loyalty"]["pointsEarned"].as_i64().unwrap(),
            lines: quoted.body["lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| {
                    (
                        l["id"].as_str().unwrap().to_owned(),
                        l["quantity"].as_i64().unwrap(),
                        l["netCents"].as_i64().unwrap(),
                    )
                })
                .collect(),
            event: reply.body,
        }
    }

    fn return_body(&self, transaction: &str, original: &str, lines: &[(&str, i64)], refund: i64) -> Value {
        json!({
            "transactionId": transaction,
            "originalTransactionId": original,
            "number": format!("R-{transaction}"),
            "storeId": "s1",
            "sellerId": "camille",
            "sessionId": self.session,
            "lines": lines.iter().map(|(id, units)| json!({"lineId": id, "quantity": units})).collect::<Vec<_>>(),
            "tenders": card(refund),
        })
    }

    async fn give_back(&self, body: &Value) -> Reply {
        let reply = self.server.post("/v1/returns", &self.till, body.clone()).await;
        assert!(reply.status != 500, "{}", reply.text);
        reply
    }

    async fn returns_of(&self, transaction: &str) -> Value {
        let reply = self
            .server
            .get(
                &format!("/v1/sales/{transaction}/returns"),
                &self.server.token("clerk", "pos.sales.read"),
            )
            .await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        reply.body
    }

    async fn points_of(&self, customer: &str) -> i64 {
        let path = format!("/v1/customers/{customer}/loyalty");
        self.server.get(&path, &self.server.admin()).await.body["points"]
            .as_i64()
            .unwrap()
    }
}

fn card(amount: i64) -> Value {
    json!({"amountDue": amount, "sequence": 1, "tenders": [
        {"id": "p1", "method": "card", "applied": amount, "presented": amount, "change": 0, "forfeited": 0}
    ]})
}

async fn partial_returns_refund_what_was_paid_to_the_cent(engine: Engine) {
    let shop = Shop::open(engine).await;
    let bogo = rule(json!({"id": "3for2", "type": "bogo", "name": "3 for 2",
        "buy": {"productIds": [sku(MUG.0)], "quantity": 2},
        "get": {"productIds": [sku(MUG.0)], "quantity": 1, "percentBps": 10000}}));
    assert_eq!(
        shop.server
            .post("/v1/promotions", &shop.server.admin(), bogo)
            .await
            .status,
        201
    );
    let stock_before = shop.stock(MUG).await;
    let sold = shop
        .sell_to("t1", Some("cust-1"), vec![line("l1", MUG, 3)], json!({}))
        .await;
    assert_eq!((sold.total, sold.points), (2900, 29), "three mugs for the price of two");
    assert_eq!(shop.points_of("cust-1").await, 29);

    // One mug back: it refunds a third of what the line cost, not its shelf price.
    let first = shop.return_body("r-1", "t1", &[("l1", 1)], 967);
    let reply = shop.give_back(&first).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let body = &reply.body;
    assert_eq!(body["creditNoteNumber"], "AV-r1-000002");
    assert_eq!(
        body["original"],
        json!({"transactionId": "t1", "registerId": "r1", "seq": 1})
    );
    assert_eq!(body["registerId"], "r1");
    assert_eq!(body["transaction"]["type"], "return");
    assert_eq!(
        body["transaction"]["totals"],
        json!({"subtotal": -1450, "total": -967, "itemCount": 1, "lineCount": 1})
    );
    assert_eq!(
        body["transaction"]["lines"],
        json!([{"lineId": "l1", "skuId": sku(MUG.0), "quantity": 1, "unitPrice": 1450, "netCents": -967}])
    );
    assert_eq!(body["ticket"]["totalCents"], -967);
    assert_eq!(
        body["ticket"]["tenders"],
        json!([{"method": "card", "appliedCents": -967}])
    );
    assert_eq!(body["loyalty"], json!({"customerId": "cust-1", "pointsEarned": -10}));
    assert_eq!(
        body["stockMovements"],
        json!([{"skuId": sku(MUG.0), "deltaQuantity": 1}])
    );
    assert_eq!(shop.stock(MUG).await, stock_before - 2);
    assert_eq!(shop.points_of("cust-1").await, 19);

    // Idempotent by its own transaction id: the same bytes again, and nothing moves.
    let replay = shop.give_back(&first).await;
    assert_eq!(replay.status, 201);
    assert_eq!(replay.text, reply.text);
    assert_eq!(replay.headers["x-idempotent-replay"], "true");
    let other = shop.return_body("r-1", "t1", &[("l1", 2)], 1933);
    shop.give_back(&other).await.assert_error(409, "CONFLICT");
    assert_eq!(shop.stock(MUG).await, stock_before - 2);

    // The other two: together they refund the rest exactly.
    let rest = shop.give_back(&shop.return_body("r-2", "t1", &[("l1", 2)], 1933)).await;
    assert_eq!(rest.status, 201, "{}", rest.text);
    assert_eq!(rest.body["creditNoteNumber"], "AV-r1-000003");
    assert_eq!(rest.body["loyalty"]["pointsEarned"], -19);
    // Nothing is left: a fourth mug is refused and changes nothing.
    let fourth = shop.give_back(&shop.return_body("r-3", "t1", &[("l1", 1)], 0)).await;
    fourth.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(fourth.text.contains("already been returned"), "{}", fourth.text);
    assert_eq!(shop.stock(MUG).await, stock_before);
    assert_eq!(shop.points_of("cust-1").await, 0);

    let state = shop.returns_of("t1").await;
    assert_eq!(state["refundedCents"], 2900);
    assert_eq!(
        (state["pointsEarned"].clone(), state["pointsReturned"].clone()),
        (json!(29), json!(29))
    );
    assert_eq!(
        state["lines"],
        json!([{"lineId": "l1", "skuId": sku(MUG.0), "quantity": 3, "returned": 3, "returnable": 0, "returnableCents": 0}])
    );
    let credit_notes: Vec<&Value> = state["returns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["creditNoteNumber"])
        .collect();
    assert_eq!(credit_notes, [&json!("AV-r1-000002"), &json!("AV-r1-000003")]);
    // The sale itself never changes, and a return reads back as it answered.
    let sale = shop.server.get("/v1/sales/t1", &shop.server.admin()).await;
    assert_eq!(sale.body, sold.event);
    let read = shop.server.get("/v1/sales/r-1", &shop.server.admin()).await;
    assert_eq!(read.text, reply.text);
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], true, "{verdict}");
    shop.server.stop().await;
}

/// Returns every unit of `sold` in parts (the first unit of every line together, then the
/// rest of each line one unit or the remainder at a time), each refund computed here from the
/// line's net, and checks the totals at the end.
async fn return_in_parts(shop: &Shop, sold: &Sold, customer: &str) {
    let mut returned: Vec<i64> = vec![0; sold.lines.len()];
    let mut refunded = 0;
    let mut round = 0;
    loop {
        let mut wanted: Vec<(usize, i64)> = Vec::new();
        for (index, (_, quantity, _)) in sold.lines.iter().enumerate() {
            let left = quantity - returned[index];
            if left > 0 {
                wanted.push((index, if round == 0 || left <= 2 { 1 } else { left - 1 }));
            }
            if round > 0 && !wanted.is_empty() {
                break;
            }
        }
        if wanted.is_empty() {
            break;
        }
        let refunds: Vec<i64> = wanted
            .iter()
            .map(|(index, units)| {
                let (_, quantity, net) = &sold.lines[*index];
                expected_refund(*net, *quantity, returned[*index], *units)
            })
            .collect();
        let refund: i64 = refunds.iter().sum();
        let lines: Vec<(&str, i64)> = wanted
            .iter()
            .map(|(index, units)| (sold.lines[*index].0.as_str(), *units))
            .collect();
        let id = format!("{}-back-{round}", sold.transaction);
        let reply = shop
            .give_back(&shop.return_body(&id, &sold.transaction, &lines, refund))
            .await;
        assert_eq!(reply.status, 201, "{}", reply.text);
        let nets: Vec<i64> = reply.body["transaction"]["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| -l["netCents"].as_i64().unwrap())
            .collect();
        assert_eq!(nets, refunds, "line refunds of {id}");
        assert_eq!(reply.body["transaction"]["totals"]["total"], -refund);
        for (index, units) in &wanted {
            returned[*index] += units;
        }
        refunded += refund;
        assert!(refunded <= sold.total, "refunds never exceed what was paid");
        round += 1;
    }
    assert_eq!(refunded, sold.total, "returning everything refunds exactly the total");
    let state = shop.returns_of(&sold.transaction).await;
    assert_eq!(state["refundedCents"], sold.total);
    assert_eq!(state["pointsReturned"], sold.points);
    assert!(state["lines"].as_array().unwrap().iter().all(|l| l["returnable"] == 0));
    assert_eq!(
        shop.points_of(customer).await,
        0,
        "the points {customer} earned all came back"
    );
    let (first_line, _, _) = &sold.lines[0];
    let again = shop
        .give_back(&shop.return_body(
            &format!("{}-again", sold.transaction),
            &sold.transaction,
            &[(first_line, 1)],
            0,
        ))
        .await;
    again.assert_error(422, "BUSINESS_RULE_VIOLATION");
}

async fn returns_prorate_every_promotion_and_discount_shape(engine: Engine) {
    let shop = Shop::with_articles(engine).await;
    let admin = shop.server.admin();
    for promotion in [
        json!({"id": "books", "type": "bogo", "name": "Second book half price",
               "buy": {"productIds": [sku(BOOK.0)], "quantity": 1},
               "get": {"productIds": [sku(BOOK.0)], "quantity": 1, "percentBps": 5000}}),
        json!({"id": "breakfast", "type": "bundle", "name": "Breakfast",
               "components": [{"productId": sku(BAGUETTE.0), "quantity": 2}, {"productId": sku(MUG.0), "quantity": 1}],
               "priceCents": 1499}),
        json!({"id": "pens", "type": "percent_off", "name": "Pens -15%",
               "productIds": [sku(PEN.0)], "percentBps": 1500}),
    ] {
        assert_eq!(
            shop.server.post("/v1/promotions", &admin, rule(promotion)).await.status,
            201
        );
    }
    let coupon = json!({"amountCents": 300, "minBasketCents": 1000});
    assert_eq!(shop.server.put("/v1/coupons/SAVE3", &admin, coupon).await.status, 201);
    let declared = json!({"declaredDiscounts": [
        {"id": "d1", "reason": "damaged_goods", "scope": "line", "basis": "percent", "lineId": "c", "percentBps": 1250},
        {"id": "d2", "reason": "manager_goodwill", "scope": "ticket", "basis": "percent", "percentBps": 333},
        {"id": "d3", "reason": "loyalty_reward", "scope": "ticket", "basis": "amount", "amountCents": 111},
    ]});
    let scenarios = [
        ("bogo", vec![line("b", BOOK, 3)], json!({})),
        (
            "bundle",
            vec![line("g", BAGUETTE, 5), line("m", MUG, 2), line("p", PEN, 1)],
            json!({}),
        ),
        ("percent", vec![line("p", PEN, 7), line("c", COFFEE, 1)], json!({})),
        (
            "declared",
            vec![line("c", COFFEE, 3), line("b", BOOK, 1), line("p", PEN, 4)],
            declared,
        ),
        (
            "coupon",
            vec![line("c", COFFEE, 3), line("g", BAGUETTE, 1)],
            json!({"couponCode": "SAVE3"}),
        ),
    ];
    for (name, lines, extra) in scenarios {
        let customer = format!("cust-{name}");
        let sold = shop.sell_to(name, Some(&customer), lines, extra).await;
        let gross: i64 = sold.event["transaction"]["totals"]["subtotal"].as_i64().unwrap();
        assert!(sold.total < gross, "{name}: the sale was discounted");
        return_in_parts(&shop, &sold, &customer).await;
    }
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], true, "{verdict}");
    shop.server.stop().await;
}

async fn two_tills_returning_the_last_unit_at_once_refund_it_once(engine: Engine) {
    let shop = Shop::open(engine).await;
    let (session2, till2) = shop.server.open_session("s1", "r2", "mathis", "9876").await;
    for round in 0..4 {
        let original = format!("t{round}");
        let sold = shop.sell_to(&original, None, vec![line("l1", MUG, 1)], json!({})).await;
        let stock = shop.stock(MUG).await;
        let mine = shop.return_body(&format!("a{round}"), &original, &[("l1", 1)], sold.total);
        let mut theirs = shop.return_body(&format!("b{round}"), &original, &[("l1", 1)], sold.total);
        theirs["sessionId"] = json!(session2);
        let replies = join_all([
            shop.server.post("/v1/returns", &shop.till, mine),
            shop.server.post("/v1/returns", &till2, theirs),
        ])
        .await;
        let mut statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
        statuses.sort_unstable();
        assert_eq!(
            statuses,
            [201, 422],
            "{:?}",
            replies.iter().map(|r| &r.text).collect::<Vec<_>>()
        );
        assert_eq!(shop.stock(MUG).await, stock + 1, "the mug came back once");
        let state = shop.returns_of(&original).await;
        assert_eq!(state["returns"].as_array().unwrap().len(), 1);
        assert_eq!(state["refundedCents"], sold.total);
    }
    // One till retrying its return of the last unit while the first try is in flight: every
    // try answers the one credit note.
    let sold = shop.sell_to("retried", None, vec![line("l1", MUG, 1)], json!({})).await;
    let stock = shop.stock(MUG).await;
    let body = shop.return_body("back-retried", "retried", &[("l1", 1)], sold.total);
    let replies = join_all((0..8).map(|_| shop.server.post("/v1/returns", &shop.till, body.clone()))).await;
    for reply in &replies {
        assert_eq!(reply.status, 201, "{}", reply.text);
        assert_eq!(reply.text, replies[0].text);
    }
    assert_eq!(shop.stock(MUG).await, stock + 1);
    // Returns of different lines of one sale at once all go through, each at its own price.
    let sold = shop
        .sell_to(
            "several",
            Some("cust-x"),
            vec![line("a", MUG, 1), line("b", BOOK, 1), line("c", BAGUETTE, 3)],
            json!({"declaredDiscounts": [{"id": "d", "reason": "promotional", "scope": "ticket", "basis": "percent", "percentBps": 700}]}),
        )
        .await;
    let requests: Vec<(String, Value)> = sold
        .lines
        .iter()
        .map(|(id, quantity, net)| {
            let mut body = shop.return_body(&format!("back-{id}"), "several", &[(id, *quantity)], *net);
            if id == "b" {
                body["sessionId"] = json!(session2);
                (till2.clone(), body)
            } else {
                (shop.till.clone(), body)
            }
        })
        .collect();
    let replies = join_all(
        requests
            .iter()
            .map(|(token, body)| shop.server.post("/v1/returns", token, body.clone())),
    )
    .await;
    assert!(
        replies.iter().all(|r| r.status == 201),
        "{:?}",
        replies.iter().map(|r| &r.text).collect::<Vec<_>>()
    );
    let state = shop.returns_of("several").await;
    assert_eq!(state["refundedCents"], sold.total);
    assert_eq!(state["pointsReturned"], sold.points);
    assert_eq!(shop.points_of("cust-x").await, 0);
    for register in ["r1", "r2"] {
        let verdict = shop.verify(register).await;
        assert_eq!(verdict["ok"], true, "{verdict}");
    }
    shop.server.stop().await;
}

async fn refused_returns_change_nothing(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.sell_to(
        "t1",
        Some("cust-1"),
        vec![line("l1", MUG, 2), line("l2", BAGUETTE, 1)],
        json!({}),
    )
    .await;
    shop.sell_to("t2", None, vec![line("x1", BOOK, 1)], json!({})).await;
    let stock = (shop.stock(MUG).await, shop.stock(BOOK).await);
    let before = shop.returns_of("t1").await;

    // Shape: every problem at once, with its path.
    let mut bad = shop.return_body("r1", "t1", &[("l1", 0), ("l1", 1)], 1450);
    bad.as_object_mut().unwrap().remove("sellerId");
    bad["tenders"]["amountDue"] = json!(-1);
    let reply = shop.give_back(&bad).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    let fields = reply.fields();
    for field in ["sellerId", "lines.0.quantity", "lines.1.lineId", "tenders.amountDue"] {
        assert!(fields.contains(&field.to_owned()), "{field} in {fields:?}");
    }
    let empty = shop.return_body("r1", "t1", &[], 0);
    assert_eq!(shop.give_back(&empty).await.fields(), ["lines"]);
    let itself = shop.return_body("t9", "t9", &[("l1", 1)], 1450);
    assert_eq!(shop.give_back(&itself).await.fields(), ["originalTransactionId"]);

    // Business rules.
    let cases = [
        (shop.return_body("r1", "nope", &[("l1", 1)], 1450), "no sale nope"),
        (
            shop.return_body("r1", "t1", &[("x1", 1)], 2490),
            "not a line of sale t1",
        ),
        (
            shop.return_body("r1", "t1", &[("l1", 3)], 4350),
            "Only 2 of the 2 units",
        ),
        (
            shop.return_body("r1", "t1", &[("l1", 1)], 1400),
            "refund for these lines (14.50)",
        ),
    ];
    for (body, message) in cases {
        let reply = shop.give_back(&body).await;
        reply.assert_error(422, "BUSINESS_RULE_VIOLATION");
        assert!(reply.text.contains(message), "{message} in {}", reply.text);
    }
    // A return of a return.
    assert_eq!(
        shop.give_back(&shop.return_body("r-ok", "t2", &[("x1", 1)], 2490))
            .await
            .status,
        201
    );
    let reply = shop
        .give_back(&shop.return_body("r2", "r-ok", &[("x1", 1)], 2490))
        .await;
    reply.assert_error(422, "BUSINESS_RULE_VIOLATION");
    assert!(reply.text.contains("itself a return"), "{}", reply.text);
    // Scope: a token without pos.returns.create.
    let seller = shop.server.token("camille", "pos.sales.finalize pos.sales.read");
    shop.server
        .post("/v1/returns", &seller, shop.return_body("r1", "t1", &[("l1", 1)], 1450))
        .await
        .assert_error(403, "FORBIDDEN");
    // A closed session books nothing.
    let close = format!("/v1/register-sessions/{}/close", shop.session);
    assert_eq!(
        shop.server.post(&close, &shop.server.admin(), json!({})).await.status,
        200
    );
    let closed = shop.give_back(&shop.return_body("r1", "t1", &[("l1", 1)], 1450)).await;
    closed.assert_error(422, "BUSINESS_RULE_VIOLATION");

    assert_eq!(shop.returns_of("t1").await, before, "nothing was returned of t1");
    assert_eq!((shop.stock(MUG).await, shop.stock(BOOK).await), (stock.0, stock.1 + 1));
    assert_eq!(shop.points_of("cust-1").await, 30);
    shop.server
        .get("/v1/sales/r1", &shop.server.admin())
        .await
        .assert_error(404, "NOT_FOUND");
    shop.server
        .get("/v1/sales/nope/returns", &shop.server.admin())
        .await
        .assert_error(404, "NOT_FOUND");
    shop.server.stop().await;
}

async fn a_return_without_receipt_needs_a_manager(engine: Engine) {
    let shop = Shop::open(engine).await;
    let mut body = shop.sale("nr-1", vec![line("l1", MUG, 1)], 1450);
    body["type"] = json!("return");
    body["customerId"] = json!("cust-1");
    let stock = shop.stock(MUG).await;
    // The cashier alone may not.
    let alone = shop.finalize(&body).await;
    alone.assert_error(403, "FORBIDDEN");
    assert!(alone.text.contains("price:override"), "{}", alone.text);
    // A manager's approval too small for the refund is refused and stays unspent.
    let ask = |amount: i64| {
        let request =
            json!({"managerSubject": "mathis", "pin": "9876", "operation": "discount.ticket", "amountCents": amount});
        shop.server.post("/v1/elevation-grants", &shop.till, request)
    };
    let small = ask(1000).await;
    assert_eq!(small.status, 201, "{}", small.text);
    let with_token = |token: String, body: Value| {
        let till = shop.till.clone();
        shop.server.send(move |http, base| {
            http.post(format!("{base}/v1/checkout/finalize"))
                .bearer_auth(till)
                .header("x-elevation-token", token)
                .json(&body)
        })
    };
    let refused = with_token(small.str("token"), body.clone()).await;
    refused.assert_error(403, "FORBIDDEN");
    assert!(refused.text.contains("approved up to 10.00"), "{}", refused.text);
    // One that covers it: a negative ticket, the mug back in stock, the points taken back.
    let grant = ask(1450).await;
    let token = grant.str("token");
    let reply = with_token(token.clone(), body.clone()).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(reply.body["transaction"]["type"], "return");
    assert_eq!(
        reply.body["transaction"]["totals"],
        json!({"subtotal": -1450, "total": -1450, "itemCount": 1, "lineCount": 1})
    );
    assert_eq!(reply.body["ticket"]["totalCents"], -1450);
    assert_eq!(reply.body["ticket"]["tenders"][0]["appliedCents"], -1450);
    assert_eq!(reply.body["loyalty"]["pointsEarned"], -14);
    assert_eq!(
        reply.body["stockMovements"],
        json!([{"skuId": sku(MUG.0), "deltaQuantity": 1}])
    );
    assert_eq!(shop.stock(MUG).await, stock + 1);
    // The approval was single-use; a replay needs none.
    let mut another = body.clone();
    another["transactionId"] = json!("nr-2");
    with_token(token, another.clone()).await.assert_error(403, "FORBIDDEN");
    let replay = shop.finalize(&body).await;
    assert_eq!((replay.status, replay.text.clone()), (201, reply.text.clone()));
    // price:override needs no approval; a coupon has no place on a return.
    assert_eq!(shop.finalize_as(&shop.server.admin(), &another).await.status, 201);
    let mut with_coupon = body.clone();
    with_coupon["transactionId"] = json!("nr-3");
    with_coupon["couponCode"] = json!("SAVE3");
    shop.finalize_as(&shop.server.admin(), &with_coupon)
        .await
        .assert_error(422, "BUSINESS_RULE_VIOLATION");
    // A sale token without pos.returns.create may not even with an approval.
    let seller = shop.server.token("camille", "pos.sales.finalize");
    let mut third = body.clone();
    third["transactionId"] = json!("nr-4");
    shop.finalize_as(&seller, &third).await.assert_error(403, "FORBIDDEN");
    assert_eq!(shop.stock(MUG).await, stock + 2);
    assert_eq!(shop.points_of("cust-1").await, 0, "points taken back, never below zero");
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], true, "{verdict}");
    shop.server.stop().await;
}

async fn the_journal_and_closures_net_returns_out(engine: Engine) {
    let shop = Shop::open(engine).await;
    shop.sell_to("t1", None, vec![line("l1", MUG, 3)], json!({})).await;
    let mut cash_sale = shop.sale("t2", vec![line("l1", BAGUETTE, 2)], 260);
    cash_sale["tenders"] = json!({"amountDue": 260, "sequence": 1, "tenders": [
        {"id": "c", "method": "cash", "applied": 260, "presented": 500, "change": 240, "forfeited": 0}]});
    assert_eq!(shop.finalize(&cash_sale).await.status, 201);
    // A mug back for cash, a baguette back without a receipt.
    let mut back = shop.return_body("r-1", "t1", &[("l1", 1)], 1450);
    back["tenders"] = json!({"amountDue": 1450, "sequence": 1, "tenders": [
        {"id": "c", "method": "cash", "applied": 1450, "presented": 1450, "change": 0, "forfeited": 0}]});
    assert_eq!(shop.give_back(&back).await.status, 201);
    let mut unreceipted = shop.sale("r-2", vec![line("l1", BAGUETTE, 1)], 130);
    unreceipted["type"] = json!("return");
    assert_eq!(shop.finalize_as(&shop.server.admin(), &unreceipted).await.status, 201);

    // The return's ticket is a negative RETURN entry of the same chain.
    let chain = shop
        .server
        .get(
            "/v1/fiscal/registers/r1/chains/ticket",
            &shop.server.token("auditor", "pos.fiscal.read"),
        )
        .await;
    let payload = chain.body["entries"][2]["payload"].as_str().unwrap().to_owned();
    assert!(payload.starts_with("2000:-1450,-1450,"), "{payload}");
    assert!(payload.contains(",3,RETURN,r-1,"), "{payload}");

    // The shift's report nets the returns out of its totals and of the cash drawer.
    let close = format!("/v1/register-sessions/{}/close", shop.session);
    let report = shop.server.post(&close, &shop.server.admin(), json!({})).await;
    assert_eq!(report.status, 200, "{}", report.text);
    assert_eq!(report.body["totalCents"], 4350 + 260 - 1450 - 130);
    let tenders = report.body["tenders"].as_array().unwrap();
    let cash = tenders.iter().find(|t| t["method"] == "cash").unwrap();
    assert_eq!(cash["appliedCents"], 260 - 1450);
    let card = tenders.iter().find(|t| t["method"] == "card").unwrap();
    assert_eq!(card["appliedCents"], 4350 - 130);
    assert_eq!(report.body["expectedCashCents"], 260 - 1450);

    // The day's closure: the real total nets returns out, the absolute total adds them.
    let closed = shop
        .server
        .post(
            "/v1/fiscal/registers/r1/closures",
            &shop.server.token("manager", "pos.fiscal.close"),
            json!({"period": "day"}),
        )
        .await;
    assert_eq!(closed.status, 201, "{}", closed.text);
    let day = &closed.body["closures"][0];
    assert_eq!(day["ticketCount"], 4);
    assert_eq!(day["totalCents"], 3030);
    assert_eq!(day["absTotalCents"], 4350 + 260 + 1450 + 130);
    assert_eq!(day["grandTotalCents"], 3030);
    let vat: i64 = day["vat"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["totalCents"].as_i64().unwrap())
        .sum();
    assert_eq!(vat, 3030);
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], true, "{verdict}");

    // The credit note prints as an AVOIR naming the ticket it corrects.
    let receipt = shop.server.get("/v1/sales/r-1/receipt", &shop.server.admin()).await;
    assert_eq!(receipt.status, 200);
    assert!(receipt.text.contains("AVOIR AV-r1-000003"), "{}", receipt.text);
    assert!(
        receipt.text.contains("Retour du ticket t1 (caisse r1, n° 1)"),
        "{}",
        receipt.text
    );

    // Tampering with the reference to the original breaks the seal.
    shop.server
        .tamper(
            engine,
            &["UPDATE sales SET original_transaction_id = 't2' WHERE transaction_id = 'r-1'"],
        )
        .await;
    let verdict = shop.verify("r1").await;
    assert_eq!(verdict["ok"], false, "{verdict}");
    shop.server.stop().await;
}

/// A return's answer is written from its typed value once the ticket has its place: ids that
/// contain text looking like a credit-note number are answered as sent, and the replay gives
/// the same bytes.
async fn a_returns_answer_keeps_its_ids_as_sent(engine: Engine) {
    let first = Shop::open(engine).await;
    let (session, till) = first.server.open_session("s1", "AV-PENDING", "mathis", "9876").await;
    let shop = Shop {
        server: first.server,
        session,
        till,
    };
    let sold = shop
        .sell_to("AV-PENDING-t1", None, vec![line("l1", MUG, 1)], json!({}))
        .await;
    assert_eq!(sold.event["registerId"], "AV-PENDING");
    let body = shop.return_body("AV-PENDING-r1", "AV-PENDING-t1", &[("l1", 1)], 1450);
    let reply = shop.give_back(&body).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(reply.body["registerId"], "AV-PENDING");
    assert_eq!(reply.body["creditNoteNumber"], "AV-AV-PENDING-000002");
    assert_eq!(reply.body["transaction"]["id"], "AV-PENDING-r1");
    assert_eq!(reply.body["original"]["transactionId"], "AV-PENDING-t1");
    let again = shop.give_back(&body).await;
    assert_eq!(again.status, 201);
    assert_eq!(again.text, reply.text);
    shop.server.stop().await;
}

on_both_engines!(
    partial_returns_refund_what_was_paid_to_the_cent,
    a_returns_answer_keeps_its_ids_as_sent,
    returns_prorate_every_promotion_and_discount_shape,
    two_tills_returning_the_last_unit_at_once_refund_it_once,
    refused_returns_change_nothing,
    a_return_without_receipt_needs_a_manager,
    the_journal_and_closures_net_returns_out,
);
