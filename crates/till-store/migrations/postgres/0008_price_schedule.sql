-- Catalog prices are effective-dated (DESIGN.md section 15): a sale is priced with the price in
-- force when it was rung, which for a till that was offline may be before a price change that
-- reached the server first. Every price an article has had or will have is a row here, with the
-- VAT rate that goes with it; the row in force at an instant is the latest that started at or
-- before it. `skus.price_cents` and `skus.vat_rate` keep the price in force at the article's
-- last write. No row is pruned: a late sale may be days old.
CREATE TABLE sku_prices (
    sku_id          TEXT NOT NULL REFERENCES skus (sku_id),
    effective_from  BIGINT NOT NULL,
    price_cents     BIGINT NOT NULL CHECK (price_cents >= 0),
    -- hundredths of a percent: 2000 is 20 %
    vat_rate        BIGINT NOT NULL CHECK (vat_rate BETWEEN 0 AND 10000),
    written_at      BIGINT NOT NULL,
    PRIMARY KEY (sku_id, effective_from)
);

-- An article's price so far has been in force since the article was created: its earlier
-- prices were not kept.
INSERT INTO sku_prices (sku_id, effective_from, price_cents, vat_rate, written_at)
    SELECT sku_id, created_at, price_cents, vat_rate, updated_at FROM skus;
