//! The fiscal journal: published keys, closures of periods, archives and the days an export
//! covers.

use super::*;
use bytes::Bytes;
use jiff::Timestamp;
use jiff::civil::Date;
use std::collections::BTreeMap;
use till_core::exports;
use till_core::fiscal::audit::Journal;
use till_core::fiscal::jet;
use till_core::fiscal::payload::{ClosureRecord, Period};
use till_core::fiscal::proof::ProvenTicket;
use till_core::fiscal::{ChainKind, Entry};
use till_core::ids::{RegisterId, StoreId};
use till_core::store::Timezone;

/// A public key that signed entries, as a JWK.
#[derive(Clone, Debug)]
pub struct PublishedKey {
    pub key_id: String,
    pub jwk: serde_json::Value,
    pub created_at: Timestamp,
}

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
    pub file: Bytes,
}

/// A register whose current day was closed early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClosedDay {
    pub register_id: RegisterId,
    /// The register's local day, closed.
    pub day: String,
    /// The last day of the period closed early (the day itself, or the end of its month or
    /// year).
    pub through: String,
}

/// How a closure request went.
#[derive(Clone, Debug)]
pub enum CloseRequest {
    Closed(Vec<SealedClosure>),
    /// The period was already closed.
    AlreadyClosed,
    UnknownRegister,
}

/// A closure as answered.
#[derive(Clone, Debug)]
pub struct SealedClosure {
    pub seq: i64,
    pub record: ClosureRecord,
}

/// Which days an export covers: local dates, both inclusive, of every register or of some.
#[derive(Clone, Debug)]
pub struct DaysAsked {
    pub from: Date,
    pub to: Date,
    pub store_id: Option<String>,
    pub register_id: Option<String>,
}

/// What the period holds.
#[derive(Clone, Debug)]
pub enum ExportDays {
    /// Every day of the period with tickets is closed: these, in order of day and register.
    Closed {
        days: Vec<exports::ClosedDay>,
        /// The SIRET of each store the days belong to, when known.
        sirets: BTreeMap<String, Option<String>>,
    },
    /// A register has tickets on a day of the period that its day closure has not yet sealed.
    Open { register_id: String, date: String },
}

/// The fiscal journal: the registers' chains, their keys, the technical events, closures, archives and exports.
#[async_trait::async_trait]
pub trait FiscalJournal: Send + Sync {
    async fn fiscal_keys(&self) -> Result<Vec<PublishedKey>, StoreError>;
    /// The proof of `ticket` under the key sealing the journal now (deterministic: the same
    /// ticket always gets the same proof).
    fn prove(&self, ticket: &ProvenTicket) -> Result<String, StoreError>;
    /// The whole chain of `kind` for `register_id`, in sequence order.
    async fn journal(&self, register_id: &str, kind: ChainKind) -> Result<Vec<Entry>, StoreError>;
    /// The whole journal of `register_id`, ready for the audit.
    async fn load_journal(&self, register_id: &str) -> Result<Journal, StoreError>;
    /// Records a technical event in its own transaction (an integrity failure found by an
    /// audit, for instance).
    async fn record_technical_event(
        &self,
        register_id: &str,
        event: jet::TechnicalEvent,
        detail: &str,
        now: Timestamp,
    ) -> Result<(), StoreError>;
    /// Whether any chain exists for the register.
    async fn register_has_journal(&self, register_id: &str) -> Result<bool, StoreError>;
    /// Builds and seals the archive of the register's period; `None` for an unknown register.
    ///
    /// The journal is read and the file built on a reader and the blocking pool, and only the
    /// seal takes the writer: on SQLite every sale waits for the writer, and reading and building
    /// a busy day takes seconds ("Audits in turns, archives off the writer" in
    /// docs/performance.md). An entry of the period written in between sends
    /// the archive back to be read again.
    async fn make_archive(&self, request: ArchiveRequest, now: Timestamp) -> Result<Option<MadeArchive>, StoreError>;
    /// An archive made earlier, byte for byte.
    async fn archive_file(&self, archive_id: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// Closes the register's current day, month or year now (and what ended before it); no
    /// sale can then be booked into that period, and no session opens in it. Refused
    /// ([`Rule::SessionOpenOnDay`]) while a session of the register is open.
    async fn close_period(&self, register_id: &str, period: Period, now: Timestamp)
    -> Result<CloseRequest, StoreError>;
    /// The registers of `store_id` (of every store when `None`) whose current day at `now` was
    /// closed early, by id.
    async fn closed_days(&self, store_id: Option<&StoreId>, now: Timestamp) -> Result<Vec<ClosedDay>, StoreError>;
    /// The register's period closures in chain order.
    async fn closures(&self, register_id: &str) -> Result<Vec<SealedClosure>, StoreError>;
    /// The closed days of `asked`, or the first day of it still open.
    async fn export_days(&self, asked: DaysAsked, at: ReadAt) -> Result<ExportDays, StoreError>;
    /// The time zones the days of a period are cut in: those of the stores of the registers
    /// it covers (every register, a store's or one), the default one for a register of no
    /// store, and the named store's own.
    async fn period_zones(
        &self,
        store_id: Option<&str>,
        register_id: Option<&str>,
    ) -> Result<Vec<Timezone>, StoreError>;
}
