//! Register sessions: `POST /v1/register-sessions` opens a cashier's shift on a till and mints
//! the till's bearer token; `POST /v1/register-sessions/{sessionId}/close` ends it with its Z
//! report ([`till_app::sessions`]); `GET /v1/register-sessions` lists them, newest first.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, OptionalParsed, Params, Parsed, PathParams, QueryParams};
use crate::fields::{FromBody, Obj};
use crate::openapi::Text;
use crate::ops;
use crate::pagination::{Page, PageQuery, Paging, Scope};
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;
use till_app::drawer::x_report;
use till_app::sessions::{self, OpenRequest, Opened, SessionFilter, SessionRecord, close, open};
use till_app::storage::Newest;
use till_core::documents::{XReport, ZReport};
use till_core::drawer::Count;
use till_core::ids::{RegisterId, SessionId, StoreId, Subject};
use till_core::instant::format_utc;
use till_core::money::Cents;
use till_core::sale::TenderMethod;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

mod cash_movements;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(open_session, list_sessions))
        .routes(routes!(get_session))
        .routes(routes!(close_session))
        .routes(routes!(cash_movements::record_cash_movement))
        .routes(routes!(get_x_report))
}

/// Body of `POST /v1/register-sessions`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct OpenSessionBody {
    #[schema(value_type = Text)]
    store_id: StoreId,
    /// The till. It belongs to the store it was first opened in.
    #[schema(value_type = Text)]
    register_id: RegisterId,
    /// The cashier working the shift; their PIN proves they are at the till.
    #[schema(value_type = Text)]
    cashier_subject: Subject,
    /// The cashier's PIN as enrolled (4 to 12 digits); any other text is a wrong PIN.
    #[schema(value_type = Text)]
    pin: String,
    /// Cash in the drawer at the start. Default 0.
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 9007199254740991_i64)]
    opening_float_cents: Option<Cents>,
}

impl FromBody for OpenSessionBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let store_id = root.required("storeId", |f| f.parse_text(StoreId::parse));
        let register_id = root.required("registerId", |f| f.parse_text(RegisterId::parse));
        let cashier_subject = root.required("cashierSubject", |f| f.parse_text(Subject::parse));
        // Any string is checked against the hash; the shape of a PIN is not a hint to give.
        let pin = root.required("pin", |f| f.text());
        let opening_float_cents = root.optional("openingFloatCents", |f| f.cents());
        Some(OpenSessionBody {
            store_id: store_id?,
            register_id: register_id?,
            cashier_subject: cashier_subject?,
            pin: pin?,
            opening_float_cents: opening_float_cents?,
        })
    }
}

impl From<OpenSessionBody> for OpenRequest {
    fn from(body: OpenSessionBody) -> OpenRequest {
        OpenRequest {
            store_id: body.store_id,
            register_id: body.register_id,
            cashier: body.cashier_subject,
            pin: body.pin,
            opening_float: body.opening_float_cents.unwrap_or(Cents::ZERO),
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenedSessionView {
    session_id: String,
    /// The till's bearer token, `pos_st_...`. Shown once; only its hash is kept.
    token: String,
    store_id: String,
    register_id: String,
    cashier_subject: String,
    /// What the token may do: the cashier's scopes and permissions.
    scopes: Vec<String>,
    expires_at: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    session_id: String,
    store_id: String,
    register_id: String,
    cashier_subject: String,
    /// `open`, `closed` or `expired`.
    status: &'static str,
    opening_float_cents: i64,
    opened_at: String,
    expires_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    closed_at: Option<String>,
}

impl SessionView {
    fn new(record: SessionRecord, now: Timestamp) -> SessionView {
        let status = match (record.closed_at, record.is_open_at(now)) {
            (Some(_), _) => "closed",
            (None, true) => "open",
            (None, false) => "expired",
        };
        SessionView {
            session_id: record.session_id.into_string(),
            store_id: record.store_id.into_string(),
            register_id: record.register_id.into_string(),
            cashier_subject: record.cashier_subject.into_string(),
            status,
            opening_float_cents: record.opening_float.get(),
            opened_at: format_utc(record.opened_at),
            expires_at: format_utc(record.expires_at),
            closed_at: record.closed_at.map(format_utc),
        }
    }
}

/// Open a register session for a cashier and mint the till's token.
///
/// Needs the cashier's PIN, so a person must be at the till. Wrong PINs count against the
/// cashier and lock them out for a while after too many. One open session per till at a time;
/// none on a day the register's closure has closed early.
#[utoipa::path(post, path = "/v1/register-sessions", operation_id = "openRegisterSession", tag = "sessions",
    request_body = OpenSessionBody,
    responses((status = 201, description = "Opened; the token is in the body", body = OpenedSessionView),
              (status = 401, description = "Unknown cashier or wrong PIN (indistinguishable)", body = crate::error::ErrorEnvelope),
              (status = 409, description = "The till already has an open session", body = crate::error::ErrorEnvelope),
              (status = 422, description = "The till belongs to another store, or its day is closed", body = crate::error::ErrorEnvelope),
              (status = 429, description = "LOCKED_OUT after too many wrong PINs; see Retry-After", body = crate::error::ErrorEnvelope)))]
async fn open_session(
    _caller: Authorized<ops::OpenSession>,
    State(state): State<AppState>,
    Parsed(body): Parsed<OpenSessionBody>,
) -> Result<(StatusCode, Json<OpenedSessionView>), ApiError> {
    let opened = open(state.app(), body.into()).await?;
    Ok((StatusCode::CREATED, Json(OpenedSessionView::from(opened))))
}

impl From<Opened> for OpenedSessionView {
    fn from(Opened { record, token, grants }: Opened) -> OpenedSessionView {
        OpenedSessionView {
            session_id: record.session_id.into_string(),
            token,
            store_id: record.store_id.into_string(),
            register_id: record.register_id.into_string(),
            cashier_subject: record.cashier_subject.into_string(),
            scopes: grants.iter().map(|g| g.as_str().to_owned()).collect(),
            expires_at: format_utc(record.expires_at),
        }
    }
}

/// `{sessionId}` of the session routes.
struct SessionPath(SessionId);

impl FromParams for SessionPath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("sessionId", SessionId::parse).map(SessionPath)
    }
}

