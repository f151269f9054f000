//! The fiscal journal from outside: its public keys, the audit of a register's journal, its
//! period closures, and archives an auditor verifies offline.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, Parsed, PathParams};
use crate::fields::{FromBody, Obj};
use crate::openapi::{Text, UtcInstant};
use crate::ops;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use till_app::fiscal::{Audited, CloseRequest, SealedClosure};
use till_core::documents::VatShare;
use till_core::fiscal::audit::Failure;
use till_core::fiscal::payload::{ClosureRecord, Period};
use till_core::fiscal::{ChainKind, Entry};
use till_core::ids::RegisterId;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

mod archives;
pub use archives::ArchiveFile;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(keys))
        .routes(routes!(verify))
        .routes(routes!(chain_entries))
        .routes(routes!(close, list_closures))
        .routes(routes!(archives::make_archive))
        .routes(routes!(archives::get_archive))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct KeySet {
    /// Every key that ever signed an entry.
    keys: Vec<Jwk>,
}

/// A public key of the journal as a JSON Web Key (RFC 7517): EC P-256, for ES256 signatures.
#[derive(Serialize, Deserialize, utoipa::ToSchema)]
pub struct Jwk {
    #[schema(inline)]
    kty: KeyType,
    #[schema(inline)]
    crv: Curve,
    /// The point's x coordinate, base64url without padding.
    x: String,
    /// The point's y coordinate, base64url without padding.
    y: String,
    /// The key's id: its RFC 7638 thumbprint, as entries name it in `keyId`.
    kid: String,
    #[schema(inline)]
    alg: KeyAlgorithm,
    #[schema(inline)]
    #[serde(rename = "use")]
    usage: KeyUse,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
enum KeyType {
    #[serde(rename = "EC")]
    Ec,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
enum Curve {
    #[serde(rename = "P-256")]
    P256,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
enum KeyAlgorithm {
    #[serde(rename = "ES256")]
    Es256,
}

#[derive(Serialize, Deserialize, utoipa::ToSchema)]
enum KeyUse {
    /// Signatures.
    #[serde(rename = "sig")]
    Sig,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Verification {
    pub(crate) register_id: String,
    /// True when every chain of the register holds.
    pub(crate) ok: bool,
    /// Entries checked, all chains together.
    pub(crate) entries: usize,
    /// Entries per chain: `ticket`, `closure`, `duplicate`, `event`, `archive`.
    pub(crate) chains: std::collections::BTreeMap<String, usize>,
    /// The first entry that does not hold; null when `ok`.
    pub(crate) first_failure: Option<FailureView>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailureView {
    /// `ticket`, `closure`, `duplicate`, `event` or `archive`.
    pub(crate) chain: String,
    pub(crate) seq: i64,
    /// `gap`, `link`, `signature`, `altered`, `missing_record`, `truncated`, `closure_sum`,
    /// `grand_total` or `anchor`.
    pub(crate) kind: String,
    pub(crate) reason: String,
}

impl From<&Failure> for FailureView {
    fn from(failure: &Failure) -> Self {
        FailureView {
            chain: failure.chain.as_str().to_owned(),
            seq: failure.seq,
            kind: failure.kind.as_str().to_owned(),
            reason: failure.detail.clone(),
        }
    }
}

/// `{registerId}` of the register routes.
struct RegisterPath(RegisterId);

impl FromParams for RegisterPath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("registerId", RegisterId::parse).map(RegisterPath)
    }
}

/// `{registerId}/chains/{chain}`.
struct ChainPath {
    register: RegisterId,
    chain: ChainKind,
}

impl FromParams for ChainPath {
    fn from_params(params: &Params) -> Option<Self> {
        let register = params.required("registerId", RegisterId::parse);
        let chain = params.required("chain", |text| {
            ChainKind::parse(text).ok_or("must be ticket, closure, duplicate, event or archive")
        });
        Some(ChainPath {
            register: register?,
            chain: chain?,
        })
    }
}

/// The journal's public keys.
///
/// Public so that anyone holding a ticket or an archive can verify its signature. Safe to call
/// at any time.
#[utoipa::path(get, path = "/v1/fiscal/keys", operation_id = "getFiscalKeys", tag = "fiscal",
    responses((status = 200, description = "The public keys as a JWK set", body = KeySet)))]
async fn keys(State(state): State<AppState>) -> Result<Json<KeySet>, ApiError> {
    let keys = till_app::fiscal::keys(state.app()).await?;
    let keys = keys
        .into_iter()
        .map(|key| serde_json::from_value(key.jwk))
        .collect::<Result<_, _>>()
        .map_err(ApiError::internal)?;
    Ok(Json(KeySet { keys }))
}

/// Audit a register's fiscal journal.
///
/// Checks every chain (tickets, closures, duplicates, technical events, archives): contiguous
/// sequences, links, signatures, each signed string rebuilt from the business record it seals,
/// closure sums, perpetual grand totals and anchors. A failure not reported before is recorded
/// as an integrity-failure event (JET 90). Read-only otherwise; safe to call at any time,
/// though it reads the whole journal of the register.
#[utoipa::path(get, path = "/v1/fiscal/registers/{registerId}/verify", operation_id = "verifyRegisterJournal", tag = "fiscal",
    params(("registerId" = Text, Path)),
    responses((status = 200, description = "The verdict", body = Verification),
              (status = 404, description = "The register has no journal", body = crate::error::ErrorEnvelope)))]
