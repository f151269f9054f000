//! Keyset pagination, the same for every list: `limit` (1 to 500, default 50) and `cursor` read
//! from the query, each page answered as `{items, nextCursor}`.
//!
//! A page reads one row more than it shows: when that row exists, `nextCursor` holds the key
//! of the last item shown; otherwise it is null, so a list whose length is a multiple of the
//! limit ends on a full page, with no empty page after it. A cursor is that key with a check
//! binding it to its list and to the filters it was read under, in base64url: opaque to
//! clients, and a 400 on `cursor` when it was cut or edited, or is carried to another list or
//! to other filters. The check is a digest, not a signature: someone who forged a cursor would
//! only choose where a page of a list they may read anyway starts.

use crate::extract::Params;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::fmt::Display;
use till_app::storage::{Newest, Window};
use till_core::ids::{CouponCode, InvoiceId, PaymentId, SessionId, SkuId, StoreId, Subject, TransactionId};
use till_core::instant::to_micros;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

/// Items a page holds when the query names no `limit`.
pub const DEFAULT_LIMIT: i64 = 50;
/// Most items a page holds.
pub const MAX_LIMIT: i64 = 500;
/// Longest cursor read: the key of an id of 255 characters of four bytes each fits.
pub const MAX_CURSOR_CHARS: usize = 2048;
/// Bytes of the digest that ends every cursor.
const CHECK_BYTES: usize = 12;
/// Names the cursor layout in its digest: a cursor of another layout fails its check.
const LAYOUT: &[u8] = b"till list cursor 1";

const CURSOR_SHAPE: &str = "is not a cursor this server handed out";
const CURSOR_ELSEWHERE: &str = "was not handed out by this list with these filters; start again from the first page";

/// What a cursor is valid for: a list, and the filters it was read under.
#[derive(Clone, Debug)]
pub struct Scope(String);

impl Scope {
    pub fn new(list: &str) -> Scope {
        Scope(list.to_owned())
    }

    /// The filter `name`, when the query gives it. No value holds a line break (parameters
    /// are texts without control characters), so every scope reads one way only.
    pub fn filter<V: Display>(mut self, name: &str, value: Option<V>) -> Scope {
        if let Some(value) = value {
            self.0.push_str(&format!("\n{name}={value}"));
        }
        self
    }

    fn check(&self, key: &[u8]) -> [u8; CHECK_BYTES] {
        let digest = Sha256::new()
            .chain_update(LAYOUT)
            .chain_update([0])
            .chain_update(self.0.as_bytes())
            .chain_update([0])
            .chain_update(key)
            .finalize();
        let mut check = [0; CHECK_BYTES];
        check.copy_from_slice(&digest[..CHECK_BYTES]);
        check
    }
}

/// A list's key as a cursor carries it.
pub trait CursorKey: Sized {
    fn write(&self, out: &mut Vec<u8>);
    /// `None` for bytes no key writes; never panics.
    fn read(bytes: &[u8]) -> Option<Self>;
}

macro_rules! id_keys {
    ($($id:ty),*) => {
        $(impl CursorKey for $id {
            fn write(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(self.as_str().as_bytes());
            }

            fn read(bytes: &[u8]) -> Option<Self> {
                <$id>::parse(std::str::from_utf8(bytes).ok()?).ok()
            }
        })*
    };
}

id_keys!(
    StoreId,
    SkuId,
    Subject,
    CouponCode,
    SessionId,
    TransactionId,
    PaymentId,
    InvoiceId
);

/// A number that orders a list (a stock movement's id): eight bytes big-endian.
impl CursorKey for i64 {
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_be_bytes());
    }

    fn read(bytes: &[u8]) -> Option<Self> {
        Some(i64::from_be_bytes(bytes.try_into().ok()?))
    }
}

/// The instant in microseconds, eight bytes big-endian, then the id.
impl<Id: CursorKey> CursorKey for Newest<Id> {
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&to_micros(self.at).to_be_bytes());
        self.id.write(out);
    }

    fn read(bytes: &[u8]) -> Option<Self> {
        let (micros, id) = bytes.split_first_chunk::<8>()?;
        Some(Newest {
            at: jiff::Timestamp::from_microsecond(i64::from_be_bytes(*micros)).ok()?,
            id: Id::read(id)?,
        })
    }
}

fn seal(scope: &Scope, key: &impl CursorKey) -> String {
    let mut bytes = Vec::new();
    key.write(&mut bytes);
    let check = scope.check(&bytes);
    bytes.extend_from_slice(&check);
    URL_SAFE_NO_PAD.encode(bytes)
}

fn open<K: CursorKey>(scope: &Scope, cursor: &[u8]) -> Option<K> {
    let split = cursor.len().checked_sub(CHECK_BYTES)?;
    let (key, check) = cursor.split_at(split);
    (scope.check(key) == check).then(|| K::read(key)).flatten()
}

