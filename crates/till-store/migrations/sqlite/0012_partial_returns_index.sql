-- Only a return names an original sale, yet every sale wrote an entry into this index, a NULL
-- one, with each commit. Its readers look up the returns of one original sale, so the index
-- now holds returns alone: a plain sale writes one index entry fewer. PostgreSQL keeps the full
-- index until a release can build the partial one concurrently (docs/deploy.md).
DROP INDEX sales_by_original;
CREATE INDEX sales_by_original ON sales (original_transaction_id) WHERE original_transaction_id IS NOT NULL;
