//! Reads JSON request bodies into typed values, collecting every problem with its dot path so
//! that one 400 answer lists all of them. Unknown properties are ignored.
//!
//! A value's dot path is kept as links to its parents and written out only when a problem is
//! recorded: a valid body, by far the common case, formats no path at all.

use crate::error::{ApiError, FieldError};
use jiff::Timestamp;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::fmt::Write as _;
use std::rc::Rc;
use till_core::ids::{TextError, check_text};
use till_core::instant::{Zone, parse_instant};
use till_core::money::{Bps, Cents, MAX_SAFE_INTEGER};

/// The problems found so far in one request.
#[derive(Default)]
pub struct Problems(RefCell<Vec<FieldError>>);

impl Problems {
    pub fn new() -> Problems {
        Problems::default()
    }

    /// The body as an object; anything else is one problem on `body`.
    pub fn root<'a>(&'a self, body: &'a Value) -> Option<Obj<'a>> {
        match body {
            Value::Object(map) => Some(Obj {
                problems: self,
                path: None,
                map,
            }),
            _ => {
                self.push("body", "must be a JSON object");
                None
            }
        }
    }

    pub fn push(&self, field: impl Into<String>, message: impl Into<String>) {
        self.0.borrow_mut().push(FieldError::new(field, message));
    }

    pub fn is_empty(&self) -> bool {
        self.0.borrow().is_empty()
    }

    /// The parsed value, or every problem found. `build` sees only fields that parsed, so it
    /// returns `None` exactly when a problem was recorded.
    pub fn finish<T>(self, build: impl FnOnce() -> Option<T>) -> Result<T, ApiError> {
        let built = if self.is_empty() { build() } else { None };
        match built {
            Some(value) => Ok(value),
            None => {
                let mut problems = self.0.into_inner();
                if problems.is_empty() {
                    problems.push(FieldError::new("body", "is invalid"));
                }
                Err(ApiError::Validation(problems))
            }
        }
    }
}

/// A request body: the type the OpenAPI document describes (it derives `ToSchema`) is the type
/// the handler gets, read field by field so that every problem is reported at once, each at its
/// dot path. One declaration per wire shape: no other type describes the body.
pub trait FromBody: Sized {
    /// Reads the body's object; `None` once a problem was recorded.
    fn from_body(root: &Obj<'_>) -> Option<Self>;
}

/// `body` as `T`, or a 400 listing every problem.
pub fn parse_body<T: FromBody>(body: &Value) -> Result<T, ApiError> {
    let problems = Problems::new();
    let parsed = problems.root(body).and_then(|root| T::from_body(&root));
    problems.finish(|| parsed)
}

/// Where a value sits in the body: a property of its parent object or an element of its
/// parent array. `None` is the body itself.
type Path<'a> = Option<Rc<Step<'a>>>;

struct Step<'a> {
    parent: Path<'a>,
    at: At<'a>,
}

#[derive(Clone, Copy)]
enum At<'a> {
    Key(&'a str),
    Index(usize),
}

/// The dot path of `at` under `parent`, as problems name it (`cart.lines.2.quantity`).
fn dot_path(parent: &Path<'_>, at: At<'_>) -> String {
    let mut steps = vec![at];
    let mut next = parent.as_deref();
    while let Some(step) = next {
        steps.push(step.at);
        next = step.parent.as_deref();
    }
    let mut path = String::new();
    for (i, at) in steps.iter().rev().enumerate() {
        if i > 0 {
            path.push('.');
        }
        match at {
            At::Key(key) => path.push_str(key),
            At::Index(index) => {
                let _ = write!(path, "{index}");
            }
        }
    }
    path
}

/// A JSON object at some path of the body.
pub struct Obj<'a> {
    problems: &'a Problems,
    path: Path<'a>,
    map: &'a Map<String, Value>,
}

impl<'a> Obj<'a> {
    pub fn path_of(&self, key: &str) -> String {
        dot_path(&self.path, At::Key(key))
    }

    /// The raw value of `key`, unchecked.
    pub fn raw(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    pub fn has(&self, key: &str) -> bool {
        self.map.get(key).is_some_and(|v| !v.is_null())
    }

    /// Records a problem on `key` of this object.
    pub fn fail<T>(&self, key: &str, message: impl Into<String>) -> Option<T> {
        self.problems.push(self.path_of(key), message);
        None
    }

    /// A property that must be present. `null` is handed to `parse`, which refuses it unless the
    /// field is nullable.
    pub fn required<T>(&self, key: &str, parse: impl FnOnce(Field<'a>) -> Option<T>) -> Option<T> {
        match self.map.get_key_value(key) {
            Some((key, value)) => parse(self.field(key, value)),
            None => self.fail(key, "is required"),
        }
    }

    /// A property that may be absent or `null`, both read as `None`.
    pub fn optional<T>(&self, key: &str, parse: impl FnOnce(Field<'a>) -> Option<T>) -> Option<Option<T>> {
        match self.map.get_key_value(key) {
            None | Some((_, Value::Null)) => Some(None),
            Some((key, value)) => parse(self.field(key, value)).map(Some),
        }
    }

    fn field(&self, key: &'a str, value: &'a Value) -> Field<'a> {
        Field {
            problems: self.problems,
            parent: self.path.clone(),
            at: At::Key(key),
            value,
        }
    }
}

/// One value at some path of the body.
pub struct Field<'a> {
    problems: &'a Problems,
    parent: Path<'a>,
    at: At<'a>,
    value: &'a Value,
}

impl<'a> Field<'a> {
    pub fn path(&self) -> String {
        dot_path(&self.parent, self.at)
    }

