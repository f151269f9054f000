//! How a statement reaches either engine.
//!
//! Every query in this crate is written once, with `$n` placeholders, and runs through
//! [`query`]. On PostgreSQL it goes through sqlx. On SQLite it runs on the calling thread
//! through rusqlite: SQLite is a library in this process, and a point read or a sale's
//! inserts take microseconds, less than handing each statement to another thread and back
//! (which is how sqlx drives SQLite, and where most of a sale's time went).

use super::Writers;
use super::sqlite::{Lease, SqliteReaders};
use crate::error::{DbError, StoreError};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, AnyPool, AssertSqlSafe};
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, OnceLock};

/// A value bound to a placeholder.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Param {
    Int(Option<i64>),
    Text(Option<String>),
    Bool(Option<bool>),
    Blob(Option<Vec<u8>>),
    /// A long text the caller keeps too (an archive's file): SQLite reads it in place.
    Shared(Arc<String>),
}

macro_rules! param_from {
    ($($t:ty => |$v:ident| $e:expr),* $(,)?) => {
        $(impl From<$t> for Param {
            fn from($v: $t) -> Self {
                $e
            }
        })*
    };
}

param_from! {
    i64 => |v| Param::Int(Some(v)),
    Option<i64> => |v| Param::Int(v),
    bool => |v| Param::Bool(Some(v)),
    Option<bool> => |v| Param::Bool(v),
    &str => |v| Param::Text(Some(v.to_owned())),
    &String => |v| Param::Text(Some(v.clone())),
    String => |v| Param::Text(Some(v)),
    Option<&str> => |v| Param::Text(v.map(str::to_owned)),
    Option<String> => |v| Param::Text(v),
    Vec<u8> => |v| Param::Blob(Some(v)),
    Arc<String> => |v| Param::Shared(v),
}

/// A statement and its bound values.
pub(crate) struct Query {
    sql: Cow<'static, str>,
    params: Vec<Param>,
}

/// Starts a statement whose placeholders are `$1..$n`, bound in order by [`Query::bind`].
pub(crate) fn query(sql: impl Into<Cow<'static, str>>) -> Query {
    Query {
        sql: sql.into(),
        params: Vec::new(),
    }
}

/// What a statement runs on: a connection in hand, or the shared read pool.
pub(crate) enum On<'e> {
    Conn(&'e mut Conn),
    Readers(&'e Readers),
}

impl<'e> From<&'e mut Conn> for On<'e> {
    fn from(conn: &'e mut Conn) -> Self {
        On::Conn(conn)
    }
}

impl<'e> From<&'e Readers> for On<'e> {
    fn from(readers: &'e Readers) -> Self {
        On::Readers(readers)
    }
}

impl Query {
    pub(crate) fn bind(mut self, value: impl Into<Param>) -> Self {
        self.params.push(value.into());
        self
    }

    pub(crate) fn with_params(sql: impl Into<Cow<'static, str>>, params: Vec<Param>) -> Self {
        Query {
            sql: sql.into(),
            params,
        }
    }

    /// The statement's text, as written with `$n` placeholders.
    #[cfg(test)]
    pub(crate) fn sql(&self) -> &str {
        &self.sql
    }

    /// The values bound, in order.
    #[cfg(test)]
    pub(crate) fn params(&self) -> &[Param] {
        &self.params
    }

