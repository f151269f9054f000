//! How durable a node's answers are. A commit is acknowledged once it is durable: on
//! PostgreSQL with a synchronous standby, once the standby holds it too. A request that
//! answers from what another request committed, without committing anything of its own (the
//! replay of an idempotent write), must not answer before that commit is as durable: the
//! other request may still be waiting for the standby, or may have lost its connection while
//! waiting, and a failover would take the commit back.

use super::StoreError;

#[async_trait::async_trait]
pub trait Durability: Send + Sync {
    /// Returns once every commit this node could see when it was called is durable: on
    /// PostgreSQL, a commit of its own, later in the log than all of them, that waits for the
    /// synchronous standby as a sale's does; on SQLite, at once (a commit is visible only once
    /// durable).
    async fn barrier(&self) -> Result<(), StoreError>;
}
