-- SQLite moves an article's full list of movement ids into a chunk by a trigger (its 0022);
-- PostgreSQL keeps its ledger's index and changes nothing.
SELECT 1;
