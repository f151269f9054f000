// A sale rung offline before a price change, sent after the change was written on the server
// (its issuedAt before the change), is booked at the prices in force when it was rung, with the
// total the till showed; and a price scheduled ahead, known from the snapshot, applies offline
// from its instant as it does on the server.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { MemoryStorage, OfflineStore } from "../src/offline/index.js";
import { Outbox } from "../src/outbox/index.js";
import type { CartLine } from "../src/pricing/index.js";
import { cashSale, openSession, putArticle, putCashier, putStore, putStorePrice, skuOf, sleep } from "./harness/shop.js";
import { TillProcess } from "./harness/till.js";

const STORE = "bastille";

let till: TillProcess;

before(async () => {
  till = await TillProcess.start();
});

after(async () => {
  await till?.destroy();
});

test("a sale rung before a price change books at its issuedAt prices and the total the till showed", async () => {
  const client = till.client;
  await putStore(client, STORE);
  await putCashier(client);
  const a = skuOf("change-a");
  const b = skuOf("change-b");
  const c = skuOf("change-c");
  await putArticle(client, a, { name: "Café", priceCents: 1000, vatRate: 20 });
  await putArticle(client, b, { name: "Thé", priceCents: 900, vatRate: 5.5 });
  await putStorePrice(client, STORE, b, 800);
  await putArticle(client, c, { name: "Chocolat", priceCents: 500, vatRate: 5.5 });
  // A price scheduled a few seconds ahead: the till must switch to it by itself, offline.
  const switchAt = new Date(Date.now() + 3_000).toISOString();
  await putArticle(client, c, { name: "Chocolat", priceCents: 650, vatRate: 5.5, effectiveFrom: switchAt });
  const session = await openSession(till, STORE, "till-9");

  const store = new OfflineStore({ client, storage: new MemoryStorage(), storeId: STORE });
  await store.sync();
  const outbox = new Outbox({ client, storage: new MemoryStorage(), register: "till-9", token: () => session.token, backoff: { initialMs: 50, maxMs: 200 } });

  // Offline: a sale rung at the old prices.
  await till.stop();
  const lines: CartLine[] = [
    { id: "l1", skuId: a, quantity: 2 },
    { id: "l2", skuId: b, quantity: 1 },
    { id: "l3", skuId: c, quantity: 1 },
  ];
  // Rung before the scheduled price starts, however slow the machine was to get here.
  const rungAt = new Date(Math.min(Date.now(), Date.parse(switchAt) - 1)).toISOString();
  const before = (await store.pricer()).price({ lines, issuedAt: rungAt });
  assert.ok(before.ok);
  assert.equal(before.quote.totals.total, 2 * 1000 + 800 + 500);
  await outbox.enqueueSale(cashSale({ transactionId: "before-change", number: "T9-1", session, issuedAt: rungAt, lines, quote: before.quote }));

  // The scheduled price starts while the till is offline: the next sale pays it.
  await sleep(Math.max(0, Date.parse(switchAt) - Date.now()) + 50);
  const scheduledAt = new Date().toISOString();
  const scheduled = (await store.pricer()).price({ lines: [{ id: "l1", skuId: c, quantity: 1 }], issuedAt: scheduledAt });
  assert.ok(scheduled.ok);
  assert.equal(scheduled.quote.totals.total, 650);
  await outbox.enqueueSale(
    cashSale({ transactionId: "after-schedule", number: "T9-2", session, issuedAt: scheduledAt, lines: [{ id: "l1", skuId: c, quantity: 1 }], quote: scheduled.quote }),
  );

  // Back online, the back office changes prices before the queue is sent.
  await till.restart();
  await sleep(5);
  await putArticle(client, a, { name: "Café", priceCents: 1500, vatRate: 20 });
  await putStorePrice(client, STORE, b, 700);
  await client.json("POST", "/v1/promotions", {
    body: { id: "half-coffee", name: "Half coffee", type: "percent_off", percentBps: 5000, productIds: [a], validFrom: new Date().toISOString(), validUntil: "2099-01-01T00:00:00Z" },
  });

  // The offline store follows: the new prices from their instant, the old ones before it.
  const synced = await store.sync();
  assert.equal(synced.snapshots, 0);
  assert.ok(synced.events >= 3);
  const pricer = await store.pricer();
  const again = pricer.price({ lines, issuedAt: rungAt });
  assert.ok(again.ok);
  assert.deepEqual(again.quote, before.quote);
  const nowAt = new Date().toISOString();
  const now = pricer.price({ lines, issuedAt: nowAt });
  assert.ok(now.ok);
  const server = await client.priceCart({
    storeId: STORE,
    issuedAt: nowAt,
    cart: { freeLineSequence: 0, lines: lines.map((l) => ({ id: l.id, skuId: l.skuId, quantity: l.quantity, unitPrice: 0, vatRate: 0, free: false })) },
  });
  assert.deepEqual(now.quote, server);
  assert.equal(now.quote.totals.total, 2 * 750 + 700 + 650);
  await outbox.enqueueSale(cashSale({ transactionId: "after-change", number: "T9-3", session, issuedAt: nowAt, lines, quote: now.quote }));

  const report = await outbox.drain({ timeoutMs: 30_000 });
  assert.equal(report.acknowledged, 3);
  assert.deepEqual(await outbox.setAside(), []);

  const old = await client.getSale("before-change");
  assert.equal(old.ticket.totalCents, before.quote.totals.total);
  assert.deepEqual(old.transaction.lines.map((line) => line.unitPrice), [1000, 800, 500]);
  assert.equal((await client.getSale("after-schedule")).ticket.totalCents, 650);
  assert.equal((await client.getSale("after-change")).ticket.totalCents, 2 * 750 + 700 + 650);
});