async fn verify(
    _caller: Authorized<ops::VerifyRegisterJournal>,
    State(state): State<AppState>,
    PathParams(RegisterPath(register)): PathParams<RegisterPath>,
) -> Result<Json<Verification>, ApiError> {
    verify_journal(&state, register).await.map(Json)
}

/// The audit of a register's journal, as `verifyRegisterJournal` answers it; a failure not
/// reported before is recorded.
pub(crate) async fn verify_journal(state: &AppState, register: RegisterId) -> Result<Verification, ApiError> {
    let Audited { chains, verdict } = till_app::fiscal::audit(state.app(), &register)
        .await?
        .ok_or_else(|| ApiError::NotFound("This register has no fiscal journal.".into()))?;
    let entries = chains.iter().map(|(_, entries)| entries).sum();
    let chains = chains
        .into_iter()
        .map(|(kind, entries)| (kind.as_str().to_owned(), entries))
        .collect();
    Ok(Verification {
        register_id: register.into_string(),
        ok: verdict.is_ok(),
        entries: verdict.as_ref().map_or(entries, |n| *n),
        chains,
        first_failure: verdict.as_ref().err().map(FailureView::from),
    })
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChainView {
    register_id: String,
    #[schema(inline)]
    chain: ChainName,
    /// In sequence order, each with the exact string signed.
    entries: Vec<EntryView>,
}

/// One entry of a chain, as the journal holds it.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntryView {
    register_id: String,
    #[schema(inline)]
    kind: ChainName,
    /// Its place in its chain: 1, 2, 3... without a gap.
    seq: i64,
    /// The exact string that was signed.
    payload: String,
    /// ECDSA P-256 over SHA-256 of `payload`, base64url of the raw `r || s`.
    signature: String,
    /// The signature of the entry before it; null for the first.
    #[schema(required = true)]
    previous_signature: Option<String>,
    /// The `kid` of the key that signed it (`getFiscalKeys`).
    key_id: String,
    /// `ES256`.
    algorithm: String,
    /// The business record it seals: a transaction id, a closure, an event.
    reference: String,
    #[schema(value_type = UtcInstant)]
    created_at: String,
}

impl From<&Entry> for EntryView {
    fn from(entry: &Entry) -> Self {
        EntryView {
            register_id: entry.register_id.clone(),
            kind: ChainName::from(entry.kind),
            seq: entry.seq,
            payload: entry.payload.clone(),
            signature: entry.signature.clone(),
            previous_signature: entry.previous_signature.clone(),
            key_id: entry.key_id.clone(),
            algorithm: entry.algorithm.clone(),
            reference: entry.reference.clone(),
            created_at: entry.created_at.to_string(),
        }
    }
}

/// Read one chain of a register's journal.
///
/// `ticket`, `closure`, `duplicate`, `event` or `archive`: every entry with its signed string,
/// signature, previous signature and key id. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/fiscal/registers/{registerId}/chains/{chain}", operation_id = "getFiscalChain", tag = "fiscal",
    params(("registerId" = Text, Path), ("chain" = inline(ChainName), Path)),
    responses((status = 200, description = "The chain's entries", body = ChainView)))]
async fn chain_entries(
    _caller: Authorized<ops::GetFiscalChain>,
    State(state): State<AppState>,
    PathParams(ChainPath { register, chain }): PathParams<ChainPath>,
) -> Result<Json<ChainView>, ApiError> {
    let entries = till_app::fiscal::chain(state.app(), &register, chain).await?;
    Ok(Json(ChainView {
        register_id: register.into_string(),
        chain: ChainName::from(chain),
        entries: entries.iter().map(EntryView::from).collect(),
    }))
}

/// Body of `POST /v1/fiscal/registers/{registerId}/closures`.
#[derive(utoipa::ToSchema)]
struct CloseBody {
    #[schema(schema_with = period_schema)]
    period: Period,
}

/// The periods a closure names, as the body spells them.
const PERIODS: [(&str, Period); 3] = [("day", Period::Day), ("month", Period::Month), ("year", Period::Year)];

fn period_schema() -> utoipa::openapi::schema::Schema {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(PERIODS.iter().map(|(name, _)| *name)))
        .description(Some(
            "`day`, `month` or `year`: the current one, in the store's time zone.",
        ))
        .into()
}

impl FromBody for CloseBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let period = root.required("period", |f| f.one_of(&PERIODS));
        Some(CloseBody { period: period? })
    }
}

/// A chain of a register's journal.
#[derive(Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
enum ChainName {
    Ticket,
    Closure,
    Duplicate,
    Event,
    Archive,
}

