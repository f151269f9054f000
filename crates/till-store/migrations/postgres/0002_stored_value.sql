-- Stored value (DESIGN.md section 13): gift cards and credit notes, each balance explained by
-- the activities of its ledger, and a ledger of every customer's loyalty points. The numbering
-- is the same on both engines (migrations/sqlite/0002_stored_value.sql).

CREATE TABLE stored_value (
    instrument_id   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- `gift_card` or `credit_note`.
    kind            TEXT NOT NULL CHECK (kind IN ('gift_card', 'credit_note')),
    -- A gift card is found by the SHA-256 of its code (hex), so that neither the table nor the
    -- time a look-up takes tells a code; a credit note by its number.
    lookup          TEXT NOT NULL,
    -- What a receipt prints: a card's last four symbols, a credit note's number.
    label           TEXT NOT NULL,
    balance_cents   BIGINT NOT NULL CHECK (balance_cents >= 0),
    issued_at       BIGINT NOT NULL,
    activated_at    BIGINT,
    expires_at      BIGINT,
    blocked         BIGINT NOT NULL DEFAULT 0,
    -- True when only the stores listed in stored_value_stores may take it.
    restricted      BIGINT NOT NULL DEFAULT 0,
    updated_at      BIGINT NOT NULL,
    UNIQUE (kind, lookup)
);

CREATE TABLE stored_value_stores (
    instrument_id   BIGINT NOT NULL REFERENCES stored_value (instrument_id),
    store_id        TEXT NOT NULL,
    PRIMARY KEY (instrument_id, store_id)
);

-- Every change of an instrument's balance, or of its blocked flag, in the order it happened:
-- the amounts add up to the balance.
CREATE TABLE stored_value_activities (
    activity_id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    instrument_id        BIGINT NOT NULL REFERENCES stored_value (instrument_id),
    kind                 TEXT NOT NULL,
    amount_cents         BIGINT NOT NULL,
    balance_after_cents  BIGINT NOT NULL,
    transaction_id       TEXT,
    at                   BIGINT NOT NULL
);

CREATE INDEX stored_value_activities_by_instrument ON stored_value_activities (instrument_id, activity_id);

-- Every change of a customer's points: they add up to customers.points.
CREATE TABLE loyalty_activities (
    activity_id     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id     TEXT NOT NULL,
    -- `earn`, `redeem`, `refund`, `take_back` or `adjust`.
    kind            TEXT NOT NULL,
    points          BIGINT NOT NULL,
    transaction_id  TEXT,
    at              BIGINT NOT NULL
);

CREATE INDEX loyalty_activities_by_customer ON loyalty_activities (customer_id, activity_id);

-- The points customers held before the ledger: one opening activity each.
INSERT INTO loyalty_activities (customer_id, kind, points, transaction_id, at)
    SELECT customer_id, 'adjust', points, NULL, updated_at FROM customers WHERE points <> 0;
