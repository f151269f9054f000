// The sale a till books: its lines and tenders as `POST /v1/checkout/finalize` takes them,
// built in one place.

import type { RequestBody } from "../../typescript/src/client.js";
import type { DeclaredDiscount, PriceQuote } from "../../typescript/src/pricing/index.js";
import type { SessionKept } from "./device.js";

export type SaleBody = RequestBody<"finalizeSale">;

export interface CartLine {
  id: string;
  skuId: string;
  name: string;
  quantity: number;
}

/** How a tender pays: the methods the till takes (the API knows a few more). */
export type TenderMethod = "cash" | "card" | "loyalty" | "gift_card" | "credit_note";

/** A tender of the sale being paid. */
export interface Tender {
  method: TenderMethod;
  applied: number;
  presented: number;
  change: number;
  /**
   * The instrument it draws on: a card tender's payment attempt (its `paymentId`), a gift
   * card's code, a credit note's code. A loyalty tender spends the sale's customer's points.
   */
  reference?: string;
}

/** The sale as the server books it: the lines at the prices the till showed, the tenders taken. */
export function saleBody(args: {
  transactionId: string;
  number: string;
  session: SessionKept;
  issuedAt: string;
  cart: readonly CartLine[];
  quote: PriceQuote;
  tenders: readonly Tender[];
  /** The customer the sale names (their points, their groups' prices); null: anonymous. */
  customerId?: string | null;
  /** The discounts the cashier declared, priced into `quote`. */
  declaredDiscounts?: readonly DeclaredDiscount[];
}): SaleBody {
  const { quote } = args;
  return {
    transactionId: args.transactionId,
    number: args.number,
    storeId: args.session.storeId,
    registerId: args.session.registerId,
    sellerId: args.session.cashierSubject,
    customerId: args.customerId ?? null,
    sessionId: args.session.sessionId,
    issuedAt: args.issuedAt,
    cart: {
      freeLineSequence: 0,
      lines: args.cart.map((line) => {
        const quoted = quote.lines.find((q) => q.id === line.id);
        return {
          id: line.id,
          skuId: line.skuId,
          quantity: line.quantity,
          unitPrice: quoted?.unitPrice ?? 0,
          vatRate: quoted?.vatRate ?? 0,
          free: false,
        };
      }),
    },
    ...(args.declaredDiscounts && args.declaredDiscounts.length > 0 ? { declaredDiscounts: [...args.declaredDiscounts] } : {}),
    tenders: {
      amountDue: quote.totals.total,
      sequence: 1,
      tenders: args.tenders.map((tender, i) => ({
        id: `p${i + 1}`,
        method: tender.method,
        applied: tender.applied,
        presented: tender.presented,
        change: tender.change,
        forfeited: 0,
        // The server captures the attempt a card tender names (DESIGN.md section 22).
        ...(tender.reference === undefined ? {} : { reference: tender.reference }),
      })),
    },
  };
}
