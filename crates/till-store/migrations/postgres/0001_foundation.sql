-- Foundation: the store network, the price authority, stock, staff, customers, coupons and
-- register sessions. Every instant is BIGINT microseconds since the Unix epoch (UTC); every
-- amount is BIGINT minor units; booleans are BIGINT 0/1 so that the SQL is the same on both
-- engines.

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

-- No foreign key to stores: while the network is empty a sale names any store, and its stock
-- still moves. Stock may go negative: goods already in the customer's hands are never refused.
CREATE TABLE stock (
    store_id    TEXT NOT NULL,
    sku_id      TEXT NOT NULL REFERENCES skus (sku_id),
    on_hand     BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (store_id, sku_id)
);

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

-- A till belongs to one store for life: its fiscal chains are that store's.
CREATE TABLE registers (
    register_id TEXT PRIMARY KEY,
    store_id    TEXT NOT NULL,
    created_at  BIGINT NOT NULL
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
    z_report            TEXT
);

-- One open session per till at a time.
CREATE UNIQUE INDEX register_sessions_one_open ON register_sessions (register_id) WHERE closed_at IS NULL;
