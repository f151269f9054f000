//! Gift cards and credit notes as the back office manages and reads them: a card issued
//! without a sale, blocked or unblocked, and either read with its ledger. Tickets move their
//! balances ([`crate::finalize`], [`crate::returns`]); these workflows move none.

use crate::app::App;
use crate::caller::Principal;
use crate::refusal::Error;
use crate::storage::StoreError;
use till_core::stored_value::InstrumentCode;

pub use crate::storage::stored_value::Activity;
pub use crate::storage::stored_value::InstrumentRecord;
pub use crate::storage::stored_value::NewCard;

/// Issues a gift card whose balance is given, not paid at a till. A card with this code
/// already is a conflict.
pub async fn issue_gift_card(app: &App, card: NewCard) -> Result<InstrumentRecord, Error> {
    Ok(app.stored_value().issue_gift_card(card).await?)
}

/// The gift card `code` with its ledger, if the caller may read it: a till reads only the
/// cards its store may take, so that a card it could not take is as unknown to it as a wrong
/// code.
pub async fn gift_card(
    app: &App,
    caller: &Principal,
    code: &InstrumentCode,
) -> Result<Option<InstrumentRecord>, Error> {
    Ok(app.stored_value().gift_card(code, caller.reads_one_store()).await?)
}

/// The credit note whose code is `code`, read as [`gift_card`] reads a card. Any text is
/// looked up: a fiscal number, or anything else that is not a code, finds nothing.
pub async fn credit_note(app: &App, caller: &Principal, code: &str) -> Result<Option<InstrumentRecord>, Error> {
    Ok(app.stored_value().credit_note(code, caller.reads_one_store()).await?)
}

/// What a code names when the kind is not said: the gift card first, else the credit note.
pub async fn instrument(
    app: &App,
    caller: &Principal,
    code: &InstrumentCode,
) -> Result<Option<InstrumentRecord>, Error> {
    match gift_card(app, caller, code).await? {
        Some(card) => Ok(Some(card)),
        None => credit_note(app, caller, code.as_str()).await,
    }
}

/// Blocks the gift card `code` (lost or stolen: nothing may spend or load it) or unblocks it.
/// Answers whether there was such a card.
pub async fn set_blocked(app: &App, code: &InstrumentCode, blocked: bool) -> Result<bool, Error> {
    match app.stored_value().block_gift_card(code, blocked, app.now()).await {
        Ok(()) => Ok(true),
        Err(StoreError::NotFound(_)) => Ok(false),
        Err(other) => Err(other.into()),
    }
}
