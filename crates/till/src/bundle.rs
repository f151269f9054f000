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
use crate::files::{Links, NewFolder, read_file};
use crate::fiscal::{ArchiveCheck, check_archive_bytes, report};
use crate::server::{existing_fiscal_key, open_existing_store};
use anyhow::{Context, anyhow, bail};
use jiff::civil::Date;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use till_api::auth::secret::new_id;
use till_core::exports::bundle::{
    FORMAT, Manifest, ManifestFile, Reconciled, open_manifest, reconcile, reconciliation_csv, seal_manifest, sequences,
    sequences_csv,
};
use till_core::exports::ereporting::{self, DayRate};
use till_core::exports::fec::{fec, file_name};
use till_core::exports::{ClosedDay, last_day_begun};
use till_core::fiscal::FiscalKey;
use till_core::fiscal::archive::{ArchiveDocument, MAX_FILE_BYTES, MAX_KEY_SET_BYTES, file_digest};
use till_store::Store;
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
fn e_reporting_file(from: Date, to: Date, b2c: &[DayRate], invoiced: &[DayRate]) -> Value {
    let rows = |rows: &[DayRate]| -> Vec<Value> {
        rows.iter()
            .map(|row| {
                json!({"date": row.date.to_string(), "vatRate": row.vat_rate.as_json_number(),
                       "taxableBaseCents": row.taxable_base_cents, "vatCents": row.vat_cents,
                       "transactionCount": row.transaction_count})
            })
            .collect()
    };
    json!({"from": from.to_string(), "to": to.to_string(), "days": rows(b2c), "invoiced": rows(invoiced)})
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

/// Makes the bundle of `register` from `from` through `to` in `out`, a new folder (or an
/// empty one); true when the archive holds and the three views agree. The database and the
/// fiscal key are used as they are, never created; a period ending after today in the
/// register's store, or an `--out` that holds anything, stops it before anything is written.
pub async fn make(config: &Config, register: &str, from: Date, to: Date, out: &Path) -> anyhow::Result<bool> {
    let accounts = config.api_config()?.fec;
    NewFolder::check(out)?;
    let store = open_existing_store(config).await?;
    let made = read_and_seal(&store, config, register, from, to).await;
    store.close().await;
    let Sealed {
        key,
        days,
        sirets,
        archive,
        keys,
    } = made?;
    let fec_text = fec(&days, &accounts)?.render();
    let e_reporting = e_reporting_file(from, to, &ereporting::aggregates(&days)?, &ereporting::invoiced(&days)?);
    let keys = serde_json::to_string_pretty(&keys)?;
    let check = check_archive_bytes(&archive, Some(keys.as_bytes()));
    let holds = matches!(check, ArchiveCheck::Holds { .. });
    let verification = report(Path::new(ARCHIVE), Some(Path::new(KEYS)), &check).join("\n") + "\n";
    let document = archive_document(&archive)?;
    let closures: Vec<_> = document.closures.iter().map(|c| c.record.clone()).collect();
    let rows = reconcile(&closures, &fec_text, &accounts.sales, &accounts.vat, &e_reporting).map_err(|e| anyhow!(e))?;
    let fec_name = file_name(sirets.values().map(Option::as_deref), to);
    // The manifest sums what was made here, not what a file of the folder holds when read back.
    let contents: Vec<(&str, Vec<u8>)> = vec![
        (ARCHIVE, archive.to_vec()),
        (KEYS, keys.into_bytes()),
        (VERIFICATION, verification.clone().into_bytes()),
        (SEQUENCES, sequences_csv(&sequences(&document)).into_bytes()),
        (fec_name.as_str(), fec_text.into_bytes()),
        (E_REPORTING, serde_json::to_string_pretty(&e_reporting)?.into_bytes()),
        (RECONCILIATION, reconciliation_csv(&rows).into_bytes()),
    ];
    let manifest = Manifest {
        format: FORMAT.to_owned(),
        register_id: register.to_owned(),
        period_from: from.to_string(),
        period_to: to.to_string(),
        fec_file: fec_name.clone(),
        sales_account: accounts.sales.clone(),
        vat_account: accounts.vat.clone(),
        files: contents
            .iter()
            .map(|(name, bytes)| ManifestFile {
                name: (*name).to_owned(),
                sha256: file_digest(bytes),
            })
            .collect(),
    };
    let sealed_manifest = seal_manifest(&manifest, &key).map_err(|e| anyhow!(e))?;
    let folder = NewFolder::create(out)?;
    for (name, bytes) in &contents {
        folder.write(name, bytes)?;
    }
    folder.write(MANIFEST, sealed_manifest.as_bytes())?;

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

/// What a bundle takes from the database, and the key that sealed its archive.
struct Sealed {
    key: FiscalKey,
    days: Vec<ClosedDay>,
    sirets: BTreeMap<String, Option<String>>,
    archive: bytes::Bytes,
    keys: Value,
}

/// Reads the period's closed days and seals its archive, once the period is known to have
/// begun everywhere and to hold closed days only.
async fn read_and_seal(store: &Store, config: &Config, register: &str, from: Date, to: Date) -> anyhow::Result<Sealed> {
    let zones = store.period_zones(None, Some(register)).await?;
    let today = last_day_begun(&zones, jiff::Timestamp::now());
    if to > today.date {
        bail!(
            "--to {to} is after today ({} in {}): a bundle covers days that have begun; end the period today or before",
            today.date,
            today.zone
        );
    }
    let asked = DaysAsked {
        from,
        to,
        store_id: None,
        register_id: Some(register.to_owned()),
    };
    let (days, sirets) = match store.export_days(asked, till_app::storage::ReadAt::Primary).await? {
        ExportDays::Closed { days, sirets } => (days, sirets),
        ExportDays::Open { register_id, date } => bail!(
            "register {register_id} has sales on {date} that its day closure has not sealed yet; only closed days go in a bundle"
        ),
    };
    let key = existing_fiscal_key(config)?;
    // The store takes a key of its own to seal the archive; this one signs the manifest.
    store
        .use_fiscal_key(existing_fiscal_key(config)?, jiff::Timestamp::now())
        .await?;
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
    Ok(Sealed {
        key,
        days,
        sirets,
        archive: made.file,
        keys,
    })
}

/// Largest manifest read: a few hundred bytes per file it names.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// Checks a bundle: the manifest's signature (under `keys`, or the bundle's own key set, which
/// proves the folder whole but not who made it), each file against its SHA-256, the archive
/// against the keys, and the reconciliation made again from the archive, the FEC and the
/// e-reporting file. Files of the folder are read by the plain names the manifest may give,
/// never through a link, and only regular files of a bounded size. Prints what it found; true
/// when everything holds.
pub fn verify(dir: &Path, keys: Option<&Path>) -> anyhow::Result<bool> {
    let (keys_path, links) = match keys {
        Some(keys) => (keys.to_path_buf(), Links::Follow),
        None => (dir.join(KEYS), Links::Refuse),
    };
    let key_bytes = read_file(&keys_path, MAX_KEY_SET_BYTES, links)
        .map_err(|why| anyhow!("cannot read {}: it {why}", keys_path.display()))?;
    let key_set: Value =
        serde_json::from_slice(&key_bytes).with_context(|| format!("{} is not a JWK set", keys_path.display()))?;
    let mut failures = Vec::new();
    let mut found = Vec::new();
    let read = |name: &str, limit: u64| read_file(&dir.join(name), limit, Links::Refuse);
    let manifest = match read(MANIFEST, MAX_MANIFEST_BYTES)
        .map_err(|why| format!("{MANIFEST} {why}"))
        .and_then(|b| open_manifest(&b, &key_set))
    {
        Ok((manifest, key_id)) => {
            found.push(format!("manifest signed with key {key_id}"));
            for file in &manifest.files {
                match read(&file.name, MAX_FILE_BYTES) {
                    Ok(bytes) if file_digest(&bytes) == file.sha256 => {}
                    Ok(_) => failures.push(format!("manifest: {} does not match its SHA-256", file.name)),
                    Err(why) => failures.push(format!("manifest: {} {why}", file.name)),
                }
            }
            Some(manifest)
        }
        Err(why) => {
            failures.push(format!("manifest: {why}"));
            None
        }
    };
    match read(ARCHIVE, MAX_FILE_BYTES) {
        Ok(archive) => match check_archive_bytes(&archive, Some(&key_bytes)) {
            ArchiveCheck::Holds { verified, .. } => found.push(format!(
                "archive of register {}, {} to {}: {} entries hold",
                verified.register_id, verified.period_from, verified.period_to, verified.entries
            )),
            other => failures.extend(report(Path::new(ARCHIVE), Some(&keys_path), &other)),
        },
        Err(why) => failures.push(format!("{ARCHIVE} {why}")),
    }
    if let Some(manifest) = &manifest {
        let reconciled = (|| -> anyhow::Result<Vec<Reconciled>> {
            let file = |name: &str| read(name, MAX_FILE_BYTES).map_err(|why| anyhow!("{name} {why}"));
            let document = archive_document(&file(ARCHIVE)?)?;
            let closures: Vec<_> = document.closures.iter().map(|c| c.record.clone()).collect();
            let fec_text = String::from_utf8(file(&manifest.fec_file)?).context("the FEC is not text")?;
            let e_reporting: Value = serde_json::from_slice(&file(E_REPORTING)?).context("the e-reporting file")?;
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
