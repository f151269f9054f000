//! The tools, generated from the OpenAPI document: one per operation an agent may call (tier
//! `allow` or `confirm` in [`ops::ALL`]), named by its operationId, described by the document's
//! own words, taking the operation's path, query and header parameters and its body as
//! arguments. Turning a tool's arguments into the API request is here too.

use crate::error::{ApiError, FieldError};
use crate::ops::{self, Tier};
use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

/// The argument that carries a confirmation token to a `confirm` tool.
pub const CONFIRMATION: &str = "confirmation";
/// The argument that carries the request body.
pub const BODY: &str = "body";

/// Where a parameter goes in the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Path,
    Query,
    Header,
}

#[derive(Clone, Debug)]
pub struct Parameter {
    pub name: String,
    pub place: Place,
    pub required: bool,
}

/// One tool and the operation it calls.
pub struct ToolSpec {
    pub operation: &'static ops::Operation,
    pub method: axum::http::Method,
    /// The path template, `/v1/stores/{storeId}`.
    pub path: String,
    pub parameters: Vec<Parameter>,
    /// `Some(required)` when the operation reads a JSON body.
    pub body: Option<bool>,
    /// The operation's one-line summary.
    pub summary: String,
    /// What the operation does, in the document's words.
    pub effect: String,
    /// The body's properties the document marks `writeOnly` (a PIN): a summary of the change
    /// never shows their values.
    pub secrets: BTreeSet<String>,
    pub tool: Tool,
}

/// The request a tool call makes, before the credential is added.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub method: axum::http::Method,
    /// Path and query, percent-encoded.
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Value>,
}

/// Every tool, in the document's order of paths.
pub fn catalog() -> &'static [ToolSpec] {
    static CATALOG: OnceLock<Vec<ToolSpec>> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let document: Value =
            serde_json::from_str(crate::openapi::document_json()).expect("the OpenAPI document is JSON");
        build(&document)
    })
}

/// The tool named `name`, if it is one.
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    catalog().iter().find(|spec| spec.tool.name == name)
}

/// Whether an operation is offered to agents: its tier lets an agent call it, it is not the
/// endpoint that serves the tools, and it is not withheld from agents ([`WITHHELD`]).
pub fn is_offered(operation: &ops::Operation) -> bool {
    matches!(operation.tier, Tier::Allow | Tier::Confirm)
        && operation.id != <ops::Mcp as ops::Op>::SPEC.id
        && !WITHHELD.contains(&operation.id)
}

/// Writes a person confirms in the API (tier `confirm`) that are still never tools. Issuing an
/// invoice is a legal document made out to a company, numbered for ever without gaps: a
/// number an agent takes cannot be given back, so a person issues it, at the console or
/// through the API, and an agent only reads invoices (docs/agents.md).
pub const WITHHELD: &[&str] = &[<ops::CreateInvoice as ops::Op>::SPEC.id];

fn build(document: &Value) -> Vec<ToolSpec> {
    let mut specs = Vec::new();
    for (path, item) in document["paths"].as_object().into_iter().flatten() {
        for (method, operation) in item.as_object().into_iter().flatten() {
            let Ok(method) = method.to_uppercase().parse::<axum::http::Method>() else {
                continue;
            };
            let Some(id) = operation["operationId"].as_str() else {
                continue;
            };
            let Some(spec) = ops::ALL.iter().find(|spec| spec.id == id) else {
                continue;
            };
            if is_offered(spec) {
                specs.push(tool_spec(document, spec, method, path, operation));
            }
        }
    }
    specs
}

