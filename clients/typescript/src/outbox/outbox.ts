// A durable outbox: the writes a till made while it could not reach the server (sales, returns,
// card payment attempts and their outcomes, cash movements), each kept byte for byte with its
// idempotency key until the server acknowledges it (docs/offline.md).
//
// - Entries of one register are sent one at a time, in the order they were queued: an attempt
//   before its outcome, the outcome before the sale that captures it. Registers are sent side
//   by side.
// - A 2xx acknowledges the entry (a replay too: an earlier send was booked); it leaves the outbox.
// - No answer, 408, 429, 5xx: the outcome is unknown; the entry is sent again as it is, after a
//   backoff (doubling up to `maxMs`, at least what `Retry-After` asks). The register's later
//   entries wait behind it.
// - 401: the token expired. The register's entries wait for `resume()`, with a new token from
//   `token(entry)` (a new session of the same register books the older sessions' sales late).
// - Any other answer (409 for an id booked with other content, 422 refused, 400, 403, 404...) is
//   final for that entry: it is set aside with the server's answer (status and envelope), never
//   sent again on its own and never dropped, and the register's next entries go on. So is an
//   entry that met `maxServerErrors` 500s in a row: a request the server fails on every time.
//
// One Outbox per storage: it keeps an index of the entries in memory.

import { TillUnreachable, type CashMovementBody, type ErrorEnvelope, type OutcomeBody, type PaymentBody, type ReturnRequestBody, type SaleRequestBody, type TillClient } from "../client.js";
import { retryAfterMs } from "../client.js";
import type { OfflineStorage } from "../offline/storage.js";

export type OutboxKind = "sale" | "return" | "payment" | "payment_outcome" | "cash_movement" | "request";

/** A write waiting to be acknowledged. */
export interface OutboxEntry {
  /** Its place in the outbox: entries of a register are sent by it. */
  seq: number;
  kind: OutboxKind;
  /** The idempotency key the server knows it by: a transactionId, paymentId or movementId. */
  id: string;
  /** The register whose order it keeps. */
  register: string;
  sessionId: string | null;
  method: "POST" | "PUT";
  path: string;
  /** The request's body exactly as it is sent every time (UTF-8). */
  body: string;
  /**
   * Headers sent with it every time, beyond the token: a manager's elevation token
   * (`x-elevation-token`) for the one finalize it approves. Absent on most entries.
   */
  headers?: Record<string, string>;
  /** When it was queued, by the till's clock. */
  queuedAt: string;
  /** Sends that got no final answer. */
  attempts: number;
  /** Epoch milliseconds before which it is not sent again. */
  notBefore: number;
  /** What the last send met, for a person to read. */
  lastFailure: string | null;
  /** 500s in a row. */
  serverErrors: number;
}

/** What the server answered an entry it refused. */
export interface ServerAnswer {
  status: number;
  /** The envelope's code (`CONFLICT`, `BUSINESS_RULE_VIOLATION`...), or `HTTP_<status>`. */
  code: string;
  envelope: ErrorEnvelope | null;
  /** The body as it came. */
  body: string;
  requestId: string | null;
}

/** An entry set aside for a person: the server refused it, or failed on it every time. */
export interface SetAsideEntry extends OutboxEntry {
  answer: ServerAnswer;
  setAsideAt: string;
}

export type OutboxEvent =
  | { type: "acknowledged"; entry: OutboxEntry; status: number; replayed: boolean; body: string }
  | { type: "retrying"; entry: OutboxEntry; reason: string; notBefore: number }
  | { type: "set_aside"; entry: SetAsideEntry }
  | { type: "unauthorized"; entry: OutboxEntry; answer: ServerAnswer };

export interface OutboxOptions {
  client: TillClient;
  storage: OfflineStorage;
  /** The register entries belong to unless an enqueue names another. */
  register: string;
  /** The bearer token to send an entry with; undefined: the client's. */
  token?: (entry: OutboxEntry) => string | undefined | Promise<string | undefined>;
  backoff?: { initialMs?: number; maxMs?: number };
  /** 500s in a row before an entry is set aside (default 10). */
  maxServerErrors?: number;
  /** Registers sent side by side (default 4). */
  concurrency?: number;
  onEvent?: (event: OutboxEvent) => void;
  /** The clock, in epoch milliseconds (tests). */
  now?: () => number;
}

