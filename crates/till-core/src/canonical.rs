//! Canonical JSON: object keys sorted, no insignificant whitespace. The same value always
//! gives the same bytes, whatever order its producer wrote keys in, which is what request
//! fingerprints and committed documents need.

use serde_json::Value;
use std::fmt::Write;

/// Compact canonical text of `value`.
pub fn to_canonical_string(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// SHA-256 of the canonical text of `value`, in lowercase hex: what idempotency compares.
pub fn fingerprint(value: &Value) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(to_canonical_string(value).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// `value` with every object's keys in sorted order, for pretty printing.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&map[k]))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, &map[key]);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::String(text) => write_string(out, text),
        // Numbers, booleans and null print the same in every serializer.
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

fn write_string(out: &mut String, text: &str) {
    out.push_str(&Value::String(text.to_owned()).to_string());
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_and_whitespace_do_not_matter() {
        let a: Value = serde_json::from_str(r#"{ "b": 1, "a": {"y": [1, 2], "x": "é\n"} }"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":{"x":"é\n","y":[1,2]},"b":1}"#).unwrap();
        assert_eq!(to_canonical_string(&a), to_canonical_string(&b));
        assert_eq!(to_canonical_string(&a), r#"{"a":{"x":"é\n","y":[1,2]},"b":1}"#);
        assert_ne!(to_canonical_string(&json!([1, 2])), to_canonical_string(&json!([2, 1])));
    }
}
