//! Turns of the jobs that run on one node at a time (customer retention, the orphan sweep):
//! a one-row table per job names the node holding its turn and until when.

use crate::db::Store;
use crate::error::StoreError;
use crate::sql::query;
use jiff::Timestamp;
use till_core::instant::to_micros;

/// The tables of the turns, each `(singleton, holder, held_until)`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Turn {
    CustomerRetention,
    PaymentOrphanSweep,
}

impl Turn {
    fn table(self) -> &'static str {
        match self {
            Turn::CustomerRetention => "customer_retention_lease",
            Turn::PaymentOrphanSweep => "payment_orphan_lease",
        }
    }
}

impl Store {
    /// Takes `turn` for `holder` until `until` when nobody holds it at `now`.
    pub(crate) async fn claim_turn(
        &self,
        turn: Turn,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool, StoreError> {
        let table = turn.table();
        // Most looks find the turn taken: a read answers them without the writer.
        let held = query(format!("SELECT held_until FROM {table} WHERE singleton = 1"))
            .fetch_optional(self.reader())
            .await?;
        if let Some(held) = held
            && held.try_get::<i64>("held_until")? > to_micros(now)
        {
            return Ok(false);
        }
        self.write(
            (table, holder.to_owned(), to_micros(now), to_micros(until)),
            |c, (table, holder, now, until)| {
                Box::pin(async move {
                    let claimed = query(format!(
                        "INSERT INTO {table} (singleton, holder, held_until) VALUES (1, $1, $2) \
                         ON CONFLICT (singleton) DO UPDATE SET holder = excluded.holder, held_until = excluded.held_until \
                         WHERE {table}.held_until <= $3 RETURNING holder"
                    ))
                    .bind(holder.as_str())
                    .bind(*until)
                    .bind(*now)
                    .fetch_optional(&mut *c)
                    .await?;
                    Ok(claimed.is_some())
                })
            },
        )
        .await
    }
}
