//! The `till` binary's library half: configuration, server assembly, demo data and
//! development tokens, shared by `main` and the black-box tests.

pub mod config;
pub mod demo;
pub mod fiscal;
pub mod server;
pub mod token;
