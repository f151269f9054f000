//! Driving a till deployment from outside, as tills and operators do: start and kill `till
//! serve` processes, provision a shop over HTTP, and send sales that are retried until
//! acknowledged. The crash test, the load generator and the multi-node tests are built from
//! these parts.

pub mod bench;
pub mod catalog;
pub mod client;
pub mod cluster;
pub mod crash;
pub mod customers;
pub mod drawer;
pub mod mail;
pub mod prefill;
pub mod reads;
pub mod receipts;
pub mod shop;
pub mod stored_value;
pub mod wire;
