-- A search by several words reads every row of its longest word and checks the others in the
-- name's `words` beside it: carried in the key (as `sku_words`), each row is checked from the
-- index alone.
ALTER TABLE customer_words DROP CONSTRAINT customer_words_pkey;
ALTER TABLE customer_words ADD CONSTRAINT customer_words_key PRIMARY KEY (word, customer_id) INCLUDE (words);
