//! Storage for till behind one interface, [`Store`], on SQLite or PostgreSQL.
//!
//! Every method takes domain types from `till-core` and the current time from the caller, so
//! tests can drive the clock. See [`db`] for how writes reach the disk on each engine.

pub mod archives;
mod batch;
pub mod catalog;
mod catalog_cache;
mod checkpointer;
pub mod closures;
pub mod coupons;
pub mod customers;
pub mod db;
pub mod elevation;
mod error;
mod gathered_log;
pub mod journal;
mod migrations;
pub mod packed;
pub mod promotions;
pub mod receipts;
mod reports;
pub mod returns;
mod sale_detail;
pub mod sales;
pub mod sealer;
mod session_cache;
pub mod sessions;
pub mod snapshot;
pub(crate) mod sql;
pub mod staff;
pub mod stock;
pub mod stores;

pub use db::{Engine, SqliteSynchronous, Store, StoreOptions};
pub use error::{Conflict, Forbidden, Rule, Stale, StoreError};
