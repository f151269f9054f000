//! A register's journal with every record its entries seal, read back from the database in the
//! form the audit rebuilds signed strings from.
//!
//! Heads are read first, entries next, records last: a write landing meanwhile can only add
//! records nobody points to, never make a chain look shorter than its head.

use crate::closures::closure_from_row;
use crate::db::Store;
use crate::error::StoreError;
use crate::packed;
use crate::reports::shift_record;
use crate::sale_detail::{SaleDetail, line_of_row};
use crate::sql::{Conn, Row, query};
use std::collections::{HashMap, HashSet};
use till_core::fiscal::audit::{Chain, Journal};
use till_core::fiscal::payload::{
    ArchiveRecord, DuplicateRecord, EventRecord, OriginalTicket, SaleRecord, SaleRecordAdjustment, SaleRecordTender,
    SaleRecordVat,
};
use till_core::fiscal::{ChainKind, Entry};
use till_core::instant::from_micros;

impl Store {
    /// Every register that has a journal.
    pub async fn journal_registers(&self) -> Result<Vec<String>, StoreError> {
        let rows = query("SELECT DISTINCT register_id FROM fiscal_heads ORDER BY register_id")
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(|row| row.try_get("register_id")).collect()
    }

    /// The whole journal of `register_id`, ready for the audit.
    pub async fn load_journal(&self, register_id: &str) -> Result<Journal, StoreError> {
        let mut conn = self.reader().acquire().await?;
        load_journal(&mut conn, register_id).await
    }
}

pub(crate) async fn load_journal(conn: &mut Conn, register_id: &str) -> Result<Journal, StoreError> {
    let heads: HashMap<String, i64> = query("SELECT kind, last_seq FROM fiscal_heads WHERE register_id = $1")
        .bind(register_id)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|row| Ok((row.try_get("kind")?, row.try_get("last_seq")?)))
        .collect::<Result<_, StoreError>>()?;
    let mut chains = Vec::new();
    for kind in ChainKind::ALL {
        let entries = entries(conn, register_id, kind).await?;
        let head = heads.get(kind.as_str()).copied();
        if !entries.is_empty() || head.is_some() {
            chains.push(Chain {
                kind,
                anchor: None,
                entries,
                head,
            });
        }
    }
    let keys = query("SELECT key_id, public_jwk FROM fiscal_keys")
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|row| {
            let jwk: String = row.try_get("public_jwk")?;
            let jwk = serde_json::from_str(&jwk).map_err(|_| StoreError::Corrupt("public key is not JSON".into()))?;
            Ok((row.try_get("key_id")?, jwk))
        })
        .collect::<Result<_, StoreError>>()?;
    let mut journal = Journal {
        register_id: register_id.to_owned(),
        chains,
        keys,
        whole: true,
        ..Journal::default()
    };
    journal.sales = sale_records(conn, SaleScope::Register, register_id).await?;
    let sessions = query(
        "SELECT session_id, opened_at, closed_at FROM register_sessions WHERE register_id = $1 AND closure_seq IS NOT NULL",
    )
    .bind(register_id)
    .fetch_all(&mut *conn)
    .await?;
    for row in &sessions {
        let session_id: String = row.try_get("session_id")?;
        let closed_at: i64 = row.try_get("closed_at")?;
        let record = shift_record(conn, &session_id, register_id, row.try_get("opened_at")?, closed_at).await?;
        journal.shifts.insert(session_id, record);
    }
    let closures = query(
        "SELECT closure_seq, register_id, period, period_from, period_to, ticket_count, first_ticket_seq, \
             last_ticket_seq, last_ticket_signature, total_cents, abs_total_cents, grand_total_cents, \
             grand_total_abs_cents, vat, closed_at FROM fiscal_closures WHERE register_id = $1",
    )
    .bind(register_id)
    .fetch_all(&mut *conn)
    .await?;
    for row in &closures {
        journal
            .closures
            .insert(row.try_get("closure_seq")?, closure_from_row(row)?);
    }
    let events = query("SELECT seq, code, label, detail, occurred_at FROM technical_events WHERE register_id = $1")
        .bind(register_id)
        .fetch_all(&mut *conn)
        .await?;
    for row in &events {
        journal.events.insert(
            row.try_get("seq")?,
            EventRecord {
                register_id: register_id.to_owned(),
                code: row.try_get("code")?,
                label: row.try_get("label")?,
                detail: row.try_get("detail")?,
                occurred_at: row.try_get("occurred_at")?,
            },
        );
    }
    let reprints = query(
        "SELECT p.duplicate_seq, p.transaction_id, p.print_no, p.operator, p.printed_at, s.kind, s.fiscal_seq \
         FROM receipt_prints p JOIN sales s ON s.transaction_id = p.transaction_id \
         WHERE p.register_id = $1 AND p.duplicate_seq IS NOT NULL",
    )
    .bind(register_id)
    .fetch_all(&mut *conn)
    .await?;
    for row in &reprints {
        journal
            .duplicates
            .insert(row.try_get("duplicate_seq")?, duplicate_from_row(row, register_id)?);
    }
    let archives = query(
        "SELECT archive_seq, archive_id, period_from, period_to, sha256, made_at FROM fiscal_archives WHERE register_id = $1",
    )
    .bind(register_id)
    .fetch_all(&mut *conn)
    .await?;
    for row in &archives {
        journal
            .archives
            .insert(row.try_get("archive_seq")?, archive_from_row(row, register_id)?);
    }
    Ok(journal)
}

