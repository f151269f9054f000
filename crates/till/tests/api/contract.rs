//! The request contract, proved from the document alone. For every operation of
//! docs/openapi.json that takes a body or path and query parameters, a request is built from
//! the schema (required fields, the first shape of a `oneOf`, values that satisfy each
//! pattern and bound), and it must not be refused as invalid. Then the same request, missing
//! one required field or breaking one bound, pattern, enum, format or type the document
//! states, must be a 400 VALIDATION_FAILED naming that field by its dot path
//! (`cart.lines.0.quantity`, or a parameter's name). A constraint the document states that the
//! parsers do not enforce, or enforce under another name, fails here; so does a generator
//! mistake, since every request is first checked against the document's own schema.

use crate::harness::{Engine, Reply, TestServer};
use crate::on_both_engines;
use reqwest::Method;
use serde_json::{Map, Value, json};

/// Values given by hand, where a schema cannot be satisfied generically, each with why.
const GIVEN: [(&str, &str, &str); 4] = [
    (
        "date-time",
        "2026-03-02T10:00:00Z",
        "the instant patterns are alternations over ranges of years, which the generator does not walk",
    ),
    (
        "date",
        "2026-03-02",
        "a calendar date is stated by its format alone, without a pattern",
    ),
    (
        "uri",
        "http://127.0.0.1:9/contract",
        "a webhook URL is stated by its format and a pattern of alternatives; the server here may \
         deliver to a loopback address, where nothing listens on the discard port",
    ),
    (
        "email",
        "jeanne.martin@example.org",
        "an e-mail address's pattern nests repeated groups, which the generator does not walk",
    ),
];

/// Values given by hand for patterns that are alternations, which the generator does not walk:
/// the start of the pattern, the value, and why.
const GIVEN_FOR_PATTERN: [(&str, &str, &str); 3] = [
    (
        r"^(sale\.completed|",
        "sale.completed,session.closed",
        "the event types of the feed's filter, a comma-separated alternation",
    ),
    (
        r"^([0-9]{8}|",
        "4006381333931",
        "a barcode's lengths are an alternation, and its last digit is a check digit no pattern states",
    ),
    (
        r"^(AT|BE|",
        "FR12000000000",
        "a VAT number's prefixes are an alternation, and a French one's key is its SIREN's (here 000000000, \
         the SIREN the pattern ^[0-9]{9}$ gives)",
    ),
];

/// Fields an operation's base request holds although its schema does not require them, each
/// with why.
const ALSO_SENT: [(&str, &str, &str); 1] = [(
    "PUT /v1/staff/{subject}",
    "pin",
    "required for a new staff member only, which the document says in words: a schema cannot depend on what the server holds",
)];

/// A step from a schema to a part of it: a property, an array's first item, or a shape of a
/// `oneOf` (which is no step in the instance).
#[derive(Clone, Debug, PartialEq)]
enum Step {
    Key(String),
    Item,
    Shape(usize),
}

/// One request the contract refuses: `focus` leads to the field, `broken` replaces it (`None`
/// leaves it out). Within a `oneOf` whose shapes are told apart by which fields they hold, a
/// broken field may make the body look like another shape, and the refusal may name that
/// shape's field instead: those are `selectors`.
#[derive(Debug)]
struct Case {
    focus: Vec<Step>,
    what: String,
    broken: Option<Value>,
    selectors: Vec<String>,
}

/// The field's name in `fieldErrors`: its dot path, array items by index.
fn dot_path(focus: &[Step]) -> String {
    let parts: Vec<String> = focus
        .iter()
        .filter_map(|step| match step {
            Step::Key(key) => Some(key.clone()),
            Step::Item => Some("0".to_owned()),
            Step::Shape(_) => None,
        })
        .collect();
    parts.join(".")
}

struct Contract {
    document: Value,
}

