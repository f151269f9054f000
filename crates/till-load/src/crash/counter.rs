//! What else a till does at the counter besides selling: returns against its own receipts and
//! cash put into the drawer, each sent until acknowledged as a till sends it; then the proof
//! that each acknowledged one is recorded once and none other.

use super::{Booked, Ticket, unix_millis};
use crate::client::Client;
use crate::shop::{Shop, Till, paid};
use anyhow::{Context, Result, ensure};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;

/// Every how many sales a till gives back the first line of its last one, and puts cash in.
const RETURN_EVERY: usize = 5;
const MOVEMENT_EVERY: usize = 7;

/// Cash put into a drawer, as its till remembers it once acknowledged.
pub(super) struct Moved {
    pub(super) movement_id: String,
    pub(super) session: String,
    pub(super) amount: i64,
}

/// After a till's `sold`-th acknowledged sale `last`: a return of its first line, every
/// [`RETURN_EVERY`] sales, when the sale was paid by card alone (a return of stored value or
/// points would move balances the stored-value check counts without it).
pub(super) async fn maybe_return(
    client: &Client,
    shop: &Shop,
    till: &Till,
    sold: usize,
    last: &Booked,
) -> Result<Option<Booked>> {
    if !sold.is_multiple_of(RETURN_EVERY) || last.spend.is_some() || last.customer.is_some() || last.payment.is_some() {
        return Ok(None);
    }
    let (article, quantity) = last.lines[0];
    let refund = shop.total(&[(article, quantity)]);
    let transaction_id = format!("{}-r{sold}", till.register);
    let body = json!({
        "transactionId": transaction_id,
        "originalTransactionId": last.transaction_id,
        "number": transaction_id,
        "storeId": shop.store,
        "sellerId": till.cashier,
        "sessionId": till.session,
        "lines": [{"lineId": "l0", "quantity": quantity}],
        "tenders": paid(refund, None),
    });
    let what = format!("return {transaction_id}");
    let ack = client
        .post_until_acknowledged(
            "/v1/returns",
            &till.token,
            &body,
            &[201],
            &what,
            Duration::from_secs(120),
        )
        .await?;
    Ok(Some(Booked {
        transaction_id,
        register: till.register.clone(),
        kind: Ticket::Return,
        lines: vec![(article, -quantity)],
        body: ack.body,
        customer: None,
        spend: None,
        payment: None,
        acknowledged_at: unix_millis(),
    }))
}

/// Every [`MOVEMENT_EVERY`] sales, cash put into the till's drawer.
pub(super) async fn maybe_move_cash(
    client: &Client,
    till: &Till,
    sold: usize,
    rng: &mut fastrand::Rng,
) -> Result<Option<Moved>> {
    if !sold.is_multiple_of(MOVEMENT_EVERY) {
        return Ok(None);
    }
    let movement_id = format!("{}-m{sold}", till.register);
    let amount = rng.i64(100..=5_000);
    let body = json!({"movementId": movement_id, "kind": "paid_in", "amountCents": amount, "reason": "float"});
    let path = format!("/v1/register-sessions/{}/cash-movements", till.session);
    let what = format!("cash movement {movement_id}");
    client
        .post_until_acknowledged(&path, &till.token, &body, &[201, 200], &what, Duration::from_secs(120))
        .await?;
    Ok(Some(Moved {
        movement_id,
        session: till.session.clone(),
        amount,
    }))
}

/// Each session's X report counts exactly the cash its till put in and had acknowledged, and
/// the feed (`events`, read whole) holds one `cash.moved` event per acknowledged movement and
/// no other.
pub(super) async fn check_movements(
    client: &Client,
    admin: &str,
    shop: &Shop,
    moved: &[Moved],
    events: &[Value],
) -> Result<()> {
    for till in &shop.tills {
        let put_in: i64 = moved
            .iter()
            .filter(|m| m.session == till.session)
            .map(|m| m.amount)
            .sum();
        let path = format!("/v1/register-sessions/{}/x-report", till.session);
        let report = client.get(&path, admin).await?.expect(200, "an X report")?.json();
        let counted = report["movements"]["paidInCents"].as_i64().context("paidInCents")?;
        ensure!(
            counted == put_in,
            "session {} counts {counted} cents paid in, its till had {put_in} acknowledged",
            till.session
        );
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    for event in events.iter().filter(|e| e["type"] == "cash.moved") {
        let id = event["data"]["movementId"]
            .as_str()
            .context("a cash event's movementId")?;
        *seen.entry(id.to_owned()).or_default() += 1;
    }
    for movement in moved {
        ensure!(
            seen.remove(&movement.movement_id) == Some(1),
            "acknowledged cash movement {} is not in the feed once",
            movement.movement_id
        );
    }
    ensure!(
        seen.is_empty(),
        "the feed has cash movements nobody acknowledged: {:?}",
        seen.keys()
    );
    Ok(())
}
