//! Writes whose results nobody reads, sent together.
//!
//! On PostgreSQL every statement is a round trip over the network. A batch sends a sale's
//! dozen writes as one statement of data-modifying CTEs, their placeholders renumbered into one
//! parameter list. On SQLite, where a statement is a function call, they simply run in turn.
//! The SQL of each write is the same for both engines.

use crate::error::StoreError;
pub(crate) use crate::sql::Param;
use crate::sql::{Conn, Query};
use std::borrow::Cow;
use std::sync::OnceLock;

#[derive(Default)]
pub(crate) struct Batch {
    statements: Vec<Statement>,
}

struct Statement {
    sql: Cow<'static, str>,
    params: Vec<Param>,
    /// The batch is refused when this statement changes no row.
    required: bool,
}

/// The texts of one multi-row statement by row count, each built the first time it is
/// needed: a sale's inserts take the same few shapes all day, and building their text for
/// every sale was a measurable share of the SQLite writer's time.
pub(crate) struct Shapes<const N: usize> {
    texts: [OnceLock<String>; N],
    build: fn(usize) -> String,
}

impl<const N: usize> Shapes<N> {
    pub(crate) const fn new(build: fn(usize) -> String) -> Self {
        Shapes {
            texts: [const { OnceLock::new() }; N],
            build,
        }
    }

    /// The statement for `rows` rows.
    pub(crate) fn get(&'static self, rows: usize) -> Cow<'static, str> {
        match self.texts.get(rows) {
            Some(text) => Cow::Borrowed(text.get_or_init(|| (self.build)(rows))),
            None => Cow::Owned((self.build)(rows)),
        }
    }
}

impl Batch {
    /// Queues `sql`, whose placeholders `$1..$n` are `params` in order.
    pub(crate) fn push(&mut self, sql: impl Into<Cow<'static, str>>, params: Vec<Param>) {
        self.statements.push(Statement {
            sql: sql.into(),
            params,
            required: false,
        });
    }

    /// Queues a write the rest of the batch depends on: when it changes no row, the batch is
    /// refused with [`StoreError::NotWritten`]. Its SQL must end in a `RETURNING` clause.
    pub(crate) fn push_required(&mut self, sql: impl Into<Cow<'static, str>>, params: Vec<Param>) {
        self.statements.push(Statement {
            sql: sql.into(),
            params,
            required: true,
        });
    }

    /// Runs the batch. A refusal leaves writes behind on PostgreSQL (the batch is one
    /// statement there), so the caller's unit must fail with it and roll them back.
    pub(crate) async fn run(self, conn: &mut Conn) -> Result<(), StoreError> {
        if conn.is_sqlite() {
            for statement in self.statements {
                let changed = Query::with_params(statement.sql, statement.params)
                    .execute(&mut *conn)
                    .await?;
                if statement.required && changed == 0 {
                    return Err(StoreError::NotWritten);
                }
            }
            return Ok(());
        }
        if self.statements.is_empty() {
            return Ok(());
        }
        let required: Vec<usize> = (0..self.statements.len())
            .filter(|&index| self.statements[index].required)
            .collect();
        // One statement: the writes as data-modifying CTEs. They run on one snapshot, which is
        // fine: no statement of a batch reads another's rows. Without a required write the
        // last one is the main statement; with some, the main statement counts their rows.
        let mut sql = String::new();
        let mut params = Vec::new();
        let count = self.statements.len();
        for (index, statement) in self.statements.into_iter().enumerate() {
            let text = renumbered(&statement.sql, params.len());
            if index + 1 < count || !required.is_empty() {
                sql.push_str(if index == 0 { "WITH " } else { ", " });
                sql.push_str(&format!("w{index} AS ({text})"));
            } else {
                sql.push(' ');
                sql.push_str(&text);
            }
            params.extend(statement.params);
        }
        if required.is_empty() {
            Query::with_params(sql, params).execute(&mut *conn).await?;
            return Ok(());
        }
        let least = required
            .iter()
            .map(|index| format!("(SELECT count(*) FROM w{index})"))
            .collect::<Vec<_>>()
            .join(", ");
        let least = if required.len() == 1 {
            least
        } else {
            format!("LEAST({least})")
        };
        sql.push_str(&format!(" SELECT {least} AS written"));
        let written: i64 = Query::with_params(sql, params)
            .fetch_one(&mut *conn)
            .await?
            .try_get("written")?;
        if written == 0 {
            return Err(StoreError::NotWritten);
        }
        Ok(())
    }
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