    /// This value as the parent of its properties or elements.
    fn as_parent(&self) -> Path<'a> {
        Some(Rc::new(Step {
            parent: self.parent.clone(),
            at: self.at,
        }))
    }

    pub fn value(&self) -> &'a Value {
        self.value
    }

    pub fn fail<T>(&self, message: impl Into<String>) -> Option<T> {
        self.problems.push(self.path(), message);
        None
    }

    /// Records a problem on property `key` of this value.
    pub fn fail_inner<T>(&self, key: &str, message: impl Into<String>) -> Option<T> {
        self.problems.push(dot_path(&self.as_parent(), At::Key(key)), message);
        None
    }

    /// `null`, or whatever `parse` makes of the value.
    pub fn nullable<T>(self, parse: impl FnOnce(Field<'a>) -> Option<T>) -> Option<Option<T>> {
        if self.value.is_null() {
            Some(None)
        } else {
            parse(self).map(Some)
        }
    }

    pub fn string(&self) -> Option<&'a str> {
        match self.value {
            Value::String(text) => Some(text),
            _ => self.fail("must be a string"),
        }
    }

    /// Text under the identifier rules: 1 to 255 characters, no control characters.
    pub fn text(&self) -> Option<String> {
        self.parse_text(|text| check_text(text).map(|()| text.to_owned()))
    }

    /// A string turned into `T` by a parser of the core.
    pub fn parse_text<T>(&self, parse: impl FnOnce(&str) -> Result<T, TextError>) -> Option<T> {
        let text = self.string()?;
        match parse(text) {
            Ok(value) => Some(value),
            Err(error) => self.fail(text_message(error)),
        }
    }

    /// A string accepted by `parse`, else `message`.
    pub fn string_as<T>(&self, message: &str, parse: impl FnOnce(&str) -> Option<T>) -> Option<T> {
        let text = self.string()?;
        parse(text).or_else(|| self.fail(message))
    }

    /// One of the listed strings.
    pub fn one_of<T: Copy>(&self, choices: &[(&str, T)]) -> Option<T> {
        let text = self.string()?;
        match choices.iter().find(|(name, _)| *name == text) {
            Some((_, value)) => Some(*value),
            None => {
                let names: Vec<&str> = choices.iter().map(|(name, _)| *name).collect();
                self.fail(format!("must be one of: {}", names.join(", ")))
            }
        }
    }

    pub fn boolean(&self) -> Option<bool> {
        match self.value {
            Value::Bool(flag) => Some(*flag),
            _ => self.fail(NOT_A_BOOLEAN),
        }
    }

    /// An integer in `min..=max`. Integral numbers written with a fraction (`2.0`) count.
    pub fn integer(&self, min: i64, max: i64) -> Option<i64> {
        let range = || integer_range(min, max);
        let Value::Number(number) = self.value else {
            return self.fail(range());
        };
        let value = if let Some(value) = number.as_i64() {
            Some(value)
        } else if number.as_u64().is_some() {
            None
        } else {
            number
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64)
                .map(|f| f as i64)
        };
        match value {
            Some(value) if (min..=max).contains(&value) => Some(value),
            _ => self.fail(range()),
        }
    }

    /// A non-negative amount of money.
    pub fn cents(&self) -> Option<Cents> {
        self.integer(0, MAX_SAFE_INTEGER).and_then(Cents::new)
    }

    /// A strictly positive amount of money.
    pub fn positive_cents(&self) -> Option<Cents> {
        self.integer(1, MAX_SAFE_INTEGER).and_then(Cents::new)
    }

    /// Basis points from `min` to 10000.
    pub fn bps(&self, min: i64) -> Option<Bps> {
        self.integer(min, 10_000).and_then(Bps::new)
    }

    pub fn number(&self) -> Option<f64> {
        match self.value.as_f64() {
            Some(value) if self.value.is_number() => Some(value),
            _ => self.fail("must be a number"),
        }
    }

    pub fn instant(&self, zone: Zone) -> Option<Timestamp> {
        let text = self.string()?;
        match parse_instant(text, zone) {
            Ok(at) => Some(at),
            Err(error) => self.fail(error.to_string()),
        }
    }

    pub fn object(&self) -> Option<Obj<'a>> {
        match self.value {
            Value::Object(map) => Some(Obj {
                problems: self.problems,
                path: self.as_parent(),
                map,
            }),
            _ => self.fail("must be an object"),
        }
    }

    /// Every element parsed with `each`; `None` if any element failed (all are still checked).
    pub fn array<T>(&self, mut each: impl FnMut(Field<'a>) -> Option<T>) -> Option<Vec<T>> {
        let Value::Array(items) = self.value else {
            return self.fail("must be an array");
        };
        let mut parsed = Vec::with_capacity(items.len());
        let mut all_ok = true;
        let parent = self.as_parent();
        for (index, item) in items.iter().enumerate() {
            let field = Field {
                problems: self.problems,
                parent: parent.clone(),
                at: At::Index(index),
                value: item,
            };
            match each(field) {
                Some(value) => parsed.push(value),
                None => all_ok = false,
            }
        }
        all_ok.then_some(parsed)
    }
}