    /// Runs the statement; answers how many rows it changed.
    pub(crate) async fn execute<'e>(self, on: impl Into<On<'e>>) -> Result<u64, StoreError> {
        match on.into() {
            On::Conn(conn) => self.execute_on(conn).await,
            On::Readers(readers) => self.execute_on(&mut readers.acquire().await?).await,
        }
    }

    pub(crate) async fn fetch_all<'e>(self, on: impl Into<On<'e>>) -> Result<Vec<Row>, StoreError> {
        match on.into() {
            On::Conn(conn) => self.fetch_all_on(conn).await,
            On::Readers(readers) => self.fetch_all_on(&mut readers.acquire().await?).await,
        }
    }

    /// Hands each row to `each` as it is read, so that a long answer (a register's journal)
    /// is never held whole as rows as well as in what `each` makes of them.
    pub(crate) async fn for_each(
        self,
        conn: &mut Conn,
        mut each: impl FnMut(Row) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        match &mut conn.0 {
            Link::Sqlite(sqlite) => sqlite_run(sqlite, &sqlite_text(&self.sql), &self.params, each).map(|_| ()),
            Link::Postgres(pg) => {
                let mut rows = self.sqlx().fetch(pg.as_mut());
                while let Some(row) = futures::TryStreamExt::try_next(&mut rows)
                    .await
                    .map_err(crate::error::db)?
                {
                    each(Row(RowData::Postgres(row)))?;
                }
                Ok(())
            }
        }
    }

    pub(crate) async fn fetch_optional<'e>(self, on: impl Into<On<'e>>) -> Result<Option<Row>, StoreError> {
        Ok(self.fetch_all(on).await?.into_iter().next())
    }

    pub(crate) async fn fetch_one<'e>(self, on: impl Into<On<'e>>) -> Result<Row, StoreError> {
        self.fetch_optional(on)
            .await?
            .ok_or_else(|| StoreError::Corrupt("a query that always answers a row answered none".to_owned()))
    }

    async fn execute_on(self, conn: &mut Conn) -> Result<u64, StoreError> {
        match &mut conn.0 {
            Link::Sqlite(sqlite) => {
                sqlite_run(sqlite, &sqlite_text(&self.sql), &self.params, |_| Ok(())).map(|(_, changed)| changed)
            }
            Link::Postgres(pg) => Ok(self
                .sqlx()
                .execute(pg.as_mut())
                .await
                .map_err(crate::error::db)?
                .rows_affected()),
        }
    }

    async fn fetch_all_on(self, conn: &mut Conn) -> Result<Vec<Row>, StoreError> {
        match &mut conn.0 {
            Link::Sqlite(sqlite) => {
                let mut rows = Vec::new();
                sqlite_run(sqlite, &sqlite_text(&self.sql), &self.params, |row| {
                    rows.push(row);
                    Ok(())
                })?;
                Ok(rows)
            }
            Link::Postgres(pg) => Ok(self
                .sqlx()
                .fetch_all(pg.as_mut())
                .await
                .map_err(crate::error::db)?
                .into_iter()
                .map(|row| Row(RowData::Postgres(row)))
                .collect()),
        }
    }

    fn sqlx(self) -> sqlx::query::Query<'static, sqlx::Any, sqlx::any::AnyArguments> {
        let mut query = match self.sql {
            Cow::Borrowed(sql) => sqlx::query(sql),
            Cow::Owned(sql) => sqlx::query(AssertSqlSafe(sql)),
        };
        for param in self.params {
            query = match param {
                Param::Int(value) => query.bind(value),
                Param::Text(value) => query.bind(value),
                Param::Bool(value) => query.bind(value),
                Param::Blob(value) => query.bind(value),
                Param::Shared(value) => query.bind(value.as_str().to_owned()),
            };
        }
        query
    }
}

/// Prepares (once per connection and text), binds and steps `sql`, written with SQLite's
/// placeholders (see [`sqlite_text`]), handing each row to `each`; answers the rows seen and
/// how many rows the statement changed.
fn sqlite_run(
    conn: &rusqlite::Connection,
    sql: &str,
    params: &[Param],
    mut each: impl FnMut(Row) -> Result<(), StoreError>,
) -> Result<(u64, u64), StoreError> {
    let mut statement = conn.prepare_cached(sql).map_err(crate::error::db)?;
    let expected = statement.parameter_count();
    if expected != params.len() {
        return Err(StoreError::Corrupt(format!(
            "a statement takes {expected} values and was given {}",
            params.len()
        )));
    }
    for (index, param) in params.iter().enumerate() {
        let position = index + 1;
        match param {
            Param::Int(value) => statement
                .raw_bind_parameter(position, value)
                .map_err(crate::error::db)?,
            Param::Text(value) => statement
                .raw_bind_parameter(position, value)
                .map_err(crate::error::db)?,
            Param::Bool(value) => statement
                .raw_bind_parameter(position, value)
                .map_err(crate::error::db)?,
            Param::Blob(value) => statement
                .raw_bind_parameter(position, value)
                .map_err(crate::error::db)?,
            Param::Shared(value) => statement
                .raw_bind_parameter(position, value.as_str())
                .map_err(crate::error::db)?,
        }
    }
    let columns: Arc<[String]> = statement.column_names().into_iter().map(str::to_owned).collect();
    let mut seen = 0;
    let mut rows = statement.raw_query();
    while let Some(row) = rows.next().map_err(crate::error::db)? {
        let cells = (0..columns.len())
            .map(|index| row.get_ref(index).map(Cell::from))
            .collect::<Result<Vec<_>, _>>()
            .map_err(crate::error::db)?;
        seen += 1;
        each(Row(RowData::Sqlite {
            columns: columns.clone(),
            cells,
        }))?;
    }
    drop(rows);
    Ok((seen, conn.changes()))
}