export interface FlushReport {
  /** Acknowledged by this flush, replays included. */
  acknowledged: number;
  /** Of those, answered as replays of an earlier send. */
  replayed: number;
  /** Set aside by this flush. */
  setAside: number;
  /** Sends that got no final answer. */
  failures: number;
  /** Registers waiting for a new token (401). */
  unauthorized: string[];
  /** Entries still waiting, all registers. */
  waiting: number;
  /** The soonest instant (epoch ms) an entry may be sent again; null when none waits. */
  nextAttemptAt: number | null;
}

const WAITING = "outbox";
const ASIDE = "outbox-aside";
const META = "outbox-meta";
const SEQ = "seq";

/** Keys sort as numbers: zero-padded. */
function keyOf(seq: number): string {
  return String(seq).padStart(15, "0");
}

export class Outbox {
  private readonly client: TillClient;
  private readonly storage: OfflineStorage;
  private readonly register: string;
  private readonly tokenOf: OutboxOptions["token"];
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly maxServerErrors: number;
  private readonly concurrency: number;
  private readonly onEvent: (event: OutboxEvent) => void;
  private readonly now: () => number;

  /** Waiting entries by register, by seq. Loaded from the storage on first use. */
  private lanes: Map<string, OutboxEntry[]> | null = null;
  private loading: Promise<Map<string, OutboxEntry[]>> | null = null;
  private unauthorized = new Set<string>();
  private flushing: Promise<FlushReport> | null = null;
  private running: { stop: boolean; wake: () => void; done: Promise<void> } | null = null;

  constructor(options: OutboxOptions) {
    this.client = options.client;
    this.storage = options.storage;
    this.register = options.register;
    this.tokenOf = options.token;
    this.initialMs = options.backoff?.initialMs ?? 1_000;
    this.maxMs = options.backoff?.maxMs ?? 60_000;
    this.maxServerErrors = options.maxServerErrors ?? 10;
    this.concurrency = options.concurrency ?? 4;
    this.onEvent = options.onEvent ?? (() => undefined);
    this.now = options.now ?? Date.now;
  }

  // --- Queuing --------------------------------------------------------------------------------

  /** Queues a sale (`POST /v1/checkout/finalize`) by its transactionId. */
  enqueueSale(body: SaleRequestBody, options: { register?: string; elevationToken?: string } = {}): Promise<OutboxEntry> {
    return this.enqueue({
      kind: "sale",
      id: body.transactionId,
      register: options.register ?? body.registerId ?? this.register,
      sessionId: body.sessionId,
      path: "/v1/checkout/finalize",
      body: JSON.stringify(body),
      ...(options.elevationToken === undefined ? {} : { headers: { "x-elevation-token": options.elevationToken } }),
    });
  }

  /** Queues a return (`POST /v1/returns`) by its transactionId. */
  enqueueReturn(body: ReturnRequestBody, options: { register?: string } = {}): Promise<OutboxEntry> {
    return this.enqueue({
      kind: "return",
      id: body.transactionId,
      register: options.register ?? body.registerId ?? this.register,
      sessionId: body.sessionId,
      path: "/v1/returns",
      body: JSON.stringify(body),
    });
  }

  /** Queues a card payment attempt (`POST /v1/payments`) by its paymentId. */
  enqueuePayment(body: PaymentBody, options: { register?: string } = {}): Promise<OutboxEntry> {
    return this.enqueue({
      kind: "payment",
      id: body.paymentId,
      register: options.register ?? this.register,
      sessionId: body.sessionId,
      path: "/v1/payments",
      body: JSON.stringify(body),
    });
  }

  /** Queues what the terminal said of an attempt (`POST /v1/payments/{paymentId}/outcome`). */
  enqueuePaymentOutcome(paymentId: string, body: OutcomeBody, options: { register?: string; sessionId?: string } = {}): Promise<OutboxEntry> {
    return this.enqueue({
      kind: "payment_outcome",
      id: paymentId,
      register: options.register ?? this.register,
      sessionId: options.sessionId ?? null,
      path: `/v1/payments/${encodeURIComponent(paymentId)}/outcome`,
      body: JSON.stringify(body),
    });
  }

  /** Queues a cash movement (`POST /v1/register-sessions/{sessionId}/cash-movements`) by its movementId. */
  enqueueCashMovement(sessionId: string, body: CashMovementBody, options: { register?: string } = {}): Promise<OutboxEntry> {
    return this.enqueue({
      kind: "cash_movement",
      id: body.movementId,
      register: options.register ?? this.register,
      sessionId,
      path: `/v1/register-sessions/${encodeURIComponent(sessionId)}/cash-movements`,
      body: JSON.stringify(body),
    });
  }

