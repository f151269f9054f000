-- SQLite keeps the stock ledger's index by article in the `stock` rows (its 0021); PostgreSQL,
-- whose writers queue their moves rather than update `stock` in place, keeps its index.
SELECT 1;
