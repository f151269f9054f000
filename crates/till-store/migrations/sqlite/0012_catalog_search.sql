-- The catalog search by name (DESIGN.md section 16): each distinct word of an article's name,
-- folded in Rust (lowercase, no accents; till_core::words), once per article. The key seeks a
-- word or the words with a prefix in order; the second index finds an article's words, which
-- a rename replaces and the search checks.
CREATE TABLE sku_words (
    word    TEXT NOT NULL,
    sku_id  TEXT NOT NULL REFERENCES skus (sku_id),
    PRIMARY KEY (word, sku_id)
) WITHOUT ROWID;
CREATE INDEX sku_words_by_sku ON sku_words (sku_id, word);

-- SQL cannot fold accents, so the words of the articles already in the catalog are written by
-- the store when it starts (Store::migrate), which then deletes this row.
CREATE TABLE sku_words_backfill (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1)
);
INSERT INTO sku_words_backfill (singleton) VALUES (1);