/// `sql` with SQLite's placeholders. A static text is rewritten once and kept, as a sale's
/// multi-row inserts are long and the writer runs them for every sale ("Text caches" in
/// docs/performance.md). A static text lives as long as the process, so its address and
/// length name it, and what is kept is bounded by the texts the program holds.
#[expect(clippy::ptr_arg, reason = "whether the text is static (borrowed) is what decides")]
fn sqlite_text(sql: &Cow<'static, str>) -> Cow<'static, str> {
    type Kept = HashMap<(usize, usize), &'static str>;
    static KEPT: OnceLock<Mutex<Kept>> = OnceLock::new();
    let text: &'static str = match sql {
        Cow::Borrowed(text) => text,
        Cow::Owned(text) => return Cow::Owned(numbered_placeholders(text).into_owned()),
    };
    let key = (text.as_ptr() as usize, text.len());
    let kept = KEPT.get_or_init(Default::default);
    if let Some(found) = kept.lock().ok().and_then(|kept| kept.get(&key).copied()) {
        return Cow::Borrowed(found);
    }
    let rewritten: &'static str = match numbered_placeholders(text) {
        Cow::Borrowed(same) => same,
        Cow::Owned(rewritten) => Box::leak(rewritten.into_boxed_str()),
    };
    if let Ok(mut kept) = kept.lock() {
        kept.insert(key, rewritten);
    }
    Cow::Borrowed(rewritten)
}

/// SQLite reads `$1` as a parameter *named* "$1", numbered by first appearance; `?1` is the
/// first parameter wherever it appears. Quoted text is left alone.
pub(crate) fn numbered_placeholders(sql: &str) -> Cow<'_, str> {
    if !sql.contains('$') {
        return Cow::Borrowed(sql);
    }
    // Byte by byte: `$`, `'` and digits are ASCII, so every other byte is copied as it is.
    let mut out = sql.as_bytes().to_vec();
    let mut quoted = false;
    for index in 0..out.len() {
        match out[index] {
            b'\'' => quoted = !quoted,
            b'$' if !quoted && out.get(index + 1).is_some_and(u8::is_ascii_digit) => out[index] = b'?',
            _ => {}
        }
    }
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| sql.to_owned()))
}

/// A value read back from SQLite.
#[derive(Clone, Debug)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl From<rusqlite::types::ValueRef<'_>> for Cell {
    fn from(value: rusqlite::types::ValueRef<'_>) -> Self {
        use rusqlite::types::ValueRef;
        match value {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(v) => Cell::Int(v),
            ValueRef::Real(v) => Cell::Real(v),
            ValueRef::Text(v) => Cell::Text(String::from_utf8_lossy(v).into_owned()),
            ValueRef::Blob(v) => Cell::Blob(v.to_vec()),
        }
    }
}

/// A row of a result.
pub(crate) struct Row(RowData);

enum RowData {
    Sqlite { columns: Arc<[String]>, cells: Vec<Cell> },
    Postgres(AnyRow),
}

impl Row {
    /// The column `name` as a `T`; a missing column or another type is an error.
    pub(crate) fn try_get<T: Column>(&self, name: &str) -> Result<T, StoreError> {
        match &self.0 {
            RowData::Sqlite { columns, cells } => {
                let cell = columns
                    .iter()
                    .position(|column| column == name)
                    .map(|index| &cells[index])
                    .ok_or_else(|| StoreError::Corrupt(format!("no column {name} in the result")))?;
                T::from_cell(cell)
                    .ok_or_else(|| StoreError::Corrupt(format!("column {name} holds {cell:?}, not what was expected")))
            }
            RowData::Postgres(row) => Ok(sqlx::Row::try_get(row, name).map_err(crate::error::db)?),
        }
    }
}

