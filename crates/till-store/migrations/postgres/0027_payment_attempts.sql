-- The payment-attempt ledger (docs/payments.md): each card payment asked of a terminal, recorded
-- before the terminal is asked, then what the terminal said, and the sale that captured it; each
-- refund given back to a captured payment. Card data is never kept beyond the last four digits.
CREATE TABLE payment_attempts (
    payment_id              TEXT PRIMARY KEY,
    kind                    TEXT NOT NULL,
    session_id              TEXT NOT NULL,
    amount_cents            BIGINT NOT NULL,
    terminal_id             TEXT,
    provider                TEXT,
    state                   TEXT NOT NULL,
    -- The terminal's answer, as parsed; null while requested, and for a refund.
    outcome_status          TEXT,
    authorized_cents        BIGINT,
    authorization_code      TEXT,
    card_brand              TEXT,
    last4                   TEXT,
    entry_mode              TEXT,
    terminal_transaction_id TEXT,
    terminal_receipt        TEXT,
    requested_at            BIGINT NOT NULL,
    authorized_at           BIGINT,
    -- A payment: the sale that captured it; a refund: the return that made it.
    captured_by             TEXT,
    captured_at             BIGINT,
    orphaned_at             BIGINT,
    voided_at               BIGINT,
    -- A refund: the payment it gives back to. A payment: what its refunds gave back so far,
    -- moved by a guarded update so concurrent returns stay within the capture.
    refund_of               TEXT,
    refunded_cents          BIGINT NOT NULL
);

-- A session's attempts, for the till, the console and the X and Z reports.
CREATE INDEX payment_attempts_by_session ON payment_attempts (session_id, payment_id);
-- The orphan sweep: approvals no sale captured, oldest first.
CREATE INDEX payment_attempts_awaiting_capture ON payment_attempts (authorized_at, payment_id)
    WHERE state IN ('authorized', 'partially_authorized');
-- A sale's captured payments, for a return's refund to the card.
CREATE INDEX payment_attempts_by_sale ON payment_attempts (captured_by) WHERE captured_by IS NOT NULL;

-- Which node sweeps orphans, and until when: one node at a time.
CREATE TABLE payment_orphan_lease (
    singleton       BIGINT PRIMARY KEY,
    holder          TEXT NOT NULL,
    held_until      BIGINT NOT NULL
);
