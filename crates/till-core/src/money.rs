//! Money as integer minor units (cents) and rates as basis points. Never floats.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::iter::Sum;

/// Largest integer the interface accepts anywhere: 2^53 - 1, the last integer a JSON client
/// holding numbers as IEEE-754 doubles represents exactly.
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// An amount of money in minor currency units. Every operation is checked: a result outside
/// `-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER` is an overflow, never a wrapped or saturated value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "i64")]
pub struct Cents(i64);

impl TryFrom<i64> for Cents {
    type Error = Overflow;

    fn try_from(value: i64) -> Result<Cents, Overflow> {
        Cents::new(value).ok_or(Overflow)
    }
}

impl From<Cents> for i64 {
    fn from(cents: Cents) -> i64 {
        cents.0
    }
}

/// An amount left the range the interface can carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("amount exceeds the largest representable value")]
pub struct Overflow;

impl Cents {
    pub const ZERO: Cents = Cents(0);

    /// `None` when the value is outside `-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER`.
    pub const fn new(value: i64) -> Option<Cents> {
        if value >= -MAX_SAFE_INTEGER && value <= MAX_SAFE_INTEGER {
            Some(Cents(value))
        } else {
            None
        }
    }

    pub const fn get(self) -> i64 {
        self.0
    }

    pub const fn is_negative(self) -> bool {
        self.0 < 0
    }

    pub fn checked_add(self, other: Cents) -> Result<Cents, Overflow> {
        self.0.checked_add(other.0).and_then(Cents::new).ok_or(Overflow)
    }

    pub fn checked_sub(self, other: Cents) -> Result<Cents, Overflow> {
        self.0.checked_sub(other.0).and_then(Cents::new).ok_or(Overflow)
    }

    pub fn checked_mul(self, factor: i64) -> Result<Cents, Overflow> {
        self.0.checked_mul(factor).and_then(Cents::new).ok_or(Overflow)
    }

    pub fn checked_neg(self) -> Cents {
        // The range is symmetric, so negation cannot leave it.
        Cents(-self.0)
    }

    /// `rate` of this amount, rounded half away from zero.
    pub fn percent(self, rate: Bps) -> Cents {
        // |amount| <= 2^53 and rate <= 10^4, so the product fits in i128 with room to spare,
        // and the result is no larger in magnitude than the amount itself.
        Cents(div_round_half_away(i128::from(self.0) * i128::from(rate.get()), 10_000) as i64)
    }

    /// `self * numerator / denominator`, rounded half away from zero. `denominator` must be > 0.
    pub fn scale(self, numerator: i64, denominator: i64) -> Result<Cents, Overflow> {
        assert!(denominator > 0, "scale by a non-positive denominator");
        let value = div_round_half_away(i128::from(self.0) * i128::from(numerator), i128::from(denominator));
        i64::try_from(value).ok().and_then(Cents::new).ok_or(Overflow)
    }

    pub fn min(self, other: Cents) -> Cents {
        Cents(self.0.min(other.0))
    }

    pub fn max(self, other: Cents) -> Cents {
        Cents(self.0.max(other.0))
    }
}

/// Sums amounts with overflow checking.
pub fn checked_sum<I: IntoIterator<Item = Cents>>(amounts: I) -> Result<Cents, Overflow> {
    amounts.into_iter().try_fold(Cents::ZERO, Cents::checked_add)
}

impl Sum<Cents> for Option<Cents> {
    fn sum<I: Iterator<Item = Cents>>(iter: I) -> Self {
        checked_sum(iter).ok()
    }
}

impl fmt::Display for Cents {
    /// Renders as units and cents, `-12.05`; the currency is the caller's business.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:02}", abs / 100, abs % 100)
    }
}

/// Integer division rounding half away from zero. `denominator` must be positive.
pub fn div_round_half_away(numerator: i128, denominator: i128) -> i128 {
    debug_assert!(denominator > 0);
    let quotient = numerator / denominator;
    let remainder = numerator % denominator;
    if remainder.abs() * 2 >= denominator {
        quotient + numerator.signum()
    } else {
        quotient
    }
}

/// A rate in basis points, `0..=10000` (10000 = 100 %).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "i64")]
pub struct Bps(u16);

impl TryFrom<i64> for Bps {
    type Error = Overflow;

    fn try_from(value: i64) -> Result<Bps, Overflow> {
        Bps::new(value).ok_or(Overflow)
    }
}

impl From<Bps> for i64 {
    fn from(bps: Bps) -> i64 {
        i64::from(bps.0)
    }
}

