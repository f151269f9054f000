-- The event feed (DESIGN.md section 14): every business fact is written here in the
-- transaction that makes it, and read in the order of `position`.
--
-- Nodes commit concurrently, so a number given at insert (`seq`) becomes visible out of
-- order, and a reader past it would miss what commits later below it. A position is given
-- after commit instead, by one sequencer at a time (crates/till-store/src/feed.rs): each pass
-- numbers the committed events it finds without one, after the highest position given, so a
-- position never appears below one already read. (SQLite's numbering is simpler:
-- migrations/sqlite/0005_events.sql.)

CREATE TABLE events (
    seq             BIGSERIAL PRIMARY KEY,
    position        BIGINT,
    type            TEXT NOT NULL,
    occurred_at     BIGINT NOT NULL,
    store_id        TEXT,
    register_id     TEXT,
    subject         TEXT NOT NULL,
    data            TEXT
);

CREATE UNIQUE INDEX events_by_position ON events (position) WHERE position IS NOT NULL;
-- What the sequencer has still to number.
CREATE INDEX events_unplaced ON events (seq) WHERE position IS NULL;
