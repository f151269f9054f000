//! Promotion rules and coupons as stored.

use super::*;
use jiff::Timestamp;
use till_core::coupon::Coupon;
use till_core::ids::{CouponCode, PromotionId};
use till_core::promotions::PromotionRule;

/// How a conditional replace went.
#[derive(Clone, Debug)]
pub enum Replaced {
    Done(Box<StoredRule>),
    NotFound,
    /// `If-Match` named another version; this is the current one.
    Stale(i64),
}

#[derive(Clone, Debug)]
pub struct StoredRule {
    pub rule: PromotionRule,
    pub version: i64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

#[derive(Clone, Debug)]
pub struct CouponRecord {
    pub code: CouponCode,
    pub coupon: Coupon,
    pub redemptions: i64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// Promotion rules, with the revision every write moves.
#[async_trait::async_trait]
pub trait Promotions: Send + Sync {
    /// Every rule, by id.
    async fn promotions(&self) -> Result<Vec<StoredRule>, StoreError>;
    /// The revision of the rule set: it changes with every promotion write, on any node.
    async fn promotion_revision(&self) -> Result<i64, StoreError>;
    async fn get_promotion(&self, id: &PromotionId) -> Result<Option<StoredRule>, StoreError>;
    /// Creates or replaces a rule; `true` when created.
    async fn upsert_promotion(&self, rule: PromotionRule, now: Timestamp) -> Result<(StoredRule, bool), StoreError>;
    /// Replaces an existing rule wholesale, never creating one. With `expected`, only if the
    /// stored version is that one.
    async fn replace_promotion(
        &self,
        rule: PromotionRule,
        expected: Option<i64>,
        now: Timestamp,
    ) -> Result<Replaced, StoreError>;
    /// Turns a rule off; `None` when it does not exist.
    async fn deactivate_promotion(&self, id: PromotionId, now: Timestamp) -> Result<Option<StoredRule>, StoreError>;
}

/// Coupons and their redemptions.
#[async_trait::async_trait]
pub trait Coupons: Send + Sync {
    async fn get_coupon(&self, code: &CouponCode) -> Result<Option<CouponRecord>, StoreError>;
    /// The coupons by code, in `window`.
    async fn list_coupons(&self, window: &Window<CouponCode>) -> Result<Vec<CouponRecord>, StoreError>;
    /// Creates or replaces a coupon's terms; the redemption count is kept.
    async fn put_coupon(
        &self,
        code: CouponCode,
        coupon: Coupon,
        now: Timestamp,
    ) -> Result<(CouponRecord, bool), StoreError>;
}
