//! The fiscal journal's signed strings and their signatures (NF525 practice): ECDSA P-256 over
//! SHA-256, base64url without padding, each entry chained to the previous one of its chain.

use crate::money::Cents;
use crate::pricing::VatTotal;
use crate::sale::SaleType;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jiff::Timestamp;
use p256::ecdsa::signature::{Signer, Verifier};
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use p256::pkcs8::{DecodePrivateKey, EncodePrivateKey, LineEnding};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub const ALGORITHM: &str = "ES256";

/// The chains of one register; each has its own gapless sequence from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChainKind {
    Ticket,
    Duplicate,
    Closure,
    Event,
    Archive,
}

impl ChainKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChainKind::Ticket => "ticket",
            ChainKind::Duplicate => "duplicate",
            ChainKind::Closure => "closure",
            ChainKind::Event => "event",
            ChainKind::Archive => "archive",
        }
    }

    pub fn parse(text: &str) -> Option<ChainKind> {
        [
            ChainKind::Ticket,
            ChainKind::Duplicate,
            ChainKind::Closure,
            ChainKind::Event,
            ChainKind::Archive,
        ]
        .into_iter()
        .find(|k| k.as_str() == text)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("not a PKCS#8 PEM P-256 private key")]
    Pem,
    #[error("not a valid P-256 secret scalar")]
    Scalar,
}

/// The key sealing the journal. Its id is the RFC 7638 thumbprint of its public JWK.
pub struct FiscalKey {
    key: SigningKey,
    key_id: String,
    jwk: Value,
}

impl FiscalKey {
    pub fn from_pkcs8_pem(pem: &str) -> Result<FiscalKey, KeyError> {
        SigningKey::from_pkcs8_pem(pem)
            .map(FiscalKey::new)
            .map_err(|_| KeyError::Pem)
    }

    /// From 32 random bytes (the caller brings the randomness; the core has none).
    pub fn from_secret_bytes(bytes: &[u8; 32]) -> Result<FiscalKey, KeyError> {
        SigningKey::from_slice(bytes)
            .map(FiscalKey::new)
            .map_err(|_| KeyError::Scalar)
    }

    fn new(key: SigningKey) -> FiscalKey {
        let jwk = public_jwk(key.verifying_key());
        let key_id = thumbprint(&jwk);
        let mut jwk = jwk;
        jwk["kid"] = json!(key_id);
        jwk["alg"] = json!(ALGORITHM);
        jwk["use"] = json!("sig");
        FiscalKey { key, key_id, jwk }
    }

    pub fn to_pkcs8_pem(&self) -> String {
        self.key
            .to_pkcs8_pem(LineEnding::LF)
            .map(|pem| pem.to_string())
            .unwrap_or_default()
    }

    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// `{"kty":"EC","crv":"P-256","x","y","kid","alg","use"}`
    pub fn public_jwk(&self) -> &Value {
        &self.jwk
    }

    /// The signature of `payload`, base64url of the raw `r || s`.
    pub fn sign(&self, payload: &str) -> String {
        let signature: Signature = self.key.sign(payload.as_bytes());
        URL_SAFE_NO_PAD.encode(signature.to_bytes())
    }
}

fn public_jwk(key: &VerifyingKey) -> Value {
    let point = key.to_sec1_bytes();
    // Uncompressed SEC1: 0x04 || x (32 bytes) || y (32 bytes).
    json!({
        "kty": "EC",
        "crv": "P-256",
        "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
        "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
    })
}

/// RFC 7638: SHA-256 over the required members in lexicographic order, base64url.
fn thumbprint(jwk: &Value) -> String {
    let canonical = format!(
        r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
        jwk["x"].as_str().unwrap_or_default(),
        jwk["y"].as_str().unwrap_or_default()
    );
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

/// Whether `signature` is a valid signature of `payload` by the key `jwk` describes.
pub fn verify(jwk: &Value, payload: &str, signature: &str) -> bool {
    let coordinate = |name: &str| jwk[name].as_str().and_then(|text| URL_SAFE_NO_PAD.decode(text).ok());
    let (Some(x), Some(y)) = (coordinate("x"), coordinate("y")) else {
        return false;
    };
    if x.len() != 32 || y.len() != 32 {
        return false;
    }
    let mut point = Vec::with_capacity(65);
    point.push(0x04);
    point.extend_from_slice(&x);
    point.extend_from_slice(&y);
    let Ok(key) = VerifyingKey::from_sec1_bytes(&point) else {
        return false;
    };
    let Some(signature) = URL_SAFE_NO_PAD
        .decode(signature)
        .ok()
        .and_then(|raw| Signature::from_slice(&raw).ok())
    else {
        return false;
    };
    key.verify(payload.as_bytes(), &signature).is_ok()
}

/// A field of a signed string: commas would split it, so they become semicolons.
fn field(text: &str) -> String {
    text.replace(',', ";")
}

/// `YYYYMMDDHHMMSS` in UTC.
pub fn compact_timestamp(at: Timestamp) -> String {
    at.strftime("%Y%m%d%H%M%S").to_string()
}

/// `rate:total|rate:total` with rates in hundredths of a percent, highest rate first.
pub fn vat_field(vat: &[VatTotal]) -> String {
    let mut sorted: Vec<&VatTotal> = vat.iter().collect();
    sorted.sort_by_key(|v| std::cmp::Reverse(v.rate));
    sorted
        .iter()
        .map(|v| format!("{}:{}", v.rate.hundredths(), v.total.get()))
        .collect::<Vec<_>>()
        .join("|")
}

/// What a ticket entry seals.
pub struct TicketFields<'a> {
    pub vat: &'a [VatTotal],
    pub total: Cents,
    pub at: Timestamp,
    pub register_id: &'a str,
    pub seq: i64,
    pub kind: SaleType,
    pub transaction_id: &'a str,
    pub previous_signature: Option<&'a str>,
}

