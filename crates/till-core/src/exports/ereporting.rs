//! The e-reporting aggregates of B2C sales: per local day and VAT rate, the taxable base, the
//! VAT and the number of transactions, across the registers exported. Base and VAT are the
//! sealed closures' breakdowns (returns subtracted); the count is of the tickets with a part at
//! that rate, sales and returns alike.

use super::{ClosedDay, ExportError};
use crate::money::VatRate;
use jiff::civil::Date;
use std::collections::BTreeMap;

/// One day and rate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DayRate {
    pub date: Date,
    pub vat_rate: VatRate,
    pub taxable_base_cents: i64,
    pub vat_cents: i64,
    pub transaction_count: i64,
}

/// The aggregates of `days`, by day, then rate from the highest. A day whose tickets do not add
/// up to its closure is refused.
pub fn aggregates(days: &[ClosedDay]) -> Result<Vec<DayRate>, ExportError> {
    let mut sums: BTreeMap<(Date, std::cmp::Reverse<VatRate>), DayRate> = BTreeMap::new();
    for day in days {
        day.ensure_as_sealed()?;
        let overflow = || day.overflow();
        for part in &day.sealed_vat {
            // Only a damaged record holds a rate out of range: its day is not as sealed.
            let rate = VatRate::from_hundredths(part.vat_rate).ok_or_else(|| ExportError::NotAsSealed {
                register_id: day.register_id.clone(),
                date: day.date,
            })?;
            let count = day.tickets.rates.get(&part.vat_rate).map_or(0, |rate| rate.tickets);
            let sum = sums.entry((day.date, std::cmp::Reverse(rate))).or_insert(DayRate {
                date: day.date,
                vat_rate: rate,
                taxable_base_cents: 0,
                vat_cents: 0,
                transaction_count: 0,
            });
            let base = part.total_cents.checked_sub(part.vat_cents).ok_or_else(overflow)?;
            sum.taxable_base_cents = sum.taxable_base_cents.checked_add(base).ok_or_else(overflow)?;
            sum.vat_cents = sum.vat_cents.checked_add(part.vat_cents).ok_or_else(overflow)?;
            sum.transaction_count = sum.transaction_count.checked_add(count).ok_or_else(overflow)?;
        }
    }
    Ok(sums.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::day;
    use super::*;

    #[test]
    fn registers_add_up_per_day_and_rate_returns_subtracted() {
        let mut other = day("2026-03-31", &[(2000, 600, 100, "cash")]);
        other.register_id = "r2".into();
        let days = [
            day(
                "2026-03-31",
                &[
                    (2000, 1200, 200, "card"),
                    (550, 211, 11, "cash"),
                    (2000, -1200, -200, "card"),
                ],
            ),
            other,
            day("2026-03-30", &[(550, 422, 22, "cash")]),
        ];
        let rows: Vec<(String, i64, i64, i64, i64)> = aggregates(&days)
            .unwrap()
            .into_iter()
            .map(|r| {
                (
                    r.date.to_string(),
                    r.vat_rate.hundredths(),
                    r.taxable_base_cents,
                    r.vat_cents,
                    r.transaction_count,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("2026-03-30".to_owned(), 550, 400, 22, 1),
                ("2026-03-31".to_owned(), 2000, 500, 100, 3),
                ("2026-03-31".to_owned(), 550, 200, 11, 1),
            ]
        );
    }
}
