//! The fiscal journal's signed strings and their signatures (NF525 practice): ECDSA P-256 over
//! SHA-256, base64url without padding, each entry chained to the previous one of its chain.
//!
//! [`payload`] builds the signed strings; [`audit`] checks a journal from its entries and the
//! business records they seal, whether read from the database or from an archive.

pub mod archive;
pub mod audit;
pub mod jet;
pub mod payload;
pub mod proof;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jiff::Timestamp;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use p256::pkcs8::{DecodePrivateKey, EncodePrivateKey, LineEnding};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub const ALGORITHM: &str = "ES256";

/// The chains of one register; each has its own gapless sequence from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
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

    pub const ALL: [ChainKind; 5] = [
        ChainKind::Ticket,
        ChainKind::Closure,
        ChainKind::Duplicate,
        ChainKind::Event,
        ChainKind::Archive,
    ];

    pub fn parse(text: &str) -> Option<ChainKind> {
        ChainKind::ALL.into_iter().find(|k| k.as_str() == text)
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

    /// The key in PKCS#8 DER, for a signer of the caller's own (see the store's sealer).
    pub fn to_pkcs8_der(&self) -> Vec<u8> {
        self.key
            .to_pkcs8_der()
            .map(|der| der.as_bytes().to_vec())
            .unwrap_or_default()
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
    PublicKey::from_jwk(jwk).is_some_and(|key| key.verifies(payload, signature))
}

/// A journal's public key, read from its JWK once for all the entries it signed.
///
/// Verification goes through ring, as the store's signing does, several times faster than the
/// p256 crate, and an audit checks every entry of a register's journal (docs/performance.md,
/// "Ticket verification through ring").
pub struct PublicKey {
    key: ring::signature::UnparsedPublicKey<[u8; 65]>,
}

impl PublicKey {
    /// `None` unless `jwk` holds the two 32-byte coordinates of a point on P-256.
    pub fn from_jwk(jwk: &Value) -> Option<PublicKey> {
        let coordinate = |name: &str| jwk[name].as_str().and_then(|text| URL_SAFE_NO_PAD.decode(text).ok());
        let (x, y) = (coordinate("x")?, coordinate("y")?);
        if x.len() != 32 || y.len() != 32 {
            return None;
        }
        // Uncompressed SEC1: 0x04 || x || y.
        let mut point = [0x04; 65];
        point[1..33].copy_from_slice(&x);
        point[33..].copy_from_slice(&y);
        // ring checks the point at each verification; refusing it here tells a bad key from a
        // bad signature.
        VerifyingKey::from_sec1_bytes(&point).ok()?;
        Some(PublicKey {
            key: ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, point),
        })
    }

    /// The point in uncompressed SEC1 form: two keys are the same key when these are equal,
    /// whatever their JWK's other members say.
    pub fn sec1_bytes(&self) -> &[u8] {
        self.key.as_ref()
    }

    /// Whether `signature` (base64url of the raw `r || s`) is this key's signature of `payload`.
    pub fn verifies(&self, payload: &str, signature: &str) -> bool {
        URL_SAFE_NO_PAD
            .decode(signature)
            .is_ok_and(|raw| self.key.verify(payload.as_bytes(), &raw).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_public_key_is_read_only_from_a_point_on_the_curve() {
        let key = key();
        let payload = "2000:1450,1450,20260301093000,till-1,1,SALE,t-1,Y,";
        let signature = key.sign(payload);
        let public = PublicKey::from_jwk(key.public_jwk()).expect("the key's own JWK");
        assert!(public.verifies(payload, &signature));
        assert!(!public.verifies(payload, &signature[..signature.len() - 2]));

        let mut x = URL_SAFE_NO_PAD.decode(key.public_jwk()["x"].as_str().unwrap()).unwrap();
        x[31] ^= 1;
        let mut moved = key.public_jwk().clone();
        moved["x"] = json!(URL_SAFE_NO_PAD.encode(&x));
        assert!(PublicKey::from_jwk(&moved).is_none(), "a point off the curve");
        moved["x"] = json!(URL_SAFE_NO_PAD.encode(&x[..31]));
        assert!(PublicKey::from_jwk(&moved).is_none(), "a short coordinate");
        let mut no_y = key.public_jwk().clone();
        no_y.as_object_mut().unwrap().remove("y");
        assert!(PublicKey::from_jwk(&no_y).is_none());
        assert!(!verify(&no_y, payload, &signature));
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
}

/// One journal entry as stored.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
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
