// OfflineStorage in IndexedDB, for a till that runs in a browser: one object store of records
// keyed by [kind, key], so that a kind is a key range (listed in key order, cleared in one
// request). Read-write transactions ask for `durability: "strict"`: an acknowledged write is on
// disk, which is what an outbox of sales needs.
//
// Not exercised by this package's Node tests: Node has no IndexedDB. Give `open` another
// factory (fake-indexeddb's, say) to run it elsewhere.

import { CURSOR_KIND, type Kind, type OfflineStorage, type StorageTransaction, type TransactionMode } from "./storage.js";

const RECORDS = "records";
const VERSION = 1;

export class IndexedDbStorage implements OfflineStorage {
  private constructor(private readonly db: IDBDatabase) {}

  /** Opens (or creates) the database `name`. */
  static open(name: string, factory: IDBFactory = globalThis.indexedDB): Promise<IndexedDbStorage> {
    return new Promise((resolve, reject) => {
      const request = factory.open(name, VERSION);
      request.onupgradeneeded = () => {
        const db = request.result;
        if (!db.objectStoreNames.contains(RECORDS)) db.createObjectStore(RECORDS);
      };
      request.onsuccess = () => resolve(new IndexedDbStorage(request.result));
      request.onerror = () => reject(request.error ?? new Error(`cannot open IndexedDB ${name}`));
      request.onblocked = () => reject(new Error(`IndexedDB ${name} is held open at an older version elsewhere`));
    });
  }

  transaction<T>(mode: TransactionMode, work: (tx: StorageTransaction) => Promise<T>): Promise<T> {
    const transaction =
      mode === "readwrite"
        ? this.db.transaction(RECORDS, "readwrite", { durability: "strict" })
        : this.db.transaction(RECORDS, "readonly");
    const store = transaction.objectStore(RECORDS);
    const done = new Promise<void>((resolve, reject) => {
      transaction.oncomplete = () => resolve();
      transaction.onabort = () => reject(transaction.error ?? new Error("the transaction was aborted"));
      transaction.onerror = () => undefined; // the abort that follows rejects
    });
    // An error is reported once, by the abort if there is one.
    done.catch(() => undefined);
    const range = (kind: Kind): IDBKeyRange => IDBKeyRange.bound([kind], [kind, []]);
    const tx: StorageTransaction = {
      get: async <T>(kind: Kind, key: string) => (await ask(store.get([kind, key]))) as T | undefined,
      list: async <T>(kind: Kind) => (await ask(store.getAll(range(kind)))) as T[],
      keys: async (kind: Kind) =>
        ((await ask(store.getAllKeys(range(kind)))) as IDBValidKey[]).map((key) => String((key as [string, string])[1])),
      put: async (kind: Kind, key: string, value: unknown) => {
        await ask(store.put(value, [kind, key]));
      },
      delete: async (kind: Kind, key: string) => {
        await ask(store.delete([kind, key]));
      },
      clear: async (kind: Kind) => {
        await ask(store.delete(range(kind)));
      },
      getCursor: async (name = "feed") => ((await ask(store.get([CURSOR_KIND, name]))) as string | undefined) ?? null,
      setCursor: async (cursor: string | null, name = "feed") => {
        if (cursor === null) await ask(store.delete([CURSOR_KIND, name]));
        else await ask(store.put(cursor, [CURSOR_KIND, name]));
      },
    };
    return (async () => {
      let result: T;
      try {
        result = await work(tx);
      } catch (error) {
        try {
          transaction.abort();
        } catch {
          // Already finished or aborted.
        }
        throw error;
      }
      await done;
      return result;
    })();
  }

  async close(): Promise<void> {
    this.db.close();
  }

  /** Deletes the database `name` (a till handed back, a test). */
  static destroy(name: string, factory: IDBFactory = globalThis.indexedDB): Promise<void> {
    return new Promise((resolve, reject) => {
      const request = factory.deleteDatabase(name);
      request.onsuccess = () => resolve();
      request.onerror = () => reject(request.error ?? new Error(`cannot delete IndexedDB ${name}`));
    });
  }
}

function ask<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error("an IndexedDB request failed"));
  });
}
