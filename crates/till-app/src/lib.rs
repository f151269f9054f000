//! The use cases of till, between the HTTP layer and storage: finalize a sale, give goods back
//! against a receipt, grant a manager's approval at the till, open and close a register
//! session. Each takes input the API has parsed, asks storage, decides with till-core and
//! answers a typed outcome or a typed [`Refusal`]: no HTTP status, no SQL, no sentence (the
//! API words each refusal once).

#![forbid(unsafe_code)]

mod answers;
mod app;
mod authority;
mod booking;
pub mod caller;
pub mod catalog;
pub mod confirmations;
pub mod console;
pub mod coupons;
pub mod customers;
pub mod drawer;
pub mod e_receipts;
pub mod elevation;
pub mod exports;
pub mod feed;
pub mod finalize;
pub mod fiscal;
pub mod health;
pub mod invoices;
pub mod payments;
mod pin;
pub mod promotion_cache;
pub mod promotions;
pub mod quote;
pub mod receipts;
pub mod refusal;
pub mod reports;
pub mod returns;
pub mod sales;
pub mod secret;
pub mod sessions;
pub mod staff;
pub mod stock;
pub mod storage;
pub mod store_prices;
pub mod stored_value;
pub mod stores;
pub mod sync;
pub mod webhooks;

pub use answers::Answers;
pub use app::{App, Clock, ManualClock, Settings, SystemClock};
pub use booking::Booked;
pub use caller::{Credential, Principal};
pub use refusal::{Error, Refusal};
