//! `till fiscal bundle` and `till fiscal verify-bundle`: everything a tax auditor asks for about
//! one register's period, in one folder, and its check.
//!
//! The folder holds the signed archive (`archive.json`), the public keys with their ids
//! (`keys.json`), the verifier's report on the archive against those keys
//! (`verification.txt`), the sequence report of each chain (`sequences.csv`), the FEC (named by
//! its rule) and the e-reporting file (`e-reporting.json`), the reconciliation of journal, FEC
//! and e-reporting per day and VAT rate (`reconciliation.csv`), and `manifest.json`: the
//! SHA-256 of each of them, signed with the fiscal key.

use crate::config::Config;
use crate::fiscal::{ArchiveCheck, check_archive, report};
use crate::server::{load_fiscal_key, open_store};
use anyhow::{Context, anyhow, bail};
use jiff::civil::Date;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::Path;
use till_api::auth::secret::new_id;
use till_core::exports::bundle::{
    FORMAT, Manifest, ManifestFile, Reconciled, open_manifest, reconcile, reconciliation_csv, seal_manifest, sequences,
    sequences_csv,
};
use till_core::exports::ereporting::{self, DayRate};
use till_core::exports::fec::{fec, file_name};
use till_core::fiscal::archive::{ArchiveDocument, file_digest};
use till_store::archives::ArchiveRequest;
use till_store::exports::{DaysAsked, ExportDays};

const ARCHIVE: &str = "archive.json";
const KEYS: &str = "keys.json";
const VERIFICATION: &str = "verification.txt";
const SEQUENCES: &str = "sequences.csv";
const E_REPORTING: &str = "e-reporting.json";
const RECONCILIATION: &str = "reconciliation.csv";
const MANIFEST: &str = "manifest.json";

/// The e-reporting file, in the shape `GET /v1/exports/e-reporting` answers.
fn e_reporting_file(from: Date, to: Date, rows: &[DayRate]) -> Value {
    let days: Vec<Value> = rows
        .iter()
        .map(|row| {
            json!({"date": row.date.to_string(), "vatRate": row.vat_rate.as_json_number(),
                   "taxableBaseCents": row.taxable_base_cents, "vatCents": row.vat_cents,
                   "transactionCount": row.transaction_count})
        })
        .collect();
    json!({"from": from.to_string(), "to": to.to_string(), "days": days})
}

/// The archive document inside an archive file.
fn archive_document(bytes: &[u8]) -> anyhow::Result<ArchiveDocument> {
    #[derive(Deserialize)]
    struct File {
        archive: ArchiveDocument,
    }
    let file: File = serde_json::from_slice(bytes).context("the archive cannot be read")?;
    Ok(file.archive)
}

fn differences(rows: &[Reconciled]) -> Vec<String> {
    rows.iter()
        .filter(|row| !row.agrees())
        .map(|row| {
            format!(
                "reconciliation: {} at {}: journal {}/{}, FEC {}/{}, e-reporting {}/{} (base/VAT cents)",
                row.date,
                row.rate,
                row.journal.base_cents,
                row.journal.vat_cents,
                row.fec.base_cents,
                row.fec.vat_cents,
                row.e_reporting.base_cents,
                row.e_reporting.vat_cents
            )
        })
        .collect()
}

/// Makes the bundle of `register` from `from` through `to` in `out`; true when the archive
/// holds and the three views agree.
pub async fn make(config: &Config, register: &str, from: Date, to: Date, out: &Path) -> anyhow::Result<bool> {
    let accounts = config.api_config()?.fec;
    let key = load_fiscal_key(config)?;
    let store = open_store(config).await?;
    store
        .use_fiscal_key(load_fiscal_key(config)?, jiff::Timestamp::now())
        .await?;
    let asked = DaysAsked {
        from,
        to,
        store_id: None,
        register_id: Some(register.to_owned()),
    };
    let (days, sirets) = match store.export_days(asked).await? {
        ExportDays::Closed { days, sirets } => (days, sirets),
        ExportDays::Open { register_id, date } => bail!(
            "register {register_id} has sales on {date} that its day closure has not sealed yet; only closed days go in a bundle"
        ),
    };
    let fec_text = fec(&days, &accounts)?.render();
    let e_reporting = e_reporting_file(from, to, &ereporting::aggregates(&days)?);
    let made = store
        .make_archive(
            ArchiveRequest {
                archive_id: new_id("arc"),
                register_id: register.to_owned(),
                from,
                to,
                software_version: env!("CARGO_PKG_VERSION").to_owned(),
            },
            jiff::Timestamp::now(),
        )
        .await?
        .ok_or_else(|| anyhow!("there is no register {register}"))?;
    let keys = json!({"keys": store.fiscal_keys().await?.into_iter().map(|k| k.jwk).collect::<Vec<_>>()});
    store.close().await;

    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(out.join(name), bytes).with_context(|| format!("cannot write {}", out.join(name).display()))
    };
    write(ARCHIVE, &made.file)?;
    write(KEYS, serde_json::to_string_pretty(&keys)?.as_bytes())?;
    let check = check_archive(&out.join(ARCHIVE), Some(&out.join(KEYS)))?;
    let holds = matches!(check, ArchiveCheck::Holds { .. });
    let verification = report(Path::new(ARCHIVE), Some(Path::new(KEYS)), &check).join("\n") + "\n";
    write(VERIFICATION, verification.as_bytes())?;
    let document = archive_document(&made.file)?;
    write(SEQUENCES, sequences_csv(&sequences(&document)).as_bytes())?;
    let fec_name = file_name(sirets.values().map(Option::as_deref), to);
    write(&fec_name, fec_text.as_bytes())?;
    write(E_REPORTING, serde_json::to_string_pretty(&e_reporting)?.as_bytes())?;
    let closures: Vec<_> = document.closures.iter().map(|c| c.record.clone()).collect();
    let rows = reconcile(&closures, &fec_text, &accounts.sales, &accounts.vat, &e_reporting).map_err(|e| anyhow!(e))?;
    write(RECONCILIATION, reconciliation_csv(&rows).as_bytes())?;

    let mut files = Vec::new();
    for name in [
        ARCHIVE,
        KEYS,
        VERIFICATION,
        SEQUENCES,
        fec_name.as_str(),
        E_REPORTING,
        RECONCILIATION,
    ] {
        let bytes = std::fs::read(out.join(name)).with_context(|| format!("cannot read {name}"))?;
        files.push(ManifestFile {
            name: name.to_owned(),
            sha256: file_digest(&bytes),
        });
    }
    let manifest = Manifest {
        format: FORMAT.to_owned(),
        register_id: register.to_owned(),
        period_from: from.to_string(),
        period_to: to.to_string(),
        fec_file: fec_name,
        sales_account: accounts.sales.clone(),
        vat_account: accounts.vat.clone(),
        files,
    };
    write(
        MANIFEST,
        seal_manifest(&manifest, &key).map_err(|e| anyhow!(e))?.as_bytes(),
    )?;

    let differ = differences(&rows);
    for line in verification.lines().chain(differ.iter().map(String::as_str)) {
        println!("{line}");
    }
    println!(
        "{}: bundle of register {register}, {from} to {to}: {} closed days, {} rows reconciled, manifest signed with key {}",
        out.display(),
        days.len(),
        rows.len(),
        key.key_id()
    );
    Ok(holds && differ.is_empty())
}

