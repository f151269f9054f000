//! After the run: the proof that the database holds exactly the acknowledged sales, their stock,
//! tickets and events, every stored-value redemption once, and that the fiscal audit passes.

use super::{Booked, CARD_BALANCE_CENTS, Pool, points_earned};
use crate::client::Client;
use crate::shop::Shop;
use crate::stored_value::{Spend, points_of};
use anyhow::{Context, Result, bail, ensure};
use futures::StreamExt;
use serde_json::Value;
use sqlx::{Connection, Row};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use till::config::Config;

/// The sum of the movements in the stock ledger at `level_path` (a level's path), every page.
async fn ledger_sum(client: &Client, admin: &str, level_path: &str) -> Result<i64> {
    let mut sum = 0i64;
    let mut cursor: Option<String> = None;
    loop {
        let mut path = format!("{level_path}/movements?limit=500");
        if let Some(cursor) = &cursor {
            path.push_str(&format!("&cursor={cursor}"));
        }
        let page = client.get(&path, admin).await?.expect(200, "stock movements")?.json();
        for movement in page["items"].as_array().context("items")? {
            sum += movement["deltaQuantity"].as_i64().context("deltaQuantity")?;
        }
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return Ok(sum),
        }
    }
}

/// Through the API: every acknowledged sale reads back byte for byte, stock is what the
/// acknowledged sales left and the sum of its ledger, and each register's ticket chain holds
/// exactly its sales and verifies.
pub(super) async fn check(client: &Client, admin: &str, shop: &Shop, booked: &[Booked]) -> Result<()> {
    let mismatches = futures::stream::iter(booked.iter().map(|sale| async move {
        let read = client.get(&format!("/v1/sales/{}", sale.transaction_id), admin).await?;
        anyhow::Ok((read.status != 200 || read.text != sale.body).then(|| sale.transaction_id.clone()))
    }))
    .buffer_unordered(16)
    .collect::<Vec<_>>()
    .await
    .into_iter()
    .collect::<Result<Vec<_>>>()?;
    let lost: Vec<String> = mismatches.into_iter().flatten().collect();
    ensure!(lost.is_empty(), "acknowledged sales missing or changed: {lost:?}");

    let mut sold = vec![0i64; shop.articles.len()];
    for sale in booked {
        for (article, quantity) in &sale.lines {
            sold[*article] += quantity;
        }
    }
    for (article, quantity) in shop.articles.iter().zip(&sold) {
        let path = format!("/v1/stores/{}/stock/{}", shop.store, article.sku);
        let on_hand = client.get(&path, admin).await?.expect(200, "stock")?.json()["onHand"]
            .as_i64()
            .context("onHand")?;
        ensure!(
            on_hand == shop.initial_stock - quantity,
            "stock of {} is {on_hand}, expected {} - {quantity}",
            article.sku,
            shop.initial_stock
        );
        let ledger = ledger_sum(client, admin, &path).await?;
        ensure!(
            ledger == on_hand,
            "the ledger of {} adds up to {ledger}, its level is {on_hand}",
            article.sku
        );
    }

    let mut per_register: HashMap<&str, i64> = HashMap::new();
    for sale in booked {
        *per_register.entry(sale.register.as_str()).or_default() += 1;
    }
    for till in &shop.tills {
        let path = format!("/v1/fiscal/registers/{}/verify", till.register);
        let verdict = client.get(&path, admin).await?.expect(200, "verify")?.json();
        ensure!(
            verdict["ok"] == true,
            "register {} fails verification: {verdict}",
            till.register
        );
        let tickets = verdict["chains"]["ticket"].as_i64().unwrap_or(0);
        let expected = per_register.get(till.register.as_str()).copied().unwrap_or(0);
        ensure!(
            tickets == expected,
            "register {} has {tickets} tickets for {expected} acknowledged sales",
            till.register
        );
    }
    Ok(())
}

