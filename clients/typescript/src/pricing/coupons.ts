// Coupons as `GET /v1/coupons` answers them, and whether a presented one may be used at the
// sale's instant (`till_app::quote::coupon_to_apply`). Its minimum basket is pricing's to check.

import { parseInstant, type Instant } from "./instant.js";
import { cents } from "./money.js";
import type { CouponToApply } from "./price.js";
import type { CouponUnusable, CouponView } from "./types.js";

export interface Coupon {
  code: string;
  reward: { percentBps: number } | { amountCents: number };
  minBasket: number;
  validFrom: Instant | null;
  validUntil: Instant | null;
  maxRedemptions: number | null;
  /** Sales that redeemed it when it was read: an offline till cannot know of later ones. */
  redemptions: number;
  active: boolean;
}

export function readCoupon(view: CouponView): Coupon {
  const reward =
    view.percentBps != null
      ? { percentBps: view.percentBps }
      : view.amountCents != null
        ? { amountCents: cents(view.amountCents) }
        : null;
  if (reward === null) {
    throw new RangeError(`coupon ${view.code} has neither percentBps nor amountCents`);
  }
  return {
    code: view.code,
    reward,
    minBasket: cents(view.minBasketCents),
    validFrom: view.validFrom == null ? null : parseInstant(view.validFrom, false),
    validUntil: view.validUntil == null ? null : parseInstant(view.validUntil, false),
    maxRedemptions: view.maxRedemptions ?? null,
    redemptions: view.redemptions,
    active: view.active,
  };
}

/** The coupon to apply, or why it cannot be used at `at`, checked in the server's order. */
export function couponToApply(coupon: Coupon | undefined, at: Instant): CouponToApply | CouponUnusable {
  if (coupon === undefined) {
    return "unknown";
  }
  if (!coupon.active) {
    return "inactive";
  }
  if (coupon.validFrom !== null && at < coupon.validFrom) {
    return "not_yet_valid";
  }
  if (coupon.validUntil !== null && at > coupon.validUntil) {
    return "expired";
  }
  if (coupon.maxRedemptions !== null && coupon.redemptions >= coupon.maxRedemptions) {
    return "exhausted";
  }
  return { code: coupon.code, reward: coupon.reward, minBasket: coupon.minBasket };
}
