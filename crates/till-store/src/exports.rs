//! The closed days the accountant's exports read (FEC, e-reporting): the registers' sealed day
//! closures of a period, each with the tickets it covers summed per VAT rate and tender method.
//! A day whose tickets are not yet closed stops the read: an export holds closed days only.

use crate::db::Store;
use crate::error::StoreError;
use crate::packed;
use crate::sale_detail::Sales;
use crate::sql::{Conn, Row, query};
use jiff::civil::Date;
use serde::Deserialize;
use std::collections::BTreeMap;
use till_app::storage::ReadAt;
pub use till_app::storage::fiscal::{DaysAsked, ExportDays};
use till_core::exports::{ClosedDay, DayTickets, TicketTender};
use till_core::fiscal::payload::SaleRecordVat;
use till_core::instant::from_micros;
use till_core::store::Timezone;

/// What an export reads of a sale's document: its VAT breakdown and tenders, not its lines.
#[derive(Deserialize)]
struct TicketParts {
    vat: Vec<SaleRecordVat>,
    tenders: Vec<Tender>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Tender {
    method: String,
    applied_cents: i64,
    forfeited_cents: i64,
}

impl Store {
    pub async fn period_zones(
        &self,
        store_id: Option<&str>,
        register_id: Option<&str>,
    ) -> Result<Vec<Timezone>, StoreError> {
        let mut clause = String::new();
        let mut values = Vec::new();
        if let Some(store) = store_id {
            values.push(store);
            clause.push_str(&format!(" AND r.store_id = ${}", values.len() + 1));
        }
        if let Some(register) = register_id {
            values.push(register);
            clause.push_str(&format!(" AND r.register_id = ${}", values.len() + 1));
        }
        if let Some(store) = store_id {
            values.push(store);
            clause.push_str(&format!(
                " UNION SELECT timezone FROM stores WHERE store_id = ${}",
                values.len() + 1
            ));
        }
        let mut zones = query(format!(
            "SELECT DISTINCT COALESCE(s.timezone, $1) AS timezone FROM registers r \
             LEFT JOIN stores s ON s.store_id = r.store_id WHERE 1 = 1{clause}"
        ))
        .bind(Timezone::DEFAULT);
        for value in values {
            zones = zones.bind(value);
        }
        let rows = zones.fetch_all(self.reader()).await?;
        rows.iter()
            .map(|row| Ok(Timezone::from_trusted(row.try_get("timezone")?)))
            .collect()
    }

