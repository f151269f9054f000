// The offline store against a real server: a snapshot, then the feed, keep it equal to what the
// server's own reads answer, through changes of articles, store prices, promotions and coupons;
// a page of many catalog changes is replaced by a new snapshot; a snapshot cut short changes
// nothing; a cart priced from it is priced as the server prices it.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { SnapshotIncomplete, TillClient, TillError, type CatalogItemView, type CouponView, type StorePriceView } from "../src/client.js";
import { MemoryStorage, OfflineStore } from "../src/offline/index.js";
import type { CartLine } from "../src/pricing/index.js";
import { allItems, ean13, putArticle, putCashier, putStore, putStorePrice, random, skuOf } from "./harness/shop.js";
import { TillProcess } from "./harness/till.js";

const STORE = "paris";
const OTHER = "lyon";
const FAR = "2099-01-01T00:00:00Z";

let till: TillProcess;

before(async () => {
  till = await TillProcess.start();
});

after(async () => {
  await till?.destroy();
});

/** Says where the offline store differs from the server's reads; empty when equal. */
async function differences(store: OfflineStore, client: TillClient): Promise<string[]> {
  const found: string[] = [];
  const serverArticles = await allItems<CatalogItemView>(client, "/v1/catalog/skus");
  const offline = new Map((await store.articles()).map((record) => [record.skuId, record]));
  if (serverArticles.length !== offline.size) found.push(`${serverArticles.length} articles on the server, ${offline.size} offline`);
  for (const article of serverArticles) {
    const record = offline.get(article.skuId);
    if (record === undefined) {
      found.push(`article ${article.skuId} missing`);
      continue;
    }
    try {
      assert.deepEqual(record.catalog, article);
    } catch {
      found.push(`article ${article.name}: offline ${JSON.stringify(record.catalog)}, server ${JSON.stringify(article)}`);
    }
    const own = await client.raw("GET", `/v1/stores/${STORE}/prices/${article.skuId}`);
    let expected: { priceCents: number | null; scheduledPrices: unknown[] };
    if (own.status === 404) {
      expected = { priceCents: null, scheduledPrices: [] };
    } else {
      const view = JSON.parse(own.text) as StorePriceView;
      expected = { priceCents: view.priceSource === "store" ? view.priceCents : null, scheduledPrices: view.scheduledPrices };
    }
    try {
      assert.deepEqual(record.own, expected);
    } catch {
      found.push(`store price of ${article.name}: offline ${JSON.stringify(record.own)}, server ${JSON.stringify(expected)}`);
    }
    for (const code of article.barcodes) {
      const byCode = await store.articleByBarcode(code);
      if (byCode?.skuId !== article.skuId) found.push(`barcode ${code} does not find ${article.name}`);
    }
  }
  // The rules that may run in the store, as the server lists them.
  const rules = (await client.listPromotions({ active: true, storeId: STORE })).promotions;
  const offlineRules = new Map((await store.promotions()).map((p) => [p.rule.id, p.rule]));
  const serverIds = new Set(rules.map((rule) => rule.id));
  for (const id of offlineRules.keys()) if (!serverIds.has(id)) found.push(`rule ${id} offline only`);
  for (const rule of rules) {
    const held = offlineRules.get(rule.id);
    try {
      assert.deepEqual(held, rule);
    } catch {
      found.push(`rule ${rule.id}: offline ${JSON.stringify(held)}, server ${JSON.stringify(rule)}`);
    }
  }
  // Every coupon a till may take is held as the server reads it; what it holds, too.
  const coupons = await allItems<CouponView>(client, "/v1/coupons");
  const offlineCoupons = new Map((await store.coupons()).map((c) => [c.code, c]));
  for (const coupon of coupons) {
    const held = offlineCoupons.get(coupon.code);
    // The snapshot leaves out the coupons no till may take any more; the feed may bring them.
    const over = coupon.validUntil != null && Date.parse(coupon.validUntil) < Date.now();
    if (held === undefined && (!coupon.active || over)) continue;
    try {
      assert.deepEqual(held, coupon);
    } catch {
      found.push(`coupon ${coupon.code}: offline ${JSON.stringify(held)}, server ${JSON.stringify(coupon)}`);
    }
  }
  return found;
}

