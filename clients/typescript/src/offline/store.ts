// An offline store: one store's selling data as a till keeps it to sell without the network.
// It loads a snapshot (`GET /v1/sync/snapshot`, replacing everything it held, keeping the
// snapshot's cursor), then follows the feed from that cursor (docs/sync.md):
//
//   catalog.changed          reads the article again
//   store_price.changed      (its store's) reads the store's price again
//   promotion.changed        replaces the rule with the event's, or drops it
//   coupon.changed           reads the coupon again
//
// Each page of the feed is applied in one storage transaction together with its cursor, so a
// till that stops anywhere starts again from a cursor its data is consistent with. A page with
// more `catalog.changed` than `snapshotAfterCatalogChanges` (an import) is not read article by
// article: a new snapshot is taken instead.
//
// A snapshot is written a batch of lines at a time into a generation of its own, and the store
// switches to it in one transaction once its `end` line came, so memory stays flat whatever the
// catalog's size, and a snapshot cut short leaves the data as it was.

import { TillError, type CatalogItemView, type CouponView, type FeedEvent, type PromotionRule, type SnapshotLine, type TillClient } from "../client.js";
import type { components } from "../generated/openapi.js";
import { Pricer, type ArticlePrice, type OfflineArticle, type OfflineData, type StorePrice } from "../pricing/index.js";
import { firstCatalogPrices, firstStorePrices, nextCatalogPrices, nextStorePrices } from "./history.js";
import type { OfflineStorage, StorageTransaction } from "./storage.js";

type Schemas = components["schemas"];
export type StoreView = Schemas["StoreView"];
export type StaffMember = Schemas["SnapshotStaffLine"];
type ScheduledStorePrice = Schemas["ScheduledStorePriceView"];

/** An article as the offline store holds it. */
export interface ArticleRecord {
  skuId: string;
  /** The article as the server last answered it (snapshot line or `GET /v1/catalog/skus/{skuId}`). */
  catalog: CatalogItemView;
  /** The store's own prices as last read: the one in force then (null: none) and those scheduled. */
  own: { priceCents: number | null; scheduledPrices: ScheduledStorePrice[] };
  /** The catalog's prices over time, oldest first, as far as the till learnt them (for pricing). */
  prices: ArticlePrice[];
  /** The store's own prices over time, oldest first (for pricing). */
  storePrices: StorePrice[];
}

/** A promotion rule with its version (the rule's ETag). */
export interface PromotionRecord {
  rule: PromotionRule;
  version: number;
}

/** What the store holds besides the records: which snapshot, where the feed was read to. */
export interface OfflineState {
  storeId: string;
  store: StoreView;
  /** When the snapshot the data started from was taken (the server's clock). */
  takenAt: string;
  /** The feed cursor the data is consistent with. */
  cursor: string;
  generation: number;
}

export interface OfflineStoreOptions {
  /** A client whose token may read the catalog, the promotions, the coupons and the feed. */
  client: TillClient;
  storage: OfflineStorage;
  storeId: string;
  /** More `catalog.changed` than this in one page of the feed: a new snapshot instead (default 200). */
  snapshotAfterCatalogChanges?: number;
  /** Events read per page of the feed (default 500). */
  pageSize?: number;
  /** Reads in flight at once while a page is applied (default 8). */
  concurrency?: number;
  /** Snapshot lines written per transaction (default 500). */
  snapshotBatch?: number;
}

export interface SyncReport {
  /** Feed events applied. */
  events: number;
  /** Snapshots taken (the first one, or instead of a page of many catalog changes). */
  snapshots: number;
  cursor: string;
}

/** The feed's types an offline store applies; the others do not change what it sells. */
export const SYNC_EVENT_TYPES = ["catalog.changed", "store_price.changed", "promotion.changed", "coupon.changed"] as const;

const META = "meta";
const STATE = "state";
type DataKind = "article" | "promotion" | "coupon" | "staff" | "barcode";
const DATA_KINDS: readonly DataKind[] = ["article", "promotion", "coupon", "staff", "barcode"];

export class OfflineStore {
  readonly storeId: string;
  private readonly client: TillClient;
  private readonly storage: OfflineStorage;
  private readonly snapshotAfter: number;
  private readonly pageSize: number;
  private readonly concurrency: number;
  private readonly snapshotBatch: number;
  /** Sync and snapshot one at a time. */
  private busy: Promise<unknown> = Promise.resolve();
  /** Bumped by every write of this instance: the cached pricer is for one version. */
  private version = 0;
  private cachedPricer: { version: number; pricer: Pricer } | null = null;

