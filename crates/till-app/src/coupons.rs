//! Coupons a customer presents at the till: their terms written by the back office, read by
//! code. A replace keeps the redemptions already made; storage refuses terms that allow fewer.

use crate::app::App;
use crate::refusal::Error;
use crate::storage::Window;
use till_core::coupon::Coupon;
use till_core::ids::CouponCode;

pub use crate::storage::offers::CouponRecord;

/// Creates or replaces a coupon's terms; `true` when created.
pub async fn put(app: &App, code: CouponCode, coupon: Coupon) -> Result<(CouponRecord, bool), Error> {
    Ok(app.coupons().put_coupon(code, coupon, app.now()).await?)
}

pub async fn coupon(app: &App, code: &CouponCode) -> Result<Option<CouponRecord>, Error> {
    Ok(app.coupons().get_coupon(code).await?)
}

/// The coupons by code, in `window`.
pub async fn coupons(app: &App, window: &Window<CouponCode>) -> Result<Vec<CouponRecord>, Error> {
    Ok(app.coupons().list_coupons(window).await?)
}
