// A small typed client of till's HTTP API over fetch: the calls a till makes, typed from the
// generated `operations` and `components` (docs/openapi.json). Every non-2xx answer is thrown
// as a TillError carrying its status, its `code` and the server's envelope; a request that got
// no answer at all (refused connection, reset, timeout) is thrown as a TillUnreachable, so that
// a caller can tell "the server said no" from "nobody knows what happened".
//
//   const till = new TillClient({ baseUrl: "http://127.0.0.1:8080", token });
//   const { value: sale, replayed } = await till.finalizeSale(body);
//   for await (const line of till.snapshot("paris-marais")) { ... }

import type { components, operations } from "./generated/openapi.js";

type Schemas = components["schemas"];

/** The JSON body an operation takes. */
export type RequestBody<K extends keyof operations> = operations[K] extends { requestBody?: infer Request }
  ? NonNullable<Request> extends { content: { "application/json": infer Body } }
    ? Body
    : never
  : never;

/** The JSON body an operation answers with status `S`. */
export type ResponseBody<K extends keyof operations, S extends number> = operations[K] extends {
  responses: { [status in S]: { content: { "application/json": infer Body } } };
}
  ? Body
  : never;

/** An operation's query parameters. */
export type QueryOf<K extends keyof operations> = operations[K] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;

export type ErrorEnvelope = Schemas["ErrorEnvelope"];
export type SaleRequestBody = Schemas["SaleRequestBody"];
export type SaleEvent = Schemas["SaleEvent"];
export type ReturnRequestBody = Schemas["ReturnRequestBody"];
export type ReturnEvent = Schemas["ReturnEvent"];
export type PaymentBody = Schemas["PaymentBody"];
export type OutcomeBody = Schemas["OutcomeShape"];
export type PaymentView = Schemas["PaymentView"];
export type CashMovementBody = Schemas["CashMovementBody"];
export type CashMovementView = Schemas["CashMovementView"];
export type PriceRequestBody = Schemas["PriceRequestBody"];
export type PriceQuote = Schemas["PriceQuote"];
export type FeedPage = Schemas["FeedPage"];
export type FeedEvent = Schemas["FeedEventView"];
export type FeedEventType = FeedEvent["type"];
export type CatalogItemView = Schemas["CatalogItemView"];
export type StorePriceView = Schemas["StorePriceView"];
export type CouponView = Schemas["CouponView"];
export type PromotionRule = Schemas["PromotionRule"];
export type SnapshotLine = Schemas["SnapshotLine"];
export type SaleSummaryPage = Schemas["SaleSummaryViewPage"];
export type Verification = Schemas["Verification"];
export type OpenSessionBody = Schemas["OpenSessionBody"];
export type OpenedSession = Schemas["OpenedSessionView"];
export type SaleView = ResponseBody<"getSale", 200>;

/** What an idempotent write answered: its body, its status and whether it was a replay. */
export interface Written<T> {
  value: T;
  /** 201 for a first write; 200 (or 201 with `replayed`) when the server answered an earlier one again. */
  status: number;
  /** The server said `x-idempotent-replay: true`: an earlier send of this request was booked. */
  replayed: boolean;
}

/** A raw answer: status, the headers a client acts on, and the body as text. */
export interface RawAnswer {
  status: number;
  /** Lower-case header names. */
  headers: Headers;
  text: string;
}

/** The server answered, with a status outside 2xx. */
export class TillError extends Error {
  /** The envelope's `code` (`CONFLICT`, `BUSINESS_RULE_VIOLATION`...), or `HTTP_<status>` when the body was not one. */
  readonly code: string;
  /** The server's envelope, or null when the body was not one (a proxy's page, say). */
  readonly envelope: ErrorEnvelope | null;
  /** Milliseconds to wait before asking again, from `Retry-After`; null when the answer had none. */
  readonly retryAfterMs: number | null;

  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly body: string,
    headers: Headers,
  ) {
    const envelope = parseEnvelope(body);
    const code = envelope?.error.code ?? `HTTP_${status}`;
    super(`${method} ${path} answered ${status} ${code}: ${envelope?.error.message ?? body.slice(0, 200)}`);
    this.name = "TillError";
    this.code = code;
    this.envelope = envelope;
    this.retryAfterMs = retryAfterMs(headers.get("retry-after"));
  }
}

