-- Receipts sent by e-mail (docs/receipts.md, "By e-mail"): the queue every node's mailer claims
-- from, one send at a time under a lease, and the record of each send. A one-off address is
-- held in `email` until the mail is delivered or given up; the sale's customer's is read from
-- their profile when the mail leaves.
CREATE TABLE receipt_sends (
    id               TEXT PRIMARY KEY,
    transaction_id   TEXT NOT NULL REFERENCES sales (transaction_id),
    recipient        TEXT NOT NULL,
    email            TEXT,
    requested_by     TEXT NOT NULL,
    state            TEXT NOT NULL,
    attempts         BIGINT NOT NULL DEFAULT 0,
    last_failure     TEXT,
    queued_at        BIGINT NOT NULL,
    due_at           BIGINT NOT NULL,
    sent_at          BIGINT,
    lease_token      TEXT,
    lease_until      BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX receipt_sends_of_sale ON receipt_sends (transaction_id, queued_at);
-- The queue as the mailer reads it: the sends still to go, soonest first.
CREATE INDEX receipt_sends_due ON receipt_sends (due_at) WHERE state = 'queued';
