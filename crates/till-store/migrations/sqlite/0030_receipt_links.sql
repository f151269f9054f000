-- The public receipt page's links (docs/receipts.md): one unguessable token per sale, made with
-- its first print, by which whoever holds the receipt reads it at /r/{token}.
CREATE TABLE receipt_links (
    token           TEXT PRIMARY KEY,
    transaction_id  TEXT NOT NULL UNIQUE REFERENCES sales (transaction_id),
    created_at      INTEGER NOT NULL
);
