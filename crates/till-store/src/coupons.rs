//! Coupons presented by code.

use crate::db::Store;
use crate::error::{Rule, StoreError};
use crate::feed::{self, NewEvent};
use crate::page::{Keyset, Window};
use crate::sql::{Conn, Row, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
pub use till_app::storage::offers::CouponRecord;
use till_core::coupon::{Coupon, CouponReward};
use till_core::documents::CouponChanged;
use till_core::events::EventType;
use till_core::ids::CouponCode;
use till_core::instant::{from_micros, to_micros};
use till_core::money::{Bps, Cents};

struct PutCoupon {
    code: CouponCode,
    coupon: Coupon,
    now: i64,
}

impl Store {
    pub async fn put_coupon(
        &self,
        code: CouponCode,
        coupon: Coupon,
        now: Timestamp,
    ) -> Result<(CouponRecord, bool), StoreError> {
        self.write(
            PutCoupon {
                code,
                coupon,
                now: to_micros(now),
            },
            |c, i| Box::pin(put_coupon(c, i)),
        )
        .await
    }

    pub async fn get_coupon(&self, code: &CouponCode) -> Result<Option<CouponRecord>, StoreError> {
        let row = query(SELECT_COUPON)
            .bind(code.as_str())
            .fetch_optional(self.reader())
            .await?;
        row.as_ref().map(coupon_from_row).transpose()
    }

    pub async fn list_coupons(&self, window: &Window<CouponCode>) -> Result<Vec<CouponRecord>, StoreError> {
        let after = window.after.as_ref().map(CouponCode::as_str);
        let rows = Keyset::new(LIST_COUPONS)
            .by_id("code", after, window.take)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(coupon_from_row).collect()
    }
}

const SELECT_COUPON: &str = "SELECT code, percent_bps, amount_cents, min_basket_cents, valid_from, valid_until, \
     max_redemptions, redemptions, active, created_at, updated_at FROM coupons WHERE code = $1";

pub(crate) const LIST_COUPONS: &str = "SELECT code, percent_bps, amount_cents, min_basket_cents, valid_from, valid_until, \
     max_redemptions, redemptions, active, created_at, updated_at FROM coupons";

fn put_coupon<'a>(conn: &'a mut Conn, input: &'a PutCoupon) -> BoxFuture<'a, Result<(CouponRecord, bool), StoreError>> {
    Box::pin(async move {
        let existing = query("SELECT redemptions FROM coupons WHERE code = $1")
            .bind(input.code.as_str())
            .fetch_optional(&mut *conn)
            .await?;
        let coupon = &input.coupon;
        if let (Some(row), Some(max)) = (&existing, coupon.max_redemptions) {
            let redemptions: i64 = row.try_get("redemptions")?;
            if redemptions > max {
                return Err(StoreError::Rule(Rule::RedemptionsAboveMaximum { redemptions }));
            }
        }
        let (percent, amount) = match coupon.reward {
            CouponReward::Percent(bps) => (Some(bps.get()), None),
            CouponReward::Amount(cents) => (None, Some(cents.get())),
        };
        let row = query(
            "INSERT INTO coupons (code, percent_bps, amount_cents, min_basket_cents, valid_from, valid_until, \
                 max_redemptions, redemptions, active, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $9, $9) \
             ON CONFLICT (code) DO UPDATE SET percent_bps = excluded.percent_bps, amount_cents = excluded.amount_cents, \
                 min_basket_cents = excluded.min_basket_cents, valid_from = excluded.valid_from, \
                 valid_until = excluded.valid_until, max_redemptions = excluded.max_redemptions, \
                 active = excluded.active, updated_at = excluded.updated_at \
             RETURNING code, percent_bps, amount_cents, min_basket_cents, valid_from, valid_until, \
                 max_redemptions, redemptions, active, created_at, updated_at",
        )
        .bind(input.code.as_str())
        .bind(percent)
        .bind(amount)
        .bind(coupon.min_basket.get())
        .bind(coupon.valid_from.map(to_micros))
        .bind(coupon.valid_until.map(to_micros))
        .bind(coupon.max_redemptions)
        .bind(i64::from(coupon.active))
        .bind(input.now)
        .fetch_one(&mut *conn)
        .await?;
        NewEvent {
            kind: EventType::CouponChanged,
            occurred_at: input.now,
            store_id: None,
            register_id: None,
            subject: input.code.as_str(),
            data: Some(feed::data_of(&CouponChanged {
                code: input.code.as_str(),
            })?),
        }
        .record(conn)
        .await?;
        Ok((coupon_from_row(&row)?, existing.is_none()))
    })
}

pub(crate) fn coupon_from_row(row: &Row) -> Result<CouponRecord, StoreError> {
    let percent: Option<i64> = row.try_get("percent_bps")?;
    let amount: Option<i64> = row.try_get("amount_cents")?;
    let reward = match (percent, amount) {
        (Some(bps), None) => CouponReward::Percent(Bps::new(bps).ok_or_else(|| corrupt("percent"))?),
        (None, Some(cents)) => CouponReward::Amount(Cents::new(cents).ok_or_else(|| corrupt("amount"))?),
        _ => return Err(corrupt("reward")),
    };
    let min_basket: i64 = row.try_get("min_basket_cents")?;
    Ok(CouponRecord {
        code: CouponCode::from_trusted(row.try_get("code")?),
        coupon: Coupon {
            reward,
            min_basket: Cents::new(min_basket).ok_or_else(|| corrupt("minimum basket"))?,
            valid_from: row.try_get::<Option<i64>>("valid_from")?.map(from_micros),
            valid_until: row.try_get::<Option<i64>>("valid_until")?.map(from_micros),
            max_redemptions: row.try_get("max_redemptions")?,
            active: row.try_get::<i64>("active")? != 0,
        },
        redemptions: row.try_get("redemptions")?,
        created_at: from_micros(row.try_get("created_at")?),
        updated_at: from_micros(row.try_get("updated_at")?),
    })
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt(format!("coupon {what} out of range"))
}
