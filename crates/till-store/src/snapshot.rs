//! A register's journal with every record its entries seal, read back from the database in the
//! form the audit rebuilds signed strings from.
//!
//! Heads are read first, entries next, records last: a write landing meanwhile can only add
//! records nobody points to, never make a chain look shorter than its head.

use crate::closures::closure_from_row;
use crate::db::Store;
use crate::error::StoreError;
use crate::reports::shift_record;
use crate::sale_row;
use crate::sessions::find_session;
use crate::sql::{Conn, Query, Row, query};
use std::collections::HashMap;
use till_core::fiscal::audit::{Chain, Journal};
use till_core::fiscal::payload::{ArchiveRecord, DuplicateRecord, EventRecord, SaleRecord};
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

    pub async fn load_journal(&self, register_id: &str) -> Result<Journal, StoreError> {
        let register_id = register_id.to_owned();
        self.long_read(move |conn| Box::pin(async move { load_journal(conn, &register_id, Reach::Whole).await }))
            .await
    }
}

/// How much of a register's journal to read.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Reach {
    /// All of it, for an audit.
    Whole,
    /// What an archive of the entries written in `[start, end)` (microseconds) is cut from:
    /// in each chain those entries, widened in the ticket chain to the tickets the period's
    /// closures cover, and the entry before them; the records they seal; every closure, from
    /// which the period's opening totals are found. A month of a register with years behind
    /// it reads a month.
    Period { start: i64, end: i64 },
}

/// The sequences read from a chain, inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    from: i64,
    through: i64,
}

impl Span {
    const ALL: Span = Span {
        from: 0,
        through: i64::MAX,
    };
}

