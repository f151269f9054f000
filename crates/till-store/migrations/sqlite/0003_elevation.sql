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