/// Checks a bundle: the manifest's signature (under `keys`, or the bundle's own key set, which
/// proves the folder whole but not who made it), each file against its SHA-256, the archive
/// against the keys, and the reconciliation made again from the archive, the FEC and the
/// e-reporting file. Prints what it found; true when everything holds.
pub fn verify(dir: &Path, keys: Option<&Path>) -> anyhow::Result<bool> {
    let keys_path = keys.map_or_else(|| dir.join(KEYS), Path::to_path_buf);
    let key_set: Value = serde_json::from_slice(
        &std::fs::read(&keys_path).with_context(|| format!("cannot read {}", keys_path.display()))?,
    )
    .with_context(|| format!("{} is not a JWK set", keys_path.display()))?;
    let mut failures = Vec::new();
    let mut found = Vec::new();
    let read = |name: &str| std::fs::read(dir.join(name));
    let manifest = match read(MANIFEST)
        .map_err(|e| e.to_string())
        .and_then(|b| open_manifest(&b, &key_set))
    {
        Ok((manifest, key_id)) => {
            found.push(format!("manifest signed with key {key_id}"));
            for file in &manifest.files {
                match read(&file.name) {
                    Ok(bytes) if file_digest(&bytes) == file.sha256 => {}
                    Ok(_) => failures.push(format!("manifest: {} does not match its SHA-256", file.name)),
                    Err(_) => failures.push(format!("manifest: {} is missing", file.name)),
                }
            }
            Some(manifest)
        }
        Err(why) => {
            failures.push(format!("manifest: {why}"));
            None
        }
    };
    match check_archive(&dir.join(ARCHIVE), Some(&keys_path))? {
        ArchiveCheck::Holds { verified, .. } => found.push(format!(
            "archive of register {}, {} to {}: {} entries hold",
            verified.register_id, verified.period_from, verified.period_to, verified.entries
        )),
        other => failures.extend(report(Path::new(ARCHIVE), Some(&keys_path), &other)),
    }
    if let Some(manifest) = &manifest {
        let reconciled = (|| -> anyhow::Result<Vec<Reconciled>> {
            let document = archive_document(&read(ARCHIVE)?)?;
            let closures: Vec<_> = document.closures.iter().map(|c| c.record.clone()).collect();
            let fec_text = String::from_utf8(read(&manifest.fec_file)?).context("the FEC is not text")?;
            let e_reporting: Value = serde_json::from_slice(&read(E_REPORTING)?).context("the e-reporting file")?;
            reconcile(
                &closures,
                &fec_text,
                &manifest.sales_account,
                &manifest.vat_account,
                &e_reporting,
            )
            .map_err(|e| anyhow!(e))
        })();
        match reconciled {
            Ok(rows) => {
                let differ = differences(&rows);
                if differ.is_empty() {
                    found.push(format!(
                        "journal, FEC and e-reporting agree on {} days and rates",
                        rows.len()
                    ));
                }
                failures.extend(differ);
            }
            Err(error) => failures.push(format!("reconciliation: {error:#}")),
        }
    }
    let whose = match keys {
        Some(keys) => format!("keys from {}", keys.display()),
        None => {
            "the bundle's own keys, not independently trusted; pass --keys with the key set GET /v1/fiscal/keys answers"
                .to_owned()
        }
    };
    if failures.is_empty() {
        println!("{}: ok: {} ({whose})", dir.display(), found.join("; "));
    } else {
        for failure in &failures {
            println!("{}: FAILED: {failure}", dir.display());
        }
    }
    Ok(failures.is_empty())
}
