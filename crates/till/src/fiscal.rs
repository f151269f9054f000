//! `till fiscal ...`: the auditor's and the operator's tools for the journal.
//!
//! - `verify` audits every register's journal (or one) straight from the database, with a
//!   progress bar on a terminal, records each new integrity failure as a technical event, and
//!   exits non-zero when anything fails.
//! - `verify-archive FILE [--keys KEYS]` checks an archive file offline: no database, no
//!   service; with the key set an auditor saved from `GET /v1/fiscal/keys`, every signature
//!   must be by one of those keys, not merely by the keys the archive carries.
//! - `new-key --out FILE` writes a new signing key for a rotation.

use crate::config::Config;
use crate::server::load_fiscal_key;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use std::fs::File;
use std::io::Read as _;
use std::path::Path;
use till_core::fiscal::FiscalKey;
use till_core::fiscal::archive::{
    self, ArchiveError, KeySet, KeySetError, MAX_FILE_BYTES, MAX_KEY_SET_BYTES, Trust, Verified,
};
use till_core::fiscal::audit::audit;
use till_store::journal::jet;
use till_store::{Store, StoreError};

/// Audits the journals; true when every one holds.
pub async fn verify(config: &Config, register: Option<&str>) -> anyhow::Result<bool> {
    let store = Store::connect(&config.database_url(), &config.store_options())
        .await
        .context("cannot open the database")?;
    // The key is needed only to record failures; an audit runs without it.
    let can_record = match load_fiscal_key(config) {
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
        match audit(&journal) {
            Ok(entries) => bar.suspend(|| println!("{register}: ok ({entries} entries)")),
            Err(failure) => {
                all_hold = false;
                bar.suspend(|| println!("{register}: FAILED at {failure}"));
                let known = journal
                    .events
                    .values()
                    .any(|e| e.code == jet::INTEGRITY_FAILURE.0 && e.detail == failure.to_string());
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
/// set the auditor saved from `GET /v1/fiscal/keys`. Neither file is read past its size limit.
pub fn check_archive(path: &Path, keys: Option<&Path>) -> anyhow::Result<ArchiveCheck> {
    let trusted = match keys {
        Some(keys) => match read_at_most(keys, MAX_KEY_SET_BYTES)? {
            Ok(bytes) => match KeySet::from_json(&bytes) {
                Ok(set) => Some(set),
                Err(error) => return Ok(ArchiveCheck::UnusableKeys(error)),
            },
            Err(bytes) => return Ok(ArchiveCheck::UnusableKeys(KeySetError::TooLarge { bytes })),
        },
        None => None,
    };
    let bytes = match read_at_most(path, MAX_FILE_BYTES)? {
        Ok(bytes) => bytes,
        Err(bytes) => return Ok(ArchiveCheck::Refused(ArchiveError::TooLarge { bytes })),
    };
    let trust = trusted.as_ref().map_or(Trust::ArchiveKeys, Trust::KeySet);
    Ok(match archive::verify(&bytes, trust) {
        Ok(verified) => ArchiveCheck::Holds {
            verified,
            sha256: archive::file_digest(&bytes),
        },
        Err(error) => ArchiveCheck::Refused(error),
    })
}

/// The bytes of the file at `path`, or its size when it holds more than `limit`: a file too
/// large is refused from its size, and one that grows while read stops at `limit`.
fn read_at_most(path: &Path, limit: u64) -> anyhow::Result<Result<Vec<u8>, u64>> {
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let size = file
        .metadata()
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    if size > limit {
        return Ok(Err(size));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or_default());
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    Ok(if read > limit { Err(read) } else { Ok(bytes) })
}

/// Checks an archive file offline and says what was found; true when it holds.
pub fn verify_archive(path: &Path, keys: Option<&Path>) -> anyhow::Result<bool> {
    let check = check_archive(path, keys)?;
    for line in report(path, keys, &check) {
        println!("{line}");
    }
    Ok(matches!(check, ArchiveCheck::Holds { .. }))
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
