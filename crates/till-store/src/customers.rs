//! Loyalty customers.

use crate::db::Store;
use crate::error::StoreError;
use crate::sql::query;
use jiff::Timestamp;
use till_core::ids::CustomerId;
use till_core::instant::from_micros;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoyaltyAccount {
    pub customer_id: CustomerId,
    pub points: i64,
    pub enrolled_at: Timestamp,
}

impl Store {
    /// `None` for a customer never seen at a sale.
    pub async fn loyalty_account(&self, customer_id: &CustomerId) -> Result<Option<LoyaltyAccount>, StoreError> {
        let row = query("SELECT points, enrolled_at FROM customers WHERE customer_id = $1")
            .bind(customer_id.as_str())
            .fetch_optional(self.reader())
            .await?;
        row.map(|row| {
            Ok(LoyaltyAccount {
                customer_id: customer_id.clone(),
                points: row.try_get("points")?,
                enrolled_at: from_micros(row.try_get("enrolled_at")?),
            })
        })
        .transpose()
    }
}
