//! Transfers of goods between two stores (docs/stock.md). Sending takes the goods out
//! of the sending store (`transfer_out` movements); receiving puts what arrived into the
//! receiving store (`transfer_in`) and records, per article, received minus sent. Both are
//! answered again when sent again, and feed a `stock.transferred` event.

use crate::db::Store;
use crate::error::StoreError;
use crate::feed::NewEvent;
use crate::sql::{Conn, Row, query};
use crate::stock::{self, Cause};
use futures::future::BoxFuture;
use jiff::Timestamp;
pub use till_app::storage::stock::{NewTransfer, ReceiveOutcome, SendOutcome};
use till_core::documents::TransferAnswer;
use till_core::events::EventType;
use till_core::ids::{SkuId, StoreId, TransferId};
use till_core::instant::{from_micros, to_micros};
use till_core::stock::{Receipt, ReceivedLine, SentLine, StockReason, TransferRecord, reconcile};

struct Receiving {
    transfer_id: TransferId,
    lines: Vec<ReceivedLine>,
    at: Timestamp,
}

impl Store {
    pub async fn send_transfer(&self, transfer: NewTransfer) -> Result<SendOutcome, StoreError> {
        self.write(transfer, |c, i| Box::pin(send(c, i))).await
    }

    pub async fn receive_transfer(
        &self,
        transfer_id: TransferId,
        lines: Vec<ReceivedLine>,
        at: Timestamp,
    ) -> Result<ReceiveOutcome, StoreError> {
        let input = Receiving { transfer_id, lines, at };
        self.write(input, |c, i| Box::pin(receive(c, i))).await
    }

    pub async fn get_transfer(&self, transfer_id: &TransferId) -> Result<Option<TransferRecord>, StoreError> {
        let mut conn = self.reader().acquire().await?;
        find(&mut conn, transfer_id).await
    }
}

fn send<'a>(conn: &'a mut Conn, new: &'a NewTransfer) -> BoxFuture<'a, Result<SendOutcome, StoreError>> {
    Box::pin(async move {
        if let Some(earlier) = find(conn, &new.transfer_id).await? {
            return Ok(answer_again(earlier, new));
        }
        for store_id in [&new.from_store_id, &new.to_store_id] {
            let found = query("SELECT 1 FROM stores WHERE store_id = $1")
                .bind(store_id.as_str())
                .fetch_optional(&mut *conn)
                .await?;
            if found.is_none() {
                return Ok(SendOutcome::NoSuchStore(store_id.clone()));
            }
        }
        for (line, sent) in new.lines.iter().enumerate() {
            let known = query("SELECT 1 FROM skus WHERE sku_id = $1")
                .bind(sent.sku_id.as_str())
                .fetch_optional(&mut *conn)
                .await?;
            if known.is_none() {
                return Ok(SendOutcome::NotInCatalog {
                    line,
                    sku_id: sent.sku_id.clone(),
                });
            }
        }
        let now = to_micros(new.at);
        let lines = serde_json::to_string(&new.lines).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        // Claimed before anything moves: a second request with this id waits here for the
        // first to commit, then answers what it recorded.
        let claimed = query(
            "INSERT INTO stock_transfers (transfer_id, from_store_id, to_store_id, lines, sent_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (transfer_id) DO NOTHING",
        )
        .bind(new.transfer_id.as_str())
        .bind(new.from_store_id.as_str())
        .bind(new.to_store_id.as_str())
        .bind(lines)
        .bind(now)
        .execute(&mut *conn)
        .await?;
        if claimed == 0 {
            let earlier = find(conn, &new.transfer_id)
                .await?
                .ok_or_else(|| StoreError::Corrupt("a transfer claimed and not found".into()))?;
            return Ok(answer_again(earlier, new));
        }
        let moves: Vec<(SkuId, i64)> = new
            .lines
            .iter()
            .map(|l| (l.sku_id.clone(), -l.quantity.get()))
            .collect();
        move_goods(
            conn,
            &new.from_store_id,
            &moves,
            StockReason::TransferOut,
            &new.transfer_id,
            now,
        )
        .await?;
        let record = TransferRecord {
            transfer_id: new.transfer_id.clone(),
            from_store_id: new.from_store_id.clone(),
            to_store_id: new.to_store_id.clone(),
            lines: new.lines.clone(),
            sent_at: from_micros(now),
            received: None,
        };
        record_transferred(conn, &record, &record.from_store_id, now).await?;
        Ok(SendOutcome::Sent(record))
    })
}

fn answer_again(earlier: TransferRecord, new: &NewTransfer) -> SendOutcome {
    let same = earlier.from_store_id == new.from_store_id
        && earlier.to_store_id == new.to_store_id
        && earlier.lines == new.lines;
    if same {
        SendOutcome::Replayed(earlier)
    } else {
        SendOutcome::IdTaken(earlier)
    }
}

