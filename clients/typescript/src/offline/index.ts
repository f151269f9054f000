export { OfflineStore, SYNC_EVENT_TYPES, gtin14 } from "./store.js";
export type { ArticleRecord, OfflineState, OfflineStoreOptions, PromotionRecord, StaffMember, StoreView, SyncReport } from "./store.js";
export type { Kind, OfflineStorage, StorageTransaction, TransactionMode } from "./storage.js";
export { MemoryStorage } from "./memory.js";
export { IndexedDbStorage } from "./indexeddb.js";
export { compareInstantTexts, instantNanos } from "./history.js";
