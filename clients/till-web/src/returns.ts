// A return against a receipt: the original sale's lines as the server explains them, how many
// units of each come back, and the refund exactly as the server computes it (each unit refunds
// what was paid for it: the line's net spread over its units cumulatively, rounded half away
// from zero, as till-core's `prorate` does), so the refund tender matches to the cent.

import type { RequestBody } from "../../typescript/src/client.js";
import type { SessionKept } from "./device.js";

export type ReturnBody = RequestBody<"createReturn">;

export interface ReturnLine {
  lineId: string;
  skuId: string;
  label: string;
  /** Units sold on the original line, units already returned, and what it cost in all. */
  quantity: number;
  returned: number;
  netCents: number;
  /** Units coming back now. */
  take: number;
}

export interface ReturnDraft {
  /** Drawn once: the return's idempotency key. */
  transactionId: string;
  originalTransactionId: string;
  originalNumber: string;
  lines: ReturnLine[];
}

/** Refund methods the till offers: cash from the drawer, or a credit note (avoir). */
export type RefundMethod = "cash" | "credit_note";

/** `amount` spread over `total` parts: what parts `before+1 ..= before+now` get. */
export function prorate(amount: number, total: number, before: number, now: number): number {
  if (total <= 0) return 0;
  const share = (parts: number): bigint => {
    const clamped = BigInt(Math.min(Math.max(parts, 0), total));
    const numerator = BigInt(amount) * clamped;
    const denominator = BigInt(total);
    const quotient = numerator / denominator;
    const remainder = numerator % denominator;
    const abs = remainder < 0n ? -remainder : remainder;
    return abs * 2n >= denominator ? quotient + (numerator < 0n ? -1n : 1n) : quotient;
  };
  return Number(share(before + now) - share(before));
}

/** What returning `line.take` units refunds. */
export function lineRefund(line: ReturnLine): number {
  return line.take > 0 ? prorate(line.netCents, line.quantity, line.returned, line.take) : 0;
}

export function refundOf(draft: ReturnDraft): number {
  return draft.lines.reduce((sum, line) => sum + lineRefund(line), 0);
}

/**
 * The ticket number a receipt prints (`T-till-3-000042`): the register it was rung on. Null
 * when the text is not one.
 */
export function registerOfNumber(number: string): string | null {
  const match = /^T-(.+)-\d{1,12}$/.exec(number.trim());
  return match?.[1] ?? null;
}

/** The return as `POST /v1/returns` takes it, refunded by one tender. */
export function returnBody(args: { draft: ReturnDraft; number: string; session: SessionKept; method: RefundMethod }): ReturnBody {
  const refund = refundOf(args.draft);
  return {
    transactionId: args.draft.transactionId,
    originalTransactionId: args.draft.originalTransactionId,
    number: args.number,
    storeId: args.session.storeId,
    registerId: args.session.registerId,
    sellerId: args.session.cashierSubject,
    sessionId: args.session.sessionId,
    lines: args.draft.lines.filter((line) => line.take > 0).map((line) => ({ lineId: line.lineId, quantity: line.take })),
    tenders: {
      amountDue: refund,
      sequence: 1,
      tenders: [{ id: "r1", method: args.method, applied: refund, presented: refund, change: 0, forfeited: 0 }],
    },
  };
}