pub(crate) fn duplicate_from_row(row: &Row, register_id: &str) -> Result<DuplicateRecord, StoreError> {
    let kind: String = row.try_get("kind")?;
    let print_no: i64 = row.try_get("print_no")?;
    Ok(DuplicateRecord {
        register_id: register_id.to_owned(),
        transaction_id: row.try_get("transaction_id")?,
        original_type: kind.to_uppercase(),
        original_seq: row.try_get("fiscal_seq")?,
        reprint: print_no - 1,
        operator: row.try_get("operator")?,
        printed_at: row.try_get("printed_at")?,
    })
}

pub(crate) fn archive_from_row(row: &Row, register_id: &str) -> Result<ArchiveRecord, StoreError> {
    Ok(ArchiveRecord {
        register_id: register_id.to_owned(),
        archive_id: row.try_get("archive_id")?,
        period_from: row.try_get("period_from")?,
        period_to: row.try_get("period_to")?,
        sha256: row.try_get("sha256")?,
        made_at: row.try_get("made_at")?,
    })
}

/// The entries of one chain in sequence order.
pub(crate) async fn entries(conn: &mut Conn, register_id: &str, kind: ChainKind) -> Result<Vec<Entry>, StoreError> {
    let rows = query(
        "SELECT register_id, kind, seq, payload, signature, previous_signature, key_id, algorithm, reference, created_at \
         FROM fiscal_entries WHERE register_id = $1 AND kind = $2 ORDER BY seq",
    )
    .bind(register_id)
    .bind(kind.as_str())
    .fetch_all(&mut *conn)
    .await?;
    rows.iter()
        .map(|row| {
            let kind: String = row.try_get("kind")?;
            Ok(Entry {
                register_id: row.try_get("register_id")?,
                kind: ChainKind::parse(&kind).ok_or_else(|| StoreError::Corrupt(format!("chain kind {kind}")))?,
                seq: row.try_get("seq")?,
                payload: row.try_get("payload")?,
                signature: row.try_get("signature")?,
                previous_signature: row.try_get("previous_signature")?,
                key_id: row.try_get("key_id")?,
                algorithm: row.try_get("algorithm")?,
                reference: row.try_get("reference")?,
                created_at: from_micros(row.try_get("created_at")?),
            })
        })
        .collect()
}

/// Which sales to read.
#[derive(Clone, Copy)]
pub(crate) enum SaleScope {
    Register,
    Transaction,
}

impl SaleScope {
    pub(crate) fn clause(self) -> &'static str {
        match self {
            // Through the register's journal, as a closure finds its tickets.
            SaleScope::Register => {
                "s.transaction_id IN (SELECT e.reference FROM fiscal_entries e \
                     WHERE e.register_id = $1 AND e.kind = 'ticket') AND s.register_id = $1"
            }
            SaleScope::Transaction => "s.transaction_id = $1",
        }
    }
}

/// A query over one of a sale's child tables, for the sales in `scope`.
fn children(columns: &str, table: &str, order: &str, scope: SaleScope) -> String {
    // Every fragment is a constant of this module: nothing from outside reaches the SQL text.
    format!(
        "SELECT {columns} FROM {table} x JOIN sales s ON s.transaction_id = x.transaction_id \
         WHERE {} AND s.fiscal_seq > 0 ORDER BY {order}",
        scope.clause()
    )
}

