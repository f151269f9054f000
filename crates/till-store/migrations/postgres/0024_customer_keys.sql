-- A page of customers found by a name or listed by group reads each customer's row by the id
-- its index holds, and an index serves only comparisons in its own collation: the ids of
-- `customer_words` and `customer_groups` take the collation of `customers.customer_id`, so
-- that the join seeks its primary key instead of reading the whole table. Words keep "C".
ALTER TABLE customer_words ALTER COLUMN customer_id TYPE TEXT COLLATE "default";
ALTER TABLE customer_groups ALTER COLUMN customer_id TYPE TEXT COLLATE "default";
