//! Fiscal archives: a period of one register's journal in one self-contained file that an
//! auditor verifies without the database or the service.
//!
//! The file is canonical JSON (keys sorted, no whitespace) with two members: `archive`, the
//! document, and `signature`, a detached ECDSA P-256 signature over the canonical bytes of the
//! document. The verifier refuses a file that is not in canonical form, so that any change of
//! any byte is detected: either the form breaks or the signature does.

use super::audit::{self, Anchor, Chain, Failure, Journal, Opening};
use super::payload::{ArchiveRecord, ClosureRecord, DuplicateRecord, EventRecord, SaleRecord, ShiftRecord};
use super::{ALGORITHM, ChainKind, Entry, FiscalKey, PublicKey};
use crate::canonical::write_canonical;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::error::Category;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};

pub const FORMAT: &str = "till-nf525-archive/1";

/// The largest archive file the verifier reads, 1 GiB: a year of a busy register. Verifying
/// takes about four times the file's size in memory, so a larger file is refused before it is
/// read rather than read whole.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// The largest key set file read: the keys of a lifetime of rotations fit many times over.
pub const MAX_KEY_SET_BYTES: u64 = 1 << 20;

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
    #[error("the file holds {bytes} bytes, more than the {MAX_FILE_BYTES} an archive may hold")]
    TooLarge { bytes: u64 },
    #[error("the file is not JSON")]
    NotJson,
    #[error("the file is not in canonical form (it was changed after it was made)")]
    NotCanonical,
    #[error("the file is not a till archive ({0})")]
    Shape(String),
    #[error("the archive's signature does not verify")]
    Signature,
    #[error("the archive carries two different keys with the id {0}")]
    DuplicateKey(String),
    #[error("the archive is signed with key {0}, which is not in the trusted key set")]
    UntrustedKey(String),
    #[error("the archive's key {0} is not the trusted key of that id: its public key differs")]
    KeyMismatch(String),
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
    /// The ids of the keys its signatures were verified with: the seal's, then the entries'
    /// in key order, each once.
    pub key_ids: Vec<String>,
}

/// Whose public keys the archive's signatures are checked with.
#[derive(Clone, Copy)]
pub enum Trust<'a> {
    /// The keys the archive carries. This proves the file is whole and self-consistent, not
    /// who made it: a forger who re-signs everything with a key of their own passes.
    ArchiveKeys,
    /// A key set the auditor obtained independently (the answer of `GET /v1/fiscal/keys`):
    /// every signature must verify under one of its keys, matched by id and by public key.
    KeySet(&'a KeySet),
}

/// A JWK set of the journal's public keys, as `GET /v1/fiscal/keys` answers it:
/// `{"keys": [{"kty": "EC", "crv": "P-256", "x", "y", "kid", ...}]}`.
pub struct KeySet {
    /// By key id: the JWK as given and its point.
    keys: BTreeMap<String, (Value, PublicKey)>,
}

/// Why a key set file was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeySetError {
    #[error("it holds {bytes} bytes, more than the {MAX_KEY_SET_BYTES} a key set may hold")]
    TooLarge { bytes: u64 },
    #[error("it is not a JWK set, an object with a `keys` array ({0})")]
    NotAKeySet(String),
    #[error("it holds no key")]
    Empty,
    #[error("its key number {0} is not a P-256 public key with a `kid`")]
    NotAKey(usize),
    #[error("it holds two different keys with the id {0}")]
    Conflict(String),
}

