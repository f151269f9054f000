//! Secrets the service mints and checks: opaque tokens, random ids, PIN hashes.

use argon2::{Argon2, PasswordHasher, PasswordVerifier};
use base64::Engine as _;
use base64::alphabet::Alphabet;
use base64::engine::general_purpose::{GeneralPurpose, NO_PAD, URL_SAFE_NO_PAD};
use sha2::{Digest, Sha256};
use std::sync::OnceLock;
use till_core::staff::Pin;
use till_core::stored_value::InstrumentCode;
use till_core::webhooks::{SECRET_BYTES, WebhookSecret};

/// Prefix of a register-session bearer token.
pub const SESSION_TOKEN_PREFIX: &str = "pos_st_";
/// Prefix of a single-use elevation token.
pub const ELEVATION_TOKEN_PREFIX: &str = "pos_el_";

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    // The OS generator failing leaves nothing safe to do.
    getrandom::fill(&mut bytes).expect("the operating system's random generator failed");
    bytes
}

/// `prefix` followed by 256 random bits in base64url (43 characters).
pub fn new_token(prefix: &str) -> String {
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(random_bytes::<32>()))
}

/// A receipt's public page token: 128 random bits in base64url, 22 symbols.
pub fn new_link_token() -> String {
    URL_SAFE_NO_PAD.encode(random_bytes::<16>())
}

/// Whether `token` has the shape of a receipt's public page token.
pub fn is_link_token_shaped(token: &str) -> bool {
    token.len() == 22
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A fresh identifier such as `ses_Xb3...`: 128 random bits in base64url.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", URL_SAFE_NO_PAD.encode(random_bytes::<16>()))
}

/// base64url's 64 symbols in ASCII order, so that encodings of equal length sort as the bytes
/// they encode.
const ASCII_ORDERED: GeneralPurpose = GeneralPurpose::new(
    &match Alphabet::new("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz") {
        Ok(alphabet) => alphabet,
        Err(_) => panic!("64 distinct symbols"),
    },
    NO_PAD,
);

/// A fresh gift card or credit note code: 128 bits of the operating system's generator
/// written in the card alphabet (see [`InstrumentCode::from_random`]).
pub fn new_instrument_code() -> InstrumentCode {
    InstrumentCode::from_random(random_bytes::<16>())
}

/// A fresh webhook signing secret: random bytes of the operating system's generator.
pub fn new_webhook_secret() -> WebhookSecret {
    WebhookSecret::from_key(random_bytes::<SECRET_BYTES>())
}

/// A fresh identifier that sorts after those minted at earlier milliseconds: `prefix`, then
/// the 48-bit Unix millisecond of `at` and 80 random bits, 22 base64url symbols in all (the
/// shape of [`new_id`]). Rows keyed by random ids land all over their index, one page each;
/// these land at its end, where a batch of rows shares a page.
pub fn new_ordered_id(prefix: &str, at: jiff::Timestamp) -> String {
    let mut bytes = random_bytes::<16>();
    // 48 bits of milliseconds last until the year 10889; before 1970 counts as 1970.
    let millisecond = u64::try_from(at.as_millisecond()).unwrap_or(0);
    bytes[..6].copy_from_slice(&millisecond.to_be_bytes()[2..]);
    format!("{prefix}_{}", ASCII_ORDERED.encode(bytes))
}

/// The stored form of an opaque token. Tokens carry 256 random bits, so a fast hash is enough;
/// the database never holds anything that could be presented as a credential.
pub fn token_hash(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// Whether `token` has the exact shape of a token minted with `prefix`.
pub fn is_token_shaped(token: &str, prefix: &str) -> bool {
    token.strip_prefix(prefix).is_some_and(|rest| {
        rest.len() == 43
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    })
}

/// Runs PIN work (argon2id) on the blocking pool, a few at a time. Each hash takes 19 MiB and
/// tens of milliseconds of a core: bounding how many run at once bounds the memory a burst of
/// PIN checks can take and the CPU it can take from sales.
pub async fn pin_work<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    static SLOTS: OnceLock<tokio::sync::Semaphore> = OnceLock::new();
    let slots = SLOTS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        tokio::sync::Semaphore::new(cores.clamp(1, 4))
    });
    // The semaphore is never closed, so acquiring cannot fail.
    let _permit = slots.acquire().await;
    tokio::task::spawn_blocking(work).await
}

/// argon2id PHC string of a PIN. CPU-heavy: call it through [`pin_work`].
pub fn hash_pin(pin: &Pin) -> String {
    Argon2::default()
        .hash_password(pin.expose().as_bytes())
        .expect("argon2 accepts any PIN with default parameters")
        .to_string()
}

/// Checks `pin` against `hash`; with no hash (unknown person) it checks against a fixed dummy,
/// so an unknown subject costs the same time as a wrong PIN. CPU-heavy: call it through [`pin_work`].
pub fn verify_pin(pin: &str, hash: Option<&str>) -> bool {
    static DUMMY: OnceLock<String> = OnceLock::new();
    let dummy = DUMMY.get_or_init(|| hash_pin(&Pin::parse("00000000").expect("a valid PIN")));
    let matched = Argon2::default()
        .verify_password(pin.as_bytes(), hash.unwrap_or(dummy))
        .is_ok();
    matched && hash.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_have_their_documented_shape() {
        let token = new_token(SESSION_TOKEN_PREFIX);
        assert!(is_token_shaped(&token, SESSION_TOKEN_PREFIX));
        assert!(!is_token_shaped(&token, ELEVATION_TOKEN_PREFIX));
        assert_ne!(token, new_token(SESSION_TOKEN_PREFIX));
        assert_eq!(token_hash(&token).len(), 32);
    }

    #[test]
    fn ordered_ids_sort_by_the_millisecond_they_were_minted() {
        let start = jiff::Timestamp::from_millisecond(1_795_000_000_000).unwrap();
        let mut ids: Vec<(i64, String)> = (0..200)
            .map(|n| {
                (
                    n / 3,
                    new_ordered_id("evt", start + jiff::SignedDuration::from_millis(n / 3)),
                )
            })
            .collect();
        // Also across a change of leading symbol: 2^42 ms after the epoch is 2109-05-15.
        let far = jiff::Timestamp::from_millisecond(1 << 42).unwrap();
        ids.push((
            i64::MAX - 1,
            new_ordered_id("evt", far - jiff::SignedDuration::from_millis(1)),
        ));
        ids.push((i64::MAX, new_ordered_id("evt", far)));
        for (_, id) in &ids {
            let rest = id.strip_prefix("evt_").unwrap();
            assert_eq!(rest.len(), 22, "{id}");
            assert!(
                rest.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
                "{id}"
            );
        }
        let mut sorted = ids.clone();
        sorted.sort_by(|a, b| a.1.cmp(&b.1));
        let order: Vec<i64> = sorted.iter().map(|(ms, _)| *ms).collect();
        assert!(order.is_sorted(), "ids out of time order: {order:?}");
        let distinct: std::collections::HashSet<_> = ids.iter().map(|(_, id)| id).collect();
        assert_eq!(distinct.len(), ids.len(), "ids minted in the same millisecond collide");
    }

    #[test]
    fn pins_verify_only_against_their_own_hash() {
        let hash = hash_pin(&Pin::parse("4821").unwrap());
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_pin("4821", Some(&hash)));
        assert!(!verify_pin("4822", Some(&hash)));
        assert!(!verify_pin("00000000", None));
    }
}
