//! Extractors whose every rejection is an [`ApiError`] in the envelope, never framework text.
//!
//! Every text a request carries passes the same checks wherever it sits: a body field read by
//! [`crate::fields`], a path or query parameter read through [`Params`] (1 to 255 characters, no
//! control characters, then the parameter's own parser). A refused parameter is named in
//! `fieldErrors` by its name alone (`storeId`, `limit`), like a top-level body field.

use crate::error::{ApiError, FieldError};
use crate::fields::{FromBody, Problems, parse_body};
use crate::state::AppState;
use axum::extract::path::ErrorKind;
use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use bytes::Bytes;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};
use std::cell::RefCell;
use std::fmt::{self, Display};
use till_core::ids::check_text;
use till_core::money::MAX_SAFE_INTEGER;

/// A JSON body, parsed but not yet validated: validation is each resource's `parse`, which
/// reports every problem at once. No object in it held the same key twice.
pub struct JsonBody(pub Value);

impl FromRequest<AppState> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        match read_json(request, state, Body::Required).await? {
            Some(body) => Ok(JsonBody(body)),
            None => Err(ApiError::field("body", "is empty; a JSON object is expected")),
        }
    }
}

/// A JSON body read as the type the document declares for it ([`FromBody`]): every problem is
/// a 400 listing them all.
pub struct Parsed<T>(pub T);

impl<T: FromBody> FromRequest<AppState> for Parsed<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let JsonBody(body) = JsonBody::from_request(request, state).await?;
        parse_body(&body).map(Parsed)
    }
}

/// As [`Parsed`], for a body that may be left out: no body, or `null`, is `None`.
pub struct OptionalParsed<T>(pub Option<T>);

impl<T: FromBody> FromRequest<AppState> for OptionalParsed<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        match OptionalJsonBody::from_request(request, state).await? {
            OptionalJsonBody(None | Some(Value::Null)) => Ok(OptionalParsed(None)),
            OptionalJsonBody(Some(body)) => parse_body(&body).map(|parsed| OptionalParsed(Some(parsed))),
        }
    }
}

/// A JSON body that may be left out: no body (or only white space) is `None`, whatever the
/// content type; a body is read as [`JsonBody`] reads it.
pub struct OptionalJsonBody(pub Option<Value>);

impl FromRequest<AppState> for OptionalJsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        read_json(request, state, Body::Optional).await.map(OptionalJsonBody)
    }
}

/// Whether a request may come without a body.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Body {
    Required,
    /// No body at all needs no content type.
    Optional,
}

/// The request's JSON body; `None` when it has none (or only white space).
async fn read_json(request: Request, state: &AppState, body: Body) -> Result<Option<Value>, ApiError> {
    let is_json = request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .map(|mime| {
            let mime = mime.trim().to_ascii_lowercase();
            mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
        })
        .unwrap_or(false);
    let wrong_type = || ApiError::field("body", "must be sent with Content-Type: application/json");
    if !is_json && body == Body::Required {
        return Err(wrong_type());
    }
    let bytes = Bytes::from_request(request, state)
        .await
        .map_err(|rejection| match rejection {
            BytesRejection::FailedToBufferBody(failed) if is_length_limit(&failed) => {
                ApiError::PayloadTooLarge(state.config().max_body_bytes)
            }
            _ => ApiError::field("body", "could not be read"),
        })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    if !is_json {
        return Err(wrong_type());
    }
    parse_json(&bytes).map(Some)
}

fn is_length_limit(failed: &axum::extract::rejection::FailedToBufferBody) -> bool {
    matches!(
        failed,
        axum::extract::rejection::FailedToBufferBody::LengthLimitError(_)
    )
}

/// Parses a JSON text in one pass, refusing an object that holds the same key twice: a proxy,
/// a log or a client library that reads the first value would otherwise disagree with the
/// server, which would keep the last. The duplicate is named by its dot path
/// (`cart.lines.0.quantity`); any other fault is one problem on `body`.
pub fn parse_json(bytes: &[u8]) -> Result<Value, ApiError> {
    let duplicate = RefCell::new(None);
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let parsed = UniqueKeys { duplicate: &duplicate }
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value));
    parsed.map_err(|error| match duplicate.into_inner() {
        Some(steps) => ApiError::field(dot_path(steps), "appears more than once in its object"),
        None => ApiError::field(
            "body",
            format!("is not valid JSON (line {}, column {})", error.line(), error.column()),
        ),
    })
}

