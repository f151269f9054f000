//! Canonical JSON: object keys sorted, no insignificant whitespace. The same value always
//! gives the same bytes, whatever order its producer wrote keys in, which is what request
//! fingerprints and committed documents need.

use serde::Serialize;
use serde_json::Value;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter};
use sha2::{Digest, Sha256};
use std::io::{self, Write as _};

// serde_json keeps an object's keys in a `BTreeMap` (its `preserve_order` feature is off), so
// its compact output is already canonical: keys in byte order, no whitespace, the one escaping
// of strings and the one spelling of numbers. The tests below fail if that ever changes.

/// Compact canonical text of `value`.
pub fn to_canonical_string(value: &Value) -> String {
    value.to_string()
}

/// Compact JSON text of `value`, written into a buffer of `capacity` bytes to start with:
/// serde_json's own starts small and is copied each time it doubles, several times on the way
/// to a sale's answer.
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

/// Writes the canonical text of `value` into `writer` without building a [`Value`] of it, so
/// that a large document (a fiscal archive of a busy day) takes about its own size in memory, not
/// the many times more a tree of it takes. Each object's members are held until the object
/// ends and then written in key order; the text is the same as [`to_canonical_string`] of the
/// value's `Value`, whatever order the value's fields are declared in.
pub fn write_canonical<W: io::Write, T: Serialize + ?Sized>(writer: W, value: &T) -> serde_json::Result<()> {
    value.serialize(&mut serde_json::Serializer::with_formatter(writer, Sorting::default()))
}

/// A compact formatter that gathers each open object's members and sorts them at its end.
#[derive(Default)]
struct Sorting {
    open: Vec<Vec<Member>>,
}

/// One member of an open object: its key, unescaped, to sort by, and its text `"key":value`.
struct Member {
    key: Vec<u8>,
    text: Vec<u8>,
}

impl Sorting {
    /// Where text goes: the member being written, or `writer` outside any object.
    fn sink<'a, W: io::Write + ?Sized>(&'a mut self, writer: &'a mut W) -> Sink<'a, W> {
        match self.open.last_mut().and_then(|members| members.last_mut()) {
            Some(member) => Sink::Member(&mut member.text),
            None => Sink::Writer(writer),
        }
    }
}

enum Sink<'a, W: ?Sized> {
    Member(&'a mut Vec<u8>),
    Writer(&'a mut W),
}

impl<W: io::Write + ?Sized> io::Write for Sink<'_, W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Member(text) => text.write(bytes),
            Sink::Writer(writer) => writer.write(bytes),
        }
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Sink::Member(text) => {
                text.extend_from_slice(bytes);
                Ok(())
            }
            Sink::Writer(writer) => writer.write_all(bytes),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Member(_) => Ok(()),
            Sink::Writer(writer) => writer.flush(),
        }
    }
}

/// Formatter methods that write compact text into the current sink.
macro_rules! compact_into_sink {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<W: io::Write + ?Sized>(&mut self, writer: &mut W $(, $arg: $ty)*) -> io::Result<()> {
            CompactFormatter.$method(&mut self.sink(writer) $(, $arg)*)
        }
    )*};
}

impl Formatter for Sorting {
    compact_into_sink! {
        write_null();
        write_bool(value: bool);
        write_i8(value: i8);
        write_i16(value: i16);
        write_i32(value: i32);
        write_i64(value: i64);
        write_i128(value: i128);
        write_u8(value: u8);
        write_u16(value: u16);
        write_u32(value: u32);
        write_u64(value: u64);
        write_u128(value: u128);
        write_f32(value: f32);
        write_f64(value: f64);
        write_number_str(value: &str);
        begin_string();
        end_string();
        write_string_fragment(fragment: &str);
        write_char_escape(escape: CharEscape);
        write_byte_array(value: &[u8]);
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        write_raw_fragment(fragment: &str);
    }

