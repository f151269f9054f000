//! `GET /v1/events`: the feed of business facts, in the order they committed (how the order is kept
//! across nodes: docs/events.md).

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, QueryParams};
use crate::ops;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::borrow::Cow;
use till_app::feed::{FeedEvent, MOST_EVENTS_READ};
use till_core::events::{EventType, FeedCursor};
use till_core::instant::format_utc;
use till_core::stored_value::ActivityKind;
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};
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
    #[param(value_type = Option<String>, max_length = 255, pattern = r"^(sale\.completed|return\.completed|session\.opened|session\.closed|cash\.moved|period\.closed|stock\.adjusted|stock\.transferred|promotion\.changed|giftcard\.changed|creditnote\.issued|customer\.erased|payment\.captured|payment\.orphaned|payment\.refunded|catalog\.changed|store_price\.changed|coupon\.changed|customer\.changed)(,(sale\.completed|return\.completed|session\.opened|session\.closed|cash\.moved|period\.closed|stock\.adjusted|stock\.transferred|promotion\.changed|giftcard\.changed|creditnote\.issued|customer\.erased|payment\.captured|payment\.orphaned|payment\.refunded|catalog\.changed|store_price\.changed|coupon\.changed|customer\.changed))*$")]
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

/// One event as the feed answers it and a webhook delivers it. Its schema in the document is a
/// union by `type` ([`FeedEventView::shape`]), so that a client narrows `data` by the type.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedEventView {
    id: String,
    cursor: String,
    #[serde(rename = "type")]
    kind: &'static str,
    occurred_at: String,
    store_id: Option<String>,
    register_id: Option<String>,
    data: Box<RawValue>,
}