/// One step of the path to a duplicate key, read from the key up to the body.
enum Step {
    Key(String),
    Index(usize),
}

fn dot_path(steps_up: Vec<Step>) -> String {
    let steps: Vec<String> = steps_up
        .into_iter()
        .rev()
        .map(|step| match step {
            Step::Key(key) => key,
            Step::Index(index) => index.to_string(),
        })
        .collect();
    steps.join(".")
}

/// Reads any JSON value as serde_json's own `Value` does, but refuses a repeated key. The path
/// is written down only on the way out of a refusal, so a valid body costs nothing beyond the
/// one map look-up that inserting a key takes anyway.
#[derive(Clone, Copy)]
struct UniqueKeys<'a> {
    /// The path from a repeated key up to where the refusal has climbed so far.
    duplicate: &'a RefCell<Option<Vec<Step>>>,
}

impl UniqueKeys<'_> {
    /// Adds `step` to the path of a refusal climbing through this value; other errors pass.
    fn climb(self, step: impl FnOnce() -> Step) {
        if let Some(steps) = self.duplicate.borrow_mut().as_mut() {
            steps.push(step());
        }
    }
}

impl<'de> DeserializeSeed<'de> for UniqueKeys<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Value, A::Error> {
        let mut values = Vec::with_capacity(items.size_hint().unwrap_or(0));
        loop {
            match items.next_element_seed(self) {
                Ok(Some(value)) => values.push(value),
                Ok(None) => return Ok(Value::Array(values)),
                Err(error) => {
                    self.climb(|| Step::Index(values.len()));
                    return Err(error);
                }
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = entries.next_key::<String>()? {
            let value = match entries.next_value_seed(self) {
                Ok(value) => value,
                Err(error) => {
                    self.climb(|| Step::Key(key));
                    return Err(error);
                }
            };
            match map.entry(key) {
                Entry::Vacant(slot) => {
                    slot.insert(value);
                }
                Entry::Occupied(slot) => {
                    *self.duplicate.borrow_mut() = Some(vec![Step::Key(slot.key().clone())]);
                    return Err(de::Error::custom("a key appears twice"));
                }
            }
        }
        Ok(Value::Object(map))
    }
}

/// The path or the query parameters of a request, read by name. Every value is checked as text
/// (1 to 255 characters, no control characters) before its parser sees it, and a parameter
/// given twice is refused, as a repeated key of a body is. Problems are collected so that one
/// 400 names them all.
pub struct Params {
    pairs: Vec<(String, String)>,
    problems: Problems,
}

/// A set of parameters read from a request; `None` once a problem is recorded in `params`.
pub trait FromParams: Sized {
    fn from_params(params: &Params) -> Option<Self>;
}

impl Params {
    pub(crate) fn new(pairs: Vec<(String, String)>) -> Params {
        Params {
            pairs,
            problems: Problems::new(),
        }
    }

    pub(crate) fn read<T: FromParams>(self) -> Result<T, ApiError> {
        let value = T::from_params(&self);
        self.problems.finish(|| value)
    }

    /// Records a problem with parameter `name`, found once its value was read.
    pub fn fail<T>(&self, name: &str, message: impl Display) -> Option<T> {
        self.problems.push(name, message.to_string());
        None
    }

    /// A parameter that must be present (every path parameter), parsed by `parse`.
    pub fn required<T, E: Display>(&self, name: &str, parse: impl FnOnce(&str) -> Result<T, E>) -> Option<T> {
        match self.optional(name, parse) {
            Some(Some(value)) => Some(value),
            Some(None) => self.fail(name, "is required"),
            None => None,
        }
    }

    /// A parameter that may be absent, parsed by `parse` when present.
    pub fn optional<T, E: Display>(&self, name: &str, parse: impl FnOnce(&str) -> Result<T, E>) -> Option<Option<T>> {
        self.optional_checked(name, check_text, parse)
    }

