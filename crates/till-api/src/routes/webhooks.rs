//! Webhooks: `POST /v1/webhooks`, `GET /v1/webhooks`, `DELETE /v1/webhooks/{id}`,
//! `GET /v1/webhooks/{id}/deliveries` and `POST /v1/webhooks/{id}/replay` (docs/events.md).
//! An endpoint receives the event feed in the Standard Webhooks form; the delivery itself
//! runs in the background on every node ([`crate::delivery`]).

use crate::auth::Authorized;
use crate::delivery::sender::check_url;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, Parsed, PathParams, QueryParams};
use crate::fields::{Field, FromBody, Obj};
use crate::openapi::{Text, UtcInstant, named_words, words};
use crate::ops;
use crate::routes::Written;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use till_app::webhooks::{Created, DeliveryRecord, EndpointRecord, MOST_DELIVERIES_READ, Replayed};
use till_core::events::{EventType, FeedCursor};
use till_core::instant::format_utc;
use till_core::webhooks::{DisableReason, Failure, MAX_URL_CHARS, URL_PATTERN, WebhookUrl};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ArrayBuilder, ArrayItems, ObjectBuilder, Schema, SchemaFormat, SchemaType, Type};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_webhook, list_webhooks))
        .routes(routes!(delete_webhook))
        .routes(routes!(list_deliveries))
        .routes(routes!(replay_webhook))
}

/// Attempts one read of deliveries answers unless told.
const DEFAULT_DELIVERIES: i64 = 50;

/// Body of `POST /v1/webhooks`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct NewWebhookBody {
    #[schema(schema_with = url_schema)]
    url: WebhookUrl,
    #[schema(schema_with = wanted_types_schema)]
    types: Option<Vec<EventType>>,
    /// What the endpoint is for, for people.
    #[schema(value_type = Option<Text>)]
    description: Option<String>,
}

/// Body of `POST /v1/webhooks/{id}/replay`.
#[derive(utoipa::ToSchema)]
struct ReplayBody {
    /// The feed cursor to deliver from: every event after it is delivered again, in feed order
    /// (`0`: from the feed's first event). At most the feed's last cursor.
    #[schema(value_type = String, pattern = r"^[0-9]{1,18}$", min_length = 1, max_length = 18)]
    after: FeedCursor,
}

/// A webhook endpoint and where its deliveries stand.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookView {
    /// `whk_` and 22 characters.
    id: String,
    /// Where deliveries are POSTed, as till reads the URL it was given.
    url: String,
    #[schema(schema_with = given_types_schema, required = true)]
    types: Option<Vec<&'static str>>,
    #[schema(value_type = Option<Text>, required = true)]
    description: Option<String>,
    #[schema(value_type = UtcInstant)]
    created_at: String,
    #[schema(schema_with = state_schema)]
    state: &'static str,
    /// Why and since when it is no longer tried; null while active.
    #[schema(required = true)]
    disabled: Option<DisabledView>,
    /// The feed cursor it is delivered through: every event up to it of its types was
    /// answered 2xx. Events after it are still to come.
    cursor: String,
    /// The first failure of its current run of failed attempts; null when its last attempt
    /// was delivered.
    #[schema(value_type = Option<UtcInstant>, required = true)]
    failing_since: Option<String>,
    /// Failed attempts in a row.
    failures: u32,
    /// The last failed attempt of the run; null when its last attempt was delivered.
    #[schema(required = true)]
    last_failure: Option<DeliveryFailureView>,
    /// When it is tried again while failing; null otherwise.
    #[schema(value_type = Option<UtcInstant>, required = true)]
    next_attempt_at: Option<String>,
}

/// A new endpoint, with its signing secret: shown this once.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedWebhookView {
    #[serde(flatten)]
    #[schema(inline)]
    webhook: WebhookView,
    /// `whsec_` and the key in base64: verify each delivery's `webhook-signature` with it
    /// (docs/events.md). It is never shown again.
    secret: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DisabledView {
    #[schema(schema_with = disable_reason_schema)]
    reason: &'static str,
    #[schema(value_type = UtcInstant)]
    since: String,
    /// The reason, for people.
    message: String,
}

/// How an attempt failed.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryFailureView {
    #[schema(value_type = FailureKind)]
    error: &'static str,
    /// The receiver's status, when it answered.
    #[schema(required = true)]
    status_code: Option<u16>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookList {
    /// Oldest first.
    webhooks: Vec<WebhookView>,
}

