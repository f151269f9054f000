//! Receipts sent by e-mail (docs/receipts.md, "By e-mail"). A till asks for a send; the send
//! waits in the database's queue, where every node's mailer claims the sends that are due,
//! one node each under a lease, renders the receipt, hands it to the mail server and records
//! how the attempt went: delivered, tried again later after a failure that may pass, or given
//! up. A delivered or given-up send lets its one-off address go.

use crate::app::App;
use crate::caller::Principal;
use crate::receipts::{ProvenReceipt, prove};
use crate::refusal::{Error, Refusal};
use crate::secret::{new_id, new_link_token};
use crate::storage::receipt_mail::NewSend;
use jiff::Timestamp;
use till_core::customer::Email;
use till_core::e_receipt::{MailFailure, Next, Recipient, after_failure};
use till_core::ids::{CustomerId, SendId, TransactionId};

pub use crate::storage::receipt_mail::{ClaimedSend, MailQueue, Queued, SendOutcome, SendRecord};

/// A send asked for: queued now, or found queued before under the same send id.
pub struct Requested {
    pub record: SendRecord,
    pub replayed: bool,
}

/// Sends the receipt of a committed sale by e-mail: to `email` when given, else to the sale's
/// customer if they consented to e-receipts. A send id already used for this sale answers that
/// send again. A till's token reaches the sales of its own store only.
pub async fn send(
    app: &App,
    caller: &Principal,
    transaction_id: &TransactionId,
    send_id: Option<SendId>,
    email: Option<Email>,
) -> Result<Requested, Error> {
    if !app.settings().e_receipts {
        return Err(Refusal::EReceiptsOff.into());
    }
    let receipt = match app.sales_book().receipt(transaction_id).await? {
        Some(receipt) if caller.reads_store(&receipt.sale.store_id) => receipt,
        _ => return Err(Refusal::NoSuchSale(transaction_id.clone()).into()),
    };
    let recipient = match email {
        Some(email) => Recipient::Address(email),
        None => {
            let customer = receipt.sale.customer_id.clone().map(CustomerId::from_trusted);
            match customer {
                Some(customer) if consenting_address(app, &customer).await?.is_some() => Recipient::Customer(customer),
                _ => return Err(Refusal::NoReceiptAddress.into()),
            }
        }
    };
    let send = NewSend {
        id: send_id.unwrap_or_else(|| SendId::from_trusted(new_id("snd"))),
        transaction_id: transaction_id.clone(),
        recipient,
        link_token: receipt.link_token.unwrap_or_else(new_link_token),
        requested_by: caller.subject.as_str().to_owned(),
        // The queue keeps real time, as the mail server and the mailers' leases do.
        now: Timestamp::now(),
    };
    match app.mail().queue_receipt_send(send.clone()).await? {
        Queued::New(record) => Ok(Requested {
            record,
            replayed: false,
        }),
        Queued::Replayed(record) => Ok(app.answer_again(Requested { record, replayed: true }).await?),
        Queued::IdTaken => Err(Refusal::SendIdTaken(send.id).into()),
    }
}

/// The sends of a committed sale, oldest first.
pub async fn sends(app: &App, caller: &Principal, transaction_id: &TransactionId) -> Result<Vec<SendRecord>, Error> {
    match app.sales_book().sale_answer(transaction_id).await? {
        Some((store_id, _)) if caller.reads_store(store_id.as_str()) => {
            Ok(app.mail().receipt_sends(transaction_id).await?)
        }
        _ => Err(Refusal::NoSuchSale(transaction_id.clone()).into()),
    }
}

/// The address of a customer who consented to e-receipts, while their profile holds one.
async fn consenting_address(app: &App, customer: &CustomerId) -> Result<Option<Email>, Error> {
    let record = app.customers().get_customer(customer).await?;
    Ok(record
        .filter(|record| record.erased_at.is_none() && record.consent.e_receipt)
        .and_then(|record| record.profile.email))
}

/// Takes up to `most` sends that are due, for this node until `until`.
pub async fn claim(app: &App, now: Timestamp, until: Timestamp, most: i64) -> Result<Vec<ClaimedSend>, Error> {
    let token = new_id("lease");
    Ok(app.mail().claim_receipt_sends(&token, now, until, most).await?)
}

/// What a claimed send is to carry.
pub enum Letter {
    /// The receipt, to this address.
    Deliver { to: Email, receipt: Box<ProvenReceipt> },
    /// The send has nowhere to go any more.
    Undeliverable(MailFailure),
}

/// The receipt a claimed send carries, and the address it goes to now: its one-off address,
/// or the customer's while their consent holds.
pub async fn letter(app: &App, claimed: &ClaimedSend) -> Result<Letter, Error> {
    let Some(receipt) = app.sales_book().receipt(&claimed.record.transaction_id).await? else {
        return Err(Refusal::NoSuchSale(claimed.record.transaction_id.clone()).into());
    };
    let to = match &claimed.record.email {
        Some(email) => Some(email.clone()),
        None => match receipt.sale.customer_id.clone().map(CustomerId::from_trusted) {
            Some(customer) => consenting_address(app, &customer).await?,
            None => None,
        },
    };
    Ok(match to {
        Some(to) => Letter::Deliver {
            to,
            receipt: Box::new(prove(app, receipt)?),
        },
        None => Letter::Undeliverable(MailFailure::NoAddress),
    })
}

/// Records how an attempt at `now` went, while the claim's lease holds: a failure that may
/// pass is tried again after the retry policy's delay, until its window closes.
pub async fn record_attempt(
    app: &App,
    claimed: &ClaimedSend,
    result: Result<(), MailFailure>,
    now: Timestamp,
) -> Result<bool, Error> {
    let record = &claimed.record;
    let outcome = match result {
        Ok(()) => SendOutcome::Delivered { at: now },
        Err(failure) => {
            let attempts = record.attempts.saturating_add(1);
            match after_failure(&app.settings().mail_retry, failure, attempts, record.queued_at, now) {
                Next::RetryAt(at) => SendOutcome::RetryAt { failure, at },
                Next::GiveUp => SendOutcome::GaveUp { failure, at: now },
            }
        }
    };
    Ok(app.mail().record_send(&record.id, &claimed.lease, outcome).await?)
}

/// The queue as it stands, for `/metrics`.
pub async fn queue(app: &App) -> Result<MailQueue, Error> {
    Ok(app.mail().mail_queue().await?)
}
