// Which screen the till shows and what each one carries, with the finished sale and return they
// show: the shapes the Till class and the screens (src/screens/) share. Types only.

import type { ResponseBody } from "../../typescript/src/client.js";
import type { PriceQuote } from "../../typescript/src/pricing/index.js";
import type { CustomerView } from "./customer.js";
import type { LastSale } from "./device.js";
import type { DiscountKind, SaleDiscount } from "./discount.js";
import type { RefundMethod } from "./returns.js";
import type { Tender } from "./sale.js";

export type XReport = ResponseBody<"getXReport", 200>;
/** The tender being taken on the payment screen. */
export type PayMode = "cash" | "card" | "loyalty" | "gift_card" | "credit_note";
/** Money put in or taken out of the drawer outside a sale. */
export type MovementKind = "paid_in" | "paid_out" | "drop";
export type ZReport = ResponseBody<"closeRegisterSession", 200>;

export interface Finished {
  transactionId: string;
  number: string;
  quote: PriceQuote;
  tenders: Tender[];
  issuedAt: string;
  booked: boolean;
  /** What the last e-mail send of its receipt came to (the server's answer, or its refusal). */
  mail?: { text: string; bad: boolean };
  /** Whether its receipt was printed here: a print after that is a reprint (a DUPLICATA). */
  printed?: boolean;
  /** What the last reprint printed: the server's duplicate and its number. */
  reprinted?: string;
}

/** A return sent: its refund and, for a credit note, the number and code the server gave it. */
export interface ReturnDone {
  transactionId: string;
  number: string;
  originalNumber: string;
  refund: number;
  method: RefundMethod;
  booked: boolean;
  creditNote: { number: string; code: string | null } | null;
}

export type Screen =
  | { name: "loading" }
  | { name: "pair"; message?: string }
  | { name: "sign-in"; message?: string; otherSession?: string }
  | { name: "sell" }
  | { name: "pay"; mode: PayMode; message?: string }
  | { name: "customer"; results?: CustomerView[]; message?: string }
  | { name: "discount"; kind: DiscountKind; message?: string }
  | { name: "approve"; pending: SaleDiscount; manager?: string; message?: string }
  | { name: "card"; paymentId: string; amountCents: number; message?: string }
  /** The card attempts left open by payments this till no longer holds, to settle one by one. */
  | { name: "left-open"; message?: string }
  | { name: "done"; sale: Finished }
  /** A reprint asked for, to confirm: from the sale screen (the last sale) or the done screen. */
  | { name: "reprint"; sale: LastSale; from: Finished | null; printId: string; message?: string }
  | { name: "return-find"; message?: string }
  | { name: "return"; method: RefundMethod; message?: string }
  | { name: "return-done"; done: ReturnDone }
  | { name: "movement"; kind: MovementKind; message?: string }
  | { name: "x-report"; report?: XReport; message?: string }
  | { name: "close"; message?: string }
  | { name: "z-report"; report: ZReport };
