-- Webhooks (DESIGN.md section 14; docs/events.md, "Webhooks"): endpoints that receive the
-- event feed, and every attempt to deliver an event to one.

CREATE TABLE webhook_endpoints (
    id                  TEXT PRIMARY KEY,
    url                 TEXT NOT NULL,
    -- The event types it receives, comma-separated; NULL: every type.
    types               TEXT,
    description         TEXT,
    -- The signing secret (`whsec_` and the key in base64), shown once at creation.
    secret              TEXT NOT NULL,
    created_at          INTEGER NOT NULL,
    -- The feed position delivered through: every event up to it that the endpoint wants
    -- was answered 2xx.
    delivered_through   INTEGER NOT NULL,
    -- When it may next be tried; later than now while it is failing.
    due_at              INTEGER NOT NULL,
    -- The current streak of failed attempts: its first failure, its length, the last one.
    failing_since       INTEGER,
    failures            INTEGER NOT NULL DEFAULT 0,
    last_failure        TEXT,
    last_status         INTEGER,
    -- Set when it stopped being tried (`failing` or `gone`); a replay clears them.
    disabled_at         INTEGER,
    disabled_reason     TEXT,
    -- The node task working on it holds it until `lease_until`: a node that dies loses it.
    lease_token         TEXT,
    lease_until         INTEGER NOT NULL DEFAULT 0,
    -- Counts replays: a task that took the endpoint before a replay writes no progress after
    -- it, so the replayed cursor stands and one task at a time sends to the endpoint.
    generation          INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE webhook_deliveries (
    id                  INTEGER PRIMARY KEY,
    endpoint_id         TEXT NOT NULL,
    -- The event's id (`evt_` and this number).
    event_seq           INTEGER NOT NULL,
    -- 1 for the first try of this event since the endpoint last moved on, then 2, 3, ...
    attempt             INTEGER NOT NULL,
    status_code         INTEGER,
    -- NULL when delivered; else `status`, `redirect`, `gone`, `timeout`, `connection` or
    -- `address_refused`.
    failure             TEXT,
    at                  INTEGER NOT NULL,
    duration_ms         INTEGER NOT NULL
);

CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, id);
