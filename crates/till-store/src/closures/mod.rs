//! Period closures of a register: day, month and year, each sealed in the register's closure
//! chain with its VAT breakdown, its total, the perpetual grand totals and the first and last
//! ticket it covers (the last one's signature anchors the end of the ticket chain).
//!
//! Days are the store's, in its time zone. A day closes by itself at the first write to the
//! register's journal after its midnight (a sale, a session opened or closed); a month and a
//! year close the same way once a later one has begun. The back office may close the current
//! day, month or year early, once no session of the register is open; no sale is then booked
//! into that period, and no session opens in it.

use crate::batch::Batch;
use crate::error::{Rule, StoreError};
use crate::feed::{self, NewEvent};
use crate::journal::{self, OpenDay, jet};
use crate::late_sales::{self, TicketRange};
use crate::sale_detail::{self, Sales};
use crate::sealer::Sealer;
use crate::sql::{Conn, Row, query};
use jiff::civil::Date;
use jiff::tz::TimeZone;
use till_core::documents::PeriodClosed;
use till_core::events::EventType;
use till_core::fiscal::ChainKind;
use till_core::fiscal::payload::{self, ClosureRecord, LateTickets, Period};
use till_core::instant::from_micros;
use till_core::period::{self, Due, Standing};
use till_core::store::Timezone;

/// The columns [`closure_from_row`] reads, with the closure's sequence.
macro_rules! closure_columns {
    () => {
        "closure_seq, register_id, period, period_from, period_to, ticket_count, first_ticket_seq, \
         last_ticket_seq, last_ticket_signature, total_cents, abs_total_cents, grand_total_cents, \
         grand_total_abs_cents, vat, closed_at, late_count, late_total_cents"
    };
}

/// The columns [`closure_from_row`] reads, with the closure's sequence.
pub(crate) const COLUMNS: &str = closure_columns!();

/// The columns of a closure, filtered by `$filter` (with `$1` the register).
macro_rules! closure_select {
    ($filter:literal) => {
        concat!(
            "SELECT ",
            closure_columns!(),
            " FROM fiscal_closures WHERE register_id = $1 AND ",
            $filter,
            " ORDER BY closure_seq"
        )
    };
}

mod early;
pub use early::{CloseRequest, ClosedDay};
pub use till_app::storage::fiscal::SealedClosure;

/// Where a register's periods stand.
struct Periods {
    timezone: TimeZone,
    timezone_name: String,
    open_day: Option<String>,
    last_day: Option<String>,
    last_month: Option<String>,
    last_year: Option<String>,
    closed_through: Option<String>,
}

/// The register's local day as a ticket finds it, after the periods that ended were closed.
pub(crate) struct Today {
    pub date: Date,
    zone: TimeZone,
    zone_name: String,
    /// The register has tickets on this day already.
    marked: bool,
    /// Closed early through this day (`POST .../closures`).
    closed_through: Option<String>,
}

impl Today {
    /// The day through which the register was closed early, when today is in that period.
    pub(crate) fn closed_early(&self) -> Option<&str> {
        period::closed_early(&self.date.to_string(), self.closed_through.as_deref())
    }

    /// Refuses a ticket in a period closed early.
    pub(crate) fn ensure_open(&self, register_id: &str) -> Result<(), StoreError> {
        match self.closed_early() {
            Some(through) => Err(StoreError::Rule(Rule::PeriodClosed {
                register_id: register_id.to_owned(),
                through: through.to_owned(),
            })),
            None => Ok(()),
        }
    }

    /// The day as a ticket just committed on it leaves it: marked and open for more.
    pub(crate) fn open_day(&self) -> OpenDay {
        OpenDay {
            zone: self.zone.clone(),
            zone_name: self.zone_name.clone(),
            date: self.date,
        }
    }
}

async fn periods(conn: &mut Conn, register_id: &str) -> Result<Periods, StoreError> {
    let row = query(
        "SELECT r.register_id, r.open_day, r.last_day_closed, r.last_month_closed, r.last_year_closed, \
             r.closed_through, s.timezone \
         FROM registers r LEFT JOIN stores s ON s.store_id = r.store_id WHERE r.register_id = $1",
    )
    .bind(register_id)
    .fetch_optional(&mut *conn)
    .await?;
    Periods::from_row(row.as_ref(), register_id)
}

