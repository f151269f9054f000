//! Loyalty customers.

use crate::db::Store;
use crate::error::StoreError;
use crate::sql::{Conn, query};
use crate::stored_value::RECORD_POINTS;
use futures::future::BoxFuture;
pub use till_app::storage::stored_value::{Enrollment, LoyaltyAccount};
use till_core::ids::CustomerId;
use till_core::instant::{from_micros, to_micros};
use till_core::stored_value::PointsActivity;

impl Store {
    /// Enrolls a customer with their opening points, an `adjust` activity of their ledger;
    /// `false`, changing nothing, for a customer already known.
    pub async fn enroll_customer(&self, enrollment: Enrollment) -> Result<bool, StoreError> {
        self.write(enrollment, |c, enrollment| Box::pin(enroll(c, enrollment)))
            .await
    }

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

fn enroll<'a>(conn: &'a mut Conn, enrollment: &'a Enrollment) -> BoxFuture<'a, Result<bool, StoreError>> {
    Box::pin(async move {
        let (customer, points, now) = (
            enrollment.customer_id.as_str(),
            i64::from(enrollment.points),
            to_micros(enrollment.now),
        );
        let enrolled = query(
            "INSERT INTO customers (customer_id, points, enrolled_at, updated_at) VALUES ($1, $2, $3, $3) \
             ON CONFLICT (customer_id) DO NOTHING RETURNING customer_id",
        )
        .bind(customer)
        .bind(points)
        .bind(now)
        .fetch_optional(&mut *conn)
        .await?
        .is_some();
        if enrolled && points > 0 {
            query(RECORD_POINTS)
                .bind(customer)
                .bind(PointsActivity::Adjust.as_str())
                .bind(points)
                .bind(None::<&str>)
                .bind(now)
                .execute(&mut *conn)
                .await?;
        }
        Ok(enrolled)
    })
}
