-- A published key stays published, unchanged: every entry it signed is verified with it.
CREATE TRIGGER fiscal_keys_no_update BEFORE UPDATE ON fiscal_keys
BEGIN
    SELECT RAISE(ABORT, 'fiscal keys are append-only');
END;
CREATE TRIGGER fiscal_keys_no_delete BEFORE DELETE ON fiscal_keys
BEGIN
    SELECT RAISE(ABORT, 'fiscal keys are append-only');
END;
