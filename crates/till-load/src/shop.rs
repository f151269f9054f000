//! A shop provisioned over HTTP (a store, a catalog with stock, cashiers with open register
//! sessions) and the sales its tills send.

use super::client::Client;
use super::stored_value::Spend;
use anyhow::{Context, Result};
use futures::StreamExt;
use serde_json::{Value, json};

/// What to provision.
#[derive(Clone, Debug)]
pub struct ShopSpec {
    pub store: String,
    pub articles: usize,
    /// Units of each article on hand; `None` leaves stock unset (it may go negative).
    pub stock: Option<i64>,
    pub registers: usize,
    /// What each cashier may grant alone, in basis points; `None` for nothing.
    pub cashier_discount_bps: Option<i64>,
}

impl ShopSpec {
    /// The benchmark's shop. A prefilled database holds the same one, so that provisioning it
    /// again (as a benchmark does) finds what it writes already there.
    pub fn bench(articles: usize, registers: usize) -> ShopSpec {
        ShopSpec {
            store: "bench-store".into(),
            articles,
            stock: None,
            registers,
            cashier_discount_bps: Some(1_000),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Article {
    pub sku: String,
    pub price: i64,
    /// Percent, as the wire carries it.
    pub vat: f64,
}

/// A till: its register and the open session it books sales against.
#[derive(Clone, Debug)]
pub struct Till {
    pub register: String,
    pub cashier: String,
    pub session: String,
    pub token: String,
}

#[derive(Clone, Debug)]
pub struct Shop {
    pub store: String,
    pub articles: Vec<Article>,
    pub tills: Vec<Till>,
    pub initial_stock: i64,
}

/// Requests in flight at once while provisioning.
const PROVISIONING_CONCURRENCY: usize = 16;

const VAT_RATES: [f64; 4] = [20.0, 10.0, 5.5, 2.1];

/// The SKU id of the `n`th article: 64 hex characters.
pub fn sku_of(n: usize) -> String {
    till::demo::sku_id(&format!("article-{n}")).as_str().to_owned()
}

/// A back-office token with every scope, signed with the deployment's `TILL_JWT_SECRET` and
/// the default issuer and audience.
pub fn admin_token(secret: &str) -> String {
    let defaults = till::config::Config::default();
    till::token::mint(
        secret,
        &defaults.jwt_issuer,
        &defaults.jwt_audience,
        "till-load",
        &till_core::grant::GrantSet::all().to_words(),
        jiff::Timestamp::now(),
        std::time::Duration::from_secs(24 * 3600),
    )
}

/// Provisions `spec` through `client` with the back-office token `admin`.
pub async fn provision(client: &Client, admin: &str, spec: &ShopSpec) -> Result<Shop> {
    client
        .put(
            &format!("/v1/stores/{}", spec.store),
            admin,
            &json!({"name": spec.store}),
        )
        .await?
        .expect_ok("store")?;
    let articles: Vec<Article> = (0..spec.articles)
        .map(|n| Article {
            sku: sku_of(n),
            // Prices from 0.95 to 49.95, spread so that carts add up to many different totals.
            price: 95 + ((n * 7_919) % 50) as i64 * 100,
            vat: VAT_RATES[n % VAT_RATES.len()],
        })
        .collect();
    for chunk in articles.chunks(5_000) {
        let skus: Vec<Value> = chunk
            .iter()
            .enumerate()
            .map(|(i, a)| json!({"skuId": a.sku, "name": format!("Article {i}"), "priceCents": a.price, "vatRate": a.vat}))
            .collect();
        client
            .post("/v1/catalog/import", admin, &json!({"skus": skus}))
            .await?
            .expect(200, "catalog import")?;
    }
    if let Some(on_hand) = spec.stock {
        let stock = futures::stream::iter(articles.iter().map(|a| {
            let path = format!("/v1/stores/{}/stock/{}", spec.store, a.sku);
            let body = json!({ "onHand": on_hand });
            async move { client.put(&path, admin, &body).await?.expect_ok("stock") }
        }))
        .buffer_unordered(PROVISIONING_CONCURRENCY)
        .collect::<Vec<_>>()
        .await;
        stock.into_iter().collect::<Result<Vec<_>>>()?;
    }
    let tills = futures::stream::iter((0..spec.registers).map(|r| open_till(client, admin, spec, r)))
        .buffered(PROVISIONING_CONCURRENCY)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<Vec<_>>>()?;
    Ok(Shop {
        store: spec.store.clone(),
        articles,
        tills,
        initial_stock: spec.stock.unwrap_or(0),
    })
}

/// A cashier of its own and an open session on register `reg-{n}`.
async fn open_till(client: &Client, admin: &str, spec: &ShopSpec, n: usize) -> Result<Till> {
    let (register, cashier) = (format!("reg-{n}"), format!("cashier-{n}"));
    let mut staff = json!({"displayName": cashier, "role": "cashier", "pin": "2580"});
    if let Some(bps) = spec.cashier_discount_bps {
        staff["discountLimit"] = json!({"percentBps": bps, "amountCents": 9_000_000_000_000_000i64});
    }
    client
        .put(&format!("/v1/staff/{cashier}"), admin, &staff)
        .await?
        .expect_ok("cashier")?;
    open_session(client, admin, &spec.store, register, cashier).await
}

/// `cashier` opens a session on `register` of `store` with the PIN every provisioned cashier
/// has: the till that books its sales.
pub async fn open_session(
    client: &Client,
    admin: &str,
    store: &str,
    register: String,
    cashier: String,
) -> Result<Till> {
    let opened = client
        .post(
            "/v1/register-sessions",
            admin,
            &json!({"storeId": store, "registerId": register, "cashierSubject": cashier, "pin": "2580"}),
        )
        .await?
        .expect(201, "open session")?
        .json();
    let field = |name: &str| {
        opened[name]
            .as_str()
            .map(str::to_owned)
            .with_context(|| format!("{name} missing from the session"))
    };
    Ok(Till {
        session: field("sessionId")?,
        token: field("token")?,
        register,
        cashier,
    })
}

impl Shop {
    /// A finalize body for `lines` (article index, quantity) at catalog prices, paid by card.
    pub fn sale(&self, till: &Till, transaction_id: &str, lines: &[(usize, i64)]) -> Value {
        self.sale_paying(till, transaction_id, lines, None, None)
    }

    /// The catalog price of `lines` (article index, quantity).
    pub fn total(&self, lines: &[(usize, i64)]) -> i64 {
        lines.iter().map(|(a, q)| self.articles[*a].price * q).sum()
    }

    /// A finalize body for `lines` at catalog prices for `customer`, `spend` paying its part
    /// with stored value and the card the rest.
    pub fn sale_paying(
        &self,
        till: &Till,
        transaction_id: &str,
        lines: &[(usize, i64)],
        customer: Option<&str>,
        spend: Option<&Spend>,
    ) -> Value {
        let total = self.total(lines);
        let cart: Vec<Value> = lines
            .iter()
            .enumerate()
            .map(|(i, (a, q))| {
                let article = &self.articles[*a];
                json!({"id": format!("l{i}"), "skuId": article.sku, "quantity": q, "unitPrice": article.price,
                       "vatRate": article.vat, "free": false})
            })
            .collect();
        json!({
            "transactionId": transaction_id,
            "number": transaction_id,
            "storeId": self.store,
            "sellerId": till.cashier,
            "customerId": customer,
            "sessionId": till.session,
            "registerId": till.register,
            "cart": {"lines": cart, "freeLineSequence": 0},
            "tenders": paid(total, spend)
        })
    }

    /// `1..=max` distinct articles with quantities 1 to 3.
    pub fn random_lines(&self, rng: &mut fastrand::Rng, max: usize) -> Vec<(usize, i64)> {
        let count = rng.usize(1..=max.min(self.articles.len()));
        let mut lines: Vec<(usize, i64)> = Vec::with_capacity(count);
        while lines.len() < count {
            let article = rng.usize(0..self.articles.len());
            if lines.iter().all(|(a, _)| *a != article) {
                lines.push((article, rng.i64(1..=3)));
            }
        }
        lines
    }
}

/// The tenders of a sale of `total`: `spend`'s part with stored value, the rest by card.
pub fn paid(total: i64, spend: Option<&Spend>) -> Value {
    let by_card = total - spend.map_or(0, Spend::applied);
    let mut tenders = vec![
        json!({"id": "p1", "method": "card", "applied": by_card, "presented": by_card, "change": 0, "forfeited": 0}),
    ];
    tenders.extend(spend.map(|spend| spend.tender("p2")));
    json!({"amountDue": total, "sequence": 1, "tenders": tenders})
}
