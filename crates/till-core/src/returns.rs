//! Returns against a receipt: each returned unit refunds what the customer actually paid for it.
//!
//! A line's net (after its promotions, declared discounts and share of ticket discounts and
//! coupon) is spread over its units cumulatively: returning units `before+1 ..= before+k` of
//! `q` refunds `round(net * (before+k) / q) - round(net * before / q)`. However a line is
//! returned, in one go or in parts, the refunds add up to exactly its net and never exceed it.
//! Loyalty points come back the same way, in proportion to the amount refunded.

use crate::canonical::fingerprint;
use crate::ids::{RegisterId, SessionId, StoreId, Subject, TransactionId};
use crate::money::{Cents, Overflow, VatRate, checked_sum, div_round_half_away};
use crate::pricing::{VatTotal, vat_totals};
use crate::sale::TenderSet;
use crate::sale::canonical_form::Tenders;
use serde_json::{Value, json};

/// `amount` spread cumulatively over `total` parts: what parts `before+1 ..= before+now` get.
pub fn prorate(amount: i64, total: i64, before: i64, now: i64) -> i64 {
    if total <= 0 {
        return 0;
    }
    let share = |parts: i64| {
        div_round_half_away(
            i128::from(amount) * i128::from(parts.clamp(0, total)),
            i128::from(total),
        )
    };
    // Both shares lie between 0 and `amount`, so their difference fits.
    (share(before + now) - share(before)) as i64
}

/// A line of the original sale as a return sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReturnableLine {
    pub line_id: String,
    pub quantity: i64,
    /// Units already given back by earlier returns.
    pub returned: i64,
    pub vat_rate: VatRate,
    pub gross: Cents,
    pub promotion: Cents,
    pub declared: Cents,
    pub net: Cents,
}

impl ReturnableLine {
    pub fn remaining(&self) -> i64 {
        self.quantity - self.returned
    }
}

/// The original sale as a return sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReturnableSale {
    pub total: Cents,
    pub points_earned: i64,
    /// What earlier returns refunded and took back.
    pub refunded: Cents,
    pub points_returned: i64,
    pub lines: Vec<ReturnableLine>,
}

/// Units of one original line the customer brings back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReturnedUnits {
    pub line_id: String,
    pub units: i64,
}

/// What returning some units of a line gives back. Every amount is the original's, prorated
/// cumulatively, so each of them adds up over all returns to the original line's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineRefund {
    /// Position of the line in the original sale.
    pub index: usize,
    pub units: i64,
    /// Units of this line returned before this return.
    pub returned_before: i64,
    /// The line's gross for those units (before any reduction).
    pub gross: Cents,
    pub promotion: Cents,
    pub declared: Cents,
    /// The rest of the reduction: the line's share of ticket discounts and coupon.
    pub ticket: Cents,
    /// What the customer paid for them: the refund.
    pub refund: Cents,
    pub vat_rate: VatRate,
}

/// A return, priced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReturnPlan {
    pub lines: Vec<LineRefund>,
    /// Sum of the returned units' gross.
    pub subtotal: Cents,
    /// Sum of the refunds: what goes back to the customer.
    pub refund: Cents,
    /// The refund's VAT breakdown by rate, highest rate first.
    pub vat: Vec<VatTotal>,
    pub points_back: i64,
    pub item_count: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReturnError {
    #[error("line {line_id} is not a line of the original sale")]
    UnknownLine { line_id: String },
    #[error("only {remaining} of the {quantity} units of line {line_id} remain to be returned")]
    TooMany {
        line_id: String,
        quantity: i64,
        remaining: i64,
    },
    #[error("amounts exceed the largest representable value")]
    Overflow,
}

impl From<Overflow> for ReturnError {
    fn from(_: Overflow) -> Self {
        ReturnError::Overflow
    }
}

/// Prices the return of `wanted` from `sale`: which units, at what refund, with what VAT, and
/// how many loyalty points come back.
pub fn plan_return(sale: &ReturnableSale, wanted: &[ReturnedUnits]) -> Result<ReturnPlan, ReturnError> {
    let mut returned: Vec<i64> = sale.lines.iter().map(|l| l.returned).collect();
    let mut lines = Vec::with_capacity(wanted.len());
    for want in wanted {
        let index = sale
            .lines
            .iter()
            .position(|l| l.line_id == want.line_id)
            .ok_or_else(|| ReturnError::UnknownLine {
                line_id: want.line_id.clone(),
            })?;
        let line = &sale.lines[index];
        let before = returned[index];
        let remaining = line.quantity - before;
        if want.units <= 0 || want.units > remaining {
            return Err(ReturnError::TooMany {
                line_id: line.line_id.clone(),
                quantity: line.quantity,
                remaining,
            });
        }
        let share =
            |amount: Cents| Cents::new(prorate(amount.get(), line.quantity, before, want.units)).ok_or(Overflow);
        let (gross, promotion, declared, refund) = (
            share(line.gross)?,
            share(line.promotion)?,
            share(line.declared)?,
            share(line.net)?,
        );
        let ticket = gross
            .checked_sub(promotion)?
            .checked_sub(declared)?
            .checked_sub(refund)?;
        returned[index] = before + want.units;
        lines.push(LineRefund {
            index,
            units: want.units,
            returned_before: before,
            gross,
            promotion,
            declared,
            ticket,
            refund,
            vat_rate: line.vat_rate,
        });
    }
    let refund = checked_sum(lines.iter().map(|l| l.refund))?;
    Ok(ReturnPlan {
        subtotal: checked_sum(lines.iter().map(|l| l.gross))?,
        vat: refund_vat(&lines)?,
        points_back: prorate(sale.points_earned, sale.total.get(), sale.refunded.get(), refund.get()),
        item_count: lines
            .iter()
            .try_fold(0i64, |sum, l| sum.checked_add(l.units))
            .ok_or(Overflow)?,
        refund,
        lines,
    })
}

