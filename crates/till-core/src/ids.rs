//! Identifiers parsed once at the edge, so the core never sees an empty or malformed one.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Longest identifier or free-text name accepted, in characters. The interface sets only a
/// minimum; a bound keeps rows, receipts and fiscal payloads a sane size.
pub const MAX_TEXT_CHARS: usize = 255;

/// The identifier rules as a regular expression for the OpenAPI document: no control character
/// (Unicode category Cc). ECMA-262, Python and Rust read the `\u` escapes alike; the length
/// bounds are `minLength` and `maxLength` beside it.
pub const TEXT_PATTERN: &str = "^[^\\u0000-\\u001F\\u007F-\\u009F]*$";

/// A catalog article's id as a regular expression, for the document.
pub const SKU_PATTERN: &str = "^[0-9a-f]{64}$";

/// Why a piece of text was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    #[error("must not be empty")]
    Empty,
    #[error("must be at most {MAX_TEXT_CHARS} characters")]
    TooLong,
    #[error("must not contain control characters")]
    ControlCharacter,
    #[error("must be 64 lowercase hexadecimal characters")]
    NotSha256Hex,
}

/// Checks the shared rules for identifiers and names: 1 to `MAX_TEXT_CHARS` characters, no
/// control characters (they would corrupt printed receipts and signed fiscal strings).
pub fn check_text(value: &str) -> Result<(), TextError> {
    if value.is_empty() {
        return Err(TextError::Empty);
    }
    if value.chars().count() > MAX_TEXT_CHARS {
        return Err(TextError::TooLong);
    }
    if value.chars().any(char::is_control) {
        return Err(TextError::ControlCharacter);
    }
    Ok(())
}

/// Longest id of a new store, register or staff member, in characters: it is written into
/// addresses, receipts and fiscal records.
pub const MAX_NEW_ID_CHARS: usize = 64;

/// Why text cannot name a new store, register or staff member.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NewIdError {
    #[error("must not be empty")]
    Empty,
    #[error("must be at most {MAX_NEW_ID_CHARS} characters")]
    TooLong,
    /// A character that means something in an address: `/`, `?`, `#` or `%`.
    #[error("must not contain {0}")]
    Reserved(char),
    /// A step out of a path: `..` anywhere, or `.` alone.
    #[error("must not contain .. nor be .")]
    DotDot,
    #[error("must not contain spaces or control characters")]
    Blank,
}

/// Checks the id of a store, register or staff member made now: 1 to `MAX_NEW_ID_CHARS`
/// characters, none of them a space, a control character or one that steers an address (`/`,
/// `?`, `#`, `%`), no `..`, and not `.` alone. Such an id reads the same in a path, a query or a page. Ids
/// made before the rule stay valid (they pass [`check_text`]).
pub fn check_new_id(value: &str) -> Result<(), NewIdError> {
    if value.is_empty() {
        return Err(NewIdError::Empty);
    }
    if value.chars().count() > MAX_NEW_ID_CHARS {
        return Err(NewIdError::TooLong);
    }
    if let Some(reserved) = value.chars().find(|c| matches!(c, '/' | '?' | '#' | '%')) {
        return Err(NewIdError::Reserved(reserved));
    }
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(NewIdError::Blank);
    }
    if value.contains("..") || value == "." {
        return Err(NewIdError::DotDot);
    }
    Ok(())
}

