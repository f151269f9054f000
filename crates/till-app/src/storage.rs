//! What storage answers besides its records: its errors and the windows it pages by. The API
//! names them through this module, never through the storage crate.

pub use till_store::page::{Newest, Window};
pub use till_store::{Conflict, Forbidden, InstrumentRefusal, NewIdOf, Rule, Stale, StoreError};
