// The offline pricer on cases whose answers are known (most from till-core's own tests of
// pricing and promotions), with no server: a quick check that runs before the differential one.

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  Pricer,
  type CartLine,
  type DeclaredDiscount,
  type OfflineArticle,
  type OfflineCart,
  type PriceQuote,
  type PricingRefusal,
  type PromotionRule,
} from "../src/pricing/index.js";
import { InstantError, parseInstant } from "../src/pricing/instant.js";
import { compareText } from "../src/pricing/text.js";

const STORE = "paris";
const AT = "2026-06-01T12:00:00Z";

function sku(n: number): string {
  return n.toString(16).padStart(2, "0").repeat(32);
}

function article(n: number, priceCents: number, vatRate = 20): OfflineArticle {
  return {
    skuId: sku(n),
    name: `Article ${n}`,
    prices: [{ effectiveFrom: "2026-01-01T00:00:00Z", priceCents, vatRate }],
    storePrices: [],
  };
}

function rule(id: string, mechanics: Record<string, unknown>, extra: Record<string, unknown> = {}): PromotionRule {
  return {
    id,
    name: `Rule ${id}`,
    validFrom: "2026-01-01T00:00:00Z",
    validUntil: "2026-12-31T23:59:59Z",
    ...extra,
    ...mechanics,
  } as PromotionRule;
}

function price(
  articles: OfflineArticle[],
  lines: CartLine[],
  more: { promotions?: PromotionRule[]; declared?: DeclaredDiscount[]; cart?: Partial<OfflineCart> } = {},
) {
  const pricer = new Pricer({
    storeId: STORE,
    articles,
    promotions: more.promotions ?? [],
    coupons: [
      { code: "TEN", amountCents: 1000, minBasketCents: 2000, redemptions: 0, active: true },
      { code: "ONCE", percentBps: 1000, minBasketCents: 0, maxRedemptions: 1, redemptions: 1, active: true },
    ],
  });
  return pricer.price({ lines, declaredDiscounts: more.declared ?? [], issuedAt: AT, ...more.cart });
}

function quoted(result: ReturnType<typeof price>): PriceQuote {
  if (!result.ok) {
    assert.fail(`refused: ${result.refusal.message}`);
  }
  return result.quote;
}

function refused(result: ReturnType<typeof price>): PricingRefusal {
  if (result.ok) {
    assert.fail("priced, not refused");
  }
  return result.refusal;
}

const line = (id: string, n: number, quantity: number): CartLine => ({ id, skuId: sku(n), quantity });

test("lines without discounts sum to the subtotal, VAT by rate, highest first", () => {
  const quote = quoted(price([article(1, 130, 5.5), article(2, 1450)], [line("a", 1, 3), line("b", 2, 1)]));
  assert.deepEqual(quote.totals, { subtotal: 1840, total: 1840, itemCount: 4, lineCount: 2 });
  assert.deepEqual(quote.vat, [
    { vatRate: 20, totalCents: 1450, vatCents: 242 },
    { vatRate: 5.5, totalCents: 390, vatCents: 20 },
  ]);
});

test("a line percent rounds half away from zero", () => {
  const declared: DeclaredDiscount[] = [
    { id: "d1", reason: "manual_markdown", scope: "line", basis: "percent", lineId: "a", percentBps: 5000 },
  ];
  const quote = quoted(price([article(1, 5), article(2, 1000)], [line("a", 1, 1), line("b", 2, 1)], { declared }));
  assert.equal(quote.lines[0]?.discountCents, 3); // 2.5 -> 3
  assert.equal(quote.totals.total, 1002);
});

test("ticket discounts are allocated by largest remainder, ties by line id", () => {
  const declared: DeclaredDiscount[] = [
    { id: "t", reason: "promotional", scope: "ticket", basis: "amount", amountCents: 100 },
  ];
  const articles = [article(1, 1000), article(2, 1000), article(3, 1000, 5.5)];
  const quote = quoted(price(articles, [line("c", 1, 1), line("a", 2, 1), line("b", 3, 1)], { declared }));
  assert.deepEqual(
    quote.lines.map((l) => l.ticketCents),
    [33, 34, 33],
  );
  assert.equal(quote.totals.total, 2900);
});

