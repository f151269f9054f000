// Reads a sale, the event feed and the journal's keys with the types generated from
// docs/openapi.json. CI compiles it with `tsc --strict`: a schema a generator cannot type (an
// object of nothing, a union it cannot narrow) breaks the build here.

import type { components, paths } from "../src/generated/openapi.js";

type Json<P extends keyof paths, Status extends number> = paths[P] extends {
  get: { responses: { [S in Status]: { content: { "application/json": infer Body } } } };
}
  ? Body
  : never;

type Sale = Json<"/v1/sales/{transactionId}", 200>;
type FeedPage = Json<"/v1/events", 200>;
type KeySet = Json<"/v1/fiscal/keys", 200>;
type FeedEvent = components["schemas"]["FeedEventView"];

async function read<T>(base: string, path: string, token?: string): Promise<T> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const response = await fetch(`${base}${path}`, { headers });
  if (!response.ok) {
    throw new Error(`${path} answered ${response.status}`);
  }
  return (await response.json()) as T;
}

/** What a sale's event says: its ticket, its total and how it was paid. */
export async function saleTotal(base: string, token: string, transactionId: string): Promise<string> {
  const sale = await read<Sale>(base, `/v1/sales/${encodeURIComponent(transactionId)}`, token);
  const tenders = sale.ticket.tenders.map((tender) => tender.method).join(", ");
  return `${sale.transaction.id} on ${sale.registerId}: ${sale.ticket.totalCents} cents by ${tenders}`;
}

/** One line per event of the feed, its `data` read as its `type` says. */
export function describe(event: FeedEvent): string {
  switch (event.type) {
    case "sale.completed":
      return `sale ${event.data.transaction.id}: ${event.data.transaction.totals.total} cents`;
    case "return.completed":
      return "original" in event.data
        ? `return of ${event.data.original.transactionId}, credit note ${event.data.creditNoteNumber ?? "none"}`
        : `return ticket ${event.data.transaction.id}`;
    case "session.opened":
      return `session ${event.data.sessionId} opened by ${event.data.cashierSubject}`;
    case "session.closed":
      return `session ${event.data.sessionId} closed, ${event.data.expectedCashCents} cents expected in the drawer`;
    case "cash.moved":
      return `${event.data.kind} of ${event.data.amountCents} cents`;
    case "period.closed":
      return `${event.data.period} of ${event.data.registerId} closed at ${event.data.totalCents} cents`;
    case "stock.adjusted":
      return `${event.data.skuId} set to ${event.data.onHand} in ${event.data.storeId}`;
    case "stock.transferred":
      return `transfer ${event.data.transferId}: ${event.data.status}`;
    case "promotion.changed":
      return `promotion ${event.data.promotionId} version ${event.data.version} (${event.data.rule.type})`;
    case "giftcard.changed":
      return `card …${event.data.last4}: ${event.data.activity}, balance ${event.data.balanceCents} cents`;
    case "creditnote.issued":
      return `credit note ${event.data.number} of ${event.data.amountCents} cents`;
    case "payment.captured":
      return `card payment ${event.data.paymentId} of ${event.data.amountCents} cents captured by ${event.data.transactionId}`;
    case "payment.orphaned":
      return `card payment ${event.data.paymentId} orphaned: give back ${event.data.authorizedCents ?? 0} cents`;
    case "payment.refunded":
      return `card payment ${event.data.paymentId}: ${event.data.amountCents} cents refunded by ${event.data.transactionId}`;
    case "customer.erased":
      return `customer ${event.data.customerId} erased (${event.data.reason})`;
    case "customer.changed":
      return `customer ${event.data.customerId} changed`;
    case "catalog.changed":
      return `article ${event.data.skuId} changed`;
    case "store_price.changed":
      return `price of ${event.data.skuId} in ${event.data.storeId} changed`;
    case "coupon.changed":
      return `coupon ${event.data.code} changed`;
  }
}

/** The feed from `after`, one line per event, and where to read from next. */
export async function follow(base: string, token: string, after?: string): Promise<[string[], string]> {
  const query = after === undefined ? "" : `?after=${encodeURIComponent(after)}`;
  const page = await read<FeedPage>(base, `/v1/events${query}`, token);
  return [page.events.map(describe), page.nextCursor];
}

/** The id of the key that signs new journal entries, as entries name it in `keyId`. */
export async function signingKeyId(base: string): Promise<string> {
  const set = await read<KeySet>(base, "/v1/fiscal/keys");
  const key = set.keys[0];
  if (key === undefined) {
    throw new Error("the journal has no key yet");
  }
  const jwk: components["schemas"]["Jwk"] = key;
  return `${jwk.kid} (${jwk.kty} ${jwk.crv}, ${jwk.alg})`;
}
