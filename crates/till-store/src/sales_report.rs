//! The rollups sales reports are added up from (see `till_core::report`): written in the
//! transaction that closes each session, read back per period, and computed live from the
//! sales of sessions still open. Sessions closed before rollups existed are rolled up by the
//! first report that covers them.
//!
//! A closing adds its session's sales to four levels of rows, each keyed by level, scope,
//! dimension, first quarter hour and key: per register per quarter hour and per UTC day, per
//! store per UTC hour and per UTC day. A report over a period adds up its whole days from day
//! rows, the whole hours at its ends from hour rows (a register's report: quarter hours) and
//! the quarter hours left from quarter-hour rows (see `Period::segments`): a month is a few
//! thousand rows per article, not one per sale.

use crate::db::Store;
use crate::error::StoreError;
use crate::packed;
use crate::sale_detail::SaleDetail;
use crate::sql::{Conn, Param, Query, Row, query};
use till_app::storage::ReadAt;
pub use till_app::storage::sales::ReportScope;
use till_core::report::{Bucket, Dimension, Grain, GroupBy, Measures, Piece, ReportedSale, Rollup, Segment};
use till_core::sale::SaleType;
use till_core::store::Timezone;

/// A level of rollup rows: what their scope names and how much time each spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    RegisterQuarter,
    RegisterDay,
    StoreHour,
    StoreDay,
}

impl Level {
    const ALL: [Level; 4] = [
        Level::RegisterQuarter,
        Level::RegisterDay,
        Level::StoreHour,
        Level::StoreDay,
    ];

    fn as_str(self) -> &'static str {
        match self {
            Level::RegisterQuarter => "register_quarter",
            Level::RegisterDay => "register_day",
            Level::StoreHour => "store_hour",
            Level::StoreDay => "store_day",
        }
    }

    fn grain(self) -> Grain {
        match self {
            Level::RegisterQuarter => Grain::Quarter,
            Level::StoreHour => Grain::Hour,
            Level::RegisterDay | Level::StoreDay => Grain::Day,
        }
    }

    fn per_register(self) -> bool {
        matches!(self, Level::RegisterQuarter | Level::RegisterDay)
    }

    /// The level a report reads the runs of `grain` from: a register's own rows when it
    /// names a register, else the stores' (quarter hours exist per register only).
    fn of(grain: Grain, register: bool) -> Level {
        match (grain, register) {
            (Grain::Quarter, _) => Level::RegisterQuarter,
            (Grain::Day, true) => Level::RegisterDay,
            (Grain::Day, false) => Level::StoreDay,
            (Grain::Hour, _) => Level::StoreHour,
        }
    }
}

/// A statement being written: its text and its values, each placeholder numbered as it is
/// bound.
#[derive(Default)]
struct Statement {
    sql: String,
    params: Vec<Param>,
}

impl Statement {
    /// The placeholder of `value`.
    fn bind(&mut self, value: impl Into<Param>) -> String {
        self.params.push(value.into());
        format!("${}", self.params.len())
    }

    fn push(&mut self, text: &str) {
        self.sql.push_str(text);
    }
}

impl Store {
    pub async fn roll_up_pending(&self, scope: &ReportScope) -> Result<(), StoreError> {
        let mut statement = Statement::default();
        let end = statement.bind(scope.period.to().as_microsecond());
        let start = statement.bind(scope.period.from().as_microsecond());
        let filters = scope.filters("rs", &mut statement, true);
        statement.push(&format!(
            "SELECT p.session_id FROM report_pending p \
             JOIN register_sessions rs ON rs.session_id = p.session_id \
             WHERE rs.opened_at < {end} AND rs.closed_at >= {start}{filters}"
        ));
        let pending = Query::with_params(statement.sql, statement.params)
            .fetch_all(self.reader())
            .await?;
        for row in pending {
            let session_id: String = row.try_get("session_id")?;
            self.write(session_id, |conn, id| Box::pin(roll_up_pending_session(conn, id)))
                .await?;
        }
        Ok(())
    }

