-- Two index entries every sale wrote and no read used (docs/performance.md, "Sale indexes").
-- Nothing looks a sale up by its event id; the id is drawn at random by the server for each
-- sale, whose own key is its transaction id.
ALTER TABLE sales DROP CONSTRAINT sales_event_id_key;
-- The returns of a sale: only returns name an original sale, so plain sales stay out of the
-- index, as on SQLite since its baseline.
DROP INDEX sales_by_original;
CREATE INDEX sales_by_original ON sales (original_transaction_id)
    WHERE original_transaction_id IS NOT NULL;
