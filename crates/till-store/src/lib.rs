//! Storage for till behind one interface, [`Store`], on SQLite or PostgreSQL.
//!
//! Every method takes domain types from `till-core` and the current time from the caller, so
//! tests can drive the clock. The business modules (sales, returns, journal, stock, ...) reach
//! the database through [`db::Store`] alone; how writes reach the disk on each engine lives in
//! `engine`, behind a narrow interface.

pub mod archives;
pub mod barcodes;
mod capabilities;
pub mod catalog;
pub mod closures;
pub mod console_sign_outs;
pub mod coupons;
pub mod customers;
pub mod db;
pub mod drawer;
pub mod elevation;
mod engine;
pub mod error;
pub mod exports;
pub mod feed;
pub mod invoices;
pub mod journal;
mod late_sales;
pub mod mcp_confirmations;
pub mod metrics;
mod migrations;
mod name_search;
pub mod packed;
pub mod page;
pub mod payments;
pub mod promotions;
pub mod receipt_sends;
pub mod receipts;
mod reports;
pub mod returns;
mod sale_detail;
mod sale_row;
pub mod sales;
pub mod sales_report;
pub mod sealer;
pub mod search;
mod secrets;
pub mod sessions;
pub mod sku_words;
pub mod snapshot;
pub mod staff;
pub mod stock;
pub mod stock_counts;
pub mod stock_transfers;
pub mod store_prices;
pub mod stored_value;
pub mod stores;
pub mod sync;
mod turns;
pub mod webhooks;

pub use db::{Engine, Found, SqliteSynchronous, Store, StoreOptions};
pub use engine::EngineOf;
/// SQLite's page cache, wrapped before SQLite starts (a store's first connection installs it).
pub use engine::sqlite::page_cache;
/// The statement layer and batches every business module writes its SQL with.
pub(crate) use engine::{batch, sql};
pub use error::{Cause, Conflict, DbError, Forbidden, InstrumentRefusal, NewIdOf, Rule, Stale, StoreError};
/// A request run up to its first write: every write stops here in a dry run.
pub use till_app::storage::dry_run;
/// What a node keeps in memory of data any node may change, shared with the use cases.
pub use till_app::storage::kept as cache;