    /// As [`Params::optional`], with `check` in place of the text rules: for a value that is
    /// not a text (a page cursor, which may be longer than a text).
    pub fn optional_checked<T, C: Display, E: Display>(
        &self,
        name: &str,
        check: impl FnOnce(&str) -> Result<(), C>,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Option<Option<T>> {
        let mut values = self.pairs.iter().filter(|(key, _)| key == name).map(|(_, value)| value);
        let Some(value) = values.next() else {
            return Some(None);
        };
        if values.next().is_some() {
            return self.fail(name, "is given more than once");
        }
        if let Err(error) = check(value) {
            return self.fail(name, error);
        }
        match parse(value) {
            Ok(parsed) => Some(Some(parsed)),
            Err(error) => self.fail(name, error),
        }
    }

    /// Any text under the identifier rules, as it was sent.
    pub fn text(&self, name: &str) -> Option<String> {
        self.required(name, |text| Ok::<_, String>(text.to_owned()))
    }

    /// An optional integer from `min` to `max`, written as JSON writes one (`5`, `5.0`).
    pub fn integer(&self, name: &str, min: i64, max: i64) -> Option<Option<i64>> {
        self.optional(name, |text| {
            parse_integer(text)
                .filter(|value| (min..=max).contains(value))
                .ok_or_else(|| crate::fields::integer_range(min, max))
        })
    }

    /// An optional `true` or `false`.
    pub fn boolean(&self, name: &str) -> Option<Option<bool>> {
        self.optional(name, |text| match text {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(crate::fields::NOT_A_BOOLEAN),
        })
    }
}

/// An integer in the JSON number syntax, with any fraction zero; none past 2^53 - 1.
fn parse_integer(text: &str) -> Option<i64> {
    // serde_json would skip surrounding whitespace; a parameter has none.
    if !text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'e' | b'E' | b'+'))
    {
        return None;
    }
    let value = serde_json::from_str::<Number>(text).ok()?;
    let integral = match (value.as_i64(), value.as_f64()) {
        (Some(value), _) => value,
        (None, Some(float)) if float.fract() == 0.0 && float.abs() <= MAX_SAFE_INTEGER as f64 => float as i64,
        _ => return None,
    };
    (integral.abs() <= MAX_SAFE_INTEGER).then_some(integral)
}

/// Path parameters, read by `T`'s [`FromParams`].
pub struct PathParams<T>(pub T);

impl<T, S> FromRequestParts<S> for PathParams<T>
where
    T: FromParams + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Path(pairs) = axum::extract::Path::<Vec<(String, String)>>::from_request_parts(parts, state)
            .await
            .map_err(|rejection: PathRejection| {
                tracing::debug!(%rejection, "path rejected");
                match rejection {
                    PathRejection::FailedToDeserializePathParams(failed) => match failed.into_kind() {
                        ErrorKind::InvalidUtf8InPathParam { key } => {
                            ApiError::field(key, "is not valid UTF-8 text once percent-decoded")
                        }
                        _ => ApiError::field("path", "could not be read"),
                    },
                    _ => ApiError::field("path", "could not be read"),
                }
            })?;
        Params::new(pairs).read().map(PathParams)
    }
}

/// Query parameters, read by `T`'s [`FromParams`]. Parameters `T` does not read are ignored.
pub struct QueryParams<T>(pub T);

impl<T, S> FromRequestParts<S> for QueryParams<T>
where
    T: FromParams + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let pairs = query_pairs(parts.uri.query().unwrap_or_default())?;
        Params::new(pairs).read().map(QueryParams)
    }
}

