//! Tickets rung while their till was offline and sent when it reconnects. A ticket carries the
//! instant it was rung (`issuedAt`); the server takes it within a window around its own clock:
//! not older than the deployment's limit, and not ahead by more than a till's clock may drift.
//! Within it, the ticket is priced as of `issuedAt` and sealed at its arrival.

use jiff::{SignedDuration, Timestamp};

/// How far ahead of the server's clock a till's clock may run.
pub const CLOCK_DRIFT: SignedDuration = SignedDuration::from_mins(5);

/// Why a ticket's `issuedAt` is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IssuedAtProblem {
    /// Rung longer ago than `max_age`: too late to book.
    TooOld { max_age: SignedDuration },
    /// Ahead of the server's clock by more than [`CLOCK_DRIFT`].
    InFuture,
}

/// Checks the instant a ticket was rung against `now`: no older than `max_age`, no further
/// ahead than [`CLOCK_DRIFT`]. Both bounds are inclusive.
pub fn check_issued_at(issued_at: Timestamp, now: Timestamp, max_age: SignedDuration) -> Result<(), IssuedAtProblem> {
    let age = now.duration_since(issued_at);
    if age > max_age {
        return Err(IssuedAtProblem::TooOld { max_age });
    }
    if -age > CLOCK_DRIFT {
        return Err(IssuedAtProblem::InFuture);
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
        assert_eq!(check(301), Err(IssuedAtProblem::InFuture));
    }

    #[test]
    fn instants_at_the_ends_of_time_are_refused_without_overflow() {
        let max_age = SignedDuration::from_hours(72);
        assert!(check_issued_at(Timestamp::MIN, Timestamp::MAX, max_age).is_err());
        assert!(check_issued_at(Timestamp::MAX, Timestamp::MIN, max_age).is_err());
    }
}