/** Carts priced offline at `issuedAt` equal the server's `POST /v1/checkout/price`. */
async function pricesAgree(store: OfflineStore, client: TillClient, seed: number): Promise<void> {
  const pricer = await store.pricer();
  const skus = (await store.articles()).map((a) => a.skuId);
  const rng = random(seed);
  const issuedAt = new Date().toISOString();
  let priced = 0;
  for (let c = 0; c < 20; c++) {
    const lines: CartLine[] = Array.from({ length: rng.int(1, 4) }, (_, i) => ({ id: `l${i}`, skuId: rng.pick(skus), quantity: rng.int(1, 3) }));
    const couponCode = rng.next() < 0.3 ? rng.pick(["TEN", "FIVE", "GONE"]) : undefined;
    const offline = pricer.price({ lines, issuedAt, ...(couponCode === undefined ? {} : { couponCode }) });
    const body = {
      storeId: STORE,
      issuedAt,
      ...(couponCode === undefined ? {} : { couponCode }),
      cart: { freeLineSequence: 0, lines: lines.map((l) => ({ id: l.id, skuId: l.skuId, quantity: l.quantity, unitPrice: 0, vatRate: 0, free: false })) },
    };
    const answer = await client.raw("POST", "/v1/checkout/price", { body });
    if (offline.ok) {
      assert.equal(answer.status, 200, `cart ${c}: the server refused what was priced offline: ${answer.text}`);
      assert.deepEqual(offline.quote, JSON.parse(answer.text), `cart ${c}`);
      priced += 1;
    } else {
      assert.equal(answer.status, offline.refusal.statusCode, `cart ${c}: ${answer.text}`);
    }
  }
  assert.ok(priced >= 10, `only ${priced} of 20 carts could be priced`);
}

test("a snapshot then the feed keep the offline store equal to the server's catalog", async () => {
  const client = till.client;
  await putStore(client, STORE);
  await putStore(client, OTHER);
  await putCashier(client);
  const skus = Array.from({ length: 24 }, (_, i) => skuOf(`sync-${i}`));
  const rng = random(7);
  for (const [i, sku] of skus.entries()) {
    await putArticle(client, sku, {
      name: `Article ${i}`,
      priceCents: rng.int(50, 5000),
      vatRate: rng.pick([5.5, 10, 20]),
      ...(i % 3 === 0 ? { barcodes: [ean13(3_760_000_000_000 / 10 + i)] } : {}),
    });
    if (i % 4 === 0) await putArticle(client, sku, { name: `Article ${i}`, priceCents: rng.int(50, 5000), vatRate: 20, effectiveFrom: FAR });
    if (i % 5 === 0) await putStorePrice(client, STORE, sku, rng.int(40, 4000));
    if (i % 7 === 0) await putStorePrice(client, STORE, sku, rng.int(40, 4000), FAR);
    if (i % 6 === 0) await putStorePrice(client, OTHER, sku, rng.int(40, 4000));
  }
  const rule = (id: string, extra: Record<string, unknown>): Record<string, unknown> => ({
    id,
    name: `Rule ${id}`,
    validFrom: "2020-01-01T00:00:00Z",
    validUntil: FAR,
    ...extra,
  });
  await client.json("POST", "/v1/promotions", { body: rule("everywhere", { type: "percent_off", percentBps: 500, productIds: [skus[1]] }) });
  await client.json("POST", "/v1/promotions", { body: rule("here", { type: "bogo", storeIds: [STORE], buy: { productIds: [skus[2]], quantity: 1 }, get: { productIds: [skus[2]], quantity: 1, percentBps: 5000 } }) });
  await client.json("POST", "/v1/promotions", { body: rule("there", { type: "percent_off", percentBps: 1500, storeIds: [OTHER] }) });
  await client.json("POST", "/v1/promotions", { body: rule("later", { type: "percent_off", percentBps: 2500, validFrom: "2098-01-01T00:00:00Z" }) });
  await client.json("PUT", "/v1/coupons/TEN", { body: { amountCents: 1000, minBasketCents: 2000 } });
  await client.json("PUT", "/v1/coupons/FIVE", { body: { percentBps: 500 } });

  const store = new OfflineStore({ client, storage: new MemoryStorage(), storeId: STORE, snapshotAfterCatalogChanges: 100 });
  const first = await store.sync();
  assert.equal(first.snapshots, 1);
  assert.deepEqual(await differences(store, client), []);
  assert.deepEqual((await store.staff()).map((s) => s.subject), ["cashier-1"]);
  await pricesAgree(store, client, 1);

  // Changes of every kind the store follows, and some it must leave alone.
  await putArticle(client, skus[0] as string, { name: "Article 0 renamed", priceCents: 999, vatRate: 20, barcodes: [ean13(123_456)] });
  await putArticle(client, skus[3] as string, { name: "Article 3", priceCents: 1234, vatRate: 10 });
  await putArticle(client, skus[4] as string, { name: "Article 4", priceCents: 4321, vatRate: 20, effectiveFrom: "2098-06-01T00:00:00Z" });
  const created = skuOf("sync-new");
  await putArticle(client, created, { name: "New article", priceCents: 777, vatRate: 5.5 });
  await putStorePrice(client, STORE, skus[0] as string, 888);
  await putStorePrice(client, STORE, created, 700);
  await putStorePrice(client, STORE, skus[8] as string, 111, "2098-02-01T00:00:00Z");
  await client.json("DELETE", `/v1/stores/${STORE}/prices/${skus[5]}`);
  await putStorePrice(client, OTHER, skus[9] as string, 1);
  await client.json("POST", "/v1/promotions", { body: rule("new-here", { type: "percent_off", percentBps: 1000, storeIds: [STORE], productIds: [created] }) });
  await client.json("PUT", "/v1/promotions/here/rule", { body: rule("here", { type: "percent_off", percentBps: 300, storeIds: [STORE], productIds: [skus[2]] }) });
  await client.json("PUT", "/v1/promotions/there/rule", { body: rule("there", { type: "percent_off", percentBps: 1500 }) });
  await client.json("POST", "/v1/promotions/everywhere/deactivate");
  await client.json("PUT", "/v1/coupons/TEN", { body: { amountCents: 1500, minBasketCents: 2500 } });
  await client.json("PUT", "/v1/coupons/FIVE", { body: { percentBps: 500, active: false } });
  await client.json("PUT", "/v1/coupons/GONE", { body: { amountCents: 200, validUntil: "2020-01-01T00:00:00Z" } });

  const second = await store.sync();
  assert.equal(second.snapshots, 0);
  assert.ok(second.events >= 16, `${second.events} events applied`);
  assert.deepEqual(await differences(store, client), []);
  assert.equal((await store.articleByBarcode(ean13(123_456)))?.skuId, skus[0]);
  await pricesAgree(store, client, 2);

  // A fresh snapshot holds the same as the store that followed the feed.
  const fresh = new OfflineStore({ client, storage: new MemoryStorage(), storeId: STORE });
  await fresh.sync();
  assert.deepEqual(
    (await fresh.articles()).map((a) => [a.catalog, a.own]),
    (await store.articles()).map((a) => [a.catalog, a.own]),
  );
  assert.deepEqual(await fresh.promotions(), await store.promotions());

  // An import of many articles: a new snapshot, not one read per article.
  const imported = Array.from({ length: 150 }, (_, i) => ({ skuId: skuOf(`import-${i}`), name: `Imported ${i}`, priceCents: 100 + i, vatRate: 20 }));
  await client.json("POST", "/v1/catalog/import", { body: { skus: imported } });
  await putArticle(client, skus[10] as string, { name: "After the import", priceCents: 321, vatRate: 20 });
  const before = (await store.state())?.generation ?? 0;
  const third = await store.sync();
  assert.equal(third.snapshots, 1);
  assert.equal((await store.state())?.generation, before + 1);
  assert.deepEqual(await differences(store, client), []);
  await pricesAgree(store, client, 3);
});

