// The outbox's rules against a fake server (a fetch function): what is retried and when, what
// is set aside, the order kept per register, and what survives a new Outbox on the same storage.

import assert from "node:assert/strict";
import { test } from "node:test";
import { TillClient } from "../src/client.js";
import { MemoryStorage } from "../src/offline/index.js";
import { Outbox, type OutboxEvent } from "../src/outbox/index.js";

interface Seen {
  path: string;
  body: string;
  token: string | null;
  elevation: string | null;
}

/** A fetch that answers each request with `answer(request, n)` (n: how many came before) and records them. */
function fakeServer(answer: (seen: Seen, n: number) => Response | "drop"): { fetch: typeof fetch; seen: Seen[] } {
  const seen: Seen[] = [];
  const fetcher: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const request: Seen = {
      path: url.pathname,
      body: typeof init?.body === "string" ? init.body : "",
      token: new Headers(init?.headers).get("authorization"),
      elevation: new Headers(init?.headers).get("x-elevation-token"),
    };
    const n = seen.length;
    seen.push(request);
    const answered = answer(request, n);
    if (answered === "drop") throw new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } });
    return answered;
  };
  return { fetch: fetcher, seen };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

const envelope = (status: number, code: string, message = "no"): Response => json(status, { error: { code, message, statusCode: status } });

const movement = (movementId: string): { movementId: string; kind: "paid_in"; amountCents: number } => ({ movementId, kind: "paid_in", amountCents: 100 });

test("Retry-After is honoured, and the register's later entries wait behind its head", async () => {
  const server = fakeServer((_seen, n) =>
    n === 0 ? json(503, { error: { code: "SERVICE_UNAVAILABLE", message: "full", statusCode: 503 } }, { "retry-after": "1" }) : json(201, {}),
  );
  const events: OutboxEvent[] = [];
  const outbox = new Outbox({
    client: new TillClient({ baseUrl: "http://till.test", fetch: server.fetch }),
    storage: new MemoryStorage(),
    register: "r1",
    backoff: { initialMs: 10, maxMs: 20 },
    onEvent: (event) => events.push(event),
  });
  await outbox.enqueueCashMovement("ses_1", movement("m1"));
  await outbox.enqueueCashMovement("ses_1", movement("m2"));
  const started = Date.now();
  const first = await outbox.flush();
  assert.equal(first.failures, 1);
  assert.equal(first.waiting, 2);
  assert.equal(server.seen.length, 1, "m2 waits behind m1");
  const retrying = events.find((e) => e.type === "retrying");
  assert.ok(retrying !== undefined && retrying.type === "retrying");
  assert.ok(retrying.notBefore - started >= 1000, "the backoff is at least what Retry-After asked");
  assert.equal((await outbox.flush()).acknowledged, 0, "not due yet");
  const drained = await outbox.drain({ timeoutMs: 5_000 });
  assert.equal(drained.acknowledged, 2);
  assert.ok(Date.now() - started >= 1000);
  assert.deepEqual(server.seen.map((s) => JSON.parse(s.body).movementId), ["m1", "m1", "m2"]);
});

test("an entry the server fails on every time is set aside after maxServerErrors; 4xx at once; the rest goes on", async () => {
  const server = fakeServer((seen) => {
    const id = JSON.parse(seen.body).movementId as string;
    if (id === "broken") return envelope(500, "INTERNAL_ERROR");
    if (id === "refused") return envelope(422, "BUSINESS_RULE_VIOLATION", "the session is closed");
    if (id === "odd") return new Response("<html>bad gateway</html>", { status: 400 });
    return json(201, {});
  });
  const outbox = new Outbox({
    client: new TillClient({ baseUrl: "http://till.test", fetch: server.fetch }),
    storage: new MemoryStorage(),
    register: "r1",
    backoff: { initialMs: 1, maxMs: 5 },
    maxServerErrors: 3,
  });
  for (const id of ["a", "broken", "b", "refused", "odd", "c"]) await outbox.enqueueCashMovement("ses_1", movement(id));
  const report = await outbox.drain({ timeoutMs: 5_000 });
  assert.equal(report.acknowledged, 3);
  assert.equal(report.waiting, 0);
  const aside = await outbox.setAside();
  assert.deepEqual(aside.map((e) => [e.id, e.answer.status, e.answer.code, e.attempts]), [
    ["broken", 500, "INTERNAL_ERROR", 3],
    ["refused", 422, "BUSINESS_RULE_VIOLATION", 0],
    ["odd", 400, "HTTP_400", 0],
  ]);
  assert.equal(aside[1]?.answer.envelope?.error.message, "the session is closed");
  assert.equal(aside[2]?.answer.envelope, null);
  assert.equal(aside[2]?.answer.body, "<html>bad gateway</html>");
  const ids = server.seen.map((s) => JSON.parse(s.body).movementId as string);
  assert.deepEqual(ids, ["a", "broken", "broken", "broken", "b", "refused", "odd", "c"]);
});

