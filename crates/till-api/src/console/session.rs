//! Signing in and out, the visitor each page serves, and the guard of every form that writes.
//!
//! The cookie holds the token itself, `HttpOnly` (no script reads it), `SameSite=Strict` (no
//! other site's page sends it) and `Path=/console`, plus `Secure` over TLS: each request
//! checks it exactly as a bearer header is checked, so an expired or revoked token signs the
//! visitor out, and any node of a deployment serves any page. Signing out records the token's
//! hash in the database until the token expires: from then on the console refuses it, on every
//! node, even from a copy of the cookie made before. A form that writes carries a digest of
//! that token: another site cannot read the cookie, so it cannot make the digest.

use super::forms;
use super::language::Frame;
use super::layout::{self, Nav};
use super::refused::Refused;
use crate::access_log::ActedAs;
use crate::auth::{Authenticated, authenticate, secret};
use crate::error::ApiError;
use crate::extract::{FromParams, Params};
use crate::ops::Op;
use crate::state::AppState;
use axum::extract::{FromRequest, FromRequestParts, Request, State};
use axum::http::header::{HOST, LOCATION, ORIGIN, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jiff::Timestamp;
use maud::html;
use sha2::{Digest, Sha256};
use till_app::{Principal, console};

/// The cookie's name.
const COOKIE_NAME: &str = "till_console";
/// The hidden field every form that writes carries.
pub const FORM_TOKEN: &str = "csrf";
/// Longest token read from the sign-in form or the cookie: a JWT with many claims fits.
const MAX_TOKEN_CHARS: usize = 8192;

/// Marks requests that arrived over TLS: their cookie is `Secure`. The binary adds it as a
/// request extension when it serves HTTPS.
#[derive(Clone, Copy, Debug)]
pub struct SecureCookies;

/// A signed-in visitor.
pub struct Visitor {
    pub principal: Principal,
    /// The language of the pages, and the page being read.
    pub frame: Frame,
    form_token: String,
    /// The hash of the cookie's token, and when the token expires: what signing out records.
    token_hash: Vec<u8>,
    expires_at: Timestamp,
}

impl Visitor {
    fn new(authenticated: Authenticated, token: &str, frame: Frame) -> Visitor {
        Visitor {
            principal: authenticated.principal,
            frame,
            form_token: form_token(token),
            token_hash: secret::token_hash(token),
            expires_at: authenticated.expires_at,
        }
    }

    /// The words of the visitor's language.
    pub fn words(&self) -> &'static super::words::Words {
        self.frame.language.words()
    }

    pub fn language(&self) -> super::language::Language {
        self.frame.language
    }

    /// The first page of the navigation the visitor may open: where signing in leads.
    pub fn home(&self) -> &'static str {
        Nav::ALL
            .into_iter()
            .find(|page| page.allowed(self))
            .unwrap_or(Nav::Today)
            .href()
    }

    /// Refused unless the visitor may call operation `O`, as its API route would refuse.
    pub fn require<O: Op>(&self) -> Result<(), Refused> {
        if self.may::<O>() {
            Ok(())
        } else {
            Err(Refused::Scope { needs: O::SPEC.scopes })
        }
    }

    pub fn may<O: Op>(&self) -> bool {
        let needed = O::SPEC.scopes;
        needed.is_empty() || self.principal.grants.contains_any(needed)
    }

    /// What every form that writes carries for this visitor.
    pub fn form_token(&self) -> &str {
        &self.form_token
    }
}

/// The form token of the session whose cookie holds `token`.
fn form_token(token: &str) -> String {
    let digest = Sha256::new()
        .chain_update(b"till console form token")
        .chain_update([0])
        .chain_update(token.as_bytes())
        .finalize();
    URL_SAFE_NO_PAD.encode(digest)
}

/// Whether two texts are equal, in a time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// The cookie's token, if the request carries one.
fn cookie_token(parts: &Parts) -> Option<String> {
    super::cookie(&parts.headers, COOKIE_NAME).map(str::to_owned)
}

