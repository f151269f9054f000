//! The rollups sales reports are added up from (see `till_core::report`): written for each
//! session in the transaction that closes it, read back per period, and computed live from
//! the sales of sessions still open. Sessions closed before rollups existed are rolled up by
//! the first report that covers them.

use crate::db::Store;
use crate::error::StoreError;
use crate::packed;
use crate::sale_detail::SaleDetail;
use crate::sql::{Conn, Param, Query, Row, query};
use till_core::ids::{RegisterId, StoreId};
use till_core::report::{Bucket, Dimension, GroupBy, Measures, Period, Piece, ReportedSale, Rollup};
use till_core::sale::SaleType;
use till_core::store::Timezone;

/// The sales a report covers.
#[derive(Clone, Debug)]
pub struct ReportScope {
    pub store_id: Option<StoreId>,
    pub register_id: Option<RegisterId>,
    pub period: Period,
}

impl ReportScope {
    /// The scope's filters on a table aliased `alias` with `store_id` and `register_id`
    /// columns, numbered from `$first`, and their values.
    fn filters(&self, alias: &str, first: usize) -> (String, Vec<Param>) {
        let mut clause = String::new();
        let mut values = Vec::new();
        let wanted = [
            ("store_id", self.store_id.as_ref().map(StoreId::as_str)),
            ("register_id", self.register_id.as_ref().map(RegisterId::as_str)),
        ];
        for (column, value) in wanted {
            if let Some(value) = value {
                clause.push_str(&format!(" AND {alias}.{column} = ${}", first + values.len()));
                values.push(value.into());
            }
        }
        (clause, values)
    }
}

impl Store {
    /// Rolls up the sessions closed before rollups existed that a report over `scope` covers,
    /// each in a transaction of its own; a session another node rolled up meanwhile is left.
    pub async fn roll_up_pending(&self, scope: &ReportScope) -> Result<(), StoreError> {
        let (filters, values) = scope.filters("rs", 3);
        let mut params: Vec<Param> = vec![
            scope.period.to().as_microsecond().into(),
            scope.period.from().as_microsecond().into(),
        ];
        params.extend(values);
        let pending = Query::with_params(
            format!(
                "SELECT p.session_id FROM report_pending p \
                 JOIN register_sessions rs ON rs.session_id = p.session_id \
                 WHERE rs.opened_at < $1 AND rs.closed_at >= $2{filters}"
            ),
            params,
        )
        .fetch_all(self.reader())
        .await?;
        for row in pending {
            let session_id: String = row.try_get("session_id")?;
            self.write(session_id, |conn, id| Box::pin(roll_up_pending_session(conn, id)))
                .await?;
        }
        Ok(())
    }

