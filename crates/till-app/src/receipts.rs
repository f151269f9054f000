//! A sale's receipt: shown (nothing recorded) or printed (each print recorded, every print
//! after the first sealed as a DUPLICATA in the register's duplicate chain).

use crate::app::App;
use crate::caller::Principal;
use crate::refusal::{Error, Refusal};
use crate::secret::{is_link_token_shaped, new_link_token};
use till_core::fiscal::archive::KeySet;
use till_core::fiscal::proof::{self, ProofError, ProvenTicket};
use till_core::ids::{PrintId, TransactionId};
use till_core::instant::from_micros;

pub use crate::storage::sales::Print;
pub use crate::storage::sales::Receipt;

/// A receipt with the proof it prints as a QR code: that its register sealed its total.
pub struct ProvenReceipt {
    pub receipt: Receipt,
    /// `TILL1:…` ([`till_core::fiscal::proof`]), the same on every rendering of the ticket.
    pub proof: String,
    /// The receipt's public page, when the deployment has a public address and the receipt
    /// was printed.
    pub link: Option<String>,
}

/// A receipt as its public page shows it: with whether its proof verifies against the keys
/// the deployment publishes, and what it proves.
pub struct PublicReceipt {
    pub receipt: ProvenReceipt,
    pub verdict: Verdict,
}

/// Whether a receipt's proof verifies against the keys the deployment publishes.
pub enum Verdict {
    /// It does: what it proves.
    Verified(ProvenTicket),
    NotVerified(ProofError),
    /// The published keys do not read as a key set, so nothing can be checked against them.
    KeysUnreadable,
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
    match app.sales_book().receipt(transaction_id).await? {
        Some(receipt) if within_reach(caller, &receipt) => prove(app, receipt),
        _ => Err(Refusal::NoSuchSale(transaction_id.clone()).into()),
    }
}

/// `receipt` with its proof, and its public page when it has one.
pub(crate) fn prove(app: &App, receipt: Receipt) -> Result<ProvenReceipt, Error> {
    let ticket = ProvenTicket {
        register_id: receipt.sale.register_id.clone(),
        ticket_seq: receipt.seq,
        total_cents: receipt.sale.total_cents,
        issued_at: from_micros(receipt.sale.emitted_at),
    };
    let proof = app.journal().prove(&ticket)?;
    let link = public_link(app, receipt.link_token.as_deref());
    Ok(ProvenReceipt { receipt, proof, link })
}

/// The public page of the link token `token`.
fn public_link(app: &App, token: Option<&str>) -> Option<String> {
    let base = app.settings().public_url.as_deref()?;
    Some(format!("{base}/r/{}", token?))
}

/// The receipt whose public page `token` opens, for anyone holding it: shown, never printed,
/// with its proof checked against the published keys.
pub async fn public_receipt(app: &App, token: &str) -> Result<PublicReceipt, Error> {
    let transaction_id = match is_link_token_shaped(token) {
        true => app.sales_book().linked_receipt(token).await?,
        false => None,
    };
    let Some(transaction_id) = transaction_id else {
        return Err(Refusal::NoSuchReceiptLink.into());
    };
    let receipt = app.sales_book().receipt(&transaction_id).await?;
    let Some(receipt) = receipt else {
        return Err(Refusal::NoSuchReceiptLink.into());
    };
    let proven = prove(app, receipt)?;
    let keys = app.journal().fiscal_keys().await?;
    let set = serde_json::json!({"keys": keys.iter().map(|key| &key.jwk).collect::<Vec<_>>()});
    let verdict = match KeySet::from_json(set.to_string().as_bytes()) {
        Ok(keys) => match proof::verify(&proven.proof, &keys) {
            Ok((ticket, _)) => Verdict::Verified(ticket),
            Err(error) => Verdict::NotVerified(error),
        },
        Err(_) => Verdict::KeysUnreadable,
    };
    Ok(PublicReceipt {
        receipt: proven,
        verdict,
    })
}

/// Prints the receipt: the first print is the original, every later one a DUPLICATA with its
/// number. A print id already recorded with this sale answers that print again.
pub async fn print(
    app: &App,
    caller: &Principal,
    transaction_id: &TransactionId,
    print_id: Option<&PrintId>,
) -> Result<Printed, Error> {
    let mut receipt = receipt(app, caller, transaction_id).await?;
    let token = match &receipt.receipt.link_token {
        Some(token) => token.clone(),
        None => new_link_token(),
    };
    let printed = app
        .sales_book()
        .record_print(transaction_id, print_id, &token, caller.subject.as_str(), app.now())
        .await?;
    receipt.link = public_link(app, Some(&printed.link_token));
    receipt.receipt.link_token = Some(printed.link_token);
    let answer = Printed {
        receipt,
        print: printed.print,
        replayed: printed.replayed,
    };
    match answer.replayed {
        true => Ok(app.answer_again(answer).await?),
        false => Ok(answer),
    }
}

/// Whether the caller may see this receipt: a till's token, those of its own store's sales.
fn within_reach(caller: &Principal, receipt: &Receipt) -> bool {
    caller.reads_store(&receipt.sale.store_id)
}
