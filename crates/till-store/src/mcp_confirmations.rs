//! Confirmations of the agent tools: a single-use token a `confirm` tool hands out before it
//! acts, bound to who asked, the operation and its arguments. Only the token's hash is held.
//! Presenting a token deletes its row in one statement, so that of two nodes handed the same
//! token at once, exactly one gets the row back and acts.

use crate::db::Store;
use crate::error::StoreError;
use crate::sql::{Conn, query};
use futures::future::BoxFuture;
pub use till_app::storage::access::{NewConfirmation, SpentConfirmation};
use till_core::instant::{from_micros, to_micros};

/// The hash of a token presented to act.
struct Presented {
    token_hash: Vec<u8>,
}

impl Store {
    pub async fn issue_confirmation(&self, confirmation: NewConfirmation) -> Result<(), StoreError> {
        self.write(confirmation, |c, i| Box::pin(issue(c, i))).await
    }

    pub async fn spend_confirmation(&self, token_hash: Vec<u8>) -> Result<Option<SpentConfirmation>, StoreError> {
        self.write(Presented { token_hash }, |c, i| Box::pin(spend(c, i))).await
    }
}

fn issue<'a>(conn: &'a mut Conn, confirmation: &'a NewConfirmation) -> BoxFuture<'a, Result<(), StoreError>> {
    Box::pin(async move {
        let issued_at = to_micros(confirmation.issued_at);
        query("DELETE FROM mcp_confirmations WHERE expires_at <= $1")
            .bind(issued_at)
            .execute(&mut *conn)
            .await?;
        query(
            "INSERT INTO mcp_confirmations (token_hash, subject, operation, arguments_hash, issued_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(confirmation.token_hash.clone())
        .bind(&confirmation.subject)
        .bind(&confirmation.operation)
        .bind(confirmation.arguments_hash.clone())
        .bind(issued_at)
        .bind(to_micros(confirmation.expires_at))
        .execute(&mut *conn)
        .await?;
        Ok(())
    })
}

fn spend<'a>(
    conn: &'a mut Conn,
    presented: &'a Presented,
) -> BoxFuture<'a, Result<Option<SpentConfirmation>, StoreError>> {
    Box::pin(async move {
        let row = query(
            "DELETE FROM mcp_confirmations WHERE token_hash = $1 \
             RETURNING subject, operation, arguments_hash, expires_at",
        )
        .bind(presented.token_hash.clone())
        .fetch_optional(&mut *conn)
        .await?;
        row.map(|row| {
            Ok(SpentConfirmation {
                subject: row.try_get("subject")?,
                operation: row.try_get("operation")?,
                arguments_hash: row.try_get("arguments_hash")?,
                expires_at: from_micros(row.try_get("expires_at")?),
            })
        })
        .transpose()
    })
}
