-- Sales reports (DESIGN.md section 14): each closed session's sales added up once, when it
-- closes, so that a report adds rollups instead of reading every sale. Rows are keyed by UTC
-- quarter hour ("bucket": quarter hours since the Unix epoch): every UTC offset in use is a
-- whole number of quarter hours, so local days and hours of any zone are unions of them. The
-- numbering is the same on both engines (migrations/postgres/0004_reports.sql).

-- A session rolled up, with the first and last quarter hour of its sales. A session without
-- sales has no row.
CREATE TABLE report_sessions (
    session_id      TEXT PRIMARY KEY,
    store_id        TEXT NOT NULL,
    register_id     TEXT NOT NULL,
    first_bucket    INTEGER NOT NULL,
    last_bucket     INTEGER NOT NULL
);

-- A report finds the sessions that sold in its period from the period's start on.
CREATE INDEX report_sessions_by_end ON report_sessions (last_bucket);
CREATE INDEX report_sessions_by_store ON report_sessions (store_id, last_bucket);
CREATE INDEX report_sessions_by_register ON report_sessions (register_id, last_bucket);

-- A session's sales per quarter hour, dimension (`time`, `article`, `seller`, `tender`,
-- `vat`) and key (empty for `time`; an article's id, a seller, a tender method, a VAT rate in
-- hundredths of a percent). Amounts are net of returns; see crates/till-core/src/report.rs.
CREATE TABLE report_buckets (
    session_id      TEXT NOT NULL,
    dimension       TEXT NOT NULL,
    bucket          INTEGER NOT NULL,
    key             TEXT NOT NULL,
    sales_count     INTEGER NOT NULL,
    returns_count   INTEGER NOT NULL,
    item_count      INTEGER NOT NULL,
    total_cents     INTEGER NOT NULL,
    returned_cents  INTEGER NOT NULL,
    gross_cents     INTEGER NOT NULL,
    vat_cents       INTEGER NOT NULL,
    PRIMARY KEY (session_id, dimension, bucket, key)
) WITHOUT ROWID;

-- The same added up over the whole session: what a report reads for a session that sold
-- within its period only, whatever the number of quarter hours.
CREATE TABLE report_totals (
    session_id      TEXT NOT NULL,
    dimension       TEXT NOT NULL,
    key             TEXT NOT NULL,
    sales_count     INTEGER NOT NULL,
    returns_count   INTEGER NOT NULL,
    item_count      INTEGER NOT NULL,
    total_cents     INTEGER NOT NULL,
    returned_cents  INTEGER NOT NULL,
    gross_cents     INTEGER NOT NULL,
    vat_cents       INTEGER NOT NULL,
    PRIMARY KEY (session_id, dimension, key)
) WITHOUT ROWID;

-- Sessions closed before rollups existed: their sales are packed, which SQL cannot read, so
-- each is rolled up by the first report that covers it.
CREATE TABLE report_pending (
    session_id      TEXT PRIMARY KEY
);

INSERT INTO report_pending (session_id)
    SELECT session_id FROM register_sessions WHERE closed_at IS NOT NULL;