/// One attempt to deliver one event.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryView {
    /// The event's id, as the feed and the `webhook-id` header give it.
    event_id: String,
    /// 1 for the event's first try since the endpoint last moved on, then 2, 3, ...
    attempt: u32,
    /// Answered 2xx.
    delivered: bool,
    /// The receiver's status; null when it did not answer.
    #[schema(required = true)]
    status_code: Option<u16>,
    /// How it failed; null when delivered.
    #[schema(value_type = Option<FailureKind>, required = true)]
    error: Option<&'static str>,
    #[schema(value_type = UtcInstant)]
    at: String,
    duration_ms: u64,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryList {
    /// Newest first.
    deliveries: Vec<DeliveryView>,
}

fn url_schema() -> Schema {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::Custom("uri".to_owned())))
        .max_length(Some(MAX_URL_CHARS))
        .pattern(Some(URL_PATTERN))
        .description(Some(
            "Where deliveries are POSTed: http or https, with a host, without a user name or password, \
             at most 2048 characters. Its host must be, and resolve to, public addresses only \
             (no loopback, private, link-local or other reserved address), unless the operator \
             allows private ones.",
        ))
        .into()
}

fn event_type_schema() -> Schema {
    words(
        EventType::ALL.iter().map(|kind| kind.as_str()),
        "An event type of the feed.",
    )
}

fn types_schema(description: &str) -> Schema {
    ArrayBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Array, Type::Null]))
        .items(ArrayItems::RefOrSchema(Box::new(RefOr::T(event_type_schema()))))
        .min_items(Some(1))
        .unique_items(true)
        .description(Some(description))
        .into()
}

fn wanted_types_schema() -> Schema {
    types_schema("Only events of these types, each named once; every type when left out or null.")
}

fn given_types_schema() -> Schema {
    types_schema("The event types it receives; null: every type.")
}

fn state_schema() -> Schema {
    words(
        ["active", "disabled"],
        "Disabled: not tried until a replay enables it again.",
    )
}

fn disable_reason_schema() -> Schema {
    words(
        DisableReason::ALL.iter().map(|reason| reason.as_str()),
        "`failing`: every attempt failed for the whole retry window; `gone`: the receiver answered 410.",
    )
}

const FAILURE_WORDS: &str = "`status`: answered neither 2xx, 3xx nor 410; `redirect`: answered 3xx, which is \
     not followed; `gone`: answered 410; `timeout`: no answer in time; `connection`: no connection, \
     or it broke; `address_refused`: the host resolved to an address deliveries may not go to.";

named_words!(FailureKind, "DeliveryFailureKind", Failure::KINDS, FAILURE_WORDS);

impl WebhookView {
    fn of(record: EndpointRecord, retry_window: std::time::Duration) -> WebhookView {
        let disabled = record.disabled.map(|disabled| DisabledView {
            reason: disabled.reason.as_str(),
            since: format_utc(disabled.at),
            message: disabled_message(disabled.reason, record.failing, retry_window),
        });
        let next_attempt_at = match (&record.failing, &disabled) {
            (Some(_), None) => Some(format_utc(record.due_at)),
            _ => None,
        };
        WebhookView {
            id: record.id,
            url: record.url,
            types: record
                .types
                .map(|types| types.iter().map(|kind| kind.as_str()).collect()),
            description: record.description,
            created_at: format_utc(record.created_at),
            state: if disabled.is_some() { "disabled" } else { "active" },
            disabled,
            cursor: record.delivered_through.to_string(),
            failing_since: record.failing.map(|(streak, _)| format_utc(streak.since)),
            failures: record.failing.map_or(0, |(streak, _)| streak.failures),
            last_failure: record.failing.map(|(_, failure)| DeliveryFailureView {
                error: failure.kind(),
                status_code: failure.status(),
            }),
            next_attempt_at,
        }
    }
}

/// Why an endpoint stopped being tried, for the person reading the list.
fn disabled_message(
    reason: DisableReason,
    failing: Option<(till_core::webhooks::Streak, Failure)>,
    retry_window: std::time::Duration,
) -> String {
    let last = failing.map_or_else(String::new, |(_, failure)| {
        format!(" The last: {}.", failure_phrase(failure))
    });
    match reason {
        DisableReason::Gone => "The receiver answered 410 Gone: it wants no more deliveries. \
             Replay from a cursor to enable it again."
            .to_owned(),
        DisableReason::Failing => format!(
            "Every attempt failed for {}.{last} Replay from a cursor to enable it again.",
            jiff::SignedDuration::try_from(retry_window)
                .map_or_else(|_| "too long".to_owned(), |window| format!("{window:#}"))
        ),
    }
}