/// Read a register session's state (never its token).
///
/// A till's session token reads its own store's sessions only (another store's is 404).
/// Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/register-sessions/{sessionId}", operation_id = "getRegisterSession", tag = "sessions",
    params(("sessionId" = Text, Path)),
    responses((status = 200, description = "The session", body = SessionView),
              (status = 404, description = "No such session", body = crate::error::ErrorEnvelope)))]
async fn get_session(
    caller: Authorized<ops::GetSession>,
    State(state): State<AppState>,
    PathParams(SessionPath(id)): PathParams<SessionPath>,
) -> Result<Json<SessionView>, ApiError> {
    let record = sessions::session(state.app(), &caller.principal, &id)
        .await?
        .ok_or_else(|| ApiError::NotFound("Register session not found.".into()))?;
    Ok(Json(SessionView::new(record, state.now())))
}

/// The filters of `GET /v1/register-sessions`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
struct SessionsQuery {
    /// Only this store's sessions.
    #[param(value_type = Option<Text>)]
    store_id: Option<StoreId>,
    /// Only this till's sessions.
    #[param(value_type = Option<Text>)]
    register_id: Option<RegisterId>,
    /// Only sessions whose status is `open` (true), or `closed` or `expired` (false), now.
    open: Option<bool>,
}

impl FromParams for SessionsQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let store_id = params.optional("storeId", StoreId::parse);
        let register_id = params.optional("registerId", RegisterId::parse);
        let open = params.boolean("open");
        Some(SessionsQuery {
            store_id: store_id?,
            register_id: register_id?,
            open: open?,
        })
    }
}

/// The filters and the page of a session list.
struct SessionList {
    filter: SessionFilter,
    paging: Paging<Newest<SessionId>>,
}

impl FromParams for SessionList {
    fn from_params(params: &Params) -> Option<Self> {
        let query = SessionsQuery::from_params(params);
        let page = PageQuery::read(params);
        let SessionsQuery {
            store_id,
            register_id,
            open,
        } = query?;
        let filter = SessionFilter {
            store_id,
            register_id,
            open,
        };
        let scope = Scope::new("register-sessions")
            .filter("storeId", filter.store_id.as_ref())
            .filter("registerId", filter.register_id.as_ref())
            .filter("open", filter.open);
        let paging = page?.paging(params, scope)?;
        Some(SessionList { filter, paging })
    }
}

/// A page of the list, as the document names it.
type SessionPage = Page<SessionView>;

/// List register sessions, newest opened first (never their tokens).
///
/// Filter by store, till and whether a session is open now; a page at a time: follow
/// `nextCursor` until it is null, with the same filters. A till's session token lists its own
/// store's sessions only. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/register-sessions", operation_id = "listRegisterSessions", tag = "sessions",
    params(SessionsQuery, PageQuery),
    responses((status = 200, description = "A page of sessions, newest opened first", body = SessionPage)))]