/// The VAT breakdown of refunds by rate, highest rate first, computed as on any ticket: the
/// VAT contained in each rate's total.
fn refund_vat(lines: &[LineRefund]) -> Result<Vec<VatTotal>, Overflow> {
    vat_totals(lines.iter().map(|line| (line.vat_rate, line.refund)))
}

/// A return request, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReturnRequest {
    /// The return's own idempotency key.
    pub transaction_id: TransactionId,
    pub original_transaction_id: TransactionId,
    pub number: String,
    pub store_id: StoreId,
    pub seller_id: Subject,
    pub session_id: SessionId,
    pub register_id: Option<RegisterId>,
    pub lines: Vec<ReturnedUnits>,
    /// How the refund is paid out; `amount_due` is the refund.
    pub tenders: TenderSet,
}

impl ReturnRequest {
    /// The request in canonical form: two requests meaning the same return have the same one.
    pub fn canonical(&self) -> Value {
        let lines: Vec<Value> = self
            .lines
            .iter()
            .map(|l| json!({"lineId": l.line_id, "quantity": l.units}))
            .collect();
        json!({
            "transactionId": self.transaction_id,
            "originalTransactionId": self.original_transaction_id,
            "number": self.number,
            "storeId": self.store_id,
            "sellerId": self.seller_id,
            "sessionId": self.session_id,
            "registerId": self.register_id,
            "lines": lines,
            "tenders": Tenders::of(&self.tenders),
        })
    }

