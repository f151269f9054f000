-- The catalog search reads each article's words on the row of the word it found the article by,
-- so that checking a search's other words and its prefix reads no other row (DESIGN.md section
-- 16): `words` holds every folded word of the name, sorted by code point, each between spaces,
-- and is carried in the key's index so that a search reads the index alone. The index by
-- article is gone: a rename deletes the former name's words by their key. Words are written
-- with their article, in the same transaction, and articles are never deleted: no foreign key
-- is checked for each word.
CREATE TABLE sku_words_spaced (
    word    TEXT COLLATE "C" NOT NULL,
    sku_id  TEXT NOT NULL,
    words   TEXT COLLATE "C" NOT NULL,
    CONSTRAINT sku_words_key PRIMARY KEY (word, sku_id) INCLUDE (words)
);

INSERT INTO sku_words_spaced (word, sku_id, words)
SELECT w.word, w.sku_id, n.words
FROM sku_words w
JOIN (SELECT sku_id, ' ' || string_agg(word, ' ' ORDER BY word COLLATE "C") || ' ' AS words
      FROM sku_words GROUP BY sku_id) n ON n.sku_id = w.sku_id;

DROP TABLE sku_words;
ALTER TABLE sku_words_spaced RENAME TO sku_words;

-- SQLite's name for the place of a text in another, so that both engines run one search.
CREATE FUNCTION instr(haystack text, needle text) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS 'SELECT strpos(haystack, needle)';

-- The prices and barcodes of an article are written with it, in the same transaction, and
-- articles are never deleted. Their foreign keys locked the article's row for every price and
-- barcode written: a large share of a big import's time, for a rule the writes keep anyway.
ALTER TABLE sku_prices DROP CONSTRAINT sku_prices_sku_id_fkey;
ALTER TABLE sku_barcodes DROP CONSTRAINT sku_barcodes_sku_id_fkey;
