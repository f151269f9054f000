//! `GET /v1/events`: the feed of business facts, in the order they committed (DESIGN.md
//! section 14; how the order is kept across nodes: docs/events.md).

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, QueryParams};
use crate::ops;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use serde_json::value::RawValue;
use till_core::events::{EventType, FeedCursor};
use till_core::instant::format_utc;
use till_store::feed::{FeedEvent, MOST_EVENTS_READ};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_events))
}

/// Events one read answers unless told.
const DEFAULT_EVENTS: i64 = 100;

#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct EventsQuery {
    /// The `cursor` of the last event seen (the `nextCursor` of the last read); without it the
    /// feed starts at its oldest event.
    #[param(value_type = Option<String>, pattern = r"^[0-9]{1,18}$")]
    after: Option<FeedCursor>,
    /// At most this many events (default 100).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
    /// Only events of these types, comma-separated (`sale.completed,return.completed`).
    #[param(value_type = Option<String>, max_length = 255, pattern = r"^(sale\.completed|return\.completed|session\.opened|session\.closed|cash\.moved|period\.closed|stock\.adjusted|stock\.transferred|promotion\.changed|giftcard\.changed|creditnote\.issued)(,(sale\.completed|return\.completed|session\.opened|session\.closed|cash\.moved|period\.closed|stock\.adjusted|stock\.transferred|promotion\.changed|giftcard\.changed|creditnote\.issued))*$")]
    types: Option<Vec<EventType>>,
}

impl FromParams for EventsQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let after = params.optional("after", |text| {
            FeedCursor::parse(text).ok_or("is not a cursor this feed gave (the digits of a nextCursor)")
        });
        let limit = params.integer("limit", 1, MOST_EVENTS_READ);
        let types = params.optional("types", parse_types);
        Some(EventsQuery {
            after: after?,
            limit: limit?,
            types: types?,
        })
    }
}

/// Event types, comma-separated, each known; none twice.
fn parse_types(text: &str) -> Result<Vec<EventType>, String> {
    let mut types = Vec::new();
    for word in text.split(',') {
        let kind = EventType::parse(word).ok_or_else(|| format!("names an unknown event type {word:?}"))?;
        if !types.contains(&kind) {
            types.push(kind);
        }
    }
    Ok(types)
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedEventView {
    /// The event's id, the same on every read and every node: what a consumer de-duplicates by.
    id: String,
    /// Its place in the feed: pass it as `after` to read what follows it.
    cursor: String,
    /// `sale.completed`, `return.completed`, `session.opened`, `session.closed`, `cash.moved`,
    /// `period.closed`, `stock.adjusted`, `stock.transferred`, `promotion.changed`,
    /// `giftcard.changed` or `creditnote.issued`.
    #[serde(rename = "type")]
    kind: &'static str,
    occurred_at: String,
    #[schema(required = true)]
    store_id: Option<String>,
    #[schema(required = true)]
    register_id: Option<String>,
    /// What happened: for a sale or a return the answer its finalize or return gave; for a
    /// closed session its Z report; for the others the record as its own read answers it.
    #[schema(value_type = Object)]
    data: Box<RawValue>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedPage {
    /// Oldest first.
    events: Vec<FeedEventView>,
    /// What to pass as `after` next: the last event's cursor, or the `after` given when there
    /// is no event past it yet (poll again with it later).
    next_cursor: String,
}

impl TryFrom<FeedEvent> for FeedEventView {
    type Error = ApiError;

    fn try_from(event: FeedEvent) -> Result<Self, ApiError> {
        let data = RawValue::from_string(event.data).map_err(ApiError::internal)?;
        Ok(FeedEventView {
            id: format!("evt_{}", event.id),
            cursor: event.cursor.to_string(),
            kind: event.kind.as_str(),
            occurred_at: format_utc(event.occurred_at),
            store_id: event.store_id,
            register_id: event.register_id,
            data,
        })
    }
}

/// One event as the feed answers it, as JSON text: what a webhook delivers, byte for byte.
pub fn render_event(event: FeedEvent) -> Result<String, ApiError> {
    let view = FeedEventView::try_from(event)?;
    serde_json::to_string(&view).map_err(ApiError::internal)
}

/// Read the event feed.
///
/// Every business fact, once, in the order the facts committed, on any node: follow
/// `nextCursor` from the start and no event is missed, none seen twice. Events of a node's
/// latest commits appear within a few milliseconds. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/events", operation_id = "listEvents", tag = "events",
    params(EventsQuery),
    responses((status = 200, description = "The events after `after`, oldest first", body = FeedPage)))]
async fn list_events(
    _caller: Authorized<ops::ListEvents>,
    State(state): State<AppState>,
    QueryParams(query): QueryParams<EventsQuery>,
) -> Result<Json<FeedPage>, ApiError> {
    let after = query.after.unwrap_or(FeedCursor::START);
    let types = query.types.unwrap_or_default();
    let events = state
        .store()
        .events_after(after, query.limit.unwrap_or(DEFAULT_EVENTS), &types)
        .await?;
    let next_cursor = events.last().map_or(after, |event| event.cursor).to_string();
    let events = events
        .into_iter()
        .map(FeedEventView::try_from)
        .collect::<Result<_, _>>()?;
    Ok(Json(FeedPage { events, next_cursor }))
}

#[cfg(test)]
mod tests {
    use super::parse_types;
    use till_core::events::EventType;

    #[test]
    fn the_documented_types_are_every_type() {
        let document = crate::openapi::document_json();
        let document: serde_json::Value = serde_json::from_str(document).unwrap();
        let parameters = document["paths"]["/v1/events"]["get"]["parameters"].as_array().unwrap();
        let types = parameters.iter().find(|p| p["name"] == "types").unwrap();
        let pattern = types["schema"]["pattern"].as_str().unwrap();
        for kind in EventType::ALL {
            assert_eq!(
                pattern.matches(&kind.as_str().replace('.', r"\.")).count(),
                2,
                "{kind:?} in {pattern}"
            );
        }
    }

    #[test]
    fn types_are_known_names_separated_by_commas() {
        assert_eq!(
            parse_types("sale.completed,return.completed,sale.completed"),
            Ok(vec![EventType::SaleCompleted, EventType::ReturnCompleted])
        );
        assert!(parse_types("sale.completed,").is_err());
        assert!(parse_types("sale.completed, return.completed").is_err());
        assert!(parse_types("orders").is_err());
    }
}
