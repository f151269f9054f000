//! The shop most black-box tests start from: a store with three articles, a cashier and a
//! manager, and an open session on one till; and the sale bodies they send. Every sale it
//! books is checked against a JSON Schema written from the interface document.

use crate::harness::{Engine, Reply, TestServer, sku};
use serde_json::{Value, json};
use std::sync::OnceLock;

pub const BAGUETTE: (&str, i64, f64) = ("Baguette", 130, 5.5);
pub const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);
pub const BOOK: (&str, i64, f64) = ("Livre", 2490, 5.5);

/// A store with three articles, a cashier (may grant 5 % / 5.00 alone), a manager, and an open
/// session on till `r1` run by the cashier.
pub struct Shop {
    pub server: TestServer,
    pub session: String,
    pub till: String,
}

impl Shop {
    pub async fn open(engine: Engine) -> Shop {
        Shop::open_with(engine, |_| {}).await
    }

    pub async fn open_with(engine: Engine, tweak: impl FnOnce(&mut till::config::Config)) -> Shop {
        Shop::open_at(engine, jiff::Timestamp::now(), tweak).await
    }

    /// A shop whose clock reads `start`.
    pub async fn open_at(
        engine: Engine,
        start: jiff::Timestamp,
        tweak: impl FnOnce(&mut till::config::Config),
    ) -> Shop {
        let server = TestServer::start_at(engine, start, tweak).await;
        server.provision_store("s1").await;
        for (name, price, vat) in [BAGUETTE, MUG, BOOK] {
            server.provision_sku(name, price, vat).await;
        }
        let admin = server.admin();
        let cashier = json!({"displayName": "Camille", "role": "cashier", "pin": "1234",
                             "discountLimit": {"percentBps": 500, "amountCents": 500}});
        assert_eq!(server.put("/v1/staff/camille", &admin, cashier).await.status, 201);
        server.provision_staff("mathis", "manager", "9876").await;
        let (session, till) = server.open_session("s1", "r1", "camille", "1234").await;
        Shop { server, session, till }
    }

    /// A sale paid by card of `amount_due`, with `lines` as built by [`line`].
    pub fn sale(&self, transaction: &str, lines: Vec<Value>, amount_due: i64) -> Value {
        json!({
            "transactionId": transaction,
            "number": format!("T-{transaction}"),
            "storeId": "s1",
            "sellerId": "camille",
            "customerId": null,
            "sessionId": self.session,
            "cart": {"lines": lines, "freeLineSequence": 0},
            "tenders": {"amountDue": amount_due, "sequence": 1, "tenders": [
                {"id": "p1", "method": "card", "applied": amount_due, "presented": amount_due, "change": 0, "forfeited": 0}
            ]}
        })
    }

    pub async fn finalize(&self, body: &Value) -> Reply {
        self.finalize_as(&self.till, body).await
    }

    pub async fn finalize_as(&self, token: &str, body: &Value) -> Reply {
        let reply = self.server.post("/v1/checkout/finalize", token, body.clone()).await;
        if reply.status == 201 {
            assert_matches_interface(&reply.body);
        }
        reply
    }

    /// Books one-mug sales `t0`, `t1`... one after another until the node trusts its guess of
    /// the till's next ticket (eight right guesses follow the first sale), so that its next
    /// plain sale is committed against that guess: in one statement on PostgreSQL. Answers how
    /// many it booked.
    pub async fn sell_until_the_guess_is_trusted(&self) -> i64 {
        const SALES: i64 = 9;
        for i in 0..SALES {
            let sold = self
                .finalize(&self.sale(&format!("t{i}"), vec![line("l1", MUG, 1)], 1450))
                .await;
            assert_eq!(sold.status, 201, "{}", sold.text);
        }
        SALES
    }

    pub async fn stock(&self, article: (&str, i64, f64)) -> i64 {
        let path = format!("/v1/stores/s1/stock/{}", sku(article.0));
        self.server.get(&path, &self.server.admin()).await.body["onHand"]
            .as_i64()
            .unwrap()
    }

    pub async fn verify(&self, register: &str) -> Value {
        let path = format!("/v1/fiscal/registers/{register}/verify");
        self.server
            .get(&path, &self.server.token("auditor", "pos.fiscal.read"))
            .await
            .body
    }
}

/// A catalog line with the till's advisory price equal to the catalog's.
pub fn line(id: &str, article: (&str, i64, f64), quantity: i64) -> Value {
    json!({"id": id, "skuId": sku(article.0), "quantity": quantity, "unitPrice": article.1, "vatRate": article.2, "free": false})
}

fn assert_matches_interface(body: &Value) {
    static SCHEMA: OnceLock<jsonschema::Validator> = OnceLock::new();
    let validator = SCHEMA.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sale-event.schema.json");
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        jsonschema::validator_for(&schema).expect("a valid schema")
    });
    let errors: Vec<String> = validator
        .iter_errors(body)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "sale event breaks the interface schema: {errors:?}\n{body}"
    );
}