test("ticket percents come before ticket amounts, and amounts are capped", () => {
  const declared: DeclaredDiscount[] = [
    { id: "amount", reason: "promotional", scope: "ticket", basis: "amount", amountCents: 5000 },
    { id: "percent", reason: "promotional", scope: "ticket", basis: "percent", percentBps: 1000 },
  ];
  const quote = quoted(price([article(1, 1000)], [line("a", 1, 1)], { declared }));
  assert.deepEqual(quote.adjustments, [
    { source: "declared", id: "percent", amountCents: 100 },
    { source: "declared", id: "amount", amountCents: 900 },
  ]);
  assert.equal(quote.totals.total, 0);
});

test("a coupon's minimum is measured on the basket it meets", () => {
  const declared: DeclaredDiscount[] = [
    { id: "p", reason: "promotional", scope: "ticket", basis: "percent", percentBps: 2000 },
  ];
  const quote = quoted(price([article(1, 2500)], [line("a", 1, 1)], { declared, cart: { couponCode: "TEN" } }));
  assert.deepEqual(quote.coupon, { code: "TEN", basketCents: 2000, discountAmountCents: 1000 });
  assert.equal(quote.totals.total, 1000);
  const short = refused(price([article(1, 2499)], [line("a", 1, 1)], { declared, cart: { couponCode: "TEN" } }));
  assert.equal(short.message, "Coupon TEN needs a basket of at least 20.00; this one comes to 19.99.");
  const spent = refused(price([article(1, 2500)], [line("a", 1, 1)], { cart: { couponCode: "ONCE" } }));
  assert.equal(spent.message, "Coupon ONCE cannot be used: it has been redeemed as many times as it may be.");
});

test("buy two get one free discounts the cheapest unit of each multiple", () => {
  const b2g1 = rule("b2g1", {
    type: "bogo",
    buy: { productIds: [sku(1), sku(2)], quantity: 2 },
    get: { productIds: [sku(1), sku(2)], quantity: 1, percentBps: 10_000 },
  });
  const quote = quoted(
    price([article(1, 500), article(2, 300)], [line("a", 1, 4), line("b", 2, 3)], { promotions: [b2g1] }),
  );
  assert.deepEqual(
    quote.lines.map((l) => l.promotionCents),
    [0, 600],
  );
  assert.deepEqual(quote.adjustments, [{ source: "promotion", id: "b2g1", name: "Rule b2g1", amountCents: 600 }]);
});

test("a bundle repeats while sets are complete, and never raises a price", () => {
  const menu = rule("menu", {
    type: "bundle",
    components: [
      { productId: sku(1), quantity: 1 },
      { productId: sku(2), quantity: 2 },
    ],
    priceCents: 1000,
  });
  const quote = quoted(
    price([article(1, 800), article(2, 200)], [line("m", 1, 3), line("d", 2, 5)], { promotions: [menu] }),
  );
  assert.equal(quote.totals.subtotal - quote.totals.total, 400);
  const dear = rule("dear", { type: "bundle", components: [{ productId: sku(1), quantity: 1 }], priceCents: 900 });
  assert.deepEqual(quoted(price([article(1, 800)], [line("m", 1, 1)], { promotions: [dear] })).adjustments, []);
});

test("an exclusive rule applies alone, or not at all behind another", () => {
  const solo = rule("solo", { type: "percent_off", productIds: [sku(1)], percentBps: 3000 }, { exclusive: true });
  const other = rule("other", { type: "percent_off", productIds: [sku(2)], percentBps: 1000 });
  const basket = rule("basket", { type: "percent_off", percentBps: 500 });
  const articles = [article(1, 1000), article(2, 500)];
  const lines = [line("a", 1, 2), line("b", 2, 1)];
  const alone = quoted(price(articles, lines, { promotions: [solo, other, basket] }));
  assert.deepEqual(
    alone.adjustments.map((a) => [a.id, a.amountCents]),
    [["solo", 600]],
  );
  const behind = quoted(price(articles, lines, { promotions: [solo, { ...other, priority: 5 }, basket] }));
  assert.deepEqual(
    behind.adjustments.map((a) => [a.id, a.amountCents]),
    [
      ["other", 50],
      ["basket", 123],
    ],
  );
});

test("a rule for groups applies to their members only", () => {
  const staff = rule("staff", { type: "percent_off", percentBps: 1000 }, { customerGroups: ["staff", "trade"] });
  const lines = [line("a", 1, 1)];
  const run = (customerGroups: string[] | null) =>
    quoted(price([article(1, 1000)], lines, { promotions: [staff], cart: { customerGroups } })).totals.total;
  assert.equal(run(["vip", "trade"]), 900);
  assert.equal(run(["vip"]), 1000);
  assert.equal(run(null), 1000);
});

