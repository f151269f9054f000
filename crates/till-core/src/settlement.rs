//! Whether the till's payment matches the server's price, and what a sale earns in loyalty.

use crate::money::{Cents, checked_sum};
use crate::sale::{TenderMethod, TenderSet};

/// Why a settlement was refused. The messages name the amounts, for the person at the till.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettlementError {
    #[error(
        "The amount due ({amount_due}) differs from the server's total ({total}) by {gap}, more than the {tolerance} tolerated."
    )]
    AmountDue {
        amount_due: Cents,
        total: Cents,
        gap: Cents,
        tolerance: Cents,
    },
    #[error("The tenders apply {applied} but the amount due is {amount_due}.")]
    Applied { applied: Cents, amount_due: Cents },
    #[error(
        "Tender {tender}: presented {presented} does not equal applied {applied} + change {change} + forfeited {forfeited}."
    )]
    Tender {
        tender: String,
        presented: Cents,
        applied: Cents,
        change: Cents,
        forfeited: Cents,
    },
    #[error("The tenders add up to more than can be represented.")]
    Overflow,
}

/// The three rules: `amountDue` within `tolerance` of `total`; the applied amounts sum to
/// `amountDue`; each tender balances (`presented = applied + change + forfeited`).
pub fn check_settlement(total: Cents, tenders: &TenderSet, tolerance: Cents) -> Result<(), SettlementError> {
    let gap = tenders
        .amount_due
        .checked_sub(total)
        .map_err(|_| SettlementError::Overflow)?;
    let gap = Cents::new(gap.get().abs()).ok_or(SettlementError::Overflow)?;
    if gap > tolerance {
        return Err(SettlementError::AmountDue {
            amount_due: tenders.amount_due,
            total,
            gap,
            tolerance,
        });
    }
    for tender in &tenders.tenders {
        let balance = tender
            .applied
            .checked_add(tender.change)
            .and_then(|sum| sum.checked_add(tender.forfeited))
            .map_err(|_| SettlementError::Overflow)?;
        if balance != tender.presented {
            return Err(SettlementError::Tender {
                tender: tender.id.clone(),
                presented: tender.presented,
                applied: tender.applied,
                change: tender.change,
                forfeited: tender.forfeited,
            });
        }
    }
    let applied = checked_sum(tenders.tenders.iter().map(|t| t.applied)).map_err(|_| SettlementError::Overflow)?;
    if applied != tenders.amount_due {
        return Err(SettlementError::Applied {
            applied,
            amount_due: tenders.amount_due,
        });
    }
    Ok(())
}

/// Points earned: `points_per_unit` per whole currency unit of `total` not paid with loyalty.
pub fn loyalty_points(total: Cents, tenders: &TenderSet, points_per_unit: i64) -> i64 {
    let by_loyalty: i64 = tenders
        .tenders
        .iter()
        .filter(|t| t.method == TenderMethod::Loyalty)
        .map(|t| t.applied.get())
        .sum();
    let earning = (total.get() - by_loyalty).max(0);
    (earning / 100).saturating_mul(points_per_unit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sale::Tender;

    fn cents(v: i64) -> Cents {
        Cents::new(v).unwrap()
    }

    fn tender(id: &str, method: TenderMethod, applied: i64, presented: i64, change: i64) -> Tender {
        Tender {
            id: id.into(),
            method,
            applied: cents(applied),
            presented: cents(presented),
            change: cents(change),
            forfeited: Cents::ZERO,
            reference: None,
        }
    }

    #[test]
    fn a_balanced_settlement_passes() {
        let set = TenderSet {
            amount_due: cents(1840),
            tenders: vec![
                tender("t1", TenderMethod::Cash, 1000, 2000, 1000),
                tender("t2", TenderMethod::Card, 840, 840, 0),
            ],
            sequence: 2,
        };
        assert_eq!(check_settlement(cents(1840), &set, Cents::ZERO), Ok(()));
    }

    #[test]
    fn each_rule_names_the_amounts() {
        let set = TenderSet {
            amount_due: cents(1800),
            tenders: vec![tender("t1", TenderMethod::Card, 1800, 1800, 0)],
            sequence: 1,
        };
        let error = check_settlement(cents(1840), &set, cents(2)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "The amount due (18.00) differs from the server's total (18.40) by 0.40, more than the 0.02 tolerated."
        );
        assert_eq!(check_settlement(cents(1802), &set, cents(2)), Ok(()));
        let short = TenderSet {
            amount_due: cents(1840),
            tenders: vec![tender("t1", TenderMethod::Card, 1800, 1800, 0)],
            sequence: 1,
        };
        assert!(matches!(
            check_settlement(cents(1840), &short, Cents::ZERO),
            Err(SettlementError::Applied { .. })
        ));
        let unbalanced = TenderSet {
            amount_due: cents(1840),
            tenders: vec![tender("cash", TenderMethod::Cash, 1840, 2000, 100)],
            sequence: 1,
        };
        let error = check_settlement(cents(1840), &unbalanced, Cents::ZERO).unwrap_err();
        assert!(error.to_string().starts_with("Tender cash: presented 20.00"));
    }

    #[test]
    fn loyalty_counts_whole_units_not_paid_with_points() {
        let set = TenderSet {
            amount_due: cents(2599),
            tenders: vec![
                tender("a", TenderMethod::Loyalty, 500, 500, 0),
                tender("b", TenderMethod::Card, 2099, 2099, 0),
            ],
            sequence: 1,
        };
        assert_eq!(loyalty_points(cents(2599), &set, 1), 20);
        assert_eq!(
            loyalty_points(
                cents(99),
                &TenderSet {
                    amount_due: cents(99),
                    tenders: vec![],
                    sequence: 0
                },
                1
            ),
            0
        );
    }
}
