//! The auditor's bundle: the parts that are computed rather than copied. The sequence report of
//! each chain of an archive, the reconciliation of journal, FEC and e-reporting per day and VAT
//! rate, and the manifest of SHA-256 sums, signed with the fiscal key.

use super::fec::{self, parse_amount};
use crate::canonical::to_canonical_string;
use crate::csv_cell::text_cell;
use crate::fiscal::archive::{ArchiveDocument, DetachedSignature};
use crate::fiscal::payload::{ClosureRecord, Period};
use crate::fiscal::{ALGORITHM, FiscalKey};
use crate::money::VatRate;
use jiff::civil::Date;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

pub const FORMAT: &str = "till-audit-bundle/1";

/// One chain of an archive: its first and last sequence, how many entries, which are missing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainSequence {
    pub chain: String,
    pub first: i64,
    pub last: i64,
    pub count: usize,
    /// Sequences missing between the entry before the slice and its last one.
    pub gaps: Vec<i64>,
}

/// The sequence report of every chain of `document`.
pub fn sequences(document: &ArchiveDocument) -> Vec<ChainSequence> {
    document
        .chains
        .iter()
        .map(|chain| {
            let mut gaps = Vec::new();
            let mut expected = chain.previous_seq.saturating_add(1);
            for entry in &chain.entries {
                // An entry far past the expected one is one gap of many sequences: it is named by
                // its bounds' first, so that a hostile figure allocates nothing.
                if entry.seq > expected {
                    gaps.push(expected);
                }
                expected = entry.seq.saturating_add(1);
            }
            ChainSequence {
                chain: chain.kind.as_str().to_owned(),
                first: chain.entries.first().map_or(0, |e| e.seq),
                last: chain.entries.last().map_or(0, |e| e.seq),
                count: chain.entries.len(),
                gaps,
            }
        })
        .collect()
}

/// `chain,first,last,count,gaps`, gaps `none` or the first missing sequences joined by `|`.
pub fn sequences_csv(report: &[ChainSequence]) -> String {
    let mut text = "chain,first,last,count,gaps\n".to_owned();
    for chain in report {
        let gaps = if chain.gaps.is_empty() {
            "none".to_owned()
        } else {
            chain.gaps.iter().map(i64::to_string).collect::<Vec<_>>().join("|")
        };
        text.push_str(&format!(
            "{},{},{},{},{}\n",
            text_cell(&chain.chain),
            chain.first,
            chain.last,
            chain.count,
            text_cell(&gaps)
        ));
    }
    text
}

/// A taxable base and its VAT, in cents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Figures {
    pub base_cents: i64,
    pub vat_cents: i64,
}

impl Figures {
    fn add(&mut self, base: i64, vat: i64) -> Result<(), String> {
        let too_large = || "a sum passes the largest amount".to_owned();
        self.base_cents = self.base_cents.checked_add(base).ok_or_else(too_large)?;
        self.vat_cents = self.vat_cents.checked_add(vat).ok_or_else(too_large)?;
        Ok(())
    }
}

/// One day and rate in the three views.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reconciled {
    pub date: Date,
    /// As the FEC labels it: `20%`, `5.5%`.
    pub rate: String,
    pub journal: Figures,
    pub fec: Figures,
    pub e_reporting: Figures,
}

impl Reconciled {
    pub fn agrees(&self) -> bool {
        self.journal == self.fec && self.journal == self.e_reporting
    }
}

type Views = BTreeMap<(Date, String), [Figures; 3]>;

fn rate_label(hundredths: i64) -> Result<String, String> {
    VatRate::from_hundredths(hundredths)
        .map(|rate| rate.to_string())
        .ok_or_else(|| format!("the rate {hundredths} is not a VAT rate"))
}