    /// The pieces of a report grouped by `group_by` over `scope`: the rollups of the sessions
    /// closed, and rollups computed from the sales of the sessions still open.
    pub async fn report_pieces(&self, scope: &ReportScope, group_by: GroupBy) -> Result<Vec<Piece>, StoreError> {
        let scope = scope.clone();
        self.long_read(move |conn| Box::pin(async move { read_pieces(conn, &scope, group_by).await }))
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

/// Writes the rollup of every sale of a closed session: in the closing's transaction, so that
/// a report finds a session either open or rolled up, never both or neither.
pub(crate) async fn roll_up_session(
    conn: &mut Conn,
    session_id: &str,
    store_id: &str,
    register_id: &str,
) -> Result<(), StoreError> {
    let rollup = session_rollup(conn, session_id, None).await?;
    write_rollup(conn, session_id, store_id, register_id, &rollup).await
}

/// Writes a closed session's rollup: its span, its rows per quarter hour and its whole rows.
async fn write_rollup(
    conn: &mut Conn,
    session_id: &str,
    store_id: &str,
    register_id: &str,
    rollup: &Rollup,
) -> Result<(), StoreError> {
    let Some((first, last)) = rollup.span() else {
        return Ok(());
    };
    query(
        "INSERT INTO report_sessions (session_id, store_id, register_id, first_bucket, last_bucket) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(session_id)
    .bind(store_id)
    .bind(register_id)
    .bind(first.index())
    .bind(last.index())
    .execute(&mut *conn)
    .await?;
    let buckets: Vec<Vec<Param>> = rollup
        .rows()
        .map(|(dimension, bucket, key, measures)| {
            let mut row: Vec<Param> = vec![
                session_id.into(),
                dimension.as_str().into(),
                bucket.index().into(),
                key.into(),
            ];
            row.extend(measure_params(measures));
            row
        })
        .collect();
    insert_rows(conn, "report_buckets (session_id, dimension, bucket, key", buckets).await?;
    let whole = rollup.whole().map_err(|_| past_largest())?;
    let totals: Vec<Vec<Param>> = whole
        .iter()
        .map(|((dimension, key), measures)| {
            let mut row: Vec<Param> = vec![session_id.into(), dimension.as_str().into(), key.into()];
            row.extend(measure_params(measures));
            row
        })
        .collect();
    insert_rows(conn, "report_totals (session_id, dimension, key", totals).await
}

const MEASURES: &str = "sales_count, returns_count, item_count, total_cents, returned_cents, gross_cents, vat_cents";

fn measure_params(measures: &Measures) -> [Param; 7] {
    [
        measures.sales_count.into(),
        measures.returns_count.into(),
        measures.item_count.into(),
        measures.total_cents.into(),
        measures.returned_cents.into(),
        measures.gross_cents.into(),
        measures.vat_cents.into(),
    ]
}

/// Rows a statement inserts at most: well within both engines' limits on values.
const ROWS_PER_INSERT: usize = 200;

/// Inserts `rows` into `table_and_keys` (the table and the columns before the measures).
async fn insert_rows(conn: &mut Conn, table_and_keys: &str, rows: Vec<Vec<Param>>) -> Result<(), StoreError> {
    for chunk in rows.chunks(ROWS_PER_INSERT) {
        let mut sql = format!("INSERT INTO {table_and_keys}, {MEASURES}) VALUES ");
        let mut params = Vec::new();
        for (index, row) in chunk.iter().enumerate() {
            let placeholders: Vec<String> = (1..=row.len()).map(|n| format!("${}", params.len() + n)).collect();
            if index > 0 {
                sql.push_str(", ");
            }
            sql.push_str(&format!("({})", placeholders.join(", ")));
            params.extend(row.iter().cloned());
        }
        Query::with_params(sql, params).execute(&mut *conn).await?;
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

/// The sums of a rollup read, aliased as the measures' columns.
fn sums(alias: &str) -> String {
    MEASURES
        .split(", ")
        .map(|column| format!("CAST(SUM({alias}.{column}) AS BIGINT) AS {column}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sessions still open that may have sold before `$n`: their rollups are computed from
/// their sales. In the same statement as the closed sessions' rollups, so that a session that
/// closes meanwhile is counted once.
fn open_sessions(before: usize, filters: &str) -> String {
    let zeros = MEASURES
        .split(", ")
        .map(|column| format!("0 AS {column}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "SELECT CAST(NULL AS TEXT) AS dimension, CAST(NULL AS TEXT) AS key, CAST(NULL AS BIGINT) AS bucket, \
             st.timezone AS timezone, rs.session_id AS open_session, {zeros} \
         FROM register_sessions rs LEFT JOIN stores st ON st.store_id = rs.store_id \
         WHERE rs.closed_at IS NULL AND rs.opened_at < ${before}{filters}"
    )
}

/// The statement of a report by day or hour: the closed sessions' quarter hours in the
/// period, per store, then the open sessions. `$1`, `$2`: the period's first quarter hour and
/// the first after it; `$3`: its end in microseconds; then the scope's filters.
fn by_quarter_hour(scope: &ReportScope) -> (String, Vec<Param>) {
    let (sessions, mut values) = scope.filters("s", 4);
    let (open, _) = scope.filters("rs", 4);
    // Grouped by quarter hour first: grouped by store first, SQLite would rather read every
    // session in the store index's order than the period's sessions only.
    let sql = format!(
        "SELECT b.dimension AS dimension, '' AS key, b.bucket AS bucket, st.timezone AS timezone, \
             CAST(NULL AS TEXT) AS open_session, {sums} \
         FROM report_sessions s \
         JOIN report_buckets b ON b.session_id = s.session_id AND b.dimension = 'time' \
             AND b.bucket >= $1 AND b.bucket < $2 \
         LEFT JOIN stores st ON st.store_id = s.store_id \
         WHERE s.last_bucket >= $1 AND s.first_bucket < $2{sessions} \
         GROUP BY b.bucket, s.store_id, st.timezone, b.dimension \
         UNION ALL {open}",
        sums = sums("b"),
        open = open_sessions(3, &open),
    );
    let (from, to) = scope.period.buckets();
    let mut params: Vec<Param> = vec![
        from.index().into(),
        to.index().into(),
        scope.period.to().as_microsecond().into(),
    ];
    params.append(&mut values);
    (sql, params)
}

/// The statement of a report by key: per key of `$1` and of the time dimension (the totals),
/// the whole rows of the sessions that sold within the period only, and the quarter hours in
/// the period of the sessions that sold across its start or end; then the open sessions.
/// `$2`, `$3`: the period's first quarter hour and the first after it; `$4`: its end in
/// microseconds; then the scope's filters.
fn by_key(scope: &ReportScope, dimension: Dimension) -> (String, Vec<Param>) {
    let (sessions, mut values) = scope.filters("s", 5);
    let (open, _) = scope.filters("rs", 5);
    let sql = format!(
        "SELECT p.dimension AS dimension, p.key AS key, CAST(NULL AS BIGINT) AS bucket, \
             CAST(NULL AS TEXT) AS timezone, CAST(NULL AS TEXT) AS open_session, {sums} \
         FROM ( \
             SELECT t.dimension, t.key, {measures_t} FROM report_sessions s \
             JOIN report_totals t ON t.session_id = s.session_id AND t.dimension IN ($1, 'time') \
             WHERE s.last_bucket >= $2 AND s.last_bucket < $3 AND s.first_bucket >= $2{sessions} \
             UNION ALL \
             SELECT b.dimension, b.key, {measures_b} FROM report_sessions s \
             JOIN report_buckets b ON b.session_id = s.session_id AND b.dimension IN ($1, 'time') \
                 AND b.bucket >= $2 AND b.bucket < $3 \
             WHERE s.last_bucket >= $2 AND s.first_bucket < $3 \
                 AND (s.first_bucket < $2 OR s.last_bucket >= $3){sessions} \
         ) p \
         GROUP BY p.dimension, p.key \
         UNION ALL {open}",
        sums = sums("p"),
        measures_t = prefixed("t"),
        measures_b = prefixed("b"),
        open = open_sessions(4, &open),
    );
    let (from, to) = scope.period.buckets();
    let mut params: Vec<Param> = vec![
        dimension.as_str().into(),
        from.index().into(),
        to.index().into(),
        scope.period.to().as_microsecond().into(),
    ];
    params.append(&mut values);
    (sql, params)
}

fn prefixed(alias: &str) -> String {
    MEASURES
        .split(", ")
        .map(|column| format!("{alias}.{column}"))
        .collect::<Vec<_>>()
        .join(", ")
}

async fn read_pieces(conn: &mut Conn, scope: &ReportScope, group_by: GroupBy) -> Result<Vec<Piece>, StoreError> {
    let (sql, params) = if group_by.is_time() {
        by_quarter_hour(scope)
    } else {
        by_key(scope, group_by.dimension())
    };
    let mut pieces = Vec::new();
    let mut open = Vec::new();
    for row in Query::with_params(sql, params).fetch_all(&mut *conn).await? {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{migrated_scratch_database, query_plan};
    use jiff::Timestamp;

    fn scope(store: Option<&str>, register: Option<&str>) -> ReportScope {
        let from: Timestamp = "2026-03-01T00:00:00Z".parse().unwrap();
        let to: Timestamp = "2026-04-01T00:00:00Z".parse().unwrap();
        ReportScope {
            store_id: store.map(|s| StoreId::parse(s).unwrap()),
            register_id: register.map(|r| RegisterId::parse(r).unwrap()),
            period: Period::new(from, to).unwrap(),
        }
    }

    /// Every step of a report's plan on SQLite searches an index: the sessions of the period
    /// by where they end, their rollups by key, the open sessions by the index of open
    /// sessions, never a scan of every session or every rollup.
    #[tokio::test]
    async fn reports_read_the_periods_rollups_through_indexes() {
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
            for (sql, params) in [by_quarter_hour(&scope), by_key(&scope, Dimension::Article)] {
                let values: Vec<&str> = params.iter().map(|_| "1").collect();
                let steps = query_plan(&conn, &sql, &values);
                let scans: Vec<&String> = steps
                    .iter()
                    .filter(|step| step.starts_with("SCAN") && !step.starts_with("SCAN p"))
                    .collect();
                assert_eq!(
                    scans,
                    ["SCAN rs USING INDEX register_sessions_one_open"]
                        .iter()
                        .filter(|_| register.is_none())
                        .collect::<Vec<_>>(),
                    "{store:?} {register:?}: {steps:#?}"
                );
                let sessions = steps
                    .iter()
                    .filter(|step| step.starts_with("SEARCH s USING INDEX report_sessions_by_"))
                    .count();
                assert!(sessions >= 1, "{steps:#?}");
                assert!(
                    steps
                        .iter()
                        .filter(|step| step.starts_with("SEARCH b") || step.starts_with("SEARCH t"))
                        .all(|step| step.contains("USING PRIMARY KEY (session_id=? AND dimension=?")),
                    "{steps:#?}"
                );
            }
        }
        let live = query_plan(
            &conn,
            select_sales!("session_id = $1 AND emitted_at >= $2 AND emitted_at < $3"),
            &["ses_1", "1", "2"],
        );
        assert_eq!(live, ["SEARCH sales USING INDEX sales_by_session (session_id=?)"]);
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
        // A linear congruential generator: the same sales on every run.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |below: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % below
        };
        let started = std::time::Instant::now();
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
                            }],
                            lines,
                            vat,
                        }
                    })
                    .collect();
                let rollup = roll_up(&session).unwrap();
                let input = (format!("ses_{day}_{register}"), format!("r{register}"), rollup);
                store
                    .write(input, |conn, (session, register, rollup)| {
                        Box::pin(write_rollup(conn, session, "s1", register, rollup))
                    })
                    .await
                    .unwrap();
            }
        }
        println!(
            "{} sales in {} sessions rolled up and written in {:.1?}",
            per_session * registers * days,
            registers * days,
            started.elapsed()
        );
        let from: Timestamp = "2026-03-01T00:00:00Z".parse().unwrap();
        let to: Timestamp = "2026-03-31T00:00:00Z".parse().unwrap();
        let month = Period::new(from, to).unwrap();
        let cut = Period::new("2026-03-03T12:00:00Z".parse().unwrap(), to).unwrap();
        for (name, period) in [("month", month), ("month from noon", cut)] {
            for group_by in GroupBy::ALL {
                for store_id in [None, Some("s1")] {
                    let scope = ReportScope {
                        store_id: store_id.map(|s| StoreId::parse(s).unwrap()),
                        register_id: None,
                        period,
                    };
                    let started = std::time::Instant::now();
                    let pieces = store.report_pieces(&scope, group_by).await.unwrap();
                    let report = assemble(group_by, pieces).unwrap();
                    println!(
                        "{name} by {} (store {store_id:?}): {} rows, {} sales, in {:.1?}",
                        group_by.as_str(),
                        report.rows.len(),
                        report.totals.sales_count,
                        started.elapsed()
                    );
                }
            }
        }
        for table in ["report_sessions", "report_buckets", "report_totals"] {
            let rows = query(format!("SELECT count(*) AS n FROM {table}"))
                .fetch_one(store.reader())
                .await
                .unwrap();
            println!("{table}: {} rows", rows.try_get::<i64>("n").unwrap());
        }
    }
}
