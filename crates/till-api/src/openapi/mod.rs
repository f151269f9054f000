//! The OpenAPI 3.1 document, generated from the handlers and finished by one pass that adds
//! what every operation shares: its scopes and agent tier from [`crate::ops`], the bearer
//! security requirement, the error responses of the envelope, and the links from an answer to
//! the calls it enables. The schemas every wire shape shares ([`Text`], [`SkuId`], the
//! instants) are here too, written from the parsers' own rules so that the document is exactly
//! as strict as the server.

use crate::error::ErrorEnvelope;
use crate::ops;
use std::borrow::Cow;
use std::sync::OnceLock;
use till_core::ids::{MAX_TEXT_CHARS, SKU_PATTERN, TEXT_PATTERN};
use till_core::instant::{QUARTER_HOUR_PATTERN, UTC_OR_OFFSET_PATTERN};
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::path::Operation;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::tag::{Tag, TagBuilder};
use utoipa::openapi::{ContentBuilder, InfoBuilder, OpenApi, RefOr, ResponseBuilder};
use utoipa::{PartialSchema, ToSchema};

mod links;
use links::add_links;

/// An identifier or a name, as every one is read wherever it sits (body, path or query): 1 to
/// 255 characters, none of them a control character.
pub struct Text;

impl PartialSchema for Text {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(MAX_TEXT_CHARS))
            .pattern(Some(TEXT_PATTERN))
            .description(Some(
                "An identifier or a name: 1 to 255 characters, none of them a control character.",
            ))
            .into()
    }
}

impl ToSchema for Text {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Text")
    }
}

/// A customer group's name, in a profile or a promotion rule: 1 to 64 characters, none of them
/// a control character, not all of them spaces.
pub struct GroupName;

impl PartialSchema for GroupName {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(till_core::customer::MAX_GROUP_CHARS))
            .pattern(Some(
                "^[^\\u0000-\\u001F\\u007F-\\u009F]*[^\\s\\u0000-\\u001F\\u007F-\\u009F][^\\u0000-\\u001F\\u007F-\\u009F]*$",
            ))
            .description(Some(
                "A customer group: 1 to 64 characters, none of them a control character, not only spaces.",
            ))
            .into()
    }
}

impl ToSchema for GroupName {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("GroupName")
    }
}

/// A catalog article's id.
pub struct SkuId;

impl PartialSchema for SkuId {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(SKU_PATTERN))
            .description(Some("A catalog article: 64 lowercase hexadecimal characters."))
            .into()
    }
}

impl ToSchema for SkuId {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("SkuId")
    }
}

/// A gift card's or a credit note's code.
pub struct InstrumentCodeText;

impl PartialSchema for InstrumentCodeText {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some("^[A-Za-z0-9_-]{4,64}$"))
            .description(Some(
                "A gift card's or a credit note's code: 4 to 64 letters, digits, `-` and `_`, compared without case. \
                 The codes till draws are 16 characters of `23456789ABCDEFGHJKMNPQRSTUVWXYZ`.",
            ))
            .into()
    }
}

impl ToSchema for InstrumentCodeText {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("InstrumentCode")
    }
}

/// A barcode: the digits of an EAN-8, UPC-A, EAN-13 or GTIN-14.
pub struct BarcodeText;

impl PartialSchema for BarcodeText {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some("^([0-9]{8}|[0-9]{12,14})$"))
            .description(Some(
                "An EAN-8, UPC-A, EAN-13 or GTIN-14: 8, 12, 13 or 14 digits, the last the GS1 check digit of the others.",
            ))
            .into()
    }
}

impl ToSchema for BarcodeText {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Barcode")
    }
}

/// An instant written in UTC or with the offset of its place, as validity windows are.
pub struct Instant;

impl PartialSchema for Instant {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .pattern(Some(UTC_OR_OFFSET_PATTERN))
            .description(Some(
                "ISO 8601 ending in `Z` or a `+hh:mm`/`-hh:mm` offset; seconds and fraction (up to \
                 9 digits) optional; a real calendar date in the years 0001 to 9998 (0002 to 9997 \
                 with an offset). Answered in UTC with `Z`.",
            ))
            .into()
    }
}

impl ToSchema for Instant {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Instant")
    }
}

/// An instant that starts a quarter hour, where a report may start or end.
pub struct QuarterHour;

