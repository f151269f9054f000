-- Per-store prices (DESIGN.md section 16): a store may sell an article at a price of its own,
-- effective-dated as catalog prices are (0008). At an instant a sale in the store is priced with
-- the store's row in force then (the latest that started at or before it) if there is one with
-- a price, else with the catalog's. A store overrides the price only: the VAT rate stays the
-- catalog's. Removing a store's price writes a row without one; no row is pruned: a late sale
-- may be days old.
CREATE TABLE store_prices (
    store_id        TEXT NOT NULL REFERENCES stores (store_id),
    sku_id          TEXT NOT NULL REFERENCES skus (sku_id),
    effective_from  INTEGER NOT NULL,
    -- NULL: the store's own price was removed from this instant on (it sells at the catalog's)
    price_cents     INTEGER CHECK (price_cents >= 0),
    written_at      INTEGER NOT NULL,
    PRIMARY KEY (store_id, sku_id, effective_from)
) WITHOUT ROWID;
