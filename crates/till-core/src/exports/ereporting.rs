//! The e-reporting aggregates of B2C sales: per local day and VAT rate, the taxable base, the
//! VAT and the number of transactions, across the registers exported. Base and VAT are the
//! sealed closures' breakdowns (returns subtracted); the count is of the tickets with a part at
//! that rate, sales and returns alike.
//!
//! A ticket an invoice covers (a sale invoiced to a business, or a return a credit invoice
//! covers) is not B2C: it is left out of those aggregates and listed apart, per day and rate in
//! the same form ([`invoiced`]), so that B2C and invoiced add up to the closures to the cent.

use super::{ClosedDay, DayTickets, ExportError};
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

type Sums = BTreeMap<(Date, std::cmp::Reverse<VatRate>), DayRate>;

/// The B2C aggregates of `days`, by day, then rate from the highest: each closure's sealed
/// breakdown less its invoiced tickets. A day whose tickets do not add up to its closure is
/// refused.
pub fn aggregates(days: &[ClosedDay]) -> Result<Vec<DayRate>, ExportError> {
    let mut sums = Sums::new();
    for day in days {
        day.ensure_as_sealed()?;
        let overflow = || day.overflow();
        for part in &day.sealed_vat {
            let rate = rate_of(day, part.vat_rate)?;
            let tickets = day.tickets.rates.get(&part.vat_rate).map_or(0, |rate| rate.tickets);
            let invoiced = day.invoiced.rates.get(&part.vat_rate).cloned().unwrap_or_default();
            let base = part.total_cents.checked_sub(part.vat_cents).ok_or_else(overflow)?;
            let mut invoiced_total = invoiced.sales;
            invoiced_total
                .add(invoiced.returns.total_cents, invoiced.returns.vat_cents)
                .map_err(|_| overflow())?;
            let invoiced_base = invoiced_total.net_cents().map_err(|_| overflow())?;
            let row = DayRate {
                date: day.date,
                vat_rate: rate,
                taxable_base_cents: base.checked_sub(invoiced_base).ok_or_else(overflow)?,
                vat_cents: part
                    .vat_cents
                    .checked_sub(invoiced_total.vat_cents)
                    .ok_or_else(overflow)?,
                transaction_count: tickets.checked_sub(invoiced.tickets).ok_or_else(overflow)?,
            };
            add(&mut sums, row).map_err(|_| overflow())?;
        }
    }
    Ok(sums.into_values().collect())
}

/// The tickets of `days` invoiced to businesses, per day and rate in the same form, left out of
/// [`aggregates`]. A day whose tickets do not add up to its closure is refused.
pub fn invoiced(days: &[ClosedDay]) -> Result<Vec<DayRate>, ExportError> {
    let mut sums = Sums::new();
    for day in days {
        day.ensure_as_sealed()?;
        let overflow = || day.overflow();
        for row in rows_of(day, &day.invoiced)? {
            add(&mut sums, row).map_err(|_| overflow())?;
        }
    }
    Ok(sums.into_values().collect())
}

fn rows_of(day: &ClosedDay, tickets: &DayTickets) -> Result<Vec<DayRate>, ExportError> {
    let overflow = || day.overflow();
    let mut rows = Vec::new();
    for (hundredths, figures) in &tickets.rates {
        let mut total = figures.sales;
        total
            .add(figures.returns.total_cents, figures.returns.vat_cents)
            .map_err(|_| overflow())?;
        rows.push(DayRate {
            date: day.date,
            vat_rate: rate_of(day, *hundredths)?,
            taxable_base_cents: total.net_cents().map_err(|_| overflow())?,
            vat_cents: total.vat_cents,
            transaction_count: figures.tickets,
        });
    }
    Ok(rows)
}

/// Only a damaged record holds a rate out of range: its day is not as sealed.
fn rate_of(day: &ClosedDay, hundredths: i64) -> Result<VatRate, ExportError> {
    VatRate::from_hundredths(hundredths).ok_or_else(|| ExportError::NotAsSealed {
        register_id: day.register_id.clone(),
        date: day.date,
    })
}

fn add(sums: &mut Sums, row: DayRate) -> Result<(), super::Overflow> {
    let sum = sums
        .entry((row.date, std::cmp::Reverse(row.vat_rate)))
        .or_insert(DayRate {
            taxable_base_cents: 0,
            vat_cents: 0,
            transaction_count: 0,
            ..row.clone()
        });
    let overflow = |sum: Option<i64>| sum.ok_or(super::Overflow);
    sum.taxable_base_cents = overflow(sum.taxable_base_cents.checked_add(row.taxable_base_cents))?;
    sum.vat_cents = overflow(sum.vat_cents.checked_add(row.vat_cents))?;
    sum.transaction_count = overflow(sum.transaction_count.checked_add(row.transaction_count))?;
    Ok(())
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

    #[test]
    fn invoiced_tickets_are_left_out_of_b2c_and_listed_apart() {
        use crate::exports::TicketTender;
        use crate::fiscal::payload::SaleRecordVat;
        let mut day = day("2026-03-31", &[(2000, 1200, 200, "card"), (2000, 600, 100, "cash")]);
        let part = SaleRecordVat {
            vat_rate: 2000,
            total_cents: 600,
            vat_cents: 100,
        };
        let tender = TicketTender {
            method: "cash",
            applied_cents: 600,
            forfeited_cents: 0,
        };
        day.invoiced.add(&[part], &[tender]).unwrap();
        let days = [day];
        let b2c = aggregates(&days).unwrap();
        let b2b = invoiced(&days).unwrap();
        let figures = |rows: &[DayRate]| -> Vec<(i64, i64, i64)> {
            rows.iter()
                .map(|r| (r.taxable_base_cents, r.vat_cents, r.transaction_count))
                .collect()
        };
        assert_eq!(figures(&b2c), [(1000, 200, 1)]);
        assert_eq!(figures(&b2b), [(500, 100, 1)]);
    }
}
