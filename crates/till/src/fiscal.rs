//! `till fiscal ...`: the auditor's and the operator's tools for the journal.
//!
//! - `verify` audits every register's journal (or one) straight from the database, with a
//!   progress bar on a terminal, records each new integrity failure as a technical event, and
//!   exits non-zero when anything fails.
//! - `verify-receipt TEXT --keys KEYS` checks the proof a receipt prints as a QR code offline.
//! - `verify-archive FILE [--keys KEYS]` checks an archive file offline: no database, no
//!   service; with the key set an auditor saved from `GET /v1/fiscal/keys`, every signature
//!   must be by one of those keys, not merely by the keys the archive carries.
//! - `new-key --out FILE` writes a new signing key for a rotation.

use crate::config::Config;
use crate::files::{Links, Unreadable, read_file};
use crate::server::{existing_fiscal_key, open_existing_store};
use anyhow::anyhow;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;
use till_core::fiscal::FiscalKey;
use till_core::fiscal::archive::{
    self, ArchiveError, KeySet, KeySetError, MAX_FILE_BYTES, MAX_KEY_SET_BYTES, Trust, Verified,
};
use till_core::fiscal::audit::audit;
use till_core::fiscal::proof;
use till_core::invoice::issue::check_sealed_xml;
use till_store::StoreError;
use till_store::journal::jet;

