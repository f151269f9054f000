//! Committed sales as they are read back: one sale's stored answer or sealed record, the
//! search of them, and what a sale still allows to be returned. A till's token reaches its
//! own store's sales only; another store's sale is as unknown to it as a wrong id.

use crate::app::App;
use crate::caller::Principal;
use crate::refusal::{Error, Refusal};
use crate::storage::Newest;
use crate::storage::ReadAt;
use crate::storage::Window;
use till_core::fiscal::payload::SaleRecord;
use till_core::ids::{SkuId, TransactionId};
use till_core::money::Cents;
use till_core::returns::{ReturnedUnits, plan_return};
use till_core::sale::SaleType;

pub use crate::storage::sales::NewSale;
pub use crate::storage::sales::OriginalSale;
pub use crate::storage::sales::ReturnOf;
pub use crate::storage::sales::ReturnSummary;
pub use crate::storage::sales::SaleFilter;
pub use crate::storage::sales::SaleSummary;

/// The answer a committed sale was finalized with, as stored.
pub async fn sale_answer(app: &App, caller: &Principal, transaction_id: &TransactionId) -> Result<String, Error> {
    match app.sales_book().sale_answer(transaction_id).await? {
        Some((store, answer)) if caller.reads_store(store.as_str()) => Ok(answer),
        _ => Err(Refusal::NoSuchSale(transaction_id.clone()).into()),
    }
}

/// A committed sale's sealed record, with the record of the sale it gives goods back from
/// when it is a return against a receipt.
pub async fn sale_record(
    app: &App,
    caller: &Principal,
    transaction_id: &TransactionId,
) -> Result<(SaleRecord, Option<SaleRecord>), Error> {
    match app.sales_book().sale_record(transaction_id).await? {
        Some((sale, original)) if caller.reads_store(&sale.store_id) => Ok((sale, original)),
        _ => Err(Refusal::NoSuchSale(transaction_id.clone()).into()),
    }
}

/// The sales `filter` admits, newest first, in `window`, whoever asks, as the back office
/// reads them: on a standby when there is one.
pub async fn search(
    app: &App,
    filter: &SaleFilter,
    window: &Window<Newest<TransactionId>>,
) -> Result<Vec<SaleSummary>, Error> {
    Ok(app.sales_book().search_sales(filter, window, ReadAt::Standby).await?)
}

/// [`search`] narrowed to the sales the caller reads: a till's own store's. A till that asks
/// for another store finds nothing.
pub async fn search_within_reach(
    app: &App,
    caller: &Principal,
    mut filter: SaleFilter,
    window: &Window<Newest<TransactionId>>,
) -> Result<Vec<SaleSummary>, Error> {
    let Some(store_id) = caller.store_to_list(filter.store_id.take()) else {
        return Ok(Vec::new());
    };
    filter.store_id = store_id;
    // A till finds the sales it has just made: on the primary, which a standby lags.
    let at = match caller.session() {
        Some(_) => ReadAt::Primary,
        None => ReadAt::Standby,
    };
    Ok(app.sales_book().search_sales(&filter, window, at).await?)
}

/// What was returned of a sale and what remains.
pub struct SaleReturns {
    pub original: OriginalSale,
    /// Per line of the sale, in its order.
    pub lines: Vec<Returnable>,
    /// The returns made against it, oldest first.
    pub returns: Vec<ReturnSummary>,
}

/// A line of a sale, with what may still come back of it.
pub struct Returnable {
    pub line_id: String,
    /// `None` for a custom line.
    pub sku_id: Option<SkuId>,
    pub quantity: i64,
    pub returned: i64,
    /// Units that may still come back: none of a return.
    pub units: i64,
    /// What returning all of them would refund.
    pub refund: Cents,
}

/// The returns made against `transaction_id` and what each of its lines still allows, priced
/// as a return of every remaining unit would be.
pub async fn returns_of(app: &App, transaction_id: &TransactionId) -> Result<SaleReturns, Error> {
    let original = app
        .sales_book()
        .original_sale(transaction_id)
        .await?
        .ok_or_else(|| Refusal::NoSuchSale(transaction_id.clone()))?;
    let returns = app.sales_book().returns_against(transaction_id).await?;
    Ok(SaleReturns {
        lines: returnable_lines(&original),
        original,
        returns,
    })
}

fn returnable_lines(original: &OriginalSale) -> Vec<Returnable> {
    let is_return = original.kind == SaleType::Return.as_str();
    let sale = &original.returnable;
    sale.lines
        .iter()
        .zip(&original.lines)
        .map(|(line, kept)| {
            let units = if is_return { 0 } else { line.remaining() };
            let everything = [ReturnedUnits {
                line_id: line.line_id.clone(),
                units,
            }];
            let refund = match units {
                0 => Cents::ZERO,
                _ => plan_return(sale, &everything).map_or(Cents::ZERO, |plan| plan.refund),
            };
            Returnable {
                line_id: line.line_id.clone(),
                sku_id: kept.sku_id.clone(),
                quantity: line.quantity,
                returned: line.returned,
                units,
                refund,
            }
        })
        .collect()
}
