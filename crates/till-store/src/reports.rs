//! Session reports (Z): what was booked on a shift, per tender method and VAT rate, sealed in
//! the register's closure chain.

use crate::error::StoreError;
use crate::journal;
use crate::sale_detail::{self, Sales};
use crate::sealer::Sealer;
use crate::sessions::SessionRecord;
use crate::sql::{Conn, query};
use serde_json::{Value, json};
use till_core::fiscal::ChainKind;
use till_core::fiscal::payload::{self, ShiftRecord};
use till_core::instant::{format_utc, from_micros, to_micros};

/// What a shift sealed: its sales, their total and VAT, recomputed from the sales themselves.
pub(crate) async fn shift_record(
    conn: &mut Conn,
    session_id: &str,
    register_id: &str,
    opened_at: i64,
    closed_at: i64,
) -> Result<ShiftRecord, StoreError> {
    let totals = query(
        "SELECT COUNT(*) AS sales, COALESCE(CAST(SUM(total_cents) AS BIGINT), 0) AS total \
         FROM sales WHERE session_id = $1",
    )
    .bind(session_id)
    .fetch_one(&mut *conn)
    .await?;
    let vat = sale_detail::vat_by_rate(conn, Sales::Session(session_id)).await?;
    Ok(ShiftRecord {
        session_id: session_id.to_owned(),
        register_id: register_id.to_owned(),
        opened_at,
        closed_at,
        sales_count: totals.try_get("sales")?,
        total_cents: totals.try_get("total")?,
        vat,
    })
}

/// Computes the Z report of `session` closing at `now`, seals it, and returns it with its seal.
pub(crate) async fn seal_z_report(
    conn: &mut Conn,
    session: &SessionRecord,
    now: i64,
    key: &Sealer,
) -> Result<(Value, i64), StoreError> {
    let (session_id, register_id) = (session.session_id.as_str(), session.register_id.as_str());
    let record = shift_record(conn, session_id, register_id, to_micros(session.opened_at), now).await?;
    let by_method = sale_detail::tenders_by_method(conn, Sales::Session(session_id)).await?;
    let mut tenders = Vec::with_capacity(by_method.len());
    let mut cash_kept = 0i64;
    for (method, applied, forfeited) in by_method {
        if method == "cash" {
            // The drawer keeps what was presented minus the change: applied plus forfeited.
            cash_kept = applied.saturating_add(forfeited);
        }
        tenders.push(json!({"method": method, "appliedCents": applied}));
    }
    let sealed = journal::append(
        conn,
        register_id,
        ChainKind::Closure,
        session_id,
        now,
        key,
        |seq, previous| payload::shift_closure(&record, seq, previous),
    )
    .await?;
    let vat: Vec<Value> = record
        .vat
        .iter()
        .map(|v| {
            let rate = till_core::money::VatRate::from_hundredths(v.vat_rate).map(|r| r.as_json_number());
            json!({"vatRate": rate, "totalCents": v.total_cents, "vatCents": v.vat_cents})
        })
        .collect();
    let report = json!({
        "sessionId": session.session_id,
        "storeId": session.store_id,
        "registerId": session.register_id,
        "cashierSubject": session.cashier_subject,
        "openedAt": format_utc(session.opened_at),
        "closedAt": format_utc(from_micros(now)),
        "openingFloatCents": session.opening_float,
        "salesCount": record.sales_count,
        "totalCents": record.total_cents,
        "tenders": tenders,
        "vat": vat,
        "expectedCashCents": session.opening_float.get().saturating_add(cash_kept),
        "fiscal": {"chain": "closure", "seq": sealed.seq, "signature": sealed.signature, "keyId": key.key_id()},
    });
    Ok((report, sealed.seq))
}
