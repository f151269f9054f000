//! The `till` binary's library half: configuration, server assembly, demo data,
//! development tokens, and the tools that drive a deployment from outside (`till-load`),
//! shared by the binaries and the black-box tests.

pub mod config;
pub mod demo;
pub mod fiscal;
pub mod load;
pub mod server;
pub mod token;
pub mod transport;
