// OfflineStorage in memory: what IndexedDB does, without surviving the process. Values are
// copied in and out (structuredClone), transactions run one at a time, and a read-write
// transaction's writes are staged and applied only when its work resolves.

import { CURSOR_KIND, type Kind, type OfflineStorage, type StorageTransaction, type TransactionMode } from "./storage.js";

const DELETED = Symbol("deleted");

interface Staged {
  cleared: boolean;
  writes: Map<string, unknown>;
}

export class MemoryStorage implements OfflineStorage {
  private readonly kinds = new Map<Kind, Map<string, unknown>>();
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;

  transaction<T>(mode: TransactionMode, work: (tx: StorageTransaction) => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      if (this.closed) throw new Error("the storage is closed");
      const staged = new Map<Kind, Staged>();
      let open = true;
      const result = await work(this.view(mode, staged, () => open));
      open = false;
      this.apply(staged);
      return result;
    };
    const next = this.tail.then(run, run);
    this.tail = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    await this.tail;
    this.closed = true;
  }

  /** A copy of every record, by kind: to compare, or to start another storage from (a backup). */
  dump(): Map<Kind, Map<string, unknown>> {
    return new Map([...this.kinds].map(([kind, records]) => [kind, new Map([...records].map(([k, v]) => [k, structuredClone(v)]))]));
  }

  /** A storage holding a copy of this one's records. */
  copy(): MemoryStorage {
    const other = new MemoryStorage();
    for (const [kind, records] of this.dump()) other.kinds.set(kind, records);
    return other;
  }

  private view(mode: TransactionMode, staged: Map<Kind, Staged>, isOpen: () => boolean): StorageTransaction {
    const check = (writing: boolean): void => {
      if (!isOpen()) throw new Error("the transaction is over");
      if (writing && mode === "readonly") throw new Error("a read-only transaction cannot write");
    };
    const stageOf = (kind: Kind): Staged => {
      let stage = staged.get(kind);
      if (stage === undefined) {
        stage = { cleared: false, writes: new Map() };
        staged.set(kind, stage);
      }
      return stage;
    };
    const current = (kind: Kind): Map<string, unknown> => {
      const stage = staged.get(kind);
      const base = this.kinds.get(kind);
      if (stage === undefined) return base ?? new Map();
      const merged = new Map(stage.cleared ? [] : (base ?? []));
      for (const [key, value] of stage.writes) {
        if (value === DELETED) merged.delete(key);
        else merged.set(key, value);
      }
      return merged;
    };
    const ordered = (kind: Kind): [string, unknown][] =>
      [...current(kind)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const tx: StorageTransaction = {
      get: async <T>(kind: Kind, key: string) => {
        check(false);
        const stage = staged.get(kind);
        const found = stage?.writes.get(key);
        const value =
          found === DELETED ? undefined : (found ?? (stage?.cleared === true ? undefined : this.kinds.get(kind)?.get(key)));
        return value === undefined ? undefined : (structuredClone(value) as T);
      },
      list: async <T>(kind: Kind) => {
        check(false);
        return ordered(kind).map(([, value]) => structuredClone(value) as T);
      },
      keys: async (kind: Kind) => {
        check(false);
        return ordered(kind).map(([key]) => key);
      },
      put: async (kind: Kind, key: string, value: unknown) => {
        check(true);
        stageOf(kind).writes.set(key, structuredClone(value));
      },
      delete: async (kind: Kind, key: string) => {
        check(true);
        stageOf(kind).writes.set(key, DELETED);
      },
      clear: async (kind: Kind) => {
        check(true);
        const stage = stageOf(kind);
        stage.cleared = true;
        stage.writes.clear();
      },
      getCursor: async (name = "feed") => (await tx.get<string>(CURSOR_KIND, name)) ?? null,
      setCursor: async (cursor: string | null, name = "feed") => {
        if (cursor === null) await tx.delete(CURSOR_KIND, name);
        else await tx.put(CURSOR_KIND, name, cursor);
      },
    };
    return tx;
  }

  private apply(staged: Map<Kind, Staged>): void {
    for (const [kind, stage] of staged) {
      const records = stage.cleared ? new Map<string, unknown>() : (this.kinds.get(kind) ?? new Map<string, unknown>());
      for (const [key, value] of stage.writes) {
        if (value === DELETED) records.delete(key);
        else records.set(key, value);
      }
      if (records.size === 0) this.kinds.delete(kind);
      else this.kinds.set(kind, records);
    }
  }
}
