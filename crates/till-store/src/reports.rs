//! Session reports: the X report of a shift while it runs and its Z report at the close, one
//! function of the same figures ([`till_core::drawer::shift_report`]) written as one document
//! of till-core ([`XReport`], [`ZReport`]). The Z is sealed in the register's closure chain with what
//! the cashier counted.

use crate::drawer::shift_figures;
use crate::error::StoreError;
use crate::journal;
use crate::late_sales::{self, TicketRange};
use crate::payments::{self, ShiftCards};
use crate::sealer::Sealer;
use crate::sessions::SessionRecord;
use crate::sql::{Conn, query};
use jiff::Timestamp;
use till_core::documents::{ClosureSeal, ShiftOf, XReport, ZReport};
use till_core::drawer::{Count, ShiftReport, shift_report};
use till_core::fiscal::ChainKind;
use till_core::fiscal::payload::{self, ShiftRecord};
use till_core::instant::{from_micros, to_micros};
use till_core::money::Cents;

/// What a closed shift's closure sealed, computed again from the stored sales, movements and
/// counts: the audit compares it with the signed entry.
pub(crate) async fn shift_record(
    conn: &mut Conn,
    session: &SessionRecord,
    closed_at: i64,
) -> Result<ShiftRecord, StoreError> {
    let late = late_sales::reported(conn, session.session_id.as_str()).await?;
    let figures = shift_figures(conn, session, late, ShiftCards::AsClosed).await?;
    let counts = stored_counts(conn, session).await?;
    let report = shift_report(&figures, &counts).map_err(|_| overflow(session))?;
    Ok(record_of(session, &report, closed_at))
}

/// A Z report sealed: the report as answered, its place in the closure chain, and the
/// register's tickets whose late sales it shows apart.
pub(crate) struct SealedZ {
    pub(crate) report: ZReport,
    pub(crate) closure_seq: i64,
    pub(crate) late: TicketRange,
}

/// Computes the Z report of `session` closing at `now` with what was `counted`, and the late
/// sales of its register not shown in an earlier report; records the counts and seals the
/// report. The caller holds the register's ticket chain.
pub(crate) async fn seal_z_report(
    conn: &mut Conn,
    session: &SessionRecord,
    now: i64,
    counted: &[Count],
    key: &Sealer,
) -> Result<SealedZ, StoreError> {
    let late = late_sales::unreported(conn, session.register_id.as_str()).await?;
    payments::keep_for_close(conn, session.session_id.as_str()).await?;
    let figures = shift_figures(conn, session, Some(late), ShiftCards::AsClosed).await?;
    let report = shift_report(&figures, counted).map_err(|_| overflow(session))?;
    for count in counted {
        query("INSERT INTO session_counts (session_id, method, counted_cents) VALUES ($1, $2, $3)")
            .bind(session.session_id.as_str())
            .bind(count.method.as_str())
            .bind(count.counted.get())
            .execute(&mut *conn)
            .await?;
    }
    let record = record_of(session, &report, now);
    let register_id = session.register_id.as_str();
    let sealed = journal::append(
        conn,
        register_id,
        ChainKind::Closure,
        session.session_id.as_str(),
        now,
        key,
        |seq, previous| payload::shift_closure(&record, seq, previous),
    )
    .await?;
    let seal = ClosureSeal {
        chain: "closure".to_owned(),
        seq: sealed.seq,
        signature: sealed.signature,
        key_id: key.key_id().to_owned(),
    };
    Ok(SealedZ {
        report: ZReport::of(shift_of(session), &report, from_micros(now), seal),
        closure_seq: sealed.seq,
        late,
    })
}

/// Whose shift `session` is, as its reports name it.
fn shift_of(session: &SessionRecord) -> ShiftOf<'_> {
    ShiftOf {
        session_id: &session.session_id,
        store_id: &session.store_id,
        register_id: &session.register_id,
        cashier_subject: &session.cashier_subject,
        opened_at: session.opened_at,
        opening_float: session.opening_float,
    }
}

/// The X report of `session` with `figures` as they stand at `at`.
pub fn x_report(
    session: &SessionRecord,
    figures: &till_core::drawer::ShiftFigures,
    at: Timestamp,
) -> Result<XReport, StoreError> {
    let report = shift_report(figures, &[]).map_err(|_| overflow(session))?;
    Ok(XReport::of(shift_of(session), &report, at))
}

fn record_of(session: &SessionRecord, report: &ShiftReport, closed_at: i64) -> ShiftRecord {
    ShiftRecord {
        session_id: session.session_id.as_str().to_owned(),
        register_id: session.register_id.as_str().to_owned(),
        opened_at: to_micros(session.opened_at),
        closed_at,
        sales_count: report.sales_count,
        total_cents: report.total.get(),
        vat: report.vat.clone(),
        counts: report.sealed_counts(),
        late: report.late.as_ref().and_then(|late| late.sealed()),
        card_payments: report.card_payments(),
    }
}

async fn stored_counts(conn: &mut Conn, session: &SessionRecord) -> Result<Vec<Count>, StoreError> {
    let rows = query("SELECT method, counted_cents FROM session_counts WHERE session_id = $1 ORDER BY method")
        .bind(session.session_id.as_str())
        .fetch_all(&mut *conn)
        .await?;
    rows.iter()
        .map(|row| {
            Ok(Count {
                method: row.try_get("method")?,
                counted: Cents::new(row.try_get("counted_cents")?).ok_or_else(|| overflow(session))?,
            })
        })
        .collect()
}

fn overflow(session: &SessionRecord) -> StoreError {
    StoreError::Corrupt(format!(
        "session {} adds up past the largest amount",
        session.session_id.as_str()
    ))
}