impl PartialSchema for QuarterHour {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .pattern(Some(QUARTER_HOUR_PATTERN))
            .description(Some(
                "ISO 8601 ending in `Z` or a `+hh:mm`/`-hh:mm` offset, on a quarter hour: minutes \
                 00, 15, 30 or 45 in the time and in the offset, seconds and fraction zero or \
                 left out; a real calendar date in the years 0001 to 9998 (0002 to 9997 with an \
                 offset). Answered in UTC with `Z`.",
            ))
            .into()
    }
}

impl ToSchema for QuarterHour {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("QuarterHour")
    }
}

/// One of the listed words. A field that may also be null names its words as a component
/// ([`named_words!`]), so that a client generator makes one enumeration of them. An instant in
/// UTC ([`UtcInstant`]) and the words are declared beside the core documents that use them.
pub use till_core::openapi::{UtcInstant, words};

/// A component of the document holding one of the listed words: `named_words!(Type, "Name",
/// words, "description")`. `Option<Type>` as a field's `value_type` is then the component or
/// `null`.
macro_rules! named_words {
    ($type:ident, $name:literal, $words:expr, $description:expr) => {
        pub struct $type;

        impl utoipa::PartialSchema for $type {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                $crate::openapi::words($words, $description).into()
            }
        }

        impl utoipa::ToSchema for $type {
            fn name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed($name)
            }
        }
    };
}
pub(crate) use named_words;

/// A property of one shape of a union that only the other shapes carry, as that shape holds
/// it: never there. Its schema is [`absent`].
#[derive(Clone, Copy, Debug)]
pub struct Absent;

/// A property of one shape of a union that only the other shapes carry: absent or `null`.
pub fn absent() -> Schema {
    ObjectBuilder::new()
        .schema_type(Type::Null)
        .description(Some("Belongs to another shape: absent or null here."))
        .into()
}

/// The finished document.
pub fn document() -> OpenApi {
    let (_, api) = crate::routes::api_router().split_for_parts();
    finish(api)
}

/// The document as served and committed: pretty JSON with sorted keys, so it diffs cleanly.
pub fn document_json() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| {
        let value = serde_json::to_value(document()).expect("the document serializes");
        let mut text =
            serde_json::to_string_pretty(&till_core::canonical::sorted(&value)).expect("a JSON value serializes");
        text.push('\n');
        text
    })
}

fn finish(mut api: OpenApi) -> OpenApi {
    api.info = InfoBuilder::new()
        .title("till")
        .version(env!("CARGO_PKG_VERSION"))
        .description(Some(
            "Point-of-sale backend: commits re-priced, idempotent sales sealed in an NF525 fiscal \
             journal; mints single-use manager approvals; manages promotions and provisioning. \
             Amounts are integer cents; rates are basis points. Every failure is the error \
             envelope `{error: {code, message, statusCode}}`; branch on `code`. Each operation \
             lists the scopes it accepts in `x-pos-scopes` (any one suffices) and, in \
             `x-agent-tier`, how freely an automated agent may call it: `allow` (read-only, \
             safe), `confirm` (a write a person should confirm), `avoid` (never unprompted), \
             `human` (a person must be present). Requests are read exactly as documented: a \
             VALIDATION_FAILED answer names each field by its dot path (`cart.lines.0.skuId`) \
             and each path or query parameter by its name (`storeId`, `limit`); a JSON body \
             that gives a key twice is refused on that key; properties a body schema does not \
             name are ignored; an integral number written with a zero fraction (`5.0`) is an \
             integer.",
        ))
        .build();
    api.tags = Some(tags());
    let components = api.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        "bearer",
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .bearer_format("JWT")
                .description(Some(
                    "An identity provider's access token (JWT, scopes in `scope`), or a register \
                     session token `pos_st_...` from openRegisterSession.",
                ))
                .build(),
        ),
    );
    components
        .schemas
        .insert("ErrorEnvelope".to_owned(), ErrorEnvelope::schema());
    for operation in operations_mut(&mut api) {
        apply_policy(operation);
        add_error_responses(operation);
    }
    add_links(&mut api);
    api
}

fn operations_mut(api: &mut OpenApi) -> impl Iterator<Item = &mut Operation> {
    api.paths.paths.values_mut().flat_map(|item| {
        [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ]
        .into_iter()
        .flatten()
    })
}

fn spec_of(operation: &Operation) -> &'static ops::Operation {
    let id = operation.operation_id.as_deref().unwrap_or_default();
    ops::ALL
        .iter()
        .find(|spec| spec.id == id)
        .unwrap_or_else(|| panic!("operation {id} is missing from ops::ALL"))
}

