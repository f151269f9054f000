-- The feed's released position (docs/events.md, "Failover"). A sequencer pass numbers events
-- in a transaction whose commit waits for the synchronous standby; until that wait ends the
-- positions are visible on the primary and a failover could still take them back and give
-- them to other events. Readers and webhook deliveries see only the positions at or below this
-- mark, which a node raises once the pass that numbered them has committed everywhere.
CREATE TABLE feed_release (
    id SMALLINT PRIMARY KEY CHECK (id = 1),
    position BIGINT NOT NULL
);
INSERT INTO feed_release (id, position) SELECT 1, COALESCE(MAX(position), 0) FROM events;

-- The feed's head as readers and webhook deliveries may see it; SQLite's view of the same name
-- is its last position.
CREATE VIEW feed_head AS SELECT position FROM feed_release;