async fn list_sessions(
    caller: Authorized<ops::ListSessions>,
    State(state): State<AppState>,
    QueryParams(SessionList { filter, paging }): QueryParams<SessionList>,
) -> Result<Json<SessionPage>, ApiError> {
    let now = state.now();
    let key = |record: &SessionRecord| Newest {
        at: record.opened_at,
        id: record.session_id.clone(),
    };
    let records = sessions::list_within_reach(state.app(), &caller.principal, filter, now, &paging.window()).await?;
    Ok(Json(paging.page(records, key, |record| SessionView::new(record, now))))
}

/// Body of `POST /v1/register-sessions/{sessionId}/close`, which may be left out.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct CloseSessionBody {
    /// What the cashier counted, per tender method, each method once. The Z report then gives
    /// each method's expected and counted amounts and their difference, sealed with it.
    #[schema(inline)]
    counted: Option<Vec<CountedBody>>,
}

#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct CountedBody {
    #[schema(schema_with = method_schema)]
    method: TenderMethod,
    #[schema(value_type = i64, minimum = 0, maximum = 9007199254740991_i64)]
    counted_cents: Cents,
}

impl FromBody for CloseSessionBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let methods: Vec<(&str, TenderMethod)> = TenderMethod::ALL.iter().map(|m| (m.as_str(), *m)).collect();
        let counted = root.optional("counted", |field| {
            let mut seen = Vec::new();
            field.array(|item| {
                let line = item.object()?;
                let method = line.required("method", |f| f.one_of(&methods));
                let counted = line.required("countedCents", |f| f.cents());
                let method = method?;
                if seen.contains(&method) {
                    return line.fail("method", "is counted twice");
                }
                seen.push(method);
                Some(CountedBody {
                    method,
                    counted_cents: counted?,
                })
            })
        });
        Some(CloseSessionBody { counted: counted? })
    }
}

impl From<CountedBody> for Count {
    fn from(line: CountedBody) -> Count {
        Count {
            method: line.method.as_str().to_owned(),
            counted: line.counted_cents,
        }
    }
}

fn method_schema() -> utoipa::openapi::schema::Schema {
    crate::openapi::words(
        TenderMethod::ALL.iter().map(|method| method.as_str()),
        "The tender method counted.",
    )
}

/// Close a register session and return its Z report.
///
/// Ends the shift: no further sale can be booked on it. With `counted`, each tender method's
/// count is compared with what was expected and sealed in the report. Closing twice returns the
/// same report, as sealed the first time. A person should confirm.
#[utoipa::path(post, path = "/v1/register-sessions/{sessionId}/close", operation_id = "closeRegisterSession", tag = "sessions",
    params(("sessionId" = Text, Path)),
    request_body(content = Option<CloseSessionBody>, description = "What was counted; may be left out"),
    responses((status = 200, description = "Closed (now or earlier); the Z report", body = ZReport),
              (status = 404, description = "No such session", body = crate::error::ErrorEnvelope)))]
async fn close_session(
    _caller: Authorized<ops::CloseSession>,
    State(state): State<AppState>,
    PathParams(SessionPath(id)): PathParams<SessionPath>,
    OptionalParsed(body): OptionalParsed<CloseSessionBody>,
) -> Result<Json<Value>, ApiError> {
    // No body, or no `counted`: a close without counts.
    let counted = body.and_then(|body| body.counted).unwrap_or_default();
    let counted = counted.into_iter().map(Count::from).collect();
    Ok(Json(close(state.app(), id, counted).await?))
}

/// Read the X report of an open session: what its Z report would say if it closed now.
///
/// Computed by the same function as the Z report, from the same sales and movements, and not
/// sealed. With a till's token, only its own session. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/register-sessions/{sessionId}/x-report", operation_id = "getXReport", tag = "sessions",
    params(("sessionId" = Text, Path)),
    responses((status = 200, description = "The X report", body = XReport),
              (status = 403, description = "Another session's till token, or a caller without pos.sessions.close", body = crate::error::ErrorEnvelope),
              (status = 404, description = "No such session", body = crate::error::ErrorEnvelope),
              (status = 422, description = "The session is closed or expired: read its Z report", body = crate::error::ErrorEnvelope)))]
async fn get_x_report(
    caller: Authorized<ops::GetXReport>,
    State(state): State<AppState>,
    PathParams(SessionPath(id)): PathParams<SessionPath>,
) -> Result<Json<XReport>, ApiError> {
    Ok(Json(x_report(state.app(), &caller.principal, id).await?))
}
