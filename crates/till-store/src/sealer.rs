//! The signer of the journal's entries. Every entry of a chain waits for the one before it to
//! be signed, so signing sits on the one path all of a register's sales take in turn: it uses
//! ring's P-256 (about five times faster than the portable implementation the core verifies
//! with) and the operating system's random generator for each signature's secret nonce.

use crate::error::StoreError;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use std::ops::Deref;
use till_core::fiscal::FiscalKey;

pub struct Sealer {
    key: FiscalKey,
    signer: EcdsaKeyPair,
    random: SystemRandom,
}

impl Sealer {
    pub fn new(key: FiscalKey) -> Result<Sealer, StoreError> {
        let random = SystemRandom::new();
        let signer = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &key.to_pkcs8_der(), &random)
            .map_err(|_| StoreError::Config("the fiscal key cannot be used for signing".to_owned()))?;
        Ok(Sealer { key, signer, random })
    }

    /// ES256 over `payload`: base64url of the raw `r || s`, as [`FiscalKey::sign`] makes it.
    pub fn sign(&self, payload: &str) -> Result<String, StoreError> {
        let signature = self
            .signer
            .sign(&self.random, payload.as_bytes())
            .map_err(|_| StoreError::Config("the random generator failed; nothing was signed".to_owned()))?;
        Ok(URL_SAFE_NO_PAD.encode(signature.as_ref()))
    }
}

impl Deref for Sealer {
    type Target = FiscalKey;

    fn deref(&self) -> &FiscalKey {
        &self.key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn its_signatures_verify_against_the_keys_published_jwk() {
        let sealer = Sealer::new(FiscalKey::from_secret_bytes(&[9u8; 32]).unwrap()).unwrap();
        let signature = sealer
            .sign("2000:1450,1450,20261122101500,r1,1,SALE,t1,abc,Y,")
            .unwrap();
        let jwk = sealer.public_jwk();
        assert!(till_core::fiscal::verify(
            jwk,
            "2000:1450,1450,20261122101500,r1,1,SALE,t1,abc,Y,",
            &signature
        ));
        assert!(!till_core::fiscal::verify(
            jwk,
            "2000:1450,1451,20261122101500,r1,1,SALE,t1,abc,Y,",
            &signature
        ));
    }
}
