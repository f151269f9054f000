-- Late sales (DESIGN.md section 15): a sale that reaches the server after its session was
-- closed (its till was offline) is booked on the register's journal at its arrival, marked
-- late, and kept out of its session's totals, which were sealed at the close. The next shift
-- closure of the register and the day that received it show the late sales apart.

-- 1 on a late sale, null on every other: a sale booked in its session writes nothing more.
ALTER TABLE sales ADD COLUMN late BIGINT;
-- A register's late sales by their place in its ticket chain: the range a shift closure or a
-- day shows apart, and whether the ticket before a late sale was late too. Only late sales
-- are in it.
CREATE INDEX sales_late_by_register ON sales (register_id, fiscal_seq) WHERE late = 1;

-- The register's tickets whose late sales a session's Z report shows apart: after the first
-- sequence, through the second. Null on a session closed before late sales existed.
ALTER TABLE register_sessions ADD COLUMN late_after BIGINT;
ALTER TABLE register_sessions ADD COLUMN late_through BIGINT;

-- The late sales among a day's tickets, as its closure sealed them; null when there were none.
ALTER TABLE fiscal_closures ADD COLUMN late_count BIGINT;
ALTER TABLE fiscal_closures ADD COLUMN late_total_cents BIGINT;