    /// SHA-256 of the canonical form, in hex: what idempotency compares.
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.canonical())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cents(v: i64) -> Cents {
        Cents::new(v).unwrap()
    }

    fn rate(hundredths: i64) -> VatRate {
        VatRate::from_hundredths(hundredths).unwrap()
    }

    fn line(id: &str, quantity: i64, gross: i64, promotion: i64, declared: i64, net: i64) -> ReturnableLine {
        ReturnableLine {
            line_id: id.into(),
            quantity,
            returned: 0,
            vat_rate: rate(2000),
            gross: cents(gross),
            promotion: cents(promotion),
            declared: cents(declared),
            net: cents(net),
        }
    }

    fn want(line_id: &str, units: i64) -> ReturnedUnits {
        ReturnedUnits {
            line_id: line_id.into(),
            units,
        }
    }

    #[test]
    fn a_discounted_unit_refunds_what_was_paid() {
        // Three mugs at 14.50 under "3 for 2": the line's net is 29.00, 9.67 a unit.
        let sale = ReturnableSale {
            total: cents(2900),
            points_earned: 29,
            refunded: Cents::ZERO,
            points_returned: 0,
            lines: vec![line("l1", 3, 4350, 1450, 0, 2900)],
        };
        let one = plan_return(&sale, &[want("l1", 1)]).unwrap();
        assert_eq!(
            (one.subtotal, one.refund, one.points_back),
            (cents(1450), cents(967), 10)
        );
        assert_eq!(one.lines[0].promotion, cents(483));
        assert_eq!(one.lines[0].ticket, Cents::ZERO);

        let mut after = sale.clone();
        after.lines[0].returned = 1;
        after.refunded = cents(967);
        after.points_returned = 10;
        let rest = plan_return(&after, &[want("l1", 2)]).unwrap();
        assert_eq!((rest.refund, rest.points_back), (cents(1933), 19));
        assert_eq!(
            plan_return(&after, &[want("l1", 3)]),
            Err(ReturnError::TooMany {
                line_id: "l1".into(),
                quantity: 3,
                remaining: 2
            })
        );
    }

    #[test]
    fn a_line_of_another_sale_is_refused() {
        let sale = ReturnableSale {
            total: cents(100),
            points_earned: 1,
            refunded: Cents::ZERO,
            points_returned: 0,
            lines: vec![line("l1", 1, 100, 0, 0, 100)],
        };
        assert_eq!(
            plan_return(&sale, &[want("l9", 1)]),
            Err(ReturnError::UnknownLine { line_id: "l9".into() })
        );
    }

    #[test]
    fn the_same_line_named_twice_counts_both_times() {
        let sale = ReturnableSale {
            total: cents(300),
            points_earned: 3,
            refunded: Cents::ZERO,
            points_returned: 0,
            lines: vec![line("l1", 2, 300, 0, 0, 300)],
        };
        let plan = plan_return(&sale, &[want("l1", 1), want("l1", 1)]).unwrap();
        assert_eq!(plan.refund, cents(300));
        assert!(matches!(
            plan_return(&sale, &[want("l1", 2), want("l1", 1)]),
            Err(ReturnError::TooMany { .. })
        ));
    }

    #[test]
    fn the_vat_of_a_refund_is_that_of_its_rates() {
        let mut food = line("bread", 2, 440, 0, 0, 440);
        food.vat_rate = rate(550);
        let sale = ReturnableSale {
            total: cents(1640),
            points_earned: 0,
            refunded: Cents::ZERO,
            points_returned: 0,
            lines: vec![food, line("mug", 1, 1200, 0, 0, 1200)],
        };
        let plan = plan_return(&sale, &[want("bread", 1), want("mug", 1)]).unwrap();
        assert_eq!(
            plan.vat,
            vec![
                VatTotal {
                    rate: rate(2000),
                    total: cents(1200),
                    vat: cents(200)
                },
                VatTotal {
                    rate: rate(550),
                    total: cents(220),
                    vat: cents(11)
                },
            ]
        );
        assert_eq!(plan.item_count, 2);
    }

    prop_compose! {
        fn any_line()(quantity in 1i64..40, unit in 0i64..100_000, promo in 0u32..=100, declared in 0u32..=100, ticket in 0u32..=100)
            -> (i64, i64, i64, i64, i64) {
            let gross = quantity * unit;
            let promotion = gross * i64::from(promo) / 100;
            let declared = (gross - promotion) * i64::from(declared) / 100;
            let net = (gross - promotion - declared) * (100 - i64::from(ticket)) / 100;
            (quantity, gross, promotion, declared, net)
        }
    }

    proptest! {
        #[test]
        fn partial_returns_add_up_to_the_net_exactly(
            net in 0i64..1_000_000,
            quantity in 1i64..50,
            cuts in prop::collection::vec(1i64..10, 1..20),
        ) {
            let mut returned = 0;
            let mut refunded = 0;
            for cut in cuts {
                let units = cut.min(quantity - returned);
                if units == 0 { break; }
                let part = prorate(net, quantity, returned, units);
                prop_assert!(part >= 0);
                refunded += part;
                returned += units;
                prop_assert!(refunded <= net);
            }
            if returned < quantity {
                refunded += prorate(net, quantity, returned, quantity - returned);
            }
            prop_assert_eq!(refunded, net);
        }

        #[test]
        fn returning_everything_in_parts_gives_back_the_sale_exactly(
            shapes in prop::collection::vec(any_line(), 1..6),
            earned in 0i64..5_000,
            cuts in prop::collection::vec((0usize..6, 1i64..5), 1..40),
        ) {
            let lines: Vec<ReturnableLine> = shapes.iter().enumerate()
                .map(|(i, (q, g, p, d, n))| line(&format!("l{i}"), *q, *g, *p, *d, *n))
                .collect();
            let total = cents(lines.iter().map(|l| l.net.get()).sum());
            // A sale earns nothing when nothing was paid.
            let earned = if total == Cents::ZERO { 0 } else { earned };
            let mut sale = ReturnableSale { total, points_earned: earned, refunded: Cents::ZERO, points_returned: 0, lines };
            let (mut gross, mut promotion, mut declared, mut ticket) = (0i64, 0i64, 0i64, 0i64);
            let mut apply = |sale: &mut ReturnableSale, plan: ReturnPlan| {
                for l in &plan.lines {
                    sale.lines[l.index].returned += l.units;
                    gross += l.gross.get();
                    promotion += l.promotion.get();
                    declared += l.declared.get();
                    ticket += l.ticket.get();
                }
                sale.refunded = sale.refunded.checked_add(plan.refund).unwrap();
                sale.points_returned += plan.points_back;
            };
            for (index, units) in cuts {
                let index = index % sale.lines.len();
                let units = units.min(sale.lines[index].remaining());
                if units == 0 { continue; }
                let plan = plan_return(&sale, &[want(&format!("l{index}"), units)]).unwrap();
                prop_assert!(sale.refunded.get() + plan.refund.get() <= total.get());
                prop_assert!(sale.points_returned + plan.points_back <= earned);
                apply(&mut sale, plan);
            }
            let rest: Vec<ReturnedUnits> = sale.lines.iter()
                .filter(|l| l.remaining() > 0)
                .map(|l| want(&l.line_id, l.remaining()))
                .collect();
            if !rest.is_empty() {
                let plan = plan_return(&sale, &rest).unwrap();
                apply(&mut sale, plan);
            }
            prop_assert_eq!(sale.refunded, total);
            prop_assert_eq!(sale.points_returned, earned);
            prop_assert_eq!(gross, shapes.iter().map(|s| s.1).sum::<i64>());
            prop_assert_eq!(promotion, shapes.iter().map(|s| s.2).sum::<i64>());
            prop_assert_eq!(declared, shapes.iter().map(|s| s.3).sum::<i64>());
            prop_assert_eq!(ticket, shapes.iter().map(|s| s.1 - s.2 - s.3 - s.4).sum::<i64>());
        }
    }
}
