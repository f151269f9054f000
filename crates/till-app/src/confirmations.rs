//! An agent's confirmation of a `confirm`-tier operation (docs/agents.md). Asking acts on
//! nothing: it issues a single-use token, kept in the database as its hash beside the caller,
//! the operation and a hash of the arguments. Presenting the token deletes its row as it is
//! read, so a token acts at most once on any number of nodes; one presented by someone else,
//! for another operation or other arguments, or late, is spent and refused.

use crate::app::App;
use crate::caller::Principal;
use crate::refusal::Error;
use crate::secret::{is_token_shaped, new_token, token_hash};
use crate::storage::access::NewConfirmation;
use crate::storage::access::SpentConfirmation;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

// How a change is checked before the person is asked: the request run up to its first write.
pub use crate::storage::dry_run::DryRun;
pub use crate::storage::dry_run::until_first_write;

/// Prefix of a confirmation token.
pub const TOKEN_PREFIX: &str = "pos_cf_";

/// How long a confirmation token may be presented, in minutes.
pub const CONFIRMATION_MINUTES: i64 = 5;

/// A confirmation issued: the token is shown once, only its hash is kept.
pub struct Confirmation {
    pub token: String,
    pub expires_at: Timestamp,
}

/// Why a presented token does not let the call act. The token is spent either way.
#[derive(Debug, PartialEq, Eq)]
pub enum Mismatch {
    NotAToken,
    Unknown,
    Expired,
    OtherPrincipal,
    /// The operation it was issued for.
    OtherOperation(String),
    OtherArguments,
}

/// The SHA-256 of `arguments` written as canonical JSON (sorted keys, no spaces): the same
/// arguments in any key order hash alike.
pub fn arguments_hash(arguments: &Map<String, Value>) -> Vec<u8> {
    let canonical = till_core::canonical::sorted(&Value::Object(arguments.clone()));
    Sha256::digest(canonical.to_string().as_bytes()).to_vec()
}

/// Issues a token for `principal` to call `operation` with `arguments` once.
pub async fn issue(
    app: &App,
    principal: &Principal,
    operation: &str,
    arguments: &Map<String, Value>,
) -> Result<Confirmation, Error> {
    let token = new_token(TOKEN_PREFIX);
    let issued_at = app.now();
    let expires_at = issued_at + SignedDuration::from_mins(CONFIRMATION_MINUTES);
    app.access()
        .issue_confirmation(NewConfirmation {
            token_hash: token_hash(&token),
            subject: principal.subject.as_str().to_owned(),
            operation: operation.to_owned(),
            arguments_hash: arguments_hash(arguments),
            issued_at,
            expires_at,
        })
        .await?;
    Ok(Confirmation { token, expires_at })
}

/// Spends `token` and decides whether it was issued for this call.
pub async fn spend(
    app: &App,
    principal: &Principal,
    operation: &str,
    arguments: &Map<String, Value>,
    token: &str,
) -> Result<Result<(), Mismatch>, Error> {
    if !is_token_shaped(token, TOKEN_PREFIX) {
        return Ok(Err(Mismatch::NotAToken));
    }
    let spent = app.access().spend_confirmation(token_hash(token)).await?;
    Ok(matches(
        spent.as_ref(),
        principal.subject.as_str(),
        operation,
        &arguments_hash(arguments),
        app.now(),
    ))
}

/// Whether a spent confirmation was issued for this caller, operation and arguments, and is
/// presented in time.
fn matches(
    spent: Option<&SpentConfirmation>,
    subject: &str,
    operation: &str,
    arguments_hash: &[u8],
    now: Timestamp,
) -> Result<(), Mismatch> {
    let spent = spent.ok_or(Mismatch::Unknown)?;
    if spent.expires_at <= now {
        Err(Mismatch::Expired)
    } else if spent.subject != subject {
        Err(Mismatch::OtherPrincipal)
    } else if spent.operation != operation {
        Err(Mismatch::OtherOperation(spent.operation.clone()))
    } else if spent.arguments_hash != arguments_hash {
        Err(Mismatch::OtherArguments)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        assert_eq!(matches(None, "agent", "putStore", &same, now), Err(Mismatch::Unknown));
        assert_eq!(
            matches(Some(&spent), "intruder", "putStore", &same, now),
            Err(Mismatch::OtherPrincipal)
        );
        assert_eq!(
            matches(Some(&spent), "agent", "putStock", &same, now),
            Err(Mismatch::OtherOperation("putStore".to_owned()))
        );
        assert_eq!(
            matches(Some(&spent), "agent", "putStore", &other, now),
            Err(Mismatch::OtherArguments)
        );
        let late = now + SignedDuration::from_mins(5);
        assert_eq!(
            matches(Some(&spent), "agent", "putStore", &same, late),
            Err(Mismatch::Expired)
        );
    }

    #[test]
    fn the_arguments_hash_ignores_key_order_only() {
        let hash = |value: Value| arguments_hash(value.as_object().unwrap());
        let a = hash(json!({"storeId": "s1", "body": {"name": "A", "currency": "EUR"}}));
        let b = hash(json!({"body": {"currency": "EUR", "name": "A"}, "storeId": "s1"}));
        let c = hash(json!({"body": {"currency": "EUR", "name": "B"}, "storeId": "s1"}));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
