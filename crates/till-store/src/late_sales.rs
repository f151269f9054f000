//! Late sales (docs/offline.md): sales that reach the server after their session was
//! closed, from a till that was offline. Each is sealed at its arrival in its register's ticket
//! chain, marked late, and kept out of its session's totals, which its Z report sealed at the
//! close. They are shown apart instead: in the next shift report of the register (the late
//! sales sealed since the previous one) and in the closure of the day that received them.
//! Ranges of a register's ticket chain say which: the chain orders every ticket of a register,
//! and a close holds the chain, so no late sale falls between two reports.

use crate::drawer::takings;
use crate::error::StoreError;
use crate::sale_detail::Sales;
use crate::sql::{Conn, query};
use till_core::drawer::LateFigures;
use till_core::fiscal::payload::LateTickets;
use till_core::money::Cents;

/// Tickets of a register's chain after `after`, through `through`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TicketRange {
    pub after: i64,
    pub through: i64,
}

/// The tickets whose late sales the register's next shift report shows: after the last one an
/// earlier report covered, through the chain's head now.
pub(crate) async fn unreported(conn: &mut Conn, register_id: &str) -> Result<TicketRange, StoreError> {
    let reported = query(
        "SELECT CAST(COALESCE(MAX(late_through), 0) AS BIGINT) AS through FROM register_sessions \
         WHERE register_id = $1",
    )
    .bind(register_id)
    .fetch_one(&mut *conn)
    .await?;
    let head = query("SELECT last_seq FROM fiscal_heads WHERE register_id = $1 AND kind = 'ticket'")
        .bind(register_id)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(TicketRange {
        after: reported.try_get("through")?,
        through: head.map(|row| row.try_get("last_seq")).transpose()?.unwrap_or(0),
    })
}

/// The tickets a closed session's report covered for late sales; `None` for a session closed
/// before late sales existed.
pub(crate) async fn reported(conn: &mut Conn, session_id: &str) -> Result<Option<TicketRange>, StoreError> {
    let row = query("SELECT late_after, late_through FROM register_sessions WHERE session_id = $1")
        .bind(session_id)
        .fetch_optional(&mut *conn)
        .await?;
    let Some(row) = row else { return Ok(None) };
    let after: Option<i64> = row.try_get("late_after")?;
    let through: Option<i64> = row.try_get("late_through")?;
    Ok(after
        .zip(through)
        .map(|(after, through)| TicketRange { after, through }))
}

/// How many late sales the register's tickets in `range` hold, and their total.
pub(crate) async fn tickets(conn: &mut Conn, register_id: &str, range: TicketRange) -> Result<LateTickets, StoreError> {
    let sales = Sales::Late {
        register_id,
        after: range.after,
        through: range.through,
    };
    let row = sales
        .bind(query(format!(
            "SELECT COUNT(*) AS sales, CAST(COALESCE(SUM(s.total_cents), 0) AS BIGINT) AS total FROM sales s WHERE {}",
            sales.clause()
        )))
        .fetch_one(&mut *conn)
        .await?;
    Ok(LateTickets {
        sales_count: row.try_get("sales")?,
        total_cents: row.try_get("total")?,
    })
}

/// The late sales among the register's tickets in `range`, with what each tender method took.
pub(crate) async fn figures(conn: &mut Conn, register_id: &str, range: TicketRange) -> Result<LateFigures, StoreError> {
    let counted = tickets(conn, register_id, range).await?;
    if counted.sales_count == 0 {
        return Ok(LateFigures::default());
    }
    let sales = Sales::Late {
        register_id,
        after: range.after,
        through: range.through,
    };
    let out_of_range = || {
        StoreError::Corrupt(format!(
            "the late sales of register {register_id} pass the largest amount"
        ))
    };
    Ok(LateFigures {
        sales_count: counted.sales_count,
        total: Cents::new(counted.total_cents).ok_or_else(out_of_range)?,
        takings: takings(conn, sales).await?,
    })
}

/// Whether the register's ticket `seq` is a late sale.
pub(crate) async fn is_late(conn: &mut Conn, register_id: &str, seq: i64) -> Result<bool, StoreError> {
    let row = query("SELECT 1 AS late FROM sales WHERE register_id = $1 AND late = 1 AND fiscal_seq = $2")
        .bind(register_id)
        .bind(seq)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(row.is_some())
}