fn receive<'a>(conn: &'a mut Conn, input: &'a Receiving) -> BoxFuture<'a, Result<ReceiveOutcome, StoreError>> {
    Box::pin(async move {
        // Holds the transfer's row: two receipts of one transfer take turns.
        let held = query("UPDATE stock_transfers SET transfer_id = transfer_id WHERE transfer_id = $1")
            .bind(input.transfer_id.as_str())
            .execute(&mut *conn)
            .await?;
        if held == 0 {
            return Ok(ReceiveOutcome::NoSuchTransfer);
        }
        let transfer = find(conn, &input.transfer_id)
            .await?
            .ok_or_else(|| StoreError::Corrupt("a transfer held and not found".into()))?;
        let reconciled = match reconcile(&transfer.lines, &input.lines) {
            Ok(reconciled) => reconciled,
            Err(mismatch) => return Ok(ReceiveOutcome::Mismatch(mismatch)),
        };
        if let Some(earlier) = &transfer.received {
            return Ok(if earlier.lines == reconciled {
                ReceiveOutcome::Replayed(transfer)
            } else {
                ReceiveOutcome::AlreadyReceived(transfer)
            });
        }
        let now = to_micros(input.at);
        let stated: Vec<ReceivedLine> = reconciled
            .iter()
            .map(|r| ReceivedLine {
                sku_id: r.sku_id.clone(),
                received_quantity: r.received,
            })
            .collect();
        let stated = serde_json::to_string(&stated).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        query("UPDATE stock_transfers SET received = $2, received_at = $3 WHERE transfer_id = $1")
            .bind(input.transfer_id.as_str())
            .bind(stated)
            .bind(now)
            .execute(&mut *conn)
            .await?;
        let moves: Vec<(SkuId, i64)> = reconciled
            .iter()
            .filter(|r| r.received.get() > 0)
            .map(|r| (r.sku_id.clone(), r.received.get()))
            .collect();
        move_goods(
            conn,
            &transfer.to_store_id,
            &moves,
            StockReason::TransferIn,
            &transfer.transfer_id,
            now,
        )
        .await?;
        let record = TransferRecord {
            received: Some(Receipt {
                lines: reconciled,
                at: from_micros(now),
            }),
            ..transfer
        };
        record_transferred(conn, &record, &record.to_store_id, now).await?;
        Ok(ReceiveOutcome::Received(record))
    })
}

async fn move_goods(
    conn: &mut Conn,
    store_id: &StoreId,
    moves: &[(SkuId, i64)],
    reason: StockReason,
    transfer_id: &TransferId,
    now: i64,
) -> Result<(), StoreError> {
    let cause = Cause {
        reason,
        reference: Some(transfer_id.as_str()),
    };
    let mut batch = crate::batch::Batch::default();
    stock::push_moves(&mut batch, conn.writers(), store_id, moves, cause, now);
    batch.run(conn).await
}

async fn find(conn: &mut Conn, transfer_id: &TransferId) -> Result<Option<TransferRecord>, StoreError> {
    let row = query(
        "SELECT from_store_id, to_store_id, lines, sent_at, received, received_at FROM stock_transfers \
         WHERE transfer_id = $1",
    )
    .bind(transfer_id.as_str())
    .fetch_optional(&mut *conn)
    .await?;
    row.map(|row| read_record(&row, transfer_id)).transpose()
}

fn read_record(row: &Row, transfer_id: &TransferId) -> Result<TransferRecord, StoreError> {
    let corrupt = |e: serde_json::Error| StoreError::Corrupt(format!("a stock transfer's lines: {e}"));
    let lines: Vec<SentLine> = serde_json::from_str(&row.try_get::<String>("lines")?).map_err(corrupt)?;
    let received = match row.try_get::<Option<String>>("received")? {
        Some(text) => {
            let stated: Vec<ReceivedLine> = serde_json::from_str(&text).map_err(corrupt)?;
            let lines = reconcile(&lines, &stated)
                .map_err(|_| StoreError::Corrupt("a stock transfer's receipt does not fit it".into()))?;
            let at: Option<i64> = row.try_get("received_at")?;
            Some(Receipt {
                lines,
                at: from_micros(at.unwrap_or_default()),
            })
        }
        None => None,
    };
    Ok(TransferRecord {
        transfer_id: transfer_id.clone(),
        from_store_id: StoreId::from_trusted(row.try_get("from_store_id")?),
        to_store_id: StoreId::from_trusted(row.try_get("to_store_id")?),
        lines,
        sent_at: from_micros(row.try_get("sent_at")?),
        received,
    })
}

/// `stock.transferred` in the feed, in the store whose stock moved.
async fn record_transferred(
    conn: &mut Conn,
    record: &TransferRecord,
    store_id: &StoreId,
    now: i64,
) -> Result<(), StoreError> {
    NewEvent {
        kind: EventType::StockTransferred,
        occurred_at: now,
        store_id: Some(store_id.as_str()),
        register_id: None,
        subject: record.transfer_id.as_str(),
        data: Some(crate::feed::data_of(&TransferAnswer::from(record))?),
    }
    .record(conn)
    .await
}
