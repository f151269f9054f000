-- Barcodes of the catalog's articles (DESIGN.md section 16): each kept as written and as the
-- GTIN-14 it stands for, which is its key: a UPC-A and the EAN-13 with a leading zero are one
-- barcode, and a barcode belongs to one article.
CREATE TABLE sku_barcodes (
    gtin        TEXT PRIMARY KEY,
    sku_id      TEXT NOT NULL REFERENCES skus (sku_id),
    -- as the back office wrote it
    barcode     TEXT NOT NULL,
    -- its place in the article's list
    position    BIGINT NOT NULL
);
CREATE INDEX sku_barcodes_by_sku ON sku_barcodes (sku_id, position);
