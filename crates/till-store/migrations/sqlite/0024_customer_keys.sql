-- PostgreSQL's 0024 gives the ids of `customer_words` and `customer_groups` the collation of
-- `customers.customer_id`; SQLite compares every id the same way, and has nothing to change.
SELECT 1;