    pub async fn report_pieces(
        &self,
        scope: &ReportScope,
        group_by: GroupBy,
        at: ReadAt,
    ) -> Result<Vec<Piece>, StoreError> {
        let scope = scope.clone();
        self.long_read_at(at, move |conn| {
            Box::pin(async move { read_pieces(conn, &scope, group_by).await })
        })
        .await
    }
}

async fn roll_up_pending_session(conn: &mut Conn, session_id: &str) -> Result<(), StoreError> {
    let taken = query("DELETE FROM report_pending WHERE session_id = $1")
        .bind(session_id)
        .execute(&mut *conn)
        .await?;
    if taken == 0 {
        return Ok(());
    }
    let session = query("SELECT store_id, register_id FROM register_sessions WHERE session_id = $1")
        .bind(session_id)
        .fetch_one(&mut *conn)
        .await?;
    let store_id: String = session.try_get("store_id")?;
    let register_id: String = session.try_get("register_id")?;
    roll_up_session(conn, session_id, &store_id, &register_id).await
}

/// Adds the rollup of every sale of a closed session to the rollup rows: in the closing's
/// transaction, so that a report finds a session either open or rolled up, never both or
/// neither.
pub(crate) async fn roll_up_session(
    conn: &mut Conn,
    session_id: &str,
    store_id: &str,
    register_id: &str,
) -> Result<(), StoreError> {
    let rollup = session_rollup(conn, session_id, None).await?;
    add_rollup(conn, store_id, register_id, &rollup).await
}

const MEASURES: [&str; 7] = [
    "sales_count",
    "returns_count",
    "item_count",
    "total_cents",
    "returned_cents",
    "gross_cents",
    "vat_cents",
];

/// Rows a statement writes at most: well within both engines' limits on values.
const ROWS_PER_INSERT: usize = 200;

