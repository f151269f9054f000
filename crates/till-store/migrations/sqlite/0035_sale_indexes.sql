-- PostgreSQL's 0035 drops the unique index on a sale's event id and makes the returns' index
-- partial. SQLite's returns' index was partial from its baseline; its event id's index comes
-- with the column's UNIQUE, which only rebuilding `sales` would remove.
SELECT 1;
