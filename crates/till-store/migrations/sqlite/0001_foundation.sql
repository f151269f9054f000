-- Foundation: the store network, the price authority, stock, staff, customers, coupons and
-- register sessions. Every instant is INTEGER microseconds since the Unix epoch (UTC); every
-- amount is INTEGER minor units; booleans are INTEGER 0/1 so that the SQL is the same on both
-- engines.

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

-- No foreign key to stores: while the network is empty a sale names any store, and its stock
-- still moves. Stock may go negative: goods already in the customer's hands are never refused.
CREATE TABLE stock (
    store_id    TEXT NOT NULL,
    sku_id      TEXT NOT NULL REFERENCES skus (sku_id),
    on_hand     INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
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

-- A till belongs to one store for life: its fiscal chains are that store's.
CREATE TABLE registers (
    register_id TEXT PRIMARY KEY,
    store_id    TEXT NOT NULL,
    created_at  INTEGER NOT NULL
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
    z_report            TEXT
);

-- One open session per till at a time.
CREATE UNIQUE INDEX register_sessions_one_open ON register_sessions (register_id) WHERE closed_at IS NULL;
