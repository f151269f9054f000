//! Stored value end to end (docs/stored-value.md): gift cards, credit notes and loyalty points
//! spent as tenders inside the sale's transaction, refused with a 422 naming the tender and
//! nothing changed, exact under concurrency, every balance explained by its ledger.

use crate::harness::{Engine, Reply};
use crate::harness::{Shop, line};
use crate::on_both_engines;
use futures::future::join_all;
use serde_json::{Value, json};

const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);
const BAGUETTE: (&str, i64, f64) = ("Baguette", 130, 5.5);

/// A code of the card alphabet, as printed on a card the shop bought blank.
const BLANK_CARD: &str = "ABCDEFGHJKMNPQRS";

on_both_engines!(
    each_refused_tender_names_itself_and_changes_nothing,
    a_card_pays_part_of_a_sale_and_its_ledger_sums_to_its_balance,
    twenty_sales_on_a_card_worth_three_give_three,
    twenty_sales_on_points_worth_three_give_three,
    twenty_sales_on_a_credit_note_worth_three_give_three,
    a_return_pays_stored_value_back_to_stored_value,
    a_cart_line_activates_and_loads_a_card,
    blocking_a_card_stops_it_and_is_in_its_ledger,
    a_return_gives_back_spent_points_in_proportion_and_takes_back_earned_ones_to_zero,
    codes_a_chain_already_printed_are_issued_spent_and_read_without_case,
    a_credit_note_is_spent_by_its_code_never_by_its_number,
    an_archive_names_cards_and_credit_notes_masked_and_needs_the_close_scope,
    credit_notes_issued_before_codes_get_one_when_the_store_starts,
);

fn tender(id: &str, method: &str, applied: i64, reference: Option<&str>) -> Value {
    let mut tender = json!({"id": id, "method": method, "applied": applied, "presented": applied, "change": 0,
                            "forfeited": 0});
    if let Some(reference) = reference {
        tender["reference"] = json!(reference);
    }
    tender
}

fn paid_with(sale: &mut Value, tenders: Vec<Value>) {
    let due: i64 = tenders.iter().map(|t| t["applied"].as_i64().unwrap()).sum();
    sale["tenders"] = json!({"amountDue": due, "sequence": 1, "tenders": tenders});
}

impl Shop {
    async fn issue_card(&self, body: Value) -> String {
        let reply = self.server.post("/v1/gift-cards", &self.server.admin(), body).await;
        assert_eq!(reply.status, 201, "{}", reply.text);
        reply.str("code")
    }

    async fn card(&self, code: &str) -> Reply {
        self.server.get(&format!("/v1/gift-cards/{code}"), &self.till).await
    }

    async fn credit_note(&self, code: &str) -> Reply {
        self.server.get(&format!("/v1/credit-notes/{code}"), &self.till).await
    }

    async fn loyalty_points(&self, customer: &str) -> i64 {
        let path = format!("/v1/customers/{customer}/loyalty");
        let reply = self.server.get(&path, &self.server.admin()).await;
        reply.body["points"].as_i64().unwrap_or(0)
    }

    /// The points of a customer's ledger, added up.
    async fn points_ledger(&self, customer: &str) -> i64 {
        let customer = till_core::ids::CustomerId::parse(customer).unwrap();
        let ledger = self.server.store().loyalty_ledger(&customer).await.unwrap();
        ledger.iter().map(|(_, points)| points).sum()
    }

    async fn pay(&self, transaction: &str, lines: Vec<Value>, customer: Option<&str>, tenders: Vec<Value>) -> Reply {
        let mut sale = self.sale(transaction, lines, 0);
        sale["customerId"] = json!(customer);
        paid_with(&mut sale, tenders);
        let reply = self.finalize(&sale).await;
        assert!(reply.status == 201 || reply.status == 422, "{}", reply.text);
        reply
    }
}

/// Balance, state and the ledger's sum of an instrument as read; the ledger must explain it.
fn held(reply: &Reply) -> (i64, String) {
    assert_eq!(reply.status, 200, "{}", reply.text);
    let balance = reply.body["balanceCents"].as_i64().unwrap();
    let activities = reply.body["activities"].as_array().unwrap();
    let sum: i64 = activities.iter().map(|a| a["amountCents"].as_i64().unwrap()).sum();
    assert_eq!(sum, balance, "the ledger sums to the balance: {}", reply.text);
    if let Some(last) = activities.last() {
        assert_eq!(last["balanceAfterCents"].as_i64(), Some(balance), "{}", reply.text);
    }
    (balance, reply.str("state"))
}

fn assert_refused(reply: &Reply, tender: &str, says: &str) {
    reply.assert_error(422, "BUSINESS_RULE_VIOLATION");
    let message = reply.body["error"]["message"].as_str().unwrap();
    assert!(message.contains(tender) && message.contains(says), "{message}");
}