impl Periods {
    fn from_row(row: Option<&Row>, register_id: &str) -> Result<Periods, StoreError> {
        let known: Option<String> = match row {
            Some(row) => row.try_get("register_id")?,
            None => None,
        };
        let (Some(row), Some(_)) = (row, known) else {
            return Err(StoreError::Corrupt(format!("register {register_id} has no record")));
        };
        let timezone: Option<String> = row.try_get("timezone")?;
        let timezone = Timezone::from_trusted(timezone.unwrap_or_else(|| Timezone::DEFAULT.to_owned()));
        Ok(Periods {
            timezone: timezone.zone(),
            timezone_name: timezone.as_str().to_owned(),
            open_day: row.try_get("open_day")?,
            last_day: row.try_get("last_day_closed")?,
            last_month: row.try_get("last_month_closed")?,
            last_year: row.try_get("last_year_closed")?,
            closed_through: row.try_get("closed_through")?,
        })
    }

    fn standing(&self) -> Standing<'_> {
        Standing {
            open_day: self.open_day.as_deref(),
            last_day: self.last_day.as_deref(),
            last_month: self.last_month.as_deref(),
            last_year: self.last_year.as_deref(),
        }
    }
}

fn local_day(timezone: &TimeZone, now: i64) -> Date {
    from_micros(now).to_zoned(timezone.clone()).date()
}

impl Today {
    fn of(state: &Periods, now: i64) -> Today {
        let date = local_day(&state.timezone, now);
        Today {
            marked: state.open_day.as_deref() == Some(date.to_string().as_str()),
            closed_through: state.closed_through.clone(),
            date,
            zone: state.timezone.clone(),
            zone_name: state.timezone_name.clone(),
        }
    }
}

/// The register's local day at `now`, as it stands (nothing is closed).
pub(crate) async fn today(conn: &mut Conn, register_id: &str, now: i64) -> Result<Today, StoreError> {
    Ok(Today::of(&periods(conn, register_id).await?, now))
}

/// Closes whatever periods ended before `now`, then answers the register's local day. In the
/// common case (nothing to close) this is one read.
pub(crate) async fn close_due(conn: &mut Conn, register_id: &str, now: i64, key: &Sealer) -> Result<Today, StoreError> {
    let state = periods(conn, register_id).await?;
    close(conn, register_id, &state, now, key).await
}

/// [`close_due`], then the next place of the register's `kind` chain: the closures seal the
/// chain's last entry as it stood before the ticket.
///
/// The head is claimed first and the periods read after it, in a statement of their own: the
/// claim's row lock orders this ticket after every writer of the chain (a sale, a day closed
/// early, a session's close), and only a statement begun once it is held sees what they
/// committed. A claim made too early (periods to close) is given back and made again.
pub(crate) async fn close_due_then_reserve(
    conn: &mut Conn,
    register_id: &str,
    kind: ChainKind,
    now: i64,
    key: &Sealer,
) -> Result<(Today, journal::Place), StoreError> {
    let place = journal::reserve(conn, register_id, kind).await?;
    let state = periods(conn, register_id).await?;
    let today = Today::of(&state, now);
    if Due::of(state.standing(), &today.date.to_string()).is_empty() {
        return Ok((today, place));
    }
    journal::unreserve(conn, register_id, kind).await?;
    let today = close(conn, register_id, &state, now, key).await?;
    let place = journal::reserve(conn, register_id, kind).await?;
    Ok((today, place))
}

async fn close(
    conn: &mut Conn,
    register_id: &str,
    state: &Periods,
    now: i64,
    key: &Sealer,
) -> Result<Today, StoreError> {
    let today = Today::of(state, now);
    let due = Due::of(state.standing(), &today.date.to_string());
    if let Some(day) = &due.day {
        close_day(conn, register_id, day, now, key).await?;
    }
    if let Some(month) = &due.month {
        close_month(conn, register_id, month, now, key).await?;
    }
    if let Some(year) = &due.year {
        close_year(conn, register_id, year, now, key).await?;
    }
    Ok(today)
}

/// Notes that the register has tickets on `today` not yet closed (once a day).
pub(crate) fn mark_open_day(batch: &mut Batch, register_id: &str, today: &Today) {
    if !today.marked {
        batch.push(
            "UPDATE registers SET open_day = $2 WHERE register_id = $1 AND open_day IS NULL",
            vec![register_id.into(), today.date.to_string().into()],
        );
    }
}

/// The latest day closure's anchor and grand totals: where the next day starts.
async fn previous_day(conn: &mut Conn, register_id: &str) -> Result<(i64, i64, i64), StoreError> {
    let row = query(
        "SELECT last_ticket_seq, grand_total_cents, grand_total_abs_cents FROM fiscal_closures \
         WHERE register_id = $1 AND period = 'DAY' AND ticket_count > 0 ORDER BY closure_seq DESC LIMIT 1",
    )
    .bind(register_id)
    .fetch_optional(&mut *conn)
    .await?;
    let grand = query(
        "SELECT grand_total_cents, grand_total_abs_cents FROM fiscal_closures \
         WHERE register_id = $1 AND period = 'DAY' ORDER BY closure_seq DESC LIMIT 1",
    )
    .bind(register_id)
    .fetch_optional(&mut *conn)
    .await?;
    let last_ticket = match row {
        Some(row) => row.try_get("last_ticket_seq")?,
        None => 0,
    };
    match grand {
        Some(row) => Ok((
            last_ticket,
            row.try_get("grand_total_cents")?,
            row.try_get("grand_total_abs_cents")?,
        )),
        None => Ok((last_ticket, 0, 0)),
    }
}

