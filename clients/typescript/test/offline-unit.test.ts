// The pieces under the offline store, without a server: the storage's transactions, the NDJSON
// reader, instants, and the price history kept across reads.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ndjsonLines, retryAfterMs } from "../src/client.js";
import { nextCatalogPrices, nextStorePrices } from "../src/offline/history.js";
import { MemoryStorage, instantNanos } from "../src/offline/index.js";

test("a transaction's writes commit together, or not at all", async () => {
  const storage = new MemoryStorage();
  await storage.transaction("readwrite", async (tx) => {
    await tx.put("a", "2", { n: 2 });
    await tx.put("a", "1", { n: 1 });
    await tx.setCursor("7");
    assert.deepEqual(await tx.list("a"), [{ n: 1 }, { n: 2 }], "a transaction sees its own writes, by key");
  });
  await assert.rejects(
    storage.transaction("readwrite", async (tx) => {
      await tx.put("a", "3", { n: 3 });
      await tx.clear("a");
      await tx.setCursor("8");
      throw new Error("stop");
    }),
    /stop/,
  );
  await storage.transaction("readonly", async (tx) => {
    assert.deepEqual(await tx.keys("a"), ["1", "2"]);
    assert.equal(await tx.getCursor(), "7");
    await assert.rejects(tx.put("a", "4", {}), /read-only/);
  });
  // Values are copies: changing what was read changes nothing stored.
  const read = await storage.transaction("readonly", (tx) => tx.get<{ n: number }>("a", "1"));
  assert.ok(read !== undefined);
  read.n = 99;
  assert.deepEqual(await storage.transaction("readonly", (tx) => tx.get("a", "1")), { n: 1 });
  // Cleared then written in one transaction: only the new records.
  await storage.transaction("readwrite", async (tx) => {
    await tx.clear("a");
    await tx.put("a", "9", { n: 9 });
    assert.equal(await tx.get("a", "1"), undefined);
  });
  assert.deepEqual(await storage.transaction("readonly", (tx) => tx.list("a")), [{ n: 9 }]);
});

test("NDJSON lines are read across chunks, a character split between two chunks included", async () => {
  const text = '{"type":"head","name":"Crème"}\n{"type":"end"}\n\n{"last":"no newline é"}';
  const bytes = new TextEncoder().encode(text);
  for (const size of [1, 2, 3, 7, 64]) {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += size) controller.enqueue(bytes.slice(i, i + size));
        controller.close();
      },
    });
    const lines: string[] = [];
    for await (const line of ndjsonLines(body)) lines.push(line);
    assert.deepEqual(lines.map((l) => JSON.parse(l)), [{ type: "head", name: "Crème" }, { type: "end" }, { last: "no newline é" }], `chunks of ${size}`);
  }
});

test("instants are compared to the nanosecond", () => {
  assert.equal(instantNanos("1970-01-01T00:00:01Z"), 1_000_000_000n);
  assert.equal(instantNanos("2026-03-01T22:41Z"), instantNanos("2026-03-01T22:41:00.000000000Z"));
  assert.equal(instantNanos("2026-03-01T22:41:07.250123Z") - instantNanos("2026-03-01T22:41:07.250122999Z"), 1n);
  assert.equal(instantNanos("2026-03-01T23:41:00+01:00"), instantNanos("2026-03-01T22:41:00Z"));
  assert.throws(() => instantNanos("yesterday"));
  assert.equal(retryAfterMs("3"), 3000);
  assert.equal(retryAfterMs(new Date(Date.now() + 60_000).toUTCString(), Date.now()) !== null, true);
  assert.equal(retryAfterMs("soon"), null);
});

test("the catalog's prices: the old ones stay, the new one starts at the write", () => {
  const known = [
    { effectiveFrom: "2026-01-01T00:00:00Z", priceCents: 100, vatRate: 20 },
    { effectiveFrom: "2026-02-01T00:00:00Z", priceCents: 120, vatRate: 20 },
  ];
  const view = (priceCents: number, updatedAt: string, scheduled: { effectiveFrom: string; priceCents: number; vatRate: number }[] = []) => ({
    skuId: "x",
    name: "x",
    barcodes: [],
    createdAt: "2026-01-01T00:00:00Z",
    updatedAt,
    priceCents,
    vatRate: 20,
    scheduledPrices: scheduled,
  });
  // A price written on 1 March.
  assert.deepEqual(nextCatalogPrices(known, view(150, "2026-03-01T00:00:00Z", [{ effectiveFrom: "2026-06-01T00:00:00Z", priceCents: 160, vatRate: 20 }])), [
    ...known,
    { effectiveFrom: "2026-03-01T00:00:00Z", priceCents: 150, vatRate: 20 },
    { effectiveFrom: "2026-06-01T00:00:00Z", priceCents: 160, vatRate: 20 },
  ]);
  // A write on 15 January (a rename), read after the price scheduled for February started: February stays where it starts.
  assert.deepEqual(nextCatalogPrices(known, view(120, "2026-01-15T00:00:00Z")), known);
});

test("a store's own prices: removed from the change on, kept before it", () => {
  const known = [{ effectiveFrom: "2026-01-01T00:00:00Z", priceCents: 90 }];
  assert.deepEqual(nextStorePrices(known, null, [], "2026-03-01T00:00:00Z"), [...known, { effectiveFrom: "2026-03-01T00:00:00Z", priceCents: null }]);
  assert.deepEqual(nextStorePrices([], null, [], "2026-03-01T00:00:00Z"), []);
  assert.deepEqual(nextStorePrices(known, 80, [{ effectiveFrom: "2026-05-01T00:00:00Z", priceCents: 70 }], "2026-03-01T00:00:00Z"), [
    ...known,
    { effectiveFrom: "2026-03-01T00:00:00Z", priceCents: 80 },
    { effectiveFrom: "2026-05-01T00:00:00Z", priceCents: 70 },
  ]);
});
