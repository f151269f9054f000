-- Stock moves of sales not yet added into `stock`. A sale appends its moves here instead of
-- updating each article's row: the update locked the row until the sale committed, so every
-- sale of a popular article waited for the one before, on every node, and each cost an index
-- probe of `stock`. Each node adds the moves into `stock` about once a second (src/stock.rs);
-- a level read meanwhile is the row plus the moves still here.
CREATE TABLE stock_moves (
    store_id    TEXT NOT NULL,
    sku_id      TEXT NOT NULL,
    delta       BIGINT NOT NULL,
    moved_at    BIGINT NOT NULL
);
-- Rows live about a second: vacuum as soon as the launcher comes by, not at a fifth of a
-- table that is nearly always empty.
ALTER TABLE stock_moves SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000);
