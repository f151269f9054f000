//! What migration 0017 leaves to the store: the credit notes issued before codes existed get a
//! code drawn as a gift card's, found by its hash from then on (their number alone no longer
//! finds them), and every gift card and credit note gets the digest sealed records name it by.
//! SQL can do neither: SQLite has no SHA-256 and no generator meant for secrets, and neither
//! engine knows the deployment's key.

use crate::db::Store;
use crate::error::StoreError;
use crate::secrets::random_bytes;
use crate::sql::{Conn, query};
use futures::future::BoxFuture;
use std::sync::Arc;
use till_core::stored_value::{InstrumentCode, InstrumentDigestKey, InstrumentKind};

/// Instruments one transaction of the backfill writes.
const BACKFILL_CHUNK: i64 = 1000;

struct Chunk {
    /// The last instrument of the previous chunk.
    after: i64,
    key: Arc<InstrumentDigestKey>,
}

impl Store {
    /// Gives every instrument without a digest what migration 0017 could not: those written
    /// before it, and those a node of the previous release writes during a rolling deploy.
    /// Several nodes may run it at once: each instrument is written once, by whichever comes
    /// first.
    pub(crate) async fn backfill_instruments(&self) -> Result<(), StoreError> {
        let key = self.instrument_key().await?;
        let mut after = 0;
        loop {
            let chunk = Chunk {
                after,
                key: key.clone(),
            };
            match self.write(chunk, |c, chunk| backfill_chunk(c, chunk)).await? {
                Some(last) => after = last,
                None => return Ok(()),
            }
        }
    }
}

/// Writes the instruments after `chunk.after` that have no digest yet (found by the index of
/// those); answers the last one read, or `None` once there are no more.
fn backfill_chunk<'a>(conn: &'a mut Conn, chunk: &'a Chunk) -> BoxFuture<'a, Result<Option<i64>, StoreError>> {
    Box::pin(async move {
        let rows = query(
            "SELECT instrument_id, kind, lookup FROM stored_value WHERE digest IS NULL AND instrument_id > $1 \
             ORDER BY instrument_id LIMIT $2",
        )
        .bind(chunk.after)
        .bind(BACKFILL_CHUNK)
        .fetch_all(&mut *conn)
        .await?;
        let Some(last) = rows.last() else {
            return Ok(None);
        };
        let last: i64 = last.try_get("instrument_id")?;
        for row in &rows {
            let id: i64 = row.try_get("instrument_id")?;
            let kind: String = row.try_get("kind")?;
            if kind == InstrumentKind::CreditNote.as_str() {
                let code = InstrumentCode::from_random(random_bytes::<16>()?);
                let lookup = code.lookup();
                query(
                    "UPDATE stored_value SET code = $2, lookup = $3, digest = $4 \
                     WHERE instrument_id = $1 AND digest IS NULL",
                )
                .bind(id)
                .bind(code.as_str())
                .bind(lookup.as_str())
                .bind(chunk.key.digest(InstrumentKind::CreditNote, &lookup))
                .execute(&mut *conn)
                .await?;
            } else {
                let lookup: String = row.try_get("lookup")?;
                query("UPDATE stored_value SET digest = $2 WHERE instrument_id = $1 AND digest IS NULL")
                    .bind(id)
                    .bind(chunk.key.digest(InstrumentKind::GiftCard, &lookup))
                    .execute(&mut *conn)
                    .await?;
            }
        }
        Ok(Some(last))
    })
}
