//! The proof a receipt prints as a QR code: that this register sealed this ticket with this
//! total at this time, checkable offline by anyone holding the deployment's published keys
//! (`GET /v1/fiscal/keys`), without trusting the shop.
//!
//! `TILL1:{registerId}:{ticketSeq}:{totalCents}:{issuedAt}:{keyId}:{signature}`, the instant
//! written `YYYYMMDDHHMMSS` in UTC, the signature the fiscal key's (ECDSA P-256, deterministic,
//! base64url of `r || s`) over exactly the text before it. A deterministic signature makes every
//! print of a ticket carry the same code. A register id may hold `:`; the other fields cannot,
//! so the text is read from its end.

use super::FiscalKey;
use super::archive::KeySet;
use super::payload::compact_timestamp;
use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::TimeZone;

/// What starts every proof, naming its layout.
pub const PREFIX: &str = "TILL1:";

/// What a proof says about its ticket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProvenTicket {
    pub register_id: String,
    pub ticket_seq: i64,
    /// Negative for a return.
    pub total_cents: i64,
    /// To the second, in UTC.
    pub issued_at: Timestamp,
}

impl ProvenTicket {
    /// The signed part: everything before the signature.
    fn signed_text(&self, key_id: &str) -> String {
        format!(
            "{PREFIX}{}:{}:{}:{}:{key_id}",
            self.register_id,
            self.ticket_seq,
            self.total_cents,
            compact_timestamp(self.issued_at)
        )
    }

    /// The proof of this ticket under `key`.
    pub fn prove(&self, key: &FiscalKey) -> String {
        let signed = self.signed_text(key.key_id());
        let signature = key.sign(&signed);
        format!("{signed}:{signature}")
    }
}

/// Why a text does not prove a ticket.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    #[error("it is not a till receipt proof (TILL1:register:ticket:total:issued:key:signature)")]
    NotAProof,
    #[error("it was signed with key {0}, which the key set does not hold")]
    UnknownKey(String),
    #[error("its signature does not verify: the ticket's register, number, total or time was changed")]
    Forged,
}

/// Checks `text` against the keys of `keys`: the ticket it proves, and the id of the key
/// that signed it.
pub fn verify(text: &str, keys: &KeySet) -> Result<(ProvenTicket, String), ProofError> {
    let text = text.trim();
    let body = text.strip_prefix(PREFIX).ok_or(ProofError::NotAProof)?;
    let mut fields = body.rsplitn(6, ':');
    let (Some(signature), Some(key_id), Some(issued), Some(total), Some(seq), Some(register_id)) = (
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
    ) else {
        return Err(ProofError::NotAProof);
    };
    let ticket = ProvenTicket {
        register_id: register_id.to_owned(),
        ticket_seq: whole_number(seq).ok_or(ProofError::NotAProof)?,
        total_cents: whole_number(total).ok_or(ProofError::NotAProof)?,
        issued_at: compact_instant(issued).ok_or(ProofError::NotAProof)?,
    };
    if register_id.is_empty() || ticket.signed_text(key_id).len() + 1 + signature.len() != text.len() {
        // A field written another way than the proof writes it (`+5`, `05`) is not this layout.
        return Err(ProofError::NotAProof);
    }
    let key = keys
        .key(key_id)
        .ok_or_else(|| ProofError::UnknownKey(key_id.to_owned()))?;
    let signed = &text[..text.len() - signature.len() - 1];
    if !key.verifies(signed, signature) {
        return Err(ProofError::Forged);
    }
    Ok((ticket, key_id.to_owned()))
}

/// An integer as the proof writes it: an optional `-`, then digits without a leading zero.
fn whole_number(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && text != "-0";
    canonical.then(|| text.parse().ok()).flatten()
}

/// `YYYYMMDDHHMMSS` in UTC.
fn compact_instant(text: &str) -> Option<Timestamp> {
    if text.len() != 14 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let at = DateTime::strptime("%Y%m%d%H%M%S", text).ok()?;
    at.to_zoned(TimeZone::UTC).ok().map(|zoned| zoned.timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(seed: u8) -> FiscalKey {
        FiscalKey::from_secret_bytes(&[seed; 32]).unwrap()
    }

    fn keys(of: &[&FiscalKey]) -> KeySet {
        let set = json!({"keys": of.iter().map(|k| k.public_jwk().clone()).collect::<Vec<_>>()});
        KeySet::from_json(set.to_string().as_bytes()).unwrap()
    }

    fn ticket() -> ProvenTicket {
        ProvenTicket {
            register_id: "paris:r1".into(),
            ticket_seq: 42,
            total_cents: -1450,
            issued_at: "2026-03-30T09:15:07Z".parse().unwrap(),
        }
    }

    #[test]
    fn a_proof_reads_back_to_its_ticket_under_the_published_key() {
        let signer = key(7);
        let proof = ticket().prove(&signer);
        assert!(proof.starts_with("TILL1:paris:r1:42:-1450:20260330091507:"), "{proof}");
        assert_eq!(proof, ticket().prove(&signer), "every print carries the same code");
        let (proven, kid) = verify(&proof, &keys(&[&key(3), &signer])).unwrap();
        assert_eq!((proven, kid.as_str()), (ticket(), signer.key_id()));
    }

    #[test]
    fn a_changed_field_or_another_key_fails() {
        let signer = key(7);
        let proof = ticket().prove(&signer);
        let trusted = keys(&[&signer]);
        for (from, to) in [
            (":42:", ":43:"),
            (":-1450:", ":-1451:"),
            ("paris:r1", "paris:r2"),
            ("0915", "0916"),
        ] {
            let forged = proof.replacen(from, to, 1);
            assert_eq!(verify(&forged, &trusted), Err(ProofError::Forged), "{forged}");
        }
        assert_eq!(
            verify(&proof, &keys(&[&key(3)])),
            Err(ProofError::UnknownKey(signer.key_id().to_owned()))
        );
        // Signed by another key under this key's id.
        let mut impostor = ticket().prove(&key(3));
        impostor = impostor.replace(key(3).key_id(), signer.key_id());
        assert_eq!(verify(&impostor, &trusted), Err(ProofError::Forged));
    }

    #[test]
    fn a_text_of_another_layout_is_not_a_proof() {
        let signer = key(7);
        let trusted = keys(&[&signer]);
        let proof = ticket().prove(&signer);
        for text in [
            "",
            "TILL1:",
            "https://example.com",
            &proof.replacen("TILL1", "TILL2", 1),
            &proof.replacen(":42:", ":042:", 1),
            &proof.replacen(":42:", ":+42:", 1),
            &proof.replacen("20260330091507", "2026-03-30", 1),
            &proof.replacen("20260330091507", "20261330091507", 1),
            &proof.replacen("TILL1:paris:r1", "TILL1:", 1),
        ] {
            assert_eq!(verify(text, &trusted), Err(ProofError::NotAProof), "{text}");
        }
    }

    proptest::proptest! {
        /// No text makes the check panic.
        #[test]
        fn any_text_is_checked_or_refused(text in "TILL1:\\PC{0,80}") {
            let _ = verify(&text, &keys(&[&key(7)]));
        }
    }
}
