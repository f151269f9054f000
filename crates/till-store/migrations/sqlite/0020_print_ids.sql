-- A print names itself with an id of the till's choosing, so that a till that sends it again
-- (its answer lost) is answered the print it made and seals no second DUPLICATA. Prints made
-- before carry none.
ALTER TABLE receipt_prints ADD COLUMN print_id TEXT;
CREATE UNIQUE INDEX receipt_prints_by_print_id ON receipt_prints (transaction_id, print_id);
