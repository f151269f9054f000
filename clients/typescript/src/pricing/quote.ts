// A cart's price as `POST /v1/checkout/price` answers it (`till_app::quote` and the route's
// `PriceQuote`), from what an offline till holds: the checks and refusals in the server's
// order, then the answer in its shape.

import { articleAt, readArticle, type Article, type ArticleAt } from "./catalog.js";
import { couponToApply, readCoupon, type Coupon } from "./coupons.js";
import { MAX_SAFE, Overflow, add } from "./money.js";
import { CouponBelowMinimum, price, type CouponToApply, type LineToPrice, type Priced } from "./price.js";
import { applyPromotions, type PromoLine, type PromotionOutcome } from "./promotions.js";
import * as refuse from "./refusals.js";
import { RuleBook, admits, readRule, type Rule } from "./rules.js";
import type { OfflineCart, OfflineData, PriceQuote, PriceResult, QuotedAdjustment } from "./types.js";
import { checkCart } from "./validate.js";
import { vatRateOfPercent, vatRatePercent } from "./vat.js";

/** The sku a custom line reports. */
const CUSTOM_SKU = "0".repeat(64);

/** Prices carts for one store from what an offline till holds, read once. */
export class Pricer {
  private readonly storeId: string;
  private readonly articles: Map<string, Article>;
  private readonly book: RuleBook;
  private readonly coupons: Map<string, Coupon>;

  /** Throws when the data holds a value the server could not have answered. */
  constructor(data: OfflineData) {
    this.storeId = data.storeId;
    this.articles = new Map(data.articles.map((article) => [article.skuId, readArticle(article)]));
    this.book = new RuleBook(data.promotions.map(readRule));
    this.coupons = new Map(data.coupons.map((coupon) => [coupon.code, readCoupon(coupon)]));
  }

  /** The server's answer to pricing `cart` at its `issuedAt`: the quote, or the refusal. */
  price(cart: OfflineCart): PriceResult {
    const checked = checkCart(cart);
    if (Array.isArray(checked)) {
      return { ok: false, refusal: refuse.invalid(checked) };
    }
    if (cart.lines.length === 0) {
      return { ok: false, refusal: refuse.emptyCart() };
    }
    const at = checked.issuedAt;

    // Each line at the price the server stands behind, in cart order.
    const lines: LineToPrice[] = [];
    for (const line of cart.lines) {
      let inForce: ArticleAt | null;
      if (line.custom === true) {
        inForce = { price: line.unitPrice ?? 0, vatRate: vatRateOfPercent(line.vatRate ?? 0) ?? 0 };
      } else if (line.skuId === null) {
        return { ok: false, refusal: refuse.lineWithoutArticle(line.id) };
      } else {
        const article = this.articles.get(line.skuId);
        inForce = article === undefined ? null : articleAt(article, at);
        if (inForce === null) {
          return { ok: false, refusal: refuse.notInCatalog(line.id, line.skuId) };
        }
      }
      lines.push({ lineId: line.id, unitPrice: inForce.price, quantity: line.quantity, vatRate: inForce.vatRate });
    }

    // The promotions in force then, for this customer.
    const catalogSkus = cart.lines.flatMap((line) => (line.custom !== true && line.skuId !== null ? [line.skuId] : []));
    const groups = cart.customerGroups == null ? null : new Set(cart.customerGroups);
    const candidates = this.book.candidates(catalogSkus, this.storeId, at).filter((rule) => admits(rule, groups));
    const promoLines: PromoLine[] = cart.lines.map((line, i) => ({
      lineId: line.id,
      sku: line.custom === true ? null : line.skuId,
      unitPrice: lines[i]?.unitPrice ?? 0,
      quantity: line.quantity,
    }));
    let promotions: PromotionOutcome;
    try {
      promotions = applyPromotions(candidates, promoLines);
    } catch (error) {
      return overflowed(error);
    }

    // A presented coupon, if it may be used then.
    let coupon: CouponToApply | null = null;
    if (cart.couponCode != null) {
      const found = couponToApply(this.coupons.get(cart.couponCode), at);
      if (typeof found === "string") {
        return { ok: false, refusal: refuse.couponUnusable(cart.couponCode, found) };
      }
      coupon = found;
    }

    let priced: Priced;
    try {
      priced = price({
        lines,
        promotions: promotions.reductions,
        basketPromotions: promotions.basket,
        declared: checked.declared,
        coupon,
      });
    } catch (error) {
      if (error instanceof CouponBelowMinimum) {
        return { ok: false, refusal: refuse.couponBelowMinimum(error.code, error.minimum, error.basket) };
      }
      return overflowed(error);
    }

    // The units a cart holds, within what a client can represent; counted once priced.
    const itemCount = cart.lines.reduce((count, line) => count + line.quantity, 0);
    if (itemCount > MAX_SAFE) {
      return { ok: false, refusal: refuse.quantitiesTooLarge() };
    }
    return { ok: true, quote: render(cart, lines, priced, candidates, itemCount) };
  }
}

/** An Overflow is the sale's amounts too large; anything else is a bug, thrown on. */
function overflowed(error: unknown): PriceResult {
  if (error instanceof Overflow) {
    return { ok: false, refusal: refuse.amountsTooLarge() };
  }
  throw error;
}

/** The answer, as the route renders it. */
function render(
  cart: OfflineCart,
  lines: readonly LineToPrice[],
  priced: Priced,
  candidates: readonly Rule[],
  itemCount: number,
): PriceQuote {
  const quote: PriceQuote = {
    lines: cart.lines.map((line, i) => {
      const toPrice = lines[i] as LineToPrice;
      const result = priced.lines[i] as Priced["lines"][number];
      return {
        id: line.id,
        skuId: line.custom === true || line.skuId === null ? CUSTOM_SKU : line.skuId,
        quantity: line.quantity,
        unitPrice: toPrice.unitPrice,
        vatRate: vatRatePercent(toPrice.vatRate),
        grossCents: result.gross,
        promotionCents: result.promotion,
        discountCents: result.declared,
        ticketCents: result.ticket,
        netCents: result.net,
      };
    }),
    adjustments: adjustments(priced, new Map(candidates.map((rule) => [rule.id, rule.name]))),
    totals: { subtotal: priced.subtotal, total: priced.total, itemCount, lineCount: cart.lines.length },
    vat: priced.vat.map((v) => ({ vatRate: vatRatePercent(v.rate), totalCents: v.total, vatCents: v.vat })),
  };
  if (priced.coupon !== null) {
    quote.coupon = {
      code: priced.coupon.code,
      basketCents: priced.coupon.basket,
      discountAmountCents: priced.coupon.discount,
    };
  }
  return quote;
}

/** Each reduction once, with all it took, in the order pricing applied them (`Quote::adjustments`). */
function adjustments(priced: Priced, promotionNames: ReadonlyMap<string, string>): QuotedAdjustment[] {
  const found: QuotedAdjustment[] = [];
  for (const applied of priced.applied) {
    const existing = found.find((a) => a.source === applied.source && a.id === applied.id);
    if (existing !== undefined) {
      // Each sum stays within the subtotal.
      existing.amountCents = add(existing.amountCents, applied.amount);
      continue;
    }
    const adjustment: QuotedAdjustment = { source: applied.source, id: applied.id, amountCents: applied.amount };
    const name = applied.source === "promotion" ? promotionNames.get(applied.id) : undefined;
    if (name !== undefined) {
      adjustment.name = name;
    }
    found.push(adjustment);
  }
  return found;
}
