//! Fiscal archives: a period of one register's journal in one self-contained file that an
//! auditor verifies without the database or the service.
//!
//! The file is canonical JSON (keys sorted, no whitespace) with two members: `archive`, the
//! document, and `signature`, a detached ECDSA P-256 signature over the canonical bytes of the
//! document. The verifier refuses a file that is not in canonical form, so that any change of
//! any byte is detected: either the form breaks or the signature does.

use super::audit::{self, Anchor, Chain, Failure, Journal, Opening};
use super::payload::{ArchiveRecord, ClosureRecord, DuplicateRecord, EventRecord, SaleRecord, ShiftRecord};
use super::{ALGORITHM, ChainKind, Entry, FiscalKey};
use crate::canonical::write_canonical;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::error::Category;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

pub const FORMAT: &str = "till-nf525-archive/1";

/// What an archive holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveDocument {
    /// Always [`FORMAT`].
    pub format: String,
    pub archive_id: String,
    pub software: Software,
    /// Microseconds since the epoch.
    pub generated_at: i64,
    pub register_id: String,
    pub store: Option<StoreIdentity>,
    /// Local dates, inclusive.
    pub period_from: String,
    pub period_to: String,
    /// Where the period picks up: grand totals and last ticket closed before it.
    pub opening: ArchiveOpening,
    pub chains: Vec<ArchiveChain>,
    pub sales: Vec<SaleRecord>,
    pub shifts: Vec<ShiftRecord>,
    pub closures: Vec<Sequenced<ClosureRecord>>,
    pub events: Vec<Sequenced<EventRecord>>,
    pub duplicates: Vec<Sequenced<DuplicateRecord>>,
    pub archives: Vec<Sequenced<ArchiveRecord>>,
    /// Every public key that signed something in it, as JWK.
    pub keys: Vec<Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Software {
    pub name: String,
    pub version: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreIdentity {
    pub store_id: String,
    pub name: String,
    pub siret: Option<String>,
    pub timezone: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveOpening {
    pub grand_total_cents: i64,
    pub grand_total_abs_cents: i64,
    pub last_ticket_seq: i64,
}

/// A slice of one chain: its entries in order and the entry just before them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveChain {
    pub kind: ChainKind,
    /// The sequence and signature of the entry before the first one here; 0 and null when the
    /// slice starts at the beginning of the chain.
    pub previous_seq: i64,
    pub previous_signature: Option<String>,
    pub entries: Vec<Entry>,
}

/// A record with the sequence of the entry that seals it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sequenced<T> {
    pub seq: i64,
    #[serde(flatten)]
    pub record: T,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetachedSignature {
    pub algorithm: String,
    pub key_id: String,
    /// Over the canonical JSON of the `archive` member.
    pub value: String,
}

/// The file as read back: the document's text exactly as signed, and the signature.
#[derive(Deserialize)]
struct ArchiveFile<'a> {
    #[serde(borrow)]
    archive: &'a RawValue,
    signature: DetachedSignature,
}

/// The file's text up to the document; the two members are in key order, as canonical text
/// has them.
const OPENING: &[u8] = br#"{"archive":"#;

/// The archive file: canonical JSON of the document with its detached signature.
///
/// The document is written straight into the file, which is its one copy in memory: signed in
/// place, then followed by the signature.
pub fn seal(document: &ArchiveDocument, key: &FiscalKey) -> serde_json::Result<String> {
    let mut file = OPENING.to_vec();
    write_canonical(&mut file, document)?;
    let signed = std::str::from_utf8(&file[OPENING.len()..]).map_err(serde::ser::Error::custom)?;
    let signature = DetachedSignature {
        algorithm: ALGORITHM.to_owned(),
        key_id: key.key_id().to_owned(),
        value: key.sign(signed),
    };
    close(&mut file, &signature)?;
    String::from_utf8(file).map_err(serde::ser::Error::custom)
}

/// Ends a file whose document is written: the signature member and the closing brace.
fn close(file: &mut Vec<u8>, signature: &DetachedSignature) -> serde_json::Result<()> {
    file.extend_from_slice(br#","signature":"#);
    write_canonical(&mut *file, signature)?;
    file.push(b'}');
    Ok(())
}

/// SHA-256 of the file, hex: what the journal's archive entry seals.
pub fn file_digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Why an archive file was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ArchiveError {
    #[error("the file is not JSON")]
    NotJson,
    #[error("the file is not in canonical form (it was changed after it was made)")]
    NotCanonical,
    #[error("the file is not a till archive ({0})")]
    Shape(String),
    #[error("the archive's signature does not verify")]
    Signature,
    #[error("the journal inside does not hold: {0}")]
    Journal(Failure),
}

/// What a verified archive covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    pub register_id: String,
    pub period_from: String,
    pub period_to: String,
    pub entries: usize,
}

