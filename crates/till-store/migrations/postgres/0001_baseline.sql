-- The whole schema as of the first release. Every instant is BIGINT microseconds since the
-- Unix epoch (UTC); every amount is BIGINT minor units; booleans are BIGINT 0/1 so that the
-- SQL is the same on both engines. SQLite's baseline has the same tables, columns and
-- numbering (migrations/sqlite/0001_baseline.sql).

-- The store network, the price authority, stock, staff, customers, coupons, registers.

CREATE TABLE stores (
    store_id    TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    timezone    TEXT NOT NULL,
    currency    TEXT NOT NULL,
    siret       TEXT,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);

CREATE TABLE skus (
    sku_id          TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    price_cents     BIGINT NOT NULL CHECK (price_cents >= 0),
    -- hundredths of a percent: 2000 is 20 %
    vat_rate        BIGINT NOT NULL CHECK (vat_rate BETWEEN 0 AND 10000),
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);

-- Bumped in the same transaction as every catalog write: each node keeps the articles it
-- prices in memory and forgets them when this revision has moved.
CREATE TABLE catalog_revision (
    singleton   BIGINT PRIMARY KEY CHECK (singleton = 1),
    revision    BIGINT NOT NULL
);
INSERT INTO catalog_revision (singleton, revision) VALUES (1, 0);

-- No foreign key to stores: while the network is empty a sale names any store, and its stock
-- still moves. Stock may go negative: goods already in the customer's hands are never refused.
CREATE TABLE stock (
    store_id    TEXT NOT NULL,
    sku_id      TEXT NOT NULL REFERENCES skus (sku_id),
    on_hand     BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (store_id, sku_id)
);

-- Stock moves of sales not yet added into `stock`. A sale appends its moves here instead of
-- updating each article's row: the update would lock the row until the sale committed, so
-- every sale of a popular article would wait for the one before, on every node. Each node adds
-- the moves into `stock` about once a second (src/engine/postgres/stock_fold.rs); a level read
-- meanwhile is the row plus the moves still here. Rows live about a second: vacuum as soon as
-- the launcher comes by, not at a fifth of a table that is nearly always empty.
CREATE TABLE stock_moves (
    store_id    TEXT NOT NULL,
    sku_id      TEXT NOT NULL,
    delta       BIGINT NOT NULL,
    moved_at    BIGINT NOT NULL
);
ALTER TABLE stock_moves SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000);

CREATE TABLE staff (
    subject                     TEXT PRIMARY KEY,
    display_name                TEXT NOT NULL,
    role                        TEXT NOT NULL CHECK (role IN ('cashier', 'manager', 'admin')),
    pin_hash                    TEXT NOT NULL,
    -- grants beyond the role, space-separated
    permissions                 TEXT NOT NULL,
    -- both NULL: no explicit limit (role decides)
    discount_limit_bps          BIGINT,
    discount_limit_cents        BIGINT,
    grants_synced_at            BIGINT NOT NULL,
    created_at                  BIGINT NOT NULL,
    updated_at                  BIGINT NOT NULL,
    CHECK ((discount_limit_bps IS NULL) = (discount_limit_cents IS NULL))
);

-- Wrong-PIN accounting per subject, known or not, so an unknown subject behaves like a known one.
CREATE TABLE pin_guards (
    subject             TEXT PRIMARY KEY,
    -- attempts reserved since the last success or lock expiry
    attempts            BIGINT NOT NULL,
    locked_until        BIGINT,
    updated_at          BIGINT NOT NULL
);

CREATE TABLE customers (
    customer_id     TEXT PRIMARY KEY,
    points          BIGINT NOT NULL,
    enrolled_at     BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);

CREATE TABLE coupons (
    code                TEXT PRIMARY KEY,
    percent_bps         BIGINT,
    amount_cents        BIGINT,
    min_basket_cents    BIGINT NOT NULL,
    valid_from          BIGINT,
    valid_until         BIGINT,
    max_redemptions     BIGINT,
    redemptions         BIGINT NOT NULL DEFAULT 0,
    active              BIGINT NOT NULL,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL,
    CHECK ((percent_bps IS NULL) <> (amount_cents IS NULL)),
    CHECK (max_redemptions IS NULL OR redemptions <= max_redemptions)
);