/// Adds a session's rollup to the rows of every level of its register and store.
async fn add_rollup(conn: &mut Conn, store_id: &str, register_id: &str, rollup: &Rollup) -> Result<(), StoreError> {
    // In the table's key order: two closings adding to the same rows of a store then take
    // their locks in the same order (PostgreSQL), and neither waits for the other in a cycle.
    let mut rows = Vec::new();
    for level in Level::ALL {
        let scope = if level.per_register() { register_id } else { store_id };
        let spans = rollup.by_grain(level.grain()).map_err(|_| past_largest())?;
        for (dimension, bucket, key, measures) in spans.rows() {
            let key = (
                level.as_str(),
                scope,
                dimension.as_str(),
                bucket.index(),
                key.to_owned(),
            );
            rows.push((key, *measures));
        }
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    let updates: Vec<String> = MEASURES
        .iter()
        .map(|column| format!("{column} = report_rollups.{column} + excluded.{column}"))
        .collect();
    for chunk in rows.chunks(ROWS_PER_INSERT) {
        let mut statement = Statement::default();
        let mut values = Vec::with_capacity(chunk.len());
        for ((level, scope, dimension, bucket, key), m) in chunk {
            let row: Vec<String> = [
                statement.bind(*level),
                statement.bind(*scope),
                statement.bind(*dimension),
                statement.bind(*bucket),
                statement.bind(key.as_str()),
                statement.bind(store_id),
                statement.bind(m.sales_count),
                statement.bind(m.returns_count),
                statement.bind(m.item_count),
                statement.bind(m.total_cents),
                statement.bind(m.returned_cents),
                statement.bind(m.gross_cents),
                statement.bind(m.vat_cents),
            ]
            .into();
            values.push(format!("({})", row.join(", ")));
        }
        statement.push(&format!(
            "INSERT INTO report_rollups (level, scope, dimension, bucket, key, store_id, {}) VALUES {} \
             ON CONFLICT (level, scope, dimension, bucket, key) DO UPDATE SET {}",
            MEASURES.join(", "),
            values.join(", "),
            updates.join(", ")
        ));
        Query::with_params(statement.sql, statement.params)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// The sales columns a rollup reads.
macro_rules! select_sales {
    ($where:literal) => {
        concat!(
            "SELECT kind, seller_id, item_count, total_cents, emitted_at, packed FROM sales WHERE ",
            $where
        )
    };
}

/// The rollup of a session's sales, all of them or those emitted within `[from, to)`
/// (microseconds).
async fn session_rollup(conn: &mut Conn, session_id: &str, within: Option<(i64, i64)>) -> Result<Rollup, StoreError> {
    let sales = match within {
        None => query(select_sales!("session_id = $1")).bind(session_id),
        Some((from, to)) => query(select_sales!(
            "session_id = $1 AND emitted_at >= $2 AND emitted_at < $3"
        ))
        .bind(session_id)
        .bind(from)
        .bind(to),
    };
    let mut rollup = Rollup::default();
    sales
        .for_each(conn, |row| {
            rollup.add_sale(&reported_sale(&row)?).map_err(|_| past_largest())
        })
        .await?;
    Ok(rollup)
}

/// A sale row as reports read it.
fn reported_sale(row: &Row) -> Result<ReportedSale, StoreError> {
    let detail = SaleDetail::read(&packed::detail_of(row)?)?;
    let kind: String = row.try_get("kind")?;
    Ok(ReportedSale {
        emitted_at: row.try_get("emitted_at")?,
        is_return: kind == SaleType::Return.as_str(),
        seller_id: row.try_get("seller_id")?,
        item_count: row.try_get("item_count")?,
        total_cents: row.try_get("total_cents")?,
        lines: detail.lines,
        tenders: detail.tenders,
        vat: detail.vat,
    })
}

fn past_largest() -> StoreError {
    StoreError::Corrupt("a rollup's sums exceed the largest amount".into())
}

/// The measures of rows aliased `alias`, summed (`sum`) or as they are.
fn measures(alias: &str, sum: bool) -> String {
    MEASURES
        .iter()
        .map(|column| match sum {
            true => format!("CAST(SUM({alias}.{column}) AS BIGINT) AS {column}"),
            false => format!("{alias}.{column}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sessions still open that may have sold in the period: their rollups are computed from
/// their sales. In the same statement as the closed sessions' rollups, so that a session that
/// closes meanwhile is counted once.
fn open_sessions(scope: &ReportScope, statement: &mut Statement) -> String {
    let zeros: Vec<String> = MEASURES.iter().map(|column| format!("0 AS {column}")).collect();
    let end = statement.bind(scope.period.to().as_microsecond());
    let filters = scope.filters("rs", statement, true);
    format!(
        "SELECT CAST(NULL AS TEXT) AS dimension, CAST(NULL AS TEXT) AS key, CAST(NULL AS BIGINT) AS bucket, \
             st.timezone AS timezone, rs.session_id AS open_session, {zeros} \
         FROM register_sessions rs LEFT JOIN stores st ON st.store_id = rs.store_id \
         WHERE rs.closed_at IS NULL AND rs.opened_at < {end}{filters}",
        zeros = zeros.join(", ")
    )
}

/// The statement of a report by day or hour: the registers' quarter hours in the period, per
/// store, then the open sessions.
fn by_quarter_hour(scope: &ReportScope) -> Statement {
    let mut statement = Statement::default();
    let level = Level::RegisterQuarter;
    let scopes = scope.scopes(level, &mut statement);
    let (from, to) = scope.period.buckets();
    let (from, to) = (statement.bind(from.index()), statement.bind(to.index()));
    let filters = scope.filters("r", &mut statement, false);
    // Grouped by quarter hour first: grouped by store first, SQLite may rather read rows in
    // an order that gives stores than only the period's rows.
    let select = format!(
        "SELECT r.dimension AS dimension, '' AS key, r.bucket AS bucket, st.timezone AS timezone, \
             CAST(NULL AS TEXT) AS open_session, {sums} \
         FROM report_rollups r LEFT JOIN stores st ON st.store_id = r.store_id \
         WHERE r.level = '{level}' AND r.scope IN ({scopes}) AND r.dimension = 'time' \
             AND r.bucket >= {from} AND r.bucket < {to}{filters} \
         GROUP BY r.bucket, r.store_id, st.timezone, r.dimension \
         UNION ALL ",
        sums = measures("r", true),
        level = level.as_str(),
    );
    statement.push(&select);
    let open = open_sessions(scope, &mut statement);
    statement.push(&open);
    statement
}

/// The statement of a report by key: per key of `dimension` and of the time dimension (the
/// totals), the rows of each run of whole days, hours and quarter hours of the period, then
/// the open sessions.
fn by_key(scope: &ReportScope, dimension: Dimension) -> Statement {
    let mut statement = Statement::default();
    let wanted = statement.bind(dimension.as_str());
    let mut runs = Vec::new();
    for segment in scope.segments() {
        let level = Level::of(segment.grain, scope.register_id.is_some());
        let scopes = scope.scopes(level, &mut statement);
        let (from, to) = (statement.bind(segment.from.index()), statement.bind(segment.to.index()));
        let filters = scope.filters("r", &mut statement, false);
        runs.push(format!(
            "SELECT r.dimension, r.key, {measures} FROM report_rollups r \
             WHERE r.level = '{level}' AND r.scope IN ({scopes}) AND r.dimension IN ({wanted}, 'time') \
                 AND r.bucket >= {from} AND r.bucket < {to}{filters}",
            measures = measures("r", false),
            level = level.as_str(),
        ));
    }
    let select = format!(
        "SELECT p.dimension AS dimension, p.key AS key, CAST(NULL AS BIGINT) AS bucket, \
             CAST(NULL AS TEXT) AS timezone, CAST(NULL AS TEXT) AS open_session, {sums} \
         FROM ({runs}) p \
         GROUP BY p.dimension, p.key \
         UNION ALL ",
        sums = measures("p", true),
        runs = runs.join(" UNION ALL "),
    );
    statement.push(&select);
    let open = open_sessions(scope, &mut statement);
    statement.push(&open);
    statement
}

async fn read_pieces(conn: &mut Conn, scope: &ReportScope, group_by: GroupBy) -> Result<Vec<Piece>, StoreError> {
    let statement = if group_by.is_time() {
        by_quarter_hour(scope)
    } else {
        by_key(scope, group_by.dimension())
    };
    let mut pieces = Vec::new();
    let mut open = Vec::new();
    for row in Query::with_params(statement.sql, statement.params)
        .fetch_all(&mut *conn)
        .await?
    {
        let zone = Timezone::from_trusted(
            row.try_get::<Option<String>>("timezone")?
                .unwrap_or_else(|| Timezone::DEFAULT.to_owned()),
        )
        .zone();
        if let Some(session_id) = row.try_get::<Option<String>>("open_session")? {
            open.push((session_id, zone));
            continue;
        }
        let dimension: String = row.try_get("dimension")?;
        let dimension = Dimension::parse(&dimension)
            .ok_or_else(|| StoreError::Corrupt(format!("a rollup of an unknown dimension {dimension:?}")))?;
        let measures = measures_of(&row)?;
        pieces.push(match (group_by.is_time(), dimension) {
            (true, _) => Piece::Quarter {
                zone,
                bucket: Bucket::from_index(row.try_get("bucket")?),
                measures,
            },
            (false, Dimension::Time) => Piece::Span(measures),
            (false, _) => Piece::Keyed {
                key: row.try_get("key")?,
                measures,
            },
        });
    }
    let period = (scope.period.from().as_microsecond(), scope.period.to().as_microsecond());
    for (session_id, zone) in open {
        let rollup = session_rollup(conn, &session_id, Some(period)).await?;
        pieces.extend(rollup.pieces(group_by, &zone));
    }
    Ok(pieces)
}

fn measures_of(row: &Row) -> Result<Measures, StoreError> {
    Ok(Measures {
        sales_count: row.try_get("sales_count")?,
        returns_count: row.try_get("returns_count")?,
        item_count: row.try_get("item_count")?,
        total_cents: row.try_get("total_cents")?,
        returned_cents: row.try_get("returned_cents")?,
        gross_cents: row.try_get("gross_cents")?,
        vat_cents: row.try_get("vat_cents")?,
    })
}

/// How a report's scope reads in SQL: the scopes and filters its rows are read under, and the
/// runs of days, hours and quarters its period is read in.
trait Scoped {
    fn scopes(&self, level: Level, statement: &mut Statement) -> String;
    fn filters(&self, alias: &str, statement: &mut Statement, register: bool) -> String;
    fn segments(&self) -> Vec<Segment>;
}

impl Scoped for ReportScope {
    /// The scopes a report reads rows of `level` under: a store or a register named, or every
    /// one in the registers' table (a register stays in the store it first opened in).
    fn scopes(&self, level: Level, statement: &mut Statement) -> String {
        match (level.per_register(), &self.store_id, &self.register_id) {
            (true, _, Some(register)) => statement.bind(register.as_str()),
            (true, Some(store), None) => format!(
                "SELECT register_id FROM registers WHERE store_id = {}",
                statement.bind(store.as_str())
            ),
            (true, None, None) => "SELECT register_id FROM registers".to_owned(),
            (false, Some(store), _) => statement.bind(store.as_str()),
            (false, None, _) => "SELECT DISTINCT store_id FROM registers".to_owned(),
        }
    }

    /// The filters on a row aliased `alias` with `store_id` and `register_id` columns.
    fn filters(&self, alias: &str, statement: &mut Statement, register: bool) -> String {
        let mut clause = String::new();
        if let Some(store) = &self.store_id {
            clause.push_str(&format!(" AND {alias}.store_id = {}", statement.bind(store.as_str())));
        }
        if let (true, Some(register)) = (register, &self.register_id) {
            clause.push_str(&format!(
                " AND {alias}.register_id = {}",
                statement.bind(register.as_str())
            ));
        }
        clause
    }

    /// The runs of whole days, hours and quarter hours the period is read in.
    fn segments(&self) -> Vec<Segment> {
        let grains: &[Grain] = match self.register_id {
            Some(_) => &[Grain::Day, Grain::Quarter],
            None => &[Grain::Day, Grain::Hour, Grain::Quarter],
        };
        self.period.segments(grains)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{migrated_scratch_database, query_plan};
    use jiff::Timestamp;
    use till_core::ids::{RegisterId, StoreId};
    use till_core::report::Period;

    fn scope(store: Option<&str>, register: Option<&str>) -> ReportScope {
        // Quarter hours, hours and days.
        let from: Timestamp = "2026-03-01T00:45:00Z".parse().unwrap();
        let to: Timestamp = "2026-03-31T22:30:00Z".parse().unwrap();
        ReportScope {
            store_id: store.map(|s| StoreId::parse(s).unwrap()),
            register_id: register.map(|r| RegisterId::parse(r).unwrap()),
            period: Period::new(from, to).unwrap(),
        }
    }

    /// Every step of a report's plan on SQLite searches the rollups' key for the period's
    /// runs of days, hours and quarter hours, and finds the open sessions by the index of
    /// open sessions: never a scan of every rollup or every session.
    #[tokio::test]
    async fn reports_read_the_periods_rollups_through_their_key() {
        let dir = tempfile::tempdir().unwrap();
        let conn = migrated_scratch_database(dir.path()).await;
        let scopes = [
            (None, None),
            (Some("s1"), None),
            (None, Some("r1")),
            (Some("s1"), Some("r1")),
        ];
        for (store, register) in scopes {
            let scope = scope(store, register);
            for statement in [by_quarter_hour(&scope), by_key(&scope, Dimension::Article)] {
                let values: Vec<&str> = statement.params.iter().map(|_| "1").collect();
                let steps = query_plan(&conn, &statement.sql, &values);
                let rollups: Vec<&String> = steps.iter().filter(|step| step.contains(" r ")).collect();
                assert!(!rollups.is_empty(), "{steps:#?}");
                for step in rollups {
                    assert!(
                        step.starts_with(
                            "SEARCH r USING PRIMARY KEY (level=? AND scope=? AND dimension=? AND bucket>? AND bucket<?)"
                        ),
                        "{store:?} {register:?}: {step} in {steps:#?}"
                    );
                }
                // Open sessions through an index: one of the sessions not closed (0001's one
                // per till, 0003's by opening time), or 0003's of a store's sessions by opening
                // time, never a scan of every session.
                let by_open_index = |step: &String| {
                    step.starts_with("SEARCH rs USING INDEX register_sessions_")
                        || step.starts_with("SCAN rs USING INDEX register_sessions_one_open")
                };
                assert!(steps.iter().any(by_open_index), "{steps:#?}");
                assert!(
                    !steps.iter().any(|step| step.starts_with("SCAN")
                        && !step.starts_with("SCAN rs")
                        && !step.contains("registers")
                        && !step.starts_with("SCAN p")),
                    "{store:?} {register:?}: {steps:#?}"
                );
            }
        }
        let live = query_plan(
            &conn,
            select_sales!("session_id = $1 AND emitted_at >= $2 AND emitted_at < $3"),
            &["ses_1", "1", "2"],
        );
        assert_eq!(
            live,
            ["SEARCH sales USING INDEX sales_by_session (session_id=? AND emitted_at>? AND emitted_at<?)"]
        );
    }

    /// What a month's report costs over `TILL_REPORT_SALES` sales (default a million) shaped
    /// like till-load's: 3 to 10 lines of 1 to 3 units from 5,000 articles, sixteen registers
    /// with a twelve-hour session a day. Prints the time of each grouping; asserts none, as
    /// times depend on the machine. Run with `--ignored --nocapture`.
    #[tokio::test(flavor = "multi_thread")]
    #[ignore = "a measurement of minutes, not a check"]
    async fn a_months_report_over_a_million_sales() {
        use till_core::fiscal::payload::{SaleRecordLine, SaleRecordTender, SaleRecordVat};
        use till_core::report::{ReportedSale, assemble, roll_up};

        let sales: usize = std::env::var("TILL_REPORT_SALES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1_000_000);
        let (registers, days, articles) = (16usize, 30usize, 5_000u64);
        let per_session = sales / (registers * days);
        let dir = tempfile::tempdir().unwrap();
        let (_, store) = crate::db::scratch_sqlite_store(dir.path()).await;
        store.migrate().await.unwrap();
        store
            .write(registers, |conn, registers| {
                Box::pin(async move {
                    for register in 0..*registers {
                        query("INSERT INTO registers (register_id, store_id, created_at) VALUES ($1, 's1', 0)")
                            .bind(format!("r{register}"))
                            .execute(&mut *conn)
                            .await?;
                    }
                    Ok(())
                })
            })
            .await
            .unwrap();
        // A linear congruential generator: the same sales on every run.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |below: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % below
        };
        let started = std::time::Instant::now();
        let mut slowest_write = std::time::Duration::ZERO;
        let month: Timestamp = "2026-03-01T07:00:00Z".parse().unwrap();
        for day in 0..days {
            for register in 0..registers {
                let opened = month.as_microsecond() + (day as i64) * 86_400_000_000;
                let session: Vec<ReportedSale> = (0..per_session)
                    .map(|n| {
                        let lines: Vec<SaleRecordLine> = (0..3 + next(8))
                            .map(|l| {
                                let quantity = 1 + next(3) as i64;
                                let net = quantity * (100 + next(5_000) as i64);
                                SaleRecordLine {
                                    line_id: format!("l{l}"),
                                    sku_id: Some(format!("{:064x}", next(articles))),
                                    label: None,
                                    quantity,
                                    unit_price_cents: net / quantity,
                                    vat_rate: [2000, 550, 1000][next(3) as usize],
                                    gross_cents: net,
                                    promotion_cents: 0,
                                    declared_cents: 0,
                                    ticket_cents: 0,
                                    net_cents: net,
                                }
                            })
                            .collect();
                        let total: i64 = lines.iter().map(|l| l.net_cents).sum();
                        let mut vat: Vec<SaleRecordVat> = Vec::new();
                        for line in &lines {
                            match vat.iter_mut().find(|v| v.vat_rate == line.vat_rate) {
                                Some(v) => v.total_cents += line.net_cents,
                                None => vat.push(SaleRecordVat {
                                    vat_rate: line.vat_rate,
                                    total_cents: line.net_cents,
                                    vat_cents: 0,
                                }),
                            }
                        }
                        for v in &mut vat {
                            v.vat_cents = v.total_cents * v.vat_rate / (10_000 + v.vat_rate);
                        }
                        ReportedSale {
                            emitted_at: opened + (n as i64) * 43_200_000_000 / per_session as i64,
                            is_return: next(50) == 0,
                            seller_id: format!("seller-{}", next(40)),
                            item_count: lines.iter().map(|l| l.quantity).sum(),
                            total_cents: total,
                            tenders: vec![SaleRecordTender {
                                tender_id: "p1".into(),
                                method: ["card", "cash", "gift_card"][next(3) as usize].into(),
                                applied_cents: total,
                                presented_cents: total,
                                change_cents: 0,
                                forfeited_cents: 0,
                                reference: None,
                                reference_last4: None,
                                reference_digest: None,
                            }],
                            lines,
                            vat,
                        }
                    })
                    .collect();
                let rollup = roll_up(&session).unwrap();
                let input = (format!("r{register}"), rollup);
                let written = std::time::Instant::now();
                store
                    .write(input, |conn, (register, rollup)| {
                        Box::pin(add_rollup(conn, "s1", register, rollup))
                    })
                    .await
                    .unwrap();
                slowest_write = slowest_write.max(written.elapsed());
            }
        }
        println!(
            "{} sales in {} sessions rolled up and written in {:.1?}; the slowest session's rows written in {:.1?}",
            per_session * registers * days,
            registers * days,
            started.elapsed(),
            slowest_write
        );
        let from: Timestamp = "2026-03-01T00:00:00Z".parse().unwrap();
        let to: Timestamp = "2026-03-31T00:00:00Z".parse().unwrap();
        let month = Period::new(from, to).unwrap();
        let cut = Period::new("2026-03-03T12:00:00Z".parse().unwrap(), to).unwrap();
        let paris = Period::new(
            "2026-03-01T00:00:00+01:00".parse().unwrap(),
            "2026-04-01T00:00:00+02:00".parse().unwrap(),
        )
        .unwrap();
        for (name, period) in [("month", month), ("month from noon", cut), ("Paris month", paris)] {
            for group_by in GroupBy::ALL {
                for (store_id, register_id) in [(None, None), (Some("s1"), None), (None, Some("r1"))] {
                    let scope = ReportScope {
                        store_id: store_id.map(|s| StoreId::parse(s).unwrap()),
                        register_id: register_id.map(|r| RegisterId::parse(r).unwrap()),
                        period,
                    };
                    let started = std::time::Instant::now();
                    let pieces = store.report_pieces(&scope, group_by, ReadAt::Primary).await.unwrap();
                    let report = assemble(group_by, pieces).unwrap();
                    println!(
                        "{name} by {} (store {store_id:?}, register {register_id:?}): {} rows, {} sales, in {:.1?}",
                        group_by.as_str(),
                        report.rows.len(),
                        report.totals.sales_count,
                        started.elapsed()
                    );
                }
            }
        }
        for level in Level::ALL {
            let rows = query("SELECT count(*) AS n FROM report_rollups WHERE level = $1")
                .bind(level.as_str())
                .fetch_one(store.reader())
                .await
                .unwrap();
            println!("{}: {} rows", level.as_str(), rows.try_get::<i64>("n").unwrap());
        }
    }
}