impl Contract {
    /// `schema` with its `$ref` followed.
    fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        match schema["$ref"].as_str() {
            Some(reference) => {
                let pointer = reference.trim_start_matches('#');
                self.resolve(self.document.pointer(pointer).unwrap_or_else(|| panic!("{reference}")))
            }
            None => schema,
        }
    }

    /// The shapes of a `oneOf` or `anyOf` but `null`, and whether `null` is one of them.
    fn shapes<'a>(&'a self, schema: &'a Value) -> Option<(Vec<&'a Value>, bool)> {
        let all = schema["oneOf"].as_array().or(schema["anyOf"].as_array())?;
        let (nulls, shapes): (Vec<&Value>, Vec<&Value>) = all.iter().partition(|shape| shape["type"] == "null");
        Some((
            shapes.into_iter().map(|shape| self.resolve(shape)).collect(),
            !nulls.is_empty(),
        ))
    }

    /// The instance type of a schema: its `type`, or the first that is not `null`.
    fn kind(schema: &Value) -> Option<&str> {
        match &schema["type"] {
            Value::String(kind) if kind != "null" => Some(kind),
            Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).find(|kind| *kind != "null"),
            _ => None,
        }
    }

    fn nullable(schema: &Value) -> bool {
        schema["type"] == "null"
            || schema["type"]
                .as_array()
                .is_some_and(|kinds| kinds.contains(&json!("null")))
    }

    /// The smallest valid instance of `schema` that holds the part `focus` leads to.
    fn build(&self, schema: &Value, focus: &[Step]) -> Value {
        self.build_named(schema, focus, "")
    }

    /// As [`Contract::build`]; a text takes the field's `name` where its schema allows, so
    /// that two fields of one request (a return's own id and its original's) differ.
    fn build_named(&self, schema: &Value, focus: &[Step], name: &str) -> Value {
        let schema = self.resolve(schema);
        if let Some((shapes, _)) = self.shapes(schema) {
            let (shape, rest) = match focus.first() {
                Some(Step::Shape(index)) => (shapes[*index], &focus[1..]),
                _ => (shapes[0], focus),
            };
            return self.build_named(shape, rest, name);
        }
        if Self::kind(schema) == Some("string") && schema["enum"].is_null() && schema["format"].is_null() {
            let with_name = json!(name);
            if !name.is_empty() && self.is_valid(schema, &with_name) {
                return with_name;
            }
        }
        if let Some(first) = schema["enum"].as_array().and_then(|members| members.first()) {
            return first.clone();
        }
        match Self::kind(schema) {
            Some("object") => {
                let required: Vec<&str> = schema["required"]
                    .as_array()
                    .map(|names| names.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let mut object = Map::new();
                for (name, property) in schema["properties"].as_object().into_iter().flatten() {
                    let rest = match focus.first() {
                        Some(Step::Key(key)) if key == name => Some(&focus[1..]),
                        _ => None,
                    };
                    if rest.is_some() || required.contains(&name.as_str()) {
                        object.insert(name.clone(), self.build_named(property, rest.unwrap_or_default(), name));
                    }
                }
                Value::Object(object)
            }
            Some("array") => {
                let items = &schema["items"];
                let at_least = usize::from(focus.first() == Some(&Step::Item));
                let count = at_least.max(schema["minItems"].as_u64().unwrap_or(0) as usize);
                (0..count)
                    .map(|index| {
                        self.build(
                            items,
                            if index == 0 {
                                focus.get(1..).unwrap_or_default()
                            } else {
                                &[]
                            },
                        )
                    })
                    .collect()
            }
            _ => scalar(schema),
        }
    }

    /// Every case of the part of `schema` at `focus` and of the parts within it; `selectors`
    /// are the fields that tell apart the shapes `focus` is one of.
    fn cases(&self, schema: &Value, focus: &[Step], required: bool, selectors: &[String], out: &mut Vec<Case>) {
        let schema = self.resolve(schema);
        let case = |what: &str, broken: Option<Value>| Case {
            focus: focus.to_vec(),
            what: what.to_owned(),
            broken,
            selectors: selectors.to_vec(),
        };
        let (schema, nullable) = match self.shapes(schema) {
            Some((shapes, nullable)) if shapes.len() == 1 => (shapes[0], nullable),
            Some((shapes, nullable)) => {
                if !focus.is_empty() {
                    if required {
                        out.push(case("required", None));
                    }
                    if Self::kind(shapes[0]) == Some("object") {
                        out.push(case("type", Some(json!([]))));
                    }
                    if !nullable {
                        out.push(case("null", Some(Value::Null)));
                    }
                }
                let selectors = self.selectors(&shapes, focus);
                for (index, shape) in shapes.into_iter().enumerate() {
                    let within = [focus, &[Step::Shape(index)]].concat();
                    self.cases(shape, &within, false, &selectors, out);
                }
                return;
            }
            None => (schema, Self::nullable(schema)),
        };
        // A shape's own checks were made where the shapes meet.
        if !focus.is_empty() && !matches!(focus.last(), Some(Step::Shape(_))) {
            if required {
                out.push(case("required", None));
            }
            for (what, broken) in self.broken_values(schema, nullable) {
                out.push(case(&what, Some(broken)));
            }
        }
        let selectors = if matches!(focus.last(), Some(Step::Shape(_))) {
            selectors
        } else {
            &[]
        };
        match Self::kind(schema) {
            Some("object") => {
                let required: Vec<&Value> = schema["required"]
                    .as_array()
                    .map(|r| r.iter().collect())
                    .unwrap_or_default();
                for (name, property) in schema["properties"].as_object().into_iter().flatten() {
                    let within = [focus, &[Step::Key(name.clone())]].concat();
                    self.cases(property, &within, required.contains(&&json!(name)), selectors, out);
                }
            }
            Some("array") => {
                let within = [focus, &[Step::Item]].concat();
                self.cases(&schema["items"], &within, false, &[], out);
            }
            _ => {}
        }
    }

    /// The dot paths of the fields some of `shapes` require and others do not.
    fn selectors(&self, shapes: &[&Value], focus: &[Step]) -> Vec<String> {
        let required = |shape: &Value| -> Vec<String> {
            shape["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        };
        let all: Vec<Vec<String>> = shapes.iter().map(|shape| required(shape)).collect();
        let mut names: Vec<String> = all.concat();
        names.sort();
        names.dedup();
        names
            .into_iter()
            .filter(|name| !all.iter().all(|each| each.contains(name)))
            .map(|name| dot_path(&[focus, &[Step::Key(name)]].concat()))
            .collect()
    }

    /// Values that break one constraint of `schema` each, with the constraint's name.
    fn broken_values(&self, schema: &Value, nullable: bool) -> Vec<(String, Value)> {
        let mut broken = Vec::new();
        let mut push = |what: &str, value: Value| broken.push((what.to_owned(), value));
        let number = |key: &str| schema[key].as_f64();
        match Self::kind(schema) {
            Some("string") => {
                push("type", json!(12));
                let valid = scalar(schema);
                let valid = valid.as_str().unwrap_or("x");
                let filler = valid.chars().next().unwrap_or('x').to_string();
                if let Some(min) = schema["minLength"].as_u64().filter(|min| *min > 0) {
                    push("minLength", json!(filler.repeat(min as usize - 1)));
                }
                if let Some(max) = schema["maxLength"].as_u64() {
                    push("maxLength", json!(filler.repeat(max as usize + 1)));
                }
                if let Some(pattern) = schema["pattern"].as_str() {
                    push("pattern", json!(breaking_pattern(schema, pattern, valid)));
                }
                if schema["enum"].is_array() {
                    push("enum", json!("not-a-member"));
                }
                match schema["format"].as_str() {
                    Some("date") => push("format", json!("2026-02-30")),
                    Some("date-time") if schema["pattern"].is_null() => push("format", json!("2026-02-30T10:00:00Z")),
                    _ => {}
                }
            }
            Some(kind @ ("integer" | "number")) => {
                push("type", json!("one"));
                if kind == "integer" {
                    push("type", json!(1.5));
                }
                let step = if kind == "integer" {
                    1.0
                } else {
                    number("multipleOf").unwrap_or(1.0)
                };
                if let Some(min) = number("minimum") {
                    push("minimum", numeric(kind, min - step));
                }
                if let Some(max) = number("maximum") {
                    push("maximum", numeric(kind, max + step));
                }
                if let Some(multiple) = number("multipleOf") {
                    push("multipleOf", json!(number("minimum").unwrap_or(0.0) + multiple / 2.0));
                }
            }
            Some("boolean") => push("type", json!("yes")),
            Some("array") => {
                push("type", json!({}));
                let item = self.build(&schema["items"], &[]);
                if let Some(min) = schema["minItems"].as_u64().filter(|min| *min > 0) {
                    push("minItems", Value::Array(vec![item.clone(); min as usize - 1]));
                }
                if let Some(max) = schema["maxItems"].as_u64() {
                    push("maxItems", Value::Array(vec![item; max as usize + 1]));
                }
            }
            Some("object") => push("type", json!([])),
            _ if schema["type"] == "null" => push("type", json!(1)),
            _ => {}
        }
        // A value of several types (a JSON-RPC id: text or number) breaks its type only with a
        // value of none of them.
        if let Value::Array(kinds) = &schema["type"] {
            let allowed = |value: &Value| {
                kinds.iter().filter_map(Value::as_str).any(|kind| match kind {
                    "integer" => value.is_i64() || value.is_u64(),
                    "number" => value.is_number(),
                    "string" => value.is_string(),
                    "boolean" => value.is_boolean(),
                    "array" => value.is_array(),
                    "object" => value.is_object(),
                    _ => value.is_null(),
                })
            };
            broken.retain(|(what, value)| what != "type" || !allowed(value));
            let type_broken = broken.iter().any(|(what, _)| what == "type");
            if let Some(other) = [json!(true), json!([]), json!({})]
                .into_iter()
                .find(|value| !type_broken && !allowed(value))
            {
                broken.push(("type".to_owned(), other));
            }
        }
        if !nullable && Self::kind(schema).is_some() {
            broken.push(("null".to_owned(), Value::Null));
        }
        broken
    }

    /// Checks `instance` against `schema` with the document's components in reach.
    fn is_valid(&self, schema: &Value, instance: &Value) -> bool {
        let root = json!({"components": self.document["components"], "allOf": [schema]});
        jsonschema::options()
            .should_validate_formats(true)
            .build(&root)
            .expect("a schema of the document")
            .is_valid(instance)
    }
}

/// An integer bound stays an integer in JSON.
fn numeric(kind: &str, value: f64) -> Value {
    if kind == "integer" {
        json!(value as i64)
    } else {
        json!(value)
    }
}

/// A valid scalar: the first enum member, a pattern's first match, a given value for a format,
/// or the smallest value a bound allows.
fn scalar(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|members| members.first()) {
        return first.clone();
    }
    if let Some(format) = schema["format"].as_str()
        && let Some((_, value, _)) = GIVEN.iter().find(|(name, _, _)| *name == format)
    {
        return json!(value);
    }
    match Contract::kind(schema) {
        Some("string") => {
            let min = schema["minLength"].as_u64().unwrap_or(1).max(1) as usize;
            match schema["pattern"].as_str() {
                Some(pattern)
                    if let Some((_, value, _)) = GIVEN_FOR_PATTERN
                        .iter()
                        .find(|(start, _, _)| pattern.starts_with(start)) =>
                {
                    json!(value)
                }
                Some(pattern) => json!(matching(pattern, min).unwrap_or_else(|| panic!("no value for {pattern}"))),
                None => json!("x".repeat(min)),
            }
        }
        Some("integer") => json!(schema["minimum"].as_i64().unwrap_or(0).max(0)),
        Some("number") => json!(schema["minimum"].as_f64().unwrap_or(0.0).max(0.0)),
        Some("boolean") => json!(false),
        _ => Value::Null,
    }
}

/// A string matching `pattern` when it is anchored literal characters and character classes
/// with a count (`^[0-9a-f]{64}$`, `^[^\u0000-\u001F]*$`): each class gives its characters in
/// turn. `None` for anything else (groups, alternations).
fn matching(pattern: &str, min_len: usize) -> Option<String> {
    let body = pattern.strip_prefix('^')?.strip_suffix('$')?;
    let mut chars = body.chars().peekable();
    let mut out = String::new();
    while let Some(c) = chars.next() {
        let choices: Vec<char> = match c {
            '[' => {
                let mut class = String::new();
                for c in chars.by_ref() {
                    if c == ']' {
                        break;
                    }
                    class.push(c);
                }
                class_members(&class)?
            }
            '(' | '|' | ')' | '.' => return None,
            '\\' => vec![chars.next()?],
            c => vec![c],
        };
        let (low, high) = match chars.peek() {
            Some('*') => (0, usize::MAX),
            Some('+') => (1, usize::MAX),
            Some('?') => (0, 1),
            Some('{') => {
                chars.next();
                let count: String = chars.by_ref().take_while(|c| *c != '}').collect();
                let (low, high) = count.split_once(',').unwrap_or((&count, &count));
                let low: usize = low.parse().ok()?;
                (low, high.parse().unwrap_or(usize::MAX))
            }
            _ => (1, 1),
        };
        if matches!(chars.peek(), Some('*' | '+' | '?')) {
            chars.next();
        }
        let count = low.max(min_len.min(high)).max(usize::from(high > 0));
        out.extend((0..count).map(|index| choices[index % choices.len()]));
    }
    Some(out)
}

/// The characters a class admits, in order; for a negated class, the letters it admits.
fn class_members(class: &str) -> Option<Vec<char>> {
    let (negated, class) = match class.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, class),
    };
    let mut singles = Vec::new();
    let mut chars = class.chars();
    while let Some(c) = chars.next() {
        singles.push(if c == '\\' {
            match chars.next()? {
                'u' => char::from_u32(u32::from_str_radix(&chars.by_ref().take(4).collect::<String>(), 16).ok()?)?,
                other => other,
            }
        } else {
            c
        });
    }
    let mut ranges = Vec::new();
    let mut index = 0;
    while index < singles.len() {
        if index + 2 < singles.len() && singles[index + 1] == '-' {
            ranges.push((singles[index], singles[index + 2]));
            index += 3;
        } else {
            ranges.push((singles[index], singles[index]));
            index += 1;
        }
    }
    let members: Vec<char> = if negated {
        ('a'..='z')
            .filter(|c| !ranges.iter().any(|(low, high)| (*low..=*high).contains(c)))
            .collect()
    } else {
        ranges.iter().flat_map(|(low, high)| *low..=*high).collect()
    };
    (!members.is_empty()).then_some(members)
}

