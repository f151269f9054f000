//! The use cases driven without HTTP, against a real store on a scratch SQLite database: what
//! a person at the till relies on, outcome by outcome and refusal by refusal.

mod drawer;
mod elevation;
mod finalize;
mod harness;
mod returns;
mod sessions;
mod stored_value;
