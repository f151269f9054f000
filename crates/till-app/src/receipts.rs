//! A sale's receipt: shown (nothing recorded) or printed (each print recorded, every print
//! after the first sealed as a DUPLICATA in the register's duplicate chain).

use crate::app::App;
use crate::caller::Principal;
use crate::refusal::{Error, Refusal};
use till_core::ids::{PrintId, TransactionId};

pub use crate::storage::sales::Print;
pub use crate::storage::sales::Receipt;

/// A print made (or found made before under the same print id), with what it prints.
pub struct Printed {
    pub receipt: Receipt,
    pub print: Print,
    /// The print id named a print made before: nothing was recorded now.
    pub replayed: bool,
}

/// The receipt of a committed sale, to show; records nothing. A till's token reaches the
/// sales of its own store only.
pub async fn receipt(app: &App, caller: &Principal, transaction_id: &TransactionId) -> Result<Receipt, Error> {
    let receipt = app.sales_book().receipt(transaction_id).await?;
    match receipt {
        Some(receipt) if within_reach(caller, &receipt) => Ok(receipt),
        _ => Err(Refusal::NoSuchSale(transaction_id.clone()).into()),
    }
}

/// Prints the receipt: the first print is the original, every later one a DUPLICATA with its
/// number. A print id already recorded with this sale answers that print again.
pub async fn print(
    app: &App,
    caller: &Principal,
    transaction_id: &TransactionId,
    print_id: Option<&PrintId>,
) -> Result<Printed, Error> {
    let receipt = receipt(app, caller, transaction_id).await?;
    let printed = app
        .sales_book()
        .record_print(transaction_id, print_id, caller.subject.as_str(), app.now())
        .await?;
    Ok(Printed {
        receipt,
        print: printed.print,
        replayed: printed.replayed,
    })
}

/// Whether the caller may see this receipt: a till's token, those of its own store's sales.
fn within_reach(caller: &Principal, receipt: &Receipt) -> bool {
    caller.reads_store(&receipt.sale.store_id)
}
