//! Schema migrations, embedded in the binary: one folder per engine, applied in order, with the
//! same numbers on both. The schema starts from one baseline (0001); databases made by builds
//! before it are not migrated and must be recreated (docs/deploy.md).

use crate::error::StoreError;
use sqlx::SqlSafeStr;
use sqlx::migrate::{MigrateError, Migration, MigrationType, Migrator};

macro_rules! migrations {
    ($folder:literal: $($version:literal $name:literal),* $(,)?) => {
        vec![$(
            Migration::new(
                $version,
                $name.into(),
                MigrationType::Simple,
                include_str!(concat!("../migrations/", $folder, "/", $name, ".sql")).into_sql_str(),
                false,
            ),
        )*]
    };
}

pub(crate) fn sqlite() -> Migrator {
    Migrator::with_migrations(migrations!("sqlite":
        1 "0001_baseline", 2 "0002_stored_value", 3 "0003_search", 4 "0004_reports", 5 "0005_events", 6 "0006_webhooks", 7 "0007_rare_sales",
        8 "0008_price_schedule", 9 "0009_cash_drawer", 10 "0010_late_sales", 11 "0011_barcodes",
        12 "0012_catalog_search",
        13 "0013_store_prices",
        14 "0014_stock_ledger",
        15 "0015_mcp_confirmations",
        16 "0016_search_words",
        17 "0017_console_sign_outs",
        18 "0018_register_pin_guards",
        19 "0019_instrument_codes",
        20 "0020_print_ids",
        21 "0021_ledger_in_stock_rows",
        22 "0022_stock_list_trigger",
        23 "0023_customer_directory",
        24 "0024_customer_keys",
        25 "0025_customer_words_keyed",
        26 "0026_customer_activity_unindexed",
        27 "0027_payment_attempts",
        28 "0028_shift_card_attempts",
        29 "0029_store_seller_identity",
        30 "0030_receipt_links",
        31 "0031_receipt_sends",
        32 "0032_feed_release",
        33 "0033_stock_fold",
        34 "0034_invoices",
        35 "0035_sale_indexes"))
}

pub(crate) fn postgres() -> Migrator {
    Migrator::with_migrations(migrations!("postgres":
        1 "0001_baseline", 2 "0002_stored_value", 3 "0003_search", 4 "0004_reports", 5 "0005_events", 6 "0006_webhooks", 7 "0007_rare_sales",
        8 "0008_price_schedule", 9 "0009_cash_drawer", 10 "0010_late_sales", 11 "0011_barcodes",
        12 "0012_catalog_search",
        13 "0013_store_prices",
        14 "0014_stock_ledger",
        15 "0015_mcp_confirmations",
        16 "0016_search_words",
        17 "0017_console_sign_outs",
        18 "0018_register_pin_guards",
        19 "0019_instrument_codes",
        20 "0020_print_ids",
        21 "0021_ledger_in_stock_rows",
        22 "0022_stock_list_trigger",
        23 "0023_customer_directory",
        24 "0024_customer_keys",
        25 "0025_customer_words_keyed",
        26 "0026_customer_activity_unindexed",
        27 "0027_payment_attempts",
        28 "0028_shift_card_attempts",
        29 "0029_store_seller_identity",
        30 "0030_receipt_links",
        31 "0031_receipt_sends",
        32 "0032_feed_release",
        33 "0033_stock_fold",
        34 "0034_invoices",
        35 "0035_sale_indexes"))
}

/// What a failed migration means for the operator.
pub(crate) fn error(error: MigrateError) -> StoreError {
    match error {
        MigrateError::Execute(error) => crate::error::db(error),
        // The baseline replaced migrations of the same number that no deployment ran.
        MigrateError::VersionMismatch(1) => StoreError::Config(
            "the database was made by a build from before the schema baseline; recreate it (docs/deploy.md)".to_owned(),
        ),
        other => StoreError::Corrupt(format!("schema migration failed: {other}")),
    }
}
