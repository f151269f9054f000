-- The feed's head as readers and webhook deliveries may see it (docs/events.md, "Failover").
-- SQLite's one writer numbers each event as it commits it, durably, so every position is
-- released as soon as it is visible: the head is the last position. PostgreSQL's migration of
-- this number defines it as the position its sequencer releases.
CREATE VIEW feed_head AS
    SELECT COALESCE((SELECT position FROM events ORDER BY position DESC LIMIT 1), 0) AS position;
