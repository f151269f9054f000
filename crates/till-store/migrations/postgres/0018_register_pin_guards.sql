-- Wrong PINs are counted per register as well as across every register: a till's wrong PINs
-- lock the holder out of that register, and only many more of them, wherever typed, lock them
-- out of every register. A guard is a subject's count at one register, or at every register
-- together (`register_id` empty). Existing counts were counted everywhere, and stay so.
ALTER TABLE pin_guards ADD COLUMN register_id TEXT NOT NULL DEFAULT '';
ALTER TABLE pin_guards ALTER COLUMN register_id DROP DEFAULT;
ALTER TABLE pin_guards DROP CONSTRAINT pin_guards_pkey;
ALTER TABLE pin_guards ADD PRIMARY KEY (subject, register_id);