/// `limit` and `cursor` as the query gives them, as every list documents them. The cursor is
/// checked once the list's filters are read, by [`PageQuery::paging`].
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Most items in the page: 1 to 500, default 50.
    #[param(value_type = Option<i64>, minimum = 1, maximum = 500, default = 50)]
    limit: usize,
    /// The `nextCursor` of the previous page, sent with the same filters; absent for the
    /// first page.
    #[param(value_type = Option<Cursor>)]
    cursor: Option<Vec<u8>>,
}

impl PageQuery {
    pub fn read(params: &Params) -> Option<PageQuery> {
        let limit = params.integer("limit", 1, MAX_LIMIT);
        let cursor = params.optional_checked("cursor", cursor_text, |text| {
            URL_SAFE_NO_PAD.decode(text).map_err(|_| CURSOR_SHAPE)
        });
        Some(PageQuery {
            limit: usize::try_from(limit?.unwrap_or(DEFAULT_LIMIT)).unwrap_or(1),
            cursor: cursor?,
        })
    }

    /// The paging of a list read under `scope`: from its first page, or after the cursor's
    /// key when the cursor was handed out under the same scope.
    pub fn paging<K: CursorKey>(self, params: &Params, scope: Scope) -> Option<Paging<K>> {
        let after = match &self.cursor {
            Some(cursor) => Some(open(&scope, cursor).or_else(|| params.fail("cursor", CURSOR_ELSEWHERE))?),
            None => None,
        };
        Some(Paging {
            limit: self.limit,
            after,
            scope,
        })
    }
}

fn cursor_text(text: &str) -> Result<(), &'static str> {
    let alphabet = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    let fits = !text.is_empty() && text.len() <= MAX_CURSOR_CHARS && text.bytes().all(alphabet);
    fits.then_some(()).ok_or(CURSOR_SHAPE)
}

/// Which page of a list to read, and how to answer it.
pub struct Paging<K> {
    limit: usize,
    after: Option<K>,
    scope: Scope,
}

impl<K: CursorKey + Clone> Paging<K> {
    /// The rows to read: one more than the page shows, which tells whether another follows.
    pub fn window(&self) -> Window<K> {
        Window {
            after: self.after.clone(),
            take: self.limit + 1,
        }
    }

    /// The page of `rows` read through [`Paging::window`], each shown as `view` makes it.
    pub fn page<R, T>(&self, mut rows: Vec<R>, key: impl Fn(&R) -> K, view: impl FnMut(R) -> T) -> Page<T> {
        let more = rows.len() > self.limit;
        rows.truncate(self.limit);
        let next_cursor = rows.last().filter(|_| more).map(|last| seal(&self.scope, &key(last)));
        Page {
            items: rows.into_iter().map(view).collect(),
            next_cursor,
        }
    }
}

/// One page of a list. A route names its document shape by an alias (`type StorePage =
/// Page<StoreView>`), so that the document holds one `StoreViewPage` whose items refer to
/// `StoreView`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Page<T> {
    items: Vec<T>,
    next_cursor: Option<String>,
}

impl<T> Page<T> {
    /// The items, and the cursor of the next page (none on the last).
    pub fn into_parts(self) -> (Vec<T>, Option<String>) {
        (self.items, self.next_cursor)
    }
}

impl<T: ToSchema> PartialSchema for Page<T> {
    fn schema() -> RefOr<Schema> {
        let next = OneOfBuilder::new()
            .item(Ref::from_schema_name(Cursor::name()))
            .item(ObjectBuilder::new().schema_type(Type::Null))
            .description(Some(
                "What to send as `cursor`, with the same filters, for the next page; null on the \
                 last page.",
            ));
        ObjectBuilder::new()
            .description(Some("One page of a list, in the list's order."))
            .property("items", ArrayBuilder::new().items(Ref::from_schema_name(T::name())))
            .required("items")
            .property("nextCursor", next)
            .required("nextCursor")
            .into()
    }
}

impl<T: ToSchema> ToSchema for Page<T> {
    fn name() -> Cow<'static, str> {
        Cow::Owned(format!("{}Page", T::name()))
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((T::name().into_owned(), T::schema()));
        T::schemas(schemas);
        schemas.push((Cursor::name().into_owned(), Cursor::schema()));
    }
}

/// A page cursor, as the document states what the server reads.
pub struct Cursor;

impl PartialSchema for Cursor {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(MAX_CURSOR_CHARS))
            .pattern(Some("^[A-Za-z0-9_-]+$"))
            .description(Some(
                "An opaque page cursor: the `nextCursor` of the previous page, sent with the same \
                 filters.",
            ))
            .into()
    }
}

