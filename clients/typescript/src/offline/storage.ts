// Where an offline till keeps what it must not lose: the store's selling data with its feed
// cursor (OfflineStore) and the requests waiting to be sent (Outbox). Records are plain
// structured-cloneable values under a kind and a key; a transaction sees its own writes and
// commits all of them or none.
//
// Two implementations: MemoryStorage (tests, and a till that may lose its queue with its
// process) and IndexedDbStorage (a browser till: survives a reload, a crash, a power cut).

/** A record's address: its kind (`article`, `outbox`...) and its key within the kind. */
export type Kind = string;

/** A transaction's view of the storage. */
export interface StorageTransaction {
  /** The record, or undefined. The value is a copy: changing it changes nothing stored. */
  get<T>(kind: Kind, key: string): Promise<T | undefined>;
  /** Every record of a kind, by key (compared as UTF-16 code units, as IndexedDB does). */
  list<T>(kind: Kind): Promise<T[]>;
  /** Every key of a kind, in order. */
  keys(kind: Kind): Promise<string[]>;
  /** Writes a copy of `value`. In a read-only transaction, throws. */
  put(kind: Kind, key: string, value: unknown): Promise<void>;
  delete(kind: Kind, key: string): Promise<void>;
  /** Deletes every record of a kind. */
  clear(kind: Kind): Promise<void>;
  /** A named cursor (the feed's), or null. */
  getCursor(name?: string): Promise<string | null>;
  setCursor(cursor: string | null, name?: string): Promise<void>;
}

export type TransactionMode = "readonly" | "readwrite";

/**
 * A storage of records. `transaction` runs `work` in one transaction: its writes are committed
 * together when `work` resolves, and none of them when it throws.
 *
 * Inside `work`, await only the transaction's own operations: IndexedDB commits a transaction
 * as soon as no request of it is pending, so a network call or a timer inside `work` ends it.
 * Fetch first, then write.
 */
export interface OfflineStorage {
  transaction<T>(mode: TransactionMode, work: (tx: StorageTransaction) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The kind named cursors are kept under. */
export const CURSOR_KIND = "cursor";
