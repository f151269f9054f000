-- Every sale naming a customer writes their last activity (`updated_at`). Indexed, that rewrote
-- an entry of the index at a random place per sale (and, on PostgreSQL, kept the row's update
-- from staying within its page). The retention job, once a day, walks the customers by id
-- instead.
DROP INDEX customers_by_activity;
