// A shop for the tests, written through the API: stores, articles, staff, sessions; and a sale
// rung from an offline quote as a till would send it.

import { createHash } from "node:crypto";
import type { PriceQuote, SaleRequestBody, TillClient } from "../../src/client.js";
import type { CartLine } from "../../src/pricing/index.js";
import type { TillProcess } from "./till.js";

export const CASHIER = { subject: "cashier-1", pin: "482916" };

/** A deterministic article id: 64 lowercase hex characters. */
export function skuOf(name: string): string {
  return createHash("sha256").update(name).digest("hex");
}

/** A valid EAN-13 from a 12-digit number. */
export function ean13(n: number): string {
  const body = String(n).padStart(12, "0");
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(body[i]) * (i % 2 === 0 ? 1 : 3);
  return body + String((10 - (sum % 10)) % 10);
}

export async function putStore(client: TillClient, storeId: string): Promise<void> {
  await client.json("PUT", `/v1/stores/${encodeURIComponent(storeId)}`, { body: { name: `Store ${storeId}` } });
}

export interface ArticleBody {
  name: string;
  priceCents: number;
  vatRate: number;
  effectiveFrom?: string;
  barcodes?: string[];
}

export async function putArticle(client: TillClient, skuId: string, body: ArticleBody): Promise<void> {
  await client.json("PUT", `/v1/catalog/skus/${skuId}`, { body });
}

export async function putStorePrice(client: TillClient, storeId: string, skuId: string, priceCents: number, effectiveFrom?: string): Promise<void> {
  await client.json("PUT", `/v1/stores/${encodeURIComponent(storeId)}/prices/${skuId}`, {
    body: effectiveFrom === undefined ? { priceCents } : { priceCents, effectiveFrom },
  });
}

export async function putCashier(client: TillClient): Promise<void> {
  await client.json("PUT", `/v1/staff/${CASHIER.subject}`, { body: { displayName: "Camille", role: "cashier", pin: CASHIER.pin } });
}

export interface Session {
  sessionId: string;
  token: string;
  registerId: string;
  storeId: string;
}

export async function openSession(till: TillProcess, storeId: string, registerId: string): Promise<Session> {
  const opened = await till.client.openSession({ storeId, registerId, cashierSubject: CASHIER.subject, pin: CASHIER.pin });
  return { sessionId: opened.sessionId, token: opened.token, registerId, storeId };
}

/** Every item of a paged list. */
export async function allItems<T>(client: TillClient, path: string, query: Record<string, string> = {}): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const page: { items: T[]; nextCursor: string | null } = await client.json("GET", path, {
      query: { ...query, limit: 500, cursor },
    });
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return items;
}

/** The finalize body of a cart priced offline, paid in cash: the total the till showed. */
export function cashSale(options: {
  transactionId: string;
  number: string;
  session: Session;
  issuedAt: string;
  lines: readonly CartLine[];
  quote: PriceQuote;
  couponCode?: string;
}): SaleRequestBody {
  const { quote } = options;
  const total = quote.totals.total;
  const body: SaleRequestBody = {
    transactionId: options.transactionId,
    number: options.number,
    storeId: options.session.storeId,
    sellerId: CASHIER.subject,
    customerId: null,
    sessionId: options.session.sessionId,
    issuedAt: options.issuedAt,
    cart: {
      freeLineSequence: 0,
      lines: options.lines.map((line, i) => ({
        id: line.id,
        skuId: line.skuId,
        quantity: line.quantity,
        unitPrice: quote.lines[i]?.unitPrice ?? 0,
        vatRate: quote.lines[i]?.vatRate ?? 0,
        free: false,
      })),
    },
    tenders: {
      amountDue: total,
      sequence: 1,
      tenders: [{ id: "p1", method: "cash", applied: total, presented: total, change: 0, forfeited: 0 }],
    },
  };
  if (options.couponCode !== undefined) body.couponCode = options.couponCode;
  return body;
}

/** A seeded generator (mulberry32): the same run every time. */
export function random(seed: number): { next(): number; int(min: number, max: number): number; pick<T>(items: readonly T[]): T } {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return { next, int, pick: <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T };
}

export function shuffle<T>(items: readonly T[], rng: { int(min: number, max: number): number }): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

export const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));