async fn close_day(
    conn: &mut Conn,
    register_id: &str,
    day: &str,
    now: i64,
    key: &Sealer,
) -> Result<ClosureRecord, StoreError> {
    let (previous_last, grand, grand_abs) = previous_day(conn, register_id).await?;
    let head = query("SELECT last_seq, last_signature FROM fiscal_heads WHERE register_id = $1 AND kind = 'ticket'")
        .bind(register_id)
        .fetch_optional(&mut *conn)
        .await?;
    let (head_seq, head_signature): (i64, Option<String>) = match head {
        Some(row) => (row.try_get("last_seq")?, row.try_get("last_signature")?),
        None => (0, None),
    };
    let tickets = Sales::Tickets {
        register_id,
        after: previous_last,
        through: head_seq,
    };
    let totals = tickets
        .bind(query(format!(
            "SELECT COUNT(*) AS tickets, COALESCE(CAST(SUM(s.total_cents) AS BIGINT), 0) AS total, \
                 COALESCE(CAST(SUM(ABS(s.total_cents)) AS BIGINT), 0) AS magnitude \
             FROM sales s WHERE {}",
            tickets.clause()
        )))
        .fetch_one(&mut *conn)
        .await?;
    let count: i64 = totals.try_get("tickets")?;
    let total: i64 = totals.try_get("total")?;
    let magnitude: i64 = totals.try_get("magnitude")?;
    let vat = sale_detail::vat_by_rate(conn, tickets).await?;
    let late = late_sales::tickets(
        conn,
        register_id,
        TicketRange {
            after: previous_last,
            through: head_seq,
        },
    )
    .await?;
    let record = ClosureRecord {
        register_id: register_id.to_owned(),
        period: Period::Day,
        period_from: day.to_owned(),
        period_to: day.to_owned(),
        ticket_count: count,
        first_ticket_seq: if count > 0 { previous_last + 1 } else { 0 },
        last_ticket_seq: if count > 0 { head_seq } else { 0 },
        last_ticket_signature: if count > 0 { head_signature } else { None },
        total_cents: total,
        abs_total_cents: magnitude,
        grand_total_cents: grand.saturating_add(total),
        grand_total_abs_cents: grand_abs.saturating_add(magnitude),
        vat,
        closed_at: now,
        late: late.some(),
    };
    seal(conn, record, now, key).await
}

/// Aggregates the closures of `period_below` whose period starts with `prefix`.
async fn aggregate(
    conn: &mut Conn,
    register_id: &str,
    below: Period,
    prefix: &str,
) -> Result<Vec<ClosureRecord>, StoreError> {
    let rows = query(closure_select!("period = $2 AND period_from LIKE $3"))
        .bind(register_id)
        .bind(below.as_str())
        .bind(format!("{prefix}%"))
        .fetch_all(&mut *conn)
        .await?;
    rows.iter().map(closure_from_row).collect()
}

async fn close_month(
    conn: &mut Conn,
    register_id: &str,
    month: &str,
    now: i64,
    key: &Sealer,
) -> Result<ClosureRecord, StoreError> {
    let days = aggregate(conn, register_id, Period::Day, month).await?;
    let first = Date::strptime("%Y-%m-%d", format!("{month}-01")).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let span = (first.to_string(), first.last_of_month().to_string());
    let record = combined(register_id, Period::Month, span, &days, now)?;
    seal(conn, record, now, key).await
}

async fn close_year(
    conn: &mut Conn,
    register_id: &str,
    year: &str,
    now: i64,
    key: &Sealer,
) -> Result<ClosureRecord, StoreError> {
    let months = aggregate(conn, register_id, Period::Month, year).await?;
    let span = (format!("{year}-01-01"), format!("{year}-12-31"));
    let record = combined(register_id, Period::Year, span, &months, now)?;
    seal(conn, record, now, key).await
}

/// [`period::combine`], of closures stored beneath it.
fn combined(
    register_id: &str,
    period: Period,
    (from, to): (String, String),
    parts: &[ClosureRecord],
    now: i64,
) -> Result<ClosureRecord, StoreError> {
    period::combine(register_id, period, from, to, parts, now)
        .ok_or_else(|| StoreError::Corrupt(format!("no period under the {} closure", period.as_str())))
}