/** No answer came: the connection failed, was cut, or the request timed out. The outcome is unknown. */
export class TillUnreachable extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    override readonly cause: unknown,
  ) {
    super(`${method} ${path}: no answer (${describeCause(cause)})`);
    this.name = "TillUnreachable";
  }
}

/** A snapshot that did not come whole: no `end` line, or lines out of their order. Take it again. */
export class SnapshotIncomplete extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SnapshotIncomplete";
  }
}

export interface TillClientOptions {
  /** `http://127.0.0.1:8080`, without a trailing path. */
  baseUrl: string;
  /** The bearer token: a till session's `pos_st_...` or a back-office token. */
  token?: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** The longest a request waits for its answer's head (default 30 s); a snapshot's lines may take longer. */
  timeoutMs?: number;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  /** A JSON value, serialized here; or text sent exactly as given. */
  body?: unknown;
  /** Send `body` as it is: already-serialized JSON (an outbox's kept bytes). */
  rawBody?: string;
  headers?: Record<string, string>;
  /** Overrides the client's token for this request. */
  token?: string;
  signal?: AbortSignal;
}

/** A client of one till server with one token; `withToken` makes another over the same server. */
export class TillClient {
  readonly baseUrl: string;
  readonly token: string | undefined;
  private readonly fetcher: typeof fetch;
  private readonly timeoutMs: number;

