-- The cash drawer (DESIGN.md section 15): money put in or taken out of a register's drawer
-- besides sales, each sealed as a technical event of the register, and what the cashier counted
-- at a shift's close, sealed in the shift's closure.

CREATE TABLE cash_movements (
    -- the till's own id: a movement sent again with the same content is answered again
    movement_id     TEXT PRIMARY KEY,
    session_id      TEXT NOT NULL REFERENCES register_sessions (session_id),
    store_id        TEXT NOT NULL,
    register_id     TEXT NOT NULL,
    -- paid_in, paid_out, drop, no_sale
    kind            TEXT NOT NULL,
    amount_cents    BIGINT NOT NULL CHECK (amount_cents >= 0),
    reason          TEXT,
    recorded_by     TEXT NOT NULL,
    occurred_at     BIGINT NOT NULL,
    -- its entry in the register's chain of technical events
    event_seq       BIGINT NOT NULL
);
-- A shift's movements, for its X and Z reports.
CREATE INDEX cash_movements_by_session ON cash_movements (session_id, occurred_at);

CREATE TABLE session_counts (
    session_id      TEXT NOT NULL REFERENCES register_sessions (session_id),
    method          TEXT NOT NULL,
    counted_cents   BIGINT NOT NULL,
    PRIMARY KEY (session_id, method)
);

-- Both are part of the fiscal record: written once, never changed.
CREATE FUNCTION cash_drawer_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'cash movements and counts are append-only';
END;
$$;
CREATE TRIGGER cash_movements_no_change BEFORE UPDATE OR DELETE ON cash_movements
    FOR EACH ROW EXECUTE FUNCTION cash_drawer_append_only();
CREATE TRIGGER cash_movements_no_truncate BEFORE TRUNCATE ON cash_movements
    FOR EACH STATEMENT EXECUTE FUNCTION cash_drawer_append_only();
CREATE TRIGGER session_counts_no_change BEFORE UPDATE OR DELETE ON session_counts
    FOR EACH ROW EXECUTE FUNCTION cash_drawer_append_only();
CREATE TRIGGER session_counts_no_truncate BEFORE TRUNCATE ON session_counts
    FOR EACH STATEMENT EXECUTE FUNCTION cash_drawer_append_only();
