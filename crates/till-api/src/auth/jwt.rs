//! Access tokens from an identity provider: HS256 with a shared secret, RS256 and ES256 with the
//! provider's published keys (a JWKS file or URL, cached and re-read when an unknown key id
//! shows up). The algorithm comes from our allow-list, never from the token alone.

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::RwLock;
use std::time::{Duration, Instant};
use till_core::grant::GrantSet;

/// Where the provider's public keys come from.
#[derive(Clone, Debug)]
pub enum JwksSource {
    Url(String),
    File(PathBuf),
}

#[derive(Clone, Debug)]
pub struct JwtSettings {
    /// Enables HS256 with this shared secret.
    pub hs256_secret: Option<String>,
    /// Enables RS256 and ES256 with these keys.
    pub jwks: Option<JwksSource>,
    pub issuer: String,
    pub audience: String,
    /// Clock skew tolerated on `exp` and `nbf`.
    pub leeway: Duration,
    /// Shortest time between two reads of the key set, so random key ids cannot make us hammer
    /// the provider.
    pub jwks_min_refresh: Duration,
}

impl Default for JwtSettings {
    fn default() -> Self {
        JwtSettings {
            hs256_secret: None,
            jwks: None,
            issuer: "till-dev".to_owned(),
            audience: "till".to_owned(),
            leeway: Duration::from_secs(60),
            jwks_min_refresh: Duration::from_secs(10),
        }
    }
}

/// What a verified token says about its bearer.
#[derive(Clone, Debug)]
pub struct VerifiedToken {
    pub subject: String,
    pub grants: GrantSet,
    /// The last instant the token is accepted: its `exp`, with the leeway.
    pub expires_at: jiff::Timestamp,
}

/// Why a token was refused; the text is shown to the caller.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenError {
    #[error("the token is malformed")]
    Malformed,
    #[error("the token's algorithm is not accepted")]
    Algorithm,
    #[error("the token names no key this service knows")]
    UnknownKey,
    #[error("the token's signature does not verify")]
    Signature,
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet")]
    NotYetValid,
    #[error("the token was not issued by the one issuer this service trusts")]
    Issuer,
    #[error("the token is meant for another audience")]
    Audience,
    #[error("the token lacks the {0} claim")]
    MissingClaim(String),
}

/// The claims read from a token whose signature, expiry and audience were checked. `iss` and
/// `sub` are read as any JSON value, so that one that is not a single string is refused here
/// by name: the verifier's own issuer check accepts a list holding the trusted issuer.
#[derive(Deserialize)]
struct Claims {
    iss: serde_json::Value,
    sub: serde_json::Value,
    /// Checked by the verifier; read for the instant the token stops being accepted.
    exp: serde_json::Value,
    #[serde(default)]
    scope: Option<serde_json::Value>,
    #[serde(default)]
    permissions: Option<Vec<String>>,
}

struct KeySet {
    keys: HashMap<String, (DecodingKey, Option<Algorithm>)>,
    read_at: Option<Instant>,
}

pub struct JwtVerifier {
    settings: JwtSettings,
    hs256: Option<DecodingKey>,
    keys: RwLock<KeySet>,
    refresh: tokio::sync::Mutex<()>,
    http: reqwest::Client,
}

