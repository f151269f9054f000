-- A sale writes its stock movements only; twice a second the fold adds the movements after its
-- mark into their articles' `stock` rows (levels and the lists of migration 0021), in writes of
-- a few hundred articles each so that none holds up the sales behind it for long, then moves
-- the mark. A row says which movements it holds (`folded_through`); a level or a ledger read is
-- the article's row plus its movements after both marks. Updating each article's row with
-- every sale cost the writer a random page per article in every commit (docs/performance.md,
-- "Stock fold"). Every movement written before this migration is already in its row. Movements
-- are never deleted, so no movement after the mark ever takes an id the mark has passed.
CREATE TABLE stock_fold (
    singleton      INTEGER PRIMARY KEY CHECK (singleton = 1),
    -- the last movement id folded into every row
    folded_through INTEGER NOT NULL,
    -- while a fold's writes are under way, the last movement id they fold
    folding_to     INTEGER
);
INSERT INTO stock_fold (singleton, folded_through)
SELECT 1, COALESCE(MAX(movement_id), 0) FROM stock_movements;
ALTER TABLE stock ADD COLUMN folded_through INTEGER NOT NULL DEFAULT 0;
