//! Whether the database answers, and what an operator watches of it: this node's connections,
//! the SQLite writer's queue, and what waits in the feed for its readers.

use super::StoreError;
use jiff::Timestamp;
use till_core::events::FeedCursor;

/// The database engine a store runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

impl Engine {
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Sqlite => "sqlite",
            Engine::Postgres => "postgres",
        }
    }
}

/// This node's connections to its database at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Connections {
    /// Open and lent to a request or a task.
    pub busy: u64,
    /// Open and waiting to be lent.
    pub idle: u64,
    /// The most the node keeps open: PostgreSQL's pool size. SQLite opens a reader whenever
    /// none is idle, so it has no bound.
    pub most: Option<u64>,
    /// Units of work waiting for SQLite's one writer; `None` on PostgreSQL, where each request
    /// writes on a connection of its own.
    pub writer_queue: Option<u64>,
}

/// What the feed holds that its readers have not taken yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backlog {
    /// The feed's last position handed out.
    pub head: FeedCursor,
    /// Events committed and not handed out yet: not numbered, or numbered and not released
    /// (PostgreSQL numbers and releases them after commit; SQLite at commit, so none ever
    /// wait there).
    pub unplaced_events: u64,
    pub endpoints: Vec<EndpointBacklog>,
}

/// One webhook endpoint's place in the feed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointBacklog {
    pub delivered_through: FeedCursor,
    /// The time of the first event past its cursor, if any.
    pub next_event_at: Option<Timestamp>,
    /// The first failure of its current streak, while it is failing.
    pub failing_since: Option<Timestamp>,
    /// No longer tried until a replay.
    pub disabled: bool,
}

/// Whether the database answers, and how this node stands with it.
#[async_trait::async_trait]
pub trait Health: Send + Sync {
    /// Succeeds when the database answers a trivial query and, on SQLite, the writer every
    /// sale goes through is still running.
    async fn ping(&self) -> Result<(), StoreError>;
    fn engine(&self) -> Engine;
    /// As they stand now, without asking the database.
    fn connections(&self) -> Connections;
    /// Read from the database.
    async fn backlog(&self) -> Result<Backlog, StoreError>;
}