/// The decoded `name=value` pairs of a query string (`+` is a space). A name or value that is
/// not UTF-8 once decoded is refused rather than patched with replacement characters, which
/// would make two different requests read the same.
pub(crate) fn query_pairs(query: &str) -> Result<Vec<(String, String)>, ApiError> {
    let decode = |text: &str| {
        let spaced = text.replace('+', " ");
        percent_encoding::percent_decode_str(&spaced)
            .decode_utf8()
            .map(|decoded| decoded.into_owned())
    };
    let mut pairs = Vec::new();
    let mut problems = Vec::new();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        match (decode(name), decode(value)) {
            (Ok(name), Ok(value)) => pairs.push((name, value)),
            (Ok(name), Err(_)) => problems.push(FieldError::new(name, "is not valid UTF-8 text once percent-decoded")),
            (Err(_), _) => problems.push(FieldError::new(
                "query",
                "has a parameter name that is not valid UTF-8 text once percent-decoded",
            )),
        }
    }
    if problems.is_empty() {
        Ok(pairs)
    } else {
        Err(ApiError::Validation(problems))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(error: ApiError) -> Vec<(String, String)> {
        match error {
            ApiError::Validation(errors) => errors.into_iter().map(|e| (e.field, e.message)).collect(),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn bodies_parse_as_serde_json_parses_them() {
        let text = r#"{"a": [1, -2, 3.5, 2076629671779215.0, true, null, "x\u00e9"], "b": {"c": {}}, "d": []}"#;
        let ours = parse_json(text.as_bytes()).unwrap();
        let theirs: Value = serde_json::from_str(text).unwrap();
        assert_eq!(ours, theirs);
        assert_eq!(ours["a"][3].as_f64(), Some(2076629671779215.0));
    }

    #[test]
    fn a_repeated_key_is_refused_by_its_dot_path_at_any_depth() {
        let cases = [
            (
                r#"{"transactionId": "dup-1", "transactionId": "dup-2"}"#,
                "transactionId",
            ),
            (
                r#"{"cart": {"lines": [{"id": "a"}, {"id": "b", "quantity": 1, "quantity": 2}]}}"#,
                "cart.lines.1.quantity",
            ),
            (r#"[{"x": 1}, [{"y": 1, "y": 1}]]"#, "1.0.y"),
        ];
        for (text, path) in cases {
            let error = parse_json(text.as_bytes()).unwrap_err();
            assert_eq!(
                fields(error),
                [(path.to_owned(), "appears more than once in its object".to_owned())],
                "{text}"
            );
        }
        assert_eq!(
            parse_json(br#"{"a": {"k": 1}, "b": {"k": 2}}"#).unwrap(),
            json!({"a": {"k": 1}, "b": {"k": 2}})
        );
    }

    #[test]
    fn text_that_is_not_json_is_one_problem_on_body() {
        for text in [&b"{\"a\": }"[..], b"{\"a\": 1} x", b"{\"a\": 1e400}", b"\xff"] {
            let errors = fields(parse_json(text).unwrap_err());
            assert_eq!(errors.len(), 1);
            assert_eq!(errors[0].0, "body");
            assert!(errors[0].1.starts_with("is not valid JSON"), "{:?}", errors[0]);
        }
    }

    struct Query {
        limit: Option<i64>,
        active: Option<bool>,
        subject: Option<String>,
    }

    impl FromParams for Query {
        fn from_params(params: &Params) -> Option<Self> {
            let limit = params.integer("limit", 1, 1000);
            let active = params.boolean("active");
            let subject = params.optional("subject", |text| Ok::<_, String>(text.to_owned()));
            Some(Query {
                limit: limit?,
                active: active?,
                subject: subject?,
            })
        }
    }

    fn query(text: &str) -> Result<Query, ApiError> {
        Params::new(query_pairs(text)?).read()
    }

    #[test]
    fn query_parameters_are_checked_as_text_then_parsed() {
        let read = query("limit=5.0&active=true&subject=a+b%2Fc&other=%00").unwrap();
        assert_eq!(read.limit, Some(5));
        assert_eq!(read.active, Some(true));
        assert_eq!(read.subject.as_deref(), Some("a b/c"));
        let none = query("").unwrap();
        assert!(none.limit.is_none() && none.active.is_none() && none.subject.is_none());

        let names =
            |text: &str| -> Vec<String> { fields(query(text).err().unwrap()).into_iter().map(|(f, _)| f).collect() };
        assert_eq!(names("subject=a%00b"), ["subject"]);
        assert_eq!(names("subject="), ["subject"]);
        assert_eq!(names(&format!("subject={}", "x".repeat(256))), ["subject"]);
        assert_eq!(names("subject=%FF"), ["subject"]);
        assert_eq!(
            names("limit=0&active=yes&subject=a&subject=b"),
            ["limit", "active", "subject"]
        );
        for bad in ["-1", "1001", "1.5", "abc", "9007199254740992", "1e400", " 5"] {
            assert_eq!(names(&format!("limit={bad}")), ["limit"], "{bad}");
        }
    }
}
