// A world: two stores, a random catalog with scheduled price changes, store prices, customers
// in groups, a promotion rule set and coupons, provisioned through the HTTP API; then, per
// store, what an offline till holds of it, read back from the server's answers. Many carts are
// priced against one world; its rules are deactivated before the next.

import type { OfflineArticle, OfflineData, PromotionRule, StorePrice } from "../../src/pricing/index.js";
import type { components } from "../../src/generated/openapi.js";
import { parseInstant } from "../../src/pricing/instant.js";
import { DAY, HOUR, MINUTE, SECOND, formatInstant, nowNanos, type Form } from "./instants.js";
import type { Random } from "./random.js";
import { inPool, type Server } from "./server.js";

type CatalogItemView = components["schemas"]["CatalogItemView"];
type StorePriceView = components["schemas"]["StorePriceView"];
type CouponView = components["schemas"]["CouponView"];
type CouponViewPage = components["schemas"]["CouponViewPage"];

/** Customer groups rules and customers draw from; odd characters on purpose. */
export const GROUPS = ["staff", "trade", "vip", "club 😀", "Été"];

const VAT_RATES = [0, 2.1, 5.5, 10, 20, 20, 20, 8.5, 12.34];

/** Suffixes that make ids sort differently by UTF-16 units than by code points. */
const ODD = ["", "", "", "é", "😀", "\uff01", "Z", "~"];

export interface World {
  index: number;
  stores: [string, string];
  skus: string[];
  /** Each store's offline data. */
  data: Map<string, OfflineData>;
  /** Customers by id, with their groups. */
  customers: Map<string, string[]>;
  couponCodes: string[];
  ruleIds: string[];
  /** Instants where something starts or ends: where carts are rung around. */
  instants: bigint[];
  /** When the world was made; its scheduled changes start a day later at the earliest. */
  createdAt: bigint;
  base: bigint;
}

const CONCURRENCY = 16;

/**
 * Makes world `index`. Every random choice is drawn first, in order, so that the seed alone
 * decides the world; the writes then go concurrently.
 */
