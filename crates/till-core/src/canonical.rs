//! Canonical JSON: object keys sorted, no insignificant whitespace. The same value always
//! gives the same bytes, whatever order its producer wrote keys in, which is what request
//! fingerprints and committed documents need.

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

// serde_json keeps an object's keys in a `BTreeMap` (its `preserve_order` feature is off), so
// its compact output is already canonical: keys in byte order, no whitespace, the one escaping
// of strings and the one spelling of numbers. The tests below fail if that ever changes.

/// Compact canonical text of `value`.
pub fn to_canonical_string(value: &Value) -> String {
    value.to_string()
}

/// Compact JSON text of `value`, written into a buffer of `capacity` bytes to start with:
/// serde_json's own starts at 128 bytes and is copied each time it doubles, five times on the
/// way to a sale's answer of about 2 KB.
pub fn to_compact_string<T: Serialize + ?Sized>(value: &T, capacity: usize) -> serde_json::Result<String> {
    let mut text = Vec::with_capacity(capacity);
    serde_json::to_writer(&mut text, value)?;
    String::from_utf8(text).map_err(serde::ser::Error::custom)
}

/// SHA-256 of the compact JSON text of `value`; the text streams into the hash, never whole.
/// It is the canonical text when `value` writes its keys in byte order: a `Value` does, and
/// so does a struct that declares its fields in that order and holds no map but `Value`'s.
pub fn sha256<T: Serialize + ?Sized>(value: &T) -> [u8; 32] {
    let mut hasher = HashWriter(Sha256::new());
    // Writing into a hash cannot fail, and values with string keys always serialize.
    let _ = serde_json::to_writer(&mut hasher, value);
    hasher.0.finalize().into()
}

/// [`sha256`] of `value`, in lowercase hex: what idempotency compares.
pub fn fingerprint<T: Serialize + ?Sized>(value: &T) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(64);
    for byte in sha256(value) {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    out
}

struct HashWriter(Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
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

    #[test]
    fn the_fingerprint_is_the_sha256_of_the_canonical_text() {
        // Keys arrive unsorted; byte order puts "B" before "a" and "a" before "aa". The
        // expected digest was computed outside Rust, over the text in the comment.
        let value: Value = serde_json::from_str(r#"{"aa": 1.5, "B": [true, null, -3], "a": "\u0001\""}"#).unwrap();
        // {"B":[true,null,-3],"a":"\u0001\"","aa":1.5}
        assert_eq!(
            to_canonical_string(&value),
            r#"{"B":[true,null,-3],"a":"\u0001\"","aa":1.5}"#
        );
        assert_eq!(
            fingerprint(&value),
            "911be7a0170a9d942e5ed887830258c20a353002baa05ee3cecf008b406f10e0"
        );
    }
}
