// Entries the server refuses are set aside with its answer, and the rest of the queue goes on:
// a sale whose transactionId was booked with other content (409), sales refused by a business
// rule (422). A register whose token the server no longer takes (401) waits for a new one. The
// queue also carries a card payment attempt, its outcome and the sale that captures it, and a
// cash movement, in their order.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { SaleRequestBody } from "../src/client.js";
import { MemoryStorage, OfflineStore } from "../src/offline/index.js";
import { Outbox, type OutboxEvent } from "../src/outbox/index.js";
import type { CartLine } from "../src/pricing/index.js";
import { cashSale, openSession, putArticle, putCashier, putStore, skuOf, type Session } from "./harness/shop.js";
import { TillProcess } from "./harness/till.js";

const STORE = "nation";

let till: TillProcess;

before(async () => {
  till = await TillProcess.start();
});

after(async () => {
  await till?.destroy();
});

test("a refused entry is set aside with the server's answer and the rest of the queue goes on", async () => {
  const client = till.client;
  await putStore(client, STORE);
  await putCashier(client);
  const bread = skuOf("refusal-bread");
  const jam = skuOf("refusal-jam");
  const later = skuOf("refusal-later");
  await putArticle(client, bread, { name: "Pain", priceCents: 250, vatRate: 5.5 });
  await putArticle(client, jam, { name: "Confiture", priceCents: 590, vatRate: 5.5 });
  const one = await openSession(till, STORE, "till-1");
  const two = await openSession(till, STORE, "till-2");
  const store = new OfflineStore({ client, storage: new MemoryStorage(), storeId: STORE });
  await store.sync();
  const pricer = await store.pricer();

  const sale = (transactionId: string, session: Session, lines: CartLine[]): SaleRequestBody => {
    const issuedAt = new Date().toISOString();
    const priced = pricer.price({ lines, issuedAt });
    assert.ok(priced.ok, JSON.stringify(priced));
    return cashSale({ transactionId, number: transactionId, session, issuedAt, lines, quote: priced.quote });
  };

  // Booked online before the network went.
  const booked = sale("dup", one, [{ id: "l1", skuId: bread, quantity: 1 }]);
  await client.finalizeSale(booked, { token: one.token });

  await till.stop();
  let tokenTwo = "pos_st_not-a-token-the-server-knows";
  const events: OutboxEvent[] = [];
  const outbox = new Outbox({
    client,
    storage: new MemoryStorage(),
    register: "till-1",
    token: (entry) => (entry.register === "till-2" ? tokenTwo : one.token),
    backoff: { initialMs: 50, maxMs: 300 },
    onEvent: (event) => events.push(event),
  });
  await outbox.enqueueSale(sale("s1", one, [{ id: "l1", skuId: bread, quantity: 2 }]));
  // The same id again with other content: a till that reused an id.
  await outbox.enqueueSale(sale("dup", one, [{ id: "l1", skuId: jam, quantity: 1 }]));
  // Short of the total: refused by a rule.
  const short = sale("short", one, [{ id: "l1", skuId: jam, quantity: 2 }]);
  short.tenders.amountDue -= 100;
  (short.tenders.tenders[0] as { applied: number }).applied -= 100;
  await outbox.enqueueSale(short);
  await outbox.enqueueCashMovement(one.sessionId, { movementId: "float-top-up", kind: "paid_in", amountCents: 500, reason: "change" });
  // A card sale: the attempt, what the terminal said, then the sale capturing it.
  const card = sale("s2", one, [{ id: "l1", skuId: jam, quantity: 1 }]);
  const due = card.tenders.amountDue;
  card.tenders.tenders = [{ id: "p1", method: "card", reference: "pay-1", applied: due, presented: due, change: 0, forfeited: 0 }];
  await outbox.enqueuePayment({ paymentId: "pay-1", sessionId: one.sessionId, amountCents: due, method: "card", terminalId: "tpe-1" });
  await outbox.enqueuePaymentOutcome("pay-1", { status: "authorized", authorizedCents: due, authorizationCode: "A1B2C3", last4: "4242" }, { sessionId: one.sessionId });
  await outbox.enqueueSale(card);
  await outbox.enqueueSale(sale("s3", one, [{ id: "l1", skuId: bread, quantity: 3 }]));
  // An article the till knew of before the server (a till's own catalog ahead of it).
  const unknown = sale("s1", two, [{ id: "l1", skuId: bread, quantity: 1 }]);
  unknown.transactionId = "t2-unknown";
  unknown.cart.lines.push({ id: "l2", skuId: later, quantity: 1, unitPrice: 400, vatRate: 20, free: false });
  unknown.tenders.amountDue += 400;
  (unknown.tenders.tenders[0] as { applied: number; presented: number }).applied += 400;
  (unknown.tenders.tenders[0] as { applied: number; presented: number }).presented += 400;
  await outbox.enqueueSale(unknown, { register: "till-2" });
  await outbox.enqueueSale(sale("t2-ok", two, [{ id: "l1", skuId: jam, quantity: 1 }]), { register: "till-2" });

  await till.restart();
  const first = await outbox.drain({ timeoutMs: 30_000 });
  // till-1's queue went through, its refusals set aside; till-2 waits for a token.
  assert.deepEqual(first.unauthorized, ["till-2"]);
  assert.equal(first.waiting, 2);
  assert.deepEqual((await outbox.waiting()).map((e) => e.id), ["t2-unknown", "t2-ok"]);
  const aside = await outbox.setAside();
  assert.deepEqual(aside.map((e) => [e.id, e.answer.status, e.answer.code]), [
    ["dup", 409, "CONFLICT"],
    ["short", 422, "BUSINESS_RULE_VIOLATION"],
  ]);
  for (const entry of aside) {
    assert.equal(entry.answer.envelope?.error.statusCode, entry.answer.status);
    assert.ok((entry.answer.envelope?.error.message ?? "").length > 0);
  }
  // Set aside byte for byte as queued: the other "dup" is still there to show a manager.
  assert.equal(JSON.parse(aside[0]?.body ?? "{}").cart.lines[0].skuId, jam);
  assert.equal((await client.getSale("dup")).transaction.lines[0]?.skuId, bread);
  for (const id of ["s1", "s2", "s3"]) assert.equal((await client.getSale(id)).registerId, "till-1");
  const payment = await client.getPayment("pay-1");
  assert.equal(payment.state, "captured");
  assert.equal(payment.capturedBy, "s2");
  const xReport: { movements: { paidInCents: number } } = await client.json("GET", `/v1/register-sessions/${one.sessionId}/x-report`);
  assert.equal(xReport.movements.paidInCents, 500);
  // In till-1's order: the attempt, its outcome, the sale.
  const sentOrder = events.flatMap((e) => (e.type === "acknowledged" && e.entry.register === "till-1" ? [e.entry.id] : []));
  assert.deepEqual(sentOrder, ["s1", "float-top-up", "pay-1", "pay-1", "s2", "s3"]);

  // A new token for till-2: its queue goes on; the unknown article is refused and set aside.
  tokenTwo = two.token;
  await outbox.resume();
  const second = await outbox.drain({ timeoutMs: 30_000 });
  assert.equal(second.waiting, 0);
  assert.deepEqual(second.unauthorized, []);
  const unknownAside = (await outbox.setAside()).find((e) => e.id === "t2-unknown");
  assert.equal(unknownAside?.answer.status, 422);
  assert.equal((await client.getSale("t2-ok")).registerId, "till-2");

  // What a manager does with them: the article is created, the sale sent again as it was rung...
  await putArticle(client, later, { name: "Arrivé plus tard", priceCents: 400, vatRate: 20 });
  await outbox.retrySetAside(unknownAside?.seq ?? -1);
  const third = await outbox.drain({ timeoutMs: 30_000 });
  assert.equal(third.acknowledged, 1);
  assert.equal((await client.getSale("t2-unknown")).ticket.totalCents, unknown.tenders.amountDue);
  // ...the conflicting one is dismissed once looked at (it was never a sale of its own).
  const dismissed = await outbox.dismiss(aside[0]?.seq ?? -1);
  assert.equal(dismissed.id, "dup");
  assert.deepEqual((await outbox.setAside()).map((e) => e.id), ["short"]);

  for (const register of ["till-1", "till-2"]) {
    const verified = await client.verifyRegister(register);
    assert.equal(verified.ok, true, JSON.stringify(verified));
  }
});