test("a store's own price wins from its instant on; the VAT rate stays the catalog's", () => {
  const mug: OfflineArticle = {
    skuId: sku(1),
    name: "Mug",
    prices: [
      { effectiveFrom: "2026-01-01T00:00:00Z", priceCents: 100, vatRate: 20 },
      { effectiveFrom: "2026-03-01T00:00:00Z", priceCents: 300, vatRate: 10 },
    ],
    storePrices: [
      { effectiveFrom: "2026-02-01T12:00:00Z", priceCents: 150 },
      { effectiveFrom: "2026-04-01T00:00:00Z", priceCents: 90 },
      { effectiveFrom: "2026-05-01T00:00:00Z", priceCents: null },
    ],
  };
  const sold = (issuedAt: string) => {
    const quote = quoted(price([mug], [line("a", 1, 1)], { cart: { issuedAt } }));
    return [quote.lines[0]?.unitPrice, quote.lines[0]?.vatRate];
  };
  assert.deepEqual(sold("2025-12-31T23:58:30Z"), [100, 20], "before the first price, the first");
  assert.deepEqual(sold("2026-02-01T11:59:59.999999999Z"), [100, 20]);
  assert.deepEqual(sold("2026-02-01T12:00:00Z"), [150, 20]);
  assert.deepEqual(sold("2026-03-15T00:00:00Z"), [150, 10]);
  assert.deepEqual(sold("2026-04-01T00:00:00Z"), [90, 10]);
  assert.deepEqual(sold("2026-05-01T00:00:00Z"), [300, 10], "removed: the catalog's again");
});

test("refusals come in the server's order and words", () => {
  assert.equal(refused(price([], [])).message, "The cart is empty: a sale needs at least one line.");
  assert.equal(
    refused(price([], [{ id: "x", skuId: null, quantity: 1 }])).message,
    "Line x names no article (skuId is null) and is not marked custom.",
  );
  assert.equal(
    refused(price([], [line("x", 9, 1)])).message,
    `Line x: article ${sku(9)} is not in the catalog.`,
  );
  assert.equal(
    refused(price([article(1, 2 ** 52)], [line("a", 1, 2)])).message,
    "The sale's amounts are too large to be represented.",
  );
  const invalid = refused(price([article(1, 100)], [line("a", 1, 0), line("a", 1, 1)], { cart: { issuedAt: "2026-06-01T12:00:00+02:00" } }));
  assert.equal(invalid.code, "VALIDATION_FAILED");
  assert.equal(invalid.message, "The request is invalid: 3 fields need attention.");
  assert.deepEqual(invalid.fieldErrors, [
    { field: "cart.lines.0.quantity", message: "must be an integer from 1 to 9007199254740991" },
    { field: "cart.lines.1.id", message: "is already the id of another line" },
    { field: "issuedAt", message: "must end in Z (UTC)" },
  ]);
});

test("ids are ordered by code point, as Rust orders strings", () => {
  assert.ok(compareText("\uff01", "😀") < 0, "U+FF01 before U+1F600, though its UTF-16 unit is larger");
  assert.ok(compareText("a", "ab") < 0);
  assert.ok(compareText("b", "a") > 0);
  assert.equal(compareText("é", "é"), 0);
});

test("instants are read to the nanosecond, as the server reads them", () => {
  assert.equal(parseInstant("1970-01-01T00:00Z", true), 0n);
  assert.equal(parseInstant("1970-01-01T00:00:00.000000001Z", true), 1n);
  assert.equal(parseInstant("2026-03-01T10:30:00+01:30", false), parseInstant("2026-03-01T09:00:00Z", true));
  assert.equal(parseInstant("2024-02-29T00:00:00Z", true) - parseInstant("2024-02-28T00:00:00Z", true), 86_400n * 10n ** 9n);
  for (const [text, problem] of [
    ["2026-02-30T00:00:00Z", "is not a real calendar date or time"],
    ["2026-03-01T00:00:60Z", "is not a real calendar date or time"],
    ["2026-03-01 00:00:00Z", "must be an ISO 8601 date-time such as 2026-03-01T09:30:00Z"],
    ["2026-03-01T00:00:00", "must end in Z (UTC)"],
    ["9999-01-01T00:00:00Z", "is out of the accepted range: years 0001 to 9998, or 0002 to 9997 when written with an offset"],
  ] as const) {
    assert.throws(() => parseInstant(text, true), (error: unknown) => error instanceof InstantError && error.problem === problem, text);
  }
});