/// A string within the schema's lengths that does not match `pattern`: the valid value with
/// its first character changed, or a short text that breaks the usual classes.
fn breaking_pattern(schema: &Value, pattern: &str, valid: &str) -> String {
    let checker = jsonschema::validator_for(&json!({"type": "string", "pattern": pattern})).expect("a pattern");
    let (min, max) = (
        schema["minLength"].as_u64().unwrap_or(0) as usize,
        schema["maxLength"].as_u64().unwrap_or(u64::MAX) as usize,
    );
    let mut candidates: Vec<String> = ['!', '\u{1}', 'G', 'g', ' ']
        .iter()
        .map(|c| c.to_string() + valid.get(1..).unwrap_or_default())
        .collect();
    candidates.extend(["a\u{1}b", "!", "zz", "ZZZZ", "é"].map(str::to_owned));
    candidates
        .into_iter()
        .find(|candidate| (min..=max).contains(&candidate.chars().count()) && !checker.is_valid(&json!(candidate)))
        .unwrap_or_else(|| panic!("no text breaks {pattern}"))
}

/// `instance` with the part at `focus` replaced by `broken`, or taken out.
fn break_at(instance: &mut Value, focus: &[Step], broken: Option<Value>) {
    let steps: Vec<&Step> = focus.iter().filter(|step| !matches!(step, Step::Shape(_))).collect();
    let Some((last, parents)) = steps.split_last() else {
        return;
    };
    let mut at = instance;
    for step in parents {
        at = match step {
            Step::Key(key) => &mut at[key.as_str()],
            _ => &mut at[0],
        };
    }
    match (last, broken) {
        (Step::Key(key), Some(value)) => at[key.as_str()] = value,
        (Step::Key(key), None) => {
            at.as_object_mut().expect("an object").remove(key.as_str());
        }
        (_, Some(value)) => at[0] = value,
        (_, None) => {}
    }
}

