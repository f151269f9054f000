-- SQLite's fold marks the movements it added into `stock` (its 0033); PostgreSQL's queue of
-- moves (`stock_moves`) already says which are not folded.
SELECT 1;
