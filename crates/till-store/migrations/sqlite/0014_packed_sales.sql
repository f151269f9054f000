-- A sale's stored answer and document, compressed together (see src/packed.rs). A sale
-- written from here on leaves `response` empty and `detail` null and keeps both in `packed`;
-- older rows keep their two texts and are read as they are.
ALTER TABLE sales ADD COLUMN packed BLOB;