impl KeySet {
    /// Reads the text of a JWK set; every key in it must be an EC P-256 public key with a
    /// `kid`.
    pub fn from_json(bytes: &[u8]) -> Result<KeySet, KeySetError> {
        let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if size > MAX_KEY_SET_BYTES {
            return Err(KeySetError::TooLarge { bytes: size });
        }
        #[derive(Deserialize)]
        struct JwkSet {
            keys: Vec<Value>,
        }
        let set: JwkSet = serde_json::from_slice(bytes).map_err(|e| KeySetError::NotAKeySet(e.to_string()))?;
        if set.keys.is_empty() {
            return Err(KeySetError::Empty);
        }
        let mut keys = BTreeMap::new();
        for (n, jwk) in set.keys.into_iter().enumerate() {
            let elliptic = jwk["kty"] == "EC" && jwk["crv"] == "P-256";
            let (Some(kid), Some(key), true) = (jwk["kid"].as_str(), PublicKey::from_jwk(&jwk), elliptic) else {
                return Err(KeySetError::NotAKey(n.saturating_add(1)));
            };
            let kid = kid.to_owned();
            if let Some((_, known)) = keys.get(&kid)
                && !same_key(known, &key)
            {
                return Err(KeySetError::Conflict(kid));
            }
            keys.insert(kid, (jwk, key));
        }
        Ok(KeySet { keys })
    }

    /// The ids of the keys in the set, in order.
    pub fn key_ids(&self) -> impl Iterator<Item = &str> {
        self.keys.keys().map(String::as_str)
    }

    /// The key of id `kid`, if the set holds it.
    pub fn key(&self, kid: &str) -> Option<&PublicKey> {
        self.keys.get(kid).map(|(_, key)| key)
    }
}

fn same_key(a: &PublicKey, b: &PublicKey) -> bool {
    a.sec1_bytes() == b.sec1_bytes()
}

/// Verifies an archive file offline with the keys it carries: see [`verify`].
pub fn verify_file(bytes: &[u8]) -> Result<Verified, ArchiveError> {
    verify(bytes, Trust::ArchiveKeys)
}

/// Verifies an archive file offline: its size, its form, whose keys signed it, its
/// signature, then the journal it holds.
///
/// The file is in canonical form when it is, byte for byte, what sealing the document it
/// holds writes; the signature is then checked over the document's text as it stands. Every
/// signature, the seal's and each entry's, is verified with the keys `trust` names.
pub fn verify(bytes: &[u8], trust: Trust<'_>) -> Result<Verified, ArchiveError> {
    let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if size > MAX_FILE_BYTES {
        return Err(ArchiveError::TooLarge { bytes: size });
    }
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
    let key_ids = signing_key_ids(&file.signature, &document);
    let keys = verifying_keys(&document, &key_ids, trust)?;
    let seal_verifies = keys
        .get(&file.signature.key_id)
        .is_some_and(|jwk| super::verify(jwk, file.archive.get(), &file.signature.value));
    if file.signature.algorithm != ALGORITHM || !seal_verifies {
        return Err(ArchiveError::Signature);
    }
    let entries = audit::audit(&journal_with_keys(&document, keys)).map_err(ArchiveError::Journal)?;
    Ok(Verified {
        register_id: document.register_id,
        period_from: document.period_from,
        period_to: document.period_to,
        entries,
        key_ids,
    })
}

/// The ids of the keys the archive says signed it: the seal's first, then every entry's.
fn signing_key_ids(signature: &DetachedSignature, document: &ArchiveDocument) -> Vec<String> {
    let mut ids = vec![signature.key_id.clone()];
    let mut entries: Vec<&str> = document
        .chains
        .iter()
        .flat_map(|c| &c.entries)
        .map(|e| e.key_id.as_str())
        .filter(|id| *id != signature.key_id)
        .collect();
    entries.sort_unstable();
    entries.dedup();
    ids.extend(entries.into_iter().map(str::to_owned));
    ids
}

