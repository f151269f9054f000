//! Session reports (Z): what was booked on a shift, per tender method and VAT rate, sealed in
//! the register's closure chain.

use crate::error::StoreError;
use crate::journal;
use crate::sessions::SessionRecord;
use serde_json::{Value, json};
use sqlx::{AnyConnection, Row};
use till_core::fiscal::{ChainKind, FiscalKey, ShiftClosureFields, shift_closure_payload};
use till_core::instant::{format_utc, from_micros};
use till_core::money::{Cents, VatRate};
use till_core::pricing::VatTotal;

/// Computes the Z report of `session` closing at `now`, seals it, and returns it with its seal.
pub(crate) async fn seal_z_report(
    conn: &mut AnyConnection,
    session: &SessionRecord,
    now: i64,
    key: &FiscalKey,
) -> Result<(Value, i64), StoreError> {
    let totals = sqlx::query(
        "SELECT COUNT(*) AS sales, COALESCE(CAST(SUM(total_cents) AS BIGINT), 0) AS total \
         FROM sales WHERE session_id = $1",
    )
    .bind(session.session_id.as_str())
    .fetch_one(&mut *conn)
    .await?;
    let sales_count: i64 = totals.try_get("sales")?;
    let total = cents(totals.try_get("total")?)?;

    let tender_rows = sqlx::query(
        "SELECT t.method, CAST(SUM(t.applied_cents) AS BIGINT) AS applied, \
                CAST(SUM(t.forfeited_cents) AS BIGINT) AS forfeited \
         FROM sale_tenders t JOIN sales s ON s.transaction_id = t.transaction_id \
         WHERE s.session_id = $1 GROUP BY t.method ORDER BY t.method",
    )
    .bind(session.session_id.as_str())
    .fetch_all(&mut *conn)
    .await?;
    let mut tenders = Vec::with_capacity(tender_rows.len());
    let mut cash_kept = 0i64;
    for row in &tender_rows {
        let method: String = row.try_get("method")?;
        let applied: i64 = row.try_get("applied")?;
        if method == "cash" {
            // The drawer keeps what was presented minus the change: applied plus forfeited.
            cash_kept = applied.saturating_add(row.try_get("forfeited")?);
        }
        tenders.push(json!({"method": method, "appliedCents": applied}));
    }

    let vat_rows = sqlx::query(
        "SELECT v.vat_rate, CAST(SUM(v.total_cents) AS BIGINT) AS total, CAST(SUM(v.vat_cents) AS BIGINT) AS vat \
         FROM sale_vat v JOIN sales s ON s.transaction_id = v.transaction_id \
         WHERE s.session_id = $1 GROUP BY v.vat_rate ORDER BY v.vat_rate DESC",
    )
    .bind(session.session_id.as_str())
    .fetch_all(&mut *conn)
    .await?;
    let mut vat = Vec::with_capacity(vat_rows.len());
    for row in &vat_rows {
        let rate: i64 = row.try_get("vat_rate")?;
        vat.push(VatTotal {
            rate: VatRate::from_hundredths(rate).ok_or_else(|| StoreError::Corrupt(format!("VAT rate {rate}")))?,
            total: cents(row.try_get("total")?)?,
            vat: cents(row.try_get("vat")?)?,
        });
    }

    let closed_at = from_micros(now);
    let sealed = journal::append(
        conn,
        session.register_id.as_str(),
        ChainKind::Closure,
        session.session_id.as_str(),
        now,
        key,
        |seq, previous| {
            shift_closure_payload(&ShiftClosureFields {
                vat: &vat,
                total,
                sales_count,
                at: closed_at,
                register_id: session.register_id.as_str(),
                seq,
                session_id: session.session_id.as_str(),
                opened_at: session.opened_at,
                previous_signature: previous,
            })
        },
    )
    .await?;
    let report = json!({
        "sessionId": session.session_id,
        "storeId": session.store_id,
        "registerId": session.register_id,
        "cashierSubject": session.cashier_subject,
        "openedAt": format_utc(session.opened_at),
        "closedAt": format_utc(closed_at),
        "openingFloatCents": session.opening_float,
        "salesCount": sales_count,
        "totalCents": total,
        "tenders": tenders,
        "vat": vat.iter().map(|v| json!({"vatRate": v.rate.as_json_number(), "totalCents": v.total, "vatCents": v.vat})).collect::<Vec<_>>(),
        "expectedCashCents": session.opening_float.get().saturating_add(cash_kept),
        "fiscal": {"chain": "closure", "seq": sealed.seq, "signature": sealed.signature, "keyId": key.key_id()},
    });
    Ok((report, sealed.seq))
}

fn cents(value: i64) -> Result<Cents, StoreError> {
    Cents::new(value).ok_or_else(|| StoreError::Corrupt(format!("amount {value} out of range")))
}