impl FromRequestParts<AppState> for Visitor {
    type Rejection = Refused;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let token = cookie_token(parts).ok_or(Refused::SignIn { clear: false })?;
        if !token_shaped(&token) {
            return Err(Refused::SignIn { clear: true });
        }
        let token_hash = secret::token_hash(&token);
        if console::signed_out(state.app(), &token_hash).await? {
            return Err(Refused::SignIn { clear: true });
        }
        match authenticate(state, &token).await {
            Ok(authenticated) => {
                ActedAs::record(&parts.extensions, authenticated.principal.subject.as_str());
                let frame = parts
                    .extensions
                    .get::<Frame>()
                    .cloned()
                    .unwrap_or_else(|| Frame::of(parts));
                Ok(Visitor::new(authenticated, &token, frame))
            }
            Err(ApiError::Unauthorized(_)) => Err(Refused::SignIn { clear: true }),
            Err(other) => Err(other.into()),
        }
    }
}

/// Whether `token` can travel in a cookie as it is: the characters of JWTs and till's own
/// tokens.
fn token_shaped(token: &str) -> bool {
    let allowed = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'+' | b'/' | b'=');
    !token.is_empty() && token.len() <= MAX_TOKEN_CHARS && token.bytes().all(allowed)
}

/// Refused unless the request comes from a page of this origin, as far as the browser tells:
/// its `Origin` (sent with every form a browser posts) names this host, and
/// `Sec-Fetch-Site`, when sent, is not another site.
fn same_origin(parts: &Parts) -> Result<(), Refused> {
    let header = |name| {
        parts
            .headers
            .get(name)
            .and_then(|value: &HeaderValue| value.to_str().ok())
    };
    if let Some(site) = header("sec-fetch-site")
        && !matches!(site, "same-origin" | "none")
    {
        return Err(Refused::Forged);
    }
    if let Some(origin) = header(ORIGIN.as_str()) {
        let host = header(HOST.as_str()).ok_or(Refused::Forged)?;
        let origin_host = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .ok_or(Refused::Forged)?;
        if !origin_host.eq_ignore_ascii_case(host) {
            return Err(Refused::Forged);
        }
    }
    Ok(())
}

/// A form that writes, from a signed-in visitor: from this origin, with the visitor's form
/// token, its other fields read by `T`. Anything else is refused before a handler runs, so a
/// refused form changes nothing.
pub struct Write<T> {
    pub visitor: Visitor,
    pub form: T,
}

impl<T: FromParams + Send> FromRequest<AppState> for Write<T> {
    type Rejection = Refused;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let (mut parts, body) = request.into_parts();
        let visitor = Visitor::from_request_parts(&mut parts, state).await?;
        same_origin(&parts)?;
        let pairs = forms::body_pairs(Request::from_parts(parts, body), state).await?;
        let sent = pairs
            .iter()
            .find(|(name, _)| name == FORM_TOKEN)
            .map(|(_, value)| value.as_str());
        if !sent.is_some_and(|sent| same(sent, visitor.form_token())) {
            return Err(Refused::Forged);
        }
        let form = forms::read(pairs)?;
        Ok(Write { visitor, form })
    }
}

/// A form with no field but its token.
pub struct NoFields;

impl FromParams for NoFields {
    fn from_params(_params: &Params) -> Option<Self> {
        Some(NoFields)
    }
}

/// The `Set-Cookie` of a signed-in visitor.
fn session_cookie(token: &str, secure: bool) -> Option<HeaderValue> {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{COOKIE_NAME}={token}; HttpOnly; SameSite=Strict; Path=/console{secure}"
    ))
    .ok()
}

/// The `Set-Cookie` that signs out.
pub fn cleared_cookie() -> HeaderValue {
    HeaderValue::from_static("till_console=; HttpOnly; SameSite=Strict; Path=/console; Max-Age=0")
}

fn sign_in_form(frame: &Frame, problem: Option<&str>) -> maud::Markup {
    let words = frame.language.words();
    let body = html! {
        h1 { (words.sign_in) }
        p { ((words.sign_in_intro)()) }
        @if let Some(problem) = problem {
            p.refusal role="alert" { (problem) }
        }
        form.sign-in method="post" action="/console/sign-in" {
            label for="token" { (words.token) }
            input #token type="password" name="token" autocomplete="off" required;
            button type="submit" { (words.sign_in) }
        }
    };
    layout::bare(words.sign_in, frame, body)
}

