//! The fiscal journal seen from outside: its public keys and the verification of a register's
//! chains.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::PathParams;
use crate::ops;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use till_core::fiscal::{ChainKind, verify_chain};
use till_core::ids::RegisterId;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(keys)).routes(routes!(verify))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct KeySet {
    /// Every key that ever signed an entry, as JWK (EC P-256, `kid` = RFC 7638 thumbprint).
    #[schema(value_type = Vec<Object>)]
    keys: Vec<Value>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Verification {
    register_id: String,
    /// True when every chain of the register holds.
    ok: bool,
    /// Entries checked, all chains together.
    entries: usize,
    /// The first entry that does not hold; null when `ok`.
    first_failure: Option<Failure>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    /// `ticket`, `closure`, ...
    chain: String,
    seq: i64,
    reason: String,
}

/// The journal's public keys.
///
/// Public so that anyone holding a ticket or an archive can verify its signature. Safe to call
/// at any time.
#[utoipa::path(get, path = "/v1/fiscal/keys", operation_id = "getFiscalKeys", tag = "fiscal",
    responses((status = 200, description = "The public keys as a JWK set", body = KeySet)))]
async fn keys(State(state): State<AppState>) -> Result<Json<KeySet>, ApiError> {
    let keys = state.store().fiscal_keys().await?;
    Ok(Json(KeySet {
        keys: keys.into_iter().map(|k| k.jwk).collect(),
    }))
}

/// Verify every chain of a register's fiscal journal.
///
/// Walks the ticket and closure chains from their first entry: contiguous sequences, each entry
/// linked to the previous signature, every signature valid under its key. Read-only; safe to
/// call at any time, though it reads the whole journal of the register.
#[utoipa::path(get, path = "/v1/fiscal/registers/{registerId}/verify", operation_id = "verifyRegisterJournal", tag = "fiscal",
    params(("registerId" = String, Path)),
    responses((status = 200, description = "The verdict", body = Verification),
              (status = 404, description = "The register has no journal", body = crate::error::ErrorEnvelope)))]
async fn verify(
    _caller: Authorized<ops::VerifyRegisterJournal>,
    State(state): State<AppState>,
    PathParams(raw_id): PathParams<String>,
) -> Result<Json<Verification>, ApiError> {
    let register = RegisterId::parse(&raw_id).map_err(|error| ApiError::field("registerId", error.to_string()))?;
    if !state.store().register_has_journal(register.as_str()).await? {
        return Err(ApiError::NotFound("This register has no fiscal journal.".into()));
    }
    let keys: HashMap<String, Value> = state
        .store()
        .fiscal_keys()
        .await?
        .into_iter()
        .map(|k| (k.key_id, k.jwk))
        .collect();
    let mut checked = 0;
    let mut first_failure = None;
    for kind in [ChainKind::Ticket, ChainKind::Closure] {
        let entries = state.store().journal(register.as_str(), kind).await?;
        match verify_chain(kind, &entries, &keys) {
            Ok(count) => checked += count,
            Err(failure) => {
                checked += (failure.seq.max(1) - 1) as usize;
                first_failure = Some(Failure {
                    chain: kind.as_str().to_owned(),
                    seq: failure.seq,
                    reason: failure.reason,
                });
                break;
            }
        }
    }
    Ok(Json(Verification {
        register_id: register.into_string(),
        ok: first_failure.is_none(),
        entries: checked,
        first_failure,
    }))
}
