-- Sales as committed, and the fiscal journal that seals them.

CREATE TABLE sales (
    transaction_id  TEXT PRIMARY KEY,
    event_id        TEXT NOT NULL UNIQUE,
    -- SHA-256 (hex) of the canonical request: what idempotency compares
    fingerprint     TEXT NOT NULL,
    kind            TEXT NOT NULL,
    number          TEXT NOT NULL,
    store_id        TEXT NOT NULL,
    seller_id       TEXT NOT NULL,
    customer_id     TEXT,
    session_id      TEXT NOT NULL REFERENCES register_sessions (session_id),
    register_id     TEXT NOT NULL,
    subtotal_cents  BIGINT NOT NULL,
    total_cents     BIGINT NOT NULL,
    item_count      BIGINT NOT NULL,
    line_count      BIGINT NOT NULL,
    change_cents    BIGINT NOT NULL,
    points_earned   BIGINT NOT NULL,
    coupon_code     TEXT,
    issued_at       BIGINT,
    emitted_at      BIGINT NOT NULL,
    fiscal_seq      BIGINT NOT NULL,
    -- the 201 body, replayed byte for byte
    response        TEXT NOT NULL
);
CREATE INDEX sales_by_session ON sales (session_id);
CREATE UNIQUE INDEX sales_by_ticket ON sales (register_id, fiscal_seq);

CREATE TABLE sale_lines (
    transaction_id      TEXT NOT NULL REFERENCES sales (transaction_id),
    line_no             BIGINT NOT NULL,
    line_id             TEXT NOT NULL,
    -- NULL for a custom (self-priced) line
    sku_id              TEXT,
    quantity            BIGINT NOT NULL,
    unit_price_cents    BIGINT NOT NULL,
    vat_rate            BIGINT NOT NULL,
    gross_cents         BIGINT NOT NULL,
    promotion_cents     BIGINT NOT NULL,
    declared_cents      BIGINT NOT NULL,
    ticket_cents        BIGINT NOT NULL,
    net_cents           BIGINT NOT NULL,
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

-- Public keys that ever signed the journal, by RFC 7638 thumbprint.
CREATE TABLE fiscal_keys (
    key_id      TEXT PRIMARY KEY,
    algorithm   TEXT NOT NULL,
    public_jwk  TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

-- The head of each chain: its last sequence and signature, the row every append locks.
CREATE TABLE fiscal_heads (
    register_id     TEXT NOT NULL,
    kind            TEXT NOT NULL,
    last_seq        BIGINT NOT NULL,
    last_signature  TEXT,
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
    key_id              TEXT NOT NULL REFERENCES fiscal_keys (key_id),
    algorithm           TEXT NOT NULL,
    -- the business record sealed: a transaction id, a session id...
    reference           TEXT NOT NULL,
    created_at          BIGINT NOT NULL,
    PRIMARY KEY (register_id, kind, seq)
);

-- Inalterability is the database's rule, not only the code's.
CREATE FUNCTION fiscal_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'fiscal entries are append-only';
END;
$$;
CREATE TRIGGER fiscal_entries_no_change BEFORE UPDATE OR DELETE ON fiscal_entries
    FOR EACH ROW EXECUTE FUNCTION fiscal_entries_append_only();
CREATE TRIGGER fiscal_entries_no_truncate BEFORE TRUNCATE ON fiscal_entries
    FOR EACH STATEMENT EXECUTE FUNCTION fiscal_entries_append_only();

-- The closure entry (Z report) of a session, if it was sealed.
ALTER TABLE register_sessions ADD COLUMN closure_seq BIGINT;
