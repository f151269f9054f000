-- Promotion rules, and what each sale took off and why.

CREATE TABLE promotions (
    promotion_id    TEXT PRIMARY KEY,
    -- the whole rule as JSON, `active` included
    rule            TEXT NOT NULL,
    -- bumped by every write: the ETag of the rule
    version         BIGINT NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);

-- Bumped in the same transaction as every promotion write: nodes compare it with the revision
-- their cache was built from.
CREATE TABLE promotion_revision (
    singleton   BIGINT PRIMARY KEY CHECK (singleton = 1),
    revision    BIGINT NOT NULL
);
INSERT INTO promotion_revision (singleton, revision) VALUES (1, 0);

-- Every reduction of a sale: promotion, declared discount or coupon, with what it took.
CREATE TABLE sale_adjustments (
    transaction_id  TEXT NOT NULL REFERENCES sales (transaction_id),
    adjustment_no   BIGINT NOT NULL,
    -- promotion, declared, coupon
    source          TEXT NOT NULL,
    source_id       TEXT NOT NULL,
    -- the promotion's name at the time of the sale, for receipts
    label           TEXT,
    amount_cents    BIGINT NOT NULL,
    PRIMARY KEY (transaction_id, adjustment_no)
);
