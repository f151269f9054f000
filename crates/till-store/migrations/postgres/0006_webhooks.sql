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
    created_at          BIGINT NOT NULL,
    -- The feed position delivered through: every event up to it that the endpoint wants
    -- was answered 2xx.
    delivered_through   BIGINT NOT NULL,
    -- When it may next be tried; later than now while it is failing.
    due_at              BIGINT NOT NULL,
    -- The current streak of failed attempts: its first failure, its length, the last one.
    failing_since       BIGINT,
    failures            BIGINT NOT NULL DEFAULT 0,
    last_failure        TEXT,
    last_status         BIGINT,
    -- Set when it stopped being tried (`failing` or `gone`); a replay clears them.
    disabled_at         BIGINT,
    disabled_reason     TEXT,
    -- The node task working on it holds it until `lease_until`: a node that dies loses it.
    lease_token         TEXT,
    lease_until         BIGINT NOT NULL DEFAULT 0,
    -- Counts replays: a task that took the endpoint before a replay writes no progress after
    -- it, so the replayed cursor stands and one task at a time sends to the endpoint.
    generation          BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE webhook_deliveries (
    id                  BIGSERIAL PRIMARY KEY,
    endpoint_id         TEXT NOT NULL,
    -- The event's id (`evt_` and this number).
    event_seq           BIGINT NOT NULL,
    -- 1 for the first try of this event since the endpoint last moved on, then 2, 3, ...
    attempt             BIGINT NOT NULL,
    status_code         BIGINT,
    -- NULL when delivered; else `status`, `redirect`, `gone`, `timeout`, `connection` or
    -- `address_refused`.
    failure             TEXT,
    at                  BIGINT NOT NULL,
    duration_ms         BIGINT NOT NULL
);

CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, id);