pub(crate) async fn load_journal(conn: &mut Conn, register_id: &str, reach: Reach) -> Result<Journal, StoreError> {
    let heads: HashMap<String, i64> = query("SELECT kind, last_seq FROM fiscal_heads WHERE register_id = $1")
        .bind(register_id)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|row| Ok((row.try_get("kind")?, row.try_get("last_seq")?)))
        .collect::<Result<_, StoreError>>()?;
    let closure_rows = query(format!(
        "SELECT {} FROM fiscal_closures WHERE register_id = $1",
        crate::closures::COLUMNS
    ))
    .bind(register_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut closures = HashMap::with_capacity(closure_rows.len());
    for row in &closure_rows {
        closures.insert(row.try_get("closure_seq")?, closure_from_row(row)?);
    }
    let mut spans = HashMap::new();
    for kind in ChainKind::ALL {
        let span = match reach {
            Reach::Whole => Some(Span::ALL),
            Reach::Period { start, end } => written_within(conn, register_id, kind, start, end).await?,
        };
        spans.insert(kind, span);
    }
    if let Reach::Period { .. } = reach
        && let Some(Some(within)) = spans.get(&ChainKind::Closure).copied()
    {
        // The tickets the period's closures cover, which the archive carries to check their sums.
        let tickets = spans.entry(ChainKind::Ticket).or_default();
        for (seq, closure) in &closures {
            if (within.from..=within.through).contains(seq) && closure.ticket_count > 0 {
                let span = tickets.get_or_insert(Span {
                    from: closure.first_ticket_seq,
                    through: closure.last_ticket_seq,
                });
                span.from = span.from.min(closure.first_ticket_seq);
                span.through = span.through.max(closure.last_ticket_seq);
            }
        }
    }
    let span = |kind: ChainKind| spans.get(&kind).copied().flatten();
    let mut chains = Vec::new();
    for kind in ChainKind::ALL {
        let entries = match span(kind) {
            // From the entry before the first one, which anchors a slice of the chain.
            Some(Span { from, through }) => {
                entries_between(conn, register_id, kind, from.saturating_sub(1), through).await?
            }
            None => Vec::new(),
        };
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
        closures,
        keys,
        whole: matches!(reach, Reach::Whole),
        ..Journal::default()
    };
    if let Some(Span { from, through }) = span(ChainKind::Ticket) {
        // The sales of the tickets read, a slice of the chain per statement: a register's whole
        // chain in one outlasted the statement timeout on a busy server.
        let read: Vec<i64> = journal
            .chains
            .iter()
            .filter(|chain| chain.kind == ChainKind::Ticket)
            .flat_map(|chain| chain.entries.iter().map(|entry| entry.seq))
            .collect();
        for slice in read.chunks(ENTRIES_PER_READ as usize) {
            let (Some(first), Some(last)) = (slice.first(), slice.last()) else {
                continue;
            };
            let scope = SaleScope::Tickets {
                register_id,
                from: (*first).max(from),
                through: (*last).min(through),
            };
            journal.sales.extend(sale_records(conn, scope).await?);
        }
    }
    let Span { from, through } = span(ChainKind::Closure).unwrap_or(Span { from: 1, through: 0 });
    let sessions = query(
        "SELECT session_id, opened_at, closed_at FROM register_sessions WHERE register_id = $1 \
         AND closure_seq >= $2 AND closure_seq <= $3",
    )
    .bind(register_id)
    .bind(from)
    .bind(through)
    .fetch_all(&mut *conn)
    .await?;
    for row in &sessions {
        let session_id: String = row.try_get("session_id")?;
        let closed_at: i64 = row.try_get("closed_at")?;
        let session = find_session(conn, &session_id)
            .await?
            .ok_or(StoreError::NotFound("register session"))?;
        match shift_record(conn, &session, closed_at).await {
            Ok(record) => {
                journal.shifts.insert(session_id, record);
            }
            // A sale of the shift that no longer reads is an altered ticket, which the audit
            // finds on the ticket's own entry; the shift's closure then has no record to be
            // rebuilt from, which the audit also reports rather than an error stopping it.
            Err(StoreError::Corrupt(_)) => {}
            Err(other) => return Err(other),
        }
    }
    let events = "SELECT seq, code, label, detail, occurred_at FROM technical_events \
         WHERE register_id = $1 AND seq >= $2 AND seq <= $3";
    each_sealed(conn, events, register_id, span(ChainKind::Event), |row| {
        let record = EventRecord {
            register_id: register_id.to_owned(),
            code: row.try_get("code")?,
            label: row.try_get("label")?,
            detail: row.try_get("detail")?,
            occurred_at: row.try_get("occurred_at")?,
        };
        journal.events.insert(row.try_get("seq")?, record);
        Ok(())
    })
    .await?;
    let reprints = "SELECT p.duplicate_seq, p.transaction_id, p.print_no, p.operator, p.printed_at, s.kind, \
             s.fiscal_seq FROM receipt_prints p JOIN sales s ON s.transaction_id = p.transaction_id \
         WHERE p.register_id = $1 AND p.duplicate_seq >= $2 AND p.duplicate_seq <= $3";
    each_sealed(conn, reprints, register_id, span(ChainKind::Duplicate), |row| {
        let record = duplicate_from_row(&row, register_id)?;
        journal.duplicates.insert(row.try_get("duplicate_seq")?, record);
        Ok(())
    })
    .await?;
    let archives = "SELECT archive_seq, archive_id, period_from, period_to, sha256, made_at FROM fiscal_archives \
         WHERE register_id = $1 AND archive_seq >= $2 AND archive_seq <= $3";
    each_sealed(conn, archives, register_id, span(ChainKind::Archive), |row| {
        let record = archive_from_row(&row, register_id)?;
        journal.archives.insert(row.try_get("archive_seq")?, record);
        Ok(())
    })
    .await?;
    Ok(journal)
}

/// Hands `each` the rows `sql` answers for the records a register sealed in `span` of one
/// chain (`$1` the register, `$2` and `$3` the span's ends); none when nothing is read of it.
async fn each_sealed(
    conn: &mut Conn,
    sql: &'static str,
    register_id: &str,
    span: Option<Span>,
    each: impl FnMut(Row) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let Some(Span { from, through }) = span else {
        return Ok(());
    };
    query(sql)
        .bind(register_id)
        .bind(from)
        .bind(through)
        .for_each(conn, each)
        .await
}

/// The first and last sequences of a chain's entries written in `[start, end)`.
async fn written_within(
    conn: &mut Conn,
    register_id: &str,
    kind: ChainKind,
    start: i64,
    end: i64,
) -> Result<Option<Span>, StoreError> {
    let row = query(
        "SELECT MIN(seq) AS first, MAX(seq) AS last FROM fiscal_entries \
         WHERE register_id = $1 AND kind = $2 AND created_at >= $3 AND created_at < $4",
    )
    .bind(register_id)
    .bind(kind.as_str())
    .bind(start)
    .bind(end)
    .fetch_one(&mut *conn)
    .await?;
    let first: Option<i64> = row.try_get("first")?;
    let last: Option<i64> = row.try_get("last")?;
    Ok(first.zip(last).map(|(from, through)| Span { from, through }))
}

