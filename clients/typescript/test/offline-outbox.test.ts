// 1,000 sales rung on four registers while the server is down, priced offline from the offline
// store, queued in the outbox; sent when the server comes back, through a crash of the server
// in the middle of the sending; then the same queue sent again from a backup, and again in
// shuffled concurrent batches, twice. Each sale is booked exactly once, at the total the till
// showed, and every register's journal verifies.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { FeedPage, SaleSummaryPage } from "../src/client.js";
import { MemoryStorage, OfflineStore } from "../src/offline/index.js";
import { Outbox, type OutboxEntry } from "../src/outbox/index.js";
import type { CartLine } from "../src/pricing/index.js";
import { cashSale, openSession, putArticle, putCashier, putStore, random, shuffle, skuOf, type Session } from "./harness/shop.js";
import { TillProcess, inPool } from "./harness/till.js";

const STORE = "marais";
const SALES = 1000;
const REGISTERS = ["till-1", "till-2", "till-3", "till-4"];

let till: TillProcess;

before(async () => {
  till = await TillProcess.start();
});

after(async () => {
  await till?.destroy();
});

test("1,000 sales rung offline book exactly once each, however often and in whatever order they are sent", async () => {
  const client = till.client;
  await putStore(client, STORE);
  await putCashier(client);
  const rng = random(2026);
  const skus = Array.from({ length: 40 }, (_, i) => skuOf(`outbox-${i}`));
  for (const [i, sku] of skus.entries()) {
    await putArticle(client, sku, { name: `Article ${i}`, priceCents: rng.int(30, 3000), vatRate: rng.pick([5.5, 20]) });
  }
  const window = { validFrom: "2020-01-01T00:00:00Z", validUntil: "2099-01-01T00:00:00Z" };
  await client.json("POST", "/v1/promotions", {
    body: { id: "two-for-one", name: "Two for one", type: "bogo", ...window, buy: { productIds: skus.slice(0, 5), quantity: 1 }, get: { productIds: skus.slice(0, 5), quantity: 1, percentBps: 10_000 } },
  });
  await client.json("POST", "/v1/promotions", { body: { id: "big-basket", name: "Big basket", type: "percent_off", ...window, percentBps: 500, minSubtotalCents: 5000 } });
  await client.json("PUT", "/v1/coupons/WELCOME", { body: { amountCents: 150, minBasketCents: 1000 } });
  const sessions = new Map<string, Session>();
  for (const register of REGISTERS) sessions.set(register, await openSession(till, STORE, register));
  const tokens = new Map([...sessions.values()].map((s) => [s.sessionId, s.token]));

  const offline = new OfflineStore({ client, storage: new MemoryStorage(), storeId: STORE });
  await offline.sync();
  const pricer = await offline.pricer();

  // The network goes: every sale from here is rung offline.
  await till.stop();
  const storage = new MemoryStorage();
  const firstAnswers = new Map<string, string>();
  let acknowledged = 0;
  let crash: Promise<void> | null = null;
  const outbox = new Outbox({
    client,
    storage,
    register: "till-1",
    token: (entry) => (entry.sessionId === null ? undefined : tokens.get(entry.sessionId)),
    backoff: { initialMs: 50, maxMs: 400 },
    onEvent: (event) => {
      if (event.type !== "acknowledged") return;
      if (!firstAnswers.has(event.entry.id)) firstAnswers.set(event.entry.id, event.body);
      acknowledged += 1;
      // The server dies in the middle of the sending, answers in flight lost; back a moment later.
      if (acknowledged === 300) {
        crash = (async () => {
          await till.stop("SIGKILL");
          await new Promise((done) => setTimeout(done, 300));
          await till.restart();
        })();
      }
    },
  });
  const totals = new Map<string, number>();
  const registerOf = new Map<string, string>();
  for (let i = 0; i < SALES; i++) {
    const register = REGISTERS[i % REGISTERS.length] as string;
    const session = sessions.get(register) as Session;
    const lines: CartLine[] = Array.from({ length: rng.int(1, 4) }, (_, l) => ({ id: `l${l}`, skuId: rng.pick(skus), quantity: rng.int(1, 3) }));
    const couponCode = i % 10 === 0 ? "WELCOME" : undefined;
    const issuedAt = new Date().toISOString();
    const priced = pricer.price({ lines, issuedAt, ...(couponCode === undefined ? {} : { couponCode }) });
    if (!priced.ok) {
      // A basket under the coupon's minimum: rung without the coupon, as a cashier would.
      assert.equal(priced.refusal.reason.kind, "coupon_below_minimum");
      i -= 1;
      continue;
    }
    const transactionId = `offline-${String(i).padStart(4, "0")}`;
    const body = cashSale({ transactionId, number: `${register}-${i}`, session, issuedAt, lines, quote: priced.quote, ...(couponCode === undefined ? {} : { couponCode }) });
    await outbox.enqueueSale(body, { register });
    totals.set(transactionId, priced.quote.totals.total);
    registerOf.set(transactionId, register);
  }
  assert.equal(totals.size, SALES);

  // Sending while the server is down: nothing is lost, each register's head waits.
  const down = await outbox.flush();
  assert.equal(down.acknowledged, 0);
  assert.equal(down.failures, REGISTERS.length);
  assert.equal(down.waiting, SALES);
  assert.equal(down.setAside, 0);
  const waiting = await outbox.waiting();
  assert.equal(waiting.length, SALES);
  assert.ok(waiting.every((entry) => entry.kind === "sale"));
  // What a till restored from a backup would send again.
  const backup = storage.copy();

  // The server comes back; the queue goes, through a crash of the server.
  await till.restart();
  const sent = await outbox.drain({ timeoutMs: 90_000 });
  if (crash !== null) await crash;
  assert.equal(sent.waiting, 0, `still waiting: ${JSON.stringify(sent)}`);
  assert.equal(sent.setAside, 0, JSON.stringify(await outbox.setAside()));
  assert.equal(sent.acknowledged, SALES);
  assert.ok(sent.failures > 0, "the crash made some sends fail");
  assert.equal(firstAnswers.size, SALES);

  // The same queue again, from the backup: every sale answers its first answer, byte for byte.
  const again = new Outbox({ client, storage: backup, register: "till-1", token: (entry) => tokens.get(entry.sessionId ?? ""), backoff: { initialMs: 50, maxMs: 400 } });
  const kept: OutboxEntry[] = await again.waiting();
  assert.equal(kept.length, SALES);
  const resent = await again.drain({ timeoutMs: 60_000 });
  assert.equal(resent.acknowledged, SALES);
  assert.equal(resent.replayed, SALES);

  // And twice more, shuffled, in concurrent batches, as kept (byte for byte).
  for (let round = 0; round < 2; round++) {
    const order = shuffle(kept, rng);
    for (let start = 0; start < order.length; start += 100) {
      const batch = order.slice(start, start + 100);
      await inPool(batch.length, 16, async (b) => {
        const entry = batch[b] as OutboxEntry;
        const answer = await client.raw(entry.method, entry.path, { rawBody: entry.body, token: tokens.get(entry.sessionId ?? "") as string });
        assert.equal(answer.status, 201, answer.text);
        assert.equal(answer.headers.get("x-idempotent-replay"), "true");
        assert.equal(answer.text, firstAnswers.get(entry.id));
      });
    }
  }

  // Booked exactly once each, at the total the till showed: the sales search...
  const found = new Map<string, number>();
  let cursor: string | undefined;
  do {
    const page: SaleSummaryPage = await client.searchSales({ storeId: STORE, limit: 500, ...(cursor === undefined ? {} : { cursor }) });
    for (const sale of page.items) {
      assert.ok(!found.has(sale.transactionId), `${sale.transactionId} listed twice`);
      found.set(sale.transactionId, sale.totalCents);
      assert.equal(sale.registerId, registerOf.get(sale.transactionId));
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  assert.deepEqual(new Map([...found].sort()), new Map([...totals].sort()));

  // ...and the feed: one sale.completed per sale.
  const completed = new Map<string, number>();
  let after: string | undefined;
  for (;;) {
    const page: FeedPage = await client.events({ limit: 1000, types: ["sale.completed"], ...(after === undefined ? {} : { after }) });
    if (page.events.length === 0) break;
    for (const event of page.events) {
      if (event.type !== "sale.completed") continue;
      const id = event.data.transaction.id;
      completed.set(id, (completed.get(id) ?? 0) + 1);
    }
    after = page.nextCursor;
  }
  assert.equal(completed.size, SALES);
  assert.ok([...completed.values()].every((count) => count === 1));

  // Every register's chains verify, one ticket per sale.
  for (const register of REGISTERS) {
    const verified = await client.verifyRegister(register);
    assert.equal(verified.ok, true, JSON.stringify(verified));
    assert.equal(verified.chains["ticket"], SALES / REGISTERS.length);
  }
});