impl Bps {
    pub const FULL: Bps = Bps(10_000);

    pub const fn new(value: i64) -> Option<Bps> {
        if value >= 0 && value <= 10_000 {
            Some(Bps(value as u16))
        } else {
            None
        }
    }

    pub const fn get(self) -> i64 {
        self.0 as i64
    }
}

/// A VAT rate in hundredths of a percent (`2000` is 20 %, `550` is 5.5 %), the integer form the
/// fiscal journal prints. The interface carries it as a decimal percentage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VatRate(u16);

impl VatRate {
    pub const fn from_hundredths(value: i64) -> Option<VatRate> {
        if value >= 0 && value <= 10_000 {
            Some(VatRate(value as u16))
        } else {
            None
        }
    }

    /// Parses a percentage such as `5.5`. More precision than a hundredth of a percent is
    /// refused rather than silently rounded: the rate is printed on fiscal tickets.
    pub fn from_percent(percent: f64) -> Option<VatRate> {
        if !percent.is_finite() || !(0.0..=100.0).contains(&percent) {
            return None;
        }
        let hundredths = (percent * 100.0).round();
        if (percent * 100.0 - hundredths).abs() > 1e-6 {
            return None;
        }
        VatRate::from_hundredths(hundredths as i64)
    }

    pub const fn hundredths(self) -> i64 {
        self.0 as i64
    }

    /// The percentage as the interface writes it: an integer when whole, else a decimal.
    pub fn as_json_number(self) -> serde_json::Number {
        if self.0.is_multiple_of(100) {
            serde_json::Number::from(self.0 / 100)
        } else {
            serde_json::Number::from_f64(f64::from(self.0) / 100.0).expect("finite rate")
        }
    }
}

impl fmt::Display for VatRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (units, hundredths) = (self.0 / 100, self.0 % 100);
        match hundredths {
            0 => write!(f, "{units}%"),
            h if h.is_multiple_of(10) => write!(f, "{units}.{}%", h / 10),
            h => write!(f, "{units}.{h:02}%"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cents_refuse_values_past_the_safe_integer_range() {
        assert!(Cents::new(MAX_SAFE_INTEGER).is_some());
        assert!(Cents::new(MAX_SAFE_INTEGER + 1).is_none());
        assert!(Cents::new(-MAX_SAFE_INTEGER - 1).is_none());
        let max = Cents::new(MAX_SAFE_INTEGER).unwrap();
        assert_eq!(max.checked_add(Cents::new(1).unwrap()), Err(Overflow));
        assert_eq!(max.checked_mul(2), Err(Overflow));
    }

    #[test]
    fn percent_rounds_half_away_from_zero() {
        let bps = |v| Bps::new(v).unwrap();
        assert_eq!(Cents(5).percent(bps(5_000)), Cents(3)); // 2.5 -> 3
        assert_eq!(Cents(-5).percent(bps(5_000)), Cents(-3)); // -2.5 -> -3
        assert_eq!(Cents(999).percent(bps(1_000)), Cents(100)); // 99.9 -> 100
        assert_eq!(Cents(1_234).percent(bps(1_500)), Cents(185)); // 185.1 -> 185
        assert_eq!(Cents(MAX_SAFE_INTEGER).percent(Bps::FULL), Cents(MAX_SAFE_INTEGER));
    }

    #[test]
    fn vat_rates_parse_from_percentages_to_hundredths() {
        assert_eq!(VatRate::from_percent(5.5).unwrap().hundredths(), 550);
        assert_eq!(VatRate::from_percent(2.1).unwrap().hundredths(), 210);
        assert_eq!(VatRate::from_percent(20.0).unwrap().hundredths(), 2_000);
        assert_eq!(VatRate::from_percent(100.0).unwrap().hundredths(), 10_000);
        assert!(VatRate::from_percent(5.555).is_none());
        assert!(VatRate::from_percent(-1.0).is_none());
        assert!(VatRate::from_percent(100.01).is_none());
        assert_eq!(VatRate::from_percent(5.5).unwrap().to_string(), "5.5%");
        assert_eq!(VatRate::from_percent(2.1).unwrap().as_json_number().to_string(), "2.1");
        assert_eq!(VatRate::from_percent(20.0).unwrap().as_json_number().to_string(), "20");
    }

    #[test]
    fn cents_display_as_units_and_cents() {
        assert_eq!(Cents(1_205).to_string(), "12.05");
        assert_eq!(Cents(-5).to_string(), "-0.05");
        assert_eq!(Cents(0).to_string(), "0.00");
    }
}
