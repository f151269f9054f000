// Offline pricing: a cart priced exactly as the server's `POST /v1/checkout/price` prices it
// (till-core's pricing, promotions and coupons, till-app's quote), from what a till keeps of the
// back office's answers. Pure: no I/O, no clock, no dependency.
//
//   const pricer = new Pricer({ storeId, articles, promotions, coupons });
//   const result = pricer.price({ lines, declaredDiscounts, couponCode, customerGroups, issuedAt });
//   if (result.ok) show(result.quote); else show(result.refusal.message);

export { Pricer } from "./quote.js";
export { Overflow } from "./money.js";
export type {
  ArticlePrice,
  CartLine,
  CouponUnusable,
  CouponView,
  DeclaredDiscount,
  FieldError,
  OfflineArticle,
  OfflineCart,
  OfflineData,
  PriceQuote,
  PriceResult,
  PricingRefusal,
  PromotionRule,
  QuotedAdjustment,
  QuotedLine,
  QuotedVat,
  RefusalReason,
  StorePrice,
} from "./types.js";

import { Pricer } from "./quote.js";
import type { OfflineCart, OfflineData, PriceResult } from "./types.js";

/** Prices one cart; to price many against the same data, make one Pricer and reuse it. */
export function priceCart(data: OfflineData, cart: OfflineCart): PriceResult {
  return new Pricer(data).price(cart);
}