/// A type a column can be read as, on either engine.
pub(crate) trait Column: Sized + for<'r> sqlx::Decode<'r, sqlx::Any> + sqlx::Type<sqlx::Any> {
    #[doc(hidden)]
    fn from_cell(cell: &Cell) -> Option<Self>;
}

impl Column for i64 {
    fn from_cell(cell: &Cell) -> Option<Self> {
        match cell {
            Cell::Int(v) => Some(*v),
            _ => None,
        }
    }
}

impl Column for f64 {
    fn from_cell(cell: &Cell) -> Option<Self> {
        match cell {
            Cell::Real(v) => Some(*v),
            Cell::Int(v) => Some(*v as f64),
            _ => None,
        }
    }
}

impl Column for bool {
    fn from_cell(cell: &Cell) -> Option<Self> {
        match cell {
            Cell::Int(v) => Some(*v != 0),
            _ => None,
        }
    }
}

impl Column for String {
    fn from_cell(cell: &Cell) -> Option<Self> {
        match cell {
            Cell::Text(v) => Some(v.clone()),
            _ => None,
        }
    }
}

impl Column for Vec<u8> {
    fn from_cell(cell: &Cell) -> Option<Self> {
        match cell {
            Cell::Blob(v) => Some(v.clone()),
            Cell::Text(v) => Some(v.as_bytes().to_vec()),
            _ => None,
        }
    }
}

impl<T: Column> Column for Option<T> {
    fn from_cell(cell: &Cell) -> Option<Self> {
        match cell {
            Cell::Null => Some(None),
            other => T::from_cell(other).map(Some),
        }
    }
}

/// A connection: SQLite's, or a PostgreSQL pooled connection or transaction.
pub struct Conn(Link);

enum Link {
    Sqlite(SqliteHandle),
    Postgres(PgLink),
}

enum SqliteHandle {
    Owned(rusqlite::Connection),
    Leased(Lease),
}

impl Deref for SqliteHandle {
    type Target = rusqlite::Connection;

    fn deref(&self) -> &rusqlite::Connection {
        match self {
            SqliteHandle::Owned(conn) => conn,
            SqliteHandle::Leased(lease) => lease,
        }
    }
}

pub(crate) enum PgLink {
    Pooled(sqlx::pool::PoolConnection<sqlx::Any>),
    Transaction(sqlx::Transaction<'static, sqlx::Any>),
}

impl PgLink {
    fn as_mut(&mut self) -> &mut AnyConnection {
        match self {
            PgLink::Pooled(conn) => conn.deref_mut(),
            PgLink::Transaction(tx) => tx.deref_mut(),
        }
    }
}

impl Conn {
    pub(crate) fn sqlite(conn: rusqlite::Connection) -> Conn {
        Conn(Link::Sqlite(SqliteHandle::Owned(conn)))
    }

    pub(crate) fn postgres_transaction(tx: sqlx::Transaction<'static, sqlx::Any>) -> Conn {
        Conn(Link::Postgres(PgLink::Transaction(tx)))
    }

    /// The PostgreSQL transaction this connection holds, to commit or roll back.
    pub(crate) fn into_postgres_transaction(self) -> Option<sqlx::Transaction<'static, sqlx::Any>> {
        match self.0 {
            Link::Postgres(PgLink::Transaction(tx)) => Some(tx),
            _ => None,
        }
    }

    /// The SQLite connection underneath, for what only SQLite does (checkpoints).
    pub(crate) fn as_sqlite(&self) -> Option<&rusqlite::Connection> {
        match &self.0 {
            Link::Sqlite(conn) => Some(conn),
            Link::Postgres(_) => None,
        }
    }

    pub(crate) fn is_sqlite(&self) -> bool {
        matches!(self.0, Link::Sqlite(_))
    }

