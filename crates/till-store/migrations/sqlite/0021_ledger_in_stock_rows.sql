-- The stock ledger's index by article, kept where SQLite's one writer already writes for every
-- movement: the article's `stock` row. An index of `stock_movements` by store and article took
-- a random page per article sold in every commit, as many pages again as the rest of a sale
-- (docs/performance.md, "The ledger's index in the stock row").
--
-- A `stock` row lists the ids of its article's latest movements (`recent`, comma-separated, in
-- order; `recent_count` of them, the last `recent_last`). The first write to move an article
-- whose list holds `CHUNK` (32) ids or more moves the list into `stock_movement_chunks`, keyed by
-- its last id, and starts the list again. So every chunk holds at least 32 ids in order, each
-- after the ids of the chunks before it and before those of the list: an article's ledger is
-- its chunks in key order, then its list.
--
-- `stock` is rebuilt without a row id: it is read and written by its key alone. PostgreSQL
-- keeps its index (migrations/postgres/0021 changes nothing).
CREATE TABLE stock_by_key (
    store_id     TEXT NOT NULL,
    sku_id       TEXT NOT NULL REFERENCES skus (sku_id),
    on_hand      INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    recent       TEXT NOT NULL DEFAULT '',
    recent_count INTEGER NOT NULL DEFAULT 0,
    recent_last  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (store_id, sku_id)
) WITHOUT ROWID;

CREATE TABLE stock_movement_chunks (
    store_id    TEXT NOT NULL,
    sku_id      TEXT NOT NULL,
    -- the last id of the chunk; every id of the article's next chunk or list is after it
    last_id     INTEGER NOT NULL,
    -- at least 32 movement ids, comma-separated, in order
    ids         TEXT NOT NULL,
    PRIMARY KEY (store_id, sku_id, last_id)
) WITHOUT ROWID;

-- The movements recorded so far, numbered per article: full chunks of 32, the rest the list.
CREATE TEMP TABLE numbered AS
SELECT store_id, sku_id, movement_id,
       (row_number() OVER article - 1) / 32 AS chunk,
       count(*) OVER (PARTITION BY store_id, sku_id) / 32 AS full_chunks
FROM stock_movements
WINDOW article AS (PARTITION BY store_id, sku_id ORDER BY movement_id);

INSERT INTO stock_movement_chunks (store_id, sku_id, last_id, ids)
SELECT store_id, sku_id, max(movement_id), group_concat(movement_id, ',' ORDER BY movement_id)
FROM numbered WHERE chunk < full_chunks
GROUP BY store_id, sku_id, chunk;

INSERT INTO stock_by_key (store_id, sku_id, on_hand, updated_at, recent, recent_count, recent_last)
SELECT s.store_id, s.sku_id, s.on_hand, s.updated_at,
       coalesce(l.ids, ''), coalesce(l.n, 0), coalesce(l.last, 0)
FROM stock AS s
LEFT JOIN (SELECT store_id, sku_id, group_concat(movement_id, ',' ORDER BY movement_id) AS ids,
                  count(*) AS n, max(movement_id) AS last
           FROM numbered WHERE chunk >= full_chunks GROUP BY store_id, sku_id) AS l
    ON l.store_id = s.store_id AND l.sku_id = s.sku_id;

DROP TABLE numbered;
DROP TABLE stock;
ALTER TABLE stock_by_key RENAME TO stock;
DROP INDEX stock_movements_by_article;
