//! Customers as their loyalty points stand: enrolled at the first sale that names them, their
//! points moved by every sale and return after.

use crate::app::App;
use crate::refusal::Error;
use till_core::ids::CustomerId;

pub use crate::storage::stored_value::LoyaltyAccount;

/// `None` for a customer no sale has named yet.
pub async fn loyalty_account(app: &App, customer_id: &CustomerId) -> Result<Option<LoyaltyAccount>, Error> {
    Ok(app.stored_value().loyalty_account(customer_id).await?)
}
