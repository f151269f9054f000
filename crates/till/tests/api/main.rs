//! Black-box tests: a real server on 127.0.0.1:0 per test, driven over HTTP, on both engines.

mod harness;

mod archive_trust;
mod auth;
mod barcodes;
mod console;
mod contract;
mod deploy;
mod drawer;
mod elevation;
mod envelope;
mod events;
mod exports;
mod finalize;
mod journal;
mod lists;
mod mcp;
mod nodes;
mod offline;
mod openapi;
mod operations;
mod prices;
mod promotions;
mod provisioning;
mod reports;
mod returns;
mod search;
mod sessions;
mod stock_ledger;
mod store_prices;
mod stored_value;
mod strict;
mod till_reads;
mod transport;
mod webhooks;
