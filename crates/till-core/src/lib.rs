//! The pure domain core of till. Nothing here performs I/O, reads a clock or awaits: callers
//! pass in the time, the catalog and the configuration, and get values back.

#![forbid(unsafe_code)]

pub mod barcode;
pub mod canonical;
pub mod catalog;
pub mod committed;
pub mod coupon;
pub mod csv_cell;
pub mod customer;
pub mod documents;
pub mod drawer;
pub mod events;
pub mod explained;
pub mod exports;
pub mod fiscal;
pub mod grant;
pub mod ids;
pub mod instant;
pub mod money;
pub mod offline;
#[cfg(feature = "openapi")]
pub mod openapi;
pub mod payment;
pub mod period;
pub mod pricing;
pub mod promotions;
pub mod report;
pub mod returns;
pub mod sale;
pub mod seller;
pub mod settlement;
pub mod staff;
pub mod stock;
pub mod store;
pub mod stored_value;
pub mod webhooks;
pub mod words;