pub(crate) fn duplicate_from_row(row: &Row, register_id: &str) -> Result<DuplicateRecord, StoreError> {
    let kind: String = row.try_get("kind")?;
    let print_no: i64 = row.try_get("print_no")?;
    Ok(DuplicateRecord {
        register_id: register_id.to_owned(),
        transaction_id: row.try_get("transaction_id")?,
        original_type: kind.to_uppercase(),
        original_seq: row.try_get("fiscal_seq")?,
        // The first print is the original; a damaged number must not overflow the audit.
        reprint: print_no.saturating_sub(1),
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
    entries_between(conn, register_id, kind, Span::ALL.from, Span::ALL.through).await
}

/// Entries per statement when a chain is read: a chain grows with every ticket, and no
/// statement may outlast a deployment's statement timeout however long it gets.
const ENTRIES_PER_READ: i64 = 500;

/// The entries of one chain from sequence `from` through `through`, in sequence order, read
/// page by page.
async fn entries_between(
    conn: &mut Conn,
    register_id: &str,
    kind: ChainKind,
    from: i64,
    through: i64,
) -> Result<Vec<Entry>, StoreError> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut next = from;
    loop {
        let before = entries.len();
        query(
            "SELECT register_id, kind, seq, payload, signature, previous_signature, key_id, algorithm, reference, created_at \
             FROM fiscal_entries WHERE register_id = $1 AND kind = $2 AND seq >= $3 AND seq <= $4 ORDER BY seq LIMIT $5",
        )
        .bind(register_id)
        .bind(kind.as_str())
        .bind(next)
        .bind(through)
        .bind(ENTRIES_PER_READ)
        .for_each(&mut *conn, |row| {
            let kind: String = row.try_get("kind")?;
            entries.push(Entry {
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
            });
            Ok(())
        })
        .await?;
        let read = entries.len() - before;
        match entries.last() {
            Some(last) if read as i64 == ENTRIES_PER_READ && last.seq < through => next = last.seq + 1,
            _ => return Ok(entries),
        }
    }
}

/// Which sales to read.
#[derive(Clone, Copy)]
pub(crate) enum SaleScope<'a> {
    /// A register's tickets sealed at sequences `from` through `through`, found through its
    /// journal, as a closure finds its tickets.
    Tickets {
        register_id: &'a str,
        from: i64,
        through: i64,
    },
    Transaction(&'a str),
}

impl SaleScope<'_> {
    /// The sales' filter, on `sales s`; its parameters are bound by [`SaleScope::bind`].
    pub(crate) fn clause(self) -> &'static str {
        match self {
            SaleScope::Tickets { .. } => {
                "s.transaction_id IN (SELECT e.reference FROM fiscal_entries e \
                     WHERE e.register_id = $1 AND e.kind = 'ticket' AND e.seq >= $2 AND e.seq <= $3) \
                 AND s.register_id = $1"
            }
            SaleScope::Transaction(_) => "s.transaction_id = $1",
        }
    }

    fn bind(self, query: Query) -> Query {
        match self {
            SaleScope::Tickets {
                register_id,
                from,
                through,
            } => query.bind(register_id).bind(from).bind(through),
            SaleScope::Transaction(transaction_id) => query.bind(transaction_id),
        }
    }
}

/// The sealed records of the sales in `scope`.
pub(crate) async fn sale_records(
    conn: &mut Conn,
    scope: SaleScope<'_>,
) -> Result<HashMap<String, SaleRecord>, StoreError> {
    let mut sales: HashMap<String, SaleRecord> = HashMap::new();
    scope
        .bind(query(format!(
            "SELECT {} FROM sales s WHERE {} AND s.fiscal_seq > 0",
            sale_row::RECORD,
            scope.clause()
        )))
        .for_each(conn, |row| {
            let record = sale_row::record(&row)?;
            sales.insert(record.transaction_id.clone(), record);
            Ok(())
        })
        .await?;
    Ok(sales)
}
