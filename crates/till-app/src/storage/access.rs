//! What lets a person act beyond their role: elevation grants and their events, and the
//! confirmations an agent's change waits on.

use super::*;
use jiff::Timestamp;

/// What a grant authorizes: a line-scoped or a ticket-scoped declared discount.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrantOperation {
    DiscountLine,
    DiscountTicket,
}

impl GrantOperation {
    pub const ALL: [GrantOperation; 2] = [GrantOperation::DiscountLine, GrantOperation::DiscountTicket];

    pub fn as_str(self) -> &'static str {
        match self {
            GrantOperation::DiscountLine => "discount.line",
            GrantOperation::DiscountTicket => "discount.ticket",
        }
    }

    pub fn parse(text: &str) -> Option<GrantOperation> {
        GrantOperation::ALL.into_iter().find(|op| op.as_str() == text)
    }
}

/// One line of the audit trail.
#[derive(Clone, Debug, Default)]
pub struct ElevationEvent {
    pub event_id: i64,
    pub occurred_at: Option<Timestamp>,
    pub outcome: String,
    pub code: Option<String>,
    pub manager_subject: String,
    pub session_id: Option<String>,
    pub register_id: Option<String>,
    pub cashier_subject: Option<String>,
    pub operation: Option<String>,
    pub amount_cents: Option<i64>,
    pub percent_bps: Option<i64>,
    pub grant_id: Option<String>,
    pub transaction_id: Option<String>,
}

#[derive(Clone, Debug)]
pub struct GrantRecord {
    pub grant_id: String,
    pub manager_subject: String,
    pub session_id: String,
    pub register_id: String,
    pub operation: GrantOperation,
    /// The size the manager approved: an amount, a percentage, or both.
    pub amount_cents: Option<i64>,
    pub percent_bps: Option<i64>,
    pub expires_at: Timestamp,
    pub spent_at: Option<Timestamp>,
}

#[derive(Clone, Debug)]
pub struct NewGrant {
    pub grant_id: String,
    pub token_hash: Vec<u8>,
    pub manager_subject: String,
    pub session_id: String,
    pub register_id: String,
    pub cashier_subject: String,
    pub operation: GrantOperation,
    pub scope: String,
    pub amount_cents: Option<i64>,
    pub percent_bps: Option<i64>,
    pub issued_at: Timestamp,
    pub expires_at: Timestamp,
}

/// Where a subject stands with the rate limiter after one more attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateDecision {
    Allowed,
    /// Too many attempts in the window; it ends at that instant.
    LimitedUntil(Timestamp),
}

/// A confirmation to hold until it is presented or expires.
#[derive(Clone, Debug)]
pub struct NewConfirmation {
    pub token_hash: Vec<u8>,
    pub subject: String,
    pub operation: String,
    pub arguments_hash: Vec<u8>,
    pub issued_at: Timestamp,
    pub expires_at: Timestamp,
}

/// What a presented token had been issued for; the caller decides whether it matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpentConfirmation {
    pub subject: String,
    pub operation: String,
    pub arguments_hash: Vec<u8>,
    pub expires_at: Timestamp,
}

/// What lets a person act: elevation grants and their events, agent confirmations, console sign-outs.
#[async_trait::async_trait]
pub trait Access: Send + Sync {
    /// Stores a new grant and its `issued` audit row.
    async fn issue_grant(&self, grant: NewGrant) -> Result<(), StoreError>;
    async fn grant_by_token(&self, token_hash: &[u8]) -> Result<Option<GrantRecord>, StoreError>;
    /// Counts one elevation attempt for `subject` in a fixed window of `window` length.
    async fn count_elevation_attempt(
        &self,
        subject: &str,
        now: Timestamp,
        limit: u32,
        window: std::time::Duration,
    ) -> Result<RateDecision, StoreError>;
    /// Appends a line to the audit trail.
    async fn record_elevation_event(&self, event: ElevationEvent, now: Timestamp) -> Result<(), StoreError>;
    /// The audit trail, newest first, optionally for one manager or one register.
    async fn elevation_events(
        &self,
        manager: Option<&str>,
        register: Option<&str>,
        limit: i64,
    ) -> Result<Vec<ElevationEvent>, StoreError>;
    /// Holds a new confirmation, and forgets those that expired by its issue.
    async fn issue_confirmation(&self, confirmation: NewConfirmation) -> Result<(), StoreError>;
    /// Deletes the confirmation of `token_hash` and answers what it was for; `None` when no
    /// such token is held (never issued, already presented, or pruned after its expiry).
    async fn spend_confirmation(&self, token_hash: Vec<u8>) -> Result<Option<SpentConfirmation>, StoreError>;
    /// Keeps the token of `token_hash` out of the console until `expires_at`, and forgets the
    /// tokens that expired by `now`. Signing out twice keeps the first record.
    async fn sign_out_of_console(
        &self,
        token_hash: Vec<u8>,
        expires_at: Timestamp,
        now: Timestamp,
    ) -> Result<(), StoreError>;
    /// Whether the token of `token_hash` was signed out of the console and has not expired.
    async fn signed_out_of_console(&self, token_hash: &[u8], now: Timestamp) -> Result<bool, StoreError>;
}
