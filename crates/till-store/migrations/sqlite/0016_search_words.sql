-- The catalog search reads each article's words on the row of the word it found the article by,
-- so that checking a search's other words and its prefix reads no other row (DESIGN.md section
-- 16): `words` holds every folded word of the name, sorted, each between spaces. The index by
-- article is gone: a rename deletes the former name's words by their key. Words are written
-- with their article, in the same transaction, and articles are never deleted: no foreign key
-- is checked for each word.
CREATE TABLE sku_words_spaced (
    word    TEXT NOT NULL,
    sku_id  TEXT NOT NULL,
    words   TEXT NOT NULL,
    PRIMARY KEY (word, sku_id)
) WITHOUT ROWID;

INSERT INTO sku_words_spaced (word, sku_id, words)
SELECT w.word, w.sku_id, n.words
FROM sku_words w
JOIN (SELECT sku_id, ' ' || group_concat(word, ' ' ORDER BY word) || ' ' AS words
      FROM sku_words GROUP BY sku_id) n ON n.sku_id = w.sku_id;

DROP TABLE sku_words;
ALTER TABLE sku_words_spaced RENAME TO sku_words;
