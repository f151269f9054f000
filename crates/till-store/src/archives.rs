//! Fiscal archives of a register's period: built from a reading of the journal, then sealed in
//! the register's archive chain (the SHA-256 of the file) and recorded as a technical event,
//! provided no entry of the period was written in between.

use crate::db::Store;
use crate::error::{Stale, StoreError};
use crate::journal::{self, jet};
use crate::sealer::Sealer;
use crate::snapshot::{Reach, load_journal};
use crate::sql::{Conn, query};
use bytes::Bytes;
use futures::future::BoxFuture;
use jiff::Timestamp;
use jiff::civil::Date;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
pub use till_app::storage::fiscal::{ArchiveRequest, MadeArchive};
use till_core::fiscal::archive::{
    self, ArchiveChain, ArchiveDocument, ArchiveOpening, FORMAT, Sequenced, Software, StoreIdentity,
};
use till_core::fiscal::audit::Journal;
use till_core::fiscal::payload::{self, ArchiveRecord, ClosureRecord, Period};
use till_core::fiscal::{ChainKind, Entry};
use till_core::instant::to_micros;
use till_core::store::Timezone;

/// An archive's file as the bytes of an answer.
struct SharedText(Arc<String>);

impl AsRef<[u8]> for SharedText {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// An archive built from one reading of the journal, not sealed yet.
pub struct ArchiveDraft {
    request: ArchiveRequest,
    now: i64,
    /// The period's end (exclusive), in microseconds.
    end: i64,
    /// The last entry of each of the register's chains when the journal was read (0: none).
    read_through: Vec<(ChainKind, i64)>,
    key: Arc<Sealer>,
    /// Shared with the answer and with the statement that keeps it: SQLite copies it once.
    file: Arc<String>,
    record: ArchiveRecord,
}

/// What an archive of a register's period is cut from.
struct PeriodRead {
    store: Option<StoreIdentity>,
    /// The period's bounds, microseconds, the end excluded.
    start: i64,
    end: i64,
    journal: Journal,
}

/// The register's store and the journal of the period from `from` to `to` (local dates of the
/// store, inclusive); `None` for an unknown register.
async fn read_period(
    conn: &mut Conn,
    register_id: &str,
    from: Date,
    to: Date,
) -> Result<Option<PeriodRead>, StoreError> {
    let register = query(
        "SELECT r.store_id, s.name, s.siret, s.timezone FROM registers r \
         LEFT JOIN stores s ON s.store_id = r.store_id WHERE r.register_id = $1",
    )
    .bind(register_id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(register) = register else { return Ok(None) };
    let timezone: Option<String> = register.try_get("timezone")?;
    let timezone = Timezone::from_trusted(timezone.unwrap_or_else(|| Timezone::DEFAULT.to_owned()));
    let name: Option<String> = register.try_get("name")?;
    let store = name
        .map(|name| -> Result<StoreIdentity, StoreError> {
            Ok(StoreIdentity {
                store_id: register.try_get("store_id")?,
                name,
                siret: register.try_get("siret")?,
                timezone: timezone.as_str().to_owned(),
            })
        })
        .transpose()?;
    let start = local_midnight(from, &timezone)?;
    let end = local_midnight(
        to.tomorrow().map_err(|e| StoreError::Corrupt(e.to_string()))?,
        &timezone,
    )?;
    let journal = load_journal(conn, register_id, Reach::Period { start, end }).await?;
    Ok(Some(PeriodRead {
        store,
        start,
        end,
        journal,
    }))
}

impl Store {
    pub async fn make_archive(
        &self,
        request: ArchiveRequest,
        now: Timestamp,
    ) -> Result<Option<MadeArchive>, StoreError> {
        let mut rereads = 0;
        loop {
            let Some(draft) = self.draft_archive(&request, now).await? else {
                return Ok(None);
            };
            match self.seal_archive(draft).await {
                Err(StoreError::Stale(_)) if rereads < 2 => rereads += 1,
                sealed => return sealed.map(Some),
            }
        }
    }

    /// Reads the register's journal and builds the archive of the period from it; `None` for
    /// an unknown register.
    pub async fn draft_archive(
        &self,
        request: &ArchiveRequest,
        now: Timestamp,
    ) -> Result<Option<ArchiveDraft>, StoreError> {
        let key = self.fiscal_key()?;
        let (register_id, from, to) = (request.register_id.clone(), request.from, request.to);
        let period = self
            .long_read(move |conn| Box::pin(async move { read_period(conn, &register_id, from, to).await }))
            .await?;
        let Some(PeriodRead {
            store,
            start,
            end,
            journal: read,
        }) = period
        else {
            return Ok(None);
        };
        let read_through = ChainKind::ALL
            .into_iter()
            .map(|kind| {
                // The head as read, or an entry of the period written after it: what was read
                // stops at the period's end, and later entries are no news.
                let chain = read.chains.iter().find(|chain| chain.kind == kind);
                let head = chain.and_then(|chain| chain.head).unwrap_or(0);
                let last = chain
                    .and_then(|chain| chain.entries.last())
                    .map_or(0, |entry| entry.seq);
                (kind, head.max(last))
            })
            .collect();
        let (request, now) = (request.clone(), to_micros(now));
        // Seconds of a core for a large register: not on a request thread.
        let built = tokio::task::spawn_blocking(move || -> Result<ArchiveDraft, StoreError> {
            let document = ArchiveDocument {
                format: FORMAT.to_owned(),
                archive_id: request.archive_id.clone(),
                software: Software {
                    name: "till".to_owned(),
                    version: request.software_version.clone(),
                },
                generated_at: now,
                register_id: request.register_id.clone(),
                store,
                period_from: request.from.to_string(),
                period_to: request.to.to_string(),
                ..slice(read, start, end)
            };
            let file = archive::seal(&document, &key)
                .map_err(|e| StoreError::Corrupt(format!("the archive could not be written: {e}")))?;
            let record = ArchiveRecord {
                register_id: request.register_id.clone(),
                archive_id: request.archive_id.clone(),
                period_from: document.period_from.clone(),
                period_to: document.period_to.clone(),
                sha256: archive::file_digest(file.as_bytes()),
                made_at: now,
            };
            Ok(ArchiveDraft {
                request,
                now,
                end,
                read_through,
                key,
                file: Arc::new(file),
                record,
            })
        })
        .await
        .map_err(|_| StoreError::Corrupt("the archive could not be built".into()))??;
        Ok(Some(built))
    }

    /// Seals `draft` in the register's archive chain and keeps the file, unless an entry of
    /// its period was written after the journal was read ([`StoreError::Stale`]: nothing is
    /// written, and a new draft takes the entry in).
    pub async fn seal_archive(&self, draft: ArchiveDraft) -> Result<MadeArchive, StoreError> {
        let archive_id = draft.request.archive_id.clone();
        let sha256 = draft.record.sha256.clone();
        let file = Arc::clone(&draft.file);
        self.write(draft, |c, d| Box::pin(seal(c, d))).await?;
        Ok(MadeArchive {
            archive_id,
            sha256,
            // The writer may still hold the draft: the answer shares the file rather than copy it.
            file: Bytes::from_owner(SharedText(file)),
        })
    }

    pub async fn archive_file(&self, archive_id: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let row = query("SELECT document FROM fiscal_archives WHERE archive_id = $1")
            .bind(archive_id)
            .fetch_optional(self.reader())
            .await?;
        row.map(|row| Ok(row.try_get::<String>("document")?.into_bytes()))
            .transpose()
    }
}

fn seal<'a>(conn: &'a mut Conn, draft: &'a ArchiveDraft) -> BoxFuture<'a, Result<(), StoreError>> {
    Box::pin(async move {
        let (request, record) = (&draft.request, &draft.record);
        let register = request.register_id.as_str();
        // On PostgreSQL, holds the register's chain heads until the commit: an entry written by
        // another node either committed before (and is seen below) or waits for the seal.
        query("UPDATE fiscal_heads SET last_seq = last_seq WHERE register_id = $1")
            .bind(register)
            .execute(&mut *conn)
            .await?;
        for (kind, read_through) in &draft.read_through {
            let newer = query(
                "SELECT seq FROM fiscal_entries WHERE register_id = $1 AND kind = $2 AND seq > $3 \
                     AND created_at < $4 LIMIT 1",
            )
            .bind(register)
            .bind(kind.as_str())
            .bind(*read_through)
            .bind(draft.end)
            .fetch_optional(&mut *conn)
            .await?;
            if newer.is_some() {
                return Err(StoreError::Stale(Stale::ChainGrew {
                    chain: *kind,
                    register_id: register.to_owned(),
                }));
            }
        }
        let sealed = journal::append(
            conn,
            register,
            ChainKind::Archive,
            &request.archive_id,
            draft.now,
            &draft.key,
            |seq, previous| payload::archive(record, seq, previous),
        )
        .await?;
        let sha256 = &record.sha256;
        query(
            "INSERT INTO fiscal_archives (archive_id, register_id, period_from, period_to, sha256, document, \
                 archive_seq, made_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&request.archive_id)
        .bind(register)
        .bind(&record.period_from)
        .bind(&record.period_to)
        .bind(sha256)
        .bind(Arc::clone(&draft.file))
        .bind(sealed.seq)
        .bind(draft.now)
        .execute(&mut *conn)
        .await?;
        let made = jet::archive_made(&request.archive_id, &record.period_from, &record.period_to, sha256);
        journal::append_event(conn, register, made.event, &made.detail, draft.now, &draft.key).await?;
        Ok(())
    })
}

fn local_midnight(day: Date, timezone: &Timezone) -> Result<i64, StoreError> {
    let zoned = day
        .to_zoned(timezone.zone())
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    Ok(to_micros(zoned.timestamp()))
}

/// The part of the journal written in `[start, end)`, with what the audit needs to pick it up:
/// each chain's previous entry, and the closures' opening state. The ticket slice reaches back
/// to the first ticket a closure of the period covers, so that its sums can be checked. The
/// journal's entries and records move into the document: a day of a busy register is a few
/// hundred megabytes of them.
fn slice(journal: Journal, start: i64, end: i64) -> ArchiveDocument {
    let within = |e: &Entry| {
        let at = to_micros(e.created_at);
        at >= start && at < end
    };
    let closures_within: Vec<i64> = journal
        .chains
        .iter()
        .filter(|c| c.kind == ChainKind::Closure)
        .flat_map(|c| c.entries.iter().filter(|e| within(e)).map(|e| e.seq))
        .collect();
    let mut chains = Vec::new();
    let mut ranges = Vec::new();
    for chain in journal.chains {
        let mut range = bounds(chain.entries.iter().filter(|e| within(e)));
        if chain.kind == ChainKind::Ticket {
            for seq in &closures_within {
                if let Some(closure) = journal.closures.get(seq).filter(|c| c.ticket_count > 0) {
                    range = widen(range, closure.first_ticket_seq, closure.last_ticket_seq);
                }
            }
        }
        let Some((low, high)) = range else { continue };
        let previous_signature = chain
            .entries
            .iter()
            .find(|e| e.seq == low - 1)
            .map(|e| e.signature.clone());
        let entries: Vec<Entry> = chain
            .entries
            .into_iter()
            .filter(|e| e.seq >= low && e.seq <= high)
            .collect();
        ranges.push((chain.kind, low, high));
        chains.push(ArchiveChain {
            kind: chain.kind,
            previous_seq: low - 1,
            previous_signature,
            entries,
        });
    }
    let in_slice = |kind: ChainKind, seq: i64| {
        ranges
            .iter()
            .any(|(k, low, high)| *k == kind && seq >= *low && seq <= *high)
    };
    let sealed_refs = |kind: ChainKind| -> HashSet<&str> {
        chains
            .iter()
            .filter(|c| c.kind == kind)
            .flat_map(|c| &c.entries)
            .map(|e| e.reference.as_str())
            .collect()
    };
    let tickets = sealed_refs(ChainKind::Ticket);
    let mut sales: Vec<_> = journal
        .sales
        .into_values()
        .filter(|s| tickets.contains(s.transaction_id.as_str()))
        .collect();
    sales.sort_by(|a, b| a.transaction_id.cmp(&b.transaction_id));
    let shifts = sealed_refs(ChainKind::Closure);
    let mut shift_records: Vec<_> = journal
        .shifts
        .into_values()
        .filter(|s| shifts.contains(s.session_id.as_str()))
        .collect();
    shift_records.sort_by(|a, b| a.session_id.cmp(&b.session_id));
    let closures = collect(&journal.closures, |seq| in_slice(ChainKind::Closure, seq));
    let opening = opening(&journal.closures, closures.first().map(|c| c.seq));
    ArchiveDocument {
        opening,
        sales,
        shifts: shift_records,
        closures,
        events: collect(&journal.events, |seq| in_slice(ChainKind::Event, seq)),
        duplicates: collect(&journal.duplicates, |seq| in_slice(ChainKind::Duplicate, seq)),
        archives: collect(&journal.archives, |seq| in_slice(ChainKind::Archive, seq)),
        keys: {
            let mut keys: Vec<_> = journal.keys.into_values().collect();
            keys.sort_by(|a, b| a["kid"].as_str().cmp(&b["kid"].as_str()));
            keys
        },
        chains,
        ..ArchiveDocument::default()
    }
}

fn collect<T: Clone>(records: &HashMap<i64, T>, keep: impl Fn(i64) -> bool) -> Vec<Sequenced<T>> {
    let mut found: Vec<_> = records
        .iter()
        .filter(|(seq, _)| keep(**seq))
        .map(|(seq, record)| Sequenced {
            seq: *seq,
            record: record.clone(),
        })
        .collect();
    found.sort_by_key(|r| r.seq);
    found
}

fn bounds<'a>(mut entries: impl Iterator<Item = &'a Entry>) -> Option<(i64, i64)> {
    let first = entries.next()?;
    Some(entries.fold((first.seq, first.seq), |(low, high), e| {
        (low.min(e.seq), high.max(e.seq))
    }))
}

fn widen(range: Option<(i64, i64)>, low: i64, high: i64) -> Option<(i64, i64)> {
    Some(match range {
        Some((a, b)) => (a.min(low), b.max(high)),
        None => (low, high),
    })
}

/// The grand totals and last closed ticket before the closure `first` (the whole journal's
/// start when there is none before it).
fn opening(closures: &HashMap<i64, ClosureRecord>, first: Option<i64>) -> ArchiveOpening {
    let Some(first) = first else {
        return ArchiveOpening::default();
    };
    let mut before: Vec<(&i64, &ClosureRecord)> = closures
        .iter()
        .filter(|(seq, c)| **seq < first && c.period == Period::Day)
        .collect();
    before.sort_by_key(|(seq, _)| **seq);
    ArchiveOpening {
        grand_total_cents: before.last().map_or(0, |(_, c)| c.grand_total_cents),
        grand_total_abs_cents: before.last().map_or(0, |(_, c)| c.grand_total_abs_cents),
        last_ticket_seq: before
            .iter()
            .rev()
            .find(|(_, c)| c.ticket_count > 0)
            .map_or(0, |(_, c)| c.last_ticket_seq),
    }
}
