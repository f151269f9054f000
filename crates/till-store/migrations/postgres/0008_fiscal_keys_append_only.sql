-- A published key stays published, unchanged: every entry it signed is verified with it.
CREATE FUNCTION fiscal_keys_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'fiscal keys are append-only';
END;
$$;
CREATE TRIGGER fiscal_keys_no_change BEFORE UPDATE OR DELETE ON fiscal_keys
    FOR EACH ROW EXECUTE FUNCTION fiscal_keys_append_only();
CREATE TRIGGER fiscal_keys_no_truncate BEFORE TRUNCATE ON fiscal_keys
    FOR EACH STATEMENT EXECUTE FUNCTION fiscal_keys_append_only();

-- With keys that can no longer vanish, the foreign key from each entry to its key only cost:
-- checking it takes a share lock on the key's row, and as every register's sales seal under
-- the same key, the locks of overlapping sales made PostgreSQL create a MultiXact for nearly
-- every sale (one per sale measured under 16 concurrent tills). The store publishes a key
-- before it signs with it, and `till fiscal verify` reports an entry whose key is unknown.
-- SQLite keeps the constraint: there it is a plain look-up, and dropping it would mean
-- rebuilding the journal table.
ALTER TABLE fiscal_entries DROP CONSTRAINT IF EXISTS fiscal_entries_key_id_fkey;