    fn begin_object<W: io::Write + ?Sized>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.open.push(Vec::new());
        Ok(())
    }

    fn begin_object_key<W: io::Write + ?Sized>(&mut self, _writer: &mut W, _first: bool) -> io::Result<()> {
        if let Some(members) = self.open.last_mut() {
            members.push(Member {
                key: Vec::new(),
                text: Vec::new(),
            });
        }
        Ok(())
    }

    fn end_object_key<W: io::Write + ?Sized>(&mut self, _writer: &mut W) -> io::Result<()> {
        let Some(member) = self.open.last_mut().and_then(|members| members.last_mut()) else {
            return Ok(());
        };
        // The text so far is the key as a JSON string; keys are ordered by what it spells.
        let quoted = member.text.as_slice();
        member.key = if quoted.contains(&b'\\') {
            serde_json::from_slice::<String>(quoted)
                .map_err(io::Error::other)?
                .into_bytes()
        } else {
            quoted
                .get(1..quoted.len().saturating_sub(1))
                .unwrap_or_default()
                .to_vec()
        };
        Ok(())
    }

    fn begin_object_value<W: io::Write + ?Sized>(&mut self, writer: &mut W) -> io::Result<()> {
        CompactFormatter.begin_object_value(&mut self.sink(writer))
    }

    fn end_object_value<W: io::Write + ?Sized>(&mut self, _writer: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn end_object<W: io::Write + ?Sized>(&mut self, writer: &mut W) -> io::Result<()> {
        let mut members = self.open.pop().unwrap_or_default();
        members.sort_by(|a, b| a.key.cmp(&b.key));
        let mut out = self.sink(writer);
        out.write_all(b"{")?;
        for (n, member) in members.iter().enumerate() {
            if n > 0 {
                out.write_all(b",")?;
            }
            out.write_all(&member.text)?;
        }
        out.write_all(b"}")
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
    use proptest::prelude::*;
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

    fn streamed<T: Serialize + ?Sized>(value: &T) -> String {
        let mut text = Vec::new();
        write_canonical(&mut text, value).unwrap();
        String::from_utf8(text).unwrap()
    }

    #[derive(Serialize)]
    struct Unsorted {
        zeta: Vec<Inner>,
        #[serde(rename = "Alpha")]
        alpha: Option<i64>,
        #[serde(flatten)]
        rest: Inner,
        map: std::collections::HashMap<String, u8>,
        empty: std::collections::BTreeMap<String, u8>,
    }

    #[derive(Clone, Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Inner {
        seq: i64,
        last_word: String,
        amount: f64,
    }

    #[test]
    fn streamed_text_is_the_canonical_text_of_fields_declared_in_any_order() {
        let inner = Inner {
            seq: -3,
            last_word: "é\n\u{1}\"".into(),
            amount: 1.5,
        };
        let value = Unsorted {
            zeta: vec![inner.clone(), inner.clone()],
            alpha: None,
            rest: inner,
            // Ordered by what the keys spell ('"' < '#' < 'a'), not by their escaped text.
            map: [("a#", 1), ("a\"", 2), ("a\n", 3), ("", 4), ("é", 5)]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
            empty: Default::default(),
        };
        let text = streamed(&value);
        assert_eq!(text, to_canonical_string(&serde_json::to_value(&value).unwrap()));
        assert!(
            text.starts_with(r#"{"Alpha":null,"amount":1.5,"empty":{},"lastWord":"#),
            "{text}"
        );
        assert!(text.contains(r#""map":{"":4,"a\n":3,"a\"":2,"a#":1,"é":5}"#), "{text}");
    }

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            ".*".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                prop::collection::vec(("[a-c\\\"\\\\\\n é]{0,3}", inner), 0..8)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_value_streams_to_its_canonical_text(value in json()) {
            prop_assert_eq!(streamed(&value), to_canonical_string(&value));
        }
    }
}