fn tool_spec(
    document: &Value,
    spec: &'static ops::Operation,
    method: axum::http::Method,
    path: &str,
    operation: &Value,
) -> ToolSpec {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut parameters = Vec::new();
    for parameter in operation["parameters"].as_array().into_iter().flatten() {
        let place = match parameter["in"].as_str() {
            Some("path") => Place::Path,
            Some("query") => Place::Query,
            Some("header") => Place::Header,
            _ => continue,
        };
        let name = parameter["name"].as_str().unwrap_or_default().to_owned();
        let is_required = parameter["required"].as_bool().unwrap_or(false);
        let mut schema = parameter["schema"].clone();
        if let Some(description) = parameter["description"].as_str() {
            schema = described(schema, description);
        }
        properties.insert(name.clone(), schema);
        if is_required {
            required.push(Value::from(name.clone()));
        }
        parameters.push(Parameter {
            name,
            place,
            required: is_required,
        });
    }
    let body = operation.get("requestBody").map(|request_body| {
        let is_required = request_body["required"].as_bool().unwrap_or(false);
        let schema = request_body["content"]["application/json"]["schema"].clone();
        let description = request_body["description"]
            .as_str()
            .unwrap_or("The request body, as the API reads it.");
        properties.insert(BODY.to_owned(), described(schema, description));
        if is_required {
            required.push(Value::from(BODY));
        }
        is_required
    });
    if spec.tier == Tier::Confirm {
        properties.insert(
            CONFIRMATION.to_owned(),
            json!({
                "type": "string",
                "pattern": "^pos_cf_[A-Za-z0-9_-]{43}$",
                "description": "Leave it out on the first call. Once the person has agreed to the summary that \
                    call answered, the token it gave, with exactly the same other arguments."
            }),
        );
    }
    let mut input = Map::new();
    input.insert("type".to_owned(), json!("object"));
    input.insert("properties".to_owned(), Value::Object(properties));
    if !required.is_empty() {
        input.insert("required".to_owned(), Value::Array(required));
    }
    input.insert("additionalProperties".to_owned(), json!(false));
    let mut input = Value::Object(input);
    let definitions = carry_definitions(document, &mut input);
    if !definitions.is_empty() {
        input["$defs"] = Value::Object(definitions.into_iter().collect());
    }
    let Value::Object(input) = input else {
        unreachable!("built as an object")
    };
    let summary = operation["summary"].as_str().unwrap_or_default().trim().to_owned();
    let title = summary.trim_end_matches('.').to_owned();
    let annotations = ToolAnnotations::with_title(title.clone())
        .read_only(spec.tier == Tier::Allow)
        .destructive(spec.tier == Tier::Confirm)
        .idempotent(matches!(
            method,
            axum::http::Method::GET | axum::http::Method::PUT | axum::http::Method::DELETE
        ))
        .open_world(false);
    let effect = operation["description"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .replace('\n', " ");
    let mut secrets = BTreeSet::new();
    write_only(&Value::Object(input.clone()), &mut secrets);
    let tool = Tool::new(spec.id, describe(spec, &summary, operation), Arc::new(input))
        .with_title(title)
        .with_annotations(annotations);
    ToolSpec {
        operation: spec,
        method,
        path: path.to_owned(),
        parameters,
        body,
        summary,
        effect,
        secrets,
        tool,
    }
}

/// The names of the properties `schema` marks `writeOnly`, at any depth.
fn write_only(schema: &Value, names: &mut BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            for (name, property) in map.get("properties").and_then(Value::as_object).into_iter().flatten() {
                if property["writeOnly"] == true {
                    names.insert(name.clone());
                }
            }
            for value in map.values() {
                write_only(value, names);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| write_only(item, names)),
        _ => {}
    }
}

/// `schema` with `description`, beside a `$ref` too (JSON Schema 2020-12 allows siblings).
fn described(mut schema: Value, description: &str) -> Value {
    if let Value::Object(map) = &mut schema {
        map.entry("description")
            .or_insert_with(|| Value::from(description.trim()));
    }
    schema
}

/// Rewrites every `#/components/schemas/X` reference in `schema` to `#/$defs/X` and answers the
/// definitions it needs, those they need in turn included, so the tool's schema stands alone.
fn carry_definitions(document: &Value, schema: &mut Value) -> BTreeMap<String, Value> {
    let mut carried = BTreeMap::new();
    let mut pending = references(schema);
    while let Some(name) = pending.pop() {
        if carried.contains_key(&name) {
            continue;
        }
        let mut definition = document["components"]["schemas"][&name].clone();
        pending.extend(references(&mut definition));
        carried.insert(name, definition);
    }
    carried
}

/// The component names `schema` refers to, its references rewritten: those of `$ref` and
/// those of a discriminator's mapping, the only strings that hold a component's address.
fn references(schema: &mut Value) -> Vec<String> {
    const COMPONENTS: &str = "#/components/schemas/";
    let mut names = Vec::new();
    match schema {
        Value::String(reference) => {
            if let Some(name) = reference.strip_prefix(COMPONENTS) {
                names.push(name.to_owned());
                *reference = format!("#/$defs/{name}");
            }
        }
        Value::Object(map) => {
            for value in map.values_mut() {
                names.extend(references(value));
            }
        }
        Value::Array(items) => {
            for item in items {
                names.extend(references(item));
            }
        }
        _ => {}
    }
    names
}

