-- The rest of the NF525 journal: period closures, technical events, receipt reprints and
-- archives, each the business record of a chain entry and, like the entries, append-only.

-- The article's name at the time of the sale, for receipts.
ALTER TABLE sale_lines ADD COLUMN label TEXT;

-- How many times the receipt was printed: the counter concurrent reprints serialize on.
ALTER TABLE sales ADD COLUMN prints BIGINT NOT NULL DEFAULT 0;

-- Where a register's periods stand. Dates are local to the store's time zone.
-- open_day: the day of the tickets not yet closed; closed_through: no sale may be booked on or
-- before this day; last_*: the latest closures, which decide the next ones.
ALTER TABLE registers ADD COLUMN open_day TEXT;
ALTER TABLE registers ADD COLUMN closed_through TEXT;
ALTER TABLE registers ADD COLUMN last_day_closed TEXT;
ALTER TABLE registers ADD COLUMN last_month_closed TEXT;
ALTER TABLE registers ADD COLUMN last_year_closed TEXT;

CREATE TABLE fiscal_closures (
    register_id             TEXT NOT NULL,
    -- its entry in the register's closure chain
    closure_seq             BIGINT NOT NULL,
    -- DAY, MONTH, YEAR
    period                  TEXT NOT NULL,
    period_from             TEXT NOT NULL,
    period_to               TEXT NOT NULL,
    ticket_count            BIGINT NOT NULL,
    first_ticket_seq        BIGINT NOT NULL,
    last_ticket_seq         BIGINT NOT NULL,
    last_ticket_signature   TEXT,
    total_cents             BIGINT NOT NULL,
    abs_total_cents         BIGINT NOT NULL,
    grand_total_cents       BIGINT NOT NULL,
    grand_total_abs_cents   BIGINT NOT NULL,
    -- [{vatRate, totalCents, vatCents}]
    vat                     TEXT NOT NULL,
    closed_at               BIGINT NOT NULL,
    PRIMARY KEY (register_id, closure_seq)
);

CREATE TABLE technical_events (
    register_id     TEXT NOT NULL,
    seq             BIGINT NOT NULL,
    code            BIGINT NOT NULL,
    label           TEXT NOT NULL,
    detail          TEXT NOT NULL,
    occurred_at     BIGINT NOT NULL,
    PRIMARY KEY (register_id, seq)
);

CREATE TABLE receipt_prints (
    transaction_id  TEXT NOT NULL REFERENCES sales (transaction_id),
    -- 1 is the original; every later print is a DUPLICATA
    print_no        BIGINT NOT NULL,
    register_id     TEXT NOT NULL,
    operator        TEXT NOT NULL,
    printed_at      BIGINT NOT NULL,
    -- its entry in the duplicate chain, for reprints
    duplicate_seq   BIGINT,
    PRIMARY KEY (transaction_id, print_no)
);

CREATE TABLE fiscal_archives (
    archive_id      TEXT PRIMARY KEY,
    register_id     TEXT NOT NULL,
    period_from     TEXT NOT NULL,
    period_to       TEXT NOT NULL,
    sha256          TEXT NOT NULL,
    -- the archive file, byte for byte
    document        TEXT NOT NULL,
    archive_seq     BIGINT NOT NULL,
    made_at         BIGINT NOT NULL
);

CREATE TRIGGER fiscal_closures_no_change BEFORE UPDATE OR DELETE ON fiscal_closures
    FOR EACH ROW EXECUTE FUNCTION fiscal_entries_append_only();
CREATE TRIGGER fiscal_closures_no_truncate BEFORE TRUNCATE ON fiscal_closures
    FOR EACH STATEMENT EXECUTE FUNCTION fiscal_entries_append_only();
CREATE TRIGGER technical_events_no_change BEFORE UPDATE OR DELETE ON technical_events
    FOR EACH ROW EXECUTE FUNCTION fiscal_entries_append_only();
CREATE TRIGGER technical_events_no_truncate BEFORE TRUNCATE ON technical_events
    FOR EACH STATEMENT EXECUTE FUNCTION fiscal_entries_append_only();
CREATE TRIGGER receipt_prints_no_change BEFORE UPDATE OR DELETE ON receipt_prints
    FOR EACH ROW EXECUTE FUNCTION fiscal_entries_append_only();
CREATE TRIGGER receipt_prints_no_truncate BEFORE TRUNCATE ON receipt_prints
    FOR EACH STATEMENT EXECUTE FUNCTION fiscal_entries_append_only();
CREATE TRIGGER fiscal_archives_no_change BEFORE UPDATE OR DELETE ON fiscal_archives
    FOR EACH ROW EXECUTE FUNCTION fiscal_entries_append_only();
CREATE TRIGGER fiscal_archives_no_truncate BEFORE TRUNCATE ON fiscal_archives
    FOR EACH STATEMENT EXECUTE FUNCTION fiscal_entries_append_only();
