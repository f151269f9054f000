-- Counts the closings that held the ticket chain shut (see the PostgreSQL migration of the
-- same name); SQLite's one writer never predicts a head, but the statements are shared.
ALTER TABLE fiscal_heads ADD COLUMN holds INTEGER NOT NULL DEFAULT 0;