  constructor(options: OfflineStoreOptions) {
    this.client = options.client;
    this.storage = options.storage;
    this.storeId = options.storeId;
    this.snapshotAfter = options.snapshotAfterCatalogChanges ?? 200;
    this.pageSize = options.pageSize ?? 500;
    this.concurrency = options.concurrency ?? 8;
    this.snapshotBatch = options.snapshotBatch ?? 500;
  }

  // --- Reading what it holds --------------------------------------------------------------------

  /** Which snapshot and cursor the data is at; null before the first snapshot. */
  state(): Promise<OfflineState | null> {
    return this.storage.transaction("readonly", (tx) => this.readState(tx));
  }

  article(skuId: string): Promise<ArticleRecord | undefined> {
    return this.read((tx, gen) => tx.get<ArticleRecord>(kind(gen, "article"), skuId));
  }

  articles(): Promise<ArticleRecord[]> {
    return this.read((tx, gen) => tx.list<ArticleRecord>(kind(gen, "article")));
  }

  /** The article a scanned barcode names (EAN-8, UPC-A, EAN-13, GTIN-14: compared as GTIN-14). */
  articleByBarcode(code: string): Promise<ArticleRecord | undefined> {
    return this.read(async (tx, gen) => {
      const sku = await tx.get<string>(kind(gen, "barcode"), gtin14(code));
      return sku === undefined ? undefined : tx.get<ArticleRecord>(kind(gen, "article"), sku);
    });
  }

  promotions(): Promise<PromotionRecord[]> {
    return this.read((tx, gen) => tx.list<PromotionRecord>(kind(gen, "promotion")));
  }

  coupon(code: string): Promise<CouponView | undefined> {
    return this.read((tx, gen) => tx.get<CouponView>(kind(gen, "coupon"), code));
  }

  coupons(): Promise<CouponView[]> {
    return this.read((tx, gen) => tx.list<CouponView>(kind(gen, "coupon")));
  }

  staff(): Promise<StaffMember[]> {
    return this.read((tx, gen) => tx.list<StaffMember>(kind(gen, "staff")));
  }

  /** What the pricing module prices with (`src/pricing`), read in one transaction. */
  offlineData(): Promise<OfflineData> {
    return this.storage.transaction("readonly", async (tx) => {
      const state = await this.readState(tx);
      if (state === null) throw new Error(`store ${this.storeId}: no snapshot loaded yet`);
      const gen = state.generation;
      const records = await tx.list<ArticleRecord>(kind(gen, "article"));
      const promotions = await tx.list<PromotionRecord>(kind(gen, "promotion"));
      const coupons = await tx.list<CouponView>(kind(gen, "coupon"));
      const articles: OfflineArticle[] = records.map((r) => ({
        skuId: r.skuId,
        name: r.catalog.name,
        prices: r.prices,
        storePrices: r.storePrices,
      }));
      return { storeId: this.storeId, articles, promotions: promotions.map((p) => p.rule), coupons };
    });
  }

  /** A Pricer over the data as it stands; the same one until the data changes. */
  async pricer(): Promise<Pricer> {
    const version = this.version;
    if (this.cachedPricer?.version === version) return this.cachedPricer.pricer;
    const pricer = new Pricer(await this.offlineData());
    this.cachedPricer = { version, pricer };
    return pricer;
  }

  // --- Keeping it current -------------------------------------------------------------------------

  /**
   * Takes a snapshot of the store, replacing everything held, and keeps its cursor. Throws
   * (SnapshotIncomplete, TillError, TillUnreachable) and keeps the data it had when the
   * snapshot does not come whole.
   */
  loadSnapshot(): Promise<OfflineState> {
    return this.exclusive(() => this.takeSnapshot());
  }

  /**
   * Brings the data up to the feed's head: the first snapshot if there is none, then every page
   * of the feed after the cursor, each applied in one transaction with its cursor (or a new
   * snapshot instead of a page of many catalog changes). Throws when the server cannot be read;
   * what was applied stays applied, and the next sync goes on from there.
   */
  sync(options: { signal?: AbortSignal } = {}): Promise<SyncReport> {
    return this.exclusive(async () => {
      const report: SyncReport = { events: 0, snapshots: 0, cursor: "" };
      let state = await this.state();
      if (state === null) {
        state = await this.takeSnapshot();
        report.snapshots += 1;
      }
      for (;;) {
        options.signal?.throwIfAborted();
        const page = await this.client.events(
          { after: state.cursor, limit: this.pageSize, types: SYNC_EVENT_TYPES },
          options.signal === undefined ? {} : { signal: options.signal },
        );
        if (page.events.length === 0) {
          report.cursor = state.cursor;
          return report;
        }
        const applied = await this.applyPage(state, page.events, page.nextCursor);
        if (applied === "snapshot") {
          state = await this.takeSnapshot();
          report.snapshots += 1;
        } else {
          state = applied;
          report.events += page.events.length;
        }
      }
    });
  }