export async function provisionWorld(server: Server, rng: Random, index: number): Promise<World> {
  const createdAt = nowNanos();
  // Prices cannot start in the past: every scheduled change lies after `base`.
  const base = createdAt + DAY + BigInt(rng.int(0, 3600)) * SECOND;
  const instants: bigint[] = [createdAt, base];
  const moment = (): bigint => {
    const at = base + BigInt(rng.int(0, 6 * 24)) * HOUR + rng.pick([0n, 0n, BigInt(rng.int(1, 999_999_999)), 1n]);
    instants.push(at);
    return at;
  };
  const stores: [string, string] = [`w${index}-a${rng.pick(ODD)}`, `w${index}-b`];

  // The catalog: a first price now, then up to three scheduled changes.
  const articles = Array.from({ length: rng.int(3, 14) }, (_, i) => {
    const price = index === 0 && i === 0 ? 500 : randomPrice(rng);
    const vatRate = rng.pick(VAT_RATES);
    const changes = Array.from({ length: rng.weighted([[3, 0], [3, 1], [2, 2], [1, 3]] as const) }, () => ({
      priceCents: rng.chance(0.8) ? Math.max(0, price + rng.int(-price, price)) : randomPrice(rng),
      vatRate: rng.chance(0.7) ? vatRate : rng.pick(VAT_RATES),
      effectiveFrom: formatInstant(moment(), instantForm(rng)),
    }));
    return { sku: rng.hex(64), name: `Article ${index}.${i}`, price, vatRate, changes };
  });
  const skus = articles.map((a) => a.sku);
  const firstPrices = new Map(articles.map((a) => [a.sku, a.price]));

  // The stores' own prices: scheduled, sometimes removed and scheduled again.
  const ownPrice = (sku: string): { priceCents: number; effectiveFrom: string } => {
    const first = firstPrices.get(sku) ?? 100;
    return {
      priceCents: Math.max(0, first + rng.int(-first, Math.ceil(first / 2))),
      effectiveFrom: formatInstant(moment(), instantForm(rng)),
    };
  };
  const ownPrices = stores.flatMap((store, s) =>
    skus
      .filter(() => rng.chance(s === 0 ? 0.5 : 0.25))
      .map((sku) => {
        const before = Array.from({ length: rng.int(1, 3) }, () => ownPrice(sku));
        const removed = rng.chance(0.2);
        const after = removed ? Array.from({ length: rng.int(0, 2) }, () => ownPrice(sku)) : [];
        return { store, sku, before, removed, after };
      }),
  );

  // Customers, some in groups.
  const customers = new Map<string, string[]>();
  for (let c = rng.int(2, 5); c > 0; c--) {
    customers.set(`w${index}-c${c}`, rng.chance(0.2) ? [] : rng.subset(GROUPS, 1, 3));
  }

  // The rule set and the coupons.
  const window = (): { validFrom: string; validUntil: string } => randomWindow(rng, createdAt, base, moment, instants);
  const rules: PromotionRule[] = Array.from({ length: rng.int(0, 9) }, (_, r) =>
    randomRule(rng, `w${index}-r${rng.pick(ODD)}${r}`, skus, firstPrices, stores, window()),
  );
  const coupons = Array.from({ length: rng.int(2, 6) }, (_, c) => ({
    code: `W${index}-C${c}`,
    body: randomCoupon(rng, window),
  }));

  // The writes.
  for (const store of stores) {
    await server.ok("PUT", `/v1/stores/${encodeURIComponent(store)}`, { name: `Store ${store}` });
  }
  const schedules = new Map<string, OfflineArticle["prices"]>();
  await inPool(articles.length, CONCURRENCY, async (i) => {
    const article = articles[i] as (typeof articles)[number];
    const path = `/v1/catalog/skus/${article.sku}`;
    const { name, price, vatRate } = article;
    const created = await server.ok<CatalogItemView>("PUT", path, { name, priceCents: price, vatRate });
    for (const change of article.changes) {
      await server.ok("PUT", path, { name, ...change });
    }
    // Read back: the instants as stored (to the microsecond), the schedule as the server has it.
    const read = await server.ok<CatalogItemView>("GET", path);
    schedules.set(article.sku, [
      { effectiveFrom: created.createdAt, priceCents: read.priceCents, vatRate: read.vatRate },
      ...read.scheduledPrices,
    ]);
  });
  const storePrices = new Map<string, StorePrice[]>();
  await inPool(ownPrices.length, CONCURRENCY, async (p) => {
    const { store, sku, before, removed, after } = ownPrices[p] as (typeof ownPrices)[number];
    const path = `/v1/stores/${encodeURIComponent(store)}/prices/${sku}`;
    for (const body of before) {
      await server.ok("PUT", path, body);
    }
    const schedule: StorePrice[] = [];
    if (removed) {
      // A removal starts now and drops what was scheduled, none of which was in force yet.
      schedule.push({ effectiveFrom: formatInstant(nowNanos()), priceCents: null });
      await server.ok("DELETE", path);
      for (const body of after) {
        await server.ok("PUT", path, body);
      }
    }
    const read = await server.request("GET", path);
    if (read.status === 200) {
      schedule.push(...(read.body as StorePriceView).scheduledPrices);
    }
    storePrices.set(`${store} ${sku}`, schedule);
  });
  await inPool(customers.size, CONCURRENCY, async (c) => {
    const [id, groups] = [...customers][c] as [string, string[]];
    await server.ok("PUT", `/v1/customers/${encodeURIComponent(id)}`, { groups });
  });
  const couponCodes = coupons.map((c) => c.code);
  if (index === 0) {
    // Before the rules, so that the sale it takes is priced plainly.
    couponCodes.push(await exhaustedCoupon(server, stores[0], articles[0]?.sku ?? ""));
  }
  await inPool(rules.length, CONCURRENCY, async (r) => {
    await server.ok("POST", "/v1/promotions", rules[r]);
  });
  await inPool(coupons.length, CONCURRENCY, async (c) => {
    const { code, body } = coupons[c] as (typeof coupons)[number];
    await server.ok("PUT", `/v1/coupons/${encodeURIComponent(code)}`, body);
  });

  // What a till of each store holds, read back as the server answers it.
  const promotions = (await server.ok<{ promotions: PromotionRule[] }>("GET", "/v1/promotions")).promotions;
  const couponViews = await allCoupons(server);
  const data = new Map<string, OfflineData>();
  for (const store of stores) {
    data.set(store, {
      storeId: store,
      articles: articles.map(({ sku, name }) => ({
        skuId: sku,
        name,
        prices: schedules.get(sku) ?? [],
        storePrices: storePrices.get(`${store} ${sku}`) ?? [],
      })),
      promotions,
      coupons: couponViews,
    });
  }
  // Every instant as stored: the boundaries carts are rung at and around.
  const ours = new Set([...rules.map((rule) => rule.id), ...couponCodes]);
  for (const offline of data.values()) {
    for (const article of offline.articles) {
      for (const price of [...article.prices, ...article.storePrices]) {
        instants.push(parseInstant(price.effectiveFrom, false));
      }
    }
  }
  for (const rule of promotions.filter((rule) => ours.has(rule.id))) {
    instants.push(parseInstant(rule.validFrom, false), parseInstant(rule.validUntil, false));
  }
  for (const coupon of couponViews.filter((coupon) => ours.has(coupon.code))) {
    for (const text of [coupon.validFrom, coupon.validUntil]) {
      if (text != null) instants.push(parseInstant(text, false));
    }
  }
  return {
    index,
    stores,
    skus,
    data,
    customers,
    couponCodes,
    ruleIds: rules.map((rule) => rule.id),
    instants,
    createdAt,
    base,
  };
}