/// The public keys, by id, that the archive's signatures are verified with.
///
/// Trusting the archive, they are the keys it carries. Trusting a key set, they are the set's:
/// a key the archive names that is not in the set refuses it, and so does a key it carries
/// under a trusted id with another public key.
fn verifying_keys(
    document: &ArchiveDocument,
    key_ids: &[String],
    trust: Trust<'_>,
) -> Result<HashMap<String, Value>, ArchiveError> {
    let mut carried: HashMap<String, &Value> = HashMap::new();
    for jwk in &document.keys {
        let Some(kid) = jwk["kid"].as_str() else { continue };
        if carried.insert(kid.to_owned(), jwk).is_some_and(|before| before != jwk) {
            return Err(ArchiveError::DuplicateKey(kid.to_owned()));
        }
    }
    let Trust::KeySet(set) = trust else {
        return Ok(carried.into_iter().map(|(kid, jwk)| (kid, jwk.clone())).collect());
    };
    if let Some(untrusted) = key_ids.iter().find(|kid| !set.keys.contains_key(*kid)) {
        return Err(ArchiveError::UntrustedKey(untrusted.clone()));
    }
    for (kid, jwk) in &carried {
        if let Some((_, trusted)) = set.keys.get(kid)
            && !PublicKey::from_jwk(jwk).is_some_and(|key| same_key(&key, trusted))
        {
            return Err(ArchiveError::KeyMismatch(kid.clone()));
        }
    }
    Ok(set
        .keys
        .iter()
        .map(|(kid, (jwk, _))| (kid.clone(), jwk.clone()))
        .collect())
}

/// The journal an archive holds, ready for the audit, with the keys it carries.
pub fn journal(document: &ArchiveDocument) -> Journal {
    let keys = document
        .keys
        .iter()
        .filter_map(|k| Some((k["kid"].as_str()?.to_owned(), k.clone())))
        .collect();
    journal_with_keys(document, keys)
}

