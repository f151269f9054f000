-- The rest of the NF525 journal: period closures, technical events, receipt reprints and
-- archives, each the business record of a chain entry and, like the entries, append-only.

-- The article's name at the time of the sale, for receipts.
ALTER TABLE sale_lines ADD COLUMN label TEXT;

-- How many times the receipt was printed: the counter concurrent reprints serialize on.
ALTER TABLE sales ADD COLUMN prints INTEGER NOT NULL DEFAULT 0;

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
    closure_seq             INTEGER NOT NULL,
    -- DAY, MONTH, YEAR
    period                  TEXT NOT NULL,
    period_from             TEXT NOT NULL,
    period_to               TEXT NOT NULL,
    ticket_count            INTEGER NOT NULL,
    first_ticket_seq        INTEGER NOT NULL,
    last_ticket_seq         INTEGER NOT NULL,
    last_ticket_signature   TEXT,
    total_cents             INTEGER NOT NULL,
    abs_total_cents         INTEGER NOT NULL,
    grand_total_cents       INTEGER NOT NULL,
    grand_total_abs_cents   INTEGER NOT NULL,
    -- [{vatRate, totalCents, vatCents}]
    vat                     TEXT NOT NULL,
    closed_at               INTEGER NOT NULL,
    PRIMARY KEY (register_id, closure_seq)
);

CREATE TABLE technical_events (
    register_id     TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    code            INTEGER NOT NULL,
    label           TEXT NOT NULL,
    detail          TEXT NOT NULL,
    occurred_at     INTEGER NOT NULL,
    PRIMARY KEY (register_id, seq)
);

CREATE TABLE receipt_prints (
    transaction_id  TEXT NOT NULL REFERENCES sales (transaction_id),
    -- 1 is the original; every later print is a DUPLICATA
    print_no        INTEGER NOT NULL,
    register_id     TEXT NOT NULL,
    operator        TEXT NOT NULL,
    printed_at      INTEGER NOT NULL,
    -- its entry in the duplicate chain, for reprints
    duplicate_seq   INTEGER,
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
    archive_seq     INTEGER NOT NULL,
    made_at         INTEGER NOT NULL
);

CREATE TRIGGER fiscal_closures_no_update BEFORE UPDATE ON fiscal_closures
BEGIN SELECT RAISE(ABORT, 'fiscal closures are append-only'); END;
CREATE TRIGGER fiscal_closures_no_delete BEFORE DELETE ON fiscal_closures
BEGIN SELECT RAISE(ABORT, 'fiscal closures are append-only'); END;
CREATE TRIGGER technical_events_no_update BEFORE UPDATE ON technical_events
BEGIN SELECT RAISE(ABORT, 'technical events are append-only'); END;
CREATE TRIGGER technical_events_no_delete BEFORE DELETE ON technical_events
BEGIN SELECT RAISE(ABORT, 'technical events are append-only'); END;
CREATE TRIGGER receipt_prints_no_update BEFORE UPDATE ON receipt_prints
BEGIN SELECT RAISE(ABORT, 'receipt prints are append-only'); END;
CREATE TRIGGER receipt_prints_no_delete BEFORE DELETE ON receipt_prints
BEGIN SELECT RAISE(ABORT, 'receipt prints are append-only'); END;
CREATE TRIGGER fiscal_archives_no_update BEFORE UPDATE ON fiscal_archives
BEGIN SELECT RAISE(ABORT, 'fiscal archives are append-only'); END;
CREATE TRIGGER fiscal_archives_no_delete BEFORE DELETE ON fiscal_archives
BEGIN SELECT RAISE(ABORT, 'fiscal archives are append-only'); END;
