//! The demo's day of earlier sales on the second till: its baskets, when each is sold, and the
//! finalize bodies that sell them before the day's shift is closed.

use super::{ARTICLES, CASHIER, MORNING_REGISTER, STORE, cents, sku_id};
use jiff::civil::Date;
use jiff::{SignedDuration, Timestamp};
use serde_json::json;
use till_api::ManualClock;
use till_api::auth::secret::{SESSION_TOKEN_PREFIX, new_id, new_token, token_hash};
use till_api::auth::{Credential, Principal};
use till_api::routes::checkout::request::parse_sale;
use till_app::App;
use till_core::ids::{RegisterId, SessionId, StoreId, Subject, TransactionId};
use till_core::money::VatRate;
use till_core::store::Timezone;
use till_store::Store;
use till_store::sessions::OpenSession;

/// The baskets of the day's earlier sales: (article, quantity), none of the articles, cards or
/// customers the README's requests show, so that its figures stay true.
const DAY_BASKETS: &[&[(&str, i64)]] = &[
    &[("Café à emporter", 2), ("Sablés bretons 125 g", 1)],
    &[("Sandwich jambon-beurre", 1), ("Eau minérale 1,5 L", 1)],
    &[("Le Monde (quotidien)", 1)],
    &[("Salade composée du jour", 1), ("Jus d'orange pressé 25 cl", 1)],
    &[("Part de quiche lorraine", 2)],
    &[("Confiture d'abricot 370 g", 1), ("Miel de lavande 250 g", 1)],
    &[("Café moulu pur arabica 250 g", 1), ("Chocolat noir 70 % 100 g", 2)],
    &[("Croque-monsieur", 1), ("Café à emporter", 1)],
    &[("Tote bag en coton bio", 1)],
    &[("Côtes-du-Rhône rouge 75 cl", 2)],
    &[("Bougie parfumée figuier", 1), ("Carnet A5 ligné", 1)],
    &[
        ("Yaourts nature x4", 1),
        ("Pâtes artisanales 500 g", 2),
        ("Huile d'olive vierge extra 50 cl", 1),
    ],
];

/// When the demo's day happens, on the store's clock: the shop opens at 8:00 (at midnight
/// when the demo starts before 9:00), and the second till's shift, within one session's
/// lifetime, sells until a minute ago.
pub(super) struct ShopDay {
    date: Date,
    pub(super) opening: Timestamp,
    /// When each basket of [`DAY_BASKETS`] is sold, in order.
    sales: Vec<Timestamp>,
}

impl ShopDay {
    pub(super) fn of(now: Timestamp, session_ttl: std::time::Duration) -> anyhow::Result<ShopDay> {
        let zone = Timezone::default_zone().zone();
        let local = now.to_zoned(zone.clone());
        let date = local.date();
        let eight = date.at(8, 0, 0, 0).to_zoned(zone.clone())?.timestamp();
        let opening = if local.hour() >= 9 {
            eight
        } else {
            date.to_zoned(zone)?.timestamp()
        };
        let ttl = SignedDuration::try_from(session_ttl)?;
        let shift_start = opening.max(now.checked_sub(ttl)?.checked_add(SignedDuration::from_mins(10))?);
        let end = now.checked_sub(SignedDuration::from_mins(1))?.max(shift_start);
        let span = end.duration_since(shift_start).as_micros();
        let count = DAY_BASKETS.len() as i128;
        let sales = (1..=count)
            .map(|n| {
                let offset = i64::try_from(span * n / (count + 1)).unwrap_or_default();
                shift_start.checked_add(SignedDuration::from_micros(offset))
            })
            .collect::<Result<_, _>>()?;
        Ok(ShopDay { date, opening, sales })
    }
}