  /**
   * Queues a request whose body is already text (kept and sent exactly as given): another
   * idempotent write, or an entry taken from another outbox (a backup).
   */
  async enqueue(request: {
    kind: OutboxKind;
    id: string;
    register: string;
    sessionId: string | null;
    path: string;
    body: string;
    method?: "POST" | "PUT";
    headers?: Record<string, string>;
  }): Promise<OutboxEntry> {
    const lanes = await this.load();
    const entry = await this.storage.transaction("readwrite", async (tx) => {
      const seq = ((await tx.get<number>(META, SEQ)) ?? 0) + 1;
      const entry: OutboxEntry = {
        seq,
        kind: request.kind,
        id: request.id,
        register: request.register,
        sessionId: request.sessionId,
        method: request.method ?? "POST",
        path: request.path,
        body: request.body,
        queuedAt: new Date(this.now()).toISOString(),
        attempts: 0,
        notBefore: 0,
        lastFailure: null,
        serverErrors: 0,
        ...(request.headers === undefined ? {} : { headers: { ...request.headers } }),
      };
      await tx.put(META, SEQ, seq);
      await tx.put(WAITING, keyOf(seq), entry);
      return entry;
    });
    insertBySeq(lanes, entry);
    this.running?.wake();
    return entry;
  }

  // --- What is in it ---------------------------------------------------------------------------

  /** Entries waiting to be acknowledged, every register, in the order they were queued. */
  async waiting(): Promise<OutboxEntry[]> {
    const lanes = await this.load();
    return [...lanes.values()].flat().sort((a, b) => a.seq - b.seq).map((entry) => ({ ...entry }));
  }

  /** Entries set aside, oldest first: each needs a person's decision. */
  setAside(): Promise<SetAsideEntry[]> {
    return this.storage.transaction("readonly", (tx) => tx.list<SetAsideEntry>(ASIDE));
  }

  /** Registers waiting for a new token since a 401. */
  unauthorizedRegisters(): string[] {
    return [...this.unauthorized];
  }

  /**
   * Puts a set-aside entry back in the queue at its old place (its register's order), to be
   * sent again as it is: once what made the server refuse it is fixed (a session reopened, a
   * coupon restored).
   */
  async retrySetAside(seq: number): Promise<void> {
    const lanes = await this.load();
    const entry = await this.storage.transaction("readwrite", async (tx) => {
      const aside = await tx.get<SetAsideEntry>(ASIDE, keyOf(seq));
      if (aside === undefined) throw new Error(`no entry ${seq} is set aside`);
      const { answer: _answer, setAsideAt: _at, ...rest } = aside;
      const entry: OutboxEntry = { ...rest, attempts: 0, notBefore: 0, serverErrors: 0 };
      await tx.delete(ASIDE, keyOf(seq));
      await tx.put(WAITING, keyOf(seq), entry);
      return entry;
    });
    insertBySeq(lanes, entry);
    this.running?.wake();
  }

  /**
   * Removes a set-aside entry for good: a person decided it (the sale rung again under a new
   * id, the refusal accepted). The outbox never does this by itself. Answers the entry removed.
   */
  dismiss(seq: number): Promise<SetAsideEntry> {
    return this.storage.transaction("readwrite", async (tx) => {
      const aside = await tx.get<SetAsideEntry>(ASIDE, keyOf(seq));
      if (aside === undefined) throw new Error(`no entry ${seq} is set aside`);
      await tx.delete(ASIDE, keyOf(seq));
      return aside;
    });
  }

  /** After a 401: sends the waiting registers' entries again now (the token function answers the new token). */
  async resume(): Promise<FlushReport> {
    const lanes = await this.load();
    for (const register of this.unauthorized) {
      for (const entry of lanes.get(register) ?? []) entry.notBefore = 0;
    }
    this.unauthorized.clear();
    this.running?.wake();
    return this.flush();
  }

  // --- Sending ------------------------------------------------------------------------------------

  /**
   * One pass: each register's entries that are due, in order, until the register is empty or
   * its head must wait (no answer, 5xx, 401). Never throws for a send that failed: see the report.
   */
  flush(): Promise<FlushReport> {
    if (this.flushing !== null) return this.flushing;
    const pass = this.pass().finally(() => {
      this.flushing = null;
    });
    this.flushing = pass;
    return pass;
  }