macro_rules! text_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl TryFrom<String> for $name {
            type Error = TextError;

            fn try_from(value: String) -> Result<Self, TextError> {
                check_text(&value)?;
                Ok(Self(value))
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl $name {
            pub fn parse(value: &str) -> Result<Self, TextError> {
                check_text(value)?;
                Ok(Self(value.to_owned()))
            }

            /// For values read back from storage, which were parsed when written.
            pub fn from_trusted(value: String) -> Self {
                Self(value)
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

text_id!(
    /// A store of the network (`PUT /v1/stores/{storeId}`).
    StoreId
);
text_id!(
    /// A till. Keys the per-register fiscal chains.
    RegisterId
);
text_id!(
    /// A staff member or token subject: the person or system acting.
    Subject
);
text_id!(
    /// A loyalty customer.
    CustomerId
);
text_id!(
    /// A coupon code as the customer presents it; matched exactly.
    CouponCode
);
text_id!(
    /// A register session (`ses_...`).
    SessionId
);
text_id!(
    /// The idempotency key of a sale or return, unique for ever.
    TransactionId
);
text_id!(
    /// A promotion rule.
    PromotionId
);
text_id!(
    /// The idempotency key of a cash movement, chosen by the till.
    MovementId
);
text_id!(
    /// The idempotency key of a stock count, chosen by the back office.
    CountId
);
text_id!(
    /// The idempotency key of a transfer of goods between two stores.
    TransferId
);
text_id!(
    /// The idempotency key of a receipt's print, chosen by the till.
    PrintId
);
text_id!(
    /// The idempotency key of a receipt sent by e-mail: chosen by the till, or named by the
    /// server when the till sends none.
    SendId
);
text_id!(
    /// A card payment attempt, chosen by the till before it asks the terminal: the attempt's
    /// idempotency key, and what a `card` tender's `reference` names.
    PaymentId
);
text_id!(
    /// An invoice, chosen by the back office: the idempotency key of its issue.
    InvoiceId
);
text_id!(
    /// What a tender names beside its method: a gift card's code, a credit note's number, an
    /// outside system's voucher.
    TenderReference
);

/// A catalog article: 64 lowercase hexadecimal characters (a SHA-256 in the till's world).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SkuId(String);

impl TryFrom<String> for SkuId {
    type Error = TextError;

    fn try_from(value: String) -> Result<Self, TextError> {
        SkuId::parse(&value)
    }
}

impl From<SkuId> for String {
    fn from(id: SkuId) -> String {
        id.0
    }
}

impl SkuId {
    /// The reserved id reported for self-priced (custom) lines, which have no catalog article.
    pub const CUSTOM: &'static str = "0000000000000000000000000000000000000000000000000000000000000000";

    pub fn parse(value: &str) -> Result<SkuId, TextError> {
        let ok = value.len() == 64 && value.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if ok {
            Ok(SkuId(value.to_owned()))
        } else {
            Err(TextError::NotSha256Hex)
        }
    }

    pub fn custom() -> SkuId {
        SkuId(Self::CUSTOM.to_owned())
    }

    pub fn from_trusted(value: String) -> SkuId {
        SkuId(value)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SkuId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_ids_refuse_empty_long_and_control_text() {
        assert_eq!(StoreId::parse(""), Err(TextError::Empty));
        assert_eq!(StoreId::parse(&"x".repeat(256)), Err(TextError::TooLong));
        assert_eq!(StoreId::parse("a\nb"), Err(TextError::ControlCharacter));
        assert_eq!(StoreId::parse("paris-01").unwrap().as_str(), "paris-01");
        assert!(StoreId::parse(&"é".repeat(255)).is_ok());
    }

    #[test]
    fn the_documented_pattern_names_the_control_characters_refused() {
        assert_eq!(TEXT_PATTERN, r"^[^\u0000-\u001F\u007F-\u009F]*$");
        let refused: Vec<char> = (0..=0x10FFFF_u32)
            .filter_map(char::from_u32)
            .filter(|c| check_text(&c.to_string()) == Err(TextError::ControlCharacter))
            .collect();
        let documented: Vec<char> = ('\u{0}'..='\u{1F}').chain('\u{7F}'..='\u{9F}').collect();
        assert_eq!(refused, documented);
    }

    #[test]
    fn new_ids_refuse_what_steers_an_address() {
        for good in [
            "s1",
            "paris-marais",
            "till_1",
            "camille",
            "a.b",
            "auth0|abc",
            "caisse·1",
            "x@y.fr",
        ] {
            assert_eq!(check_new_id(good), Ok(()), "{good}");
        }
        assert_eq!(check_new_id(&"x".repeat(64)), Ok(()));
        assert_eq!(check_new_id(&"x".repeat(65)), Err(NewIdError::TooLong));
        assert_eq!(check_new_id(""), Err(NewIdError::Empty));
        for reserved in ['/', '?', '#', '%'] {
            assert_eq!(
                check_new_id(&format!("r{reserved}1")),
                Err(NewIdError::Reserved(reserved))
            );
        }
        assert_eq!(
            check_new_id("r/../../promotions/X/deactivate#"),
            Err(NewIdError::Reserved('/'))
        );
        assert_eq!(check_new_id("a..b"), Err(NewIdError::DotDot));
        assert_eq!(check_new_id("."), Err(NewIdError::DotDot));
        for blank in ["a b", "a\tb", "a\u{a0}b", "a\u{7f}b", "a\u{2028}b"] {
            assert_eq!(check_new_id(blank), Err(NewIdError::Blank), "{blank:?}");
        }
    }

    #[test]
    fn sku_ids_are_64_lowercase_hex() {
        assert!(SkuId::parse(&"a1".repeat(32)).is_ok());
        assert!(SkuId::parse(&"A1".repeat(32)).is_err());
        assert!(SkuId::parse(&"a".repeat(63)).is_err());
        assert!(SkuId::parse(&"g".repeat(64)).is_err());
    }
}
