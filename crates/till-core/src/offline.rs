//! Tickets rung while their till was offline and sent when it reconnects. A ticket carries the
//! instant it was rung (`issuedAt`); the server takes it within a window around its own clock:
//! not older than the deployment's limit, and not ahead by more than a till's clock may drift.
//! It must also fall within its session, from the opening to the close: the instant prices the
//! ticket (prices, promotions, coupons in force then), so a till may not pick it freely. Within
//! both, the ticket is priced as of `issuedAt` and sealed at its arrival.

use jiff::{SignedDuration, Timestamp};

/// How far ahead of the server's clock a till's clock may run.
pub const CLOCK_DRIFT: SignedDuration = SignedDuration::from_mins(5);

/// Why a ticket's `issuedAt` is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IssuedAtProblem {
    /// Rung longer ago than `max_age`: too late to book.
    TooOld { max_age: SignedDuration },
    /// Ahead of the server's clock by more than `tolerance`.
    InFuture { tolerance: SignedDuration },
    /// Rung before its session opened, by more than the clock skew tolerated.
    BeforeSession { opened_at: Timestamp, skew: SignedDuration },
    /// Rung after its session closed, by more than the clock skew tolerated: a closed session
    /// books only the sales rung before its close.
    AfterClose { closed_at: Timestamp, skew: SignedDuration },
}

/// When a ticket's session ran: from its opening to its close, or on to now while it is open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionSpan {
    pub opened_at: Timestamp,
    pub closed_at: Option<Timestamp>,
}

/// Checks the instant a ticket was rung against `now`: no older than `max_age`, no further
/// ahead than [`CLOCK_DRIFT`]. Both bounds are inclusive.
pub fn check_issued_at(issued_at: Timestamp, now: Timestamp, max_age: SignedDuration) -> Result<(), IssuedAtProblem> {
    let age = now.duration_since(issued_at);
    if age > max_age {
        return Err(IssuedAtProblem::TooOld { max_age });
    }
    if -age > CLOCK_DRIFT {
        return Err(IssuedAtProblem::InFuture { tolerance: CLOCK_DRIFT });
    }
    Ok(())
}

/// Checks that a ticket rung at `issued_at` falls within its session, give or take `skew` on
/// each side (the till's clock and the server's differ a little): not before the opening, and
/// not after the close, or after `now` while the session is open. Both bounds are inclusive.
pub fn check_within_session(
    issued_at: Timestamp,
    session: SessionSpan,
    now: Timestamp,
    skew: SignedDuration,
) -> Result<(), IssuedAtProblem> {
    let earliest = session.opened_at.checked_sub(skew).unwrap_or(Timestamp::MIN);
    if issued_at < earliest {
        return Err(IssuedAtProblem::BeforeSession {
            opened_at: session.opened_at,
            skew,
        });
    }
    let end = session.closed_at.unwrap_or(now);
    if issued_at > end.checked_add(skew).unwrap_or(Timestamp::MAX) {
        return Err(match session.closed_at {
            Some(closed_at) => IssuedAtProblem::AfterClose { closed_at, skew },
            None => IssuedAtProblem::InFuture { tolerance: skew },
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).unwrap()
    }

    #[test]
    fn the_window_runs_from_the_age_limit_to_the_clock_drift() {
        let now = at(1_800_000_000);
        let max_age = SignedDuration::from_hours(72);
        let check = |offset: i64| check_issued_at(at(1_800_000_000 + offset), now, max_age);
        assert_eq!(check(0), Ok(()));
        assert_eq!(check(-72 * 3600), Ok(()));
        assert_eq!(check(-72 * 3600 - 1), Err(IssuedAtProblem::TooOld { max_age }));
        assert_eq!(check(300), Ok(()));
        assert_eq!(check(301), Err(IssuedAtProblem::InFuture { tolerance: CLOCK_DRIFT }));
    }

    #[test]
    fn a_ticket_falls_within_its_session_give_or_take_the_skew() {
        let skew = SignedDuration::from_mins(5);
        let opened_at = at(1_800_000_000);
        let closed_at = at(1_800_000_000 + 8 * 3600);
        let now = at(1_800_000_000 + 10 * 3600);
        let closed = SessionSpan {
            opened_at,
            closed_at: Some(closed_at),
        };
        let check = |offset: i64| check_within_session(at(1_800_000_000 + offset), closed, now, skew);
        assert_eq!(check(0), Ok(()));
        assert_eq!(check(-300), Ok(()), "a till's clock a little behind");
        assert_eq!(check(-301), Err(IssuedAtProblem::BeforeSession { opened_at, skew }));
        assert_eq!(check(-90 * 60), Err(IssuedAtProblem::BeforeSession { opened_at, skew }));
        assert_eq!(check(8 * 3600 + 300), Ok(()), "rung just before the close, clock ahead");
        assert_eq!(
            check(8 * 3600 + 301),
            Err(IssuedAtProblem::AfterClose { closed_at, skew }),
            "rung after the close"
        );
        let open = SessionSpan {
            opened_at,
            closed_at: None,
        };
        let check = |offset: i64| check_within_session(at(1_800_000_000 + offset), open, now, skew);
        assert_eq!(check(10 * 3600 + 300), Ok(()), "an open session runs on to now");
        assert_eq!(
            check(10 * 3600 + 301),
            Err(IssuedAtProblem::InFuture { tolerance: skew })
        );
        let exact = |issued_at| check_within_session(issued_at, closed, now, SignedDuration::ZERO);
        assert_eq!(exact(opened_at), Ok(()));
        assert_eq!(exact(closed_at), Ok(()));
        assert!(check_within_session(Timestamp::MIN, closed, now, SignedDuration::MAX).is_ok());
        assert!(check_within_session(Timestamp::MAX, closed, now, SignedDuration::MAX).is_ok());
    }

    #[test]
    fn instants_at_the_ends_of_time_are_refused_without_overflow() {
        let max_age = SignedDuration::from_hours(72);
        assert!(check_issued_at(Timestamp::MIN, Timestamp::MAX, max_age).is_err());
        assert!(check_issued_at(Timestamp::MAX, Timestamp::MIN, max_age).is_err());
    }
}