  /**
   * Flushes until nothing waits, or until what waits can only wait (every register left is
   * waiting for a token), or `timeoutMs` passed, sleeping until the next entry is due between
   * passes. Answers the last pass's report, with the totals of every pass.
   */
  async drain(options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<FlushReport> {
    const deadline = options.timeoutMs === undefined ? Infinity : this.now() + options.timeoutMs;
    const total: FlushReport = emptyReport();
    for (;;) {
      const report = await this.flush();
      total.acknowledged += report.acknowledged;
      total.replayed += report.replayed;
      total.setAside += report.setAside;
      total.failures += report.failures;
      total.unauthorized = report.unauthorized;
      total.waiting = report.waiting;
      total.nextAttemptAt = report.nextAttemptAt;
      const lanes = await this.load();
      const sendable = [...lanes].some(([register, entries]) => entries.length > 0 && !this.unauthorized.has(register));
      if (!sendable || options.signal?.aborted === true || this.now() >= deadline) return total;
      const wait = Math.min((report.nextAttemptAt ?? this.now()) - this.now(), deadline - this.now());
      if (wait > 0) await sleep(wait, options.signal);
    }
  }

  /** Sends in the background until `stop()`: after each enqueue, and when an entry is due again. */
  start(): void {
    if (this.running !== null) return;
    let pending = false;
    let interrupt: (() => void) | null = null;
    const state = {
      stop: false,
      wake: () => {
        pending = true;
        interrupt?.();
      },
      done: Promise.resolve(),
    };
    state.done = (async () => {
      while (!state.stop) {
        pending = false;
        const report = await this.flush();
        if (state.stop) break;
        if (pending) continue;
        const wait = report.nextAttemptAt === null ? this.maxMs : Math.max(0, report.nextAttemptAt - this.now());
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          interrupt = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        interrupt = null;
      }
    })();
    this.running = state;
  }

  async stop(): Promise<void> {
    const running = this.running;
    if (running === null) return;
    running.stop = true;
    running.wake();
    await running.done;
    this.running = null;
  }

  // --- Inside ---------------------------------------------------------------------------------------

  private load(): Promise<Map<string, OutboxEntry[]>> {
    if (this.lanes !== null) return Promise.resolve(this.lanes);
    this.loading ??= this.storage
      .transaction("readonly", (tx) => tx.list<OutboxEntry>(WAITING))
      .then((entries) => {
        const lanes = new Map<string, OutboxEntry[]>();
        for (const entry of entries) insertBySeq(lanes, entry);
        this.lanes = lanes;
        return lanes;
      })
      .finally(() => {
        this.loading = null;
      });
    return this.loading;
  }

  private async pass(): Promise<FlushReport> {
    const lanes = await this.load();
    const report = emptyReport();
    const registers = [...lanes.keys()].filter((register) => (lanes.get(register)?.length ?? 0) > 0);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < registers.length) {
        await this.sendLane(registers[next++] as string, lanes, report);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, registers.length) }, worker));
    for (const entries of lanes.values()) {
      report.waiting += entries.length;
      const head = entries[0];
      if (head !== undefined && !this.unauthorized.has(head.register)) {
        report.nextAttemptAt = Math.min(report.nextAttemptAt ?? Infinity, head.notBefore);
      }
    }
    report.unauthorized = [...this.unauthorized];
    return report;
  }

  private async sendLane(register: string, lanes: Map<string, OutboxEntry[]>, report: FlushReport): Promise<void> {
    for (;;) {
      const entries = lanes.get(register) ?? [];
      const head = entries[0];
      if (head === undefined) {
        lanes.delete(register);
        return;
      }
      if (head.notBefore > this.now()) return;
      const outcome = await this.send(head);
      switch (outcome.type) {
        case "acknowledged":
          await this.storage.transaction("readwrite", (tx) => tx.delete(WAITING, keyOf(head.seq)));
          removeEntry(lanes, head);
          this.unauthorized.delete(register);
          report.acknowledged += 1;
          if (outcome.replayed) report.replayed += 1;
          this.onEvent({ type: "acknowledged", entry: head, status: outcome.status, replayed: outcome.replayed, body: outcome.body });
          continue;
        case "set_aside": {
          const aside: SetAsideEntry = { ...head, answer: outcome.answer, setAsideAt: new Date(this.now()).toISOString() };
          await this.storage.transaction("readwrite", async (tx) => {
            await tx.delete(WAITING, keyOf(head.seq));
            await tx.put(ASIDE, keyOf(head.seq), aside);
          });
          removeEntry(lanes, head);
          report.setAside += 1;
          this.onEvent({ type: "set_aside", entry: aside });
          continue;
        }
        case "unauthorized":
          // Waits for resume(): not a failure of the entry, its attempts are not counted.
          head.notBefore = this.now() + this.maxMs;
          head.lastFailure = `${outcome.answer.status} ${outcome.answer.code}`;
          this.unauthorized.add(register);
          this.onEvent({ type: "unauthorized", entry: head, answer: outcome.answer });
          return;
        case "retry": {
          head.attempts += 1;
          head.serverErrors = outcome.serverError ? head.serverErrors + 1 : 0;
          head.lastFailure = outcome.reason;
          const backoff = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(head.attempts - 1, 30));
          const jittered = backoff * (0.5 + Math.random() * 0.5);
          head.notBefore = this.now() + Math.max(jittered, outcome.retryAfterMs ?? 0);
          report.failures += 1;
          if (outcome.serverError && head.serverErrors >= this.maxServerErrors && outcome.answer !== null) {
            const aside: SetAsideEntry = { ...head, answer: outcome.answer, setAsideAt: new Date(this.now()).toISOString() };
            await this.storage.transaction("readwrite", async (tx) => {
              await tx.delete(WAITING, keyOf(head.seq));
              await tx.put(ASIDE, keyOf(head.seq), aside);
            });
            removeEntry(lanes, head);
            report.setAside += 1;
            this.onEvent({ type: "set_aside", entry: aside });
            continue;
          }
          const kept = { ...head };
          await this.storage.transaction("readwrite", (tx) => tx.put(WAITING, keyOf(head.seq), kept));
          this.onEvent({ type: "retrying", entry: kept, reason: outcome.reason, notBefore: head.notBefore });
          return;
        }
      }
    }
  }

  private async send(entry: OutboxEntry): Promise<SendOutcome> {
    let token: string | undefined;
    try {
      token = (await this.tokenOf?.(entry)) ?? undefined;
    } catch (error) {
      return { type: "retry", reason: `no token: ${String(error)}`, serverError: false, retryAfterMs: null, answer: null };
    }
    let answer;
    try {
      answer = await this.client.raw(entry.method, entry.path, {
        rawBody: entry.body,
        ...(token === undefined ? {} : { token }),
        ...(entry.headers === undefined ? {} : { headers: entry.headers }),
      });
    } catch (error) {
      if (error instanceof TillUnreachable) {
        return { type: "retry", reason: error.message, serverError: false, retryAfterMs: null, answer: null };
      }
      throw error;
    }
    const { status, headers, text } = answer;
    if (status >= 200 && status <= 299) {
      const replayed = headers.get("x-idempotent-replay") === "true" || (status === 200 && entry.kind !== "payment_outcome");
      return { type: "acknowledged", status, replayed, body: text };
    }
    const server = serverAnswer(status, headers, text);
    if (status === 401) return { type: "unauthorized", answer: server };
    if (status === 408 || status === 429 || status >= 500) {
      return {
        type: "retry",
        reason: `${status} ${server.code}`,
        serverError: status === 500,
        retryAfterMs: retryAfterMs(headers.get("retry-after"), this.now()),
        answer: server,
      };
    }
    return { type: "set_aside", answer: server };
  }
}