/// The journal an archive holds, its entries to be verified with `keys`.
fn journal_with_keys(document: &ArchiveDocument, keys: HashMap<String, Value>) -> Journal {
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
        keys,
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

    /// The file [`seal`] writes, with the signature saying it is by key `kid`.
    fn seal_as(document: &ArchiveDocument, key: &FiscalKey, kid: &str) -> Vec<u8> {
        let mut file = OPENING.to_vec();
        write_canonical(&mut file, document).unwrap();
        let signed = std::str::from_utf8(&file[OPENING.len()..]).unwrap().to_owned();
        let signature = DetachedSignature {
            algorithm: ALGORITHM.into(),
            key_id: kid.into(),
            value: key.sign(&signed),
        };
        close(&mut file, &signature).unwrap();
        file
    }

    fn key_set(keys: &[&FiscalKey]) -> KeySet {
        let jwks: Vec<Value> = keys.iter().map(|k| k.public_jwk().clone()).collect();
        KeySet::from_json(serde_json::json!({ "keys": jwks }).to_string().as_bytes()).unwrap()
    }

    #[test]
    fn against_a_key_set_every_signature_must_be_by_one_of_its_keys() {
        let key = FiscalKey::from_secret_bytes(&[8u8; 32]).unwrap();
        let forger = FiscalKey::from_secret_bytes(&[9u8; 32]).unwrap();
        let trusted = key_set(&[&key]);
        let genuine = seal(&document(&key), &key).unwrap().into_bytes();
        let verified = verify(&genuine, Trust::KeySet(&trusted)).unwrap();
        assert_eq!(verified.key_ids, [key.key_id()]);

        // Made whole by a forger: it holds on the keys it carries, not on the trusted ones.
        let forged = seal(&document(&forger), &forger).unwrap().into_bytes();
        assert_eq!(verify_file(&forged).unwrap().key_ids, [forger.key_id()]);
        assert_eq!(
            verify(&forged, Trust::KeySet(&trusted)),
            Err(ArchiveError::UntrustedKey(forger.key_id().into()))
        );

        // The forger's key under the trusted key's id, everywhere.
        let mut relabelled = document(&forger);
        relabelled.keys[0]["kid"] = serde_json::json!(key.key_id());
        for entry in &mut relabelled.chains[0].entries {
            entry.key_id = key.key_id().into();
        }
        let relabelled = seal_as(&relabelled, &forger, key.key_id());
        assert!(verify_file(&relabelled).is_ok());
        assert_eq!(
            verify(&relabelled, Trust::KeySet(&trusted)),
            Err(ArchiveError::KeyMismatch(key.key_id().into()))
        );

        // One entry, the last, signed by another key the archive carries: sealed by a
        // trusted key, still refused, and the other key is named.
        let mut mixed = document(&key);
        let last = mixed.chains[0].entries.last_mut().unwrap();
        last.signature = forger.sign(&last.payload);
        last.key_id = forger.key_id().into();
        mixed.keys.push(forger.public_jwk().clone());
        let mixed = seal(&mixed, &key).unwrap().into_bytes();
        assert_eq!(verify_file(&mixed).unwrap().key_ids, [key.key_id(), forger.key_id()]);
        assert_eq!(
            verify(&mixed, Trust::KeySet(&trusted)),
            Err(ArchiveError::UntrustedKey(forger.key_id().into()))
        );
        // With both keys trusted, it holds.
        assert!(verify(&mixed, Trust::KeySet(&key_set(&[&key, &forger]))).is_ok());
    }

    #[test]
    fn an_archive_carrying_two_keys_under_one_id_is_refused() {
        let key = FiscalKey::from_secret_bytes(&[8u8; 32]).unwrap();
        let other = FiscalKey::from_secret_bytes(&[9u8; 32]).unwrap();
        let mut document = document(&key);
        let mut impostor = other.public_jwk().clone();
        impostor["kid"] = serde_json::json!(key.key_id());
        document.keys.push(impostor);
        let file = seal(&document, &key).unwrap().into_bytes();
        assert_eq!(verify_file(&file), Err(ArchiveError::DuplicateKey(key.key_id().into())));
    }

    #[test]
    fn a_key_set_is_a_jwk_set_of_p256_public_keys_with_ids() {
        let key = FiscalKey::from_secret_bytes(&[8u8; 32]).unwrap();
        let other = FiscalKey::from_secret_bytes(&[9u8; 32]).unwrap();
        let read = |text: String| KeySet::from_json(text.as_bytes()).err();
        let jwk = key.public_jwk().clone();
        let mut no_id = jwk.clone();
        no_id.as_object_mut().unwrap().remove("kid");
        let mut rsa = jwk.clone();
        rsa["kty"] = serde_json::json!("RSA");
        let mut conflicting = other.public_jwk().clone();
        conflicting["kid"] = serde_json::json!(key.key_id());
        let set = |keys: Vec<Value>| serde_json::json!({ "keys": keys }).to_string();
        assert!(matches!(read("not json".into()), Some(KeySetError::NotAKeySet(_))));
        assert!(matches!(read(jwk.to_string()), Some(KeySetError::NotAKeySet(_))));
        assert!(matches!(
            read(r#"{"keys": {}}"#.into()),
            Some(KeySetError::NotAKeySet(_))
        ));
        assert_eq!(read(set(vec![])), Some(KeySetError::Empty));
        assert_eq!(read(set(vec![jwk.clone(), no_id])), Some(KeySetError::NotAKey(2)));
        assert_eq!(read(set(vec![rsa])), Some(KeySetError::NotAKey(1)));
        assert_eq!(read(set(vec![serde_json::json!("x")])), Some(KeySetError::NotAKey(1)));
        assert_eq!(
            read(set(vec![jwk.clone(), conflicting])),
            Some(KeySetError::Conflict(key.key_id().into()))
        );
        let large = " ".repeat(usize::try_from(MAX_KEY_SET_BYTES).unwrap() + 1);
        assert!(matches!(read(large), Some(KeySetError::TooLarge { .. })));
        // The same key twice, and a key set with members of its own, are fine.
        let answer = serde_json::json!({ "keys": [jwk.clone(), jwk], "note": "saved 2026-03-01" });
        let set = KeySet::from_json(answer.to_string().as_bytes()).unwrap();
        assert_eq!(set.key_ids().collect::<Vec<_>>(), [key.key_id()]);
    }
}
