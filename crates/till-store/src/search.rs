//! The sales search: committed sales and returns, newest first, filtered by where, on which
//! shift and for whom they were made, and when, a page at a time.
//!
//! Each filter has an index that starts with its column and then holds the list's order,
//! `(emitted_at, transaction_id)` (migration 0003): a page seeks its key in it and reads its
//! rows in order. Plain sales have no index by type, since every index is written by every
//! sale: the type is checked on the rows another filter's index (or the time index) yields.
//! The rarer types (returns, rentals, repairs) have one that plain sales do not write
//! (migration 0007).

use crate::db::Store;
use crate::error::StoreError;
use crate::page::{Keyset, Newest, Window};
use crate::sql::{Query, Row};
use till_app::storage::ReadAt;
pub use till_app::storage::sales::{SaleFilter, SaleSummary};
use till_core::ids::{CustomerId, RegisterId, SessionId, StoreId, Subject, TransactionId};
use till_core::instant::{from_micros, to_micros};
use till_core::sale::SaleType;

const SELECT_SUMMARY: &str = "SELECT transaction_id, number, kind, store_id, register_id, session_id, seller_id, \
     customer_id, total_cents, item_count, emitted_at FROM sales";

impl Store {
    pub async fn search_sales(
        &self,
        filter: &SaleFilter,
        window: &Window<Newest<TransactionId>>,
        at: ReadAt,
    ) -> Result<Vec<SaleSummary>, StoreError> {
        let rows = search(filter, window).fetch_all(self.reader_at(at)).await?;
        rows.iter().map(summary_from_row).collect()
    }
}

fn search(filter: &SaleFilter, window: &Window<Newest<TransactionId>>) -> Query {
    let mut keyset = Keyset::new(SELECT_SUMMARY);
    keyset.equal_if("store_id", filter.store_id.as_ref().map(StoreId::as_str));
    keyset.equal_if("register_id", filter.register_id.as_ref().map(RegisterId::as_str));
    keyset.equal_if("session_id", filter.session_id.as_ref().map(SessionId::as_str));
    keyset.equal_if("customer_id", filter.customer_id.as_ref().map(CustomerId::as_str));
    keyset.equal_if("kind", filter.kind.map(SaleType::as_str));
    if filter.kind.is_some_and(|kind| kind != SaleType::Sale) {
        // Implied by the equality, and written as the partial index's condition reads.
        keyset.condition("kind <> 'sale'");
    }
    if let Some(from) = filter.from {
        keyset.compare("emitted_at", ">=", to_micros(from));
    }
    if let Some(to) = filter.to {
        keyset.compare("emitted_at", "<", to_micros(to));
    }
    keyset.newest_first("emitted_at", "transaction_id", window.after.as_ref(), window.take)
}

