-- What a Z report read of each card payment attempt of its shift, as the attempt stood at the
-- close (docs/payments.md): the report's card totals are added up from these rows, and the
-- audit adds them up again to check the sealed closure. Written once, in the close's
-- transaction; an attempt changing after the close (an orphan voided, a lost answer settled)
-- changes the ledger, never a sealed shift.
CREATE TABLE shift_card_attempts (
    session_id          TEXT NOT NULL REFERENCES register_sessions (session_id),
    payment_id          TEXT NOT NULL,
    kind                TEXT NOT NULL,
    terminal_id         TEXT,
    provider            TEXT,
    state               TEXT NOT NULL,
    amount_cents        INTEGER NOT NULL,
    authorized_cents    INTEGER,
    orphaned            INTEGER NOT NULL,
    PRIMARY KEY (session_id, payment_id)
);

-- Part of the fiscal record, as the drawer's counts: written once, never changed.
CREATE TRIGGER shift_card_attempts_no_update BEFORE UPDATE ON shift_card_attempts
BEGIN SELECT RAISE(ABORT, 'a shift''s card attempts are append-only'); END;
CREATE TRIGGER shift_card_attempts_no_delete BEFORE DELETE ON shift_card_attempts
BEGIN SELECT RAISE(ABORT, 'a shift''s card attempts are append-only'); END;
