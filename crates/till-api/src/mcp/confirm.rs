//! The two calls of a `confirm` tool. The first acts on nothing: it answers what the call would
//! do and a single-use token `pos_cf_...`, held in the database as its hash beside the
//! principal, the operation and a hash of the arguments. The second presents the token; the
//! row is deleted as it is read, so a token acts at most once on any number of nodes, and a
//! token presented by someone else, for another operation or other arguments, or late, is
//! spent and refused.

use crate::auth::secret;
use crate::error::ApiError;
use crate::mcp::tools::{CONFIRMATION_MINUTES, Call, ToolSpec};
use crate::state::AppState;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use till_app::caller::Principal;
use till_core::instant::format_utc;
use till_store::mcp_confirmations::{NewConfirmation, SpentConfirmation};

/// Prefix of a confirmation token.
pub const TOKEN_PREFIX: &str = "pos_cf_";

/// Why a presented token does not let the call act. The token is spent either way.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    NotAToken,
    Unknown,
    Expired,
    OtherPrincipal,
    OtherOperation(String),
    OtherArguments,
}

impl Refusal {
    pub fn message(&self, tool: &str) -> String {
        let again = format!(
            "Nothing was done. Call {tool} again without `confirmation` for a new summary, and show it to the person."
        );
        let why = match self {
            Refusal::NotAToken => "This is not a confirmation token.".to_owned(),
            Refusal::Unknown => "This confirmation token is unknown or was already used.".to_owned(),
            Refusal::Expired => {
                format!("This confirmation token expired (tokens last {CONFIRMATION_MINUTES} minutes).")
            }
            Refusal::OtherPrincipal => "This confirmation token was issued to another caller.".to_owned(),
            Refusal::OtherOperation(operation) => format!("This confirmation token was issued for {operation}."),
            Refusal::OtherArguments => {
                "This confirmation token was issued for other arguments, and is now spent.".to_owned()
            }
        };
        format!("{why} {again}")
    }
}

/// The SHA-256 of `arguments` written as canonical JSON (sorted keys, no spaces).
pub fn arguments_hash(arguments: &Map<String, Value>) -> Vec<u8> {
    let canonical = till_core::canonical::sorted(&Value::Object(arguments.clone()));
    Sha256::digest(canonical.to_string().as_bytes()).to_vec()
}

/// What the first call answers: the summary and the token, after holding the token's hash.
pub async fn ask(
    state: &AppState,
    principal: &Principal,
    spec: &ToolSpec,
    arguments: &Map<String, Value>,
    call: &Call,
) -> Result<Value, ApiError> {
    let token = secret::new_token(TOKEN_PREFIX);
    let issued_at = state.now();
    let expires_at = issued_at + SignedDuration::from_mins(CONFIRMATION_MINUTES);
    state
        .store()
        .issue_confirmation(NewConfirmation {
            token_hash: secret::token_hash(&token),
            subject: principal.subject.as_str().to_owned(),
            operation: spec.operation.id.to_owned(),
            arguments_hash: arguments_hash(arguments),
            issued_at,
            expires_at,
        })
        .await?;
    Ok(summary(spec, arguments, call, &token, expires_at))
}

/// The first call's answer, for the person to read before they agree.
pub fn summary(
    spec: &ToolSpec,
    arguments: &Map<String, Value>,
    call: &Call,
    token: &str,
    expires_at: Timestamp,
) -> Value {
    let tool = spec.operation.id;
    json!({
        "confirmationRequired": true,
        "nothingChanged": true,
        "tool": tool,
        "action": spec.summary,
        "effect": spec.effect,
        "request": format!("{} {}", call.method, call.target),
        "arguments": arguments,
        "confirmation": token,
        "expiresAt": format_utc(expires_at),
        "next": format!(
            "Nothing has changed yet. Show the person what this will do ({}) with these arguments. Only if \
             they agree, call {tool} again with exactly the same arguments and \"confirmation\": \"{token}\".",
            spec.summary.trim_end_matches('.')
        ),
    })
}

/// Spends `token` and decides whether the call it was issued for is this one.
pub async fn spend(
    state: &AppState,
    principal: &Principal,
    spec: &ToolSpec,
    arguments: &Map<String, Value>,
    token: &str,
) -> Result<Result<(), Refusal>, ApiError> {
    if !secret::is_token_shaped(token, TOKEN_PREFIX) {
        return Ok(Err(Refusal::NotAToken));
    }
    let spent = state.store().spend_confirmation(secret::token_hash(token)).await?;
    Ok(matches(
        spent.as_ref(),
        principal.subject.as_str(),
        spec.operation.id,
        &arguments_hash(arguments),
        state.now(),
    ))
}

/// Whether a spent confirmation was issued for this principal, operation and arguments, and is
/// presented in time.
pub fn matches(
    spent: Option<&SpentConfirmation>,
    subject: &str,
    operation: &str,
    arguments_hash: &[u8],
    now: Timestamp,
) -> Result<(), Refusal> {
    let spent = spent.ok_or(Refusal::Unknown)?;
    if spent.expires_at <= now {
        Err(Refusal::Expired)
    } else if spent.subject != subject {
        Err(Refusal::OtherPrincipal)
    } else if spent.operation != operation {
        Err(Refusal::OtherOperation(spent.operation.clone()))
    } else if spent.arguments_hash != arguments_hash {
        Err(Refusal::OtherArguments)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issued(now: Timestamp) -> SpentConfirmation {
        SpentConfirmation {
            subject: "agent".to_owned(),
            operation: "putStore".to_owned(),
            arguments_hash: arguments_hash(json!({"storeId": "s1"}).as_object().unwrap()),
            expires_at: now + SignedDuration::from_mins(5),
        }
    }

    #[test]
    fn a_token_acts_only_for_its_caller_operation_and_arguments_in_time() {
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let spent = issued(now);
        let same = arguments_hash(json!({"storeId": "s1"}).as_object().unwrap());
        let other = arguments_hash(json!({"storeId": "s2"}).as_object().unwrap());
        assert_eq!(matches(Some(&spent), "agent", "putStore", &same, now), Ok(()));
        assert_eq!(matches(None, "agent", "putStore", &same, now), Err(Refusal::Unknown));
        assert_eq!(
            matches(Some(&spent), "intruder", "putStore", &same, now),
            Err(Refusal::OtherPrincipal)
        );
        assert_eq!(
            matches(Some(&spent), "agent", "putStock", &same, now),
            Err(Refusal::OtherOperation("putStore".to_owned()))
        );
        assert_eq!(
            matches(Some(&spent), "agent", "putStore", &other, now),
            Err(Refusal::OtherArguments)
        );
        let late = now + SignedDuration::from_mins(5);
        assert_eq!(
            matches(Some(&spent), "agent", "putStore", &same, late),
            Err(Refusal::Expired)
        );
    }

    #[test]
    fn the_arguments_hash_ignores_key_order_only() {
        let a = arguments_hash(
            json!({"storeId": "s1", "body": {"name": "A", "currency": "EUR"}})
                .as_object()
                .unwrap(),
        );
        let b = arguments_hash(
            json!({"body": {"currency": "EUR", "name": "A"}, "storeId": "s1"})
                .as_object()
                .unwrap(),
        );
        let c = arguments_hash(
            json!({"body": {"currency": "EUR", "name": "B"}, "storeId": "s1"})
                .as_object()
                .unwrap(),
        );
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