type SendOutcome =
  | { type: "acknowledged"; status: number; replayed: boolean; body: string }
  | { type: "set_aside"; answer: ServerAnswer }
  | { type: "unauthorized"; answer: ServerAnswer }
  | { type: "retry"; reason: string; serverError: boolean; retryAfterMs: number | null; answer: ServerAnswer | null };

function serverAnswer(status: number, headers: Headers, body: string): ServerAnswer {
  let envelope: ErrorEnvelope | null = null;
  try {
    const parsed = JSON.parse(body) as Partial<ErrorEnvelope>;
    if (typeof parsed?.error?.code === "string") envelope = parsed as ErrorEnvelope;
  } catch {
    // Not the server's envelope (a proxy's page).
  }
  return { status, code: envelope?.error.code ?? `HTTP_${status}`, envelope, body, requestId: headers.get("x-request-id") };
}

function emptyReport(): FlushReport {
  return { acknowledged: 0, replayed: 0, setAside: 0, failures: 0, unauthorized: [], waiting: 0, nextAttemptAt: null };
}

function insertBySeq(lanes: Map<string, OutboxEntry[]>, entry: OutboxEntry): void {
  let entries = lanes.get(entry.register);
  if (entries === undefined) {
    entries = [];
    lanes.set(entry.register, entries);
  }
  let at = entries.length;
  while (at > 0 && (entries[at - 1] as OutboxEntry).seq > entry.seq) at -= 1;
  entries.splice(at, 0, entry);
}

function removeEntry(lanes: Map<string, OutboxEntry[]>, entry: OutboxEntry): void {
  const entries = lanes.get(entry.register);
  if (entries === undefined) return;
  const at = entries.findIndex((e) => e.seq === entry.seq);
  if (at >= 0) entries.splice(at, 1);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
