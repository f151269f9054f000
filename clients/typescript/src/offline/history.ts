// An article's prices over time, as far as a till can know them. The server answers the price
// in force now and those scheduled later, never the past ones; a till that prices a sale rung
// a while ago (before it applied a change) needs the price in force then. So the offline store
// keeps what it learnt: each read adds the price in force from the instant of the write that
// made it (the article's `updatedAt`, or the event's `occurredAt` for a store's price) and
// keeps the earlier ones.

import type { ArticlePrice, StorePrice } from "../pricing/index.js";
import type { components } from "../generated/openapi.js";

type CatalogItemView = components["schemas"]["CatalogItemView"];
type ScheduledStorePrice = components["schemas"]["ScheduledStorePriceView"];

/**
 * Nanoseconds since the epoch of a UTC instant as the server writes them
 * (`2026-03-01T22:41:07.250123Z`, `2026-03-01T22:41Z`); an offset (`+01:00`) is read too.
 */
export function instantNanos(text: string): bigint {
  const found = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  if (found === null) throw new RangeError(`not an instant: ${text}`);
  const [, minutes, seconds = "00", fraction = "", zone] = found;
  const millis = Date.parse(`${minutes}:${seconds}${zone === "Z" ? "Z" : zone}`);
  if (Number.isNaN(millis)) throw new RangeError(`not an instant: ${text}`);
  return BigInt(millis) * 1_000_000n + BigInt(fraction.padEnd(9, "0"));
}

export function compareInstantTexts(a: string, b: string): number {
  const x = instantNanos(a);
  const y = instantNanos(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The catalog prices of an article first read (a snapshot): in force from `since` on, then those scheduled. */
export function firstCatalogPrices(view: CatalogItemView, since: string): ArticlePrice[] {
  return [
    { effectiveFrom: since, priceCents: view.priceCents, vatRate: view.vatRate },
    ...view.scheduledPrices.map((p) => ({ effectiveFrom: p.effectiveFrom, priceCents: p.priceCents, vatRate: p.vatRate })),
  ];
}

/**
 * The catalog prices after reading `view` again. What was in force before the article's last
 * write (`updatedAt`) stays; the price in force now starts at that write, unless a price the till
 * already knew as scheduled (and that started since) is the one in force now; then the server's
 * schedule.
 */
export function nextCatalogPrices(known: readonly ArticlePrice[], view: CatalogItemView): ArticlePrice[] {
  const since = instantNanos(view.updatedAt);
  const scheduled = view.scheduledPrices.map((p) => ({ effectiveFrom: p.effectiveFrom, priceCents: p.priceCents, vatRate: p.vatRate }));
  const future = new Set(scheduled.map((p) => instantNanos(p.effectiveFrom)));
  const before = known.filter((p) => instantNanos(p.effectiveFrom) < since);
  const startedSince = known.filter((p) => {
    const from = instantNanos(p.effectiveFrom);
    return from > since && !future.has(from);
  });
  const last = startedSince[startedSince.length - 1];
  if (last !== undefined && last.priceCents === view.priceCents && last.vatRate === view.vatRate) {
    return [...before, ...startedSince, ...scheduled];
  }
  return [...before, { effectiveFrom: view.updatedAt, priceCents: view.priceCents, vatRate: view.vatRate }, ...scheduled];
}

/** A store's own prices of an article, as the snapshot gives them: in force at `since` (or none), then scheduled. */
export function firstStorePrices(inForce: number | null | undefined, scheduled: readonly ScheduledStorePrice[], since: string): StorePrice[] {
  const prices: StorePrice[] = inForce == null ? [] : [{ effectiveFrom: since, priceCents: inForce }];
  return [...prices, ...scheduled.map((p) => ({ effectiveFrom: p.effectiveFrom, priceCents: p.priceCents }))];
}

/**
 * A store's own prices after reading them again, following a change at `since` (the event's
 * `occurredAt`): the earlier ones stay, the one in force now (or none: null, once there were
 * some) starts at `since`, then the schedule.
 */
export function nextStorePrices(
  known: readonly StorePrice[],
  inForce: number | null,
  scheduled: readonly ScheduledStorePrice[],
  since: string,
): StorePrice[] {
  const at = instantNanos(since);
  const future = new Set(scheduled.map((p) => instantNanos(p.effectiveFrom)));
  const before = known.filter((p) => instantNanos(p.effectiveFrom) < at);
  const startedSince = known.filter((p) => {
    const from = instantNanos(p.effectiveFrom);
    return from > at && !future.has(from);
  });
  const later = scheduled.map((p) => ({ effectiveFrom: p.effectiveFrom, priceCents: p.priceCents }));
  const last = startedSince[startedSince.length - 1];
  if (last !== undefined && last.priceCents === inForce) {
    return [...before, ...startedSince, ...later];
  }
  const now: StorePrice[] = inForce === null && before.every((p) => p.priceCents === null) ? [] : [{ effectiveFrom: since, priceCents: inForce }];
  return [...before, ...now, ...later];
}
