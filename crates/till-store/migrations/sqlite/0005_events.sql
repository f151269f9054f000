-- The event feed (DESIGN.md section 14): every business fact is written here in the
-- transaction that makes it, and read in the order of `position`.
--
-- SQLite has one writer, which commits in the order it writes: the row id, given at insert,
-- is already the order of commits, so it is the position, and `seq` names it for the queries
-- both engines share. (PostgreSQL's numbering differs: migrations/postgres/0005_events.sql.)

CREATE TABLE events (
    position        INTEGER PRIMARY KEY,
    seq             INTEGER GENERATED ALWAYS AS (position) VIRTUAL,
    -- `sale.completed`, `session.closed`, ...
    type            TEXT NOT NULL,
    occurred_at     INTEGER NOT NULL,
    store_id        TEXT,
    register_id     TEXT,
    -- What the event is about: a transaction id, a session id, a promotion id, ...
    subject         TEXT NOT NULL,
    -- The event's data as JSON; NULL where it is read from the subject's own row, which never
    -- changes (a sale's or a return's stored answer).
    data            TEXT
);
