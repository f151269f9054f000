//! E-receipts (docs/receipts.md, "By e-mail"): a receipt sent to an address, queued in the
//! database and sent by one node at a time, retried after a failure that may pass.
//!
//! What a send is addressed to never reaches a signed or exported record: a one-off address
//! is held only until the mail is delivered or given up, and a customer's address is read from
//! their profile when the mail leaves, so that an erasure meanwhile leaves nothing behind.

use crate::customer::Email;
use crate::ids::CustomerId;
use crate::webhooks::RetryPolicy;
use jiff::Timestamp;

/// Whom a receipt is sent to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recipient {
    /// An address given at the till for this send alone.
    Address(Email),
    /// The sale's customer, at the address of their profile, while their `eReceipt` consent
    /// holds.
    Customer(CustomerId),
}

impl Recipient {
    pub fn kind(&self) -> RecipientKind {
        match self {
            Recipient::Address(_) => RecipientKind::Address,
            Recipient::Customer(_) => RecipientKind::Customer,
        }
    }
}

/// Whom a send went to, as its record shows it once the address is gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecipientKind {
    Address,
    Customer,
}

impl RecipientKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RecipientKind::Address => "address",
            RecipientKind::Customer => "customer",
        }
    }

    pub fn parse(text: &str) -> Option<RecipientKind> {
        [RecipientKind::Address, RecipientKind::Customer]
            .into_iter()
            .find(|kind| kind.as_str() == text)
    }
}

/// Where a send stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendState {
    /// Waiting for its first attempt or for the next one.
    Queued,
    /// Accepted by the mail server.
    Sent,
    /// Given up: refused for good, or still failing when the retry window closed.
    Failed,
}

impl SendState {
    pub const ALL: [SendState; 3] = [SendState::Queued, SendState::Sent, SendState::Failed];

    pub fn as_str(self) -> &'static str {
        match self {
            SendState::Queued => "queued",
            SendState::Sent => "sent",
            SendState::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<SendState> {
        SendState::ALL.into_iter().find(|state| state.as_str() == text)
    }
}

/// Why an attempt did not deliver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MailFailure {
    /// The mail server could not be reached, or the connection broke or timed out.
    Unreachable,
    /// The mail server answered with a transient refusal (a 4xx reply).
    Deferred,
    /// The mail server refused the mail for good (a 5xx reply: no such mailbox, say).
    Rejected,
    /// The customer's profile holds no address any more, or their consent was withdrawn.
    NoAddress,
}

impl MailFailure {
    pub const ALL: [MailFailure; 4] = [
        MailFailure::Unreachable,
        MailFailure::Deferred,
        MailFailure::Rejected,
        MailFailure::NoAddress,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MailFailure::Unreachable => "unreachable",
            MailFailure::Deferred => "deferred",
            MailFailure::Rejected => "rejected",
            MailFailure::NoAddress => "noAddress",
        }
    }

    pub fn parse(text: &str) -> Option<MailFailure> {
        MailFailure::ALL.into_iter().find(|failure| failure.as_str() == text)
    }

    /// Whether trying again later may deliver.
    pub fn may_pass(self) -> bool {
        matches!(self, MailFailure::Unreachable | MailFailure::Deferred)
    }
}

/// What follows a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    RetryAt(Timestamp),
    GiveUp,
}

/// What follows the `attempts`-th failed attempt (from 1) of a send queued at `queued_at`:
/// another after the policy's doubling delay while the window since it was queued is open
/// (the last one at its end), none after a failure that cannot pass.
pub fn after_failure(
    policy: &RetryPolicy,
    failure: MailFailure,
    attempts: u32,
    queued_at: Timestamp,
    now: Timestamp,
) -> Next {
    if !failure.may_pass() {
        return Next::GiveUp;
    }
    let window_end = add(queued_at, policy.window);
    if now >= window_end {
        return Next::GiveUp;
    }
    Next::RetryAt(add(now, policy.delay(attempts)).min(window_end))
}

fn add(at: Timestamp, by: std::time::Duration) -> Timestamp {
    jiff::SignedDuration::try_from(by)
        .ok()
        .and_then(|by| at.checked_add(by).ok())
        .unwrap_or(Timestamp::MAX)
}

/// An address as a send's record shows it while held: its first character and its domain
/// (`j•••@example.fr`), enough for the person at the till to recognise what they typed.
pub fn masked(email: &Email) -> String {
    let text = email.as_str();
    match text.split_once('@') {
        Some((local, domain)) => {
            let first: String = local.chars().take(1).collect();
            format!("{first}•••@{domain}")
        }
        None => "•••".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).expect("in range")
    }

    const POLICY: RetryPolicy = RetryPolicy {
        first_delay: Duration::from_secs(10),
        window: Duration::from_secs(100),
    };

    #[test]
    fn a_failure_that_may_pass_is_retried_after_doubling_delays_until_the_window_closes() {
        let queued = at(0);
        assert_eq!(
            after_failure(&POLICY, MailFailure::Unreachable, 1, queued, at(0)),
            Next::RetryAt(at(10))
        );
        assert_eq!(
            after_failure(&POLICY, MailFailure::Deferred, 3, queued, at(30)),
            Next::RetryAt(at(70))
        );
        // The last attempt falls at the window's end.
        assert_eq!(
            after_failure(&POLICY, MailFailure::Unreachable, 4, queued, at(70)),
            Next::RetryAt(at(100))
        );
        assert_eq!(
            after_failure(&POLICY, MailFailure::Unreachable, 5, queued, at(100)),
            Next::GiveUp
        );
    }

    #[test]
    fn a_refusal_for_good_is_never_retried() {
        for failure in [MailFailure::Rejected, MailFailure::NoAddress] {
            assert_eq!(after_failure(&POLICY, failure, 1, at(0), at(0)), Next::GiveUp);
        }
    }

    #[test]
    fn a_masked_address_keeps_its_first_character_and_its_domain() {
        let email = Email::parse("Jeanne.Martin@Example.fr").expect("an address");
        assert_eq!(masked(&email), "j•••@example.fr");
    }

    #[test]
    fn states_and_failures_read_back_from_their_words() {
        for state in SendState::ALL {
            assert_eq!(SendState::parse(state.as_str()), Some(state));
        }
        for failure in MailFailure::ALL {
            assert_eq!(MailFailure::parse(failure.as_str()), Some(failure));
        }
        assert_eq!(RecipientKind::parse("customer"), Some(RecipientKind::Customer));
    }
}