  // --- Inside ---------------------------------------------------------------------------------------

  private async takeSnapshot(): Promise<OfflineState> {
    const previous = await this.state();
    const gen = (previous?.generation ?? 0) + 1;
    await this.storage.transaction("readwrite", async (tx) => {
      for (const k of DATA_KINDS) await tx.clear(kind(gen, k));
    });
    let head: Extract<SnapshotLine, { type: "head" }> | null = null;
    let batch: SnapshotLine[] = [];
    const write = async (lines: SnapshotLine[], takenAt: string): Promise<void> => {
      await this.storage.transaction("readwrite", async (tx) => {
        for (const line of lines) await this.writeSnapshotLine(tx, gen, line, takenAt);
      });
    };
    try {
      for await (const line of this.client.snapshot(this.storeId)) {
        if (line.type === "head") {
          head = line;
        } else if (line.type !== "end") {
          batch.push(line);
          if (batch.length >= this.snapshotBatch && head !== null) {
            await write(batch, head.takenAt);
            batch = [];
          }
        }
      }
      if (head === null) throw new Error("a snapshot without its head line"); // the client checks this
      const takenAt = head.takenAt;
      await write(batch, takenAt);
      const state: OfflineState = { storeId: this.storeId, store: head.store, takenAt, cursor: head.cursor, generation: gen };
      await this.storage.transaction("readwrite", async (tx) => {
        await tx.put(META, STATE, state);
        await tx.setCursor(state.cursor);
        if (previous !== null) {
          for (const k of DATA_KINDS) await tx.clear(kind(previous.generation, k));
        }
      });
      this.version += 1;
      return state;
    } catch (error) {
      // What was written of it is thrown away; the data held before stays.
      await this.storage
        .transaction("readwrite", async (tx) => {
          for (const k of DATA_KINDS) await tx.clear(kind(gen, k));
        })
        .catch(() => undefined);
      throw error;
    }
  }

  private async writeSnapshotLine(tx: StorageTransaction, gen: number, line: SnapshotLine, takenAt: string): Promise<void> {
    switch (line.type) {
      case "article": {
        const record: ArticleRecord = {
          skuId: line.article.skuId,
          catalog: line.article,
          own: { priceCents: line.storePrices.priceCents ?? null, scheduledPrices: line.storePrices.scheduledPrices },
          prices: firstCatalogPrices(line.article, takenAt),
          storePrices: firstStorePrices(line.storePrices.priceCents, line.storePrices.scheduledPrices, takenAt),
        };
        await putArticle(tx, gen, record, undefined);
        return;
      }
      case "promotion":
        await tx.put(kind(gen, "promotion"), line.promotion.id, { rule: line.promotion, version: line.version } satisfies PromotionRecord);
        return;
      case "coupon":
        await tx.put(kind(gen, "coupon"), line.coupon.code, line.coupon);
        return;
      case "staff":
        await tx.put(kind(gen, "staff"), line.subject, { subject: line.subject, displayName: line.displayName, role: line.role });
        return;
      case "head":
      case "end":
        return;
    }
  }