fn apply_policy(operation: &mut Operation) {
    let spec = spec_of(operation);
    let scopes: Vec<&str> = spec.scopes.iter().map(|g| g.as_str()).collect();
    let mut extensions = Extensions::default();
    extensions.insert("x-pos-scopes".to_owned(), serde_json::json!(scopes));
    extensions.insert("x-agent-tier".to_owned(), serde_json::json!(spec.tier.as_str()));
    operation
        .extensions
        .get_or_insert_with(Default::default)
        .merge(extensions);
    operation.security = Some(if spec.scopes.is_empty() {
        vec![SecurityRequirement::default()]
    } else {
        vec![SecurityRequirement::new::<_, _, &str>("bearer", [])]
    });
}

/// The refusals an operation may answer besides its own: the credential's (guarded operations),
/// the request's shape (operations that read a body or parameters), and the transport's and the
/// server's (every operation).
fn add_error_responses(operation: &mut Operation) {
    let guarded = !spec_of(operation).scopes.is_empty();
    let reads_body = operation.request_body.is_some();
    let reads_input = reads_body || operation.parameters.as_ref().is_some_and(|p| !p.is_empty());
    let refusals = [
        (
            guarded,
            "401",
            "UNAUTHORIZED: no valid credential (missing, malformed, expired or unknown token)",
        ),
        (
            guarded,
            "403",
            "FORBIDDEN: authenticated, but without a scope this operation accepts",
        ),
        (
            reads_input,
            "400",
            "VALIDATION_FAILED: a malformed request, with fieldErrors naming each field or parameter",
        ),
        (
            reads_body,
            "408",
            "REQUEST_TIMEOUT: the request did not arrive in time; nothing was recorded",
        ),
        (
            true,
            "413",
            "PAYLOAD_TOO_LARGE: the body is larger than the server accepts; nothing was recorded",
        ),
        (
            true,
            "414",
            "URI_TOO_LONG: the request target is longer than the server reads",
        ),
        (
            true,
            "431",
            "HEADERS_TOO_LARGE: the request headers are larger than the server reads",
        ),
        (
            true,
            "500",
            "INTERNAL_ERROR: an unexpected server error; safe to retry an idempotent request",
        ),
        (
            true,
            "503",
            "SERVICE_UNAVAILABLE: the database is unavailable or the node is full; nothing was \
             recorded; retry after Retry-After",
        ),
    ];
    for (applies, status, description) in refusals {
        if applies {
            operation
                .responses
                .responses
                .entry(status.to_owned())
                .or_insert_with(|| error_response(description));
        }
    }
}

pub(crate) fn error_response(description: &str) -> RefOr<utoipa::openapi::Response> {
    RefOr::T(
        ResponseBuilder::new()
            .description(description)
            .content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(utoipa::openapi::Ref::from_schema_name("ErrorEnvelope")))
                    .build(),
            )
            .build(),
    )
}

fn tags() -> Vec<Tag> {
    [
        (
            "checkout",
            "Pricing and committing sales, and manager approvals of discounts.",
        ),
        (
            "returns",
            "Goods given back against a receipt: refunds at what was paid, and credit notes (avoirs).",
        ),
        ("promotions", "Automatic promotion rules applied when a sale is priced."),
        ("sessions", "Register sessions: a cashier's shift on one till."),
        ("fiscal", "The NF525 journal: public keys and chain verification."),
        (
            "exports",
            "The accountant's exports of closed days: the FEC and the e-reporting aggregates per day and VAT rate.",
        ),
        (
            "invoices",
            "Invoices for business customers: committed sales made out to a company, numbered without gaps, as JSON or a Factur-X PDF.",
        ),
        (
            "reports",
            "Sales added up over a period by day, hour, article, seller, tender method or VAT rate.",
        ),
        (
            "stored-value",
            "Gift cards and credit notes: balances spent as tenders, with the ledger of their activities.",
        ),
        (
            "provisioning",
            "Stores, catalog, stock, staff, coupons and customers, set up by the back office.",
        ),
        (
            "events",
            "The feed of business facts in commit order, and the webhooks that push it, for integrators that must miss none.",
        ),
        (
            "agents",
            "The Model Context Protocol endpoint: the operations an agent may call, as tools, within their tiers.",
        ),
        ("operations", "Health, readiness, metrics and this document."),
    ]
    .into_iter()
    .map(|(name, description)| TagBuilder::new().name(name).description(Some(description)).build())
    .collect()
}
