//! A sale's receipt: shown (nothing recorded) or printed (each print recorded, every print
//! after the first sealed as a DUPLICATA in the register's duplicate chain).

use crate::app::App;
use crate::caller::Principal;
use crate::refusal::{Error, Refusal};
use till_core::fiscal::proof::ProvenTicket;
use till_core::ids::{PrintId, TransactionId};
use till_core::instant::from_micros;

pub use crate::storage::sales::Print;
pub use crate::storage::sales::Receipt;

/// A receipt with the proof it prints as a QR code: that its register sealed its total.
pub struct ProvenReceipt {
    pub receipt: Receipt,
    /// `TILL1:…` ([`till_core::fiscal::proof`]), the same on every rendering of the ticket.
    pub proof: String,
}

/// A print made (or found made before under the same print id), with what it prints.
pub struct Printed {
    pub receipt: ProvenReceipt,
    pub print: Print,
    /// The print id named a print made before: nothing was recorded now.
    pub replayed: bool,
}

/// The receipt of a committed sale, to show; records nothing. A till's token reaches the
/// sales of its own store only.
pub async fn receipt(app: &App, caller: &Principal, transaction_id: &TransactionId) -> Result<ProvenReceipt, Error> {
    let receipt = match app.sales_book().receipt(transaction_id).await? {
        Some(receipt) if within_reach(caller, &receipt) => receipt,
        _ => return Err(Refusal::NoSuchSale(transaction_id.clone()).into()),
    };
    let ticket = ProvenTicket {
        register_id: receipt.sale.register_id.clone(),
        ticket_seq: receipt.seq,
        total_cents: receipt.sale.total_cents,
        issued_at: from_micros(receipt.sale.emitted_at),
    };
    let proof = app.journal().prove(&ticket)?;
    Ok(ProvenReceipt { receipt, proof })
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