impl ToSchema for Cursor {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Cursor")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Timestamp;

    fn newest(micros: i64, id: &str) -> Newest<TransactionId> {
        Newest {
            at: Timestamp::from_microsecond(micros).unwrap(),
            id: TransactionId::parse(id).unwrap(),
        }
    }

    fn decoded(cursor: &str) -> Vec<u8> {
        URL_SAFE_NO_PAD.decode(cursor).unwrap()
    }

    #[test]
    fn a_cursor_opens_only_under_the_scope_it_was_sealed_in() {
        let scope = || Scope::new("sales").filter("storeId", Some("s1"));
        let key = newest(1_790_000_000_123_456, "t-é-42");
        let cursor = seal(&scope(), &key);
        assert!(cursor_text(&cursor).is_ok(), "{cursor}");
        assert_eq!(open::<Newest<TransactionId>>(&scope(), &decoded(&cursor)), Some(key));
        for other in [
            Scope::new("sales"),
            Scope::new("sales").filter("storeId", Some("s2")),
            Scope::new("register-sessions").filter("storeId", Some("s1")),
            scope().filter("type", Some("sale")),
        ] {
            assert_eq!(
                open::<Newest<TransactionId>>(&other, &decoded(&cursor)),
                None,
                "{other:?}"
            );
        }
        assert_eq!(
            open::<Newest<TransactionId>>(
                &Scope::new("x").filter::<&str>("a", None),
                &decoded(&seal(&Scope::new("x"), &newest(1, "a")))
            ),
            Some(newest(1, "a")),
            "an absent filter is no filter"
        );
    }

    #[test]
    fn every_edit_of_a_cursor_is_refused() {
        let scope = Scope::new("stores");
        let cursor = decoded(&seal(&scope, &StoreId::parse("paris-01").unwrap()));
        for index in 0..cursor.len() {
            for bit in 0..8 {
                let mut edited = cursor.clone();
                edited[index] ^= 1 << bit;
                assert_eq!(open::<StoreId>(&scope, &edited), None, "byte {index} bit {bit}");
            }
        }
        for cut in 0..cursor.len() {
            assert_eq!(open::<StoreId>(&scope, &cursor[..cut]), None, "cut at {cut}");
        }
    }

    #[test]
    fn any_bytes_at_all_are_read_without_panicking() {
        let scope = Scope::new("sales");
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for length in 0..200 {
            let bytes: Vec<u8> = (0..length)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            assert_eq!(open::<Newest<TransactionId>>(&scope, &bytes), None);
            // Read as a key alone, the same bytes may make one or none, never a panic.
            let _ = Newest::<SessionId>::read(&bytes);
        }
        // A key whose own bytes are wrong (an instant out of range, an id not UTF-8, an empty
        // id) is refused even under a valid check.
        for key in [
            [i64::MAX.to_be_bytes().as_slice(), b"t1"].concat(),
            [0_i64.to_be_bytes().as_slice(), &[0xff, 0xfe]].concat(),
            0_i64.to_be_bytes().to_vec(),
        ] {
            let mut cursor = key.clone();
            cursor.extend_from_slice(&scope.check(&key));
            assert_eq!(open::<Newest<TransactionId>>(&scope, &cursor), None, "{key:?}");
        }
    }

    #[test]
    fn a_cursor_is_text_of_the_base64url_alphabet_within_its_length() {
        let longest = seal(
            &Scope::new("sales"),
            &newest(253_402_207_199_999_999, &"\u{10FFFF}".repeat(255)),
        );
        assert!(longest.len() <= MAX_CURSOR_CHARS, "{}", longest.len());
        assert!(cursor_text(&longest).is_ok());
        for bad in ["", "abc=", "a b", "a+b", "a/b", &"A".repeat(MAX_CURSOR_CHARS + 1)] {
            assert!(cursor_text(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_page_reads_one_row_more_than_it_shows() {
        let paging = Paging {
            limit: 2,
            after: None,
            scope: Scope::new("stores"),
        };
        assert_eq!(paging.window().take, 3);
        let id = |text: &str| StoreId::parse(text).unwrap();
        let full = paging.page(vec!["a", "b", "c"], |row| id(row), str::to_owned);
        assert_eq!(full.items, ["a", "b"]);
        let next = full.next_cursor.expect("another page follows");
        assert_eq!(open::<StoreId>(&paging.scope, &decoded(&next)), Some(id("b")));
        let last = paging.page(vec!["c", "d"], |row| id(row), str::to_owned);
        assert_eq!(
            (last.items.len(), last.next_cursor),
            (2, None),
            "exactly full: the last page"
        );
        let empty = paging.page(Vec::<&str>::new(), |row| id(row), str::to_owned);
        assert_eq!((empty.items.len(), empty.next_cursor), (0, None));
    }
}
