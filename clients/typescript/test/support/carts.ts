// Random carts against a world, as the differential test sends them: to the server as a price
// request body, and to the offline pricer as a cart with the customer's groups.

import type { CartLine, DeclaredDiscount, OfflineCart } from "../../src/pricing/index.js";
import { DAY, HOUR, SECOND, formatInstant, type Form } from "./instants.js";
import type { Random } from "./random.js";
import type { World } from "./world.js";

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** One cart as generated: everything either side needs. */
export interface TestCart {
  storeId: string;
  /** Null: anonymous. */
  customerId: string | null;
  lines: CartLine[];
  declaredDiscounts: DeclaredDiscount[];
  couponCode: string | null;
  issuedAt: string;
}

const LINE_ID_STEMS = ["l", "l", "l", "L", "é", "😀", "\uff01", "a b", "line-"];
const REASONS = ["manual_markdown", "promotional", "loyalty_reward", "damaged_goods", "manager_goodwill"] as const;

export function randomCart(rng: Random, world: World, previous: World | null): TestCart {
  const storeId = rng.pick(world.stores);
  // A few articles come up more often, so that rules find several units to work on.
  const hot = rng.subset(world.skus, 1, 3);
  const lineCount = rng.weighted([
    [1, () => 0],
    [50, () => rng.int(1, 3)],
    [35, () => rng.int(4, 7)],
    [10, () => rng.int(8, 15)],
    [2, () => rng.int(16, 40)],
    // Past the most a sale may carry: the server refuses the request.
    [0.02, () => 1001],
  ] as const)();
  const stem = rng.pick(LINE_ID_STEMS);
  const lines: CartLine[] = [];
  for (let i = 0; i < lineCount; i++) {
    const id = rng.chance(0.85) ? `${stem}${i}` : `${rng.pick(LINE_ID_STEMS)}${rng.int(0, 99)}`;
    lines.push(randomLine(rng, id, world.skus, hot));
  }
  const shuffled = rng.chance(0.3) ? rng.shuffle(lines) : lines;
  if (shuffled.length > 1 && rng.chance(0.005)) {
    // The same id twice: the server refuses the request.
    (shuffled[1] as CartLine).id = (shuffled[0] as CartLine).id;
  }

  const declaredDiscounts: DeclaredDiscount[] = [];
  const discountCount = rng.weighted([
    [55, 0],
    [30, 1],
    [10, 2],
    [5, rng.int(3, 4)],
  ] as const);
  for (let d = 0; d < discountCount; d++) {
    declaredDiscounts.push(randomDiscount(rng, rng.chance(0.97) ? `d${d}` : "d0", shuffled));
  }

  const couponCode = rng.weighted<string | null>([
    [50, null],
    [42, rng.pick(world.couponCodes)],
    [5, `NOPE-${rng.int(0, 9)}`],
    // Codes are matched exactly; an empty one is refused with the request.
    [1, rng.pick(world.couponCodes).toLowerCase()],
    [0.1, ""],
    [3, previous === null ? null : rng.pick(previous.couponCodes)],
  ]);
  const customerId = rng.weighted<string | null>([
    [30, null],
    [60, rng.pick([...world.customers.keys()])],
    [10, `stranger-${rng.int(0, 9)}`],
  ]);
  return {
    storeId,
    customerId,
    lines: shuffled,
    declaredDiscounts,
    couponCode,
    issuedAt: randomIssuedAt(rng, world),
  };
}

function randomLine(rng: Random, id: string, skus: readonly string[], hot: readonly string[]): CartLine {
  const quantity = rng.weighted([
    [60, () => rng.int(1, 3)],
    [30, () => rng.int(4, 12)],
    [8, () => rng.int(13, 100)],
    [1.5, () => rng.int(1e6, 1e12)],
    [0.4, () => rng.int(MAX_SAFE - 1000, MAX_SAFE)],
    [0.1, () => 0],
  ] as const)();
  const kind = rng.weighted([
    [90, "catalog"],
    [5, "custom"],
    [1, "custom with article"],
    [1, "unknown article"],
    [0.5, "no article"],
  ] as const);
  switch (kind) {
    case "catalog":
      return { id, skuId: rng.chance(0.6) ? rng.pick(hot) : rng.pick(skus), quantity };
    case "custom":
    case "custom with article":
      return {
        id,
        skuId: kind === "custom" ? null : rng.pick(skus),
        quantity,
        custom: true,
        unitPrice: rng.chance(0.98) ? rng.int(0, 20_000) : rng.int(0, MAX_SAFE),
        // 5.555 and 101 are not rates: the server refuses the request.
        vatRate: rng.chance(0.98) ? rng.pick([0, 5.5, 10, 20, 2.1, 7.77]) : rng.pick([5.555, 101]),
      };
    case "unknown article":
      return { id, skuId: rng.hex(64), quantity };
    case "no article":
      return { id, skuId: null, quantity };
  }
}

