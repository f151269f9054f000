//! Tokens signed out of the console, each until its own expiry. Only a token's hash is held.

use crate::db::Store;
use crate::error::StoreError;
use crate::sql::{Conn, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use till_core::instant::to_micros;

/// A token signed out of the console.
struct SignOut {
    token_hash: Vec<u8>,
    expires_at: i64,
    now: i64,
}

impl Store {
    pub async fn sign_out_of_console(
        &self,
        token_hash: Vec<u8>,
        expires_at: Timestamp,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let input = SignOut {
            token_hash,
            expires_at: to_micros(expires_at),
            now: to_micros(now),
        };
        self.write(input, |c, i| Box::pin(sign_out(c, i))).await
    }

    pub async fn signed_out_of_console(&self, token_hash: &[u8], now: Timestamp) -> Result<bool, StoreError> {
        let row = query("SELECT 1 AS signed_out FROM console_sign_outs WHERE token_hash = $1 AND expires_at > $2")
            .bind(token_hash.to_vec())
            .bind(to_micros(now))
            .fetch_optional(self.reader())
            .await?;
        Ok(row.is_some())
    }
}

fn sign_out<'a>(conn: &'a mut Conn, input: &'a SignOut) -> BoxFuture<'a, Result<(), StoreError>> {
    Box::pin(async move {
        query("DELETE FROM console_sign_outs WHERE expires_at <= $1")
            .bind(input.now)
            .execute(&mut *conn)
            .await?;
        query("INSERT INTO console_sign_outs (token_hash, expires_at) VALUES ($1, $2) ON CONFLICT (token_hash) DO NOTHING")
            .bind(input.token_hash.clone())
            .bind(input.expires_at)
            .execute(&mut *conn)
            .await?;
        Ok(())
    })
}
