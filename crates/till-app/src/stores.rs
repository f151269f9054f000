//! The store network as the back office provisions it. Once the network has a store, tickets
//! and sessions must name one of its stores.

use crate::app::App;
use crate::refusal::Error;
use crate::storage::Window;
use till_core::ids::StoreId;
use till_core::store::StoreProfile;

pub use crate::storage::people::StoreRecord;

/// A store written: the record as stored, and whether it was created.
pub struct Written {
    pub record: StoreRecord,
    pub created: bool,
}

/// Creates or replaces the store `store_id`; the same profile again changes nothing.
pub async fn put_store(app: &App, store_id: StoreId, profile: StoreProfile) -> Result<Written, Error> {
    let (record, created) = app.people().put_store(store_id, profile, app.now()).await?;
    Ok(Written { record, created })
}

pub async fn get_store(app: &App, store_id: &StoreId) -> Result<Option<StoreRecord>, Error> {
    Ok(app.people().get_store(store_id).await?)
}

/// The stores by id, in `window`.
pub async fn list_stores(app: &App, window: &Window<StoreId>) -> Result<Vec<StoreRecord>, Error> {
    Ok(app.people().list_stores(window).await?)
}