/** A validity window: always, a while after `base`, over before now, or a single instant. */
function randomWindow(
  rng: Random,
  createdAt: bigint,
  base: bigint,
  moment: () => bigint,
  instants: bigint[],
): { validFrom: string; validUntil: string } {
  const kind = rng.weighted([
    [5, "always"],
    [4, "window"],
    [1, "past"],
    [1, "instant"],
  ] as const);
  let from: bigint;
  let until: bigint;
  switch (kind) {
    case "always":
      [from, until] = [createdAt - 30n * DAY, base + 30n * DAY];
      break;
    case "window":
      from = moment();
      until = from + BigInt(rng.int(0, 72)) * HOUR + BigInt(rng.int(0, 59)) * MINUTE;
      instants.push(until);
      break;
    case "past":
      [from, until] = [createdAt - 10n * DAY, createdAt - DAY];
      instants.push(until);
      break;
    case "instant":
      from = moment();
      until = from;
      break;
  }
  const offset = (): Form => ({ offsetMinutes: rng.pick([-720, -90, 60, 120, 330, 840]) });
  return {
    validFrom: formatInstant(from, rng.chance(0.2) ? offset() : "full"),
    validUntil: formatInstant(until, rng.chance(0.2) ? offset() : "full"),
  };
}

/** Stops the world's rules, so that they do not reach the next world's carts. */
export async function retireWorld(server: Server, world: World): Promise<void> {
  await inPool(world.ruleIds.length, CONCURRENCY, async (r) => {
    await server.ok("POST", `/v1/promotions/${encodeURIComponent(world.ruleIds[r] ?? "")}/deactivate`);
  });
}

function instantForm(rng: Random): Form {
  return rng.weighted<Form>([
    [6, "full"],
    [1, "seconds"],
    [1, "minutes"],
    [1, { offsetMinutes: 120 }],
  ]);
}

function randomPrice(rng: Random): number {
  return rng.weighted([
    [3, () => rng.int(1, 999)],
    [5, () => rng.int(1000, 9999)],
    [2, () => rng.int(10_000, 500_000)],
    [0.3, () => 0],
    // Near what the server can represent: quantities then overflow.
    [0.2, () => rng.int(1e12, 2 ** 52)],
  ] as const)();
}

function randomPercent(rng: Random): number {
  return rng.weighted([
    [3, () => rng.pick([500, 1000, 1500, 2000, 2500, 3333, 5000])],
    [1, () => 10_000],
    [3, () => rng.int(1, 10_000)],
  ] as const)();
}

