-- The sales search by type (DESIGN.md section 14): returns, rentals and repairs are a small share
-- of the tickets, so a search for them walked the time index over every sale to find a page.
-- This index holds only the tickets that are not plain sales: a plain sale writes nothing to
-- it, and a search by another type reads its page in order. The search adds the index's own
-- condition to its query, so that both engines' planners see it applies.
CREATE INDEX sales_rare_by_time ON sales (kind, emitted_at, transaction_id) WHERE kind <> 'sale';
