-- A search by several words reads every row of its longest word and checks the others in the
-- name's `words` beside it: kept in the key's own pages (`WITHOUT ROWID`, as `sku_words`), each
-- row checked costs no second read of the table.
CREATE TABLE customer_words_keyed (
    word            TEXT NOT NULL,
    customer_id     TEXT NOT NULL,
    words           TEXT NOT NULL,
    PRIMARY KEY (word, customer_id)
) WITHOUT ROWID;

INSERT INTO customer_words_keyed (word, customer_id, words)
SELECT word, customer_id, words FROM customer_words;

DROP TABLE customer_words;
ALTER TABLE customer_words_keyed RENAME TO customer_words;
CREATE INDEX customer_words_by_customer ON customer_words (customer_id);