/// Journal, FEC and e-reporting per day and VAT rate: the day closures of the archive, the
/// sales and VAT accounts of the FEC, the rows of the e-reporting file. A rate a view does not
/// show counts zero in it (the FEC leaves out lines of zero).
pub fn reconcile(
    closures: &[ClosureRecord],
    fec_text: &str,
    sales_account: &str,
    vat_account: &str,
    e_reporting: &Value,
) -> Result<Vec<Reconciled>, String> {
    let mut views: Views = BTreeMap::new();
    for closure in closures.iter().filter(|c| c.period == Period::Day) {
        let date: Date = closure
            .period_from
            .parse()
            .map_err(|_| format!("a day closure of the archive has the day {:?}", closure.period_from))?;
        for part in &closure.vat {
            let base = part
                .total_cents
                .checked_sub(part.vat_cents)
                .ok_or("a base passes the largest amount")?;
            views.entry((date, rate_label(part.vat_rate)?)).or_default()[0].add(base, part.vat_cents)?;
        }
    }
    fec::check(fec_text).map_err(|defect| format!("the FEC does not pass the format's checks: {defect}"))?;
    for line in fec_text.lines().skip(1) {
        let fields: Vec<&str> = line.split('\t').collect();
        let (account, account_label, line_label, date) = (fields[4], fields[5], fields[10], fields[3]);
        let amount = |text: &str| parse_amount(text).ok_or_else(|| format!("the FEC amount {text:?}"));
        let credit = amount(fields[12])?
            .checked_sub(amount(fields[11])?)
            .ok_or("a FEC amount passes the largest")?;
        let is_sales = account == sales_account;
        if !is_sales && account != vat_account {
            continue;
        }
        let date = Date::strptime("%Y%m%d", date).map_err(|_| format!("the FEC date {date:?}"))?;
        // The rate ends the line's label; bundles made before the accounts had one label each
        // ended the account's label with it.
        let last_word = |label: &str| label.rsplit(' ').next().unwrap_or_default().to_owned();
        let rate = Some(last_word(line_label))
            .filter(|word| word.ends_with('%'))
            .unwrap_or_else(|| last_word(account_label));
        let figures = &mut views.entry((date, rate)).or_default()[1];
        if is_sales {
            figures.add(credit, 0)?;
        } else {
            figures.add(0, credit)?;
        }
    }
    let days = e_reporting["days"]
        .as_array()
        .ok_or("the e-reporting file has no `days` list")?;
    // Sales invoiced to businesses are listed apart from the B2C days; files made before
    // invoices have no such list.
    let invoiced = match &e_reporting["invoiced"] {
        Value::Null => &[][..],
        list => list
            .as_array()
            .ok_or("the e-reporting file's `invoiced` is not a list")?
            .as_slice(),
    };
    for day in days.iter().chain(invoiced) {
        let date: Date = day["date"]
            .as_str()
            .and_then(|d| d.parse().ok())
            .ok_or_else(|| format!("an e-reporting row has no date: {day}"))?;
        let rate = day["vatRate"]
            .as_f64()
            .and_then(VatRate::from_percent)
            .ok_or_else(|| format!("an e-reporting row has no VAT rate: {day}"))?;
        let (Some(base), Some(vat)) = (day["taxableBaseCents"].as_i64(), day["vatCents"].as_i64()) else {
            return Err(format!("an e-reporting row has no amounts: {day}"));
        };
        views.entry((date, rate.to_string())).or_default()[2].add(base, vat)?;
    }
    Ok(views
        .into_iter()
        .map(|((date, rate), [journal, fec, e_reporting])| Reconciled {
            date,
            rate,
            journal,
            fec,
            e_reporting,
        })
        .collect())
}

/// `date,vatRate,journalBaseCents,journalVatCents,fecBaseCents,fecVatCents,eReportingBaseCents,eReportingVatCents,agrees`.
pub fn reconciliation_csv(rows: &[Reconciled]) -> String {
    let mut text = "date,vatRate,journalBaseCents,journalVatCents,fecBaseCents,fecVatCents,\
                    eReportingBaseCents,eReportingVatCents,agrees\n"
        .to_owned();
    for row in rows {
        text.push_str(&format!(
            "{},{},{},{},{},{},{},{},{}\n",
            row.date,
            text_cell(&row.rate),
            row.journal.base_cents,
            row.journal.vat_cents,
            row.fec.base_cents,
            row.fec.vat_cents,
            row.e_reporting.base_cents,
            row.e_reporting.vat_cents,
            if row.agrees() { "yes" } else { "no" }
        ));
    }
    text
}

/// What the bundle holds, signed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    pub register_id: String,
    pub period_from: String,
    pub period_to: String,
    /// The FEC's file name (it follows the FEC naming rule) and the accounts it was written
    /// with, so that the reconciliation can be made again from the bundle alone.
    pub fec_file: String,
    pub sales_account: String,
    pub vat_account: String,
    pub files: Vec<ManifestFile>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    pub name: String,
    /// Hex.
    pub sha256: String,
}

/// The manifest file: canonical JSON of `{"manifest", "signature"}`, the signature over the
/// canonical JSON of the manifest.
pub fn seal_manifest(manifest: &Manifest, key: &FiscalKey) -> Result<String, String> {
    let value = serde_json::to_value(manifest).map_err(|e| e.to_string())?;
    let signed = to_canonical_string(&value);
    let signature = DetachedSignature {
        algorithm: ALGORITHM.to_owned(),
        key_id: key.key_id().to_owned(),
        value: key.sign(&signed),
    };
    let file = serde_json::json!({"manifest": value, "signature": signature});
    Ok(to_canonical_string(&file))
}

