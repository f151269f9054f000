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
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

#[derive(Default)]
pub(crate) struct Batch {
    statements: Vec<Statement>,
}

struct Statement {
    sql: Cow<'static, str>,
    params: Vec<Param>,
    /// The batch is refused when this statement changes no row.
    required: bool,
    /// Reads the rows the statement queued before it returned, named `{previous}` in `sql`.
    reads_previous: bool,
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
            reads_previous: false,
        });
    }

    /// Queues a write the rest of the batch depends on: when it changes no row, the batch is
    /// refused with [`StoreError::NotWritten`]. Its SQL must end in a `RETURNING` clause, which
    /// PostgreSQL counts; SQLite counts the changed rows instead and runs the write without it
    /// (see [`without_returning`]).
    pub(crate) fn push_required(&mut self, sql: impl Into<Cow<'static, str>>, params: Vec<Param>) {
        self.statements.push(Statement {
            sql: sql.into(),
            params,
            required: true,
            reads_previous: false,
        });
    }

    /// Queues a write that reads the rows returned by the write queued just before it, named
    /// `{previous}` in `sql`: a ledger row that records the balance an update left, under
    /// whatever concurrent updates it waited for. Only one statement can pass rows from one
    /// write to the next, so a batch holding such a write runs only where batches run alone
    /// (PostgreSQL).
    pub(crate) fn push_reading_previous(&mut self, sql: impl Into<Cow<'static, str>>, params: Vec<Param>) {
        self.statements.push(Statement {
            sql: sql.into(),
            params,
            required: false,
            reads_previous: true,
        });
    }

    /// Runs the batch. On PostgreSQL it is one statement, which a refusal undoes whole, so a
    /// batch may run outside a transaction; inside one, the caller's unit fails with it.
    pub(crate) async fn run(self, conn: &mut Conn) -> Result<(), StoreError> {
        if conn.is_sqlite() {
            if self.statements.iter().any(|statement| statement.reads_previous) {
                return Err(StoreError::Corrupt(
                    "a write reading the previous one's rows runs only in one statement".into(),
                ));
            }
            for statement in self.statements {
                let sql = match statement.required {
                    true => without_returning(statement.sql),
                    false => statement.sql,
                };
                let changed = Query::with_params(sql, statement.params).execute(&mut *conn).await?;
                if statement.required && changed == 0 {
                    return Err(StoreError::NotWritten);
                }
            }
            return Ok(());
        }
        if self.statements.is_empty() {
            return Ok(());
        }
        let sql = one_statement(&self.statements);
        let params: Vec<Param> = self
            .statements
            .into_iter()
            .flat_map(|statement| statement.params)
            .collect();
        // A required write that changed no row raises (see `till_all_written`), which the
        // error mapping turns into `NotWritten`.
        Query::with_params(sql, params).execute(&mut *conn).await?;
        Ok(())
    }
}

