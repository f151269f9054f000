-- Units leaving (negative) or entering stock with each sale on SQLite, appended in the sale's
-- transaction and folded into `stock` about once a second. A sale then adds to the last page
-- of this table instead of rewriting one page of `stock` per article. Stock on hand is
-- `stock.on_hand` plus the moves not yet folded. PostgreSQL updates `stock` in place.
CREATE TABLE stock_moves (
    store_id    TEXT NOT NULL,
    sku_id      TEXT NOT NULL REFERENCES skus (sku_id),
    delta       INTEGER NOT NULL,
    at          INTEGER NOT NULL
);
