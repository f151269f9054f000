//! Development access tokens (`till token`), signed with the HS256 secret.

use jsonwebtoken::{EncodingKey, Header, encode};
use serde::Serialize;
use std::time::Duration;

#[derive(Serialize)]
struct Claims<'a> {
    sub: &'a str,
    scope: &'a str,
    iss: &'a str,
    aud: &'a str,
    iat: i64,
    nbf: i64,
    exp: i64,
}

/// A JWT for `subject` holding the space-separated `scope`, valid for `ttl` from `now`.
pub fn mint(
    secret: &str,
    issuer: &str,
    audience: &str,
    subject: &str,
    scope: &str,
    now: jiff::Timestamp,
    ttl: Duration,
) -> String {
    let iat = now.as_second();
    let claims = Claims {
        sub: subject,
        scope,
        iss: issuer,
        aud: audience,
        iat,
        nbf: iat,
        exp: iat.saturating_add(i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX / 2)),
    };
    encode(
        &Header::default(),
        &claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .expect("HS256 signing with an in-memory secret cannot fail")
}