function randomRule(
  rng: Random,
  id: string,
  skus: string[],
  prices: ReadonlyMap<string, number>,
  stores: [string, string],
  window: { validFrom: string; validUntil: string },
): PromotionRule {
  const common: Record<string, unknown> = { id, name: `Rule ${id}`, ...window };
  if (rng.chance(0.8)) common["priority"] = rng.int(-2, 3);
  if (rng.chance(0.8)) common["exclusive"] = rng.chance(0.15);
  const storeIds = rng.weighted([
    [12, null],
    [3, [stores[0]]],
    [2, [stores[1]]],
    [2, [...stores]],
    [1, ["nowhere"]],
  ] as const);
  if (storeIds !== null) common["storeIds"] = storeIds;
  if (rng.chance(0.3)) common["customerGroups"] = rng.subset(GROUPS, 1, 2);
  if (rng.chance(0.08)) common["active"] = false;
  const products = (): string[] => rng.subset(skus, 1, 3);
  const kind = rng.weighted([
    [3, "percent_off"],
    [2, "basket"],
    [3, "bogo"],
    [2, "bundle"],
  ] as const);
  switch (kind) {
    case "percent_off":
      return {
        ...common,
        type: "percent_off",
        productIds: products(),
        percentBps: randomPercent(rng),
        ...(rng.chance(0.4) ? { minSubtotalCents: rng.int(0, 20_000) } : {}),
      } as PromotionRule;
    case "basket":
      return {
        ...common,
        type: "percent_off",
        percentBps: rng.chance(0.8) ? rng.int(1, 3000) : randomPercent(rng),
        ...(rng.chance(0.5) ? { minSubtotalCents: rng.int(0, 30_000) } : {}),
      } as PromotionRule;
    case "bogo": {
      const buy = products();
      return {
        ...common,
        type: "bogo",
        buy: { productIds: buy, quantity: rng.int(1, 3) },
        get: {
          productIds: rng.chance(0.5) ? buy : products(),
          quantity: rng.int(1, 2),
          percentBps: rng.chance(0.5) ? 10_000 : randomPercent(rng),
        },
        ...(rng.chance(0.3) ? { maxApplications: rng.int(1, 3) } : {}),
      } as PromotionRule;
    }
    case "bundle": {
      const components = rng.subset(skus, 1, 3).map((productId) => ({ productId, quantity: rng.int(1, 3) }));
      const regular = components.reduce((sum, c) => sum + (prices.get(c.productId) ?? 0) * c.quantity, 0);
      const priceCents = rng.chance(0.8)
        ? Math.max(0, Math.round(regular * (0.4 + rng.next() * 0.7)))
        : rng.int(0, 5000);
      return { ...common, type: "bundle", components, priceCents: Math.min(priceCents, 2 ** 53 - 1) } as PromotionRule;
    }
  }
}

function randomCoupon(rng: Random, window: () => { validFrom: string; validUntil: string }): Record<string, unknown> {
  const coupon: Record<string, unknown> = rng.chance(0.5)
    ? { percentBps: randomPercent(rng) }
    : { amountCents: rng.chance(0.95) ? rng.int(1, 5000) : rng.int(1, 2 ** 53 - 1) };
  if (rng.chance(0.5)) coupon["minBasketCents"] = rng.int(0, 10_000);
  if (rng.chance(0.5)) {
    const { validFrom, validUntil } = window();
    if (rng.chance(0.8)) coupon["validFrom"] = validFrom;
    if (rng.chance(0.8)) coupon["validUntil"] = validUntil;
  }
  if (rng.chance(0.3)) coupon["maxRedemptions"] = rng.int(1, 5);
  if (rng.chance(0.1)) coupon["active"] = false;
  return coupon;
}

/**
 * A coupon redeemed as many times as it may be: one sale finalized with it, through a register
 * session opened for the purpose.
 */
async function exhaustedCoupon(server: Server, store: string, sku: string): Promise<string> {
  const code = "W0-ONCE";
  await server.ok("PUT", `/v1/coupons/${code}`, { amountCents: 1, maxRedemptions: 1 });
  await server.ok("PUT", "/v1/staff/pricing-cashier", { displayName: "Cashier", role: "cashier", pin: "482916" });
  const session = await server.ok<{ sessionId: string; token: string }>("POST", "/v1/register-sessions", {
    storeId: store,
    registerId: "pricing-till",
    cashierSubject: "pricing-cashier",
    pin: "482916",
  });
  const cart = {
    freeLineSequence: 0,
    lines: [{ id: "l1", skuId: sku, quantity: 1, unitPrice: 500, vatRate: 20, free: false }],
  };
  const quote = await server.ok<{ totals: { total: number } }>("POST", "/v1/checkout/price", {
    storeId: store,
    cart,
    couponCode: code,
  });
  const due = quote.totals.total;
  await server.ok(
    "POST",
    "/v1/checkout/finalize",
    {
      transactionId: "pricing-exhaust",
      number: "PX-1",
      storeId: store,
      sellerId: "pricing-cashier",
      customerId: null,
      sessionId: session.sessionId,
      couponCode: code,
      cart,
      tenders: {
        amountDue: due,
        sequence: 1,
        tenders: [{ id: "p1", method: "cash", applied: due, presented: due, change: 0, forfeited: 0 }],
      },
    },
    session.token,
  );
  return code;
}

async function allCoupons(server: Server): Promise<CouponView[]> {
  const coupons: CouponView[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`;
    const page: CouponViewPage = await server.ok<CouponViewPage>("GET", `/v1/coupons?limit=500${query}`);
    coupons.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return coupons;
}
