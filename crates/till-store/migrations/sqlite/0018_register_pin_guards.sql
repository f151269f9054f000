-- Wrong PINs are counted per register as well as across every register: a till's wrong PINs
-- lock the holder out of that register, and only many more of them, wherever typed, lock them
-- out of every register. A guard is a subject's count at one register, or at every register
-- together (`register_id` empty). Existing counts were counted everywhere, and stay so.
CREATE TABLE pin_guards_by_register (
    subject             TEXT NOT NULL,
    -- the register the PINs were typed at; empty: every register together
    register_id         TEXT NOT NULL,
    -- attempts reserved since the last success or lock expiry
    attempts            INTEGER NOT NULL,
    locked_until        INTEGER,
    updated_at          INTEGER NOT NULL,
    PRIMARY KEY (subject, register_id)
);

INSERT INTO pin_guards_by_register (subject, register_id, attempts, locked_until, updated_at)
    SELECT subject, '', attempts, locked_until, updated_at FROM pin_guards;

DROP TABLE pin_guards;

ALTER TABLE pin_guards_by_register RENAME TO pin_guards;
