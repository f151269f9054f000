-- Confirmations of the agent tools (DESIGN.md section 19): a `confirm` tool called without a
-- token answers a summary and a single-use token `pos_cf_...`, bound to the principal, the
-- operation and its arguments. Only the token's hash is held; presenting it deletes the row,
-- so two nodes handed the same token cannot both act. Rows past their expiry are pruned when
-- new ones are written.
CREATE TABLE mcp_confirmations (
    -- SHA-256 of the pos_cf_ token; the token itself is never stored
    token_hash      BYTEA PRIMARY KEY,
    subject         TEXT NOT NULL,
    operation       TEXT NOT NULL,
    -- SHA-256 of the tool's arguments written as canonical JSON (sorted keys)
    arguments_hash  BYTEA NOT NULL,
    issued_at       BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL
);

CREATE INDEX mcp_confirmations_expiry ON mcp_confirmations (expires_at);