/// The manifest of a manifest file whose signature verifies under a key of `keys` (a JWK set),
/// and the id of that key.
pub fn open_manifest(bytes: &[u8], keys: &Value) -> Result<(Manifest, String), String> {
    #[derive(Deserialize)]
    struct File {
        manifest: Value,
        signature: DetachedSignature,
    }
    let file: File = serde_json::from_slice(bytes).map_err(|e| format!("the manifest cannot be read: {e}"))?;
    let key_id = file.signature.key_id;
    let jwk = keys["keys"]
        .as_array()
        .and_then(|keys| keys.iter().find(|k| k["kid"].as_str() == Some(key_id.as_str())))
        .ok_or_else(|| format!("the manifest is signed with key {key_id}, which is not in the key set"))?;
    if !crate::fiscal::verify(jwk, &to_canonical_string(&file.manifest), &file.signature.value) {
        return Err(format!("the manifest's signature does not verify under key {key_id}"));
    }
    let manifest: Manifest =
        serde_json::from_value(file.manifest).map_err(|e| format!("the manifest cannot be read: {e}"))?;
    if manifest.format != FORMAT {
        return Err(format!("the manifest's format is not {FORMAT}"));
    }
    let names = manifest.files.iter().map(|file| file.name.as_str());
    if let Some(name) = names
        .chain([manifest.fec_file.as_str()])
        .find(|name| !is_file_name(name))
    {
        return Err(format!(
            "the manifest names {name:?}, which is not a plain file name of the folder \
             (letters, digits, '.', '-' and '_', not starting with '.')"
        ));
    }
    if !manifest.files.iter().any(|file| file.name == manifest.fec_file) {
        return Err(format!(
            "the manifest's FEC {} is not among its files",
            manifest.fec_file
        ));
    }
    Ok((manifest, key_id))
}

/// Whether `name` is a plain name of a file in the bundle's folder itself: 1 to 100 letters,
/// digits, `.`, `-` and `_`, not starting with a dot. Every name till writes is one, and no
/// such name reaches outside the folder (no separator, no `..`, nothing absolute).
pub fn is_file_name(name: &str) -> bool {
    (1..=100).contains(&name.len())
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
}

#[cfg(test)]
mod tests {
    use super::super::fec::{FecAccounts, fec};
    use super::super::tests_support::day;
    use super::*;
    use crate::fiscal::payload::SaleRecordVat;

    fn closure(date: &str, vat: Vec<SaleRecordVat>) -> ClosureRecord {
        ClosureRecord {
            register_id: "r1".into(),
            period: Period::Day,
            period_from: date.into(),
            period_to: date.into(),
            ticket_count: 1,
            first_ticket_seq: 1,
            last_ticket_seq: 1,
            last_ticket_signature: None,
            total_cents: 0,
            abs_total_cents: 0,
            grand_total_cents: 0,
            grand_total_abs_cents: 0,
            vat,
            closed_at: 0,
            late: None,
        }
    }

