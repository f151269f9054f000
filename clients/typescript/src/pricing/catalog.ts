// The price authority as an offline till holds it (`till_core::catalog`): each article with its
// catalog prices over time and the store's own prices over time. A sale is priced with the
// prices in force at its `issuedAt`; the store's own price wins over the catalog's at each
// instant it has one, and the VAT rate is always the catalog's.

import { compareInstants, parseInstant, type Instant } from "./instant.js";
import { cents } from "./money.js";
import type { OfflineArticle } from "./types.js";
import { vatRateOfPercent, type VatRate } from "./vat.js";

interface Dated {
  from: Instant;
}

interface CatalogPrice extends Dated {
  price: number;
  vatRate: VatRate;
}

interface StorePrice extends Dated {
  /** Null where the store's own price was removed: from then on it sells at the catalog's. */
  price: number | null;
}

/** An article ready to be priced at any instant. */
export interface Article {
  skuId: string;
  name: string;
  prices: CatalogPrice[];
  storePrices: StorePrice[];
}

/** What the article sells at, at one instant, in the store. */
export interface ArticleAt {
  price: number;
  vatRate: VatRate;
}

/** Reads an article of the offline data; throws on a value the server could not have sent. */
export function readArticle(article: OfflineArticle): Article {
  const prices = schedule(
    article.prices.map((p) => {
      const vatRate = vatRateOfPercent(p.vatRate);
      if (vatRate === null) {
        throw new RangeError(`article ${article.skuId}: VAT rate ${p.vatRate} is not a rate`);
      }
      return { from: parseInstant(p.effectiveFrom, false), price: cents(p.priceCents), vatRate };
    }),
  );
  const storePrices = schedule(
    article.storePrices.map((p) => ({
      from: parseInstant(p.effectiveFrom, false),
      price: p.priceCents === null ? null : cents(p.priceCents),
    })),
  );
  return { skuId: article.skuId, name: article.name, prices, storePrices };
}

/**
 * The article as the store sells it at `at` (`Article::in_store`); null for an article without
 * any price. Before the article's first price it sells as at that price's start: a till's clock
 * a little behind the back office's may name an instant just before the article was created.
 */
export function articleAt(article: Article, at: Instant): ArticleAt | null {
  const first = article.prices[0];
  if (first === undefined) {
    return null;
  }
  const when = at > first.from ? at : first.from;
  const inForce = inForceAt(article.prices, when);
  if (inForce === undefined) {
    return null;
  }
  const own = inForceAt(article.storePrices, when)?.price ?? null;
  return { price: own ?? inForce.price, vatRate: inForce.vatRate };
}

/** Oldest first, one per instant: of two at one instant the later given stays (`Schedule::new`). */
function schedule<P extends Dated>(prices: P[]): P[] {
  const sorted = [...prices].reverse().sort((a, b) => compareInstants(a.from, b.from));
  return sorted.filter((price, i) => i === 0 || sorted[i - 1]?.from !== price.from);
}

/** The latest that started at or before `at`. */
function inForceAt<P extends Dated>(schedule: readonly P[], at: Instant): P | undefined {
  let low = 0;
  let high = schedule.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((schedule[mid]?.from ?? 0n) <= at) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return schedule[low - 1];
}