/// Percent-encodes all but unreserved characters, for a path segment or a query value.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A parameter's value as it travels in a URL.
fn as_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

/// One operation's parts: its path and query parameters (name, where, required, schema) and
/// its body schema.
struct Operation {
    method: Method,
    path: String,
    parameters: Vec<(String, String, bool, Value)>,
    body: Option<Value>,
}

impl Operation {
    /// The request with every parameter at its valid value but `broken` (name and text, or
    /// left out), and `body`.
    async fn send(
        &self,
        server: &TestServer,
        token: &str,
        broken: Option<(&str, Option<String>)>,
        body: Option<&Value>,
    ) -> Reply {
        let mut path = self.path.clone();
        let mut query = Vec::new();
        for (name, place, required, schema) in &self.parameters {
            let value = match &broken {
                Some((bad, text)) if *bad == name.as_str() => text.clone(),
                _ => (*required || place == "path").then(|| parameter_value(schema, name)),
            };
            match (place.as_str(), value) {
                ("path", Some(value)) => path = path.replace(&format!("{{{name}}}"), &encode(&value)),
                ("query", Some(value)) => query.push(format!("{name}={}", encode(&value))),
                _ => {}
            }
        }
        if !query.is_empty() {
            path = format!("{path}?{}", query.join("&"));
        }
        let method = self.method.clone();
        let body = body.cloned();
        server
            .send(|http, base| {
                let request = http.request(method, format!("{base}{path}")).bearer_auth(token);
                match body {
                    Some(body) => request.json(&body),
                    None => request,
                }
            })
            .await
    }
}

