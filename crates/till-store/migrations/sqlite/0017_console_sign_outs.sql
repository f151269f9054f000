-- Tokens signed out of the console: the console's cookie holds a token, and signing out keeps
-- that token out of the console until it expires, so that a copy of the cookie made before
-- signing out opens nothing after it. Only the token's hash is held; rows past their expiry
-- are pruned when new ones are written.
CREATE TABLE console_sign_outs (
    -- SHA-256 of the token; the token itself is never stored
    token_hash      BLOB PRIMARY KEY,
    -- the token's own expiry: past it, no credential check accepts the token anyway
    expires_at      INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX console_sign_outs_expiry ON console_sign_outs (expires_at);