impl From<ChainKind> for ChainName {
    fn from(kind: ChainKind) -> Self {
        match kind {
            ChainKind::Ticket => ChainName::Ticket,
            ChainKind::Closure => ChainName::Closure,
            ChainKind::Duplicate => ChainName::Duplicate,
            ChainKind::Event => ChainName::Event,
            ChainKind::Archive => ChainName::Archive,
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClosureView {
    /// Its entry in the register's closure chain.
    seq: i64,
    /// `DAY`, `MONTH` or `YEAR`.
    period: String,
    period_from: String,
    period_to: String,
    ticket_count: i64,
    first_ticket_seq: i64,
    last_ticket_seq: i64,
    total_cents: i64,
    /// Returns counted by their magnitude.
    abs_total_cents: i64,
    /// Perpetual grand totals of the register after this closure.
    grand_total_cents: i64,
    grand_total_abs_cents: i64,
    vat: Vec<VatShare>,
    closed_at: String,
    /// On a day: the late sales among its tickets (sales of sessions closed before they
    /// arrived), shown apart. Absent when there were none.
    #[serde(skip_serializing_if = "Option::is_none")]
    late: Option<LateTicketsView>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LateTicketsView {
    sales_count: i64,
    total_cents: i64,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClosureList {
    register_id: String,
    closures: Vec<ClosureView>,
}

impl From<SealedClosure> for ClosureView {
    fn from(sealed: SealedClosure) -> Self {
        let record: ClosureRecord = sealed.record;
        ClosureView {
            seq: sealed.seq,
            period: record.period.as_str().to_owned(),
            period_from: record.period_from,
            period_to: record.period_to,
            ticket_count: record.ticket_count,
            first_ticket_seq: record.first_ticket_seq,
            last_ticket_seq: record.last_ticket_seq,
            total_cents: record.total_cents,
            abs_total_cents: record.abs_total_cents,
            grand_total_cents: record.grand_total_cents,
            grand_total_abs_cents: record.grand_total_abs_cents,
            vat: record.vat.iter().map(VatShare::from).collect(),
            closed_at: till_core::instant::format_utc(till_core::instant::from_micros(record.closed_at)),
            late: record.late.map(|late| LateTicketsView {
                sales_count: late.sales_count,
                total_cents: late.total_cents,
            }),
        }
    }
}

/// Close the register's current day, month or year.
///
/// Seals the closure (and any earlier period not yet closed) in the register's closure chain
/// with its VAT breakdown, total, perpetual grand totals and ticket anchors. No sale can then be
/// booked into the closed period, and no session opens in it. Refused while a session of the
/// register is open: close it first. Days also close by themselves at the first write after the
/// store's midnight. A person should confirm: a closed period cannot be reopened.
#[utoipa::path(post, path = "/v1/fiscal/registers/{registerId}/closures", operation_id = "closeFiscalPeriod", tag = "fiscal",
    params(("registerId" = Text, Path)),
    request_body = CloseBody,
    responses((status = 201, description = "The closures sealed by this request", body = ClosureList),
              (status = 404, description = "Unknown register", body = crate::error::ErrorEnvelope),
              (status = 409, description = "That period is already closed", body = crate::error::ErrorEnvelope),
              (status = 422, description = "A session of the register is open; nothing was sealed", body = crate::error::ErrorEnvelope)))]
async fn close(
    _caller: Authorized<ops::CloseFiscalPeriod>,
    State(state): State<AppState>,
    PathParams(RegisterPath(register)): PathParams<RegisterPath>,
    Parsed(CloseBody { period }): Parsed<CloseBody>,
) -> Result<(StatusCode, Json<ClosureList>), ApiError> {
    match till_app::fiscal::close(state.app(), &register, period).await? {
        CloseRequest::Closed(closures) => Ok((
            StatusCode::CREATED,
            Json(ClosureList {
                register_id: register.into_string(),
                closures: closures.into_iter().map(ClosureView::from).collect(),
            }),
        )),
        CloseRequest::AlreadyClosed => Err(ApiError::Conflict(
            "That period is already closed for this register.".into(),
        )),
        CloseRequest::UnknownRegister => Err(crate::phrases::no_such_register()),
    }
}

/// List the register's period closures.
///
/// Day, month and year closures in chain order. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/fiscal/registers/{registerId}/closures", operation_id = "listFiscalClosures", tag = "fiscal",
    params(("registerId" = Text, Path)),
    responses((status = 200, description = "The closures", body = ClosureList)))]
async fn list_closures(
    _caller: Authorized<ops::ListFiscalClosures>,
    State(state): State<AppState>,
    PathParams(RegisterPath(register)): PathParams<RegisterPath>,
) -> Result<Json<ClosureList>, ApiError> {
    let closures = till_app::fiscal::closures(state.app(), &register).await?;
    Ok(Json(ClosureList {
        register_id: register.into_string(),
        closures: closures.into_iter().map(ClosureView::from).collect(),
    }))
}
