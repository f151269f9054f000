//! A sale's lines, tenders, VAT breakdown and reductions, kept as one JSON document in the
//! sale's own row, packed with its answer (see [`crate::packed`]), in the layout of its sealed
//! record. The document spares a sale a table per part: on PostgreSQL each one would cost the
//! sale's statement a relation to open and lock, an index entry and a foreign-key check per row
//! (see docs/performance.md, "The sale's document").

use crate::error::StoreError;
use crate::packed;
use crate::sql::{Conn, Query, query};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use till_core::canonical::to_compact_string;
use till_core::fiscal::payload::{SaleRecord, SaleRecordAdjustment, SaleRecordLine, SaleRecordTender, SaleRecordVat};
use till_core::sale::SALE_TEXT_BYTES;

/// The document as read back.
#[derive(Debug, Deserialize, PartialEq)]
pub(crate) struct SaleDetail {
    pub lines: Vec<SaleRecordLine>,
    pub tenders: Vec<SaleRecordTender>,
    pub vat: Vec<SaleRecordVat>,
    pub adjustments: Vec<SaleRecordAdjustment>,
}

/// The document as written, borrowed from the record the ticket seals.
#[derive(Serialize)]
struct SaleDetailOf<'a> {
    lines: &'a [SaleRecordLine],
    tenders: &'a [SaleRecordTender],
    vat: &'a [SaleRecordVat],
    adjustments: &'a [SaleRecordAdjustment],
}

impl SaleDetail {
    /// The document of the sale `record` seals.
    pub(crate) fn write(record: &SaleRecord) -> Result<String, StoreError> {
        let detail = SaleDetailOf {
            lines: &record.lines,
            tenders: &record.tenders,
            vat: &record.vat,
            adjustments: &record.adjustments,
        };
        to_compact_string(&detail, SALE_TEXT_BYTES)
            .map_err(|_| StoreError::Corrupt("a sale's detail cannot be written".into()))
    }

    pub(crate) fn read(text: &str) -> Result<Self, StoreError> {
        serde_json::from_str(text).map_err(|_| StoreError::Corrupt("a sale's detail cannot be read".into()))
    }
}

/// Whose sales a total covers.
#[derive(Clone, Copy)]
pub(crate) enum Sales<'a> {
    /// The sales booked in a session (a shift's report): not its late sales, which arrived
    /// after its close.
    Session(&'a str),
    /// A register's late sales after the ticket `after`, through `through` (shown apart in a
    /// shift's report and a day's closure).
    Late {
        register_id: &'a str,
        after: i64,
        through: i64,
    },
    /// A register's tickets after `after`, through `through` (a day's closure).
    Tickets {
        register_id: &'a str,
        after: i64,
        through: i64,
    },
}

impl Sales<'_> {
    /// The sales' filter, on `sales s`; its parameters are bound by [`Sales::bind`].
    pub(crate) fn clause(self) -> &'static str {
        match self {
            Sales::Session(_) => "s.session_id = $1 AND s.late IS NULL",
            // The index of late sales holds these only: its condition is repeated for the planner.
            Sales::Late { .. } => "s.register_id = $1 AND s.late = 1 AND s.fiscal_seq > $2 AND s.fiscal_seq <= $3",
            // A register's tickets are found by their entries in its journal, whose key is
            // the register and the sequence: `sales` keeps no index of its own on them.
            Sales::Tickets { .. } => {
                "s.transaction_id IN (SELECT e.reference FROM fiscal_entries e \
                     WHERE e.register_id = $1 AND e.kind = 'ticket' AND e.seq > $2 AND e.seq <= $3) \
                 AND s.register_id = $1 AND s.fiscal_seq > $2 AND s.fiscal_seq <= $3"
            }
        }
    }

    pub(crate) fn bind(self, query: Query) -> Query {
        match self {
            Sales::Session(session_id) => query.bind(session_id),
            Sales::Tickets {
                register_id,
                after,
                through,
            }
            | Sales::Late {
                register_id,
                after,
                through,
            } => query.bind(register_id).bind(after).bind(through),
        }
    }

    /// The parts of the sales' documents that their totals read.
    async fn parts(self, conn: &mut Conn) -> Result<Vec<TotalledParts>, StoreError> {
        let rows = self
            .bind(query(format!("SELECT s.packed FROM sales s WHERE {}", self.clause())))
            .fetch_all(&mut *conn)
            .await?;
        rows.iter().map(packed::read_detail).collect()
    }
}

