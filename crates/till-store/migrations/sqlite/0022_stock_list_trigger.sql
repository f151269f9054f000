-- An article's full list of movement ids (migration 0021) moves into a chunk as the write that
-- starts the list again changes its row, rather than by a statement of its own before it. That
-- statement ran for every sale and read every article the sale moved, to find the list full
-- about once in 32 movements of an article: a sixth of the SQLite writer's time in the
-- statements of a sale (docs/performance.md, "The ledger's index in the stock rows").
-- Only the write of the levels sets `recent` (stock.rs, `LEVELS`).
CREATE TRIGGER stock_list_full AFTER UPDATE OF recent ON stock WHEN old.recent_count >= 32
BEGIN
    INSERT INTO stock_movement_chunks (store_id, sku_id, last_id, ids)
    VALUES (old.store_id, old.sku_id, old.recent_last, old.recent);
END;
