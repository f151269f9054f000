//! The fiscal journal from outside (docs/fiscal.md): its published keys, the audit of a
//! register's journal, its chains as stored, its period closures, and the archives an auditor
//! verifies offline. An audit records a failure it finds, once, as a technical event of the
//! register's journal.

use crate::app::App;
use crate::refusal::Error;
use crate::secret::new_id;
use crate::storage::fiscal::ArchiveRequest;
use jiff::civil::Date;
use till_core::exports::Today;
use till_core::fiscal::audit::{Failure, audit as audit_journal};
use till_core::fiscal::jet;
use till_core::fiscal::payload::Period;
use till_core::fiscal::{ChainKind, Entry};
use till_core::ids::RegisterId;
use till_core::invoice::issue::check_sealed_xml;
use tokio::sync::Semaphore;

pub use crate::storage::fiscal::CloseRequest;
pub use crate::storage::fiscal::MadeArchive;
pub use crate::storage::fiscal::PublishedKey;
pub use crate::storage::fiscal::SealedClosure;

/// Audits and archives take turns, one at a time on each node, their work on the blocking
/// pool. An audit holds a register's whole journal in memory and checks a signature per entry:
/// seconds of a core and a large share of memory for a busy register, and an archive of a busy
/// day more ("Audits in turns, archives off the writer" in docs/performance.md). Run on the
/// request threads they would stall every sale queued behind them, and run together they
/// would take every core and hold every journal.
static JOURNAL_READS: Semaphore = Semaphore::const_new(1);

/// Every key that ever signed an entry, as published.
pub async fn keys(app: &App) -> Result<Vec<PublishedKey>, Error> {
    Ok(app.journal().fiscal_keys().await?)
}

/// One chain of a register's journal, in sequence order.
pub async fn chain(app: &App, register_id: &RegisterId, kind: ChainKind) -> Result<Vec<Entry>, Error> {
    Ok(app.journal().journal(register_id.as_str(), kind).await?)
}

/// The verdict of an audit of a register's journal.
pub struct Audited {
    /// Each chain read, with its entries.
    pub chains: Vec<(ChainKind, usize)>,
    /// The entries checked when every chain holds, else the first entry that does not.
    pub verdict: Result<usize, Failure>,
}

/// Audits a register's journal: every chain's sequence, links, signatures and the records they
/// seal. A failure not recorded before is recorded. `None` when the register has no journal.
pub async fn audit(app: &App, register_id: &RegisterId) -> Result<Option<Audited>, Error> {
    let journal = app.journal();
    if !journal.register_has_journal(register_id.as_str()).await? {
        return Ok(None);
    }
    // Held through the load too: the journal in memory is the audit's larger cost.
    let _turn = JOURNAL_READS.acquire().await.map_err(Error::internal)?;
    let journal = journal.load_journal(register_id.as_str()).await?;
    // The invoices the event chain sealed: each one's XML must still be the one sealed.
    let invoices = app.invoices().sealed_invoices(register_id.as_str()).await?;
    let (journal, verdict) = tokio::task::spawn_blocking(move || {
        let verdict = audit_journal(&journal).and_then(|entries| {
            let sealed = invoices
                .iter()
                .map(|invoice| (invoice.number.as_str(), invoice.event_seq, invoice.xml.as_slice()));
            check_sealed_xml(&journal.events, sealed).map(|_| entries)
        });
        (journal, verdict)
    })
    .await
    .map_err(Error::internal)?;
    if let Err(failure) = &verdict {
        record_failure(app, register_id.as_str(), failure).await?;
    }
    let chains = journal
        .chains
        .iter()
        .map(|chain| (chain.kind, chain.entries.len()))
        .collect();
    Ok(Some(Audited { chains, verdict }))
}

/// Records an integrity failure as a technical event, once per distinct failure.
async fn record_failure(app: &App, register: &str, failure: &Failure) -> Result<(), Error> {
    let detail = failure.to_string();
    let journal = app.journal().load_journal(register).await?;
    let known = journal
        .events
        .values()
        .any(|e| e.code == jet::INTEGRITY_FAILURE.code && e.detail == detail);
    if !known {
        tracing::error!(register, %detail, "fiscal journal integrity failure");
        app.journal()
            .record_technical_event(register, jet::INTEGRITY_FAILURE, &detail, app.now())
            .await?;
    }
    Ok(())
}

/// Seals the register's current day, month or year (and any earlier period not yet closed).
pub async fn close(app: &App, register_id: &RegisterId, period: Period) -> Result<CloseRequest, Error> {
    Ok(app
        .journal()
        .close_period(register_id.as_str(), period, app.now())
        .await?)
}

/// The register's period closures, in chain order.
pub async fn closures(app: &App, register_id: &RegisterId) -> Result<Vec<SealedClosure>, Error> {
    Ok(app.journal().closures(register_id.as_str()).await?)
}

/// What a request for an archive did.
pub enum Archived {
    Made(MadeArchive),
    /// The period ends after `today`, the last day begun where the register is.
    NotBegun(Today),
    UnknownRegister,
}

/// Archives the days `from` to `to` of a register's journal, sealing the archive's digest in
/// its archive chain.
pub async fn archive(app: &App, register_id: RegisterId, from: Date, to: Date) -> Result<Archived, Error> {
    if let Err(today) = crate::exports::begun(app, None, Some(register_id.as_str()), to).await? {
        return Ok(Archived::NotBegun(today));
    }
    let request = ArchiveRequest {
        archive_id: new_id("arc"),
        register_id: register_id.into_string(),
        from,
        to,
        software_version: env!("CARGO_PKG_VERSION").to_owned(),
    };
    let _turn = JOURNAL_READS.acquire().await.map_err(Error::internal)?;
    Ok(match app.journal().make_archive(request, app.now()).await? {
        Some(made) => Archived::Made(made),
        None => Archived::UnknownRegister,
    })
}

/// An archive made earlier, byte for byte.
pub async fn archive_file(app: &App, archive_id: &str) -> Result<Option<Vec<u8>>, Error> {
    Ok(app.journal().archive_file(archive_id).await?)
}