impl JwtVerifier {
    pub fn new(settings: JwtSettings) -> JwtVerifier {
        // reqwest is built without a bundled TLS provider; ring is ours. Installing twice is a
        // harmless no-op error.
        let _ = rustls::crypto::ring::default_provider().install_default();
        JwtVerifier {
            hs256: settings
                .hs256_secret
                .as_deref()
                .map(|s| DecodingKey::from_secret(s.as_bytes())),
            settings,
            keys: RwLock::new(KeySet {
                keys: HashMap::new(),
                read_at: None,
            }),
            refresh: tokio::sync::Mutex::new(()),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(5))
                .build()
                .unwrap_or_default(),
        }
    }

    /// Reads the key set now; the service calls it at start so the first request does not wait.
    pub async fn load_keys(&self) -> Result<usize, String> {
        self.refresh_keys(true).await
    }

    pub async fn verify(&self, token: &str) -> Result<VerifiedToken, TokenError> {
        let header = decode_header(token).map_err(|_| TokenError::Malformed)?;
        let key = match header.alg {
            Algorithm::HS256 => self.hs256.clone().ok_or(TokenError::Algorithm)?,
            Algorithm::RS256 | Algorithm::ES256 if self.settings.jwks.is_some() => {
                let kid = header.kid.as_deref().ok_or(TokenError::UnknownKey)?;
                self.key_for(kid, header.alg).await?
            }
            _ => return Err(TokenError::Algorithm),
        };
        let mut validation = Validation::new(header.alg);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.set_issuer(&[&self.settings.issuer]);
        validation.set_audience(&[&self.settings.audience]);
        validation.validate_nbf = true;
        validation.leeway = self.settings.leeway.as_secs();
        let data = decode::<Claims>(token, &key, &validation).map_err(|error| match error.kind() {
            ErrorKind::ExpiredSignature => TokenError::Expired,
            ErrorKind::ImmatureSignature => TokenError::NotYetValid,
            ErrorKind::InvalidIssuer => TokenError::Issuer,
            ErrorKind::InvalidAudience => TokenError::Audience,
            ErrorKind::MissingRequiredClaim(claim) => TokenError::MissingClaim(claim.clone()),
            ErrorKind::InvalidSignature => TokenError::Signature,
            ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => TokenError::Algorithm,
            _ => TokenError::Malformed,
        })?;
        let claims = data.claims;
        if claims.iss.as_str() != Some(self.settings.issuer.as_str()) {
            return Err(TokenError::Issuer);
        }
        let subject = match claims.sub {
            serde_json::Value::String(subject) if till_core::ids::check_text(&subject).is_ok() => subject,
            _ => return Err(TokenError::Malformed),
        };
        let scope_words: Vec<String> = match claims.scope {
            Some(serde_json::Value::String(words)) => words.split_whitespace().map(str::to_owned).collect(),
            Some(serde_json::Value::Array(items)) => items
                .into_iter()
                .filter_map(|item| item.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        };
        let grants = GrantSet::from_words(
            scope_words
                .iter()
                .map(String::as_str)
                .chain(claims.permissions.iter().flatten().map(String::as_str)),
        );
        let exp = claims
            .exp
            .as_i64()
            .or_else(|| claims.exp.as_f64().map(|seconds| seconds as i64))
            .ok_or(TokenError::Malformed)?;
        let leeway = i64::try_from(self.settings.leeway.as_secs()).unwrap_or(0);
        let expires_at = jiff::Timestamp::from_second(exp.saturating_add(leeway)).map_err(|_| TokenError::Malformed)?;
        Ok(VerifiedToken {
            subject,
            grants,
            expires_at,
        })
    }

    async fn key_for(&self, kid: &str, alg: Algorithm) -> Result<DecodingKey, TokenError> {
        if let Some(key) = self.cached_key(kid, alg)? {
            return Ok(key);
        }
        // Unknown key id: the provider may have rotated its keys. Read them again (at most once
        // per `jwks_min_refresh`) and look once more.
        if let Err(error) = self.refresh_keys(false).await {
            tracing::warn!(%error, "could not refresh the identity provider's keys");
        }
        self.cached_key(kid, alg)?.ok_or(TokenError::UnknownKey)
    }

    fn cached_key(&self, kid: &str, alg: Algorithm) -> Result<Option<DecodingKey>, TokenError> {
        let keys = self.keys.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        match keys.keys.get(kid) {
            Some((_, Some(declared))) if *declared != alg => Err(TokenError::Algorithm),
            Some((key, _)) => Ok(Some(key.clone())),
            None => Ok(None),
        }
    }

    async fn refresh_keys(&self, force: bool) -> Result<usize, String> {
        let Some(source) = &self.settings.jwks else {
            return Ok(0);
        };
        let _single_flight = self.refresh.lock().await;
        let recently = {
            let keys = self.keys.read().unwrap_or_else(|poisoned| poisoned.into_inner());
            keys.read_at
                .is_some_and(|at| at.elapsed() < self.settings.jwks_min_refresh)
        };
        if recently && !force {
            return Ok(0);
        }
        let text = match source {
            JwksSource::File(path) => tokio::fs::read_to_string(path)
                .await
                .map_err(|error| format!("cannot read {}: {error}", path.display()))?,
            JwksSource::Url(url) => {
                let response = self.http.get(url).send().await.map_err(|error| error.to_string())?;
                response
                    .error_for_status()
                    .map_err(|e| e.to_string())?
                    .text()
                    .await
                    .map_err(|e| e.to_string())?
            }
        };
        let set: JwkSet = serde_json::from_str(&text).map_err(|error| format!("not a JWK set: {error}"))?;
        let mut keys = HashMap::new();
        for jwk in &set.keys {
            let Some(kid) = jwk.common.key_id.clone() else {
                continue;
            };
            let Ok(key) = DecodingKey::from_jwk(jwk) else {
                continue;
            };
            let alg = jwk.common.key_algorithm.and_then(|a| Algorithm::try_from(a).ok());
            keys.insert(kid, (key, alg));
        }
        let count = keys.len();
        let mut cache = self.keys.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        *cache = KeySet {
            keys,
            read_at: Some(Instant::now()),
        };
        Ok(count)
    }
}
