//! Fiscal archives of a register's period: built from the journal in one transaction, sealed
//! in the register's archive chain (the SHA-256 of the file) and recorded as a technical event.

use crate::db::Store;
use crate::error::StoreError;
use crate::journal::{self, jet};
use crate::sealer::Sealer;
use crate::snapshot::load_journal;
use crate::sql::{Conn, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use jiff::civil::Date;
use std::collections::HashSet;
use std::sync::Arc;
use till_core::fiscal::archive::{
    self, ArchiveChain, ArchiveDocument, ArchiveOpening, FORMAT, Sequenced, Software, StoreIdentity,
};
use till_core::fiscal::audit::Journal;
use till_core::fiscal::payload::{self, ArchiveRecord, Period};
use till_core::fiscal::{ChainKind, Entry};
use till_core::instant::to_micros;
use till_core::store::Timezone;

/// What to archive.
#[derive(Clone, Debug)]
pub struct ArchiveRequest {
    pub archive_id: String,
    pub register_id: String,
    /// Local dates of the store, inclusive.
    pub from: Date,
    pub to: Date,
    pub software_version: String,
}

/// An archive made: its id and the file.
#[derive(Clone, Debug)]
pub struct MadeArchive {
    pub archive_id: String,
    pub sha256: String,
    pub file: Vec<u8>,
}

struct Make {
    request: ArchiveRequest,
    now: i64,
    key: Arc<Sealer>,
}

impl Store {
    /// Builds and seals the archive of the register's period; `None` for an unknown register.
    pub async fn make_archive(
        &self,
        request: ArchiveRequest,
        now: Timestamp,
    ) -> Result<Option<MadeArchive>, StoreError> {
        let input = Make {
            request,
            now: to_micros(now),
            key: self.fiscal_key()?,
        };
        self.write(input, |c, i| Box::pin(make(c, i))).await
    }

    /// An archive made earlier, byte for byte.
    pub async fn archive_file(&self, archive_id: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let row = query("SELECT document FROM fiscal_archives WHERE archive_id = $1")
            .bind(archive_id)
            .fetch_optional(self.reader())
            .await?;
        row.map(|row| Ok(row.try_get::<String>("document")?.into_bytes()))
            .transpose()
    }
}

fn make<'a>(conn: &'a mut Conn, input: &'a Make) -> BoxFuture<'a, Result<Option<MadeArchive>, StoreError>> {
    Box::pin(async move {
        let request = &input.request;
        let register = query(
            "SELECT r.store_id, s.name, s.siret, s.timezone FROM registers r \
             LEFT JOIN stores s ON s.store_id = r.store_id WHERE r.register_id = $1",
        )
        .bind(&request.register_id)
        .fetch_optional(&mut *conn)
        .await?;
        let Some(register) = register else { return Ok(None) };
        let timezone: Option<String> = register.try_get("timezone")?;
        let timezone = Timezone::from_trusted(timezone.clone().unwrap_or_else(|| Timezone::DEFAULT.to_owned()));
        let name: Option<String> = register.try_get("name")?;
        let store = name.map(|name| -> Result<StoreIdentity, StoreError> {
            Ok(StoreIdentity {
                store_id: register.try_get("store_id")?,
                name,
                siret: register.try_get("siret")?,
                timezone: timezone.as_str().to_owned(),
            })
        });
        let start = local_midnight(request.from, &timezone)?;
        let end = local_midnight(
            request.to.tomorrow().map_err(|e| StoreError::Corrupt(e.to_string()))?,
            &timezone,
        )?;
        let whole = load_journal(conn, &request.register_id).await?;
        let document = ArchiveDocument {
            format: FORMAT.to_owned(),
            archive_id: request.archive_id.clone(),
            software: Software {
                name: "till".to_owned(),
                version: request.software_version.clone(),
            },
            generated_at: input.now,
            register_id: request.register_id.clone(),
            store: store.transpose()?,
            period_from: request.from.to_string(),
            period_to: request.to.to_string(),
            ..slice(&whole, start, end)
        };
        let file = archive::seal(&document, &input.key);
        let sha256 = archive::file_digest(&file);
        let record = ArchiveRecord {
            register_id: request.register_id.clone(),
            archive_id: request.archive_id.clone(),
            period_from: document.period_from.clone(),
            period_to: document.period_to.clone(),
            sha256: sha256.clone(),
            made_at: input.now,
        };
        let sealed = journal::append(
            conn,
            &request.register_id,
            ChainKind::Archive,
            &request.archive_id,
            input.now,
            &input.key,
            |seq, previous| payload::archive(&record, seq, previous),
        )
        .await?;
        query(
            "INSERT INTO fiscal_archives (archive_id, register_id, period_from, period_to, sha256, document, \
                 archive_seq, made_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&request.archive_id)
        .bind(&request.register_id)
        .bind(&record.period_from)
        .bind(&record.period_to)
        .bind(&sha256)
        .bind(String::from_utf8(file.clone()).map_err(|_| StoreError::Corrupt("archive is not UTF-8".into()))?)
        .bind(sealed.seq)
        .bind(input.now)
        .execute(&mut *conn)
        .await?;
        let detail = format!(
            "{} {}..{} sha256 {sha256}",
            request.archive_id, record.period_from, record.period_to
        );
        journal::append_event(
            conn,
            &request.register_id,
            jet::ARCHIVE_MADE,
            &detail,
            input.now,
            &input.key,
        )
        .await?;
        Ok(Some(MadeArchive {
            archive_id: request.archive_id.clone(),
            sha256,
            file,
        }))
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
/// to the first ticket a closure of the period covers, so that its sums can be checked.
fn slice(journal: &Journal, start: i64, end: i64) -> ArchiveDocument {
    let within = |e: &&Entry| {
        let at = to_micros(e.created_at);
        at >= start && at < end
    };
    let mut chains = Vec::new();
    let mut ranges = Vec::new();
    for chain in &journal.chains {
        let mut range = bounds(chain.entries.iter().filter(within));
        if chain.kind == ChainKind::Ticket
            && let Some(closures) = journal.chains.iter().find(|c| c.kind == ChainKind::Closure)
        {
            for entry in closures.entries.iter().filter(within) {
                if let Some(closure) = journal.closures.get(&entry.seq).filter(|c| c.ticket_count > 0) {
                    range = widen(range, closure.first_ticket_seq, closure.last_ticket_seq);
                }
            }
        }
        let Some((low, high)) = range else { continue };
        let entries: Vec<Entry> = chain
            .entries
            .iter()
            .filter(|e| e.seq >= low && e.seq <= high)
            .cloned()
            .collect();
        let previous = chain.entries.iter().find(|e| e.seq == low - 1);
        ranges.push((chain.kind, low, high));
        chains.push(ArchiveChain {
            kind: chain.kind,
            previous_seq: low - 1,
            previous_signature: previous.map(|e| e.signature.clone()),
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
    let shifts = sealed_refs(ChainKind::Closure);
    let mut sales: Vec<_> = journal
        .sales
        .values()
        .filter(|s| tickets.contains(s.transaction_id.as_str()))
        .cloned()
        .collect();
    sales.sort_by(|a, b| a.transaction_id.cmp(&b.transaction_id));
    let mut shift_records: Vec<_> = journal
        .shifts
        .values()
        .filter(|s| shifts.contains(s.session_id.as_str()))
        .cloned()
        .collect();
    shift_records.sort_by(|a, b| a.session_id.cmp(&b.session_id));
    let sequenced = |kind: ChainKind, seq: i64| in_slice(kind, seq);
    let mut closures: Vec<_> = journal
        .closures
        .iter()
        .filter(|(seq, _)| sequenced(ChainKind::Closure, **seq))
        .map(|(seq, record)| Sequenced {
            seq: *seq,
            record: record.clone(),
        })
        .collect();
    closures.sort_by_key(|c| c.seq);
    let opening = opening(journal, closures.first().map(|c| c.seq));
    ArchiveDocument {
        format: String::new(),
        archive_id: String::new(),
        software: Software {
            name: String::new(),
            version: String::new(),
        },
        generated_at: 0,
        register_id: String::new(),
        store: None,
        period_from: String::new(),
        period_to: String::new(),
        opening,
        chains,
        sales,
        shifts: shift_records,
        closures,
        events: collect(&journal.events, |seq| sequenced(ChainKind::Event, seq)),
        duplicates: collect(&journal.duplicates, |seq| sequenced(ChainKind::Duplicate, seq)),
        archives: collect(&journal.archives, |seq| sequenced(ChainKind::Archive, seq)),
        keys: {
            let mut keys: Vec<_> = journal.keys.values().cloned().collect();
            keys.sort_by(|a, b| a["kid"].as_str().cmp(&b["kid"].as_str()));
            keys
        },
    }
}

fn collect<T: Clone>(records: &std::collections::HashMap<i64, T>, keep: impl Fn(i64) -> bool) -> Vec<Sequenced<T>> {
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
fn opening(journal: &Journal, first: Option<i64>) -> ArchiveOpening {
    let Some(first) = first else {
        return ArchiveOpening::default();
    };
    let mut before: Vec<(&i64, &payload::ClosureRecord)> = journal
        .closures
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