function randomDiscount(rng: Random, id: string, lines: readonly CartLine[]): DeclaredDiscount {
  const reason = rng.pick(REASONS);
  const percentBps = rng.weighted([
    [3, () => rng.pick([500, 1000, 2000, 5000])],
    [1, () => 10_000],
    [5, () => rng.int(1, 10_000)],
    [0.1, () => rng.pick([0, 10_001])],
  ] as const)();
  const kind = rng.weighted([
    [45, "line"],
    [30, "ticket percent"],
    [25, "ticket amount"],
  ] as const);
  if (kind === "line" && lines.length > 0) {
    const lineId = rng.chance(0.99) ? rng.pick(lines).id : "no-such-line";
    return { id, reason, scope: "line", basis: "percent", lineId, percentBps };
  }
  if (kind === "ticket amount") {
    const amountCents = rng.weighted([
      [8, () => rng.int(1, 2000)],
      [2, () => rng.int(2000, 1_000_000)],
      [0.1, () => 0],
    ] as const)();
    return { id, reason, scope: "ticket", basis: "amount", amountCents };
  }
  return { id, reason, scope: "ticket", basis: "percent", percentBps };
}

/** Mostly at or right around an instant where something starts or ends. */
function randomIssuedAt(rng: Random, world: World): string {
  const near = rng.pick(world.instants);
  const at = rng.weighted([
    [20, () => near],
    [10, () => near - 1n],
    [5, () => near + 1n],
    [5, () => near - 1000n],
    [5, () => near + SECOND],
    [15, () => near + BigInt(rng.int(-3600, 3600)) * SECOND + BigInt(rng.int(0, 999_999_999))],
    [20, () => world.base + BigInt(rng.int(0, 8 * 24 * 3600)) * SECOND],
    [5, () => world.createdAt - BigInt(rng.int(0, 2 * 24)) * HOUR],
    [1, () => world.base + 400n * DAY],
  ] as const)();
  const form = rng.weighted<Form>([
    [90, "full"],
    [4, "seconds"],
    [2, "minutes"],
    [3, "micros"],
    // Not UTC: the server refuses it.
    [0.3, { offsetMinutes: 60 }],
  ]);
  return formatInstant(at, form);
}

/** The cart as `POST /v1/checkout/price` takes it. */
export function requestBody(cart: TestCart): Record<string, unknown> {
  const body: Record<string, unknown> = {
    storeId: cart.storeId,
    cart: {
      freeLineSequence: 0,
      lines: cart.lines.map((line) => ({
        id: line.id,
        skuId: line.skuId,
        quantity: line.quantity,
        // Advisory on a catalog line: the server prices it from its authority.
        unitPrice: line.custom === true ? line.unitPrice : 0,
        vatRate: line.custom === true ? line.vatRate : 20,
        free: false,
        ...(line.custom === true ? { custom: true } : {}),
      })),
    },
    issuedAt: cart.issuedAt,
  };
  if (cart.declaredDiscounts.length > 0) body["declaredDiscounts"] = cart.declaredDiscounts;
  if (cart.couponCode !== null) body["couponCode"] = cart.couponCode;
  if (cart.customerId !== null) body["customerId"] = cart.customerId;
  return body;
}

/** The cart as the offline pricer takes it: the customer's groups as the till knows them. */
export function offlineCart(cart: TestCart, world: World): OfflineCart {
  const offline: OfflineCart = {
    lines: cart.lines,
    declaredDiscounts: cart.declaredDiscounts,
    couponCode: cart.couponCode,
    issuedAt: cart.issuedAt,
  };
  if (cart.customerId !== null) {
    // A customer without a profile is in no group.
    offline.customerGroups = world.customers.get(cart.customerId) ?? [];
  }
  return offline;
}
