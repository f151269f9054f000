//! What the console's pages need that no other workflow owns: the sign-outs that keep a token
//! out of the console until it expires, on every node, and the registers whose day was closed
//! early.

use crate::app::App;
use crate::refusal::Error;
use jiff::Timestamp;
use till_core::ids::StoreId;

pub use crate::storage::fiscal::ClosedDay;

/// Keeps the token whose hash is `token_hash` out of the console until it expires.
pub async fn sign_out(app: &App, token_hash: Vec<u8>, expires_at: Timestamp) -> Result<(), Error> {
    Ok(app
        .access()
        .sign_out_of_console(token_hash, expires_at, app.now())
        .await?)
}

/// Whether the token whose hash is `token_hash` was signed out of the console and has not
/// expired since.
pub async fn signed_out(app: &App, token_hash: &[u8]) -> Result<bool, Error> {
    Ok(app.access().signed_out_of_console(token_hash, app.now()).await?)
}

/// The registers of `store_id` (of every store when `None`) whose current day at `now` was
/// closed early, by id.
pub async fn closed_days(app: &App, store_id: Option<&StoreId>, now: Timestamp) -> Result<Vec<ClosedDay>, Error> {
    Ok(app.journal().closed_days(store_id, now).await?)
}