/// Through the API: the event feed, read from its start by `nextCursor`, holds each
/// acknowledged ticket's event (a sale's or a return's) once, with the answer the till got,
/// and no other ticket; its positions run without a gap. On PostgreSQL the last commits are
/// numbered within moments, so the feed is read again until every ticket is there, for at most
/// half a minute. Answers the events read.
pub(super) async fn check_feed(client: &Client, admin: &str, booked: &[Booked]) -> Result<Vec<Value>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let (mut after, mut events) = ("0".to_owned(), Vec::new());
    loop {
        let page = client
            .get(&format!("/v1/events?after={after}&limit=1000"), admin)
            .await?
            .expect(200, "a page of the event feed")?
            .json();
        let read = page["events"].as_array().context("events")?.clone();
        after = page["nextCursor"].as_str().context("nextCursor")?.to_owned();
        let tickets = events.iter().filter(|e: &&Value| is_ticket(e)).count();
        if read.is_empty() && (tickets >= booked.len() || Instant::now() > deadline) {
            break;
        }
        if read.is_empty() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        events.extend(read);
    }
    for (n, event) in events.iter().enumerate() {
        ensure!(
            event["cursor"].as_str() == Some(&(n + 1).to_string()),
            "the feed's event {} has cursor {}: a gap or a repeat",
            n + 1,
            event["cursor"]
        );
    }
    let mut seen: HashMap<String, Value> = HashMap::new();
    for event in events.iter().filter(|e| is_ticket(e)) {
        let id = event["data"]["transaction"]["id"]
            .as_str()
            .context("a ticket event's id")?;
        ensure!(
            seen.insert(id.to_owned(), event.clone()).is_none(),
            "ticket {id} is twice in the feed"
        );
    }
    for ticket in booked {
        let answered: Value = serde_json::from_str(&ticket.body)?;
        match seen.remove(&ticket.transaction_id) {
            Some(event) => ensure!(
                event["type"] == ticket.kind.event() && without_code(&event["data"]) == without_code(&answered),
                "ticket {}'s event differs from its answer",
                ticket.transaction_id
            ),
            None => bail!("acknowledged ticket {} is not in the feed", ticket.transaction_id),
        }
    }
    ensure!(
        seen.is_empty(),
        "the feed has tickets nobody acknowledged: {:?}",
        seen.keys()
    );
    Ok(events)
}

fn is_ticket(event: &Value) -> bool {
    event["type"] == "sale.completed" || event["type"] == "return.completed"
}

/// A ticket's answer without the credit note's code, which only the till that made the
/// return is told: the feed leaves it out.
fn without_code(answer: &Value) -> Value {
    let mut answer = answer.clone();
    if let Some(fields) = answer.as_object_mut() {
        fields.remove("creditNoteCode");
    }
    answer
}

/// Through the API: each card's ledger holds one redemption per acknowledged sale that spent
/// it, of what it spent, and no other; its balance is its issue less those and its ledger adds
/// up to it. Each customer's points are those earned before the tills started, plus what
/// every acknowledged sale of theirs earned, less what they spent.
pub(super) async fn check_stored_value(client: &Client, admin: &str, pool: &Pool, booked: &[Booked]) -> Result<()> {
    for (code, _) in &pool.cards {
        let mut spent: Vec<(String, i64)> = booked
            .iter()
            .filter_map(|sale| match &sale.spend {
                Some(Spend::GiftCard { code: used, applied }) if used == code => {
                    Some((sale.transaction_id.clone(), -applied))
                }
                _ => None,
            })
            .collect();
        let card = client
            .get(&format!("/v1/gift-cards/{code}"), admin)
            .await?
            .expect(200, "gift card")?
            .json();
        let activities = card["activities"].as_array().context("a card's activities")?;
        let mut redeemed = Vec::new();
        let (mut issued, mut sum) = (0, 0);
        for activity in activities {
            let amount = activity["amountCents"].as_i64().context("amountCents")?;
            sum += amount;
            match activity["kind"].as_str() {
                Some("issue") => issued += amount,
                Some("redeem") => redeemed.push((
                    activity["transactionId"].as_str().unwrap_or_default().to_owned(),
                    amount,
                )),
                other => bail!("card ****{}: unexpected activity {other:?}", tail(code)),
            }
        }
        spent.sort();
        redeemed.sort();
        ensure!(
            redeemed == spent,
            "card ****{}: its ledger redeems {redeemed:?}, the acknowledged sales spent {spent:?}",
            tail(code)
        );
        let balance = card["balanceCents"].as_i64().context("balanceCents")?;
        let left = CARD_BALANCE_CENTS + spent.iter().map(|(_, amount)| amount).sum::<i64>();
        ensure!(
            issued == CARD_BALANCE_CENTS && balance == left && sum == balance,
            "card ****{}: issued {issued}, balance {balance}, ledger sum {sum}, expected {left}",
            tail(code)
        );
    }
    for ((customer, _), before) in pool.customers.iter().zip(&pool.points_before) {
        let mut expected = *before;
        for sale in booked.iter().filter(|sale| sale.customer.as_ref() == Some(customer)) {
            if sale.transaction_id.starts_with("points-") {
                continue;
            }
            expected += points_earned(&sale.body)?;
            if let Some(Spend::Loyalty { applied }) = &sale.spend {
                expected -= applied / pool.point_value;
            }
        }
        let points = points_of(client, admin, customer).await?;
        ensure!(
            points == expected,
            "{customer} has {points} points, expected {expected}"
        );
    }
    Ok(())
}

/// The last four symbols of a card's code, as a receipt shows it.
fn tail(code: &str) -> &str {
    &code[code.len().saturating_sub(4)..]
}