/// `sql` without its trailing `RETURNING` clause. SQLite runs a `RETURNING` clause as a
/// trigger, and a write with a trigger as a multi-row one, which copies every page it changes
/// into a statement journal before changing it; a required write needs only its row count.
fn without_returning(sql: Cow<'static, str>) -> Cow<'static, str> {
    let cut = |text: &str| text.rfind(" RETURNING ").unwrap_or(text.len());
    match sql {
        Cow::Borrowed(text) => Cow::Borrowed(&text[..cut(text)]),
        Cow::Owned(mut text) => {
            text.truncate(cut(&text));
            Cow::Owned(text)
        }
    }
}

/// Most batch texts kept; past it the cache starts again.
const KEPT_BATCHES: usize = 1024;

/// What a batch's one statement is made of: each write's text (by address and length: the
/// texts are static, so an address names one text), its number of values and whether it is
/// required or reads the previous write. A batch with a text built for it alone has no shape
/// and is not kept.
type BatchShape = Vec<(usize, usize, usize, bool, bool)>;

/// The batch as one PostgreSQL statement. Its text depends only on the shapes of its writes,
/// of which a day of sales has a few hundred, so each is built once rather than for every
/// sale ("PostgreSQL one-statement path" in docs/performance.md).
fn one_statement(statements: &[Statement]) -> String {
    static KEPT: OnceLock<Mutex<HashMap<BatchShape, String>>> = OnceLock::new();
    let shape: Option<BatchShape> = statements
        .iter()
        .map(|statement| match &statement.sql {
            Cow::Borrowed(text) => Some((
                text.as_ptr() as usize,
                text.len(),
                statement.params.len(),
                statement.required,
                statement.reads_previous,
            )),
            Cow::Owned(_) => None,
        })
        .collect();
    let Some(shape) = shape else {
        return combined(statements);
    };
    let kept = KEPT.get_or_init(Default::default);
    if let Some(text) = kept.lock().ok().and_then(|kept| kept.get(&shape).cloned()) {
        return text;
    }
    let text = combined(statements);
    if let Ok(mut kept) = kept.lock() {
        if kept.len() >= KEPT_BATCHES {
            kept.clear();
        }
        kept.insert(shape, text.clone());
    }
    text
}

/// The writes as data-modifying CTEs of one statement. They run on one snapshot, which is fine:
/// no statement of a batch reads another's rows. Without a required write the last one is the
/// main statement; with some, the main statement checks that each of them wrote a row.
fn combined(statements: &[Statement]) -> String {
    let required: Vec<usize> = (0..statements.len())
        .filter(|&index| statements[index].required)
        .collect();
    let mut sql = String::new();
    let mut offset = 0;
    for (index, statement) in statements.iter().enumerate() {
        let mut text = renumbered(&statement.sql, offset);
        if statement.reads_previous {
            text = text.replace("{previous}", &format!("w{}", index.saturating_sub(1)));
        }
        if index + 1 < statements.len() || !required.is_empty() {
            sql.push_str(if index == 0 { "WITH " } else { ", " });
            sql.push_str(&format!("w{index} AS ({text})"));
        } else {
            sql.push(' ');
            sql.push_str(&text);
        }
        offset += statement.params.len();
    }
    if !required.is_empty() {
        let counts: Vec<String> = required
            .iter()
            .map(|index| format!("(SELECT count(*) FROM w{index})"))
            .collect();
        let fewest = match counts.as_slice() {
            [one] => one.clone(),
            _ => format!("LEAST({})", counts.join(", ")),
        };
        sql.push_str(&format!(" SELECT till_all_written({fewest}) AS written"));
    }
    sql
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
    use super::{Batch, combined, one_statement, renumbered, without_returning};

    fn sample() -> Batch {
        let mut batch = Batch::default();
        batch.push_required("INSERT INTO a VALUES ($1, $2) RETURNING 1", vec![1.into(), 2.into()]);
        batch.push("UPDATE b SET c = $2 WHERE d = $1", vec![3.into(), 4.into()]);
        batch
    }

    #[test]
    fn a_batch_with_a_required_write_answers_its_row_count() {
        assert_eq!(
            combined(&sample().statements),
            "WITH w0 AS (INSERT INTO a VALUES ($1, $2) RETURNING 1), w1 AS (UPDATE b SET c = $4 WHERE d = $3) \
             SELECT till_all_written((SELECT count(*) FROM w0)) AS written"
        );
        let mut plain = Batch::default();
        plain.push("DELETE FROM a WHERE x = $1", vec![1.into()]);
        plain.push("DELETE FROM b WHERE y = $1", vec![2.into()]);
        assert_eq!(
            combined(&plain.statements),
            "WITH w0 AS (DELETE FROM a WHERE x = $1) DELETE FROM b WHERE y = $2"
        );
    }

    #[test]
    fn a_write_reading_the_previous_one_names_its_rows() {
        let mut batch = Batch::default();
        batch.push_required("UPDATE a SET b = b - $1 RETURNING id, b", vec![1.into()]);
        batch.push_reading_previous(
            "INSERT INTO l (id, b, t) SELECT id, b, $1 FROM {previous}",
            vec![2.into()],
        );
        assert_eq!(
            combined(&batch.statements),
            "WITH w0 AS (UPDATE a SET b = b - $1 RETURNING id, b), \
             w1 AS (INSERT INTO l (id, b, t) SELECT id, b, $2 FROM w0) \
             SELECT till_all_written((SELECT count(*) FROM w0)) AS written"
        );
    }

    #[test]
    fn a_kept_batch_text_is_the_one_built_for_its_shape() {
        let built = combined(&sample().statements);
        assert_eq!(one_statement(&sample().statements), built);
        assert_eq!(one_statement(&sample().statements), built, "read back from the cache");
        let mut longer = sample();
        longer.push("DELETE FROM e WHERE f = $1", vec![5.into()]);
        assert_eq!(one_statement(&longer.statements), combined(&longer.statements));
    }

    #[test]
    fn sqlite_runs_a_required_write_without_its_returning_clause() {
        assert_eq!(
            without_returning("INSERT INTO a VALUES ($1) ON CONFLICT (x) DO NOTHING RETURNING x".into()),
            "INSERT INTO a VALUES ($1) ON CONFLICT (x) DO NOTHING"
        );
        let built = String::from("UPDATE b SET c = (SELECT d FROM e) WHERE f = $1 RETURNING c");
        assert_eq!(
            without_returning(built.into()),
            "UPDATE b SET c = (SELECT d FROM e) WHERE f = $1"
        );
        assert_eq!(without_returning("DELETE FROM a".into()), "DELETE FROM a");
    }

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