/// Why a value is not `true` or `false`, in a body or a query.
pub const NOT_A_BOOLEAN: &str = "must be true or false";

/// Why an integer is refused: out of `min..=max`, or not one.
pub fn integer_range(min: i64, max: i64) -> String {
    format!("must be an integer from {min} to {max}")
}

/// Why an end of a validity window is refused.
pub const UNTIL_BEFORE_FROM: &str = "must not be earlier than validFrom";

fn text_message(error: TextError) -> String {
    match error {
        TextError::Empty => "must be a string of at least 1 character".to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_problem_is_reported_with_its_dot_path() {
        let body = json!({"name": "", "lines": [{"qty": 1}, {"qty": 0}, {"qty": "x"}], "price": 9007199254740992u64});
        let problems = Problems::new();
        let root = problems.root(&body).unwrap();
        let name = root.required("name", |f| f.text());
        let lines = root.required("lines", |f| {
            f.array(|line| line.object()?.required("qty", |q| q.integer(1, MAX_SAFE_INTEGER)))
        });
        let price = root.required("price", |f| f.cents());
        let missing = root.required("missing", |f| f.text());
        let Err(ApiError::Validation(errors)) = problems.finish(|| Some((name?, lines?, price?, missing?))) else {
            panic!("expected a validation error");
        };
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["name", "lines.1.qty", "lines.2.qty", "price", "missing"]);
    }

    #[test]
    fn paths_run_through_nested_objects_and_arrays() {
        let body = json!({"cart": {"lines": [{"id": "a", "tags": ["x", 7]}, {"id": 5}]}});
        let problems = Problems::new();
        let root = problems.root(&body).unwrap();
        let lines = root.required("cart", |cart| {
            cart.object()?.required("lines", |lines| {
                lines.array(|line| {
                    let line_obj = line.object()?;
                    let id = line_obj.required("id", |id| id.text());
                    let tags = line_obj.optional("tags", |tags| tags.array(|tag| tag.text()));
                    if id.as_deref() == Some("a") {
                        line.fail_inner::<()>("id", "is taken");
                    }
                    Some((id?, tags?))
                })
            })
        });
        assert!(lines.is_none());
        let Err(ApiError::Validation(errors)) = problems.finish(|| Some(())) else {
            panic!("expected a validation error");
        };
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["cart.lines.0.tags.1", "cart.lines.0.id", "cart.lines.1.id"]);
    }

    #[test]
    fn integers_accept_integral_numbers_only() {
        let check = |value: Value| {
            let problems = Problems::new();
            let field = Field {
                problems: &problems,
                parent: None,
                at: At::Key("n"),
                value: &value,
            };
            field.integer(0, MAX_SAFE_INTEGER)
        };
        assert_eq!(check(json!(5)), Some(5));
        assert_eq!(check(json!(5.0)), Some(5));
        // Written with a zero fraction, as JSON Schema counts an integer: exact once parsed.
        let written = crate::extract::parse_json(b"2076629671779215.0").unwrap();
        assert_eq!(check(written), Some(2_076_629_671_779_215));
        let written = crate::extract::parse_json(b"9007199254740991.0").unwrap();
        assert_eq!(check(written), Some(MAX_SAFE_INTEGER));
        assert_eq!(check(json!(5.5)), None);
        assert_eq!(check(json!(-1)), None);
        assert_eq!(check(json!(9007199254740991u64)), Some(MAX_SAFE_INTEGER));
        assert_eq!(check(json!(9007199254740992u64)), None);
        assert_eq!(check(json!(1e300)), None);
        assert_eq!(check(json!("5")), None);
        assert_eq!(check(json!(true)), None);
    }

    #[test]
    fn nullable_and_optional_fields_read_null_as_absent() {
        let body = json!({"a": null, "b": "x"});
        let problems = Problems::new();
        let root = problems.root(&body).unwrap();
        assert_eq!(root.required("a", |f| f.nullable(|f| f.text())), Some(None));
        assert_eq!(root.optional("a", |f| f.text()), Some(None));
        assert_eq!(root.optional("c", |f| f.text()), Some(None));
        assert_eq!(root.optional("b", |f| f.text()), Some(Some("x".to_owned())));
        assert!(problems.is_empty());
        assert_eq!(root.required("a", |f| f.text()), None);
        assert!(!problems.is_empty());
    }
}