fn failure_phrase(failure: Failure) -> String {
    match failure {
        Failure::Status(status) => format!("answered HTTP {status}"),
        Failure::Redirect(status) => format!("answered HTTP {status}, a redirect, which is not followed"),
        Failure::Gone => "answered HTTP 410 Gone".to_owned(),
        Failure::Timeout => "no answer in time".to_owned(),
        Failure::Connection => "no connection".to_owned(),
        Failure::AddressRefused => "the host resolved to an address deliveries may not go to".to_owned(),
    }
}

impl From<DeliveryRecord> for DeliveryView {
    fn from(record: DeliveryRecord) -> Self {
        let attempt = record.attempt;
        DeliveryView {
            event_id: format!("evt_{}", attempt.event_id),
            attempt: attempt.attempt,
            delivered: attempt.failure.is_none(),
            status_code: attempt.status,
            error: attempt.failure.map(Failure::kind),
            at: format_utc(attempt.at),
            duration_ms: u64::try_from(attempt.duration.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

impl FromBody for NewWebhookBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let url = root.required("url", |f| match WebhookUrl::parse(f.string()?) {
            Ok(url) => Some(url),
            Err(refusal) => f.fail(refusal.to_string()),
        });
        let types = root.optional("types", parse_types);
        let description = root.optional("description", |f| f.text());
        Some(NewWebhookBody {
            url: url?,
            types: types?,
            description: description?,
        })
    }
}

/// At least one event type, each once.
fn parse_types(field: Field<'_>) -> Option<Vec<EventType>> {
    let choices: Vec<(&str, EventType)> = EventType::ALL.iter().map(|kind| (kind.as_str(), *kind)).collect();
    let types = field.array(|item| item.one_of(&choices))?;
    if types.is_empty() {
        return field.fail("must name at least one event type; leave it out for every type");
    }
    for (n, kind) in types.iter().enumerate() {
        if types[..n].contains(kind) {
            return field.fail(format!("names {} more than once", kind.as_str()));
        }
    }
    Some(types)
}

impl FromBody for ReplayBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let after = root.required("after", |f| {
            f.string_as(
                "must be a cursor of the feed (the digits of an event's cursor, or 0)",
                FeedCursor::parse,
            )
        });
        Some(ReplayBody { after: after? })
    }
}

/// `{id}` of an endpoint: any text, so that an id of another shape is answered like an
/// unknown one.
struct WebhookPath(String);

impl FromParams for WebhookPath {
    fn from_params(params: &Params) -> Option<Self> {
        params.text("id").map(WebhookPath)
    }
}

#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct DeliveriesQuery {
    /// At most this many attempts, newest first (default 50).
    #[param(minimum = 1, maximum = 500)]
    limit: Option<i64>,
}

impl FromParams for DeliveriesQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let limit = params.integer("limit", 1, MOST_DELIVERIES_READ);
        Some(DeliveriesQuery { limit: limit? })
    }
}

fn no_such_webhook() -> ApiError {
    ApiError::NotFound("No webhook endpoint with this id.".into())
}

/// Create a webhook endpoint.
///
/// From then on every event of the feed (of `types`, when given) is POSTed to `url`, signed
/// in the Standard Webhooks form, at least once and in feed order; the answer holds the
/// signing secret, shown this once. The endpoint starts after the feed's last event now.
/// Back-office; a person should confirm.
#[utoipa::path(post, path = "/v1/webhooks", operation_id = "createWebhook", tag = "events",
    request_body = NewWebhookBody,
    responses((status = 201, description = "Created; `secret` is shown this once", body = CreatedWebhookView)))]
async fn create_webhook(
    _caller: Authorized<ops::CreateWebhook>,
    State(state): State<AppState>,
    Parsed(new): Parsed<NewWebhookBody>,
) -> Result<Written<CreatedWebhookView>, ApiError> {
    let settings = &state.config().webhooks;
    check_url(&new.url, settings.allow_private).await.map_err(|refused| {
        ApiError::field(
            "url",
            format!("leads to {refused}; webhooks go to public addresses only"),
        )
    })?;
    let url = new.url.as_str().to_owned();
    let Created { record, secret } = till_app::webhooks::create(state.app(), url, new.types, new.description).await?;
    Ok(Written::new(
        true,
        CreatedWebhookView {
            webhook: WebhookView::of(record, settings.retry.window),
            secret: secret.to_text(),
        },
    ))
}

