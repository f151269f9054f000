//! `PUT/GET /v1/stores/{storeId}`: the store network.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, JsonBody, Params, PathParams};
use crate::fields::Problems;
use crate::ops;
use crate::routes::Written;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use serde_json::Value;
use till_core::ids::StoreId;
use till_core::instant::format_utc;
use till_core::store::{Currency, Siret, StoreProfile, Timezone};
use till_store::stores::StoreRecord;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(put_store, get_store))
}

/// Body of `PUT /v1/stores/{storeId}`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // the wire shape for the document; `parse_store` reads the body
struct StoreBody {
    #[schema(min_length = 1, max_length = 255)]
    name: String,
    /// IANA time zone; days close at midnight in it. Default `Europe/Paris`.
    #[schema(example = "Europe/Paris")]
    timezone: Option<String>,
    /// ISO 4217 code. Default `EUR`.
    #[schema(pattern = "^[A-Z]{3}$")]
    currency: Option<String>,
    /// French establishment number, 14 digits, printed on receipts.
    #[schema(pattern = "^[0-9]{14}$")]
    siret: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoreView {
    store_id: String,
    name: String,
    timezone: String,
    currency: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    siret: Option<String>,
    created_at: String,
    updated_at: String,
}

impl From<StoreRecord> for StoreView {
    fn from(record: StoreRecord) -> Self {
        StoreView {
            store_id: record.store_id.into_string(),
            name: record.profile.name,
            timezone: record.profile.timezone.as_str().to_owned(),
            currency: record.profile.currency.as_str().to_owned(),
            siret: record.profile.siret.map(|s| s.as_str().to_owned()),
            created_at: format_utc(record.created_at),
            updated_at: format_utc(record.updated_at),
        }
    }
}

fn parse_store(body: &Value) -> Result<StoreProfile, ApiError> {
    let problems = Problems::new();
    let (name, timezone, currency, siret) = match problems.root(body) {
        Some(root) => (
            root.required("name", |f| f.text()),
            root.optional("timezone", |f| {
                f.string_as("must be an IANA time zone such as Europe/Paris", Timezone::parse)
            }),
            root.optional("currency", |f| {
                f.string_as("must be an ISO 4217 code such as EUR", Currency::parse)
            }),
            root.optional("siret", |f| f.string_as("must be 14 digits", Siret::parse)),
        ),
        None => (None, None, None, None),
    };
    problems.finish(|| {
        Some(StoreProfile {
            name: name?,
            timezone: timezone?.unwrap_or_else(Timezone::default_zone),
            currency: currency?.unwrap_or_else(Currency::default_currency),
            siret: siret?,
        })
    })
}

/// `{storeId}` of the store routes.
pub(crate) struct StorePath(StoreId);

impl FromParams for StorePath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("storeId", StoreId::parse).map(StorePath)
    }
}

/// Create or replace a store.
///
/// Back-office provisioning. Once the network has a store, sales must name one of its stores.
/// Idempotent: sending the same body again changes nothing. A person should confirm the change.
#[utoipa::path(put, path = "/v1/stores/{storeId}", operation_id = "putStore", tag = "provisioning",
    params(("storeId" = String, Path, description = "Store identifier")),
    request_body = StoreBody,
    responses((status = 200, description = "Replaced", body = StoreView),
              (status = 201, description = "Created", body = StoreView)))]
async fn put_store(
    _caller: Authorized<ops::PutStore>,
    State(state): State<AppState>,
    PathParams(StorePath(id)): PathParams<StorePath>,
    JsonBody(body): JsonBody,
) -> Result<Written<StoreView>, ApiError> {
    let profile = parse_store(&body)?;
    let (record, created) = state.store().put_store(id, profile, state.now()).await?;
    Ok(Written::new(created, record.into()))
}

/// Read a store.
///
/// Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/stores/{storeId}", operation_id = "getStore", tag = "provisioning",
    params(("storeId" = String, Path, description = "Store identifier")),
    responses((status = 200, description = "The store", body = StoreView),
              (status = 404, description = "No such store", body = crate::error::ErrorEnvelope)))]
async fn get_store(
    _caller: Authorized<ops::GetStore>,
    State(state): State<AppState>,
    PathParams(StorePath(id)): PathParams<StorePath>,
) -> Result<Json<StoreView>, ApiError> {
    let record = state
        .store()
        .get_store(&id)
        .await?
        .ok_or_else(|| ApiError::NotFound("Store not found.".into()))?;
    Ok(Json(record.into()))
}
