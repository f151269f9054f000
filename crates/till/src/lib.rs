//! The `till` binary's library half: configuration, server assembly, demo data, development
//! tokens, the fiscal tools and the catalog import, shared by the binary, the black-box tests and `till-load`.

pub mod bundle;
pub mod catalog_import;
pub mod config;
pub mod demo;
pub mod files;
pub mod fiscal;
pub mod server;
pub mod token;
pub mod transport;