/// The signed string of a ticket: VAT breakdown, total, timestamp, register, sequence, type,
/// transaction id, first-entry flag, previous signature.
pub fn ticket_payload(t: &TicketFields<'_>) -> String {
    [
        vat_field(t.vat),
        t.total.get().to_string(),
        compact_timestamp(t.at),
        field(t.register_id),
        t.seq.to_string(),
        t.kind.fiscal_code().to_owned(),
        field(t.transaction_id),
        if t.seq == 1 { "Y" } else { "N" }.to_owned(),
        t.previous_signature.unwrap_or_default().to_owned(),
    ]
    .join(",")
}

/// What a shift closure (Z report) seals.
pub struct ShiftClosureFields<'a> {
    pub vat: &'a [VatTotal],
    pub total: Cents,
    pub sales_count: i64,
    pub at: Timestamp,
    pub register_id: &'a str,
    pub seq: i64,
    pub session_id: &'a str,
    pub opened_at: Timestamp,
    pub previous_signature: Option<&'a str>,
}

/// The signed string of a shift closure: VAT breakdown of the shift, its total and sale count,
/// timestamp, register, sequence, `SHIFT`, the session and its period, flag, previous signature.
pub fn shift_closure_payload(c: &ShiftClosureFields<'_>) -> String {
    [
        vat_field(c.vat),
        c.total.get().to_string(),
        c.sales_count.to_string(),
        compact_timestamp(c.at),
        field(c.register_id),
        c.seq.to_string(),
        "SHIFT".to_owned(),
        field(c.session_id),
        format!("{}|{}", compact_timestamp(c.opened_at), compact_timestamp(c.at)),
        if c.seq == 1 { "Y" } else { "N" }.to_owned(),
        c.previous_signature.unwrap_or_default().to_owned(),
    ]
    .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::money::VatRate;

    fn key() -> FiscalKey {
        FiscalKey::from_secret_bytes(&[7u8; 32]).unwrap()
    }

    #[test]
    fn signatures_verify_with_the_published_key_only() {
        let key = key();
        let signature = key.sign("2000:1450,1450,20260301093000,till-1,1,SALE,t-1,Y,");
        assert!(verify(
            key.public_jwk(),
            "2000:1450,1450,20260301093000,till-1,1,SALE,t-1,Y,",
            &signature
        ));
        assert!(!verify(
            key.public_jwk(),
            "2000:1450,1451,20260301093000,till-1,1,SALE,t-1,Y,",
            &signature
        ));
        let other = FiscalKey::from_secret_bytes(&[9u8; 32]).unwrap();
        assert!(!verify(
            other.public_jwk(),
            "2000:1450,1450,20260301093000,till-1,1,SALE,t-1,Y,",
            &signature
        ));
        assert!(!verify(key.public_jwk(), "x", "not base64!"));
    }

    #[test]
    fn keys_round_trip_through_pem_and_keep_their_id() {
        let key = key();
        let again = FiscalKey::from_pkcs8_pem(&key.to_pkcs8_pem()).unwrap();
        assert_eq!(again.key_id(), key.key_id());
        assert_eq!(key.key_id().len(), 43);
        assert_eq!(key.public_jwk()["kid"], json!(key.key_id()));
        assert!(FiscalKey::from_pkcs8_pem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----").is_err());
    }

    #[test]
    fn the_ticket_payload_follows_the_published_layout() {
        let vat = [
            VatTotal {
                rate: VatRate::from_hundredths(550).unwrap(),
                total: Cents::new(390).unwrap(),
                vat: Cents::new(20).unwrap(),
            },
            VatTotal {
                rate: VatRate::from_hundredths(2000).unwrap(),
                total: Cents::new(1450).unwrap(),
                vat: Cents::new(242).unwrap(),
            },
        ];
        let at = "2026-03-01T09:30:00Z".parse().unwrap();
        let first = ticket_payload(&TicketFields {
            vat: &vat,
            total: Cents::new(1840).unwrap(),
            at,
            register_id: "till,1",
            seq: 1,
            kind: SaleType::Sale,
            transaction_id: "t-1",
            previous_signature: None,
        });
        assert_eq!(first, "2000:1450|550:390,1840,20260301093000,till;1,1,SALE,t-1,Y,");
        let second = ticket_payload(&TicketFields {
            vat: &vat,
            total: Cents::new(1840).unwrap(),
            at,
            register_id: "till-1",
            seq: 2,
            kind: SaleType::Return,
            transaction_id: "t-2",
            previous_signature: Some("abc"),
        });
        assert!(second.ends_with(",2,RETURN,t-2,N,abc"));
    }
}

/// One journal entry as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub register_id: String,
    pub kind: ChainKind,
    pub seq: i64,
    /// The exact string that was signed.
    pub payload: String,
    pub signature: String,
    pub previous_signature: Option<String>,
    pub key_id: String,
    pub algorithm: String,
    /// The business record it seals.
    pub reference: String,
    pub created_at: Timestamp,
}