/// A parameter's valid value: its name where its schema allows, as a body's texts.
fn parameter_value(schema: &Value, name: &str) -> String {
    let checker = jsonschema::validator_for(schema).expect("a parameter's schema");
    match checker.is_valid(&json!(name)) {
        true => name.to_owned(),
        false => as_text(&scalar(schema)).expect("a scalar"),
    }
}

fn operations(contract: &Contract) -> Vec<Operation> {
    let mut found = Vec::new();
    for (path, item) in contract.document["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("a path item") {
            let parameters: Vec<(String, String, bool, Value)> = operation["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "path" || p["in"] == "query")
                .map(|p| {
                    (
                        p["name"].as_str().expect("a name").to_owned(),
                        p["in"].as_str().expect("a place").to_owned(),
                        p["required"] == true,
                        contract.resolve(&p["schema"]).clone(),
                    )
                })
                .collect();
            let body = operation["requestBody"]["content"]["application/json"]["schema"].clone();
            let body = (!body.is_null()).then_some(body);
            if parameters.is_empty() && body.is_none() {
                continue;
            }
            found.push(Operation {
                method: Method::from_bytes(method.to_uppercase().as_bytes()).expect("a method"),
                path: path.clone(),
                parameters,
                body,
            });
        }
    }
    found
}