/// Sells [`DAY_BASKETS`] on the second till through the finalize use case, each at its instant
/// of the day, paid alternately by card and in cash, then closes the shift (its Z report).
/// Once a day: a restart the same day finds them sold.
pub(super) async fn sell_the_day(app: &App, store: &Store, clock: &ManualClock, day: &ShopDay) -> anyhow::Result<()> {
    let tag = day.date.strftime("%Y%m%d").to_string();
    let transaction = |n: usize| format!("demo-{tag}-t2-{n:02}");
    if store
        .find_sale(&TransactionId::parse(&transaction(1))?)
        .await?
        .is_some()
    {
        return Ok(());
    }
    let Some(first) = day.sales.first() else {
        return Ok(());
    };
    clock.set(day.opening.max(first.checked_sub(SignedDuration::from_mins(5))?));
    let token = new_token(SESSION_TOKEN_PREFIX);
    let session_id = SessionId::from_trusted(new_id("ses"));
    let opened_at = app.now();
    let opened = store
        .open_session(OpenSession {
            session_id: session_id.clone(),
            token_hash: token_hash(&token),
            store_id: StoreId::parse(STORE)?,
            register_id: RegisterId::parse(MORNING_REGISTER)?,
            cashier_subject: Subject::parse(CASHIER)?,
            opening_float: cents(10_000),
            opened_at,
            expires_at: opened_at.checked_add(app.settings().session_ttl)?,
        })
        .await?;
    if let Err(refusal) = opened {
        anyhow::bail!("cannot open the second till's session: {refusal:?}");
    }
    let session = store
        .session_by_token(&token_hash(&token))
        .await?
        .ok_or_else(|| anyhow::anyhow!("the second till's session vanished"))?;
    let cashier = Principal {
        subject: session.cashier.subject.clone(),
        grants: session.cashier.member.grants(),
        credential: Credential::Session(Box::new(session)),
    };
    for (n, (basket, at)) in DAY_BASKETS.iter().zip(&day.sales).enumerate() {
        clock.set(*at);
        let body = basket_sale(
            &transaction(n + 1),
            &format!("T2-{tag}-{:02}", n + 1),
            session_id.as_str(),
            basket,
            n % 2 == 0,
        );
        let request = parse_sale(&body).map_err(|refused| anyhow::anyhow!("a demo sale is invalid: {refused:?}"))?;
        till_app::finalize::finalize(app, &cashier, request, None)
            .await
            .map_err(|refused| anyhow::anyhow!("a demo sale was refused: {refused:?}"))?;
    }
    if let Some(last) = day.sales.last() {
        clock.set(last.checked_add(SignedDuration::from_secs(20))?);
    }
    till_app::sessions::close(app, session_id, Vec::new())
        .await
        .map_err(|refused| anyhow::anyhow!("cannot close the second till's session: {refused:?}"))?;
    Ok(())
}

/// The finalize body of a basket of demo articles at their catalog prices, paid exactly by card
/// or in cash.
fn basket_sale(
    transaction: &str,
    number: &str,
    session_id: &str,
    basket: &[(&str, i64)],
    by_card: bool,
) -> serde_json::Value {
    let article = |name: &str| ARTICLES.iter().find(|(article, _, _)| *article == name);
    let mut due = 0;
    let lines: Vec<serde_json::Value> = basket
        .iter()
        .enumerate()
        .filter_map(|(n, (name, quantity))| {
            let (_, price, vat) = article(name)?;
            due += price * quantity;
            let rate = VatRate::from_hundredths(*vat)?.as_json_number();
            Some(
                json!({"id": format!("l{}", n + 1), "skuId": sku_id(name).as_str(), "quantity": quantity,
                        "unitPrice": price, "vatRate": rate, "free": false}),
            )
        })
        .collect();
    let method = if by_card { "card" } else { "cash" };
    json!({
        "transactionId": transaction, "number": number, "storeId": STORE, "sellerId": CASHIER,
        "customerId": null, "sessionId": session_id,
        "cart": {"freeLineSequence": 0, "lines": lines},
        "tenders": {"amountDue": due, "sequence": 1, "tenders": [
            {"id": "p1", "method": method, "applied": due, "presented": due, "change": 0, "forfeited": 0}]}
    })
}