fn summary_from_row(row: &Row) -> Result<SaleSummary, StoreError> {
    let kind: String = row.try_get("kind")?;
    let kind = SaleType::ALL
        .into_iter()
        .find(|known| known.as_str() == kind)
        .ok_or_else(|| StoreError::Corrupt(format!("a sale of unknown type {kind}")))?;
    Ok(SaleSummary {
        transaction_id: TransactionId::from_trusted(row.try_get("transaction_id")?),
        number: row.try_get("number")?,
        kind,
        store_id: StoreId::from_trusted(row.try_get("store_id")?),
        register_id: RegisterId::from_trusted(row.try_get("register_id")?),
        session_id: SessionId::from_trusted(row.try_get("session_id")?),
        seller_id: Subject::from_trusted(row.try_get("seller_id")?),
        customer_id: row
            .try_get::<Option<String>>("customer_id")?
            .map(CustomerId::from_trusted),
        total_cents: row.try_get("total_cents")?,
        item_count: row.try_get("item_count")?,
        emitted_at: from_micros(row.try_get("emitted_at")?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{migrated_scratch_database, plan_of};
    use jiff::Timestamp;

    /// SQLite's plan of the search for `filter`, on its first page or after a key.
    fn plan(conn: &rusqlite::Connection, filter: &SaleFilter, after: Option<Newest<TransactionId>>) -> Vec<String> {
        plan_of(conn, &search(filter, &Window { after, take: 51 }))
    }

    /// Each filter reads a page through an index that gives the rows in the list's order: the
    /// page stops after its rows, with nothing to sort and no scan of the table.
    #[tokio::test]
    async fn every_filter_reads_its_page_in_index_order() {
        let dir = tempfile::tempdir().unwrap();
        let conn = migrated_scratch_database(dir.path()).await;
        let at = Timestamp::from_second(1_790_000_000).unwrap();
        let after = Newest {
            at: Timestamp::from_second(1_800_000_000).unwrap(),
            id: TransactionId::from_trusted("t-9".to_owned()),
        };
        let cases = [
            (SaleFilter::default(), "sales_by_time"),
            (
                SaleFilter {
                    store_id: Some(StoreId::from_trusted("s1".into())),
                    ..SaleFilter::default()
                },
                "sales_by_store_time",
            ),
            (
                SaleFilter {
                    register_id: Some(RegisterId::from_trusted("r1".into())),
                    ..SaleFilter::default()
                },
                "sales_by_register_time",
            ),
            (
                SaleFilter {
                    session_id: Some(SessionId::from_trusted("ses_1".into())),
                    ..SaleFilter::default()
                },
                "sales_by_session",
            ),
            (
                SaleFilter {
                    customer_id: Some(CustomerId::from_trusted("c1".into())),
                    ..SaleFilter::default()
                },
                "sales_by_customer_time",
            ),
            (
                SaleFilter {
                    kind: Some(SaleType::Return),
                    ..SaleFilter::default()
                },
                "sales_rare_by_time",
            ),
            (
                SaleFilter {
                    kind: Some(SaleType::Repair),
                    from: Some(at),
                    ..SaleFilter::default()
                },
                "sales_rare_by_time",
            ),
            (
                SaleFilter {
                    from: Some(at),
                    to: Some(at.checked_add(jiff::SignedDuration::from_hours(24)).unwrap()),
                    ..SaleFilter::default()
                },
                "sales_by_time",
            ),
            (
                SaleFilter {
                    store_id: Some(StoreId::from_trusted("s1".into())),
                    kind: Some(SaleType::Sale),
                    from: Some(at),
                    to: Some(at.checked_add(jiff::SignedDuration::from_hours(24)).unwrap()),
                    ..SaleFilter::default()
                },
                "sales_by_store_time",
            ),
        ];
        for (filter, index) in cases {
            let steps = [plan(&conn, &filter, None), plan(&conn, &filter, Some(after.clone()))].concat();
            assert!(
                steps
                    .iter()
                    .any(|step| step.contains(&format!("INDEX {index} ")) || step.ends_with(&format!("INDEX {index}"))),
                "{filter:?} should read {index}: {steps:?}"
            );
            assert!(
                !steps.iter().any(|step| step.contains("TEMP B-TREE")),
                "{filter:?} sorts: {steps:?}"
            );
            assert!(
                !steps.iter().any(|step| step == "SCAN sales"),
                "{filter:?} scans the table: {steps:?}"
            );
        }
    }

    /// Every index a sale writes costs its commit: the search adds four to the sales table
    /// (time, store, register, customer) and widens the session's in place; the customer's
    /// holds only the sales that name one, the rare types' only returns, rentals and repairs,
    /// and the late sales' only sales booked after their session closed: a plain sale writes
    /// none of these.
    #[tokio::test]
    async fn the_search_adds_four_indexes_to_sales() {
        let dir = tempfile::tempdir().unwrap();
        let conn = migrated_scratch_database(dir.path()).await;
        let mut indexes: Vec<(String, bool)> = conn
            .prepare("SELECT name, partial FROM pragma_index_list('sales') WHERE origin = 'c'")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        indexes.sort();
        let expected = [
            ("sales_by_customer_time", true),
            ("sales_by_original", true),
            ("sales_by_register_time", false),
            ("sales_by_session", false),
            ("sales_by_store_time", false),
            ("sales_by_time", false),
            ("sales_late_by_register", true),
            ("sales_rare_by_time", true),
        ];
        assert_eq!(
            indexes,
            expected.map(|(name, partial)| (name.to_owned(), partial)),
            "the indexes a sale writes besides its keys"
        );
        let columns = |index: &str| -> Vec<String> {
            conn.prepare(&format!("SELECT name FROM pragma_index_info('{index}') ORDER BY seqno"))
                .unwrap()
                .query_map([], |row| row.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        assert_eq!(
            columns("sales_by_store_time"),
            ["store_id", "emitted_at", "transaction_id"],
            "the sales report reads this index by name"
        );
        assert_eq!(
            columns("sales_by_session"),
            ["session_id", "emitted_at", "transaction_id"]
        );
    }
}
