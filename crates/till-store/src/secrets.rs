//! Secrets the deployment makes once and every node shares (`deployment_secrets`): the first
//! node to need one draws it from the operating system's generator; every node then reads the
//! one that was kept.

use crate::db::Store;
use crate::error::StoreError;
use crate::sql::{Conn, query};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures::future::BoxFuture;
use ring::rand::{SecureRandom, SystemRandom};

/// The key of the digests naming gift cards and credit notes in sealed records.
const INSTRUMENT_DIGEST: &str = "instrument_digest";

/// 256 bits, the block of HMAC-SHA256's hash.
const SECRET_BYTES: usize = 32;

/// `N` bytes of the operating system's generator.
pub(crate) fn random_bytes<const N: usize>() -> Result<[u8; N], StoreError> {
    let mut bytes = [0u8; N];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| StoreError::Config("the operating system's random generator failed".to_owned()))?;
    Ok(bytes)
}

/// The secret of the instrument digests, made if there is none yet.
pub(crate) async fn instrument_digest_secret(store: &Store) -> Result<Vec<u8>, StoreError> {
    let drawn = URL_SAFE_NO_PAD.encode(random_bytes::<SECRET_BYTES>()?);
    let kept = store
        .write((INSTRUMENT_DIGEST, drawn), |c, (name, drawn)| {
            keep_first(c, name, drawn)
        })
        .await?;
    URL_SAFE_NO_PAD
        .decode(kept)
        .map_err(|_| StoreError::Corrupt("a deployment secret that is not base64url".into()))
}

/// Keeps `drawn` as the secret `name` unless one is kept already; answers the kept one.
fn keep_first<'a>(conn: &'a mut Conn, name: &'a str, drawn: &'a str) -> BoxFuture<'a, Result<String, StoreError>> {
    Box::pin(async move {
        query("INSERT INTO deployment_secrets (name, secret) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING")
            .bind(name)
            .bind(drawn)
            .execute(&mut *conn)
            .await?;
        let row = query("SELECT secret FROM deployment_secrets WHERE name = $1")
            .bind(name)
            .fetch_one(&mut *conn)
            .await?;
        row.try_get("secret")
    })
}
