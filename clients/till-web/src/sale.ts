// The sale a till books: its lines and tenders as `POST /v1/checkout/finalize` takes them,
// built in one place. Later parts add customers, declared discounts and other tenders here.

import type { RequestBody } from "../../typescript/src/client.js";
import type { PriceQuote } from "../../typescript/src/pricing/index.js";
import type { SessionKept } from "./device.js";

export type SaleBody = RequestBody<"finalizeSale">;

export interface CartLine {
  id: string;
  skuId: string;
  name: string;
  quantity: number;
}

/** A tender of the sale being paid. Cash only in this part. */
export interface Tender {
  method: "cash";
  applied: number;
  presented: number;
  change: number;
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
}): SaleBody {
  const { quote } = args;
  return {
    transactionId: args.transactionId,
    number: args.number,
    storeId: args.session.storeId,
    registerId: args.session.registerId,
    sellerId: args.session.cashierSubject,
    customerId: null,
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
      })),
    },
  };
}
