-- Invoices for business customers (docs/invoices.md). An invoice is kept as it was issued: the
-- answer the API gives and the CII XML its technical event sealed, never changed. Each ticket
-- is on one invoice at most (`invoice_tickets`' key), and each store's numbers of a year come
-- from one counter row, advanced in the transaction that keeps the invoice.
CREATE TABLE invoices (
    invoice_id          TEXT PRIMARY KEY,
    store_id            TEXT NOT NULL REFERENCES stores (store_id),
    number              TEXT NOT NULL UNIQUE,
    year                INTEGER NOT NULL,
    seq                 INTEGER NOT NULL,
    -- `invoice` or `credit`
    kind                TEXT NOT NULL,
    credits_invoice_id  TEXT REFERENCES invoices (invoice_id),
    -- YYYY-MM-DD in the store's time zone
    issued_on           TEXT NOT NULL,
    issued_at           INTEGER NOT NULL,
    -- SHA-256 (hex) of the canonical request: what idempotency compares
    fingerprint         TEXT NOT NULL,
    buyer_name          TEXT NOT NULL,
    total_cents         INTEGER NOT NULL,
    -- the entry of the register's event chain that sealed it
    register_id         TEXT NOT NULL,
    event_seq           INTEGER NOT NULL,
    answer              TEXT NOT NULL,
    xml                 TEXT NOT NULL,
    UNIQUE (store_id, year, seq)
);
CREATE INDEX invoices_newest ON invoices (issued_at, invoice_id);
CREATE INDEX invoices_of_store ON invoices (store_id, issued_at, invoice_id);
CREATE INDEX invoices_of_register ON invoices (register_id, event_seq);

CREATE TABLE invoice_tickets (
    transaction_id  TEXT PRIMARY KEY REFERENCES sales (transaction_id),
    invoice_id      TEXT NOT NULL REFERENCES invoices (invoice_id),
    position        INTEGER NOT NULL
);
CREATE INDEX invoice_tickets_of_invoice ON invoice_tickets (invoice_id, position);

CREATE TABLE invoice_numbers (
    store_id    TEXT NOT NULL,
    year        INTEGER NOT NULL,
    last_seq    INTEGER NOT NULL,
    PRIMARY KEY (store_id, year)
);

CREATE TRIGGER invoices_no_update BEFORE UPDATE ON invoices
BEGIN SELECT RAISE(ABORT, 'invoices are append-only'); END;
CREATE TRIGGER invoices_no_delete BEFORE DELETE ON invoices
BEGIN SELECT RAISE(ABORT, 'invoices are append-only'); END;
CREATE TRIGGER invoice_tickets_no_update BEFORE UPDATE ON invoice_tickets
BEGIN SELECT RAISE(ABORT, 'invoices are append-only'); END;
CREATE TRIGGER invoice_tickets_no_delete BEFORE DELETE ON invoice_tickets
BEGIN SELECT RAISE(ABORT, 'invoices are append-only'); END;