test("a snapshot cut short is refused and changes nothing held", async () => {
  const client = till.client;
  const storage = new MemoryStorage();
  const store = new OfflineStore({ client, storage, storeId: STORE });
  await store.loadSnapshot();
  const held = storage.dump();
  const state = await store.state();

  // The same server, through a fetch that drops the body's last line (the end line).
  const cutting: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (!String(input).includes("/v1/sync/snapshot")) return response;
    const text = await response.text();
    const lines = text.trimEnd().split("\n");
    return new Response(lines.slice(0, -1).join("\n") + "\n", { status: response.status, headers: response.headers });
  };
  const cut = new OfflineStore({ client: new TillClient({ baseUrl: till.base, token: till.token, fetch: cutting }), storage, storeId: STORE });
  await assert.rejects(cut.loadSnapshot(), SnapshotIncomplete);
  assert.deepEqual(storage.dump(), held);
  assert.deepEqual(await store.state(), state);

  // A body that stops in the middle of a line, as a dropped connection leaves it.
  const dropping: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (!String(input).includes("/v1/sync/snapshot")) return response;
    const text = await response.text();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(text.slice(0, Math.floor(text.length / 2))));
        controller.error(new Error("connection reset"));
      },
    });
    return new Response(body, { status: 200, headers: response.headers });
  };
  const dropped = new OfflineStore({ client: new TillClient({ baseUrl: till.base, token: till.token, fetch: dropping }), storage, storeId: STORE });
  await assert.rejects(dropped.loadSnapshot(), SnapshotIncomplete);
  assert.deepEqual(storage.dump(), held);

  // An unknown store is a 404 before anything is streamed.
  const unknown = new OfflineStore({ client, storage: new MemoryStorage(), storeId: "nowhere" });
  await assert.rejects(unknown.loadSnapshot(), (error: unknown) => error instanceof TillError && error.status === 404);
});

test("the snapshot's lines come typed, head first and end last", async () => {
  const lines = [];
  for await (const line of till.client.snapshot(STORE)) lines.push(line);
  assert.equal(lines[0]?.type, "head");
  const end = lines[lines.length - 1];
  assert.equal(end?.type, "end");
  if (end?.type === "end") assert.equal(end.articles, lines.filter((l) => l.type === "article").length);
});