/// The first entry of a chain that does not hold, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainFailure {
    pub kind: ChainKind,
    pub seq: i64,
    pub reason: String,
}

/// Checks one chain, given in sequence order: contiguous sequence from 1, each entry linked to
/// the previous signature (in its record and inside its signed string), the first-entry flag
/// on entry 1 only, and every signature valid under the key it names. `keys` maps key ids to
/// public JWKs. Returns how many entries were checked.
pub fn verify_chain(
    kind: ChainKind,
    entries: &[Entry],
    keys: &std::collections::HashMap<String, Value>,
) -> Result<usize, ChainFailure> {
    let mut previous: Option<&str> = None;
    for (index, entry) in entries.iter().enumerate() {
        let expected = index as i64 + 1;
        let fail = |reason: String| ChainFailure {
            kind,
            seq: entry.seq,
            reason,
        };
        if entry.seq != expected {
            return Err(fail(format!(
                "sequence gap: expected entry {expected}, found {}",
                entry.seq
            )));
        }
        if entry.previous_signature.as_deref() != previous {
            return Err(fail("the link to the previous entry's signature is broken".to_owned()));
        }
        let flag = if entry.seq == 1 { "Y" } else { "N" };
        if !entry
            .payload
            .ends_with(&format!(",{flag},{}", previous.unwrap_or_default()))
        {
            return Err(fail(
                "the signed string does not end with its flag and the previous signature".to_owned(),
            ));
        }
        if entry.algorithm != ALGORITHM {
            return Err(fail(format!("unexpected algorithm {}", entry.algorithm)));
        }
        let Some(jwk) = keys.get(&entry.key_id) else {
            return Err(fail(format!("signed with unknown key {}", entry.key_id)));
        };
        if !verify(jwk, &entry.payload, &entry.signature) {
            return Err(fail("the signature does not verify".to_owned()));
        }
        previous = Some(&entry.signature);
    }
    Ok(entries.len())
}

#[cfg(test)]
mod chain_tests {
    use super::*;
    use std::collections::HashMap;

    fn chain(key: &FiscalKey, count: i64) -> Vec<Entry> {
        let mut entries: Vec<Entry> = Vec::new();
        for seq in 1..=count {
            let previous = entries.last().map(|e| e.signature.clone());
            let flag = if seq == 1 { "Y" } else { "N" };
            let payload = format!(
                "2000:100,100,20260301093000,r1,{seq},SALE,t{seq},{flag},{}",
                previous.clone().unwrap_or_default()
            );
            entries.push(Entry {
                register_id: "r1".into(),
                kind: ChainKind::Ticket,
                seq,
                signature: key.sign(&payload),
                payload,
                previous_signature: previous,
                key_id: key.key_id().into(),
                algorithm: ALGORITHM.into(),
                reference: format!("t{seq}"),
                created_at: Timestamp::UNIX_EPOCH,
            });
        }
        entries
    }

    fn keys(key: &FiscalKey) -> HashMap<String, Value> {
        HashMap::from([(key.key_id().to_owned(), key.public_jwk().clone())])
    }

    #[test]
    fn an_intact_chain_verifies() {
        let key = FiscalKey::from_secret_bytes(&[3u8; 32]).unwrap();
        assert_eq!(verify_chain(ChainKind::Ticket, &chain(&key, 5), &keys(&key)), Ok(5));
    }

    #[test]
    fn gaps_broken_links_and_altered_payloads_are_named() {
        let key = FiscalKey::from_secret_bytes(&[3u8; 32]).unwrap();
        let mut gap = chain(&key, 5);
        gap.remove(2);
        assert_eq!(verify_chain(ChainKind::Ticket, &gap, &keys(&key)).unwrap_err().seq, 4);
        let mut altered = chain(&key, 5);
        altered[1].payload = altered[1].payload.replace("2000:100,100", "2000:100,90");
        let failure = verify_chain(ChainKind::Ticket, &altered, &keys(&key)).unwrap_err();
        assert_eq!(
            (failure.seq, failure.reason.as_str()),
            (2, "the signature does not verify")
        );
        let mut relinked = chain(&key, 3);
        relinked[2].previous_signature = Some("forged".into());
        assert_eq!(
            verify_chain(ChainKind::Ticket, &relinked, &keys(&key)).unwrap_err().seq,
            3
        );
        let stranger = FiscalKey::from_secret_bytes(&[4u8; 32]).unwrap();
        assert!(verify_chain(ChainKind::Ticket, &chain(&key, 2), &keys(&stranger)).is_err());
    }
}
