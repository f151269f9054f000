-- The stock ledger (DESIGN.md section 16): every change of stock is a movement with its reason
-- and reference, written in the transaction (or the one statement) that makes the change.
-- `stock` plus the moves still queued in `stock_moves` stays the level (see 0001); the ledger
-- is the history, never read to know a level. Ids come from a sequence, so two nodes' movements
-- may commit out of id order.
CREATE TABLE stock_movements (
    movement_id BIGINT GENERATED ALWAYS AS IDENTITY,
    store_id    TEXT NOT NULL,
    sku_id      TEXT NOT NULL,
    delta       BIGINT NOT NULL,
    reason      TEXT NOT NULL CHECK (reason IN ('sale', 'return', 'count', 'transfer_out', 'transfer_in', 'adjustment')),
    -- the sale, return, count or transfer that moved the goods; none for an adjustment
    reference   TEXT,
    moved_at    BIGINT NOT NULL
);
CREATE INDEX stock_movements_by_article ON stock_movements (store_id, sku_id, movement_id);

-- Levels recorded before the ledger, with the moves still queued: one opening adjustment each,
-- so that every level is the sum of its article's movements from the start.
INSERT INTO stock_movements (store_id, sku_id, delta, reason, reference, moved_at)
SELECT store_id, sku_id, CAST(sum(on_hand) AS BIGINT), 'adjustment', NULL, max(updated_at)
FROM (SELECT store_id, sku_id, on_hand, updated_at FROM stock
      UNION ALL SELECT store_id, sku_id, delta, moved_at FROM stock_moves) AS level
GROUP BY store_id, sku_id ORDER BY store_id, sku_id;

-- A count or an adjustment answered again when its id comes back, rather than applied twice
-- (its lines as sent, to tell a retry from another count under the same id).
CREATE TABLE stock_counts (
    count_id    TEXT PRIMARY KEY,
    store_id    TEXT NOT NULL,
    lines       TEXT NOT NULL,
    -- the answer, with each article's level before the count
    answer      TEXT NOT NULL,
    counted_at  BIGINT NOT NULL
);

-- Goods on their way between two stores: taken out of the sender when sent, put into the
-- receiver when received, the difference recorded on the transfer.
CREATE TABLE stock_transfers (
    transfer_id     TEXT PRIMARY KEY,
    from_store_id   TEXT NOT NULL,
    to_store_id     TEXT NOT NULL,
    -- [{skuId, quantity}] as sent
    lines           TEXT NOT NULL,
    sent_at         BIGINT NOT NULL,
    -- [{skuId, receivedQuantity}] once received
    received        TEXT,
    received_at     BIGINT
);
