-- A sale's stored answer and document, compressed together (see src/packed.rs). A sale
-- written from here on leaves `response` empty and `detail` null and keeps both in `packed`;
-- older rows keep their two texts and are read as they are.
ALTER TABLE sales ADD COLUMN packed BYTEA;
-- Already compressed: the server need not try again when a row grows past its threshold.
ALTER TABLE sales ALTER COLUMN packed SET STORAGE EXTERNAL;