/// A component of the document, by name.
fn component(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// A schema written as JSON.
fn schema_of(value: Value) -> RefOr<Schema> {
    serde_json::from_value(value).expect("a feed schema is a schema")
}

impl FeedEventView {
    /// The name of an event type's shape in the document, when it happens, and the schema of
    /// its `data`. Matched on every type, so that no type goes undocumented.
    fn shape(kind: EventType) -> (&'static str, &'static str, Value) {
        match kind {
            EventType::SaleCompleted => (
                "SaleCompletedEvent",
                "A finalize committed a sale; `data` is the finalize's answer, as the till received it.",
                component("SaleEvent"),
            ),
            EventType::ReturnCompleted => (
                "ReturnCompletedEvent",
                "A return committed; `data` is its answer: a return's (with `original`) or, for a \
                 finalize of `type` `return`, the finalize's (with `transaction`).",
                json!({"oneOf": [component("ReturnEvent"), component("SaleEvent")]}),
            ),
            EventType::SessionOpened => (
                "SessionOpenedEvent",
                "A register session opened; `data` is the session as its read answers it.",
                component("SessionView"),
            ),
            EventType::SessionClosed => (
                "SessionClosedEvent",
                "A session closed, by hand or when the next one opened; `data` is its Z report, as the close answered it.",
                component("ZReportBody"),
            ),
            EventType::CashMoved => (
                "CashMovedEvent",
                "Money was put in or taken out of a drawer, or it opened without a sale; `data` is the movement as its POST answered it.",
                component("CashMovementView"),
            ),
            EventType::PeriodClosed => (
                "PeriodClosedEvent",
                "A fiscal day, month or year closed; `data` is the closure as the register's closures list answers it, with the register.",
                component("PeriodClosedData"),
            ),
            EventType::StockAdjusted => (
                "StockAdjustedEvent",
                "An article's level was set by a count (one event per article counted) or an adjustment.",
                component("StockAdjustedData"),
            ),
            EventType::StockTransferred => (
                "StockTransferredEvent",
                "A transfer was sent (in the sending store) or received (in the receiving store); `data` is the transfer as its read answers it.",
                component("TransferView"),
            ),
            EventType::PromotionChanged => (
                "PromotionChangedEvent",
                "A promotion was created, replaced or deactivated.",
                component("PromotionChangedData"),
            ),
            EventType::GiftCardChanged => (
                "GiftCardChangedEvent",
                "A gift card was issued, activated or loaded by a sale's line, blocked or unblocked. Its code is never in the feed.",
                component("GiftCardChangedData"),
            ),
            EventType::CreditNoteIssued => (
                "CreditNoteIssuedEvent",
                "A return refunded to a credit note.",
                component("CreditNoteIssuedData"),
            ),
            EventType::CustomerErased => (
                "CustomerErasedEvent",
                "A customer's personal data was erased, on request or after the retention period; \
                 `data` carries the id only.",
                component("CustomerErasedData"),
            ),
            EventType::PaymentCaptured => (
                "PaymentCapturedEvent",
                "A sale captured an approved card payment attempt, in the sale's transaction.",
                component("PaymentCapturedData"),
            ),
            EventType::PaymentOrphaned => (
                "PaymentOrphanedEvent",
                "An approved card payment attempt was captured by no sale in time: the money must be given back.",
                component("PaymentOrphanedData"),
            ),
            EventType::PaymentRefunded => (
                "PaymentRefundedEvent",
                "A return gave money back to a captured card payment, in the return's transaction.",
                component("PaymentRefundedData"),
            ),
            EventType::CatalogChanged => (
                "CatalogChangedEvent",
                "An article was created, or its name, prices (one in force now or one scheduled) or barcodes \
                 were written, alone or by an import (one event per article); `data` names it. A till reads it \
                 again, or takes a new snapshot (`GET /v1/sync/snapshot`) after a large import.",
                component("CatalogChangedData"),
            ),
            EventType::StorePriceChanged => (
                "StorePriceChangedEvent",
                "A store's own price of an article was set, scheduled or removed; `storeId` is the store's.",
                component("StorePriceChangedData"),
            ),
            EventType::CouponChanged => (
                "CouponChangedEvent",
                "A coupon was created or its terms written.",
                component("CouponChangedData"),
            ),
            EventType::CustomerChanged => (
                "CustomerChangedEvent",
                "A customer's profile was created or written; `data` carries the id only, never a personal value.",
                component("CustomerChangedData"),
            ),
        }
    }

    /// One type's shape: the event with its single `type` and its own `data`.
    fn typed_shape(kind: EventType) -> RefOr<Schema> {
        let (_, when, data) = FeedEventView::shape(kind);
        schema_of(json!({
            "type": "object",
            "description": when,
            "additionalProperties": false,
            "required": ["id", "cursor", "type", "occurredAt", "storeId", "registerId", "data"],
            "properties": {
                "id": {
                    "type": "string",
                    "description": "The event's id, the same on every read and every node: what a consumer de-duplicates by."
                },
                "cursor": {
                    "type": "string",
                    "description": "Its place in the feed: pass it as `after` to read what follows it."
                },
                "type": {"type": "string", "enum": [kind.as_str()]},
                "occurredAt": {"type": "string"},
                "storeId": {"type": ["string", "null"]},
                "registerId": {"type": ["string", "null"]},
                "data": data,
            }
        }))
    }

    /// The shapes of `data` that no other answer of the API has: the store writes them for the
    /// feed alone.
    fn data_shapes() -> Vec<(&'static str, RefOr<Schema>)> {
        let activities: Vec<&str> = ActivityKind::ALL.iter().map(|kind| kind.as_str()).collect();
        vec![
            (
                "PeriodClosedData",
                schema_of(json!({
                    "description": "A closure as the register's closures list answers it, with its register.",
                    "allOf": [
                        component("ClosureView"),
                        {"type": "object", "required": ["registerId"], "properties": {"registerId": {"type": "string"}}}
                    ]
                })),
            ),
            (
                "StockAdjustedData",
                schema_of(json!({
                    "type": "object",
                    "description": "The level an article was set to in a store.",
                    "required": ["storeId", "skuId", "onHand", "updatedAt"],
                    "properties": {
                        "storeId": {"type": "string"},
                        "skuId": {"type": "string"},
                        "onHand": {"type": "integer", "format": "int64", "description": "The level set."},
                        "updatedAt": {"type": "string"}
                    }
                })),
            ),
            (
                "PromotionChangedData",
                schema_of(json!({
                    "type": "object",
                    "description": "A promotion rule as written, with its version.",
                    "required": ["promotionId", "version", "active", "rule", "updatedAt"],
                    "properties": {
                        "promotionId": {"type": "string"},
                        "version": {"type": "integer", "format": "int64", "description": "As the rule's ETag gives it."},
                        "active": {"type": "boolean"},
                        "rule": component("PromotionRule"),
                        "updatedAt": {"type": "string"}
                    }
                })),
            ),
            (
                "GiftCardChangedData",
                schema_of(json!({
                    "type": "object",
                    "description": "What happened to a gift card. Its code is never here: a system that holds \
                        the code matches `codeSha256`, the SHA-256 of the code in hex.",
                    "required": ["codeSha256", "last4", "activity", "amountCents", "balanceCents", "transactionId"],
                    "properties": {
                        "codeSha256": {"type": "string"},
                        "last4": {"type": "string", "description": "The code's last four characters, as printed."},
                        "activity": {"type": "string", "enum": activities},
                        "amountCents": {"type": "integer", "format": "int64"},
                        "balanceCents": {"type": "integer", "format": "int64"},
                        "transactionId": {
                            "type": ["string", "null"],
                            "description": "The sale that moved the balance; null for a move outside a sale."
                        }
                    }
                })),
            ),
            (
                "CreditNoteIssuedData",
                schema_of(json!({
                    "type": "object",
                    "description": "A credit note a return issued.",
                    "required": ["number", "amountCents", "expiresAt", "transactionId"],
                    "properties": {
                        "number": {"type": "string", "description": "`AV-{registerId}-{sequence}`."},
                        "amountCents": {"type": "integer", "format": "int64"},
                        "expiresAt": {"type": ["string", "null"]},
                        "transactionId": {"type": "string", "description": "The return that issued it."}
                    }
                })),
            ),
            (
                "CustomerErasedData",
                schema_of(json!({
                    "type": "object",
                    "description": "An erased customer: the id only, never a personal value.",
                    "required": ["customerId", "reason"],
                    "properties": {
                        "customerId": {"type": "string"},
                        "reason": {"type": "string", "enum": ["request", "retention"]}
                    }
                })),
            ),
            (
                "CatalogChangedData",
                schema_of(json!({
                    "type": "object",
                    "description": "The article that changed, as `GET /v1/catalog/skus/{skuId}` reads it.",
                    "required": ["skuId"],
                    "properties": {"skuId": {"type": "string"}}
                })),
            ),
            (
                "StorePriceChangedData",
                schema_of(json!({
                    "type": "object",
                    "description": "The store and the article whose price there changed, as \
                        `GET /v1/stores/{storeId}/prices/{skuId}` reads it.",
                    "required": ["storeId", "skuId"],
                    "properties": {"storeId": {"type": "string"}, "skuId": {"type": "string"}}
                })),
            ),
            (
                "CouponChangedData",
                schema_of(json!({
                    "type": "object",
                    "description": "The coupon whose terms changed, as `GET /v1/coupons/{code}` reads it.",
                    "required": ["code"],
                    "properties": {"code": {"type": "string"}}
                })),
            ),
            (
                "CustomerChangedData",
                schema_of(json!({
                    "type": "object",
                    "description": "The customer who changed: the id only, never a personal value.",
                    "required": ["customerId"],
                    "properties": {"customerId": {"type": "string"}}
                })),
            ),
            (
                "PaymentCapturedData",
                schema_of(json!({
                    "type": "object",
                    "description": "The attempt a sale captured. Never a card number.",
                    "required": ["paymentId", "transactionId", "amountCents"],
                    "properties": {
                        "paymentId": {"type": "string"},
                        "transactionId": {"type": "string", "description": "The sale that captured it."},
                        "amountCents": {"type": "integer", "format": "int64", "description": "What the terminal authorised and the sale took."}
                    }
                })),
            ),
            (
                "PaymentOrphanedData",
                schema_of(json!({
                    "type": "object",
                    "description": "An approved attempt no sale captured within the orphan window.",
                    "required": ["paymentId", "sessionId", "authorizedCents"],
                    "properties": {
                        "paymentId": {"type": "string"},
                        "sessionId": {"type": "string"},
                        "authorizedCents": {"type": ["integer", "null"], "format": "int64", "description": "What the terminal authorised and must give back."}
                    }
                })),
            ),
            (
                "PaymentRefundedData",
                schema_of(json!({
                    "type": "object",
                    "description": "A refund to a captured payment, recorded by a return. Never a card number.",
                    "required": ["paymentId", "refundId", "transactionId", "amountCents"],
                    "properties": {
                        "paymentId": {"type": "string", "description": "The captured payment given money back."},
                        "refundId": {"type": "string", "description": "The refund attempt (kind `refund`)."},
                        "transactionId": {"type": "string", "description": "The return that gave it back."},
                        "amountCents": {"type": "integer", "format": "int64", "description": "What the return gave back to the card."}
                    }
                })),
            ),
        ]
    }
}

impl PartialSchema for FeedEventView {
    fn schema() -> RefOr<Schema> {
        let names: Vec<(&str, &str)> = EventType::ALL
            .iter()
            .map(|kind| (kind.as_str(), FeedEventView::shape(*kind).0))
            .collect();
        let mapping: serde_json::Map<String, Value> = names
            .iter()
            .map(|(kind, name)| ((*kind).to_owned(), Value::from(format!("#/components/schemas/{name}"))))
            .collect();
        schema_of(json!({
            "description": "One business fact. Its `type` says which shape it is and what its `data` holds.",
            "oneOf": names.iter().map(|(_, name)| component(name)).collect::<Vec<_>>(),
            "discriminator": {"propertyName": "type", "mapping": mapping}
        }))
    }
}

impl ToSchema for FeedEventView {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("FeedEventView")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        for kind in EventType::ALL {
            schemas.push((
                FeedEventView::shape(kind).0.to_owned(),
                FeedEventView::typed_shape(kind),
            ));
        }
        for (name, schema) in FeedEventView::data_shapes() {
            schemas.push((name.to_owned(), schema));
        }
    }
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
    let limit = query.limit.unwrap_or(DEFAULT_EVENTS);
    let events = till_app::feed::events_after(state.app(), after, limit, &types).await?;
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