    /// How writers meet on this connection's engine (see [`Writers`]).
    pub(crate) fn writers(&self) -> Writers {
        match self.0 {
            Link::Sqlite(_) => Writers::One,
            Link::Postgres(_) => Writers::Many,
        }
    }

    /// Runs `sql` (one or more statements, no values, no rows back) as it is: transaction
    /// control, schema changes.
    pub(crate) async fn run_script(&mut self, sql: &str) -> Result<(), DbError> {
        match &mut self.0 {
            // The SQLite writer runs BEGIN and COMMIT for every batch: kept prepared, they are
            // not parsed again each time. A script of several statements is run as it is.
            Link::Sqlite(conn) if !sql.contains(';') => conn
                .prepare_cached(sql)
                .and_then(|mut statement| statement.raw_execute())
                .map(drop)
                .map_err(DbError::Sqlite),
            Link::Sqlite(conn) => conn.execute_batch(sql).map_err(DbError::Sqlite),
            Link::Postgres(pg) => sqlx::Executor::execute(pg.as_mut(), AssertSqlSafe(sql.to_owned()))
                .await
                .map(drop)
                .map_err(DbError::Postgres),
        }
    }
}

/// The connections that serve reads.
pub(crate) enum Readers {
    Sqlite(Arc<SqliteReaders>),
    Postgres(AnyPool),
}

impl Readers {
    pub(crate) async fn acquire(&self) -> Result<Conn, StoreError> {
        match self {
            Readers::Sqlite(pool) => Ok(Conn(Link::Sqlite(SqliteHandle::Leased(pool.lease()?)))),
            Readers::Postgres(pool) => Ok(Conn(Link::Postgres(PgLink::Pooled(
                super::postgres::timed(pool, pool.acquire()).await?,
            )))),
        }
    }

    /// Connections lent and idle, and the most kept open (PostgreSQL's pool size; SQLite
    /// opens a reader whenever none is idle).
    pub(crate) fn counts(&self) -> (u64, u64, Option<u64>) {
        match self {
            Readers::Sqlite(pool) => {
                let (lent, idle) = pool.counts();
                (lent, idle, None)
            }
            Readers::Postgres(pool) => {
                let idle = pool.num_idle() as u64;
                let open = u64::from(pool.size());
                let most = u64::from(pool.options().get_max_connections());
                (open.saturating_sub(idle), idle, Some(most))
            }
        }
    }

    /// Whether [`Readers::close`] ran (PostgreSQL; SQLite's readers open again on demand).
    pub(crate) fn is_closed(&self) -> bool {
        match self {
            Readers::Sqlite(_) => false,
            Readers::Postgres(pool) => pool.is_closed(),
        }
    }

    pub(crate) async fn close(&self) {
        match self {
            Readers::Sqlite(pool) => pool.clear(),
            Readers::Postgres(pool) => pool.close().await,
        }
    }

    pub(crate) fn postgres(&self) -> Option<&AnyPool> {
        match self {
            Readers::Postgres(pool) => Some(pool),
            Readers::Sqlite(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{numbered_placeholders, sqlite_text};
    use std::borrow::Cow;

    #[test]
    fn dollar_placeholders_become_numbered_ones_outside_quotes() {
        assert_eq!(
            numbered_placeholders("SELECT $2, '$1', $10 || '$' WHERE a = $1"),
            "SELECT ?2, '$1', ?10 || '$' WHERE a = ?1"
        );
        assert_eq!(numbered_placeholders("SELECT 1"), "SELECT 1");
    }

    #[test]
    fn a_static_text_is_rewritten_once_and_a_built_one_every_time() {
        let fixed: Cow<'static, str> = Cow::Borrowed("SELECT $2, $1 WHERE a = '$3'");
        let (first, again) = (sqlite_text(&fixed), sqlite_text(&fixed));
        assert_eq!(first, "SELECT ?2, ?1 WHERE a = '$3'");
        let (Cow::Borrowed(first), Cow::Borrowed(again)) = (first, again) else {
            panic!("a static text's rewrite is kept");
        };
        assert!(std::ptr::eq(first, again), "the kept rewrite is handed out again");
        let built: Cow<'static, str> = Cow::Owned(format!("SELECT ${}", 1));
        assert_eq!(sqlite_text(&built), "SELECT ?1");
    }
}
