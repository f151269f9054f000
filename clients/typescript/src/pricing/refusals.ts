// Each refusal as the server words it (`till-api`'s `phrases.rs` and `error.rs`), so that a till
// shows the same sentence offline.

import { display } from "./money.js";
import type { CouponUnusable, FieldError, PricingRefusal, RefusalReason } from "./types.js";

function business(message: string, reason: RefusalReason): PricingRefusal {
  return { code: "BUSINESS_RULE_VIOLATION", statusCode: 422, message, reason };
}

export function emptyCart(): PricingRefusal {
  return business("The cart is empty: a sale needs at least one line.", { kind: "empty_cart" });
}

export function lineWithoutArticle(lineId: string): PricingRefusal {
  return business(`Line ${lineId} names no article (skuId is null) and is not marked custom.`, {
    kind: "line_without_article",
    lineId,
  });
}

export function notInCatalog(lineId: string, skuId: string): PricingRefusal {
  return business(`Line ${lineId}: article ${skuId} is not in the catalog.`, { kind: "not_in_catalog", lineId, skuId });
}

const UNUSABLE: Record<CouponUnusable, string> = {
  unknown: "it does not exist",
  inactive: "it is not active",
  not_yet_valid: "it is not valid yet",
  expired: "it has expired",
  exhausted: "it has been redeemed as many times as it may be",
};

export function couponUnusable(code: string, why: CouponUnusable): PricingRefusal {
  return business(`Coupon ${code} cannot be used: ${UNUSABLE[why]}.`, { kind: "coupon_unusable", code, why });
}

export function couponBelowMinimum(code: string, minimumCents: number, basketCents: number): PricingRefusal {
  return business(
    `Coupon ${code} needs a basket of at least ${display(minimumCents)}; this one comes to ${display(basketCents)}.`,
    { kind: "coupon_below_minimum", code, minimumCents, basketCents },
  );
}

export function amountsTooLarge(): PricingRefusal {
  return business("The sale's amounts are too large to be represented.", { kind: "amounts_too_large" });
}

export function quantitiesTooLarge(): PricingRefusal {
  return business("The sale's quantities are too large to be represented.", { kind: "quantities_too_large" });
}

/** A 400 listing every problem of the request, in the order the server finds them. */
export function invalid(fieldErrors: FieldError[]): PricingRefusal {
  const [only] = fieldErrors;
  const message =
    fieldErrors.length === 1 && only !== undefined
      ? `The request is invalid: ${only.field} ${only.message}.`
      : `The request is invalid: ${fieldErrors.length} fields need attention.`;
  return { code: "VALIDATION_FAILED", statusCode: 400, message, fieldErrors, reason: { kind: "invalid_request" } };
}
