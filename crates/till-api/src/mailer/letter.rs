//! The mail that carries a receipt: a text part and an HTML part, the HTML showing the
//! proof's QR code from an image attached inline.

use crate::receipt::{self, Columns, Rendering};
use lettre::Message;
use lettre::message::header::ContentType;
use lettre::message::{Attachment, Mailbox, MultiPart, SinglePart};
use till_app::receipts::ProvenReceipt;
use till_core::customer::Email;

/// The content id of the proof's QR code in the mail.
const PROOF_CID: &str = "proof";

/// The receipt as a mail from `from` to `to`; `None` when the address does not make a mailbox
/// (it was checked when the send was asked for).
pub fn message(from: &Mailbox, to: &Email, receipt: &ProvenReceipt) -> Option<Message> {
    let to: Mailbox = to.as_str().parse().ok()?;
    let sale = &receipt.receipt;
    let shop = sale
        .store
        .as_ref()
        .map_or_else(|| sale.sale.store_id.clone(), |store| store.profile.name.clone());
    let subject = format!("Votre ticket {shop} n° {}", sale.seq);
    let text = receipt::text(receipt, Rendering::Mailed, Columns::Wide);
    let html = receipt::mail_html(receipt, PROOF_CID);
    let png = ContentType::parse("image/png").ok()?;
    let qr = Attachment::new_inline(PROOF_CID.to_owned()).body(receipt::qr_png(&receipt.proof), png);
    Message::builder()
        .from(from.clone())
        .to(to)
        .subject(subject)
        .multipart(
            MultiPart::alternative()
                .singlepart(SinglePart::plain(text))
                .multipart(MultiPart::related().singlepart(SinglePart::html(html)).singlepart(qr)),
        )
        .ok()
}
