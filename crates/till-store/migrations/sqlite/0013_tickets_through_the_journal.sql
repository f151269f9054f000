-- A register's tickets were indexed twice: by the journal's key (register, kind, sequence),
-- which also keeps each sequence number unique, and by this index on `sales`. Closures,
-- archives and audits now find a register's tickets through the journal, so a sale writes one
-- index entry fewer.
DROP INDEX sales_by_ticket;
