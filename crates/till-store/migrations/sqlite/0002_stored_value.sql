-- Stored value (DESIGN.md section 13): gift cards and credit notes, each balance explained by
-- the activities of its ledger, and a ledger of every customer's loyalty points. The numbering
-- is the same on both engines (migrations/postgres/0002_stored_value.sql).

CREATE TABLE stored_value (
    instrument_id   INTEGER PRIMARY KEY,
    -- `gift_card` or `credit_note`.
    kind            TEXT NOT NULL CHECK (kind IN ('gift_card', 'credit_note')),
    -- A gift card is found by the SHA-256 of its code (hex), so that neither the table nor the
    -- time a look-up takes tells a code; a credit note by its number.
    lookup          TEXT NOT NULL,
    -- What a receipt prints: a card's last four symbols, a credit note's number.
    label           TEXT NOT NULL,
    balance_cents   INTEGER NOT NULL CHECK (balance_cents >= 0),
    issued_at       INTEGER NOT NULL,
    activated_at    INTEGER,
    expires_at      INTEGER,
    blocked         INTEGER NOT NULL DEFAULT 0,
    -- True when only the stores listed in stored_value_stores may take it.
    restricted      INTEGER NOT NULL DEFAULT 0,
    updated_at      INTEGER NOT NULL,
    UNIQUE (kind, lookup)
);

CREATE TABLE stored_value_stores (
    instrument_id   INTEGER NOT NULL REFERENCES stored_value (instrument_id),
    store_id        TEXT NOT NULL,
    PRIMARY KEY (instrument_id, store_id)
);

-- Every change of an instrument's balance, or of its blocked flag, in the order it happened:
-- the amounts add up to the balance.
CREATE TABLE stored_value_activities (
    activity_id          INTEGER PRIMARY KEY,
    instrument_id        INTEGER NOT NULL REFERENCES stored_value (instrument_id),
    kind                 TEXT NOT NULL,
    amount_cents         INTEGER NOT NULL,
    balance_after_cents  INTEGER NOT NULL,
    transaction_id       TEXT,
    at                   INTEGER NOT NULL
);

CREATE INDEX stored_value_activities_by_instrument ON stored_value_activities (instrument_id, activity_id);

-- Every change of a customer's points: they add up to customers.points.
CREATE TABLE loyalty_activities (
    activity_id     INTEGER PRIMARY KEY,
    customer_id     TEXT NOT NULL,
    -- `earn`, `redeem`, `refund`, `take_back` or `adjust`.
    kind            TEXT NOT NULL,
    points          INTEGER NOT NULL,
    transaction_id  TEXT,
    at              INTEGER NOT NULL
);

CREATE INDEX loyalty_activities_by_customer ON loyalty_activities (customer_id, activity_id);

-- The points customers held before the ledger: one opening activity each.
INSERT INTO loyalty_activities (customer_id, kind, points, transaction_id, at)
    SELECT customer_id, 'adjust', points, NULL, updated_at FROM customers WHERE points <> 0;