/// List the webhook endpoints and where their deliveries stand.
///
/// Each endpoint with its state (active, or disabled with why and since when), its cursor
/// and its current failures; never its secret. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/webhooks", operation_id = "listWebhooks", tag = "events",
    responses((status = 200, description = "Every endpoint, oldest first", body = WebhookList)))]
async fn list_webhooks(
    _caller: Authorized<ops::ListWebhooks>,
    State(state): State<AppState>,
) -> Result<Json<WebhookList>, ApiError> {
    let window = state.config().webhooks.retry.window;
    let webhooks = till_app::webhooks::endpoints(state.app()).await?;
    Ok(Json(WebhookList {
        webhooks: webhooks
            .into_iter()
            .map(|record| WebhookView::of(record, window))
            .collect(),
    }))
}

/// Delete a webhook endpoint.
///
/// Nothing more is delivered to it; its record of attempts goes with it. A delivery already
/// under way may still arrive. A person should confirm.
#[utoipa::path(delete, path = "/v1/webhooks/{id}", operation_id = "deleteWebhook", tag = "events",
    params(("id" = Text, Path)),
    responses((status = 204, description = "Deleted"),
              (status = 404, description = "No such endpoint", body = crate::error::ErrorEnvelope)))]
async fn delete_webhook(
    _caller: Authorized<ops::DeleteWebhook>,
    State(state): State<AppState>,
    PathParams(WebhookPath(id)): PathParams<WebhookPath>,
) -> Result<StatusCode, ApiError> {
    match till_app::webhooks::delete(state.app(), id).await? {
        true => Ok(StatusCode::NO_CONTENT),
        false => Err(no_such_webhook()),
    }
}

/// List an endpoint's latest delivery attempts.
///
/// Each attempt with its event, its attempt number, the receiver's status or how it failed,
/// when and how long it took; newest first. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/webhooks/{id}/deliveries", operation_id = "listWebhookDeliveries", tag = "events",
    params(("id" = Text, Path), DeliveriesQuery),
    responses((status = 200, description = "The latest attempts, newest first", body = DeliveryList),
              (status = 404, description = "No such endpoint", body = crate::error::ErrorEnvelope)))]
async fn list_deliveries(
    _caller: Authorized<ops::ListWebhookDeliveries>,
    State(state): State<AppState>,
    PathParams(WebhookPath(id)): PathParams<WebhookPath>,
    QueryParams(query): QueryParams<DeliveriesQuery>,
) -> Result<Json<DeliveryList>, ApiError> {
    let limit = query.limit.unwrap_or(DEFAULT_DELIVERIES);
    let deliveries = till_app::webhooks::deliveries(state.app(), &id, limit)
        .await?
        .ok_or_else(no_such_webhook)?;
    Ok(Json(DeliveryList {
        deliveries: deliveries.into_iter().map(DeliveryView::from).collect(),
    }))
}

/// Deliver an endpoint's events again from a cursor.
///
/// Sets the endpoint's cursor to `after`, clears its failures and enables it if it was
/// disabled: every event after `after` of its types is delivered again, in feed order. The
/// receiver sees events it already had (the same `webhook-id`). A person should confirm.
#[utoipa::path(post, path = "/v1/webhooks/{id}/replay", operation_id = "replayWebhook", tag = "events",
    params(("id" = Text, Path)),
    request_body = ReplayBody,
    responses((status = 200, description = "The endpoint, delivering from `after`", body = WebhookView),
              (status = 404, description = "No such endpoint", body = crate::error::ErrorEnvelope)))]
async fn replay_webhook(
    _caller: Authorized<ops::ReplayWebhook>,
    State(state): State<AppState>,
    PathParams(WebhookPath(id)): PathParams<WebhookPath>,
    Parsed(ReplayBody { after }): Parsed<ReplayBody>,
) -> Result<Json<WebhookView>, ApiError> {
    match till_app::webhooks::replay(state.app(), id, after).await? {
        Replayed::Done(record) => Ok(Json(WebhookView::of(record, state.config().webhooks.retry.window))),
        Replayed::Unknown => Err(no_such_webhook()),
        Replayed::PastHead(head) => Err(ApiError::field(
            "after",
            format!("is past the feed's last event (cursor {head})"),
        )),
    }
}