async fn each_refused_tender_names_itself_and_changes_nothing(engine: Engine) {
    let shop = Shop::open(engine).await;
    let code = shop.issue_card(json!({"balanceCents": 2000})).await;
    let past = shop.server.clock_now() - jiff::SignedDuration::from_hours(1);
    let expired = shop
        .issue_card(json!({"balanceCents": 2000, "expiresAt": till_core::instant::format_utc(past)}))
        .await;
    let elsewhere = shop.issue_card(json!({"balanceCents": 2000, "storeIds": ["s9"]})).await;
    let blocked = shop.issue_card(json!({"balanceCents": 2000})).await;
    let block = shop
        .server
        .post(
            &format!("/v1/gift-cards/{blocked}/block"),
            &shop.server.admin(),
            json!({}),
        )
        .await;
    assert_eq!(block.status, 204, "{}", block.text);
    let activities = shop.server.count_rows("stored_value_activities").await;
    let entries = shop.server.count_rows("fiscal_entries").await;
    let mug = || vec![line("l1", MUG, 1)];
    let cash = |amount| tender("p0", "cash", amount, None);
    let cases = [
        // The issue's findings: a card that does not exist, a credit note never issued, a
        // customer with no points.
        (
            None,
            vec![tender("p1", "gift_card", 1450, Some("ZZZZZZZZZZZZZZZZ"))],
            "tenders.tenders.0",
            "no such gift card",
        ),
        (
            None,
            vec![cash(450), tender("p1", "credit_note", 1000, Some("AV-r1-000099"))],
            "tenders.tenders.1",
            "no such",
        ),
        (
            Some("newcomer"),
            vec![tender("p1", "loyalty", 1450, None)],
            "tenders.tenders.0",
            "only 0 points",
        ),
        (
            None,
            vec![tender("p1", "loyalty", 1450, None)],
            "tenders.tenders.0",
            "customerId",
        ),
        (
            None,
            vec![tender("p1", "gift_card", 1450, None)],
            "tenders.tenders.0",
            "reference",
        ),
        (
            None,
            vec![cash(450), tender("p1", "gift_card", 1000, Some(&expired))],
            "tenders.tenders.1",
            "expired",
        ),
        (
            None,
            vec![tender("p1", "gift_card", 1450, Some(&blocked))],
            "tenders.tenders.0",
            "blocked",
        ),
        // The first card would pay; the second refuses, and the first is not spent either.
        (
            None,
            vec![
                tender("p0", "gift_card", 450, Some(&code)),
                tender("p1", "gift_card", 1000, Some("ZZZZZZZZZZZZZZZZ")),
            ],
            "tenders.tenders.1",
            "no such gift card",
        ),
        // A card another store's: told apart from an unknown one by nothing.
        (
            None,
            vec![tender("p1", "gift_card", 1450, Some(&elsewhere))],
            "tenders.tenders.0",
            "no such gift card",
        ),
    ];
    for (n, (customer, tenders, path, says)) in cases.into_iter().enumerate() {
        let reply = shop.pay(&format!("x{n}"), mug(), customer, tenders).await;
        assert_refused(&reply, path, says);
    }
    assert_eq!(
        shop.server.count_rows("fiscal_entries").await,
        entries,
        "no ticket was sealed"
    );
    assert_eq!(shop.server.count_rows("sales").await, 0);
    // The card spent to its last cent on two mugs; one cent more is refused.
    let reply = shop
        .pay(
            "short",
            vec![line("l1", MUG, 2)],
            None,
            vec![cash(900), tender("p1", "gift_card", 2000, Some(&code))],
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let reply = shop
        .pay(
            "shorter",
            mug(),
            None,
            vec![cash(1), tender("p1", "gift_card", 1449, Some(&code))],
        )
        .await;
    assert_refused(&reply, "tenders.tenders.1", "only 0.00 is left");
    assert_eq!(shop.server.count_rows("sales").await, 1, "no refused sale was kept");
    assert_eq!(shop.server.count_rows("stored_value_activities").await, activities + 1);
    assert_eq!(held(&shop.card(&code).await), (0, "exhausted".to_owned()));
    assert_eq!(held(&shop.card(&expired).await).1, "expired");
    assert_eq!(held(&shop.card(&blocked).await), (2000, "blocked".to_owned()));
    assert_eq!(shop.loyalty_points("newcomer").await, 0);
    // A till of store s1 cannot read a card of s9, and an unknown code reads alike.
    shop.card(&elsewhere).await.assert_error(404, "NOT_FOUND");
    shop.card("ZZZZZZZZZZZZZZZZ").await.assert_error(404, "NOT_FOUND");
    let verified = shop.verify("r1").await;
    assert_eq!(verified["ok"], json!(true), "{verified}");
}

async fn a_card_pays_part_of_a_sale_and_its_ledger_sums_to_its_balance(engine: Engine) {
    let shop = Shop::open(engine).await;
    let code = shop.issue_card(json!({"balanceCents": 2000})).await;
    assert_eq!(code.len(), 16);
    assert_eq!(held(&shop.card(&code).await), (2000, "active".to_owned()));
    let reply = shop
        .pay(
            "t1",
            vec![line("l1", MUG, 1)],
            None,
            vec![
                tender("p0", "cash", 450, None),
                tender("p1", "gift_card", 1000, Some(&code)),
            ],
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert!(
        !reply.text.contains("reference"),
        "the sale event keeps its shape: {}",
        reply.text
    );
    // The receipt names the card by its last four symbols, with what is left on it; never the
    // whole code.
    let receipt = shop.server.get("/v1/sales/t1/receipt", &shop.till).await;
    assert_eq!(receipt.status, 200, "{}", receipt.text);
    assert!(
        receipt.text.contains(&format!("Carte cadeau ****{}", &code[12..])),
        "{}",
        receipt.text
    );
    assert!(
        receipt.text.contains("Solde restant") && receipt.text.contains("10,00"),
        "{}",
        receipt.text
    );
    assert!(!receipt.text.contains(&code), "{}", receipt.text);
    let html = shop.server.get("/v1/sales/t1/receipt?format=html", &shop.till).await;
    assert!(html.text.contains("Solde restant"), "{}", html.text);
    let card = shop.card(&code).await;
    assert_eq!(held(&card), (1000, "active".to_owned()));
    let kinds: Vec<&str> = card.body["activities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["issue", "redeem"]);
    assert_eq!(card.body["activities"][1]["transactionId"], json!("t1"));
    // The same transaction again is a replay: the card is not spent twice.
    let mut again = shop.sale("t1", vec![line("l1", MUG, 1)], 0);
    paid_with(
        &mut again,
        vec![
            tender("p0", "cash", 450, None),
            tender("p1", "gift_card", 1000, Some(&code)),
        ],
    );
    assert_eq!(shop.finalize(&again).await.status, 201);
    assert_eq!(held(&shop.card(&code).await).0, 1000);
    let verified = shop.verify("r1").await;
    assert_eq!(verified["ok"], json!(true), "{verified}");
    // The sealed record names the card masked, never by its code: the day's archive follows
    // it, in its schema.
    let closed = shop.close_shift_then("day").await;
    assert_eq!(closed.status, 201, "{}", closed.text);
    let today = jiff::Zoned::new(jiff::Timestamp::now(), jiff::tz::TimeZone::get("Europe/Paris").unwrap()).date();
    let span =
        json!({"registerId": "r1", "from": (today - jiff::Span::new().days(1)).to_string(), "to": today.to_string()});
    let archive = shop
        .server
        .post(
            "/v1/fiscal/archives",
            &shop.server.token("manager", "pos.fiscal.close"),
            span,
        )
        .await;
    assert_eq!(archive.status, 201, "{}", archive.text);
    let schema: Value = serde_json::from_str(include_str!("../../../../docs/nf525-archive.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&archive.body).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert!(!archive.text.contains(&code), "{}", archive.text);
    assert!(
        archive.text.contains(&format!(r#""referenceLast4":"{}""#, &code[12..])),
        "{}",
        archive.text
    );
}

/// Twenty sales of one mug at once, each paid with `tender`; answers how many were booked.
async fn twenty_at_once(
    shop: &Shop,
    prefix: &str,
    lines: impl Fn() -> Vec<Value>,
    customer: Option<&str>,
    tenders: impl Fn() -> Vec<Value>,
) -> usize {
    let ids: Vec<String> = (0..20).map(|i| format!("{prefix}{i}")).collect();
    let replies = join_all(ids.iter().map(|id| shop.pay(id, lines(), customer, tenders()))).await;
    let booked = replies.iter().filter(|r| r.status == 201).count();
    for reply in replies.iter().filter(|r| r.status != 201) {
        reply.assert_error(422, "BUSINESS_RULE_VIOLATION");
    }
    booked
}

async fn twenty_sales_on_a_card_worth_three_give_three(engine: Engine) {
    let shop = Shop::open(engine).await;
    let code = shop.issue_card(json!({"balanceCents": 3 * 1450 + 100})).await;
    let booked = twenty_at_once(
        &shop,
        "c",
        || vec![line("l1", MUG, 1)],
        None,
        || vec![tender("p1", "gift_card", 1450, Some(&code))],
    )
    .await;
    assert_eq!(booked, 3);
    assert_eq!(held(&shop.card(&code).await), (100, "active".to_owned()));
    assert_eq!(shop.server.count_rows("sales").await, 3);
}

async fn twenty_sales_on_points_worth_three_give_three(engine: Engine) {
    // One point per cent of a whole unit spent; a point is worth a cent.
    let shop = Shop::open_with(engine, |config| config.loyalty_points_per_unit = 100).await;
    shop.server.provision_sku(BAGUETTE.0, BAGUETTE.1, BAGUETTE.2).await;
    let earned = shop
        .pay(
            "earn",
            vec![line("l1", BAGUETTE, 3)],
            Some("cust-1"),
            vec![tender("p1", "card", 390, None)],
        )
        .await;
    assert_eq!(earned.status, 201, "{}", earned.text);
    assert_eq!(shop.loyalty_points("cust-1").await, 300);
    let booked = twenty_at_once(
        &shop,
        "b",
        || vec![line("l1", BAGUETTE, 1)],
        Some("cust-1"),
        || vec![tender("p1", "loyalty", 100, None), tender("p2", "card", 30, None)],
    )
    .await;
    assert_eq!(booked, 3);
    assert_eq!(shop.loyalty_points("cust-1").await, 0);
    assert_eq!(shop.points_ledger("cust-1").await, 0, "the ledger sums to the points");
}

async fn twenty_sales_on_a_credit_note_worth_three_give_three(engine: Engine) {
    let shop = Shop::open(engine).await;
    let sold = shop
        .pay(
            "t0",
            vec![line("l1", MUG, 3)],
            None,
            vec![tender("p1", "card", 4350, None)],
        )
        .await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    let back = json!({
        "transactionId": "r0", "originalTransactionId": "t0", "number": "R-0", "storeId": "s1",
        "sellerId": "camille", "sessionId": shop.session, "lines": [{"lineId": "l1", "quantity": 3}],
        "tenders": {"amountDue": 4350, "sequence": 1, "tenders": [tender("p1", "credit_note", 4350, None)]},
    });
    let returned = shop.server.post("/v1/returns", &shop.till, back).await;
    assert_eq!(returned.status, 201, "{}", returned.text);
    let number = returned.str("creditNoteNumber");
    let code = returned.str("creditNoteCode");
    let receipt = shop.server.get("/v1/sales/r0/receipt", &shop.till).await;
    assert!(receipt.text.contains(&format!("Avoir {number}")), "{}", receipt.text);
    let note = shop.credit_note(&code).await;
    assert_eq!(held(&note), (4350, "active".to_owned()));
    assert!(note.body["expiresAt"].is_string(), "{}", note.text);
    let booked = twenty_at_once(
        &shop,
        "n",
        || vec![line("l1", MUG, 1)],
        None,
        || vec![tender("p1", "credit_note", 1450, Some(&code))],
    )
    .await;
    assert_eq!(booked, 3);
    assert_eq!(held(&shop.credit_note(&code).await), (0, "exhausted".to_owned()));
}

async fn a_return_pays_stored_value_back_to_stored_value(engine: Engine) {
    let shop = Shop::open(engine).await;
    let code = shop.issue_card(json!({"balanceCents": 1000})).await;
    let sold = shop
        .pay(
            "t1",
            vec![line("l1", MUG, 2)],
            None,
            vec![
                tender("p1", "card", 1900, None),
                tender("p2", "gift_card", 1000, Some(&code)),
            ],
        )
        .await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    let back = |transaction: &str, tenders: Vec<Value>| {
        let due: i64 = tenders.iter().map(|t| t["applied"].as_i64().unwrap()).sum();
        json!({
            "transactionId": transaction, "originalTransactionId": "t1", "number": "R-1", "storeId": "s1",
            "sellerId": "camille", "sessionId": shop.session, "lines": [{"lineId": "l1", "quantity": 1}],
            "tenders": {"amountDue": due, "sequence": 1, "tenders": tenders},
        })
    };
    // One mug of two: half of what the card paid goes back to stored value, not to the card.
    let out = shop
        .server
        .post(
            "/v1/returns",
            &shop.till,
            back("r1", vec![tender("p1", "card", 1450, None)]),
        )
        .await;
    assert_refused(&out, "tenders.tenders.0", "5.00");
    assert_eq!(held(&shop.card(&code).await).0, 0);
    let split = back(
        "r2",
        vec![
            tender("p1", "card", 950, None),
            tender("p2", "gift_card", 500, Some(&code)),
        ],
    );
    let returned = shop.server.post("/v1/returns", &shop.till, split).await;
    assert_eq!(returned.status, 201, "{}", returned.text);
    let card = shop.card(&code).await;
    assert_eq!(held(&card), (500, "active".to_owned()));
    assert_eq!(card.body["activities"][2]["kind"], json!("refund"));
    assert_eq!(card.body["activities"][2]["transactionId"], json!("r2"));
}

async fn a_cart_line_activates_and_loads_a_card(engine: Engine) {
    let shop = Shop::open(engine).await;
    let card_line = |action: &str, amount: i64, vat: f64| {
        json!({"id": "g1", "skuId": null, "quantity": 1, "unitPrice": amount, "vatRate": vat, "free": false,
               "custom": true, "giftCard": {"code": BLANK_CARD, "action": action}})
    };
    let taxed = shop
        .pay(
            "g0",
            vec![card_line("activate", 5000, 20.0)],
            None,
            vec![tender("p1", "card", 5000, None)],
        )
        .await;
    assert_refused(&taxed, "g1", "vatRate must be 0");
    let sold = shop
        .pay(
            "g1",
            vec![card_line("activate", 5000, 0.0)],
            None,
            vec![tender("p1", "card", 5000, None)],
        )
        .await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    assert_eq!(held(&shop.card(BLANK_CARD).await), (5000, "active".to_owned()));
    let again = shop
        .pay(
            "g2",
            vec![card_line("activate", 5000, 0.0)],
            None,
            vec![tender("p1", "card", 5000, None)],
        )
        .await;
    assert_refused(&again, "g1", "already active");
    let loaded = shop
        .pay(
            "g3",
            vec![card_line("load", 2500, 0.0)],
            None,
            vec![tender("p1", "cash", 2500, None)],
        )
        .await;
    assert_eq!(loaded.status, 201, "{}", loaded.text);
    let card = shop.card(BLANK_CARD).await;
    assert_eq!(held(&card), (7500, "active".to_owned()));
    let kinds: Vec<&str> = card.body["activities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["activate", "load"]);
    assert_eq!(shop.server.count_rows("sales").await, 2);
}

async fn blocking_a_card_stops_it_and_is_in_its_ledger(engine: Engine) {
    let shop = Shop::open(engine).await;
    let code = shop.issue_card(json!({"balanceCents": 1450})).await;
    let admin = shop.server.admin();
    let cashier_block = shop
        .server
        .post(&format!("/v1/gift-cards/{code}/block"), &shop.till, json!({}))
        .await;
    cashier_block.assert_error(403, "FORBIDDEN");
    assert_eq!(
        shop.server
            .post(&format!("/v1/gift-cards/{code}/block"), &admin, json!({}))
            .await
            .status,
        204
    );
    let refused = shop
        .pay(
            "t1",
            vec![line("l1", MUG, 1)],
            None,
            vec![tender("p1", "gift_card", 1450, Some(&code))],
        )
        .await;
    assert_refused(&refused, "tenders.tenders.0", "blocked");
    assert_eq!(
        shop.server
            .post(&format!("/v1/gift-cards/{code}/unblock"), &admin, json!({}))
            .await
            .status,
        204
    );
    let paid = shop
        .pay(
            "t2",
            vec![line("l1", MUG, 1)],
            None,
            vec![tender("p1", "gift_card", 1450, Some(&code))],
        )
        .await;
    assert_eq!(paid.status, 201, "{}", paid.text);
    let card = shop.card(&code).await;
    assert_eq!(held(&card), (0, "exhausted".to_owned()));
    let kinds: Vec<&str> = card.body["activities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["issue", "block", "unblock", "redeem"]);
    shop.server
        .post("/v1/gift-cards/ZZZZZZZZZZZZZZZZ/block", &admin, json!({}))
        .await
        .assert_error(404, "NOT_FOUND");
}

async fn a_return_gives_back_spent_points_in_proportion_and_takes_back_earned_ones_to_zero(engine: Engine) {
    let shop = Shop::open_with(engine, |config| config.loyalty_points_per_unit = 100).await;
    shop.server.provision_sku(BAGUETTE.0, BAGUETTE.1, BAGUETTE.2).await;
    let baguettes = |n| vec![line("l1", BAGUETTE, n)];
    let card = |amount| tender("p1", "card", amount, None);
    let earned = shop.pay("t0", baguettes(3), Some("cust-1"), vec![card(390)]).await;
    assert_eq!(earned.status, 201, "{}", earned.text);
    let spent = shop
        .pay(
            "t1",
            baguettes(2),
            Some("cust-1"),
            vec![tender("p0", "loyalty", 200, None), card(60)],
        )
        .await;
    assert_eq!(spent.status, 201, "{}", spent.text);
    assert_eq!(shop.loyalty_points("cust-1").await, 100);
    let back = |transaction: &str, original: &str, units: i64, tenders: Vec<Value>| {
        let due: i64 = tenders.iter().map(|t| t["applied"].as_i64().unwrap()).sum();
        json!({
            "transactionId": transaction, "originalTransactionId": original, "number": transaction,
            "storeId": "s1", "sellerId": "camille", "sessionId": shop.session,
            "lines": [{"lineId": "l1", "quantity": units}],
            "tenders": {"amountDue": due, "sequence": 1, "tenders": tenders},
        })
    };
    // One baguette of two: half the points spent may come back, no more.
    let greedy = back("r1", "t1", 1, vec![tender("p0", "loyalty", 101, None), card(29)]);
    let refused = shop.server.post("/v1/returns", &shop.till, greedy).await;
    assert_refused(&refused, "tenders.tenders.0", "at most 1.00");
    let fair = back("r2", "t1", 1, vec![tender("p0", "loyalty", 100, None), card(30)]);
    let returned = shop.server.post("/v1/returns", &shop.till, fair).await;
    assert_eq!(returned.status, 201, "{}", returned.text);
    assert_eq!(shop.loyalty_points("cust-1").await, 200);
    // The sale that earned 300 points comes back once they are spent: they are taken back
    // only down to zero.
    let again = shop
        .pay(
            "t2",
            baguettes(2),
            Some("cust-1"),
            vec![tender("p0", "loyalty", 200, None), card(60)],
        )
        .await;
    assert_eq!(again.status, 201, "{}", again.text);
    let undone = shop
        .server
        .post("/v1/returns", &shop.till, back("r3", "t0", 3, vec![card(390)]))
        .await;
    assert_eq!(undone.status, 201, "{}", undone.text);
    assert_eq!(shop.loyalty_points("cust-1").await, 0, "never below zero");
    assert_eq!(shop.points_ledger("cust-1").await, 0, "the ledger sums to the points");
}

/// A 400 naming `field` among its field errors.
fn assert_bad_field(reply: &Reply, field: &str) {
    reply.assert_error(400, "VALIDATION_FAILED");
    let fields: Vec<&str> = reply.body["error"]["fieldErrors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&field), "{field} in {}", reply.text);
}

impl Shop {
    /// Sells three mugs by card as `sold`, then takes them back as `back`, refunded with a new
    /// credit note: the return's answer.
    async fn credit_note_of(&self, sold: &str, back: &str) -> Reply {
        let sale = self
            .pay(
                sold,
                vec![line("l1", MUG, 3)],
                None,
                vec![tender("p1", "card", 4350, None)],
            )
            .await;
        assert_eq!(sale.status, 201, "{}", sale.text);
        let body = json!({
            "transactionId": back, "originalTransactionId": sold, "number": back, "storeId": "s1",
            "sellerId": "camille", "sessionId": self.session, "lines": [{"lineId": "l1", "quantity": 3}],
            "tenders": {"amountDue": 4350, "sequence": 1, "tenders": [tender("p1", "credit_note", 4350, None)]},
        });
        let returned = self.server.post("/v1/returns", &self.till, body.clone()).await;
        assert_eq!(returned.status, 201, "{}", returned.text);
        // A retried return answers the same bytes, its code included.
        let again = self.server.post("/v1/returns", &self.till, body).await;
        assert_eq!((again.status, &again.text), (201, &returned.text));
        returned
    }
}

async fn codes_a_chain_already_printed_are_issued_spent_and_read_without_case(engine: Engine) {
    let shop = Shop::open(engine).await;
    let admin = shop.server.admin();
    // Cards already in customers' hands: a numeric code and a dashed one, given in any case.
    let numeric = shop
        .issue_card(json!({"code": "6280001234567890", "balanceCents": 3000}))
        .await;
    assert_eq!(numeric, "6280001234567890");
    let dashed = shop
        .issue_card(json!({"code": "gc-2026-000123", "balanceCents": 3000}))
        .await;
    assert_eq!(dashed, "GC-2026-000123", "kept in capitals");
    shop.server
        .post(
            "/v1/gift-cards",
            &admin,
            json!({"code": "GC-2026-000123", "balanceCents": 1}),
        )
        .await
        .assert_error(409, "CONFLICT");
    let paid = shop
        .pay(
            "t1",
            vec![line("l1", MUG, 2)],
            None,
            vec![
                tender("p1", "gift_card", 1450, Some("Gc-2026-000123")),
                tender("p2", "gift_card", 1450, Some("6280001234567890")),
            ],
        )
        .await;
    assert_eq!(paid.status, 201, "{}", paid.text);
    let card = shop.card("gc-2026-000123").await;
    assert_eq!(held(&card), (1550, "active".to_owned()));
    assert_eq!(card.str("code"), "GC-2026-000123");
    assert_eq!(held(&shop.card("6280001234567890").await).0, 1550);
    // Blocked and unblocked by its code in another case.
    let blocked = shop
        .server
        .post("/v1/gift-cards/gC-2026-000123/block", &admin, json!({}))
        .await;
    assert_eq!(blocked.status, 204, "{}", blocked.text);
    assert_eq!(held(&shop.card("GC-2026-000123").await).1, "blocked");
    let unblocked = shop
        .server
        .post("/v1/gift-cards/gc-2026-000123/unblock", &admin, json!({}))
        .await;
    assert_eq!(unblocked.status, 204, "{}", unblocked.text);
    // A blank card of the chain's own numbering sold at the till, then read in capitals.
    let card_line = json!({"id": "g1", "skuId": null, "quantity": 1, "unitPrice": 2500, "vatRate": 0,
                           "free": false, "custom": true, "giftCard": {"code": "gc-2026-000999", "action": "activate"}});
    let sold = shop
        .pay("g1", vec![card_line], None, vec![tender("p1", "cash", 2500, None)])
        .await;
    assert_eq!(sold.status, 201, "{}", sold.text);
    assert_eq!(held(&shop.card("GC-2026-000999").await), (2500, "active".to_owned()));

    // Shapes no card has: 3 characters, 65, a space, a slash. Each is a 400 naming the field,
    // wherever the code is taken, and nothing changes.
    let sales = shop.server.count_rows("sales").await;
    let activities = shop.server.count_rows("stored_value_activities").await;
    let wide = "9".repeat(65);
    for refused in ["ABC", wide.as_str(), "GC 2026 01", "GC/2026/01"] {
        let issued = shop
            .server
            .post("/v1/gift-cards", &admin, json!({"code": refused, "balanceCents": 1000}))
            .await;
        assert_bad_field(&issued, "code");
        let mut spending = shop.sale("bad-tender", vec![line("l1", MUG, 1)], 0);
        paid_with(&mut spending, vec![tender("p1", "gift_card", 1450, Some(refused))]);
        assert_bad_field(&shop.finalize(&spending).await, "tenders.tenders.0.reference");
        let card_line = json!({"id": "g1", "skuId": null, "quantity": 1, "unitPrice": 2500, "vatRate": 0,
                               "free": false, "custom": true, "giftCard": {"code": refused, "action": "activate"}});
        let mut sale = shop.sale("bad-line", vec![card_line], 0);
        paid_with(&mut sale, vec![tender("p1", "cash", 2500, None)]);
        assert_bad_field(&shop.finalize(&sale).await, "cart.lines.0.giftCard.code");
        let path = refused.replace(' ', "%20").replace('/', "%2F");
        assert_bad_field(&shop.card(&path).await, "code");
        let block = shop
            .server
            .post(&format!("/v1/gift-cards/{path}/block"), &admin, json!({}))
            .await;
        assert_bad_field(&block, "code");
    }
    assert_eq!(shop.server.count_rows("sales").await, sales);
    assert_eq!(shop.server.count_rows("stored_value_activities").await, activities);
    // The console looks a card up by its code in any case.
    let page = crate::console::open(&shop.server, "/console/stored-value?code=gc-2026-000123", &admin).await;
    assert_eq!(page.status, 200, "{}", page.html);
    assert!(page.html.contains("data-balance=\"1550\""), "{}", page.html);
}

async fn a_credit_note_is_spent_by_its_code_never_by_its_number(engine: Engine) {
    let shop = Shop::open(engine).await;
    let returned = shop.credit_note_of("t0", "r0").await;
    let number = returned.str("creditNoteNumber");
    let code = returned.str("creditNoteCode");
    assert_eq!(code.len(), 16, "{}", returned.text);
    assert!(
        code.bytes()
            .all(|b| till_core::stored_value::CODE_ALPHABET.contains(&b))
    );
    // The return's receipt prints the code the customer spends it with.
    let receipt = shop.server.get("/v1/sales/r0/receipt", &shop.till).await;
    assert!(receipt.text.contains(&code), "{}", receipt.text);
    // Systems reading the feed see the return, not the code.
    let (events, _) = crate::events::read_feed(&shop.server, "types=return.completed", 1).await;
    assert_eq!(events[0]["data"]["creditNoteNumber"], json!(number), "{events:?}");
    assert!(!serde_json::to_string(&events).unwrap().contains(&code), "{events:?}");

    // Its number redeems nothing, and is told apart from an unknown code by nothing.
    let mug = || vec![line("l1", MUG, 1)];
    let by_number = shop
        .pay(
            "n1",
            mug(),
            None,
            vec![tender("p1", "credit_note", 1450, Some(&number))],
        )
        .await;
    assert_refused(&by_number, "tenders.tenders.0", "no such");
    let unknown = shop
        .pay(
            "n2",
            mug(),
            None,
            vec![tender("p1", "credit_note", 1450, Some("ZZZZZZZZZZZZZZZZ"))],
        )
        .await;
    assert_eq!(by_number.text, unknown.text);
    let read_by_number = shop.credit_note(&number).await;
    read_by_number.assert_error(404, "NOT_FOUND");
    assert_eq!(read_by_number.text, shop.credit_note("ZZZZZZZZZZZZZZZZ").await.text);
    assert_eq!(held(&shop.credit_note(&code).await), (4350, "active".to_owned()));

    // Its code redeems it, in any case.
    let by_code = shop
        .pay(
            "n3",
            mug(),
            None,
            vec![tender("p1", "credit_note", 1450, Some(&code.to_lowercase()))],
        )
        .await;
    assert_eq!(by_code.status, 201, "{}", by_code.text);
    let note = shop.credit_note(&code.to_lowercase()).await;
    assert_eq!(held(&note), (2900, "active".to_owned()));
    assert_eq!((note.str("code"), note.str("number")), (code.clone(), number));
    let verified = shop.verify("r1").await;
    assert_eq!(verified["ok"], json!(true), "{verified}");
}

async fn an_archive_names_cards_and_credit_notes_masked_and_needs_the_close_scope(engine: Engine) {
    let shop = Shop::open(engine).await;
    let card = shop
        .issue_card(json!({"code": "GC-2026-000123", "balanceCents": 5000}))
        .await;
    let note = shop.credit_note_of("t0", "r0").await.str("creditNoteCode");
    let first = shop
        .pay(
            "t1",
            vec![line("l1", MUG, 1)],
            None,
            vec![tender("p1", "gift_card", 1450, Some(&card))],
        )
        .await;
    assert_eq!(first.status, 201, "{}", first.text);
    let second = shop
        .pay(
            "t2",
            vec![line("l1", MUG, 2)],
            None,
            vec![
                tender("p1", "gift_card", 1000, Some("gc-2026-000123")),
                tender("p2", "credit_note", 1900, Some(&note)),
            ],
        )
        .await;
    assert_eq!(second.status, 201, "{}", second.text);
    let closed = shop.close_shift_then("day").await;
    assert_eq!(closed.status, 201, "{}", closed.text);
    let today = jiff::Zoned::new(jiff::Timestamp::now(), jiff::tz::TimeZone::get("Europe/Paris").unwrap()).date();
    let span =
        json!({"registerId": "r1", "from": (today - jiff::Span::new().days(1)).to_string(), "to": today.to_string()});
    // Reading the journal does not suffice to make an archive.
    let reader = shop.server.token("auditor", "pos.fiscal.read");
    let refused = shop.server.post("/v1/fiscal/archives", &reader, span.clone()).await;
    refused.assert_error(403, "FORBIDDEN");
    let archive = shop
        .server
        .post(
            "/v1/fiscal/archives",
            &shop.server.token("auditor", "pos.fiscal.close"),
            span,
        )
        .await;
    assert_eq!(archive.status, 201, "{}", archive.text);
    for code in [&card, &note] {
        assert!(
            !archive.text.to_uppercase().contains(code.as_str()),
            "{code} in clear: {}",
            archive.text
        );
    }
    let sales = archive.body["archive"]["sales"].as_array().unwrap();
    let tenders = |transaction: &str| -> Vec<Value> {
        let sale = sales.iter().find(|s| s["transactionId"] == transaction).unwrap();
        sale["tenders"].as_array().unwrap().clone()
    };
    let (once, twice) = (tenders("t1"), tenders("t2"));
    assert_eq!(once[0]["referenceLast4"], json!("0123"), "{once:?}");
    assert_eq!(twice[0]["referenceLast4"], json!("0123"), "{twice:?}");
    assert_eq!(twice[1]["referenceLast4"], json!(&note[12..]), "{twice:?}");
    let digest = once[0]["referenceDigest"].as_str().unwrap();
    assert_eq!(digest.len(), 43);
    assert_eq!(twice[0]["referenceDigest"], json!(digest), "one card, one digest");
    assert_ne!(twice[1]["referenceDigest"], json!(digest));
    assert!(once[0].get("reference").is_none() && twice[1].get("reference").is_none());
    // The archive is still whole and passes the audit; the journal still verifies.
    let schema: Value = serde_json::from_str(include_str!("../../../../docs/nf525-archive.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&archive.body).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    till_core::fiscal::archive::verify_file(archive.text.as_bytes()).expect("the archive verifies");
    let verified = shop.verify("r1").await;
    assert_eq!(verified["ok"], json!(true), "{verified}");
    // The receipts still find what each tender drew on, and what is left on it.
    let receipt = shop.server.get("/v1/sales/t2/receipt", &shop.till).await;
    assert!(receipt.text.contains("Carte cadeau ****0123"), "{}", receipt.text);
    assert!(receipt.text.contains("25,50"), "{}", receipt.text);
    assert!(!receipt.text.contains(&note), "{}", receipt.text);
}

async fn credit_notes_issued_before_codes_get_one_when_the_store_starts(engine: Engine) {
    let shop = Shop::open(engine).await;
    let card = shop.issue_card(json!({"balanceCents": 3000})).await;
    let number = shop.credit_note_of("t0", "r0").await.str("creditNoteNumber");
    let paid = shop
        .pay(
            "t1",
            vec![line("l1", MUG, 1)],
            None,
            vec![tender("p1", "gift_card", 1450, Some(&card))],
        )
        .await;
    assert_eq!(paid.status, 201, "{}", paid.text);
    // The instruments as a database from before codes and digests holds them (or a node of the
    // previous release writes them): a credit note found by its number, no code, no digest.
    for statement in [
        "UPDATE stored_value SET lookup = label, code = NULL, digest = NULL WHERE kind = 'credit_note'",
        "UPDATE stored_value SET digest = NULL",
    ] {
        shop.server.run_sql(statement).await.unwrap();
    }
    // The store starts.
    shop.server.store().migrate().await.unwrap();

    // The reprint of the return's receipt shows the code it was given; its number no longer
    // redeems it, its code does.
    let receipt = shop.server.get("/v1/sales/r0/receipt", &shop.till).await;
    let code = receipt
        .text
        .lines()
        .find(|line| line.contains("Code de l'avoir"))
        .and_then(|line| line.split_whitespace().last())
        .unwrap_or_else(|| panic!("a code on {}", receipt.text))
        .to_owned();
    assert_eq!(code.len(), 16, "{}", receipt.text);
    shop.credit_note(&number).await.assert_error(404, "NOT_FOUND");
    let by_number = shop
        .pay(
            "n1",
            vec![line("l1", MUG, 1)],
            None,
            vec![tender("p1", "credit_note", 1450, Some(&number))],
        )
        .await;
    assert_refused(&by_number, "tenders.tenders.0", "no such");
    let by_code = shop
        .pay(
            "n2",
            vec![line("l1", MUG, 1)],
            None,
            vec![tender("p1", "credit_note", 1450, Some(&code))],
        )
        .await;
    assert_eq!(by_code.status, 201, "{}", by_code.text);
    assert_eq!(held(&shop.credit_note(&code).await).0, 2900);
    // The card got its digest back: the receipt of the sale it paid still finds it.
    let receipt = shop.server.get("/v1/sales/t1/receipt", &shop.till).await;
    assert!(
        receipt.text.contains(&format!("Carte cadeau ****{}", &card[12..])),
        "{}",
        receipt.text
    );
    assert_eq!(shop.server.count_rows("stored_value WHERE digest IS NULL").await, 0);
}