  constructor(options: TillClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.token = options.token;
    this.fetcher = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  withToken(token: string): TillClient {
    return new TillClient({ baseUrl: this.baseUrl, token, fetch: this.fetcher, timeoutMs: this.timeoutMs });
  }

  // --- Selling ---------------------------------------------------------------------------------

  /** `POST /v1/checkout/finalize`: books a sale; the same body again answers the first answer. */
  finalizeSale(
    body: RequestBody<"finalizeSale">,
    options: { elevationToken?: string; token?: string } = {},
  ): Promise<Written<ResponseBody<"finalizeSale", 201>>> {
    const headers: Record<string, string> = {};
    if (options.elevationToken !== undefined) headers["x-elevation-token"] = options.elevationToken;
    return this.write("POST", "/v1/checkout/finalize", { body, headers, ...tokenOf(options) });
  }

  /** `POST /v1/checkout/price`: what finalize would charge, without writing anything. */
  priceCart(body: RequestBody<"priceCart">, options: { token?: string } = {}): Promise<ResponseBody<"priceCart", 200>> {
    return this.json("POST", "/v1/checkout/price", { body, ...tokenOf(options) });
  }

  /** `POST /v1/returns`: goods back against an original sale. */
  createReturn(
    body: RequestBody<"createReturn">,
    options: { token?: string } = {},
  ): Promise<Written<ResponseBody<"createReturn", 201>>> {
    return this.write("POST", "/v1/returns", { body, ...tokenOf(options) });
  }

  /** `POST /v1/payments`: records a card payment attempt before the terminal is asked. */
  requestPayment(
    body: RequestBody<"requestPayment">,
    options: { token?: string } = {},
  ): Promise<Written<ResponseBody<"requestPayment", 201>>> {
    return this.write("POST", "/v1/payments", { body, ...tokenOf(options) });
  }

  /** `POST /v1/payments/{paymentId}/outcome`: what the terminal said. */
  recordPaymentOutcome(
    paymentId: string,
    body: RequestBody<"recordPaymentOutcome">,
    options: { token?: string } = {},
  ): Promise<Written<ResponseBody<"recordPaymentOutcome", 200>>> {
    return this.write("POST", `/v1/payments/${seg(paymentId)}/outcome`, { body, ...tokenOf(options) }, 200);
  }

  /** `POST /v1/payments/{paymentId}/void`: the terminal gave an approval back. */
  voidPayment(paymentId: string, options: { token?: string } = {}): Promise<ResponseBody<"voidPayment", 200>> {
    return this.json("POST", `/v1/payments/${seg(paymentId)}/void`, tokenOf(options));
  }

  /** `GET /v1/payments/{paymentId}`. */
  getPayment(paymentId: string, options: { token?: string } = {}): Promise<ResponseBody<"getPayment", 200>> {
    return this.json("GET", `/v1/payments/${seg(paymentId)}`, tokenOf(options));
  }

  /** `POST /v1/register-sessions/{sessionId}/cash-movements`: money into or out of the drawer. */
  recordCashMovement(
    sessionId: string,
    body: RequestBody<"recordCashMovement">,
    options: { token?: string } = {},
  ): Promise<Written<ResponseBody<"recordCashMovement", 201>>> {
    return this.write("POST", `/v1/register-sessions/${seg(sessionId)}/cash-movements`, { body, ...tokenOf(options) });
  }

  /** `POST /v1/register-sessions`: opens a session with the cashier's PIN; its `token` sells. */
  openSession(body: RequestBody<"openRegisterSession">): Promise<ResponseBody<"openRegisterSession", 201>> {
    return this.json("POST", "/v1/register-sessions", { body });
  }

  /** `POST /v1/register-sessions/{sessionId}/close`, with optional counts. */
  closeSession(
    sessionId: string,
    body: RequestBody<"closeRegisterSession"> = null,
    options: { token?: string } = {},
  ): Promise<ResponseBody<"closeRegisterSession", 200>> {
    return this.json("POST", `/v1/register-sessions/${seg(sessionId)}/close`, { body: body ?? {}, ...tokenOf(options) });
  }

  // --- Reading ---------------------------------------------------------------------------------

  /** `GET /v1/sales/{transactionId}`. */
  getSale(transactionId: string, options: { token?: string } = {}): Promise<ResponseBody<"getSale", 200>> {
    return this.json("GET", `/v1/sales/${seg(transactionId)}`, tokenOf(options));
  }

  /** `GET /v1/sales`: one page of the sales search, newest first. */
  searchSales(query: QueryOf<"searchSales"> = {}): Promise<ResponseBody<"searchSales", 200>> {
    return this.json("GET", "/v1/sales", { query: { ...query } });
  }

  /** `GET /v1/fiscal/registers/{registerId}/verify`: the audit of a register's journal. */
  verifyRegister(registerId: string): Promise<ResponseBody<"verifyRegisterJournal", 200>> {
    return this.json("GET", `/v1/fiscal/registers/${seg(registerId)}/verify`);
  }

  /** `GET /v1/events`: one page of the feed after `after`. */
  events(
    query: { after?: string; limit?: number; types?: readonly FeedEventType[] } = {},
    options: { signal?: AbortSignal } = {},
  ): Promise<ResponseBody<"listEvents", 200>> {
    return this.json("GET", "/v1/events", {
      query: { after: query.after, limit: query.limit, types: query.types?.join(",") },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  }

  /** `GET /v1/catalog/skus/{skuId}`. */
  getCatalogItem(skuId: string): Promise<ResponseBody<"getCatalogItem", 200>> {
    return this.json("GET", `/v1/catalog/skus/${seg(skuId)}`);
  }

  /** `GET /v1/stores/{storeId}/prices/{skuId}`; a 404 says the store has no price of its own. */
  getStorePrice(storeId: string, skuId: string): Promise<ResponseBody<"getStorePrice", 200>> {
    return this.json("GET", `/v1/stores/${seg(storeId)}/prices/${seg(skuId)}`);
  }

  /** `GET /v1/coupons/{code}`. */
  getCoupon(code: string): Promise<ResponseBody<"getCoupon", 200>> {
    return this.json("GET", `/v1/coupons/${seg(code)}`);
  }

  /** `GET /v1/promotions`. */
  listPromotions(query: QueryOf<"listPromotions"> = {}): Promise<ResponseBody<"listPromotions", 200>> {
    return this.json("GET", "/v1/promotions", { query: { ...query } });
  }

  /**
   * `GET /v1/sync/snapshot?storeId=`: the store's selling data, line by line as the body arrives
   * (the whole body is never held). Throws SnapshotIncomplete when the `end` line is missing,
   * when a line comes out of its order, or when the counts the `end` line gives are not those
   * received; the lines already yielded must then be thrown away.
   */
  async *snapshot(storeId: string, options: { signal?: AbortSignal } = {}): AsyncGenerator<SnapshotLine, void, undefined> {
    const path = "/v1/sync/snapshot";
    const response = await this.stream("GET", path, {
      query: { storeId },
      headers: { accept: "application/x-ndjson" },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    if (response.status !== 200) {
      throw new TillError("GET", path, response.status, await response.text(), response.headers);
    }
    if (response.body === null) {
      throw new SnapshotIncomplete("the snapshot came without a body");
    }
    const counts = { article: 0, promotion: 0, coupon: 0, staff: 0 };
    const state: { stage: "before" | "lines" | "ended" } = { stage: "before" };
    const check = (line: SnapshotLine): void => {
      if (state.stage === "ended") throw new SnapshotIncomplete(`a ${line.type} line after the end line`);
      if (line.type === "head") {
        if (state.stage !== "before") throw new SnapshotIncomplete("a second head line");
        state.stage = "lines";
        return;
      }
      if (state.stage === "before") throw new SnapshotIncomplete(`a ${line.type} line before the head line`);
      if (line.type === "end") {
        const expected = { article: line.articles, promotion: line.promotions, coupon: line.coupons, staff: line.staff };
        for (const kind of Object.keys(counts) as (keyof typeof counts)[]) {
          if (counts[kind] !== expected[kind]) {
            throw new SnapshotIncomplete(`the end line counts ${expected[kind]} ${kind} lines, ${counts[kind]} came`);
          }
        }
        state.stage = "ended";
        return;
      }
      counts[line.type] += 1;
    };
    try {
      for await (const text of ndjsonLines(response.body, () => new TillUnreachable("GET", path, "the body was cut"))) {
        let line: SnapshotLine;
        try {
          line = JSON.parse(text) as SnapshotLine;
        } catch {
          throw new SnapshotIncomplete(`a line that is not JSON: ${text.slice(0, 80)}`);
        }
        check(line);
        yield line;
      }
    } catch (error) {
      if (error instanceof SnapshotIncomplete || error instanceof TillError) throw error;
      // The body stream failed: the connection was cut or the read aborted.
      throw new SnapshotIncomplete(`the snapshot was cut short: ${describeCause(error)}`);
    }
    if (state.stage !== "ended") {
      throw new SnapshotIncomplete("the snapshot ended without its end line");
    }
  }

  // --- The core ---------------------------------------------------------------------------------

  /** Any request, its 2xx JSON answer parsed; a TillError otherwise. */
  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const answer = await this.raw(method, path, options);
    if (answer.status < 200 || answer.status > 299) {
      throw new TillError(method, path, answer.status, answer.text, answer.headers);
    }
    return (answer.text.length === 0 ? null : JSON.parse(answer.text)) as T;
  }

  /**
   * An idempotent write: its answer, status and whether the server replayed it (said so in
   * `x-idempotent-replay`, or answered 200 where a first write answers `firstStatus`).
   */
  async write<T>(method: string, path: string, options: RequestOptions, firstStatus = 201): Promise<Written<T>> {
    const answer = await this.raw(method, path, options);
    if (answer.status < 200 || answer.status > 299) {
      throw new TillError(method, path, answer.status, answer.text, answer.headers);
    }
    return {
      value: JSON.parse(answer.text) as T,
      status: answer.status,
      replayed:
        answer.headers.get("x-idempotent-replay") === "true" || (answer.status === 200 && firstStatus !== 200),
    };
  }

  /**
   * Any request; the answer whatever its status. Throws TillUnreachable only when no whole
   * answer came within the timeout (its head and its body).
   */
  async raw(method: string, path: string, options: RequestOptions = {}): Promise<RawAnswer> {
    const deadline = this.deadline(options.signal);
    try {
      const response = await this.send(method, path, options, deadline.signal);
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        throw new TillUnreachable(method, path, deadline.signal.aborted ? deadline.signal.reason : error);
      }
      return { status: response.status, headers: response.headers, text };
    } finally {
      deadline.clear();
    }
  }

  /** A request whose body is read by the caller: the timeout covers the answer's head only. */
  private async stream(method: string, path: string, options: RequestOptions): Promise<Response> {
    const deadline = this.deadline(options.signal);
    try {
      return await this.send(method, path, options, deadline.signal);
    } finally {
      deadline.clear();
    }
  }

  /** A signal aborted after the client's timeout or by the caller's signal; `clear` stops the timer. */
  private deadline(outer: AbortSignal | undefined): { signal: AbortSignal; clear: () => void } {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    const onAbort = (): void => controller.abort(outer?.reason);
    if (outer?.aborted === true) onAbort();
    outer?.addEventListener("abort", onAbort, { once: true });
    return {
      signal: controller.signal,
      clear: () => {
        clearTimeout(timer);
        outer?.removeEventListener("abort", onAbort);
      },
    };
  }

  private async send(method: string, path: string, options: RequestOptions, signal: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token ?? this.token;
    if (token !== undefined) headers["authorization"] = `Bearer ${token}`;
    let body: string | undefined;
    if (options.rawBody !== undefined) {
      body = options.rawBody;
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
    }
    if (body !== undefined) headers["content-type"] = "application/json";
    headers["accept"] ??= "application/json";
    // Redirects are not followed: a POST must never turn into another request.
    const init: RequestInit = { method, headers, signal, redirect: "manual" };
    if (body !== undefined) init.body = body;
    try {
      return await this.fetcher(this.url(path, options.query), init);
    } catch (error) {
      throw new TillUnreachable(method, path, signal.aborted ? signal.reason : error);
    }
  }

  private url(path: string, query: RequestOptions["query"]): string {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) search.set(name, String(value));
    }
    const text = search.toString();
    return `${this.baseUrl}${path}${text.length > 0 ? `?${text}` : ""}`;
  }
}

/** The lines of an NDJSON body, decoded as they arrive; a last line without its newline counts. */
export async function* ndjsonLines(
  body: ReadableStream<Uint8Array>,
  onError: (error: unknown) => Error = (error) => (error instanceof Error ? error : new Error(String(error))),
): AsyncGenerator<string, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let pending = "";
  let done = false;
  try {
    while (!done) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        throw onError(error);
      }
      done = chunk.done;
      pending += done ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
      let newline = pending.indexOf("\n");
      while (newline >= 0) {
        const line = pending.slice(0, newline).trim();
        pending = pending.slice(newline + 1);
        if (line.length > 0) yield line;
        newline = pending.indexOf("\n");
      }
    }
    const last = pending.trim();
    if (last.length > 0) yield last;
  } finally {
    if (!done) {
      // The consumer stopped early or the read failed: let go of the connection.
      await reader.cancel().catch(() => undefined);
    }
    reader.releaseLock();
  }
}

function parseEnvelope(text: string): ErrorEnvelope | null {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && "error" in value) {
      const error = (value as { error: unknown }).error;
      if (typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string") {
        return value as ErrorEnvelope;
      }
    }
  } catch {
    // Not JSON: a proxy's page, a truncated body.
  }
  return null;
}

/** `Retry-After` as milliseconds from now: delay-seconds or an HTTP date. */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = (cause as { cause?: unknown }).cause;
    const code = typeof inner === "object" && inner !== null ? (inner as { code?: unknown }).code : undefined;
    return typeof code === "string" ? `${cause.message}: ${code}` : cause.message;
  }
  return String(cause);
}

function seg(value: string): string {
  return encodeURIComponent(value);
}

function tokenOf(options: { token?: string }): { token?: string } {
  return options.token === undefined ? {} : { token: options.token };
}
