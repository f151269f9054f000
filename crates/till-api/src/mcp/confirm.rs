//! The two calls of a `confirm` tool, as an agent reads them (the workflow is
//! `till_app::confirmations`): the first answers what the call would do and a token; a token
//! presented in the second that does not match is refused in words that say what to do next.

use crate::error::ApiError;
use crate::mcp::tools::{Call, ToolSpec};
use crate::state::AppState;
use serde_json::{Map, Value, json};
use till_app::caller::Principal;
use till_app::confirmations::{self, CONFIRMATION_MINUTES, Confirmation, Mismatch};
use till_core::instant::format_utc;

/// Why a presented token did not act, and what to do.
pub fn refusal(mismatch: &Mismatch, tool: &str) -> String {
    let why = match mismatch {
        Mismatch::NotAToken => "This is not a confirmation token.".to_owned(),
        Mismatch::Unknown => "This confirmation token is unknown or was already used.".to_owned(),
        Mismatch::Expired => {
            format!("This confirmation token expired (tokens last {CONFIRMATION_MINUTES} minutes).")
        }
        Mismatch::OtherPrincipal => "This confirmation token was issued to another caller.".to_owned(),
        Mismatch::OtherOperation(operation) => format!("This confirmation token was issued for {operation}."),
        Mismatch::OtherArguments => {
            "This confirmation token was issued for other arguments, and is now spent.".to_owned()
        }
    };
    format!(
        "{why} Nothing was done. Call {tool} again without `confirmation` for a new summary, and show it to the person."
    )
}

/// What the first call answers: the summary and the token, once the token is held.
pub async fn ask(
    state: &AppState,
    principal: &Principal,
    spec: &ToolSpec,
    arguments: &Map<String, Value>,
    call: &Call,
) -> Result<Value, ApiError> {
    let issued = confirmations::issue(state.app(), principal, spec.operation.id, arguments).await?;
    Ok(summary(spec, arguments, call, &issued))
}

/// The first call's answer, for the person to read before they agree.
fn summary(spec: &ToolSpec, arguments: &Map<String, Value>, call: &Call, issued: &Confirmation) -> Value {
    let (tool, token) = (spec.operation.id, &issued.token);
    json!({
        "confirmationRequired": true,
        "nothingChanged": true,
        "tool": tool,
        "action": spec.summary,
        "effect": spec.effect,
        "request": format!("{} {}", call.method, call.target),
        "arguments": arguments,
        "confirmation": token,
        "expiresAt": format_utc(issued.expires_at),
        "next": format!(
            "Nothing has changed yet. Show the person what this will do ({}) with these arguments. Only if \
             they agree, call {tool} again with exactly the same arguments and \"confirmation\": \"{token}\".",
            spec.summary.trim_end_matches('.')
        ),
    })
}
