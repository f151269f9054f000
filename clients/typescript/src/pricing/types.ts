// What offline pricing takes and gives. The answer and the refusal are the server's shapes
// (docs/openapi.json, operation `priceCart`), so that a till shows the same thing online and
// offline; the inputs are what a till keeps of the back office's answers.

import type { components } from "../generated/openapi.js";

type Schemas = components["schemas"];

/** `POST /v1/checkout/price`'s 200 answer. */
export type PriceQuote = Schemas["PriceQuote"];
export type QuotedLine = Schemas["QuotedLine"];
export type QuotedAdjustment = Schemas["QuotedAdjustment"];
export type QuotedVat = Schemas["QuotedVat"];
export type FieldError = Schemas["FieldError"];

/** A rule as `GET /v1/promotions` answers it. */
export type PromotionRule = Schemas["PromotionRule"];
/** A coupon as `GET /v1/coupons` answers it. */
export type CouponView = Schemas["CouponView"];
/** A discount the till declares, as the price request carries it. */
export type DeclaredDiscount = Schemas["DeclaredDiscountBody"];

/** A catalog price of an article, in force from `effectiveFrom` until the next one. */
export interface ArticlePrice {
  effectiveFrom: string;
  /** Unit price including VAT. */
  priceCents: number;
  /** Percent, as the catalog answers it: 20, 5.5. */
  vatRate: number;
}

/** A store's own price of an article, in force from `effectiveFrom` until the next one. */
export interface StorePrice {
  effectiveFrom: string;
  /** Unit price including VAT; null from the instant the store's own price was removed. */
  priceCents: number | null;
}

/** An article as an offline till holds it. */
export interface OfflineArticle {
  skuId: string;
  name: string;
  /** The catalog's prices, oldest first. */
  prices: readonly ArticlePrice[];
  /** The till's store's own prices, oldest first; empty when it has none. */
  storePrices: readonly StorePrice[];
}

/** Everything an offline till prices with, for its store. */
export interface OfflineData {
  /** The till's store: the one `storePrices` are of, and rules' `storeIds` are matched against. */
  storeId: string;
  articles: readonly OfflineArticle[];
  /** Every rule, inactive ones included (they are ignored). */
  promotions: readonly PromotionRule[];
  /** Every coupon, with its redemptions as last read. */
  coupons: readonly CouponView[];
}

/** A line of the cart. */
export interface CartLine {
  /** Unique in the cart; line discounts name it. */
  id: string;
  /** The article; null only on a custom line. */
  skuId: string | null;
  quantity: number;
  /** A self-priced line (free-text article, gift card): priced at its own `unitPrice` and `vatRate`. */
  custom?: boolean;
  /** A custom line's own unit price; ignored on a catalog line. */
  unitPrice?: number;
  /** A custom line's own VAT rate in percent; ignored on a catalog line. */
  vatRate?: number;
}

/** A cart to price, at the till's store. */
export interface OfflineCart {
  lines: readonly CartLine[];
  declaredDiscounts?: readonly DeclaredDiscount[];
  couponCode?: string | null;
  /** The customer's groups; null or absent for an anonymous sale (or a customer without a profile). */
  customerGroups?: readonly string[] | null;
  /** When the sale is rung: UTC, ending in `Z`. */
  issuedAt: string;
}

/** Why the server would refuse to price the cart, as its error envelope says it. */
export interface PricingRefusal {
  /** `VALIDATION_FAILED` (400) or `BUSINESS_RULE_VIOLATION` (422). */
  code: "VALIDATION_FAILED" | "BUSINESS_RULE_VIOLATION";
  statusCode: 400 | 422;
  /** The server's sentence, word for word. */
  message: string;
  /** On VALIDATION_FAILED only, as the server lists them. */
  fieldErrors?: FieldError[];
  /** The reason, to branch on. */
  reason: RefusalReason;
}

export type RefusalReason =
  | { kind: "invalid_request" }
  | { kind: "empty_cart" }
  | { kind: "line_without_article"; lineId: string }
  | { kind: "not_in_catalog"; lineId: string; skuId: string }
  | { kind: "coupon_unusable"; code: string; why: CouponUnusable }
  | { kind: "coupon_below_minimum"; code: string; minimumCents: number; basketCents: number }
  | { kind: "amounts_too_large" }
  | { kind: "quantities_too_large" };

export type CouponUnusable = "unknown" | "inactive" | "not_yet_valid" | "expired" | "exhausted";

export type PriceResult = { ok: true; quote: PriceQuote } | { ok: false; refusal: PricingRefusal };
