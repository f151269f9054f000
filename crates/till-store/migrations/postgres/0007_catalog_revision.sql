-- Bumped in the same transaction as every catalog write: each node keeps the articles it
-- prices in memory and forgets them when this revision has moved.
CREATE TABLE catalog_revision (
    singleton   BIGINT PRIMARY KEY CHECK (singleton = 1),
    revision    BIGINT NOT NULL
);
INSERT INTO catalog_revision (singleton, revision) VALUES (1, 0);
