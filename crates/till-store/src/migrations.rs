//! Schema migrations, embedded in the binary: one folder per engine, applied in order.

use sqlx::SqlSafeStr;
use sqlx::migrate::{Migration, MigrationType, Migrator};

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
        1 "0001_foundation",
        2 "0002_sales_and_journal",
        3 "0003_elevation",
        4 "0004_promotions",
        5 "0005_journal",
        6 "0006_returns",
        7 "0007_catalog_revision",
        8 "0008_fiscal_keys_append_only",
        9 "0009_ticket_in_one_statement",
        10 "0010_sale_detail",
        11 "0011_lines_in_sale_detail",
        12 "0012_partial_returns_index",
        13 "0013_tickets_through_the_journal",
        14 "0014_packed_sales",
        15 "0015_stock_moves",
    ))
}

pub(crate) fn postgres() -> Migrator {
    Migrator::with_migrations(migrations!("postgres":
        1 "0001_foundation",
        2 "0002_sales_and_journal",
        3 "0003_elevation",
        4 "0004_promotions",
        5 "0005_journal",
        6 "0006_returns",
        7 "0007_catalog_revision",
        8 "0008_fiscal_keys_append_only",
        9 "0009_ticket_in_one_statement",
        10 "0010_sale_detail",
        11 "0011_lines_in_sale_detail",
        12 "0012_tickets_through_the_journal",
        13 "0013_packed_sales",
        14 "0014_stock_moves",
    ))
}
