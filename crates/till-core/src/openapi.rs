//! The schemas the OpenAPI document states for the documents declared here, so that an answer
//! and its schema are one declaration (the `openapi` feature; the API's document uses them).
//! Only what those documents need lives here; the API keeps the rest of its vocabulary.

use crate::instant::UTC_PATTERN;
use std::borrow::Cow;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::{PartialSchema, ToSchema};

/// One of the listed words, described.
pub fn words(words: impl IntoIterator<Item = &'static str>, description: &str) -> Schema {
    let values: Vec<serde_json::Value> = words.into_iter().map(serde_json::Value::from).collect();
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values))
        .description(Some(description))
        .into()
}

/// An instant written in UTC, as `issuedAt` is.
pub struct UtcInstant;

impl PartialSchema for UtcInstant {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .pattern(Some(UTC_PATTERN))
            .description(Some(
                "ISO 8601 in UTC, ending in `Z`; seconds and fraction (up to 9 digits) optional; \
                 a real calendar date in the years 0001 to 9998.",
            ))
            .into()
    }
}

impl ToSchema for UtcInstant {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("UtcInstant")
    }
}