    pub async fn export_days(&self, asked: DaysAsked, at: ReadAt) -> Result<ExportDays, StoreError> {
        self.long_read_at(at, move |conn| Box::pin(async move { read_days(conn, &asked).await }))
            .await
    }
}

/// `AND ...` for the store and register filters, numbered from `$3`, with their values.
fn filters(asked: &DaysAsked, register_column: &str) -> (String, Vec<String>) {
    let mut clause = String::new();
    let mut values = Vec::new();
    if let Some(store) = &asked.store_id {
        values.push(store.clone());
        clause.push_str(&format!(" AND r.store_id = ${}", values.len() + 2));
    }
    if let Some(register) = &asked.register_id {
        values.push(register.clone());
        clause.push_str(&format!(" AND {register_column} = ${}", values.len() + 2));
    }
    (clause, values)
}

async fn read_days(conn: &mut Conn, asked: &DaysAsked) -> Result<ExportDays, StoreError> {
    let (from, to) = (asked.from.to_string(), asked.to.to_string());
    let (clause, values) = filters(asked, "r.register_id");
    let mut open = query(format!(
        "SELECT r.register_id, r.open_day FROM registers r \
         WHERE r.open_day IS NOT NULL AND r.open_day >= $1 AND r.open_day <= $2{clause} \
         ORDER BY r.open_day, r.register_id LIMIT 1"
    ))
    .bind(&from)
    .bind(&to);
    for value in &values {
        open = open.bind(value.as_str());
    }
    if let Some(row) = open.fetch_optional(&mut *conn).await? {
        return Ok(ExportDays::Open {
            register_id: row.try_get("register_id")?,
            date: row.try_get("open_day")?,
        });
    }
    let (clause, values) = filters(asked, "c.register_id");
    let mut closures = query(format!(
        "SELECT c.closure_seq, c.register_id, c.period_from, c.first_ticket_seq, c.last_ticket_seq, c.vat, \
             c.closed_at, r.store_id, s.siret, s.timezone \
         FROM fiscal_closures c JOIN registers r ON r.register_id = c.register_id \
             LEFT JOIN stores s ON s.store_id = r.store_id \
         WHERE c.period = 'DAY' AND c.ticket_count > 0 AND c.period_from >= $1 AND c.period_from <= $2{clause} \
         ORDER BY c.period_from, c.register_id, c.closure_seq"
    ))
    .bind(&from)
    .bind(&to);
    for value in &values {
        closures = closures.bind(value.as_str());
    }
    let rows = closures.fetch_all(&mut *conn).await?;
    let mut days = Vec::with_capacity(rows.len());
    let mut sirets = BTreeMap::new();
    for row in &rows {
        let (day, siret) = closed_day(conn, row).await?;
        sirets.insert(day.store_id.clone(), siret);
        days.push(day);
    }
    Ok(ExportDays::Closed { days, sirets })
}

/// A day closure's row with its tickets read and summed, and its store's SIRET.
async fn closed_day(conn: &mut Conn, row: &Row) -> Result<(ClosedDay, Option<String>), StoreError> {
    let register_id: String = row.try_get("register_id")?;
    let period_from: String = row.try_get("period_from")?;
    let date: Date = period_from
        .parse()
        .map_err(|_| StoreError::Corrupt(format!("a day closure of {register_id} has the day {period_from}")))?;
    let vat: String = row.try_get("vat")?;
    let sealed_vat: Vec<SaleRecordVat> =
        serde_json::from_str(&vat).map_err(|_| StoreError::Corrupt(format!("closure VAT of {register_id}")))?;
    let first: i64 = row.try_get("first_ticket_seq")?;
    let last: i64 = row.try_get("last_ticket_seq")?;
    let timezone: Option<String> = row.try_get("timezone")?;
    let zone = Timezone::from_trusted(timezone.unwrap_or_else(|| Timezone::DEFAULT.to_owned())).zone();
    let closed_at: i64 = row.try_get("closed_at")?;
    let sales = Sales::Tickets {
        register_id: &register_id,
        after: first.saturating_sub(1),
        through: last,
    };
    // A ticket an invoice covers is counted among the day's tickets and apart as invoiced.
    let tickets = sales
        .bind(query(format!(
            "SELECT s.packed, CASE WHEN EXISTS (SELECT 1 FROM invoice_tickets i \
             WHERE i.transaction_id = s.transaction_id) THEN 1 ELSE 0 END AS invoiced FROM sales s WHERE {}",
            sales.clause()
        )))
        .fetch_all(&mut *conn)
        .await?;
    let mut figures = DayTickets::default();
    let mut invoiced = DayTickets::default();
    for ticket in &tickets {
        let parts: TicketParts = packed::read_detail(ticket)?;
        let tenders: Vec<TicketTender<'_>> = parts
            .tenders
            .iter()
            .map(|t| TicketTender {
                method: &t.method,
                applied_cents: t.applied_cents,
                forfeited_cents: t.forfeited_cents,
            })
            .collect();
        let too_large = || {
            StoreError::Corrupt(format!(
                "the tickets of {register_id} on {date} pass the largest amount"
            ))
        };
        figures.add(&parts.vat, &tenders).map_err(|_| too_large())?;
        if ticket.try_get::<i64>("invoiced")? == 1 {
            invoiced.add(&parts.vat, &tenders).map_err(|_| too_large())?;
        }
    }
    let day = ClosedDay {
        store_id: row.try_get("store_id")?,
        date,
        closed_on: from_micros(closed_at).to_zoned(zone).date(),
        closure_seq: row.try_get("closure_seq")?,
        sealed_vat,
        tickets: figures,
        invoiced,
        register_id,
    };
    Ok((day, row.try_get("siret")?))
}