-- A till belongs to one store for life: its fiscal chains are that store's. Where its periods
-- stand, as dates local to the store's time zone: open_day, the day of the tickets not yet
-- closed; closed_through, no sale may be booked on or before this day; last_*, the latest
-- closures, which decide the next ones.
CREATE TABLE registers (
    register_id         TEXT PRIMARY KEY,
    store_id            TEXT NOT NULL,
    created_at          BIGINT NOT NULL,
    open_day            TEXT,
    closed_through      TEXT,
    last_day_closed     TEXT,
    last_month_closed   TEXT,
    last_year_closed    TEXT
);

CREATE TABLE register_sessions (
    session_id          TEXT PRIMARY KEY,
    -- SHA-256 of the opaque bearer token; the token itself is never stored
    token_hash          BYTEA NOT NULL UNIQUE,
    store_id            TEXT NOT NULL,
    register_id         TEXT NOT NULL REFERENCES registers (register_id),
    cashier_subject     TEXT NOT NULL REFERENCES staff (subject),
    opening_float_cents BIGINT NOT NULL,
    opened_at           BIGINT NOT NULL,
    expires_at          BIGINT NOT NULL,
    closed_at           BIGINT,
    z_report            TEXT,
    -- the closure entry (Z report) of the session, once it was sealed
    closure_seq         BIGINT
);

-- One open session per till at a time.
CREATE UNIQUE INDEX register_sessions_one_open ON register_sessions (register_id) WHERE closed_at IS NULL;

-- Sales as committed. A sale's answer (the 201 body, replayed byte for byte) and its document
-- (lines, tenders, VAT and reductions in the layout of its sealed record) are compressed
-- together into `packed` (see src/packed.rs); `response` is left empty and `detail` null.
-- A return is a sale of kind 'return' with negative amounts that names the sale it corrects
-- (original_*); on an original sale, refunded_cents and points_returned add up what its
-- returns took back, and returned_units counts the units returned of each line (a JSON array
-- in line order, NULL until the first return), so that no unit is returned twice.
CREATE TABLE sales (
    transaction_id          TEXT PRIMARY KEY,
    event_id                TEXT NOT NULL UNIQUE,
    -- SHA-256 (hex) of the canonical request: what idempotency compares
    fingerprint             TEXT NOT NULL,
    kind                    TEXT NOT NULL,
    number                  TEXT NOT NULL,
    store_id                TEXT NOT NULL,
    seller_id               TEXT NOT NULL,
    customer_id             TEXT,
    session_id              TEXT NOT NULL REFERENCES register_sessions (session_id),
    register_id             TEXT NOT NULL,
    subtotal_cents          BIGINT NOT NULL,
    total_cents             BIGINT NOT NULL,
    item_count              BIGINT NOT NULL,
    line_count              BIGINT NOT NULL,
    change_cents            BIGINT NOT NULL,
    points_earned           BIGINT NOT NULL,
    coupon_code             TEXT,
    issued_at               BIGINT,
    emitted_at              BIGINT NOT NULL,
    fiscal_seq              BIGINT NOT NULL,
    response                TEXT NOT NULL,
    -- how many times the receipt was printed: the counter concurrent reprints serialize on
    prints                  BIGINT NOT NULL DEFAULT 0,
    original_transaction_id TEXT,
    original_register_id    TEXT,
    original_seq            BIGINT,
    -- the credit note (avoir) number of a return
    credit_note             TEXT,
    refunded_cents          BIGINT NOT NULL DEFAULT 0,
    points_returned         BIGINT NOT NULL DEFAULT 0,
    detail                  TEXT,
    returned_units          TEXT,
    packed                  BYTEA
);
-- Already compressed: the server need not try again when a row grows past its threshold.
ALTER TABLE sales ALTER COLUMN packed SET STORAGE EXTERNAL;
CREATE INDEX sales_by_session ON sales (session_id);
-- The returns of one sale. A register's tickets are found through the journal's key
-- (register, kind, sequence), so `sales` keeps no index of its own on them.
CREATE INDEX sales_by_original ON sales (original_transaction_id);

