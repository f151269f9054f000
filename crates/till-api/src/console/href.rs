//! The addresses the console writes into its pages. maud escapes what it interpolates for HTML
//! but knows nothing of addresses: a stored id written into a path as it is could leave its
//! segment (`r/../../promotions/X/deactivate#` turns a register's form into another's) or end
//! the path early (`?`, `#`). Every id or value a page puts into an address goes through
//! [`Href`], percent-encoded, one path segment or one query value at a time.
//!
//! Browsers still read a whole segment of `.` or `..`, encoded or not, as a step in the path:
//! ids made now are never one (ids of stores, registers and staff refuse `..` and a lone `.`),
//! and such a step climbs out of its own segment only, to an address that is no page.

use maud::Render;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// What an encoded segment or value keeps as it is: letters, digits and the unreserved marks.
/// Everything else, `/`, `?`, `#`, `&`, `=`, `%` and spaces first, is percent-encoded.
const ENCODED: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// An address of the console, built from a fixed path and encoded parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Href {
    text: String,
    /// Whether a query has begun.
    queried: bool,
}

impl Href {
    /// A fixed address of the console, such as `/console/sales`.
    pub fn to(path: &'static str) -> Href {
        Href {
            text: path.to_owned(),
            queried: false,
        }
    }

    /// The address with `value` as one more path segment, whatever it holds.
    pub fn segment(mut self, value: &str) -> Href {
        debug_assert!(!self.queried, "a segment after the query");
        self.text.push('/');
        self.text.extend(utf8_percent_encode(value, ENCODED));
        self
    }

    /// The address with one more fixed segment, such as `verify`.
    pub fn then(mut self, fixed: &'static str) -> Href {
        debug_assert!(!self.queried, "a segment after the query");
        self.text.push('/');
        self.text.push_str(fixed);
        self
    }

    /// The address with `name=value` in its query, the value encoded.
    pub fn query(mut self, name: &'static str, value: &str) -> Href {
        self.text.push(if self.queried { '&' } else { '?' });
        self.queried = true;
        self.text.push_str(name);
        self.text.push('=');
        self.text.extend(utf8_percent_encode(value, ENCODED));
        self
    }

    /// [`Href::query`] when there is a value, else the address as it is.
    pub fn query_some(self, name: &'static str, value: Option<&str>) -> Href {
        match value {
            Some(value) => self.query(name, value),
            None => self,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl Render for Href {
    /// Written into an attribute as text, so that maud escapes its `&`.
    fn render_to(&self, buffer: &mut String) {
        self.text.as_str().render_to(buffer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_stays_within_its_segment() {
        let href = Href::to("/console/registers")
            .segment("r/../../promotions/X/deactivate#")
            .then("verify");
        assert_eq!(
            href.as_str(),
            "/console/registers/r%2F..%2F..%2Fpromotions%2FX%2Fdeactivate%23/verify"
        );
        let href = Href::to("/console/sales").segment("t 1?x=%");
        assert_eq!(href.as_str(), "/console/sales/t%201%3Fx%3D%25");
        assert_eq!(
            Href::to("/console/sales").segment("caisse-1_a.b~c").as_str(),
            "/console/sales/caisse-1_a.b~c"
        );
    }

    #[test]
    fn query_values_are_encoded_and_joined() {
        let href = Href::to("/console/stock")
            .query("q", "café & thé")
            .query_some("sku", None)
            .query("store", "a&store=b#c");
        assert_eq!(
            href.as_str(),
            "/console/stock?q=caf%C3%A9%20%26%20th%C3%A9&store=a%26store%3Db%23c"
        );
        assert_eq!(
            maud::html! { a href=(href) {} }.into_string(),
            format!("<a href=\"{}\"></a>", href.as_str().replace('&', "&amp;"))
        );
    }
}
