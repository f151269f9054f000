-- Search (DESIGN.md section 14): every list is read newest first or by id, a page at a time,
-- from just after the key of the last item shown, never with OFFSET. A filter reads its page
-- through an index that starts with its column and then holds the list's order, so a page
-- seeks its key and reads its rows in order, with nothing to sort. The numbering is the same
-- on both engines (migrations/sqlite/0003_search.sql).

-- Every sale writes every index of `sales`: one per filter of the sales search and no more.
-- The type filter has none; it is checked on the rows another index yields.
CREATE INDEX sales_by_time ON sales (emitted_at, transaction_id);
-- The sales report reads this one too, by this name and these columns.
CREATE INDEX sales_by_store_time ON sales (store_id, emitted_at, transaction_id);
CREATE INDEX sales_by_register_time ON sales (register_id, emitted_at, transaction_id);
-- A sale without a customer leaves no entry.
CREATE INDEX sales_by_customer_time ON sales (customer_id, emitted_at, transaction_id)
    WHERE customer_id IS NOT NULL;
-- A session's sales were already indexed (its Z report counts them); the index now holds them
-- in the list's order as well, instead of a second index beside it.
DROP INDEX sales_by_session;
CREATE INDEX sales_by_session ON sales (session_id, emitted_at, transaction_id);

-- Register sessions, newest first. A session is written when it opens and when it closes, never
-- by a sale. At most one session per till is unclosed at a time, so the last index stays small.
CREATE INDEX register_sessions_by_time ON register_sessions (opened_at, session_id);
CREATE INDEX register_sessions_by_store ON register_sessions (store_id, opened_at, session_id);
CREATE INDEX register_sessions_by_register ON register_sessions (register_id, opened_at, session_id);
CREATE INDEX register_sessions_unclosed ON register_sessions (opened_at, session_id) WHERE closed_at IS NULL;
