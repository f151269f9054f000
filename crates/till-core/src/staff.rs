//! Staff members: roles, PINs and the discounts they may grant alone.

use crate::grant::{Grant, GrantSet, Role};
use crate::money::{Bps, Cents};

/// A staff member as the back office writes it. The PIN is only ever held as its hash.
#[derive(Clone, Debug)]
pub struct StaffMember {
    pub display_name: String,
    pub role: Role,
    /// Grants beyond those of the role.
    pub permissions: GrantSet,
    pub discount_limit: Option<DiscountLimit>,
}

impl StaffMember {
    pub fn grants(&self) -> GrantSet {
        self.role.default_grants().union(self.permissions)
    }

    /// What this person may grant alone. Without an explicit limit, holders of
    /// `price:override` are unlimited and everyone else may grant nothing.
    pub fn effective_limit(&self) -> DiscountLimit {
        effective_limit(self.discount_limit, self.grants())
    }
}

/// The largest discount a person may grant without approval, in both dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiscountLimit {
    pub percent: Bps,
    pub amount: Cents,
}

impl DiscountLimit {
    pub const NONE: DiscountLimit = DiscountLimit {
        percent: Bps::new(0).unwrap(),
        amount: Cents::ZERO,
    };
    pub const UNLIMITED: DiscountLimit = DiscountLimit {
        percent: Bps::FULL,
        amount: Cents::new(crate::money::MAX_SAFE_INTEGER).unwrap(),
    };

    /// Whether a reduction of `amount`, being `percent` of what it applies to, fits.
    pub fn allows(self, amount: Cents, percent: Bps) -> bool {
        amount <= self.amount && percent <= self.percent
    }
}

pub fn effective_limit(explicit: Option<DiscountLimit>, grants: GrantSet) -> DiscountLimit {
    match explicit {
        Some(limit) => limit,
        None if grants.contains(Grant::PriceOverride) => DiscountLimit::UNLIMITED,
        None => DiscountLimit::NONE,
    }
}

/// A PIN as typed at the till: 4 to 12 digits.
#[derive(Clone)]
pub struct Pin(String);

impl Pin {
    pub fn parse(text: &str) -> Option<Pin> {
        let ok = (4..=12).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit());
        ok.then(|| Pin(text.to_owned()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Pin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pin(***)")
    }
}

/// How many more wrong PINs a holder may type across every register than at one: a till's
/// wrong PINs lock the holder out of that till, and only this many times as many, wherever
/// typed, lock them out of every till.
pub const PIN_FAILURES_EVERYWHERE_FACTOR: u32 = 3;

/// The wrong PINs in a row after which a holder is locked out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PinLimits {
    /// At one register: that register refuses the holder's PIN for a while.
    pub at_one_register: u32,
    /// At every register together: every register refuses it.
    pub everywhere: u32,
}

impl PinLimits {
    /// The limits for a setting of `at_one_register` wrong PINs (at least one).
    pub fn of(at_one_register: u32) -> PinLimits {
        let at_one_register = at_one_register.max(1);
        PinLimits {
            at_one_register,
            everywhere: at_one_register.saturating_mul(PIN_FAILURES_EVERYWHERE_FACTOR),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_pins_lock_one_register_before_every_register() {
        assert_eq!(
            PinLimits::of(5),
            PinLimits {
                at_one_register: 5,
                everywhere: 15
            }
        );
        assert_eq!(PinLimits::of(0).at_one_register, 1);
        assert_eq!(PinLimits::of(u32::MAX).everywhere, u32::MAX);
    }

    #[test]
    fn pins_are_four_to_twelve_digits() {
        assert!(Pin::parse("1234").is_some());
        assert!(Pin::parse("123456789012").is_some());
        assert!(Pin::parse("123").is_none());
        assert!(Pin::parse("1234567890123").is_none());
        assert!(Pin::parse("12a4").is_none());
        assert_eq!(format!("{:?}", Pin::parse("1234").unwrap()), "Pin(***)");
    }

    #[test]
    fn limits_default_by_price_override() {
        let manager = GrantSet::of(&[Grant::PriceOverride]);
        assert_eq!(effective_limit(None, manager), DiscountLimit::UNLIMITED);
        assert_eq!(effective_limit(None, GrantSet::EMPTY), DiscountLimit::NONE);
        let explicit = DiscountLimit {
            percent: Bps::new(1_000).unwrap(),
            amount: Cents::new(500).unwrap(),
        };
        assert_eq!(effective_limit(Some(explicit), manager), explicit);
        assert!(explicit.allows(Cents::new(500).unwrap(), Bps::new(1_000).unwrap()));
        assert!(!explicit.allows(Cents::new(501).unwrap(), Bps::new(10).unwrap()));
        assert!(!explicit.allows(Cents::new(1).unwrap(), Bps::new(1_001).unwrap()));
    }
}
