-- A sale's stock moves queued as one row: its articles and their deltas side by side.
-- 0014 queued a row per article, and each row cost the sale a heap tuple and a WAL record and
-- the fold a delete: six or seven of each for a usual cart. Rows that nodes of the previous
-- release still write to `stock_moves` are read and folded as before; a later release, once
-- no such node can run, drops that table.
CREATE TABLE sale_stock_moves (
    store_id    TEXT NOT NULL,
    sku_ids     TEXT[] NOT NULL,
    deltas      BIGINT[] NOT NULL,
    moved_at    BIGINT NOT NULL,
    CHECK (cardinality(sku_ids) = cardinality(deltas))
);
-- As `stock_moves`: rows live about a second; vacuum at each pass of the launcher.
ALTER TABLE sale_stock_moves SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 2000);