test("registers keep their own order and do not wait for each other", async () => {
  let down = true;
  const server = fakeServer((seen) => (seen.body.includes('"r2-') && down ? "drop" : json(201, {})));
  const storage = new MemoryStorage();
  const outbox = new Outbox({ client: new TillClient({ baseUrl: "http://till.test", fetch: server.fetch }), storage, register: "r1", backoff: { initialMs: 1, maxMs: 2 } });
  for (let i = 0; i < 5; i++) {
    await outbox.enqueueCashMovement("ses_1", movement(`r1-${i}`));
    await outbox.enqueueCashMovement("ses_2", movement(`r2-${i}`), { register: "r2" });
  }
  const report = await outbox.flush();
  assert.equal(report.acknowledged, 5);
  assert.deepEqual((await outbox.waiting()).map((e) => e.id), ["r2-0", "r2-1", "r2-2", "r2-3", "r2-4"]);

  // A till that restarts: a new Outbox on the same storage finds the queue and sends it in order.
  down = false;
  const restarted = new Outbox({ client: new TillClient({ baseUrl: "http://till.test", fetch: server.fetch }), storage, register: "r1" });
  assert.equal((await restarted.waiting()).length, 5);
  assert.equal((await restarted.drain({ timeoutMs: 2_000 })).acknowledged, 5);
  const r2 = server.seen.map((s) => JSON.parse(s.body).movementId as string).filter((id) => id.startsWith("r2-"));
  assert.deepEqual(r2.filter((id, i) => id !== r2[i - 1]), ["r2-0", "r2-1", "r2-2", "r2-3", "r2-4"]);
  // The body sent is the body queued, every time.
  const bodies = new Set(server.seen.filter((s) => s.body.includes('"r2-0"')).map((s) => s.body));
  assert.equal(bodies.size, 1);
});

test("the token of each entry is asked for when it is sent; a 401 holds the register until resume", async () => {
  let token = "old";
  const server = fakeServer((seen) => (seen.token === "Bearer new" ? json(201, {}) : envelope(401, "UNAUTHORIZED")));
  const outbox = new Outbox({
    client: new TillClient({ baseUrl: "http://till.test", fetch: server.fetch }),
    storage: new MemoryStorage(),
    register: "r1",
    token: () => token,
  });
  await outbox.enqueueCashMovement("ses_1", movement("m1"));
  await outbox.enqueueCashMovement("ses_1", movement("m2"));
  const held = await outbox.drain({ timeoutMs: 2_000 });
  assert.deepEqual(held.unauthorized, ["r1"]);
  assert.equal(held.waiting, 2);
  assert.equal(held.setAside, 0);
  assert.equal(server.seen.length, 1);
  token = "new";
  await outbox.resume();
  assert.equal((await outbox.waiting()).length, 0);
  assert.deepEqual(await outbox.setAside(), []);
});

test("start() sends in the background as entries are queued", async () => {
  const server = fakeServer(() => json(201, {}));
  const outbox = new Outbox({ client: new TillClient({ baseUrl: "http://till.test", fetch: server.fetch }), storage: new MemoryStorage(), register: "r1" });
  outbox.start();
  await outbox.enqueueCashMovement("ses_1", movement("m1"));
  for (let i = 0; i < 100 && server.seen.length === 0; i++) await new Promise((done) => setTimeout(done, 10));
  await outbox.enqueueCashMovement("ses_1", movement("m2"));
  for (let i = 0; i < 100 && (await outbox.waiting()).length > 0; i++) await new Promise((done) => setTimeout(done, 10));
  await outbox.stop();
  assert.deepEqual(server.seen.map((s) => JSON.parse(s.body).movementId), ["m1", "m2"]);
});

test("a sale queued with a manager's elevation token is sent with it, every time, and kept across a new Outbox", async () => {
  const server = fakeServer((_seen, n) => (n === 0 ? "drop" : json(201, {})));
  const storage = new MemoryStorage();
  const client = new TillClient({ baseUrl: "http://till.test", fetch: server.fetch });
  const first = new Outbox({ client, storage, register: "r1", backoff: { initialMs: 1, maxMs: 2 } });
  const sale = { transactionId: "t-el", sessionId: "ses_1", registerId: "r1" } as unknown as Parameters<Outbox["enqueueSale"]>[0];
  await first.enqueueSale(sale, { elevationToken: "pos_el_abc" });
  await first.enqueueCashMovement("ses_1", movement("m-plain"));
  assert.equal((await first.flush()).failures, 1);
  const second = new Outbox({ client, storage, register: "r1", backoff: { initialMs: 1, maxMs: 2 } });
  assert.equal((await second.drain({ timeoutMs: 5_000 })).acknowledged, 2);
  assert.deepEqual(server.seen.map((s) => [s.path, s.elevation]), [
    ["/v1/checkout/finalize", "pos_el_abc"],
    ["/v1/checkout/finalize", "pos_el_abc"],
    ["/v1/register-sessions/ses_1/cash-movements", null],
  ]);
});