-- Tables of a sale's parts from before its document: nothing writes or reads them.
CREATE TABLE sale_lines (
    transaction_id      TEXT NOT NULL REFERENCES sales (transaction_id),
    line_no             BIGINT NOT NULL,
    line_id             TEXT NOT NULL,
    sku_id              TEXT,
    quantity            BIGINT NOT NULL,
    unit_price_cents    BIGINT NOT NULL,
    vat_rate            BIGINT NOT NULL,
    gross_cents         BIGINT NOT NULL,
    promotion_cents     BIGINT NOT NULL,
    declared_cents      BIGINT NOT NULL,
    ticket_cents        BIGINT NOT NULL,
    net_cents           BIGINT NOT NULL,
    label               TEXT,
    returned_quantity   BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (transaction_id, line_no)
);

CREATE TABLE sale_tenders (
    transaction_id  TEXT NOT NULL REFERENCES sales (transaction_id),
    tender_no       BIGINT NOT NULL,
    tender_id       TEXT NOT NULL,
    method          TEXT NOT NULL,
    applied_cents   BIGINT NOT NULL,
    presented_cents BIGINT NOT NULL,
    change_cents    BIGINT NOT NULL,
    forfeited_cents BIGINT NOT NULL,
    PRIMARY KEY (transaction_id, tender_no)
);

CREATE TABLE sale_vat (
    transaction_id  TEXT NOT NULL REFERENCES sales (transaction_id),
    vat_rate        BIGINT NOT NULL,
    total_cents     BIGINT NOT NULL,
    vat_cents       BIGINT NOT NULL,
    PRIMARY KEY (transaction_id, vat_rate)
);

CREATE TABLE sale_adjustments (
    transaction_id  TEXT NOT NULL REFERENCES sales (transaction_id),
    adjustment_no   BIGINT NOT NULL,
    source          TEXT NOT NULL,
    source_id       TEXT NOT NULL,
    label           TEXT,
    amount_cents    BIGINT NOT NULL,
    PRIMARY KEY (transaction_id, adjustment_no)
);

-- The NF525 journal: chains of signed entries per register, and the business records they
-- seal, all append-only. Inalterability is the database's rule, not only the code's.

