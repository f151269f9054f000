// What this browser keeps about itself, in the same IndexedDB as the offline store and the
// outbox: its pairing (the device token, its store and register) and the register session it
// sells on (the session's token is shown once by the server, so it is kept here).

import type { OfflineStorage } from "../../typescript/src/offline/index.js";

export interface Pairing {
  /** A back-office token for this device: opens and closes sessions, reads the snapshot and the feed. */
  token: string;
  storeId: string;
  registerId: string;
  pairedAt: string;
}

export interface SessionKept {
  sessionId: string;
  token: string;
  storeId: string;
  registerId: string;
  cashierSubject: string;
  expiresAt: string;
}

const KIND = "till-device";

export async function readPairing(storage: OfflineStorage): Promise<Pairing | null> {
  return (await storage.transaction("readonly", (tx) => tx.get<Pairing>(KIND, "pairing"))) ?? null;
}

export function writePairing(storage: OfflineStorage, pairing: Pairing | null): Promise<void> {
  return storage.transaction("readwrite", (tx) =>
    pairing === null ? tx.delete(KIND, "pairing") : tx.put(KIND, "pairing", pairing),
  );
}

export async function readSession(storage: OfflineStorage): Promise<SessionKept | null> {
  return (await storage.transaction("readonly", (tx) => tx.get<SessionKept>(KIND, "session"))) ?? null;
}

export function writeSession(storage: OfflineStorage, session: SessionKept | null): Promise<void> {
  return storage.transaction("readwrite", (tx) =>
    session === null ? tx.delete(KIND, "session") : tx.put(KIND, "session", session),
  );
}

/** The last sale finished at this till: what its reprint needs, kept across reloads. */
export interface LastSale {
  transactionId: string;
  number: string;
  totalCents: number;
}

export async function readLastSale(storage: OfflineStorage): Promise<LastSale | null> {
  return (await storage.transaction("readonly", (tx) => tx.get<LastSale>(KIND, "last-sale"))) ?? null;
}

export function writeLastSale(storage: OfflineStorage, sale: LastSale): Promise<void> {
  return storage.transaction("readwrite", (tx) => tx.put(KIND, "last-sale", sale));
}

/** The next ticket number of this register, kept across reloads: `T-till-3-000042`. */
export function nextTicketNumber(storage: OfflineStorage, registerId: string): Promise<string> {
  return storage.transaction("readwrite", async (tx) => {
    const key = `ticket-seq:${registerId}`;
    const seq = ((await tx.get<number>(KIND, key)) ?? 0) + 1;
    await tx.put(KIND, key, seq);
    return `T-${registerId}-${String(seq).padStart(6, "0")}`;
  });
}

/**
 * The pairing an address's fragment carries: `#pair=<token>&store=<storeId>&register=<registerId>`.
 * The fragment never reaches a server (nor its logs); the app removes it from the address bar
 * once read.
 */
export function pairingFromFragment(fragment: string, now: Date): Pairing | null {
  const params = new URLSearchParams(fragment.replace(/^#/, ""));
  const token = params.get("pair")?.trim() ?? "";
  const storeId = params.get("store")?.trim() ?? "";
  const registerId = params.get("register")?.trim() ?? "";
  if (token === "" || storeId === "" || registerId === "") return null;
  return { token, storeId, registerId, pairedAt: now.toISOString() };
}
