// The differential test of offline pricing: a real `till serve`, random worlds (catalogs with
// scheduled prices, store prices, rule sets, coupons, customers in groups) provisioned through
// the API, and random carts priced both by `POST /v1/checkout/price` and by the offline Pricer
// with what a till holds of the world. Every answer must be the same to the cent, every refusal
// the same sentence. On a difference the cart is shrunk and printed with what it was priced
// against.
//
//   TILL_PRICING_CARTS   carts to price (default 2000; the full run is 100000)
//   TILL_PRICING_SEED    replays a run (its seed is printed first)
//   TILL_BIN             the till binary (default ../../target/debug/till)

import assert from "node:assert/strict";
import { randomInt } from "node:crypto";
import { test } from "node:test";
import { Pricer, type OfflineData } from "../src/pricing/index.js";
import { randomCart, requestBody, type TestCart } from "./support/carts.js";
import { compare } from "./support/compare.js";
import { Random } from "./support/random.js";
import { inPool, startServer, type Server } from "./support/server.js";
import { shrink } from "./support/shrink.js";
import { Tally } from "./support/tally.js";
import { provisionWorld, retireWorld, type World } from "./support/world.js";

const seed = process.env["TILL_PRICING_SEED"] ?? String(randomInt(2 ** 47));
const cartCount = Number(process.env["TILL_PRICING_CARTS"] ?? 2000);
if (!Number.isSafeInteger(cartCount) || cartCount < 1) {
  throw new Error(`TILL_PRICING_CARTS must be a positive integer, not ${process.env["TILL_PRICING_CARTS"]}`);
}
/** Requests in flight. */
const CONCURRENCY = 16;
/** Carts per world: a world's rule set serves many carts; small runs still see 25 worlds. */
const perWorld = Math.min(2000, Math.max(50, Math.ceil(cartCount / 25)));

test(`offline pricing answers as the server does (${cartCount} carts, seed ${seed})`, async (t) => {
  console.log(
    `pricing differential: seed ${seed}, ${cartCount} carts; ` +
      `replay with TILL_PRICING_SEED=${seed} TILL_PRICING_CARTS=${cartCount}`,
  );
  const started = Date.now();
  const server = await startServer();
  const tally = new Tally();
  let provisioning = 0;
  try {
    let previous: World | null = null;
    for (let w = 0, done = 0; done < cartCount; w++) {
      const provisioned = Date.now();
      const world = await provisionWorld(server, new Random(`${seed}/world/${w}`), w);
      provisioning += Date.now() - provisioned;
      const pricers = new Map([...world.data].map(([store, data]) => [store, new Pricer(data)]));
      const count = Math.min(perWorld, cartCount - done);
      let first: { cart: TestCart; index: number } | null = null;
      await inPool(count, CONCURRENCY, async (c) => {
        if (first !== null) {
          return;
        }
        const cart = randomCart(new Random(`${seed}/world/${w}/cart/${c}`), world, previous);
        const comparison = await compare(server, world, pricerOf(pricers, cart), cart);
        tally.count(world, cart, comparison);
        if (!comparison.same && first === null) {
          first = { cart, index: c };
        }
      });
      // Set in the pool's callbacks, which TypeScript's narrowing does not follow.
      const found = first as { cart: TestCart; index: number } | null;
      if (found !== null) {
        await reportDifference(server, world, pricers, found.cart, `world ${w}, cart ${found.index}`);
      }
      await retireWorld(server, world);
      previous = world;
      done += count;
    }
  } finally {
    await server.stop();
  }
  const seconds = (Date.now() - started) / 1000;
  const summary =
    `${tally.total} carts in ${seconds.toFixed(1)} s, of which ${(provisioning / 1000).toFixed(1)} s provisioning worlds ` +
    `(seed ${seed}): ${tally.describe()}`;
  console.log(`pricing differential: ${summary}`);
  t.diagnostic(summary);
  assert.equal(tally.total, cartCount);
});

function pricerOf(pricers: ReadonlyMap<string, Pricer>, cart: TestCart): Pricer {
  const pricer = pricers.get(cart.storeId);
  if (pricer === undefined) {
    throw new Error(`no pricer for store ${cart.storeId}`);
  }
  return pricer;
}

/** Shrinks the cart, prints the smallest with what it was priced against, and fails. */
async function reportDifference(
  server: Server,
  world: World,
  pricers: ReadonlyMap<string, Pricer>,
  cart: TestCart,
  where: string,
): Promise<never> {
  const pricer = pricerOf(pricers, cart);
  const smallest = await shrink(cart, async (candidate) => !(await compare(server, world, pricer, candidate)).same);
  const last = await compare(server, world, pricer, smallest);
  const data = world.data.get(smallest.storeId) as OfflineData;
  const skus = new Set(smallest.lines.map((line) => line.skuId));
  const report = {
    seed,
    where,
    request: requestBody(smallest),
    customerGroups: smallest.customerId === null ? null : (world.customers.get(smallest.customerId) ?? []),
    articles: data.articles.filter((article) => skus.has(article.skuId)),
    activeRules: data.promotions.filter((rule) => rule.active !== false),
    coupon: data.coupons.find((coupon) => coupon.code === smallest.couponCode) ?? null,
    server: last.server,
    offline: last.offline,
  };
  console.log(`pricing differential: the server and the offline pricer differ\n${JSON.stringify(report, null, 2)}`);
  assert.fail(`the offline price differs from the server's at ${where} (seed ${seed}); the minimal cart is printed above`);
}