    #[test]
    fn the_three_views_agree_until_one_is_edited() {
        let closed = day("2026-03-30", &[(2000, 1200, 200, "card"), (550, 211, 11, "cash")]);
        let text = fec(std::slice::from_ref(&closed), &FecAccounts::default())
            .unwrap()
            .render();
        let journal = [closure("2026-03-30", closed.sealed_vat.clone())];
        let e_reporting = serde_json::json!({"days": [
            {"date": "2026-03-30", "vatRate": 20, "taxableBaseCents": 1000, "vatCents": 200, "transactionCount": 1},
            {"date": "2026-03-30", "vatRate": 5.5, "taxableBaseCents": 200, "vatCents": 11, "transactionCount": 1}]});
        let rows = reconcile(&journal, &text, "707", "44571", &e_reporting).unwrap();
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(Reconciled::agrees), "{rows:?}");
        // Part of the day invoiced to a business: listed apart, the day still balances, and
        // it would not without that list.
        let split = serde_json::json!({"days": [
            {"date": "2026-03-30", "vatRate": 20, "taxableBaseCents": 600, "vatCents": 120, "transactionCount": 1},
            {"date": "2026-03-30", "vatRate": 5.5, "taxableBaseCents": 200, "vatCents": 11, "transactionCount": 1}],
            "invoiced": [
            {"date": "2026-03-30", "vatRate": 20, "taxableBaseCents": 400, "vatCents": 80, "transactionCount": 1}]});
        let rows = reconcile(&journal, &text, "707", "44571", &split).unwrap();
        assert!(rows.iter().all(Reconciled::agrees), "{rows:?}");
        let mut b2c_only = split.clone();
        b2c_only["invoiced"] = serde_json::json!([]);
        let rows = reconcile(&journal, &text, "707", "44571", &b2c_only).unwrap();
        assert!(rows.iter().any(|row| !row.agrees()), "{rows:?}");
        // Sales moved from one rate to the other: still balanced, no longer the journal.
        let edited: String = text
            .split_inclusive('\n')
            .map(|line| match line {
                l if l.contains("Ventes TVA 20%") => l.replace("\t10,00\t", "\t9,00\t"),
                l if l.contains("Ventes TVA 5.5%") => l.replace("\t2,00\t", "\t3,00\t"),
                l => l.to_owned(),
            })
            .collect();
        assert_eq!(fec::check(&edited).map(|c| c.entries), Ok(1));
        let rows = reconcile(&journal, &edited, "707", "44571", &e_reporting).unwrap();
        assert!(rows.iter().any(|row| !row.agrees()), "{rows:?}");
        assert!(reconciliation_csv(&rows).contains(",no\n"));
    }

    #[test]
    fn a_manifest_naming_a_file_outside_its_folder_does_not_open() {
        let key = FiscalKey::from_secret_bytes(&[7; 32]).unwrap();
        let set = serde_json::json!({"keys": [key.public_jwk()]});
        let manifest = |names: &[&str], fec_file: &str| Manifest {
            format: FORMAT.into(),
            register_id: "r1".into(),
            period_from: "2026-03-30".into(),
            period_to: "2026-03-30".into(),
            fec_file: fec_file.into(),
            sales_account: "707".into(),
            vat_account: "44571".into(),
            files: names
                .iter()
                .map(|name| ManifestFile {
                    name: (*name).into(),
                    sha256: "00".into(),
                })
                .collect(),
        };
        let good = manifest(
            &["archive.json", "123456789FEC20260330.txt"],
            "123456789FEC20260330.txt",
        );
        let sealed = seal_manifest(&good, &key).unwrap();
        assert_eq!(open_manifest(sealed.as_bytes(), &set).unwrap().0, good);
        for bad in [
            "../outside.txt",
            "/etc/passwd",
            "sub/file",
            ".hidden",
            "",
            "..",
            "a\\b",
            "é.txt",
        ] {
            let sealed = seal_manifest(&manifest(&["archive.json", bad], "FEC.txt"), &key).unwrap();
            let refused = open_manifest(sealed.as_bytes(), &set).unwrap_err();
            assert!(refused.contains("not a plain file name"), "{bad}: {refused}");
        }
        let sealed = seal_manifest(&manifest(&["archive.json"], "../FEC.txt"), &key).unwrap();
        assert!(
            open_manifest(sealed.as_bytes(), &set)
                .unwrap_err()
                .contains("not a plain file name")
        );
        let sealed = seal_manifest(&manifest(&["archive.json"], "FEC.txt"), &key).unwrap();
        assert!(
            open_manifest(sealed.as_bytes(), &set)
                .unwrap_err()
                .contains("not among its files")
        );
    }

    #[test]
    fn a_manifest_opens_only_under_the_key_that_signed_it_and_unchanged() {
        let key = FiscalKey::from_secret_bytes(&[7; 32]).unwrap();
        let other = FiscalKey::from_secret_bytes(&[9; 32]).unwrap();
        let manifest = Manifest {
            format: FORMAT.into(),
            register_id: "r1".into(),
            period_from: "2026-03-30".into(),
            period_to: "2026-03-30".into(),
            fec_file: "FEC20260330.txt".into(),
            sales_account: "707".into(),
            vat_account: "44571".into(),
            files: vec![
                ManifestFile {
                    name: "archive.json".into(),
                    sha256: "00".into(),
                },
                ManifestFile {
                    name: "FEC20260330.txt".into(),
                    sha256: "11".into(),
                },
            ],
        };
        let file = seal_manifest(&manifest, &key).unwrap();
        let set = |k: &FiscalKey| serde_json::json!({"keys": [k.public_jwk()]});
        assert_eq!(open_manifest(file.as_bytes(), &set(&key)).unwrap().0, manifest);
        assert!(open_manifest(file.as_bytes(), &set(&other)).is_err());
        let edited = file.replace("\"00\"", "\"01\"");
        assert!(
            open_manifest(edited.as_bytes(), &set(&key))
                .unwrap_err()
                .contains("does not verify")
        );
    }
}