/// The sealed records of the sales in `scope` (`key` is the register or transaction id).
pub(crate) async fn sale_records(
    conn: &mut Conn,
    scope: SaleScope,
    key: &str,
) -> Result<HashMap<String, SaleRecord>, StoreError> {
    let rows = query(format!(
        "SELECT transaction_id, number, kind, store_id, seller_id, customer_id, session_id, register_id, \
             subtotal_cents, total_cents, item_count, change_cents, points_earned, coupon_code, issued_at, emitted_at, \
             original_transaction_id, original_register_id, original_seq, detail, packed \
         FROM sales s WHERE {} AND s.fiscal_seq > 0",
        scope.clause()
    ))
    .bind(key)
    .fetch_all(&mut *conn)
    .await?;
    let mut sales: HashMap<String, SaleRecord> = HashMap::with_capacity(rows.len());
    // Sales whose document holds no lines (written before migration 0011) keep them as rows.
    let mut in_sale_lines = HashSet::new();
    for row in &rows {
        let original_id: Option<String> = row.try_get("original_transaction_id")?;
        let original = match original_id {
            Some(transaction_id) => Some(OriginalTicket {
                transaction_id,
                register_id: row
                    .try_get::<Option<String>>("original_register_id")?
                    .unwrap_or_default(),
                seq: row.try_get::<Option<i64>>("original_seq")?.unwrap_or_default(),
            }),
            None => None,
        };
        // A document that does not read leaves its parts empty: the audit then finds the
        // record altered, which it is.
        let detail = match packed::detail_of(row).ok().flatten() {
            Some(text) => SaleDetail::read(&text).ok(),
            None => None,
        };
        let (lines, tenders, vat, adjustments) = match detail {
            Some(detail) => (detail.lines, detail.tenders, detail.vat, detail.adjustments),
            None => Default::default(),
        };
        if lines.is_none() {
            in_sale_lines.insert(row.try_get::<String>("transaction_id")?);
        }
        let record = SaleRecord {
            transaction_id: row.try_get("transaction_id")?,
            number: row.try_get("number")?,
            kind: row.try_get("kind")?,
            store_id: row.try_get("store_id")?,
            seller_id: row.try_get("seller_id")?,
            customer_id: row.try_get("customer_id")?,
            session_id: row.try_get("session_id")?,
            register_id: row.try_get("register_id")?,
            subtotal_cents: row.try_get("subtotal_cents")?,
            total_cents: row.try_get("total_cents")?,
            item_count: row.try_get("item_count")?,
            change_cents: row.try_get("change_cents")?,
            points_earned: row.try_get("points_earned")?,
            coupon_code: row.try_get("coupon_code")?,
            issued_at: row.try_get("issued_at")?,
            emitted_at: row.try_get("emitted_at")?,
            lines: lines.unwrap_or_default(),
            tenders,
            vat,
            adjustments,
            original,
        };
        sales.insert(record.transaction_id.clone(), record);
    }
    if !in_sale_lines.is_empty() {
        let lines = query(children(
            "x.transaction_id, x.line_id, x.sku_id, x.label, x.quantity, x.unit_price_cents, x.vat_rate, \
             x.gross_cents, x.promotion_cents, x.declared_cents, x.ticket_cents, x.net_cents",
            "sale_lines",
            "x.transaction_id, x.line_no",
            scope,
        ))
        .bind(key)
        .fetch_all(&mut *conn)
        .await?;
        for row in &lines {
            let id: String = row.try_get("transaction_id")?;
            if !in_sale_lines.contains(&id) {
                continue;
            }
            if let Some(sale) = sales.get_mut(&id) {
                sale.lines.push(line_of_row(row)?);
            }
        }
    }
    // Sales written before migration 0010 keep these three in their own tables.
    let tenders = query(children(
        "x.transaction_id, x.tender_id, x.method, x.applied_cents, x.presented_cents, x.change_cents, x.forfeited_cents",
        "sale_tenders",
        "x.transaction_id, x.tender_no",
        scope,
    ))
    .bind(key)
    .fetch_all(&mut *conn)
    .await?;
    for row in &tenders {
        let id: String = row.try_get("transaction_id")?;
        if let Some(sale) = sales.get_mut(&id) {
            sale.tenders.push(SaleRecordTender {
                tender_id: row.try_get("tender_id")?,
                method: row.try_get("method")?,
                applied_cents: row.try_get("applied_cents")?,
                presented_cents: row.try_get("presented_cents")?,
                change_cents: row.try_get("change_cents")?,
                forfeited_cents: row.try_get("forfeited_cents")?,
            });
        }
    }
    let vat = query(children(
        "x.transaction_id, x.vat_rate, x.total_cents, x.vat_cents",
        "sale_vat",
        "x.transaction_id, x.vat_rate DESC",
        scope,
    ))
    .bind(key)
    .fetch_all(&mut *conn)
    .await?;
    for row in &vat {
        let id: String = row.try_get("transaction_id")?;
        if let Some(sale) = sales.get_mut(&id) {
            sale.vat.push(SaleRecordVat {
                vat_rate: row.try_get("vat_rate")?,
                total_cents: row.try_get("total_cents")?,
                vat_cents: row.try_get("vat_cents")?,
            });
        }
    }
    let adjustments = query(children(
        "x.transaction_id, x.source, x.source_id, x.label, x.amount_cents",
        "sale_adjustments",
        "x.transaction_id, x.adjustment_no",
        scope,
    ))
    .bind(key)
    .fetch_all(&mut *conn)
    .await?;
    for row in &adjustments {
        let id: String = row.try_get("transaction_id")?;
        if let Some(sale) = sales.get_mut(&id) {
            sale.adjustments.push(SaleRecordAdjustment {
                source: row.try_get("source")?,
                source_id: row.try_get("source_id")?,
                label: row.try_get("label")?,
                amount_cents: row.try_get("amount_cents")?,
            });
        }
    }
    Ok(sales)
}
