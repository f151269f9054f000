-- Returns: a return is a sale row of kind 'return' with negative amounts that names the sale it
-- corrects; the original's lines count what was returned so far, so that no unit is returned
-- twice and partial refunds add up exactly.

ALTER TABLE sales ADD COLUMN original_transaction_id TEXT;
ALTER TABLE sales ADD COLUMN original_register_id TEXT;
ALTER TABLE sales ADD COLUMN original_seq INTEGER;
-- the credit note (avoir) number of a return
ALTER TABLE sales ADD COLUMN credit_note TEXT;
-- on an original sale: what its returns refunded and took back so far
ALTER TABLE sales ADD COLUMN refunded_cents INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sales ADD COLUMN points_returned INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sale_lines ADD COLUMN returned_quantity INTEGER NOT NULL DEFAULT 0;
CREATE INDEX sales_by_original ON sales (original_transaction_id);
