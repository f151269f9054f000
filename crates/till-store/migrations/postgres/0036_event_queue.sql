-- The queue of events not numbered yet (docs/events.md, "How the order holds across nodes").
--
-- An event was written into `events` without a position, with an entry in the index of those
-- still to number, and the sequencer then updated its row: a second row version and two more
-- index entries for every event. Now a fact writes its event here, and a sequencer pass moves
-- the committed ones into `events` in one statement, deleting them here and appending each
-- with its position. `seq` is taken from the sequence `events` has always used, so an event
-- keeps the number it was written with.
--
-- A node of the previous release still writes into `events` without a position during a
-- rolling deploy; the sequencer numbers those rows as before, in the same order by `seq`.
CREATE TABLE event_queue (
    seq             BIGINT PRIMARY KEY DEFAULT nextval('events_seq_seq'),
    type            TEXT NOT NULL,
    occurred_at     BIGINT NOT NULL,
    store_id        TEXT,
    register_id     TEXT,
    subject         TEXT NOT NULL,
    data            TEXT
);
-- Rows live a few milliseconds: vacuumed as soon as the launcher comes by, not at a fifth of a
-- table that is nearly always empty.
ALTER TABLE event_queue SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000);