pub async fn sign_in_page(frame: Frame) -> maud::Markup {
    sign_in_form(&frame, None)
}

/// Checks the token as a bearer header is checked; sets the cookie and goes to the first page
/// the token may open.
pub async fn sign_in(State(state): State<AppState>, frame: Frame, request: Request) -> Response {
    let words = frame.language.words();
    let (parts, body) = request.into_parts();
    if let Err(refused) = same_origin(&parts) {
        return refused.into_response();
    }
    let secure = parts.extensions.get::<SecureCookies>().is_some();
    let pairs = match forms::body_pairs(Request::from_parts(parts, body), &state).await {
        Ok(pairs) => pairs,
        Err(other) => return other.into_response(),
    };
    let token = pairs
        .iter()
        .find(|(name, _)| name == "token")
        .map(|(_, value)| value.trim())
        .unwrap_or_default();
    let problem = if token.is_empty() {
        Some(words.token_required)
    } else if !token_shaped(token) {
        Some(words.token_malformed)
    } else {
        None
    };
    if let Some(problem) = problem {
        return (StatusCode::BAD_REQUEST, sign_in_form(&frame, Some(problem))).into_response();
    }
    let authenticated = match authenticate(&state, token).await {
        Ok(authenticated) => authenticated,
        Err(ApiError::Unauthorized(reason)) => {
            let problem = words.token_refused.unwrap_or(&reason);
            return (StatusCode::UNAUTHORIZED, sign_in_form(&frame, Some(problem))).into_response();
        }
        Err(other) => return Refused::Api(other).into_response(),
    };
    match console::signed_out(state.app(), &secret::token_hash(token)).await {
        Ok(false) => {}
        Ok(true) => {
            let problem = words.token_signed_out;
            return (StatusCode::UNAUTHORIZED, sign_in_form(&frame, Some(problem))).into_response();
        }
        Err(error) => return Refused::from(error).into_response(),
    }
    let home = Visitor::new(authenticated, token, frame.clone()).home();
    match session_cookie(token, secure) {
        Some(cookie) => (
            StatusCode::SEE_OTHER,
            [(LOCATION, HeaderValue::from_static(home)), (SET_COOKIE, cookie)],
        )
            .into_response(),
        None => (
            StatusCode::BAD_REQUEST,
            sign_in_form(&frame, Some(words.token_not_kept)),
        )
            .into_response(),
    }
}

/// Keeps the cookie's token out of the console until it expires, clears the cookie and goes
/// back to the sign-in page. The token itself is the identity provider's (or the till's): the
/// API still takes it until it expires.
pub async fn sign_out(State(state): State<AppState>, write: Write<NoFields>) -> Response {
    let visitor = write.visitor;
    let signed_out = console::sign_out(state.app(), visitor.token_hash, visitor.expires_at).await;
    if let Err(error) = signed_out {
        return Refused::from(error).into_response();
    }
    (
        StatusCode::SEE_OTHER,
        [
            (LOCATION, HeaderValue::from_static("/console/sign-in")),
            (SET_COOKIE, cleared_cookie()),
        ],
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_token_is_the_tokens_own_and_reveals_nothing_of_it() {
        let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJl";
        assert_eq!(form_token(token), form_token(token));
        assert_ne!(
            form_token(token),
            form_token("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJiIn0.c2lnbmF0dXJl")
        );
        assert!(!form_token(token).contains("eyJ"));
    }

    #[test]
    fn only_the_characters_of_tokens_go_into_the_cookie() {
        assert!(token_shaped("pos_st_abcDEF-123_x"));
        assert!(token_shaped("a.b.c"));
        for bad in ["", "a;b", "a b", "a\nb", "é", "a,b", "a\"b"] {
            assert!(!token_shaped(bad), "{bad:?}");
        }
    }

    #[test]
    fn texts_compare_equal_only_when_equal() {
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "ab"));
    }
}
