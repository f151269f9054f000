// The payment of one sale, tender by tender: the sale is priced once when the payment opens
// (the amounts of a card attempt and of the sale must be the same), and finalized once the
// tenders cover what is due. Pure functions: the screens and the unit tests share them.

import type { PriceQuote } from "../../typescript/src/pricing/index.js";
import type { Tender } from "./sale.js";

export interface Payment {
  /** Drawn once, when the payment opens: the sale's idempotency key. */
  transactionId: string;
  /** The instant the sale was priced at, sent as its `issuedAt`. */
  issuedAt: string;
  quote: PriceQuote;
  tenders: Tender[];
  /**
   * A card attempt whose terminal answer was lost (`unknown`): kept open until the cashier keys
   * what the terminal really said. Nothing of it is a tender before an approval, and no other
   * tender is taken meanwhile (the card may have been charged).
   */
  openCard?: { paymentId: string; amountCents: number } | null;
}

/**
 * A card attempt of the session that no payment on this till holds any more (the page was
 * reloaded, the browser closed mid-payment): an answer never keyed (`approvedCents` null), or
 * an approval no sale took. Either may have charged the customer for a sale not recorded, so
 * the sale screen asks for each to be settled.
 */
export interface LeftOpenCard {
  paymentId: string;
  amountCents: number;
  approvedCents: number | null;
}

/** What the terminal said about a card attempt, as the cashier keys it. */
export type CardAnswer =
  | { status: "approved"; authorizedCents: number; code: string; last4: string }
  | { status: "declined" | "cancelled" | "unknown" };

/** What the tenders taken so far cover. */
export function paid(payment: Payment): number {
  return payment.tenders.reduce((sum, tender) => sum + tender.applied, 0);
}

/** What is still due. */
export function remaining(payment: Payment): number {
  return Math.max(0, payment.quote.totals.total - paid(payment));
}

/** Cash handed over: it pays up to what is due, the rest is change. */
export function cashTender(due: number, presented: number): Tender {
  const applied = Math.min(due, presented);
  return { method: "cash", applied, presented, change: presented - applied };
}

/** A card approval: the tender applies exactly what the terminal approved, citing the attempt. */
export function cardTender(paymentId: string, authorizedCents: number): Tender {
  return { method: "card", applied: authorizedCents, presented: authorizedCents, change: 0, reference: paymentId };
}

/** The change the customer gets back, over every tender. */
export function changeDue(tenders: readonly Tender[]): number {
  return tenders.reduce((sum, tender) => sum + tender.change, 0);
}