/// Appends the closure to the chain, stores its record, records the event, moves the state.
async fn seal(conn: &mut Conn, record: ClosureRecord, now: i64, key: &Sealer) -> Result<ClosureRecord, StoreError> {
    let register_id = record.register_id.clone();
    let reference = format!("{} {}", record.period.as_str(), record.period_from);
    let sealed = journal::append(
        conn,
        &register_id,
        ChainKind::Closure,
        &reference,
        now,
        key,
        |seq, previous| payload::period_closure(&record, seq, previous),
    )
    .await?;
    let vat = serde_json::to_string(&record.vat).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    query(
        "INSERT INTO fiscal_closures (register_id, closure_seq, period, period_from, period_to, ticket_count, \
             first_ticket_seq, last_ticket_seq, last_ticket_signature, total_cents, abs_total_cents, \
             grand_total_cents, grand_total_abs_cents, vat, closed_at, late_count, late_total_cents) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
    )
    .bind(&register_id)
    .bind(sealed.seq)
    .bind(record.period.as_str())
    .bind(&record.period_from)
    .bind(&record.period_to)
    .bind(record.ticket_count)
    .bind(record.first_ticket_seq)
    .bind(record.last_ticket_seq)
    .bind(record.last_ticket_signature.as_deref())
    .bind(record.total_cents)
    .bind(record.abs_total_cents)
    .bind(record.grand_total_cents)
    .bind(record.grand_total_abs_cents)
    .bind(vat)
    .bind(record.closed_at)
    .bind(record.late.map(|late| late.sales_count))
    .bind(record.late.map(|late| late.total_cents))
    .execute(&mut *conn)
    .await?;
    let state = match record.period {
        Period::Day => "UPDATE registers SET last_day_closed = $2, open_day = NULL WHERE register_id = $1",
        Period::Month => "UPDATE registers SET last_month_closed = $2 WHERE register_id = $1",
        Period::Year => "UPDATE registers SET last_year_closed = $2 WHERE register_id = $1",
    };
    let marker = match record.period {
        Period::Day => record.period_from.clone(),
        Period::Month => record.period_from[..7].to_owned(),
        Period::Year => record.period_from[..4].to_owned(),
    };
    query(state).bind(&register_id).bind(marker).execute(&mut *conn).await?;
    let closed = jet::closure(record.period, &reference);
    journal::append_event(conn, &register_id, closed.event, &closed.detail, now, key).await?;
    let store: Option<String> = query("SELECT store_id FROM registers WHERE register_id = $1")
        .bind(&register_id)
        .fetch_optional(&mut *conn)
        .await?
        .map(|row| row.try_get("store_id"))
        .transpose()?;
    NewEvent {
        kind: EventType::PeriodClosed,
        occurred_at: now,
        store_id: store.as_deref(),
        register_id: Some(&register_id),
        subject: &reference,
        data: Some(feed::data_of(&PeriodClosed::of(&record, sealed.seq))?),
    }
    .record(conn)
    .await?;
    Ok(record)
}

pub(crate) fn closure_from_row(row: &Row) -> Result<ClosureRecord, StoreError> {
    let period: String = row.try_get("period")?;
    let vat: String = row.try_get("vat")?;
    Ok(ClosureRecord {
        register_id: row.try_get("register_id")?,
        period: Period::parse(&period).ok_or_else(|| StoreError::Corrupt(format!("period {period}")))?,
        period_from: row.try_get("period_from")?,
        period_to: row.try_get("period_to")?,
        ticket_count: row.try_get("ticket_count")?,
        first_ticket_seq: row.try_get("first_ticket_seq")?,
        last_ticket_seq: row.try_get("last_ticket_seq")?,
        last_ticket_signature: row.try_get("last_ticket_signature")?,
        total_cents: row.try_get("total_cents")?,
        abs_total_cents: row.try_get("abs_total_cents")?,
        grand_total_cents: row.try_get("grand_total_cents")?,
        grand_total_abs_cents: row.try_get("grand_total_abs_cents")?,
        vat: serde_json::from_str(&vat).map_err(|e| StoreError::Corrupt(format!("closure VAT: {e}")))?,
        closed_at: row.try_get("closed_at")?,
        late: match (row.try_get("late_count")?, row.try_get("late_total_cents")?) {
            (Some(sales_count), Some(total_cents)) => Some(LateTickets {
                sales_count,
                total_cents,
            }),
            _ => None,
        },
    })
}

fn sealed_from_row(row: &Row) -> Result<SealedClosure, StoreError> {
    Ok(SealedClosure {
        seq: row.try_get("closure_seq")?,
        record: closure_from_row(row)?,
    })
}
