//! Coupons presented by code at the till.

use crate::money::{Bps, Cents};
use jiff::Timestamp;

/// What a coupon takes off the basket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CouponReward {
    Percent(Bps),
    Amount(Cents),
}

/// A coupon as provisioned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coupon {
    pub reward: CouponReward,
    pub min_basket: Cents,
    pub valid_from: Option<Timestamp>,
    pub valid_until: Option<Timestamp>,
    pub max_redemptions: Option<i64>,
    pub active: bool,
}

impl Coupon {
    /// Whether the coupon may be presented at `from` or later, before its redemptions run
    /// out: what a till selling offline from then on must know of.
    pub fn may_apply_from(&self, from: Timestamp) -> bool {
        self.active && self.valid_until.is_none_or(|until| from <= until)
    }
}
