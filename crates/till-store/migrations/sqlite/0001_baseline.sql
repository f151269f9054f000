-- The whole schema as of the first release. Every instant is INTEGER microseconds since the
-- Unix epoch (UTC); every amount is INTEGER minor units; booleans are INTEGER 0/1 so that the
-- SQL is the same on both engines. PostgreSQL's baseline has the same tables, columns and
-- numbering (migrations/postgres/0001_baseline.sql).

-- The store network, the price authority, stock, staff, customers, coupons, registers.

CREATE TABLE stores (
    store_id    TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    timezone    TEXT NOT NULL,
    currency    TEXT NOT NULL,
    siret       TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE skus (
    sku_id          TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    price_cents     INTEGER NOT NULL CHECK (price_cents >= 0),
    -- hundredths of a percent: 2000 is 20 %
    vat_rate        INTEGER NOT NULL CHECK (vat_rate BETWEEN 0 AND 10000),
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);

-- Bumped in the same transaction as every catalog write: each node keeps the articles it
-- prices in memory and forgets them when this revision has moved.
CREATE TABLE catalog_revision (
    singleton   INTEGER PRIMARY KEY CHECK (singleton = 1),
    revision    INTEGER NOT NULL
);
INSERT INTO catalog_revision (singleton, revision) VALUES (1, 0);

-- No foreign key to stores: while the network is empty a sale names any store, and its stock
-- still moves. Stock may go negative: goods already in the customer's hands are never refused.
CREATE TABLE stock (
    store_id    TEXT NOT NULL,
    sku_id      TEXT NOT NULL REFERENCES skus (sku_id),
    on_hand     INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (store_id, sku_id)
);

-- Stock moves not yet added into `stock`: on PostgreSQL sales queue them here (see its
-- baseline). SQLite's one writer updates `stock` in place, having no row locks to queue on, so
-- sales leave this table empty; the readers are the same on both engines.
CREATE TABLE stock_moves (
    store_id    TEXT NOT NULL,
    sku_id      TEXT NOT NULL,
    delta       INTEGER NOT NULL,
    moved_at    INTEGER NOT NULL
);

CREATE TABLE staff (
    subject                     TEXT PRIMARY KEY,
    display_name                TEXT NOT NULL,
    role                        TEXT NOT NULL CHECK (role IN ('cashier', 'manager', 'admin')),
    pin_hash                    TEXT NOT NULL,
    -- grants beyond the role, space-separated
    permissions                 TEXT NOT NULL,
    -- both NULL: no explicit limit (role decides)
    discount_limit_bps          INTEGER,
    discount_limit_cents        INTEGER,
    grants_synced_at            INTEGER NOT NULL,
    created_at                  INTEGER NOT NULL,
    updated_at                  INTEGER NOT NULL,
    CHECK ((discount_limit_bps IS NULL) = (discount_limit_cents IS NULL))
);

-- Wrong-PIN accounting per subject, known or not, so an unknown subject behaves like a known one.
CREATE TABLE pin_guards (
    subject             TEXT PRIMARY KEY,
    -- attempts reserved since the last success or lock expiry
    attempts            INTEGER NOT NULL,
    locked_until        INTEGER,
    updated_at          INTEGER NOT NULL
);

CREATE TABLE customers (
    customer_id     TEXT PRIMARY KEY,
    points          INTEGER NOT NULL,
    enrolled_at     INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);

CREATE TABLE coupons (
    code                TEXT PRIMARY KEY,
    percent_bps         INTEGER,
    amount_cents        INTEGER,
    min_basket_cents    INTEGER NOT NULL,
    valid_from          INTEGER,
    valid_until         INTEGER,
    max_redemptions     INTEGER,
    redemptions         INTEGER NOT NULL DEFAULT 0,
    active              INTEGER NOT NULL,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
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
    created_at          INTEGER NOT NULL,
    open_day            TEXT,
    closed_through      TEXT,
    last_day_closed     TEXT,
    last_month_closed   TEXT,
    last_year_closed    TEXT
);

CREATE TABLE register_sessions (
    session_id          TEXT PRIMARY KEY,
    -- SHA-256 of the opaque bearer token; the token itself is never stored
    token_hash          BLOB NOT NULL UNIQUE,
    store_id            TEXT NOT NULL,
    register_id         TEXT NOT NULL REFERENCES registers (register_id),
    cashier_subject     TEXT NOT NULL REFERENCES staff (subject),
    opening_float_cents INTEGER NOT NULL,
    opened_at           INTEGER NOT NULL,
    expires_at          INTEGER NOT NULL,
    closed_at           INTEGER,
    z_report            TEXT,
    -- the closure entry (Z report) of the session, once it was sealed
    closure_seq         INTEGER
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
    subtotal_cents          INTEGER NOT NULL,
    total_cents             INTEGER NOT NULL,
    item_count              INTEGER NOT NULL,
    line_count              INTEGER NOT NULL,
    change_cents            INTEGER NOT NULL,
    points_earned           INTEGER NOT NULL,
    coupon_code             TEXT,
    issued_at               INTEGER,
    emitted_at              INTEGER NOT NULL,
    fiscal_seq              INTEGER NOT NULL,
    response                TEXT NOT NULL,
    -- how many times the receipt was printed: the counter concurrent reprints serialize on
    prints                  INTEGER NOT NULL DEFAULT 0,
    original_transaction_id TEXT,
    original_register_id    TEXT,
    original_seq            INTEGER,
    -- the credit note (avoir) number of a return
    credit_note             TEXT,
    refunded_cents          INTEGER NOT NULL DEFAULT 0,
    points_returned         INTEGER NOT NULL DEFAULT 0,
    detail                  TEXT,
    returned_units          TEXT,
    packed                  BLOB
);
CREATE INDEX sales_by_session ON sales (session_id);
-- Only a return names an original sale, and its readers look up the returns of one sale: a
-- plain sale writes no entry here. A register's tickets are found through the journal's key
-- (register, kind, sequence), so `sales` keeps no index of its own on them.
CREATE INDEX sales_by_original ON sales (original_transaction_id) WHERE original_transaction_id IS NOT NULL;

-- Tables of a sale's parts from before its document: nothing writes or reads them.
CREATE TABLE sale_lines (
    transaction_id      TEXT NOT NULL REFERENCES sales (transaction_id),
    line_no             INTEGER NOT NULL,
    line_id             TEXT NOT NULL,
    sku_id              TEXT,
    quantity            INTEGER NOT NULL,
    unit_price_cents    INTEGER NOT NULL,
    vat_rate            INTEGER NOT NULL,
    gross_cents         INTEGER NOT NULL,
    promotion_cents     INTEGER NOT NULL,
    declared_cents      INTEGER NOT NULL,
    ticket_cents        INTEGER NOT NULL,
    net_cents           INTEGER NOT NULL,
    label               TEXT,
    returned_quantity   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (transaction_id, line_no)
);

CREATE TABLE sale_tenders (
    transaction_id  TEXT NOT NULL REFERENCES sales (transaction_id),
    tender_no       INTEGER NOT NULL,
    tender_id       TEXT NOT NULL,
    method          TEXT NOT NULL,
    applied_cents   INTEGER NOT NULL,
    presented_cents INTEGER NOT NULL,
    change_cents    INTEGER NOT NULL,
    forfeited_cents INTEGER NOT NULL,
    PRIMARY KEY (transaction_id, tender_no)
);

CREATE TABLE sale_vat (
    transaction_id  TEXT NOT NULL REFERENCES sales (transaction_id),
    vat_rate        INTEGER NOT NULL,
    total_cents     INTEGER NOT NULL,
    vat_cents       INTEGER NOT NULL,
    PRIMARY KEY (transaction_id, vat_rate)
);

CREATE TABLE sale_adjustments (
    transaction_id  TEXT NOT NULL REFERENCES sales (transaction_id),
    adjustment_no   INTEGER NOT NULL,
    source          TEXT NOT NULL,
    source_id       TEXT NOT NULL,
    label           TEXT,
    amount_cents    INTEGER NOT NULL,
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
    created_at  INTEGER NOT NULL
);

-- The head of each chain: its last sequence and signature, the row every append locks, and how
-- many closings held the chain shut (see the PostgreSQL baseline; the statements are shared).
CREATE TABLE fiscal_heads (
    register_id     TEXT NOT NULL,
    kind            TEXT NOT NULL,
    last_seq        INTEGER NOT NULL,
    last_signature  TEXT,
    holds           INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (register_id, kind)
);

CREATE TABLE fiscal_entries (
    register_id         TEXT NOT NULL,
    kind                TEXT NOT NULL,
    seq                 INTEGER NOT NULL CHECK (seq >= 1),
    -- the exact string that was signed
    payload             TEXT NOT NULL,
    signature           TEXT NOT NULL,
    previous_signature  TEXT,
    key_id              TEXT NOT NULL REFERENCES fiscal_keys (key_id),
    algorithm           TEXT NOT NULL,
    -- the business record sealed: a transaction id, a session id...
    reference           TEXT NOT NULL,
    created_at          INTEGER NOT NULL,
    PRIMARY KEY (register_id, kind, seq)
);

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

CREATE TRIGGER fiscal_keys_no_update BEFORE UPDATE ON fiscal_keys
BEGIN SELECT RAISE(ABORT, 'fiscal keys are append-only'); END;
CREATE TRIGGER fiscal_keys_no_delete BEFORE DELETE ON fiscal_keys
BEGIN SELECT RAISE(ABORT, 'fiscal keys are append-only'); END;
CREATE TRIGGER fiscal_entries_no_update BEFORE UPDATE ON fiscal_entries
BEGIN SELECT RAISE(ABORT, 'fiscal entries are append-only'); END;
CREATE TRIGGER fiscal_entries_no_delete BEFORE DELETE ON fiscal_entries
BEGIN SELECT RAISE(ABORT, 'fiscal entries are append-only'); END;
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

-- Manager elevation: single-use grants, the per-manager rate limiter, and the audit trail of
-- every grant issued, spent or refused and every lockout.

CREATE TABLE elevation_grants (
    grant_id        TEXT PRIMARY KEY,
    -- SHA-256 of the pos_el_ token; the token itself is never stored
    token_hash      BLOB NOT NULL UNIQUE,
    manager_subject TEXT NOT NULL REFERENCES staff (subject),
    session_id      TEXT NOT NULL REFERENCES register_sessions (session_id),
    register_id     TEXT NOT NULL,
    cashier_subject TEXT NOT NULL,
    operation       TEXT NOT NULL CHECK (operation IN ('discount.line', 'discount.ticket')),
    scope           TEXT NOT NULL,
    amount_cents    INTEGER,
    percent_bps     INTEGER,
    issued_at       INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    spent_at        INTEGER,
    -- the transaction id of the sale that spent it
    spent_by        TEXT
);

-- Fixed-window attempt counter per manager subject (known or not).
CREATE TABLE elevation_rate (
    subject         TEXT PRIMARY KEY,
    window_start    INTEGER NOT NULL,
    attempts        INTEGER NOT NULL
);

CREATE TABLE elevation_events (
    event_id        INTEGER PRIMARY KEY,
    occurred_at     INTEGER NOT NULL,
    -- issued, spent, refused, locked_out, rate_limited
    outcome         TEXT NOT NULL,
    -- the refusal's code, when refused
    code            TEXT,
    manager_subject TEXT NOT NULL,
    session_id      TEXT,
    register_id     TEXT,
    cashier_subject TEXT,
    operation       TEXT,
    amount_cents    INTEGER,
    percent_bps     INTEGER,
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
    version         INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);

CREATE TABLE promotion_revision (
    singleton   INTEGER PRIMARY KEY CHECK (singleton = 1),
    revision    INTEGER NOT NULL
);
INSERT INTO promotion_revision (singleton, revision) VALUES (1, 0);