/// Every acknowledged sale's card attempt is captured by that sale, and every captured attempt
/// belongs to an acknowledged sale: no card was charged for a sale that was not recorded, no
/// sale recorded a card payment that was not captured.
pub(super) async fn check_card_attempts(client: &Client, admin: &str, booked: &[Booked]) -> Result<()> {
    let mut sold_with: HashMap<&str, &str> = HashMap::new();
    for sale in booked {
        if let Some(payment) = &sale.payment {
            sold_with.insert(payment.as_str(), sale.transaction_id.as_str());
        }
    }
    let mut captured = 0usize;
    let mut cursor: Option<String> = None;
    loop {
        let mut path = "/v1/payments?state=captured&limit=500".to_owned();
        if let Some(cursor) = &cursor {
            path.push_str(&format!("&cursor={cursor}"));
        }
        let page = client.get(&path, admin).await?.expect(200, "captured payments")?.json();
        for attempt in page["items"].as_array().context("items")? {
            let id = attempt["paymentId"].as_str().context("paymentId")?;
            let by = attempt["capturedBy"].as_str().context("capturedBy")?;
            ensure!(
                sold_with.get(id) == Some(&by),
                "attempt {id} is captured by {by}, which no acknowledged sale paid with it"
            );
            captured += 1;
        }
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    ensure!(
        captured == sold_with.len(),
        "{} acknowledged sales paid through an attempt, {captured} attempts captured",
        sold_with.len()
    );
    Ok(())
}

/// Straight on the database, with every node down: the points ledger holds one redemption per
/// acknowledged sale that spent points, of those points, and no other.
pub(super) async fn audit_points_ledger(database_url: &str, pool: &Pool, booked: &[Booked]) -> Result<()> {
    let mut spent: Vec<(String, String, i64)> = booked
        .iter()
        .filter_map(|sale| match (&sale.spend, &sale.customer) {
            (Some(Spend::Loyalty { applied }), Some(customer)) => Some((
                customer.clone(),
                sale.transaction_id.clone(),
                -applied / pool.point_value,
            )),
            _ => None,
        })
        .collect();
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(database_url).await?;
    let rows = sqlx::query("SELECT customer_id, transaction_id, points FROM loyalty_activities WHERE kind = 'redeem'")
        .fetch_all(&mut conn)
        .await?;
    conn.close().await?;
    let mut redeemed = rows
        .iter()
        .map(|row| {
            Ok((
                row.try_get::<String, _>("customer_id")?,
                row.try_get::<Option<String>, _>("transaction_id")?.unwrap_or_default(),
                row.try_get::<i64, _>("points")?,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    spent.sort();
    redeemed.sort();
    ensure!(
        redeemed == spent,
        "the points ledger redeems {redeemed:?}, the acknowledged sales spent {spent:?}"
    );
    Ok(())
}

/// Straight on the database, with every node down: the full fiscal audit as `till fiscal
/// verify` runs it, no ticket sequence missing or taken twice, and on SQLite the file's own
/// integrity check.
pub(super) async fn audit(database_url: &str, work_dir: &std::path::Path, key_file: &std::path::Path) -> Result<()> {
    let config = Config {
        database_url: Some(database_url.to_owned()),
        data_dir: work_dir.join("audit"),
        fiscal_key_file: Some(key_file.to_path_buf()),
        ..Config::default()
    };
    ensure!(till::fiscal::verify(&config, None).await?, "the fiscal audit failed");
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(database_url).await?;
    let chains = sqlx::query(
        "SELECT register_id, COUNT(*) AS entries, COUNT(DISTINCT seq) AS seqs, MAX(seq) AS last \
         FROM fiscal_entries WHERE kind = 'ticket' GROUP BY register_id",
    )
    .fetch_all(&mut conn)
    .await?;
    for row in &chains {
        let (register, entries, seqs, last): (String, i64, i64, i64) = (
            row.try_get("register_id")?,
            row.try_get("entries")?,
            row.try_get("seqs")?,
            row.try_get("last")?,
        );
        ensure!(
            entries == seqs && seqs == last,
            "register {register}: {entries} tickets, {seqs} distinct sequences, last {last}"
        );
    }
    let sales: i64 = sqlx::query("SELECT COUNT(*) AS n FROM sales WHERE fiscal_seq = 0")
        .fetch_one(&mut conn)
        .await?
        .try_get("n")?;
    ensure!(sales == 0, "{sales} sales without a ticket");
    if database_url.starts_with("sqlite:") {
        let verdict: String = sqlx::query("PRAGMA integrity_check")
            .fetch_one(&mut conn)
            .await?
            .try_get(0)?;
        if verdict != "ok" {
            bail!("SQLite integrity check: {verdict}");
        }
    }
    conn.close().await?;
    Ok(())
}
