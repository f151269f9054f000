-- Credit notes are redeemed by a code, as gift cards are, not by their fiscal number; sealed
-- records name a gift card or a credit note by a keyed digest, never by its code. The
-- numbering is the same on both engines (migrations/sqlite/0017_instrument_codes.sql).

-- Secrets the deployment makes once and every node shares: `instrument_digest`, the key of
-- those digests (created by the store when it starts, Store::migrate).
CREATE TABLE deployment_secrets (
    name        TEXT PRIMARY KEY,
    -- base64url.
    secret      TEXT NOT NULL
);

-- A credit note's code, for the receipts of the return that issued it (a gift card's code is
-- never stored: it is printed on the card). `lookup` is now the SHA-256 of a credit note's
-- code too, and `label` keeps its number.
ALTER TABLE stored_value ADD COLUMN code TEXT;
-- The instrument's keyed digest, as sealed records name it: how a receipt finds what a tender
-- drew on.
ALTER TABLE stored_value ADD COLUMN digest TEXT;
CREATE UNIQUE INDEX stored_value_by_digest ON stored_value (kind, digest);
CREATE INDEX stored_value_credit_notes_by_number ON stored_value (label) WHERE kind = 'credit_note';

-- SQL can neither draw a code from the operating system's generator nor hash it on SQLite, nor
-- compute a keyed digest on either engine: the store gives the credit notes issued before their
-- codes and every instrument its digest when it starts (Store::migrate), finding them by this
-- index, which is empty once they have them. A node of the previous release writing one during
-- a rolling deploy leaves it here for the next start.
CREATE INDEX stored_value_without_digest ON stored_value (instrument_id) WHERE digest IS NULL;
