-- Stock moves not yet added into `stock` (see the PostgreSQL migration 0014). On SQLite the
-- one writer updates `stock` in place, having no row locks to queue on, so sales leave this
-- table empty; the readers are the same on both engines.
CREATE TABLE stock_moves (
    store_id    TEXT NOT NULL,
    sku_id      TEXT NOT NULL,
    delta       INTEGER NOT NULL,
    moved_at    INTEGER NOT NULL
);
