//! Writes whose results nobody reads, sent together.
//!
//! sqlx runs each SQLite statement on a worker thread of its own, so every statement is a
//! round trip between two threads, and on PostgreSQL every statement is a round trip over the
//! network. A batch sends a sale's dozen writes as one call: to SQLite as a multi-statement
//! string, to PostgreSQL as one statement of data-modifying CTEs, their placeholders
//! renumbered into one parameter list. The SQL of each write is the same for both engines.

use crate::error::StoreError;
use sqlx::{AnyConnection, AssertSqlSafe};

/// A bound value: the two kinds the sale's tables hold.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Param {
    Int(Option<i64>),
    Text(Option<String>),
}

impl From<i64> for Param {
    fn from(value: i64) -> Self {
        Param::Int(Some(value))
    }
}

impl From<Option<i64>> for Param {
    fn from(value: Option<i64>) -> Self {
        Param::Int(value)
    }
}

impl From<&str> for Param {
    fn from(value: &str) -> Self {
        Param::Text(Some(value.to_owned()))
    }
}

impl From<&String> for Param {
    fn from(value: &String) -> Self {
        Param::Text(Some(value.clone()))
    }
}

impl From<String> for Param {
    fn from(value: String) -> Self {
        Param::Text(Some(value))
    }
}

impl From<Option<&str>> for Param {
    fn from(value: Option<&str>) -> Self {
        Param::Text(value.map(str::to_owned))
    }
}

#[derive(Default)]
pub(crate) struct Batch {
    statements: Vec<(String, Vec<Param>)>,
}

impl Batch {
    /// Queues `sql`, whose placeholders `$1..$n` are `params` in order.
    pub(crate) fn push(&mut self, sql: impl Into<String>, params: Vec<Param>) {
        self.statements.push((sql.into(), params));
    }

    pub(crate) async fn run(self, conn: &mut AnyConnection) -> Result<(), StoreError> {
        if self.statements.is_empty() {
            return Ok(());
        }
        if conn.backend_name().eq_ignore_ascii_case("sqlite") {
            let mut sql = String::new();
            let mut params = Vec::new();
            for (text, own) in self.statements {
                sql.push_str(&renumbered(&text, params.len()));
                sql.push_str(";\n");
                params.extend(own);
            }
            // Prepared and cached like any query: common cart shapes repeat, and the cache
            // evicts the rare ones.
            bound(sqlx::query(AssertSqlSafe(sql)), params)
                .execute(&mut *conn)
                .await?;
        } else {
            // One statement: every write but the last as a data-modifying CTE. They run on
            // one snapshot, which is fine: no statement of a batch reads another's rows.
            let mut sql = String::new();
            let mut params = Vec::new();
            let count = self.statements.len();
            for (index, (text, own)) in self.statements.into_iter().enumerate() {
                let text = renumbered(&text, params.len());
                if index + 1 < count {
                    sql.push_str(if index == 0 { "WITH " } else { ", " });
                    sql.push_str(&format!("w{index} AS ({text})"));
                } else {
                    sql.push(' ');
                    sql.push_str(&text);
                }
                params.extend(own);
            }
            bound(sqlx::query(AssertSqlSafe(sql)), params)
                .execute(&mut *conn)
                .await?;
        }
        Ok(())
    }
}

type AnyQuery = sqlx::query::Query<'static, sqlx::Any, sqlx::any::AnyArguments>;

fn bound(mut query: AnyQuery, params: Vec<Param>) -> AnyQuery {
    for param in params {
        query = match param {
            Param::Int(value) => query.bind(value),
            Param::Text(value) => query.bind(value),
        };
    }
    query
}

/// `sql` with every placeholder `$n` outside quoted text rewritten to `$(n + offset)`.
fn renumbered(sql: &str, offset: usize) -> String {
    if offset == 0 {
        return sql.to_owned();
    }
    let mut out = String::with_capacity(sql.len() + 16);
    let mut chars = sql.char_indices().peekable();
    let mut quoted = false;
    while let Some((_, c)) = chars.next() {
        if c == '\'' {
            quoted = !quoted;
        }
        if c != '$' || quoted {
            out.push(c);
            continue;
        }
        let mut digits = String::new();
        while let Some(&(_, d)) = chars.peek() {
            if !d.is_ascii_digit() {
                break;
            }
            digits.push(d);
            chars.next();
        }
        match digits.parse::<usize>() {
            Ok(n) => out.push_str(&format!("${}", n + offset)),
            Err(_) => {
                out.push('$');
                out.push_str(&digits);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::renumbered;

    #[test]
    fn placeholders_shift_and_quoted_text_does_not() {
        assert_eq!(
            renumbered("INSERT INTO t VALUES ($1, $2, '$3', $10)", 4),
            "INSERT INTO t VALUES ($5, $6, '$3', $14)"
        );
        assert_eq!(renumbered("UPDATE t SET a = $1", 0), "UPDATE t SET a = $1");
        assert_eq!(renumbered("SELECT '$' || $1, $", 2), "SELECT '$' || $3, $");
    }
}