/// The tool's description: the operation's own summary and description from the document,
/// what it answers, what it needs, and how the agent must use it given its tier.
fn describe(spec: &ops::Operation, summary: &str, operation: &Value) -> String {
    let mut text = summary.to_owned();
    if let Some(description) = operation["description"].as_str() {
        text.push_str("\n\n");
        text.push_str(&description.trim().replace('\n', " "));
    }
    let answers: Vec<String> = operation["responses"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(status, _)| status.starts_with('2'))
        .map(|(status, response)| {
            let description = response["description"].as_str().unwrap_or_default().trim();
            format!("{status}: {description}")
        })
        .collect();
    text.push_str(&format!(
        "\n\nReturns the API's answer ({}), as JSON unless the operation answers text. On a refusal the \
         result is an error holding till's envelope {{\"error\": {{\"code\", \"message\", \"statusCode\", \
         \"fieldErrors\"?}}}}: tell the person the message; do not guess around it.",
        answers.join("; ")
    ));
    if !spec.scopes.is_empty() {
        let scopes: Vec<&str> = spec.scopes.iter().map(|g| g.as_str()).collect();
        text.push_str(&format!("\n\nNeeds one of the scopes: {}.", scopes.join(", ")));
    }
    text.push_str("\n\n");
    text.push_str(match spec.tier {
        Tier::Confirm => CONFIRM_RULES,
        _ => ALLOW_RULES,
    });
    text
}

const ALLOW_RULES: &str = "Changes nothing: call it whenever it helps answer the person, without asking.";

const CONFIRM_RULES: &str = "Changes data, so it takes two calls. Call it first without `confirmation`: \
    nothing changes, and it answers a summary of what would happen and a `confirmation` token. Show the \
    person that summary and ask. Only if they agree, call it again with exactly the same arguments plus \
    `confirmation`. The token works once, for this operation and these arguments, for 5 minutes; a \
    token presented with other arguments is spent and refused. Never confirm on the person's behalf, \
    never reuse a token, and ask again before retrying with other arguments.";

impl ToolSpec {
    /// The request `arguments` make (without `confirmation`), or what is wrong with them, as
    /// the API words a malformed request: each argument named.
    pub fn call(&self, arguments: &Map<String, Value>) -> Result<Call, ApiError> {
        self.request(arguments)
            .map_err(|(argument, problem)| ApiError::Validation(vec![FieldError::new(argument, problem)]))
    }

    fn request(&self, arguments: &Map<String, Value>) -> Result<Call, (String, String)> {
        let known = |name: &str| {
            (name == BODY && self.body.is_some()) || self.parameters.iter().any(|parameter| parameter.name == name)
        };
        if let Some(unknown) = arguments.keys().find(|name| !known(name)) {
            return Err((
                unknown.clone(),
                format!(
                    "is no argument of {}; its arguments are: {}",
                    self.operation.id,
                    self.argument_names().join(", ")
                ),
            ));
        }
        let mut path = String::new();
        let mut rest = self.path.as_str();
        while let Some(open) = rest.find('{') {
            let close = rest[open..].find('}').map_or(rest.len(), |at| open + at);
            let name = &rest[open + 1..close];
            path.push_str(&rest[..open]);
            let value = scalar(name, arguments.get(name))?.ok_or_else(|| (name.to_owned(), IS_REQUIRED.to_owned()))?;
            path.push_str(&percent_encoding::utf8_percent_encode(&value, SEGMENT).to_string());
            rest = rest.get(close + 1..).unwrap_or("");
        }
        path.push_str(rest);
        let mut query = Vec::new();
        let mut headers = Vec::new();
        for parameter in &self.parameters {
            let value = scalar(&parameter.name, arguments.get(&parameter.name))?;
            match (parameter.place, value) {
                (Place::Path, _) => {}
                (Place::Query, Some(value)) => query.push(format!(
                    "{}={}",
                    percent_encoding::utf8_percent_encode(&parameter.name, QUERY),
                    percent_encoding::utf8_percent_encode(&value, QUERY)
                )),
                (Place::Header, Some(value)) => headers.push((parameter.name.clone(), value)),
                (_, None) if parameter.required => {
                    return Err((parameter.name.clone(), IS_REQUIRED.to_owned()));
                }
                (_, None) => {}
            }
        }
        let body = arguments.get(BODY).filter(|body| !body.is_null()).cloned();
        if body.is_none() && self.body == Some(true) {
            return Err((BODY.to_owned(), IS_REQUIRED.to_owned()));
        }
        let target = if query.is_empty() {
            path
        } else {
            format!("{path}?{}", query.join("&"))
        };
        Ok(Call {
            method: self.method.clone(),
            target,
            headers,
            body,
        })
    }

    fn argument_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.parameters.iter().map(|p| p.name.clone()).collect();
        if self.body.is_some() {
            names.push(BODY.to_owned());
        }
        if self.operation.tier == Tier::Confirm {
            names.push(CONFIRMATION.to_owned());
        }
        names
    }
}

/// How a missing argument is named, as the API names a missing field.
const IS_REQUIRED: &str = "is required";