/// What the totals read of a sale's document: its VAT and tenders. Its lines, the bulk of it,
/// are skipped over unread.
#[derive(Deserialize)]
struct TotalledParts {
    tenders: Vec<TenderTaken>,
    vat: Vec<SaleRecordVat>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TenderTaken {
    method: String,
    applied_cents: i64,
    forfeited_cents: i64,
}

/// The sums of a set of sales per VAT rate and per tender method, read in one pass over their
/// documents.
pub(crate) struct SalesTotals {
    /// Per VAT rate, highest rate first.
    pub vat: Vec<SaleRecordVat>,
    /// Per tender method, by method: what was applied and what was forfeited.
    pub tenders: Vec<(String, i64, i64)>,
}

/// [`SalesTotals`] of `sales`.
pub(crate) async fn totals(conn: &mut Conn, sales: Sales<'_>) -> Result<SalesTotals, StoreError> {
    let mut vat = Totals::default();
    let mut tenders = Totals::default();
    for parts in sales.parts(conn).await? {
        for v in parts.vat {
            vat.add(v.vat_rate, v.total_cents, v.vat_cents)?;
        }
        for t in parts.tenders {
            tenders.add(t.method, t.applied_cents, t.forfeited_cents)?;
        }
    }
    Ok(SalesTotals {
        vat: vat
            .0
            .into_iter()
            .rev()
            .map(|(vat_rate, (total_cents, vat_cents))| SaleRecordVat {
                vat_rate,
                total_cents,
                vat_cents,
            })
            .collect(),
        tenders: tenders.0.into_iter().map(|(method, (a, f))| (method, a, f)).collect(),
    })
}

/// Totals per VAT rate of `sales`, highest rate first.
pub(crate) async fn vat_by_rate(conn: &mut Conn, sales: Sales<'_>) -> Result<Vec<SaleRecordVat>, StoreError> {
    Ok(totals(conn, sales).await?.vat)
}

/// Two sums of cents per key, checked: a total past `i64` is an error, never a wrapped figure.
struct Totals<K>(BTreeMap<K, (i64, i64)>);

impl<K> Default for Totals<K> {
    fn default() -> Self {
        Self(BTreeMap::new())
    }
}

impl<K: Ord> Totals<K> {
    fn add(&mut self, key: K, first: i64, second: i64) -> Result<(), StoreError> {
        let sums = self.0.entry(key).or_insert((0, 0));
        match (sums.0.checked_add(first), sums.1.checked_add(second)) {
            (Some(a), Some(b)) => {
                *sums = (a, b);
                Ok(())
            }
            _ => Err(StoreError::Corrupt("totals past the largest amount".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_reads_back_as_written_in_the_records_layout() {
        let record: SaleRecord = serde_json::from_value(serde_json::json!({
            "transactionId": "t1", "number": "N1", "kind": "sale", "storeId": "s1", "sellerId": "u1",
            "sessionId": "x1", "registerId": "r1", "subtotalCents": 1450, "totalCents": 1350,
            "itemCount": 1, "changeCents": 0, "pointsEarned": 0, "emittedAt": 1,
            "lines": [{"lineId": "l1", "skuId": "MUG", "label": null, "quantity": 1, "unitPriceCents": 1450,
                       "vatRate": 2000, "grossCents": 1450, "promotionCents": -100, "declaredCents": 0,
                       "ticketCents": 0, "netCents": 1350}],
            "tenders": [{"tenderId": "p1", "method": "card", "appliedCents": 1350, "presentedCents": 1350,
                         "changeCents": 0, "forfeitedCents": 0}],
            "vat": [{"vatRate": 2000, "totalCents": 1350, "vatCents": 225}],
            "adjustments": [{"source": "promotion", "sourceId": "pr1", "label": "Mugs", "amountCents": -100}]
        }))
        .expect("a record");
        let text = SaleDetail::write(&record).expect("written");
        let read = SaleDetail::read(&text).expect("read");
        assert_eq!(
            read,
            SaleDetail {
                lines: record.lines.clone(),
                tenders: record.tenders.clone(),
                vat: record.vat.clone(),
                adjustments: record.adjustments.clone(),
            }
        );
        assert!(text.contains(r#""vatRate":2000"#), "{text}");
        assert!(
            SaleDetail::read(r#"{"tenders": [], "vat": [], "adjustments": []}"#).is_err(),
            "a document missing parts is refused"
        );
    }

    #[test]
    fn totals_add_up_per_key_and_refuse_to_wrap() {
        let mut totals = Totals::default();
        totals.add(550, 100, 5).unwrap();
        totals.add(2000, 1200, 200).unwrap();
        totals.add(550, 211, 11).unwrap();
        assert_eq!(
            totals.0.into_iter().collect::<Vec<_>>(),
            [(550, (311, 16)), (2000, (1200, 200))]
        );
        let mut near = Totals::default();
        near.add("cash", i64::MAX, 0).unwrap();
        assert!(near.add("cash", 1, 0).is_err());
    }

    /// `sales` keeps no index of a register's tickets; a closure's and an archive's readers
    /// find them through the journal's key, then each sale by its id, never by a scan of every
    /// register's sales.
    #[tokio::test]
    async fn a_registers_tickets_are_read_through_the_journal_not_a_scan_of_sales() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::migrated_scratch_database(dir.path()).await;
        let indexes: Vec<String> = conn
            .prepare("SELECT name FROM pragma_index_list('sales')")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(!indexes.iter().any(|name| name == "sales_by_ticket"), "{indexes:?}");

        let tickets = Sales::Tickets {
            register_id: "r1",
            after: 0,
            through: 10,
        };
        let journal = crate::snapshot::SaleScope::Tickets {
            register_id: "r1",
            from: 1,
            through: 10,
        };
        for (clause, params) in [
            (tickets.clause(), &["r1", "0", "10"][..]),
            (journal.clause(), &["r1", "1", "10"][..]),
        ] {
            let steps = crate::db::query_plan(&conn, &format!("SELECT s.detail FROM sales s WHERE {clause}"), params);
            assert!(
                !steps.iter().any(|step| step.starts_with("SCAN s")),
                "{clause}: {steps:?}"
            );
            assert!(
                steps
                    .iter()
                    .any(|step| step.contains("sqlite_autoindex_fiscal_entries_1")),
                "{clause}: {steps:?}"
            );
        }
    }
}