  /** Reads what a page needs, then writes it and its cursor in one transaction. */
  private async applyPage(state: OfflineState, events: readonly FeedEvent[], nextCursor: string): Promise<OfflineState | "snapshot"> {
    // What to read again: each article, store price and coupon once, as of the page's last event naming it.
    const articles = new Map<string, string>();
    const storePrices = new Map<string, string>();
    const coupons = new Set<string>();
    for (const event of events) {
      if (event.type === "catalog.changed") articles.set(event.data.skuId, event.occurredAt);
      else if (event.type === "store_price.changed" && event.data.storeId === this.storeId) storePrices.set(event.data.skuId, event.occurredAt);
      else if (event.type === "coupon.changed") coupons.add(event.data.code);
    }
    if (articles.size > this.snapshotAfter) return "snapshot";

    const readArticles = await pool([...articles.keys()], this.concurrency, (sku) => orNotFound(this.client.getCatalogItem(sku)));
    const readPrices = await pool([...storePrices.keys()], this.concurrency, (sku) => orNotFound(this.client.getStorePrice(this.storeId, sku)));
    const readCoupons = await pool([...coupons], this.concurrency, (code) => orNotFound(this.client.getCoupon(code)));

    const next: OfflineState = { ...state, cursor: nextCursor };
    await this.storage.transaction("readwrite", async (tx) => {
      const current = await this.readState(tx);
      if (current === null || current.generation !== state.generation || current.cursor !== state.cursor) {
        throw new Error("the offline store changed under this sync");
      }
      const gen = state.generation;
      for (const [sku, view] of readArticles) {
        const known = await tx.get<ArticleRecord>(kind(gen, "article"), sku);
        if (view === null) {
          if (known !== undefined) await deleteArticle(tx, gen, known);
          continue;
        }
        const record: ArticleRecord = known === undefined
          ? { skuId: sku, catalog: view, own: { priceCents: null, scheduledPrices: [] }, prices: firstCatalogPrices(view, view.updatedAt), storePrices: [] }
          : { ...known, catalog: view, prices: nextCatalogPrices(known.prices, view) };
        await putArticle(tx, gen, record, known);
      }
      for (const [sku, view] of readPrices) {
        const known = await tx.get<ArticleRecord>(kind(gen, "article"), sku);
        if (known === undefined) continue; // an article the store does not hold: its own catalog.changed brings it
        const inForce = view !== null && view.priceSource === "store" ? view.priceCents : null;
        const scheduled = view?.scheduledPrices ?? [];
        const since = storePrices.get(sku) ?? state.takenAt;
        await tx.put(kind(gen, "article"), sku, {
          ...known,
          own: { priceCents: inForce, scheduledPrices: scheduled },
          storePrices: nextStorePrices(known.storePrices, inForce, scheduled, since),
        } satisfies ArticleRecord);
      }
      for (const event of events) {
        if (event.type !== "promotion.changed") continue;
        const { promotionId, version, active, rule } = event.data;
        const key = kind(gen, "promotion");
        const known = await tx.get<PromotionRecord>(key, promotionId);
        if (known !== undefined && known.version > version) continue; // the snapshot held a later one
        if (active && rule.active !== false && runsIn(rule, this.storeId)) {
          await tx.put(key, promotionId, { rule, version } satisfies PromotionRecord);
        } else {
          await tx.delete(key, promotionId);
        }
      }
      for (const [code, view] of readCoupons) {
        if (view === null) await tx.delete(kind(gen, "coupon"), code);
        else await tx.put(kind(gen, "coupon"), code, view);
      }
      await tx.put(META, STATE, next);
      await tx.setCursor(nextCursor);
    });
    this.version += 1;
    return next;
  }

  private async readState(tx: StorageTransaction): Promise<OfflineState | null> {
    const state = await tx.get<OfflineState>(META, STATE);
    if (state !== undefined && state.storeId !== this.storeId) {
      throw new Error(`this storage holds store ${state.storeId}, not ${this.storeId}`);
    }
    return state ?? null;
  }

  private read<T>(work: (tx: StorageTransaction, generation: number) => Promise<T>): Promise<T> {
    return this.storage.transaction("readonly", async (tx) => {
      const state = await this.readState(tx);
      if (state === null) throw new Error(`store ${this.storeId}: no snapshot loaded yet`);
      return work(tx, state.generation);
    });
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.busy.then(work, work);
    this.busy = run.catch(() => undefined);
    return run;
  }
}

function kind(generation: number, of: DataKind): string {
  return `g${generation}:${of}`;
}

async function putArticle(tx: StorageTransaction, gen: number, record: ArticleRecord, known: ArticleRecord | undefined): Promise<void> {
  if (known !== undefined) {
    for (const code of known.catalog.barcodes) {
      if (!record.catalog.barcodes.includes(code)) await tx.delete(kind(gen, "barcode"), gtin14(code));
    }
  }
  for (const code of record.catalog.barcodes) await tx.put(kind(gen, "barcode"), gtin14(code), record.skuId);
  await tx.put(kind(gen, "article"), record.skuId, record);
}

async function deleteArticle(tx: StorageTransaction, gen: number, known: ArticleRecord): Promise<void> {
  for (const code of known.catalog.barcodes) await tx.delete(kind(gen, "barcode"), gtin14(code));
  await tx.delete(kind(gen, "article"), known.skuId);
}

/** Whether a rule may run in the store: every store, or the store among its `storeIds`. */
function runsIn(rule: PromotionRule, storeId: string): boolean {
  return rule.storeIds == null || rule.storeIds.includes(storeId);
}

/** A barcode as a GTIN-14: EAN-8, UPC-A and EAN-13 padded with zeros, as the server matches them. */
export function gtin14(code: string): string {
  return /^\d{8,14}$/.test(code) ? code.padStart(14, "0") : code;
}

async function orNotFound<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof TillError && error.status === 404) return null;
    throw error;
  }
}

/** Runs `work` on each item with at most `concurrency` in flight; the answers by item. */
async function pool<K, V>(items: readonly K[], concurrency: number, work: (item: K) => Promise<V>): Promise<Map<K, V>> {
  const answers = new Map<K, V>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as K;
      answers.set(item, await work(item));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return answers;
}
