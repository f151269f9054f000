//! Archives of a register's journal: making one for a period, reading one back, and the archive
//! file's published schema as the document carries it.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, Parsed, PathParams};
use crate::fields::{FromBody, Obj};
use crate::openapi::Text;
use crate::ops;
use crate::state::AppState;
use axum::extract::State;
use axum::http::header::{CONTENT_TYPE, LOCATION};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use jiff::civil::Date;
use serde_json::Value;
use std::borrow::Cow;
use till_app::fiscal::Archived;
use till_core::ids::RegisterId;
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

/// Longest period one archive covers: a fiscal year.
const MAX_ARCHIVE_DAYS: i32 = 366;

/// `{archiveId}`.
pub(super) struct ArchivePath(String);

impl FromParams for ArchivePath {
    fn from_params(params: &Params) -> Option<Self> {
        params.text("archiveId").map(ArchivePath)
    }
}

/// Body of `POST /v1/fiscal/archives`.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct ArchiveBody {
    #[schema(value_type = Text)]
    register_id: RegisterId,
    /// First day, `YYYY-MM-DD` in the store's time zone.
    #[schema(value_type = String, format = Date)]
    from: Date,
    /// Last day, inclusive; not before `from`, less than a year after it, and not after today
    /// in the store's time zone.
    #[schema(value_type = String, format = Date)]
    to: Date,
}

impl FromBody for ArchiveBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let register = root.required("registerId", |f| f.parse_text(RegisterId::parse));
        let from = root.required("from", date);
        let to = root.required("to", date);
        let (from, to) = (from?, to?);
        if to < from {
            return root.fail("to", "must not be before from");
        }
        if (to - from).get_days() >= MAX_ARCHIVE_DAYS {
            return root.fail("to", "must be less than a year after from");
        }
        Some(ArchiveBody {
            register_id: register?,
            from,
            to,
        })
    }
}

fn date(field: crate::fields::Field<'_>) -> Option<Date> {
    field.string_as("must be a date such as 2026-03-31", |text| {
        text.parse::<Date>().ok().filter(|_| text.len() == 10)
    })
}

/// Archive a period of a register's journal.
///
/// Returns the archive file: canonical JSON holding every entry of the period with its signed
/// string, signature and key id, the records they seal, the closures and the public keys, with
/// a detached signature over the document (format in docs/nf525-archive.schema.json). Its
/// SHA-256 is sealed in the register's archive chain and recorded as a technical event. Verify
/// it offline with `till fiscal verify-archive FILE`. Gift cards and credit notes appear in it
/// masked, by their last four symbols and a keyed digest. Needs `pos.fiscal.close`, as closing
/// a period does: reading the journal (`pos.fiscal.read`) does not suffice to write into it.
/// A person should confirm.
#[utoipa::path(post, path = "/v1/fiscal/archives", operation_id = "makeFiscalArchive", tag = "fiscal",
    request_body = ArchiveBody,
    responses((status = 201, description = "The archive file; x-till-archive-id and x-till-archive-sha256 name it", body = ArchiveFile, content_type = "application/json"),
              (status = 404, description = "Unknown register", body = crate::error::ErrorEnvelope),
              (status = 422, description = "The period's journal kept growing while the archive was read; send the request again", body = crate::error::ErrorEnvelope)))]
pub(super) async fn make_archive(
    _caller: Authorized<ops::MakeFiscalArchive>,
    State(state): State<AppState>,
    Parsed(ArchiveBody { register_id, from, to }): Parsed<ArchiveBody>,
) -> Result<Response, ApiError> {
    let made = match till_app::fiscal::archive(state.app(), register_id, from, to).await? {
        Archived::Made(made) => made,
        Archived::NotBegun(today) => return Err(crate::phrases::period_ends_after_today(&today)),
        Archived::UnknownRegister => return Err(crate::phrases::no_such_register()),
    };
    let mut response = (StatusCode::CREATED, [(CONTENT_TYPE, "application/json")], made.file).into_response();
    let headers = response.headers_mut();
    for (name, value) in [
        ("x-till-archive-id", made.archive_id.clone()),
        ("x-till-archive-sha256", made.sha256),
        ("location", format!("/v1/fiscal/archives/{}", made.archive_id)),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(
                if name == "location" {
                    LOCATION
                } else {
                    axum::http::HeaderName::from_static(name)
                },
                value,
            );
        }
    }
    Ok(response)
}

/// Download an archive made earlier, byte for byte.
///
/// Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/fiscal/archives/{archiveId}", operation_id = "getFiscalArchive", tag = "fiscal",
    params(("archiveId" = Text, Path)),
    responses((status = 200, description = "The archive file", body = ArchiveFile, content_type = "application/json"),
              (status = 404, description = "No such archive", body = crate::error::ErrorEnvelope)))]
pub(super) async fn get_archive(
    _caller: Authorized<ops::GetFiscalArchive>,
    State(state): State<AppState>,
    PathParams(ArchivePath(archive_id)): PathParams<ArchivePath>,
) -> Result<Response, ApiError> {
    let file = till_app::fiscal::archive_file(state.app(), &archive_id)
        .await?
        .ok_or_else(|| ApiError::NotFound("No archive with this id.".into()))?;
    Ok(([(CONTENT_TYPE, "application/json")], file).into_response())
}

/// An archive file, whose format is published as a JSON Schema of its own
/// (docs/nf525-archive.schema.json); the document carries that schema as it is.
pub struct ArchiveFile;

impl PartialSchema for ArchiveFile {
    fn schema() -> RefOr<Schema> {
        serde_json::from_value(archive_schema()).expect("the archive's schema is a schema")
    }
}

/// The archive's published schema in the terms the document's generator and client generators
/// read, saying the same: without its own dialect, address and title (the document's and the
/// component's name hold), each
/// `{"const": value}` written as a one-word `enum`, and each `enum` with its `type`.
fn archive_schema() -> Value {
    let mut schema: Value = serde_json::from_str(include_str!("../../../../../docs/nf525-archive.schema.json"))
        .expect("the archive's schema is JSON");
    if let Some(schema) = schema.as_object_mut() {
        for own in ["$schema", "$id", "title"] {
            schema.remove(own);
        }
    }
    typed_enumerations(schema)
}

fn typed_enumerations(schema: Value) -> Value {
    match schema {
        Value::Object(mut map) => {
            if let Some(value) = map.remove("const") {
                map.insert("enum".to_owned(), Value::Array(vec![value]));
            }
            if !map.contains_key("type")
                && let Some(Value::Array(words)) = map.get("enum")
            {
                let kind = match words.first() {
                    Some(Value::Bool(_)) => "boolean",
                    Some(Value::Number(_)) => "number",
                    _ => "string",
                };
                map.insert("type".to_owned(), Value::from(kind));
            }
            Value::Object(
                map.into_iter()
                    .map(|(key, inner)| (key, typed_enumerations(inner)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(typed_enumerations).collect()),
        other => other,
    }
}

impl ToSchema for ArchiveFile {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Nf525Archive")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The document carries the archive's schema whole: nothing lost on the way through the
    /// document's generator.
    #[test]
    fn the_archive_schema_is_carried_whole() {
        let carried = serde_json::to_value(ArchiveFile::schema()).unwrap();
        assert_eq!(carried, archive_schema());
        let text = carried.to_string();
        assert!(!text.contains("\"const\"") && text.contains("\"items\""));
    }
}
