//! `till fiscal ...`: the auditor's and the operator's tools for the journal.
//!
//! - `verify` audits every register's journal (or one) straight from the database, with a
//!   progress bar on a terminal, records each new integrity failure as a technical event, and
//!   exits non-zero when anything fails.
//! - `verify-archive FILE` checks an archive file offline: no database, no service.
//! - `new-key --out FILE` writes a new signing key for a rotation.

use crate::config::Config;
use crate::server::load_fiscal_key;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;
use till_core::fiscal::FiscalKey;
use till_core::fiscal::archive::{self, verify_file};
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

/// Checks an archive file offline; true when it holds.
pub fn verify_archive(path: &Path) -> anyhow::Result<bool> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let digest = archive::file_digest(&bytes);
    match verify_file(&bytes) {
        Ok(verified) => {
            println!(
                "{}: ok: register {}, {} to {}, {} entries, sha256 {digest}",
                path.display(),
                verified.register_id,
                verified.period_from,
                verified.period_to,
                verified.entries
            );
            Ok(true)
        }
        Err(error) => {
            println!("{}: FAILED: {error}", path.display());
            Ok(false)
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
