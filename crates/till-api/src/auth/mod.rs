//! Who is calling, and may they do this.
//!
//! Two credentials resolve to one [`Principal`]: an identity provider's JWT (scopes in the
//! token) and an opaque register-session token `pos_st_...` (the cashier's scopes from the
//! staff record, read at every request so that a change of role takes effect at once).

pub mod jwt;

use crate::access_log::ActedAs;
use crate::error::ApiError;
use crate::ops::{Op, Operation};
use crate::state::AppState;
use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use std::marker::PhantomData;
use till_core::ids::Subject;

pub use jwt::{JwksSource, JwtSettings, JwtVerifier};
pub use till_app::caller::{Credential, Principal};
pub use till_app::secret;

/// Verifies credentials. Session tokens are looked up in the store; JWTs are verified here.
pub struct Authenticator {
    jwt: JwtVerifier,
}

impl Authenticator {
    pub fn new(settings: JwtSettings) -> Authenticator {
        Authenticator {
            jwt: JwtVerifier::new(settings),
        }
    }

    pub fn jwt(&self) -> &JwtVerifier {
        &self.jwt
    }
}

fn unauthorized(reason: impl Into<String>) -> ApiError {
    ApiError::Unauthorized(reason.into())
}

impl FromRequestParts<AppState> for Principal {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let header = parts
            .headers
            .get(AUTHORIZATION)
            .ok_or_else(|| unauthorized("A bearer token is required (Authorization: Bearer <token>)."))?;
        let value = header
            .to_str()
            .map_err(|_| unauthorized("The Authorization header is not readable text."))?;
        let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
        let token = token.trim();
        if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
            return Err(unauthorized("The Authorization header must be: Bearer <token>."));
        }
        let principal = principal_of_token(state, token).await?;
        ActedAs::record(&parts.extensions, principal.subject.as_str());
        Ok(principal)
    }
}

/// The principal `token` names, however it came (a bearer header, the console's cookie): a
/// session token is looked up, any other token verified as a JWT.
pub async fn principal_of_token(state: &AppState, token: &str) -> Result<Principal, ApiError> {
    authenticate(state, token)
        .await
        .map(|authenticated| authenticated.principal)
}

/// A token checked: who it names, and until when it is accepted.
pub struct Authenticated {
    pub principal: Principal,
    /// A JWT's `exp` (with the leeway), a session token's session expiry.
    pub expires_at: jiff::Timestamp,
}

/// As [`principal_of_token`], with the token's expiry.
pub async fn authenticate(state: &AppState, token: &str) -> Result<Authenticated, ApiError> {
    if token.starts_with(secret::ELEVATION_TOKEN_PREFIX) {
        return Err(unauthorized(
            "An elevation token is not a credential; send it as x-elevation-token with the till's own token.",
        ));
    }
    // Opaque tokens are looked up, never parsed as JWTs.
    if token.starts_with(secret::SESSION_TOKEN_PREFIX) {
        return session_principal(state, token).await;
    }
    let verified = state
        .auth()
        .jwt()
        .verify(token)
        .await
        .map_err(|error| unauthorized(format!("The bearer token is not valid: {error}.")))?;
    Ok(Authenticated {
        principal: Principal {
            subject: Subject::from_trusted(verified.subject),
            grants: verified.grants,
            credential: Credential::Token,
        },
        expires_at: verified.expires_at,
    })
}

async fn session_principal(state: &AppState, token: &str) -> Result<Authenticated, ApiError> {
    let unknown = || unauthorized("The session token is not valid.");
    if !secret::is_token_shaped(token, secret::SESSION_TOKEN_PREFIX) {
        return Err(unknown());
    }
    let found = till_app::sessions::of_token(state.app(), token).await?;
    let session = found.ok_or_else(unknown)?;
    // A closed session's token still authenticates until it expires, so that a till can replay
    // a sale it sent just before the close; booking new sales on it is refused by finalize.
    if state.now() >= session.session.expires_at {
        return Err(unauthorized("The register session has expired; open a new one."));
    }
    Ok(Authenticated {
        expires_at: session.session.expires_at,
        principal: Principal {
            subject: session.cashier.subject.clone(),
            grants: session.cashier.member.grants(),
            credential: Credential::Session(Box::new(session)),
        },
    })
}

/// A principal allowed to call operation `O`: it holds at least one of `O`'s scopes.
pub struct Authorized<O: Op> {
    pub principal: Principal,
    operation: PhantomData<O>,
}

impl<O: Op> FromRequestParts<AppState> for Authorized<O> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let principal = Principal::from_request_parts(parts, state).await?;
        may_call(&principal, &O::SPEC)?;
        Ok(Authorized {
            principal,
            operation: PhantomData,
        })
    }
}

/// Whether `principal` holds one of the scopes `operation` accepts; the refusal otherwise.
pub fn may_call(principal: &Principal, operation: &Operation) -> Result<(), ApiError> {
    let needed = operation.scopes;
    if !needed.is_empty() && !principal.grants.contains_any(needed) {
        let names: Vec<&str> = needed.iter().map(|g| g.as_str()).collect();
        return Err(ApiError::Forbidden(format!(
            "This operation needs the scope {}.",
            names.join(" or ")
        )));
    }
    Ok(())
}
