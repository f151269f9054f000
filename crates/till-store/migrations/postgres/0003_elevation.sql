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
