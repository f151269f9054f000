//! A PIN typed at the till, weighed against the lockout: the attempt is reserved first (a
//! subject locked out is not checked at all), a wrong PIN counts against the subject at that
//! register and at every register together, a right one clears both counts. The same for a
//! manager approving and a cashier opening a session. A till's wrong PINs thus lock the
//! subject out of that register; only many more, wherever typed, lock them out everywhere.

use crate::app::App;
use crate::refusal::Error;
use crate::secret::{pin_work, verify_pin};
use crate::storage::people::PinAttempt;
use crate::storage::people::StaffRecord;
use jiff::Timestamp;
use till_core::ids::{RegisterId, Subject};
use till_core::staff::PinLimits;

/// How a PIN check went.
pub(crate) enum PinCheck {
    Matched(StaffRecord),
    /// Too many wrong PINs; the next attempt is weighed in `retry_after` seconds.
    LockedOut {
        retry_after: u64,
    },
    /// An unknown subject or a wrong PIN; `last_chance` when this failure locks them out.
    Wrong {
        last_chance: bool,
    },
}

pub(crate) async fn check_pin(
    app: &App,
    subject: &Subject,
    register: &RegisterId,
    pin: &str,
    now: Timestamp,
) -> Result<PinCheck, Error> {
    let (people, settings) = (app.people(), app.settings());
    let limits = PinLimits::of(settings.pin_max_failures);
    let attempt = people
        .reserve_pin_attempt(subject.as_str(), register, now, limits, settings.pin_lockout)
        .await?;
    let last_chance = match attempt {
        PinAttempt::Allowed { last } => last,
        PinAttempt::LockedUntil(until) => {
            return Ok(PinCheck::LockedOut {
                retry_after: seconds_until(until, now),
            });
        }
    };
    let staff = people.get_staff(subject).await?;
    let hash = staff.as_ref().map(|s| s.pin_hash.clone());
    let pin = pin.to_owned();
    let matched = pin_work(move || verify_pin(&pin, hash.as_deref()))
        .await
        .map_err(Error::internal)?;
    match staff {
        Some(staff) if matched => {
            people.clear_pin_failures(subject.as_str(), register, now).await?;
            Ok(PinCheck::Matched(staff))
        }
        _ => Ok(PinCheck::Wrong { last_chance }),
    }
}

/// Seconds until `until`, rounded up, at least 1: an honest `Retry-After`.
pub(crate) fn seconds_until(until: Timestamp, now: Timestamp) -> u64 {
    let micros = until.as_microsecond().saturating_sub(now.as_microsecond()).max(0) as u64;
    micros.div_ceil(1_000_000).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_rounds_up_and_is_never_zero() {
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let later = |micros: i64| Timestamp::from_microsecond(now.as_microsecond() + micros).unwrap();
        assert_eq!(seconds_until(later(1), now), 1);
        assert_eq!(seconds_until(later(1_000_000), now), 1);
        assert_eq!(seconds_until(later(1_000_001), now), 2);
        assert_eq!(seconds_until(now, now), 1, "a lock ending now still says one second");
        assert_eq!(seconds_until(later(-5_000_000), now), 1);
    }
}