/// What a broken request must be: a 400 VALIDATION_FAILED naming `field` or one of `selectors`.
fn refusal_problem(reply: &Reply, field: &str, selectors: &[String]) -> Option<String> {
    let code = &reply.body["error"]["code"];
    let named: Vec<&str> = reply.body["error"]["fieldErrors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["field"].as_str())
        .collect();
    let names_it = named
        .iter()
        .any(|name| *name == field || selectors.iter().any(|s| s == name));
    (reply.status != 400 || code != "VALIDATION_FAILED" || !names_it)
        .then(|| format!("{} {}", reply.status, reply.text))
}

async fn every_documented_constraint_is_enforced_and_named(engine: Engine) {
    // Bodies up to the largest `maxItems` of the document, so that a list one item too long
    // meets its parser and not the body's size limit.
    // A webhook URL the requests give leads to this machine: the rule on private addresses is
    // webhooks.rs's to prove.
    let server = TestServer::start_with(engine, |config| {
        config.max_body_bytes = 64 * 1024 * 1024;
        config.webhook_allow_private = true;
    })
    .await;
    let admin = server.admin();
    // Operations for tills alone refuse the back office's token before reading the request.
    // Once the network has a store, a request naming another is refused: the store is the one
    // the requests name (a text takes its field's name).
    server.provision_store("storeId").await;
    server.provision_staff("contract-cashier", "cashier", "1234").await;
    let (_, till) = server
        .open_session("storeId", "contract-register", "contract-cashier", "1234")
        .await;
    let contract = Contract {
        document: serde_json::from_str(till_api::openapi::document_json()).expect("the document"),
    };
    let mut problems = Vec::new();
    let mut checked = 0;
    for operation in operations(&contract) {
        let name = format!("{} {}", operation.method, operation.path);
        let build = |focus: &[Step]| {
            let schema = operation.body.as_ref()?;
            let mut body = contract.build(schema, focus);
            for (_, field, _) in ALSO_SENT.iter().filter(|(at, _, _)| *at == name) {
                body[*field] = contract.build(&contract.resolve(schema)["properties"][*field], &[]);
            }
            Some(body)
        };
        let base = build(&[]);
        if let (Some(schema), Some(base)) = (&operation.body, &base) {
            assert!(
                contract.is_valid(schema, base),
                "{name}: the generated body {base} is not valid"
            );
        }
        let mut token = admin.as_str();
        let mut reply = operation.send(&server, token, None, base.as_ref()).await;
        if reply.status == 403 {
            token = till.as_str();
            reply = operation.send(&server, token, None, base.as_ref()).await;
        }
        if reply.status == 400 || reply.status >= 500 {
            let sent = base.as_ref().map(Value::to_string).unwrap_or_default();
            problems.push(format!(
                "{name}: the valid request {sent} was answered {} {}",
                reply.status, reply.text
            ));
        }

        for (parameter, place, required, schema) in &operation.parameters {
            let mut broken: Vec<(String, Option<String>)> = contract
                .broken_values(schema, false)
                .into_iter()
                .filter(|(what, _)| match what.as_str() {
                    // In a URL every value is text: only a number's or a flag's type can break.
                    "type" => Contract::kind(schema) != Some("string"),
                    // A parameter is absent or a text, never null.
                    "null" => false,
                    // An empty path segment routes elsewhere: no parser ever sees it.
                    "minLength" => place == "query",
                    _ => true,
                })
                .filter_map(|(what, value)| Some((what, Some(as_text(&value)?))))
                .collect();
            if *required && place == "query" {
                broken.push(("required".to_owned(), None));
            }
            for (what, text) in broken {
                let reply = operation
                    .send(&server, token, Some((parameter.as_str(), text.clone())), base.as_ref())
                    .await;
                if let Some(problem) = refusal_problem(&reply, parameter, &[]) {
                    problems.push(format!("{name}: {parameter} ({what}: {text:?}) was answered {problem}"));
                }
                checked += 1;
            }
        }

        let Some(schema) = &operation.body else {
            continue;
        };
        let mut cases = Vec::new();
        contract.cases(schema, &[], false, &[], &mut cases);
        for Case {
            focus,
            what,
            broken,
            selectors,
        } in cases
        {
            let field = dot_path(&focus);
            let mut body = build(&focus).expect("a body");
            break_at(&mut body, &focus, broken);
            if contract.is_valid(schema, &body) {
                problems.push(format!(
                    "{name}: {field} ({what}) breaks nothing the document states: {body}"
                ));
                continue;
            }
            let reply = operation.send(&server, token, None, Some(&body)).await;
            if let Some(problem) = refusal_problem(&reply, &field, &selectors) {
                let shown: String = body.to_string().chars().take(300).collect();
                problems.push(format!("{name}: {field} ({what}) in {shown} was answered {problem}"));
            }
            checked += 1;
        }
    }
    assert!(checked > 1000, "only {checked} constraints were found");
    assert!(
        problems.is_empty(),
        "{} of {checked}:\n{}",
        problems.len(),
        problems.join("\n")
    );
    server.stop().await;
}

on_both_engines!(every_documented_constraint_is_enforced_and_named);

#[test]
fn the_generator_satisfies_the_patterns_of_the_document() {
    assert_eq!(matching("^[0-9a-f]{4}$", 1).as_deref(), Some("0123"));
    assert_eq!(matching("^[A-Z]{3}$", 1).as_deref(), Some("ABC"));
    assert_eq!(matching("^[0-9]{4,12}$", 1).as_deref(), Some("0123"));
    assert_eq!(matching(r"^[^\u0000-\u001F\u007F-\u009F]*$", 1).as_deref(), Some("a"));
    assert_eq!(matching("^(?:a|b)$", 1), None);
    assert_eq!(
        dot_path(&[
            Step::Key("cart".into()),
            Step::Key("lines".into()),
            Step::Item,
            Step::Shape(1),
            Step::Key("quantity".into())
        ]),
        "cart.lines.0.quantity"
    );
}
