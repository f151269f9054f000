// The worked example of docs/clients.md, compiled by `npm run typecheck` so that it stays true:
// a till that syncs its store, prices a sale from what it holds, queues it in its outbox and
// lets the outbox send it when the network allows.

import { TillClient, type OpenedSession } from "../src/client.js";
import { IndexedDbStorage, OfflineStore } from "../src/offline/index.js";
import { Outbox, type SetAsideEntry } from "../src/outbox/index.js";

export interface Till {
  store: OfflineStore;
  outbox: Outbox;
}

/** Opens the till's storage, its offline store and its outbox, and starts sending. */
export async function openTill(
  server: string,
  deviceToken: string,
  session: () => OpenedSession,
  tellTheManager: (entry: SetAsideEntry) => void,
): Promise<Till> {
  const storage = await IndexedDbStorage.open("till-7");
  const store = new OfflineStore({
    client: new TillClient({ baseUrl: server, token: deviceToken }),
    storage,
    storeId: "paris-marais",
  });
  // The session's token may change (a new session after it expired): ask for it when sending.
  const outbox = new Outbox({
    client: new TillClient({ baseUrl: server }),
    storage,
    register: "till-7",
    token: () => session().token,
    onEvent: (event) => {
      if (event.type === "set_aside") tellTheManager(event.entry);
    },
  });
  outbox.start();
  // Offline: keep selling with what is held.
  await store.sync().catch(() => undefined);
  return { store, outbox };
}

/** Rings two baguettes and a mug paid in cash, online or not; answers the total shown. */
export async function ringSale(till: Till, session: OpenedSession, baguette: string, mug: string, ticketNumber: string): Promise<number> {
  const issuedAt = new Date().toISOString();
  const lines = [
    { id: "l1", skuId: baguette, quantity: 2 },
    { id: "l2", skuId: mug, quantity: 1 },
  ];
  const priced = (await till.store.pricer()).price({ lines, issuedAt });
  if (!priced.ok) throw new Error(priced.refusal.message); // what the server would answer
  const quote = priced.quote;
  const total = quote.totals.total;
  await till.outbox.enqueueSale({
    transactionId: crypto.randomUUID(), // made once, when the sale is rung
    number: ticketNumber,
    storeId: "paris-marais",
    sellerId: session.cashierSubject,
    customerId: null,
    sessionId: session.sessionId,
    issuedAt,
    cart: {
      freeLineSequence: 0,
      lines: lines.map((line, i) => ({
        ...line,
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
  });
  return total;
}