/// A parameter's value as the request writes it: strings as they are, numbers and booleans in
/// JSON's spelling; `null` is left out.
fn scalar(name: &str, value: Option<&Value>) -> Result<Option<String>, (String, String)> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(value @ (Value::Number(_) | Value::Bool(_))) => Ok(Some(value.to_string())),
        Some(_) => Err((name.to_owned(), "must be a string, a number or a boolean".to_owned())),
    }
}

/// What a path segment must escape: everything but the unreserved characters.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');
/// A query value escapes the same.
const QUERY: &percent_encoding::AsciiSet = SEGMENT;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_are_exactly_the_operations_an_agent_may_call() {
        let names: Vec<&str> = catalog().iter().map(|spec| spec.operation.id).collect();
        for operation in ops::ALL {
            assert_eq!(
                names.contains(&operation.id),
                is_offered(operation),
                "{} ({})",
                operation.id,
                operation.tier.as_str()
            );
        }
        for never in [
            "finalizeSale",
            "requestElevationGrant",
            "openRegisterSession",
            "sendMcpMessage",
        ] {
            assert!(find(never).is_none(), "{never} must not be a tool");
        }
    }

    #[test]
    fn argument_names_never_clash_with_the_tools_own() {
        for spec in catalog() {
            for parameter in &spec.parameters {
                assert!(
                    parameter.name != BODY && parameter.name != CONFIRMATION,
                    "{} has a parameter named {}",
                    spec.operation.id,
                    parameter.name
                );
            }
        }
    }

    #[test]
    fn input_schemas_stand_alone() {
        for spec in catalog() {
            let schema = Value::Object((*spec.tool.input_schema).clone());
            let text = schema.to_string();
            assert!(!text.contains("#/components/"), "{}: {text}", spec.operation.id);
            let validator = jsonschema::validator_for(&schema);
            assert!(validator.is_ok(), "{}: {:?}", spec.operation.id, validator.err());
        }
    }

    #[test]
    fn a_confirm_tool_takes_a_confirmation_and_an_allow_tool_does_not() {
        let put = find("putStore").unwrap();
        assert!(put.tool.input_schema["properties"].get(CONFIRMATION).is_some());
        assert_eq!(put.tool.annotations.as_ref().unwrap().read_only_hint, Some(false));
        let get = find("getStore").unwrap();
        assert!(get.tool.input_schema["properties"].get(CONFIRMATION).is_none());
        assert_eq!(get.tool.annotations.as_ref().unwrap().read_only_hint, Some(true));
        assert!(get.tool.description.as_deref().unwrap().contains("Read a store."));
    }

    #[test]
    fn arguments_become_the_request_the_api_reads() {
        let list = find("listCatalogItems").unwrap();
        let arguments = json!({"q": "café crème", "limit": 2});
        let call = list.call(arguments.as_object().unwrap()).unwrap();
        assert_eq!(call.method, axum::http::Method::GET);
        assert_eq!(call.target, "/v1/catalog/skus?q=caf%C3%A9%20cr%C3%A8me&limit=2");
        let put = find("putStore").unwrap();
        let arguments = json!({"storeId": "a/b", "body": {"name": "A"}});
        let call = put.call(arguments.as_object().unwrap()).unwrap();
        assert_eq!(call.target, "/v1/stores/a%2Fb");
        assert_eq!(call.body, Some(json!({"name": "A"})));
        let escape = json!({"storeId": "../elevation-grants", "body": {}});
        let call = put.call(escape.as_object().unwrap()).unwrap();
        assert_eq!(call.target, "/v1/stores/..%2Felevation-grants");
        let replace = find("replacePromotionRule").unwrap();
        let arguments = json!({"id": "r1", "If-Match": "\"3\"", "body": {}});
        let call = replace.call(arguments.as_object().unwrap()).unwrap();
        assert_eq!(call.headers, vec![("If-Match".to_owned(), "\"3\"".to_owned())]);
    }

    #[test]
    fn wrong_arguments_are_named() {
        let put = find("putStore").unwrap();
        let named = |arguments: Value| match put.call(arguments.as_object().unwrap()) {
            Err(ApiError::Validation(errors)) => (errors[0].field.clone(), errors[0].message.clone()),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            named(json!({"body": {}})),
            ("storeId".to_owned(), "is required".to_owned())
        );
        let (field, message) = named(json!({"storeId": "s", "bdy": {}}));
        assert_eq!(field, "bdy");
        assert!(message.contains("storeId, body, confirmation"), "{message}");
        assert_eq!(named(json!({"storeId": {"x": 1}, "body": {}})).0, "storeId");
    }

    #[test]
    fn write_only_fields_are_known_as_secrets() {
        let staff = find("putStaffMember").unwrap();
        assert!(staff.secrets.contains("pin"), "{:?}", staff.secrets);
        assert!(find("putStore").unwrap().secrets.is_empty());
    }
}
