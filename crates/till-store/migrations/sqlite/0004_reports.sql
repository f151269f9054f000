-- Sales reports (DESIGN.md section 14): each closed session's sales added up once, in the
-- transaction that closes it, so that a report adds rollups up instead of reading every sale.
-- Time is cut into UTC quarter hours ("bucket": quarter hours since the Unix epoch): every UTC
-- offset in use is a whole number of quarter hours, so local days and hours of any zone are
-- unions of them. The numbering is the same on both engines
-- (migrations/postgres/0004_reports.sql); see crates/till-store/src/sales_report.rs.

-- A closing adds its session's sales to four levels of rows:
--   `register_quarter` and `register_day`: the scope is a register; per quarter hour, per UTC day;
--   `store_hour` and `store_day`: the scope is a store; per UTC hour, per UTC day.
-- `bucket` is the first quarter hour of the row's span. `dimension` is `time`, `article`,
-- `seller`, `tender` or `vat`; `key` is empty for `time`, else an article's id, a seller, a
-- tender method or a VAT rate in hundredths of a percent. Amounts are net of returns (see
-- crates/till-core/src/report.rs); `store_id` is the store of the row's register or the store.
CREATE TABLE report_rollups (
    level           TEXT NOT NULL,
    scope           TEXT NOT NULL,
    dimension       TEXT NOT NULL,
    bucket          INTEGER NOT NULL,
    key             TEXT NOT NULL,
    store_id        TEXT NOT NULL,
    sales_count     INTEGER NOT NULL,
    returns_count   INTEGER NOT NULL,
    item_count      INTEGER NOT NULL,
    total_cents     INTEGER NOT NULL,
    returned_cents  INTEGER NOT NULL,
    gross_cents     INTEGER NOT NULL,
    vat_cents       INTEGER NOT NULL,
    PRIMARY KEY (level, scope, dimension, bucket, key)
) WITHOUT ROWID;

-- Sessions closed before rollups existed: their sales are packed, which SQL cannot read, so
-- each is rolled up by the first report that covers it.
CREATE TABLE report_pending (
    session_id      TEXT PRIMARY KEY
);

INSERT INTO report_pending (session_id)
    SELECT session_id FROM register_sessions WHERE closed_at IS NOT NULL;
