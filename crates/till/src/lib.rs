//! The `till` binary's library half: configuration, server assembly, demo data, development
//! tokens and the fiscal tools, shared by the binary, the black-box tests and `till-load`.

pub mod config;
pub mod demo;
pub mod fiscal;
pub mod server;
pub mod token;
pub mod transport;
