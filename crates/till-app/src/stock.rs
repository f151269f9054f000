//! Stock on hand per store and article (docs/stock.md): levels set by an adjustment or a
//! count, the ledger of movements that explains them, and transfers between stores. A count or
//! a transfer is recorded once under its id, answered again when sent again, refused with a
//! typed reason otherwise. The ledger's guarantees (a count loses no sale committed during it)
//! live in storage.

use crate::app::App;
use crate::refusal::{Error, StockRefusal};
use crate::storage::Window;
use crate::storage::stock::CountOutcome;
use crate::storage::stock::NewCount;
use crate::storage::stock::NewTransfer;
use crate::storage::stock::ReceiveOutcome;
use crate::storage::stock::SendOutcome;
use till_core::ids::{CountId, SkuId, StoreId, TransferId};
use till_core::stock::{ReceiptMismatch, ReceivedLine, SentLine};

pub use crate::storage::stock::CountLine;
pub use crate::storage::stock::CountRecord;
pub use crate::storage::stock::CountedLine;
pub use crate::storage::stock::Movement;
pub use crate::storage::stock::StockLevel;
pub use till_core::documents::TransferAnswer;
pub use till_core::stock::TransferRecord;

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
    match app.stock().record_stock_count(new).await? {
        CountOutcome::Recorded(record) => Ok(Done::now(record)),
        CountOutcome::Replayed(record) => Ok(app.answer_again(Done::again(record)).await?),
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
    match app.stock().send_transfer(new).await? {
        SendOutcome::Sent(record) => Ok(Done::now(record)),
        SendOutcome::Replayed(record) => Ok(app.answer_again(Done::again(record)).await?),
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
    match app.stock().receive_transfer(transfer_id, lines, app.now()).await? {
        ReceiveOutcome::Received(record) => Ok(Done::now(record)),
        ReceiveOutcome::Replayed(record) => Ok(app.answer_again(Done::again(record)).await?),
        ReceiveOutcome::AlreadyReceived(record) => Err(refused(StockRefusal::AlreadyReceived(record.transfer_id))),
        ReceiveOutcome::NoSuchTransfer => Err(refused(StockRefusal::NoSuchTransfer(named))),
        ReceiveOutcome::Mismatch(ReceiptMismatch::NotSent { line, sku_id }) => {
            Err(refused(StockRefusal::NotSent { line, sku: sku_id }))
        }
        ReceiveOutcome::Mismatch(ReceiptMismatch::Missing(sku)) => Err(refused(StockRefusal::NotStated(sku))),
    }
}

/// What a read of an article's stock in a store found, or which of the two is unknown.
pub enum Stocked<T> {
    Found(T),
    NoSuchStore,
    NotInCatalog,
}

/// Sets the level of an article in a store as an adjustment, recorded in its ledger as one
/// movement of the difference. The store and the article must exist.
pub async fn adjust(app: &App, store_id: StoreId, sku_id: SkuId, on_hand: i64) -> Result<StockLevel, Error> {
    Ok(app.stock().put_stock(store_id, sku_id, on_hand, app.now()).await?)
}

/// The units of an article on hand in a store: 0 for one never counted nor sold there.
pub async fn on_hand(app: &App, store_id: &StoreId, sku_id: &SkuId) -> Result<Stocked<i64>, Error> {
    if let Some(level) = app.stock().get_stock(store_id, sku_id).await? {
        return Ok(Stocked::Found(level.on_hand));
    }
    Ok(unknown(app, store_id, sku_id).await?.unwrap_or(Stocked::Found(0)))
}

/// The level recorded for an article in a store; `None` when none ever was.
pub async fn level(app: &App, store_id: &StoreId, sku_id: &SkuId) -> Result<Option<StockLevel>, Error> {
    Ok(app.stock().get_stock(store_id, sku_id).await?)
}

/// A page of an article's ledger in a store, oldest first. An empty page says whether the
/// store or the article is unknown, since neither has movements.
pub async fn movements(
    app: &App,
    store_id: &StoreId,
    sku_id: &SkuId,
    window: &Window<i64>,
) -> Result<Stocked<Vec<Movement>>, Error> {
    let movements = app.stock().stock_movements(store_id, sku_id, window).await?;
    if movements.is_empty()
        && let Some(unknown) = unknown(app, store_id, sku_id).await?
    {
        return Ok(unknown);
    }
    Ok(Stocked::Found(movements))
}

/// The last `count` movements of an article in a store, oldest first.
pub async fn latest_movements(
    app: &App,
    store_id: &StoreId,
    sku_id: &SkuId,
    count: usize,
) -> Result<Vec<Movement>, Error> {
    Ok(app.stock().latest_stock_movements(store_id, sku_id, count).await?)
}

pub async fn transfer(app: &App, transfer_id: &TransferId) -> Result<Option<TransferRecord>, Error> {
    Ok(app.stock().get_transfer(transfer_id).await?)
}

/// Which of the store and the article is unknown, the store first; `None` when both are known.
async fn unknown<T>(app: &App, store_id: &StoreId, sku_id: &SkuId) -> Result<Option<Stocked<T>>, Error> {
    if app.people().get_store(store_id).await?.is_none() {
        return Ok(Some(Stocked::NoSuchStore));
    }
    if app.catalog().get_catalog_item(sku_id, app.now()).await?.is_none() {
        return Ok(Some(Stocked::NotInCatalog));
    }
    Ok(None)
}

fn refused(refusal: StockRefusal) -> Error {
    crate::Refusal::Stock(refusal).into()
}