-- Public keys that ever signed the journal, by RFC 7638 thumbprint. A published key stays
-- published, unchanged: every entry it signed is verified with it.
CREATE TABLE fiscal_keys (
    key_id      TEXT PRIMARY KEY,
    algorithm   TEXT NOT NULL,
    public_jwk  TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

-- The head of each chain: its last sequence and signature, the row every append locks, and how
-- many closings held it shut. Closings that must let no ticket in while they run (a session's
-- Z report, a period closed early) take the ticket chain's head and give it back unchanged,
-- counting the hold here. A node that commits a sale in one statement, predicting the head from
-- its own last sale, checks this count with the sequence: a hold in between sends the sale down
-- the checked path, which sees what the closing wrote.
CREATE TABLE fiscal_heads (
    register_id     TEXT NOT NULL,
    kind            TEXT NOT NULL,
    last_seq        BIGINT NOT NULL,
    last_signature  TEXT,
    holds           BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (register_id, kind)
);

CREATE TABLE fiscal_entries (
    register_id         TEXT NOT NULL,
    kind                TEXT NOT NULL,
    seq                 BIGINT NOT NULL CHECK (seq >= 1),
    -- the exact string that was signed
    payload             TEXT NOT NULL,
    signature           TEXT NOT NULL,
    previous_signature  TEXT,
    -- No foreign key to fiscal_keys: checking it would take a share lock on the key's row, and
    -- as every register's sales seal under the same key, overlapping sales would make
    -- PostgreSQL create a MultiXact for nearly every sale. The store publishes a key before it
    -- signs with it, and `till fiscal verify` reports an entry whose key is unknown.
    key_id              TEXT NOT NULL,
    algorithm           TEXT NOT NULL,
    -- the business record sealed: a transaction id, a session id...
    reference           TEXT NOT NULL,
    created_at          BIGINT NOT NULL,
    PRIMARY KEY (register_id, kind, seq)
);

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

CREATE FUNCTION fiscal_keys_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'fiscal keys are append-only';
END;
$$;
CREATE TRIGGER fiscal_keys_no_change BEFORE UPDATE OR DELETE ON fiscal_keys
    FOR EACH ROW EXECUTE FUNCTION fiscal_keys_append_only();
CREATE TRIGGER fiscal_keys_no_truncate BEFORE TRUNCATE ON fiscal_keys
    FOR EACH STATEMENT EXECUTE FUNCTION fiscal_keys_append_only();

CREATE FUNCTION fiscal_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'fiscal entries are append-only';
END;
$$;
CREATE TRIGGER fiscal_entries_no_change BEFORE UPDATE OR DELETE ON fiscal_entries
    FOR EACH ROW EXECUTE FUNCTION fiscal_entries_append_only();
CREATE TRIGGER fiscal_entries_no_truncate BEFORE TRUNCATE ON fiscal_entries
    FOR EACH STATEMENT EXECUTE FUNCTION fiscal_entries_append_only();
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

-- Ends a batch of writes that must all land: raises, and so undoes the whole statement, when
-- a required write changed no row. A batch sent outside a transaction has no other way back.
CREATE FUNCTION till_all_written(fewest BIGINT) RETURNS BIGINT LANGUAGE plpgsql AS $$
BEGIN
    IF fewest = 0 THEN
        RAISE EXCEPTION 'a required write changed no row' USING ERRCODE = 'TL001';
    END IF;
    RETURN fewest;
END;
$$;

-- Manager elevation: single-use grants, the per-manager rate limiter, and the audit trail of
-- every grant issued, spent or refused and every lockout.

CREATE TABLE elevation_grants (
    grant_id        TEXT PRIMARY KEY,
    -- SHA-256 of the pos_el_ token; the token itself is never stored
    token_hash      BYTEA NOT NULL UNIQUE,
    manager_subject TEXT NOT NULL REFERENCES staff (subject),
    session_id      TEXT NOT NULL REFERENCES register_sessions (session_id),
    register_id     TEXT NOT NULL,
    cashier_subject TEXT NOT NULL,
    operation       TEXT NOT NULL CHECK (operation IN ('discount.line', 'discount.ticket')),
    scope           TEXT NOT NULL,
    amount_cents    BIGINT,
    percent_bps     BIGINT,
    issued_at       BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL,
    spent_at        BIGINT,
    -- the transaction id of the sale that spent it
    spent_by        TEXT
);

-- Fixed-window attempt counter per manager subject (known or not).
CREATE TABLE elevation_rate (
    subject         TEXT PRIMARY KEY,
    window_start    BIGINT NOT NULL,
    attempts        BIGINT NOT NULL
);

CREATE TABLE elevation_events (
    event_id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    occurred_at     BIGINT NOT NULL,
    -- issued, spent, refused, locked_out, rate_limited
    outcome         TEXT NOT NULL,
    -- the refusal's code, when refused
    code            TEXT,
    manager_subject TEXT NOT NULL,
    session_id      TEXT,
    register_id     TEXT,
    cashier_subject TEXT,
    operation       TEXT,
    amount_cents    BIGINT,
    percent_bps     BIGINT,
    grant_id        TEXT,
    transaction_id  TEXT
);
CREATE INDEX elevation_events_by_manager ON elevation_events (manager_subject, occurred_at);
CREATE INDEX elevation_events_by_register ON elevation_events (register_id, occurred_at);

-- Promotion rules. The revision is bumped in the same transaction as every promotion write:
-- nodes compare it with the revision their cache was built from.

CREATE TABLE promotions (
    promotion_id    TEXT PRIMARY KEY,
    -- the whole rule as JSON, `active` included
    rule            TEXT NOT NULL,
    -- bumped by every write: the ETag of the rule
    version         BIGINT NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);

CREATE TABLE promotion_revision (
    singleton   BIGINT PRIMARY KEY CHECK (singleton = 1),
    revision    BIGINT NOT NULL
);
INSERT INTO promotion_revision (singleton, revision) VALUES (1, 0);