/// Audits the journals of the database as it is (nothing is created where there is none);
/// true when every one holds.
pub async fn verify(config: &Config, register: Option<&str>) -> anyhow::Result<bool> {
    let store = open_existing_store(config).await?;
    // The key is needed only to record failures; an audit runs without it, and never makes one.
    let can_record = match existing_fiscal_key(config) {
        Ok(key) => store.use_fiscal_key(key, jiff::Timestamp::now()).await.is_ok(),
        Err(error) => {
            eprintln!("warning: failures will not be recorded in the journal ({error:#})");
            false
        }
    };
    let registers = match register {
        Some(register) => vec![register.to_owned()],
        None => store.journal_registers().await?,
    };
    let bar = ProgressBar::new(registers.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} registers {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut all_hold = true;
    for register in &registers {
        bar.set_message(register.clone());
        let journal = match store.load_journal(register).await {
            Ok(journal) => journal,
            Err(StoreError::Corrupt(reason)) => {
                bar.suspend(|| println!("{register}: FAILED: unreadable journal ({reason})"));
                all_hold = false;
                continue;
            }
            Err(other) => return Err(other.into()),
        };
        // Each invoice's XML must still be the one its event sealed.
        let invoices = store.sealed_invoices(register).await?;
        let sealed = invoices
            .iter()
            .map(|invoice| (invoice.number.as_str(), invoice.event_seq, invoice.xml.as_slice()));
        match audit(&journal).and_then(|entries| check_sealed_xml(&journal.events, sealed).map(|_| entries)) {
            Ok(entries) => bar.suspend(|| println!("{register}: ok ({entries} entries)")),
            Err(failure) => {
                all_hold = false;
                bar.suspend(|| println!("{register}: FAILED at {failure}"));
                let known = journal
                    .events
                    .values()
                    .any(|e| e.code == jet::INTEGRITY_FAILURE.code && e.detail == failure.to_string());
                if can_record && !known {
                    store
                        .record_technical_event(
                            register,
                            jet::INTEGRITY_FAILURE,
                            &failure.to_string(),
                            jiff::Timestamp::now(),
                        )
                        .await?;
                }
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if registers.is_empty() {
        println!("no register has a journal yet");
    }
    store.close().await;
    Ok(all_hold)
}

/// What `verify-archive` found.
#[derive(Debug)]
pub enum ArchiveCheck {
    /// The archive holds: what it covers, the keys relied on, the file's SHA-256.
    Holds { verified: Verified, sha256: String },
    /// The archive does not hold, or is not an archive.
    Refused(ArchiveError),
    /// The trusted key set cannot be used, so nothing was checked.
    UnusableKeys(KeySetError),
}

/// Checks an archive file offline, with the keys it carries or, given `keys`, with the JWK
/// set the auditor saved from `GET /v1/fiscal/keys`. Both are regular files read up to their
/// size limit; `links` says whether either may be a symbolic link.
pub fn check_archive(path: &Path, keys: Option<&Path>, links: Links) -> anyhow::Result<ArchiveCheck> {
    let trusted = match keys {
        Some(keys) => match read_file(keys, MAX_KEY_SET_BYTES, links) {
            Ok(bytes) => Some(bytes),
            Err(Unreadable::TooLarge { bytes, .. }) => {
                return Ok(ArchiveCheck::UnusableKeys(KeySetError::TooLarge { bytes }));
            }
            Err(why) => return Err(anyhow!("cannot read {}: it {why}", keys.display())),
        },
        None => None,
    };
    let bytes = match read_file(path, MAX_FILE_BYTES, links) {
        Ok(bytes) => bytes,
        Err(Unreadable::TooLarge { bytes, .. }) => return Ok(ArchiveCheck::Refused(ArchiveError::TooLarge { bytes })),
        Err(why) => return Err(anyhow!("cannot read {}: it {why}", path.display())),
    };
    Ok(check_archive_bytes(&bytes, trusted.as_deref()))
}

/// Checks the archive `bytes`, with the keys it carries or those of the JWK set `keys`.
pub fn check_archive_bytes(bytes: &[u8], keys: Option<&[u8]>) -> ArchiveCheck {
    let trusted = match keys.map(KeySet::from_json).transpose() {
        Ok(trusted) => trusted,
        Err(error) => return ArchiveCheck::UnusableKeys(error),
    };
    let trust = trusted.as_ref().map_or(Trust::ArchiveKeys, Trust::KeySet);
    match archive::verify(bytes, trust) {
        Ok(verified) => ArchiveCheck::Holds {
            verified,
            sha256: archive::file_digest(bytes),
        },
        Err(error) => ArchiveCheck::Refused(error),
    }
}

/// Checks an archive file offline and says what was found; true when it holds.
pub fn verify_archive(path: &Path, keys: Option<&Path>) -> anyhow::Result<bool> {
    let check = check_archive(path, keys, Links::Follow)?;
    for line in report(path, keys, &check) {
        println!("{line}");
    }
    Ok(matches!(check, ArchiveCheck::Holds { .. }))
}

/// Checks a receipt's proof against the JWK set the checker saved from `GET /v1/fiscal/keys`
/// and says what it proves; true when it verifies.
pub fn verify_receipt(text: &str, keys: &Path) -> anyhow::Result<bool> {
    let bytes = match read_file(keys, MAX_KEY_SET_BYTES, Links::Follow) {
        Ok(bytes) => bytes,
        Err(why) => return Err(anyhow!("cannot read {}: it {why}", keys.display())),
    };
    let trusted = match KeySet::from_json(&bytes) {
        Ok(trusted) => trusted,
        Err(error) => {
            println!("FAILED: the key set {} cannot be used: {error}", keys.display());
            return Ok(false);
        }
    };
    match proof::verify(text, &trusted) {
        Ok((ticket, key_id)) => {
            println!(
                "ok: register {} sealed ticket {} of {} cents at {}, signed with key {key_id} of {}",
                ticket.register_id,
                ticket.ticket_seq,
                ticket.total_cents,
                till_core::instant::format_utc(ticket.issued_at),
                keys.display()
            );
            Ok(true)
        }
        Err(error) => {
            println!("FAILED: {error}");
            Ok(false)
        }
    }
}

/// The lines `verify-archive` prints for `check`.
pub fn report(path: &Path, keys: Option<&Path>, check: &ArchiveCheck) -> Vec<String> {
    let file = path.display();
    match check {
        ArchiveCheck::Holds { verified, sha256 } => {
            let ids = verified.key_ids.join(", ");
            let whose = match keys {
                Some(keys) => format!("found in the trusted key set {}", keys.display()),
                None => "taken from the archive itself and not independently trusted; \
                         pass --keys with the key set GET /v1/fiscal/keys answers to check them"
                    .to_owned(),
            };
            vec![
                format!(
                    "{file}: ok: register {}, {} to {}, {} entries, sha256 {sha256}",
                    verified.register_id, verified.period_from, verified.period_to, verified.entries
                ),
                format!("{file}: signed with keys {ids}, {whose}"),
            ]
        }
        ArchiveCheck::Refused(error) => vec![format!("{file}: FAILED: {error}")],
        ArchiveCheck::UnusableKeys(error) => {
            let keys = keys.map(|k| k.display().to_string()).unwrap_or_default();
            vec![format!(
                "{file}: FAILED: the trusted key set {keys} cannot be used: {error}"
            )]
        }
    }
}

/// Writes a new P-256 signing key (PKCS#8 PEM, owner-readable only); answers its key id.
pub fn new_key(out: &Path) -> anyhow::Result<String> {
    let key = loop {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| anyhow::anyhow!("random generator failed: {e}"))?;
        if let Ok(key) = FiscalKey::from_secret_bytes(&secret) {
            break key;
        }
    };
    crate::server::write_private(out, &key.to_pkcs8_pem())?;
    Ok(key.key_id().to_owned())
}
