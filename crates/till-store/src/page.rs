//! Keyset pages: every list is read a page at a time, from just after the key of the last item
//! the previous page showed, in the order of an index that starts where the list's filters
//! start. A page never skips rows (no OFFSET): it seeks its key and reads `take` rows, however
//! deep in the list it is.

use crate::sql::{Param, Query};
pub use till_app::storage::{Newest, Window};

/// A list's statement under construction: its filters joined by AND, each value bound to the
/// next placeholder, then the keyset's own condition, order and limit.
pub(crate) struct Keyset {
    select: &'static str,
    conditions: Vec<String>,
    params: Vec<Param>,
}

impl Keyset {
    /// `select` is the statement up to its `WHERE`, which the keyset writes.
    pub(crate) fn new(select: &'static str) -> Keyset {
        Keyset {
            select,
            conditions: Vec::new(),
            params: Vec::new(),
        }
    }

    /// As [`Keyset::new`], for a `select` that reads `$1` itself: `first` is bound to it, and
    /// the filters' values from `$2` on.
    pub(crate) fn binding(select: &'static str, first: impl Into<Param>) -> Keyset {
        Keyset {
            params: vec![first.into()],
            ..Keyset::new(select)
        }
    }

    fn placeholder(&mut self, value: impl Into<Param>) -> String {
        self.params.push(value.into());
        format!("${}", self.params.len())
    }

    /// `column` `operator` the value: `store_id = $1`.
    pub(crate) fn compare(&mut self, column: &str, operator: &str, value: impl Into<Param>) {
        let placeholder = self.placeholder(value);
        self.conditions.push(format!("{column} {operator} {placeholder}"));
    }

    /// `column = value` when a value is given.
    pub(crate) fn equal_if<V: Into<Param>>(&mut self, column: &str, value: Option<V>) {
        if let Some(value) = value {
            self.compare(column, "=", value);
        }
    }

    /// A condition `write` makes around the placeholder of `value`.
    pub(crate) fn bound(&mut self, write: impl FnOnce(&str) -> String, value: impl Into<Param>) {
        let placeholder = self.placeholder(value);
        self.conditions.push(write(&placeholder));
    }

    /// A condition that binds no value (`closed_at IS NULL`).
    pub(crate) fn condition(&mut self, condition: &'static str) {
        self.conditions.push(condition.to_owned());
    }

    /// Items by `id` ascending, after `after`, at most `take`.
    pub(crate) fn by_id(mut self, id: &str, after: Option<&str>, take: usize) -> Query {
        if let Some(after) = after {
            self.compare(id, ">", after);
        }
        let order = format!("ORDER BY {id}");
        self.finish(&order, take)
    }

    /// Items newest first by (`at`, `id`), after `after`, at most `take`.
    pub(crate) fn newest_first<Id: AsRef<str>>(
        mut self,
        at: &str,
        id: &str,
        after: Option<&Newest<Id>>,
        take: usize,
    ) -> Query {
        if let Some(after) = after {
            let micros = self.placeholder(till_core::instant::to_micros(after.at));
            let key = self.placeholder(after.id.as_ref());
            self.conditions.push(format!("({at}, {id}) < ({micros}, {key})"));
        }
        let order = format!("ORDER BY {at} DESC, {id} DESC");
        self.finish(&order, take)
    }

    fn finish(mut self, order: &str, take: usize) -> Query {
        let take = i64::try_from(take).unwrap_or(i64::MAX);
        let limit = self.placeholder(take);
        let filter = if self.conditions.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.conditions.join(" AND "))
        };
        Query::with_params(format!("{}{filter} {order} LIMIT {limit}", self.select), self.params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Timestamp;

    #[test]
    fn conditions_bind_in_order_and_the_key_comes_last() {
        let mut keyset = Keyset::new("SELECT a FROM t");
        keyset.equal_if("store_id", Some("s1"));
        keyset.equal_if::<&str>("register_id", None);
        keyset.condition("closed_at IS NULL");
        let after = Newest {
            at: Timestamp::from_microsecond(7).unwrap(),
            id: "x",
        };
        let query = keyset.newest_first("opened_at", "session_id", Some(&after), 3);
        assert_eq!(
            query.sql(),
            "SELECT a FROM t WHERE store_id = $1 AND closed_at IS NULL AND (opened_at, session_id) < ($2, $3) \
             ORDER BY opened_at DESC, session_id DESC LIMIT $4"
        );
        assert_eq!(
            query.params(),
            [
                Param::from("s1"),
                Param::from(7_i64),
                Param::from("x"),
                Param::from(3_i64)
            ]
        );
        let first = Keyset::new("SELECT a FROM t").by_id("code", None, 2);
        assert_eq!(first.sql(), "SELECT a FROM t ORDER BY code LIMIT $1");
    }
}