/// Verifies an archive file offline: its form, its signature, then the journal it holds.
///
/// The file is in canonical form when it is, byte for byte, what sealing the document it
/// holds writes; the signature is then checked over the document's text as it stands.
pub fn verify_file(bytes: &[u8]) -> Result<Verified, ArchiveError> {
    let text = std::str::from_utf8(bytes).map_err(|_| ArchiveError::NotJson)?;
    let file: ArchiveFile<'_> = serde_json::from_str(text).map_err(|e| match e.classify() {
        Category::Data => ArchiveError::Shape(e.to_string()),
        _ => ArchiveError::NotJson,
    })?;
    let document: ArchiveDocument =
        serde_json::from_str(file.archive.get()).map_err(|e| ArchiveError::Shape(e.to_string()))?;
    let mut canonical = Vec::with_capacity(bytes.len());
    canonical.extend_from_slice(OPENING);
    write_canonical(&mut canonical, &document)
        .and_then(|()| close(&mut canonical, &file.signature))
        .map_err(|e| ArchiveError::Shape(e.to_string()))?;
    if canonical != bytes {
        return Err(ArchiveError::NotCanonical);
    }
    drop(canonical);
    if document.format != FORMAT {
        return Err(ArchiveError::Shape(format!("format {}", document.format)));
    }
    let key = document
        .keys
        .iter()
        .find(|k| k["kid"].as_str() == Some(file.signature.key_id.as_str()))
        .ok_or(ArchiveError::Signature)?;
    if file.signature.algorithm != ALGORITHM || !super::verify(key, file.archive.get(), &file.signature.value) {
        return Err(ArchiveError::Signature);
    }
    let entries = audit::audit(&journal(&document)).map_err(ArchiveError::Journal)?;
    Ok(Verified {
        register_id: document.register_id,
        period_from: document.period_from,
        period_to: document.period_to,
        entries,
    })
}

/// The journal an archive holds, ready for the audit.
pub fn journal(document: &ArchiveDocument) -> Journal {
    Journal {
        register_id: document.register_id.clone(),
        chains: document
            .chains
            .iter()
            .map(|c| Chain {
                kind: c.kind,
                anchor: (c.previous_seq > 0).then(|| Anchor {
                    seq: c.previous_seq,
                    signature: c.previous_signature.clone(),
                }),
                entries: c.entries.clone(),
                head: None,
            })
            .collect(),
        sales: document
            .sales
            .iter()
            .map(|s| (s.transaction_id.clone(), s.clone()))
            .collect(),
        shifts: document
            .shifts
            .iter()
            .map(|s| (s.session_id.clone(), s.clone()))
            .collect(),
        closures: document.closures.iter().map(|c| (c.seq, c.record.clone())).collect(),
        events: document.events.iter().map(|e| (e.seq, e.record.clone())).collect(),
        duplicates: document.duplicates.iter().map(|d| (d.seq, d.record.clone())).collect(),
        archives: document.archives.iter().map(|a| (a.seq, a.record.clone())).collect(),
        keys: document
            .keys
            .iter()
            .filter_map(|k| Some((k["kid"].as_str()?.to_owned(), k.clone())))
            .collect(),
        opening: Opening {
            grand_total_cents: document.opening.grand_total_cents,
            grand_total_abs_cents: document.opening.grand_total_abs_cents,
            last_ticket_seq: document.opening.last_ticket_seq,
        },
        whole: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fiscal::payload::{self, tests_support::sale};

    fn document(key: &FiscalKey) -> ArchiveDocument {
        let mut entries = Vec::new();
        let mut sales = Vec::new();
        let mut previous: Option<String> = None;
        for n in 1..=3 {
            let mut record = sale(100 * n);
            record.transaction_id = format!("t{n}");
            let text = payload::ticket(&record, n, previous.as_deref());
            let entry = Entry {
                register_id: "till-1".into(),
                kind: ChainKind::Ticket,
                seq: n,
                signature: key.sign(&text),
                payload: text,
                previous_signature: previous.clone(),
                key_id: key.key_id().into(),
                algorithm: ALGORITHM.into(),
                reference: record.transaction_id.clone(),
                created_at: jiff::Timestamp::UNIX_EPOCH,
            };
            previous = Some(entry.signature.clone());
            entries.push(entry);
            sales.push(record);
        }
        ArchiveDocument {
            format: FORMAT.into(),
            archive_id: "arc_1".into(),
            software: Software {
                name: "till".into(),
                version: "0.1.0".into(),
            },
            register_id: "till-1".into(),
            period_from: "2026-03-01".into(),
            period_to: "2026-03-31".into(),
            chains: vec![ArchiveChain {
                kind: ChainKind::Ticket,
                previous_seq: 0,
                previous_signature: None,
                entries,
            }],
            sales,
            keys: vec![key.public_jwk().clone()],
            ..ArchiveDocument::default()
        }
    }

    #[test]
    fn the_sealed_file_is_the_canonical_text_of_the_whole_file() {
        // Archives made before the document was streamed went through a `Value` of the file;
        // they must keep verifying, so both ways must give the same bytes.
        let key = FiscalKey::from_secret_bytes(&[8u8; 32]).unwrap();
        let document = document(&key);
        let file = seal(&document, &key).unwrap();
        let read: Value = serde_json::from_str(&file).unwrap();
        let whole = serde_json::json!({
            "archive": serde_json::to_value(&document).unwrap(),
            "signature": read["signature"],
        });
        assert_eq!(file, crate::canonical::to_canonical_string(&whole));
    }

    #[test]
    fn an_archive_verifies_and_any_changed_byte_breaks_it() {
        let key = FiscalKey::from_secret_bytes(&[8u8; 32]).unwrap();
        let file = seal(&document(&key), &key).unwrap().into_bytes();
        let verified = verify_file(&file).unwrap();
        assert_eq!(verified.entries, 3);
        for position in (0..file.len()).step_by(7) {
            let mut changed = file.clone();
            changed[position] = if changed[position] == b'0' { b'1' } else { b'0' };
            assert!(verify_file(&changed).is_err(), "byte {position} changed unnoticed");
        }
    }
}
