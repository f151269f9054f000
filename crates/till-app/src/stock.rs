//! Stock counts and transfers between stores (docs/stock.md): each recorded once under
//! its id, answered again when sent again, refused with a typed reason otherwise. The ledger's
//! guarantees (a count loses no sale committed during it) live in storage.

use crate::app::App;
use crate::refusal::{Error, StockRefusal};
use till_core::ids::{CountId, StoreId, TransferId};
use till_core::stock::{ReceiptMismatch, ReceivedLine, SentLine};
use till_store::stock_counts::{CountLine, CountOutcome, CountRecord, NewCount};
use till_store::stock_transfers::{NewTransfer, ReceiveOutcome, SendOutcome, TransferRecord};

/// Recorded now, or answered again from an earlier request with the same content.
pub struct Done<T> {
    pub record: T,
    pub replayed: bool,
}

impl<T> Done<T> {
    fn now(record: T) -> Self {
        Done {
            record,
            replayed: false,
        }
    }

    fn again(record: T) -> Self {
        Done { record, replayed: true }
    }
}

/// Sets each counted article's level in `store_id` to what was counted.
pub async fn count(
    app: &App,
    store_id: StoreId,
    count_id: CountId,
    lines: Vec<CountLine>,
) -> Result<Done<CountRecord>, Error> {
    let new = NewCount {
        count_id,
        store_id,
        lines,
        at: app.now(),
    };
    let store_id = new.store_id.clone();
    match app.store().record_stock_count(new).await? {
        CountOutcome::Recorded(record) => Ok(Done::now(record)),
        CountOutcome::Replayed(record) => Ok(Done::again(record)),
        CountOutcome::IdTaken(record) => Err(refused(StockRefusal::CountIdTaken(record.count_id))),
        CountOutcome::NoSuchStore => Err(refused(StockRefusal::UnknownStore(store_id))),
        CountOutcome::NotInCatalog { line, sku_id } => Err(refused(StockRefusal::NotInCatalog { line, sku: sku_id })),
    }
}

/// Sends goods from one store to another: out of the sending store's stock now.
pub async fn send(
    app: &App,
    transfer_id: TransferId,
    from_store_id: StoreId,
    to_store_id: StoreId,
    lines: Vec<SentLine>,
) -> Result<Done<TransferRecord>, Error> {
    if from_store_id == to_store_id {
        return Err(refused(StockRefusal::SameStore));
    }
    let new = NewTransfer {
        transfer_id,
        from_store_id,
        to_store_id,
        lines,
        at: app.now(),
    };
    match app.store().send_transfer(new).await? {
        SendOutcome::Sent(record) => Ok(Done::now(record)),
        SendOutcome::Replayed(record) => Ok(Done::again(record)),
        SendOutcome::IdTaken(record) => Err(refused(StockRefusal::TransferIdTaken(record.transfer_id))),
        SendOutcome::NoSuchStore(store) => Err(refused(StockRefusal::UnknownStore(store))),
        SendOutcome::NotInCatalog { line, sku_id } => Err(refused(StockRefusal::NotInCatalog { line, sku: sku_id })),
    }
}

/// Puts what arrived of a transfer into the receiving store, recording the differences.
pub async fn receive(
    app: &App,
    transfer_id: TransferId,
    lines: Vec<ReceivedLine>,
) -> Result<Done<TransferRecord>, Error> {
    let named = transfer_id.clone();
    match app.store().receive_transfer(transfer_id, lines, app.now()).await? {
        ReceiveOutcome::Received(record) => Ok(Done::now(record)),
        ReceiveOutcome::Replayed(record) => Ok(Done::again(record)),
        ReceiveOutcome::AlreadyReceived(record) => Err(refused(StockRefusal::AlreadyReceived(record.transfer_id))),
        ReceiveOutcome::NoSuchTransfer => Err(refused(StockRefusal::NoSuchTransfer(named))),
        ReceiveOutcome::Mismatch(ReceiptMismatch::NotSent { line, sku_id }) => {
            Err(refused(StockRefusal::NotSent { line, sku: sku_id }))
        }
        ReceiveOutcome::Mismatch(ReceiptMismatch::Missing(sku)) => Err(refused(StockRefusal::NotStated(sku))),
    }
}

fn refused(refusal: StockRefusal) -> Error {
    crate::Refusal::Stock(refusal).into()
}
