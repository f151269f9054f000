//! The pure domain core of till. Nothing here performs I/O, reads a clock or awaits: callers
//! pass in the time, the catalog and the configuration, and get values back.

#![forbid(unsafe_code)]

/// A text newtype whose value was parsed once (each type brings its own `parse`): read back
/// from storage with `from_trusted`, shown with `as_str` and `Display`.
macro_rules! parsed_text {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(String);

        impl $name {
            /// For values read back from storage, which were parsed when written.
            pub fn from_trusted(value: String) -> Self {
                Self(value)
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

pub mod barcode;
pub mod canonical;
pub mod catalog;
pub mod committed;
pub mod coupon;
pub mod csv_cell;
pub mod customer;
pub mod documents;
pub mod drawer;
pub mod e_receipt;
pub mod events;
pub mod explained;
pub mod exports;
pub mod fiscal;
pub mod grant;
pub mod ids;
pub mod instant;
pub mod invoice;
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
