//! Closing a register's current day, month or year early from the back office, and reading back
//! its closures and the registers whose day was closed early.

use super::{SealedClosure, close_day, close_due, close_month, close_year, local_day, periods, sealed_from_row};
use crate::db::Store;
use crate::error::{Rule, StoreError};
use crate::journal;
use crate::sealer::Sealer;
use crate::sql::{Conn, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use std::sync::Arc;
pub use till_app::storage::fiscal::{CloseRequest, ClosedDay};
use till_core::fiscal::ChainKind;
use till_core::fiscal::payload::Period;
use till_core::ids::{RegisterId, SessionId, StoreId};
use till_core::instant::to_micros;
use till_core::period::{self, month_of, year_of};
use till_core::store::Timezone;

struct ClosePeriod {
    register_id: String,
    period: Period,
    now: i64,
    key: Arc<Sealer>,
}

impl Store {
    pub async fn close_period(
        &self,
        register_id: &str,
        period: Period,
        now: Timestamp,
    ) -> Result<CloseRequest, StoreError> {
        let input = ClosePeriod {
            register_id: register_id.to_owned(),
            period,
            now: to_micros(now),
            key: self.fiscal_key()?,
        };
        self.write(input, |c, i| Box::pin(close_period(c, i))).await
    }

    pub async fn closed_days(&self, store_id: Option<&StoreId>, now: Timestamp) -> Result<Vec<ClosedDay>, StoreError> {
        // No time zone is a day behind UTC: a register closed through an earlier day is open.
        let utc_day = now.to_zoned(TimeZone::UTC).date();
        let earliest = utc_day.yesterday().unwrap_or(utc_day).to_string();
        let select = "SELECT r.register_id, r.closed_through, s.timezone \
             FROM registers r LEFT JOIN stores s ON s.store_id = r.store_id WHERE r.closed_through >= $1";
        let rows = match store_id {
            Some(store_id) => query(format!("{select} AND r.store_id = $2 ORDER BY r.register_id"))
                .bind(earliest)
                .bind(store_id.as_str()),
            None => query(format!("{select} ORDER BY r.register_id")).bind(earliest),
        }
        .fetch_all(self.reader())
        .await?;
        let mut closed = Vec::new();
        for row in rows {
            let timezone: Option<String> = row.try_get("timezone")?;
            let zone = Timezone::from_trusted(timezone.unwrap_or_else(|| Timezone::DEFAULT.to_owned())).zone();
            let day = local_day(&zone, to_micros(now)).to_string();
            let through: Option<String> = row.try_get("closed_through")?;
            if let Some(through) = period::closed_early(&day, through.as_deref()) {
                closed.push(ClosedDay {
                    register_id: RegisterId::from_trusted(row.try_get("register_id")?),
                    through: through.to_owned(),
                    day,
                });
            }
        }
        Ok(closed)
    }

    pub async fn closures(&self, register_id: &str) -> Result<Vec<SealedClosure>, StoreError> {
        let rows = query(closure_select!("1 = 1"))
            .bind(register_id)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(sealed_from_row).collect()
    }
}

fn close_period<'a>(conn: &'a mut Conn, input: &'a ClosePeriod) -> BoxFuture<'a, Result<CloseRequest, StoreError>> {
    Box::pin(async move {
        let known = query("SELECT 1 FROM registers WHERE register_id = $1")
            .bind(&input.register_id)
            .fetch_optional(&mut *conn)
            .await?;
        if known.is_none() {
            return Ok(CloseRequest::UnknownRegister);
        }
        let (register, now, key) = (input.register_id.as_str(), input.now, &*input.key);
        // The till's ticket chain first, as a session's close does: a sale committing meanwhile
        // is either in the day closed here or finds the day closed. Then the register's row,
        // which a session's opening takes first: an opening committed meanwhile is seen open
        // below, and one after this finds the day closed.
        journal::hold(conn, register, ChainKind::Ticket).await?;
        query("UPDATE registers SET store_id = store_id WHERE register_id = $1")
            .bind(register)
            .execute(&mut *conn)
            .await?;
        let first_new = next_closure_seq(conn, register).await?;
        let today = close_due(conn, register, now, key).await?;
        let day = today.date.to_string();
        let state = periods(conn, register).await?;
        let already = match input.period {
            Period::Day => state.last_day.as_deref() == Some(day.as_str()),
            Period::Month => state.last_month.as_deref() == Some(month_of(&day)),
            Period::Year => state.last_year.as_deref() == Some(year_of(&day)),
        };
        if already {
            return Ok(CloseRequest::AlreadyClosed);
        }
        if state.last_day.as_deref() != Some(day.as_str()) {
            // The day closed here is the current one, not over: refused while a session is
            // open on it, and then nothing is kept, not even the periods closed above.
            let open = open_session(conn, register, now).await?;
            period::may_close_day(&day, &day, open.as_ref()).map_err(|refused| {
                StoreError::Rule(Rule::SessionOpenOnDay {
                    register_id: register.to_owned(),
                    day: day.clone(),
                    session: refused.session,
                })
            })?;
            close_day(conn, register, &day, now, key).await?;
        }
        let through = match input.period {
            Period::Day => day.clone(),
            Period::Month | Period::Year => {
                if state.last_month.as_deref() != Some(month_of(&day)) {
                    close_month(conn, register, month_of(&day), now, key).await?;
                }
                if input.period == Period::Year {
                    close_year(conn, register, year_of(&day), now, key).await?;
                    format!("{}-12-31", year_of(&day))
                } else {
                    today.date.last_of_month().to_string()
                }
            }
        };
        query(
            "UPDATE registers SET closed_through = $2 WHERE register_id = $1 AND (closed_through IS NULL OR closed_through < $2)",
        )
        .bind(register)
        .bind(through)
        .execute(&mut *conn)
        .await?;
        let rows = query(closure_select!("closure_seq >= $2"))
            .bind(register)
            .bind(first_new)
            .fetch_all(&mut *conn)
            .await?;
        let sealed = rows.iter().map(sealed_from_row).collect::<Result<_, StoreError>>()?;
        Ok(CloseRequest::Closed(sealed))
    })
}

/// The register's session open at `now`, if any.
async fn open_session(conn: &mut Conn, register_id: &str, now: i64) -> Result<Option<SessionId>, StoreError> {
    let row = query(
        "SELECT session_id FROM register_sessions WHERE register_id = $1 AND closed_at IS NULL AND expires_at > $2",
    )
    .bind(register_id)
    .bind(now)
    .fetch_optional(&mut *conn)
    .await?;
    row.map(|row| Ok(SessionId::from_trusted(row.try_get("session_id")?)))
        .transpose()
}

async fn next_closure_seq(conn: &mut Conn, register_id: &str) -> Result<i64, StoreError> {
    let row = query("SELECT last_seq FROM fiscal_heads WHERE register_id = $1 AND kind = 'closure'")
        .bind(register_id)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(match row {
        Some(row) => row.try_get::<i64>("last_seq")? + 1,
        None => 1,
    })
}
