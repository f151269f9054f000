//! The pricing engine. From the authority's unit prices to each line's net, in the order fixed
//! by the design, every step in integer cents, percentages rounded half away from zero, nothing
//! ever below zero:
//!
//! 1. gross = unit price x quantity (their sum is the subtotal);
//! 2. automatic promotions, reductions on lines found by the promotion engine;
//! 3. declared line-percent discounts, each on the line's running amount;
//! 4. ticket percents (basket promotions, declared, coupon) on the running total, then ticket
//!    amounts (declared, coupon) capped at it; each ticket reduction is allocated to the lines
//!    in proportion to their running amounts (largest remainder), so VAT per rate stays exact;
//! 5. total = sum of line nets.
//!
//! The result does not depend on the order of the cart's lines: every tie is broken by line id.

use crate::coupon::CouponReward;
use crate::money::{Bps, Cents, Overflow, VatRate, checked_sum, div_round_half_away};
use crate::sale::{DeclaredDiscount, DeclaredKind};
use std::collections::HashMap;

/// A line with the price the server stands behind (the authority's, or the till's own for a
/// custom line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineToPrice {
    pub line_id: String,
    pub unit_price: Cents,
    pub quantity: i64,
    pub vat_rate: VatRate,
}

/// Where a reduction comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Promotion(String),
    Declared(String),
    Coupon(String),
}

/// A promotion's reduction of one line (step 2), as the promotion engine found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineReduction {
    pub line: usize,
    pub amount: Cents,
    pub promotion_id: String,
}

/// A basket-wide percentage promotion (step 4), applied when the running total reaches its
/// minimum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BasketPercent {
    pub promotion_id: String,
    pub percent: Bps,
    pub min_subtotal: Cents,
}

/// A coupon presented with the sale, already found valid for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CouponToApply {
    pub code: String,
    pub reward: CouponReward,
    /// The running total must reach this for the coupon to apply.
    pub min_basket: Cents,
}

#[derive(Clone, Debug, Default)]
pub struct PricingInput<'a> {
    pub lines: &'a [LineToPrice],
    pub promotions: Vec<LineReduction>,
    pub basket_promotions: Vec<BasketPercent>,
    pub declared: &'a [DeclaredDiscount],
    pub coupon: Option<CouponToApply>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PricedLine {
    pub gross: Cents,
    pub promotion: Cents,
    pub declared: Cents,
    /// This line's share of ticket-level reductions.
    pub ticket: Cents,
    pub net: Cents,
}

/// One reduction as applied, with what it took off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    pub source: Source,
    pub amount: Cents,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VatTotal {
    pub rate: VatRate,
    /// Total including VAT of the lines at this rate.
    pub total: Cents,
    /// The VAT it contains.
    pub vat: Cents,
}

/// What a coupon did to the sale.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CouponEffect {
    pub code: String,
    /// The running total the coupon applied to.
    pub basket: Cents,
    pub discount: Cents,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Priced {
    pub lines: Vec<PricedLine>,
    pub subtotal: Cents,
    pub total: Cents,
    pub applied: Vec<Applied>,
    /// By rate, highest first.
    pub vat: Vec<VatTotal>,
    pub coupon: Option<CouponEffect>,
}

impl Priced {
    /// Sum of the declared discounts' reductions.
    pub fn declared_total(&self) -> Cents {
        checked_sum(
            self.applied
                .iter()
                .filter(|a| matches!(a.source, Source::Declared(_)))
                .map(|a| a.amount),
        )
        .unwrap_or(Cents::ZERO)
    }

    /// Sum of all promotion reductions: what declared discounts are measured against.
    pub fn promotion_total(&self) -> Cents {
        checked_sum(
            self.applied
                .iter()
                .filter(|a| matches!(a.source, Source::Promotion(_)))
                .map(|a| a.amount),
        )
        .unwrap_or(Cents::ZERO)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PricingError {
    #[error("an amount exceeds the largest representable value")]
    Overflow,
    #[error("declared discount {discount} names line {line}, which is not in the cart")]
    UnknownLine { discount: String, line: String },
    #[error("coupon {code} needs a basket of at least {minimum}; this one comes to {basket}")]
    CouponBelowMinimum {
        code: String,
        minimum: Cents,
        basket: Cents,
    },
}

impl From<Overflow> for PricingError {
    fn from(_: Overflow) -> Self {
        PricingError::Overflow
    }
}

/// Prices a cart. Pure: the same input always gives the same output.
pub fn price(input: &PricingInput<'_>) -> Result<Priced, PricingError> {
    let lines = input.lines;
    let mut priced = Vec::with_capacity(lines.len());
    for line in lines {
        let gross = line.unit_price.checked_mul(line.quantity)?;
        priced.push(PricedLine {
            gross,
            promotion: Cents::ZERO,
            declared: Cents::ZERO,
            ticket: Cents::ZERO,
            net: gross,
        });
    }
    let subtotal = checked_sum(priced.iter().map(|l| l.gross))?;
    let mut applied = Vec::new();

    // Step 2: promotions, never below zero.
    for reduction in &input.promotions {
        let Some(line) = priced.get_mut(reduction.line) else {
            continue;
        };
        let amount = reduction.amount.min(line.net).max(Cents::ZERO);
        line.promotion = line.promotion.checked_add(amount)?;
        line.net = line.net.checked_sub(amount)?;
        applied.push(Applied {
            source: Source::Promotion(reduction.promotion_id.clone()),
            amount,
        });
    }

    // Step 3: declared line percents, each on the line's running amount.
    let index: HashMap<&str, usize> = lines.iter().enumerate().map(|(i, l)| (l.line_id.as_str(), i)).collect();
    for discount in input.declared {
        if let DeclaredKind::LinePercent { line_id, percent } = &discount.kind {
            let i = *index.get(line_id.as_str()).ok_or_else(|| PricingError::UnknownLine {
                discount: discount.id.clone(),
                line: line_id.clone(),
            })?;
            let line = &mut priced[i];
            let amount = line.net.percent(*percent);
            line.declared = line.declared.checked_add(amount)?;
            line.net = line.net.checked_sub(amount)?;
            applied.push(Applied {
                source: Source::Declared(discount.id.clone()),
                amount,
            });
        }
    }

    // Step 4: ticket percents, then ticket amounts, on the running total. Each may need the
    // running total to reach a minimum.
    let order = tie_order(lines);
    let mut percents: Vec<(Source, Bps, Cents)> = input
        .basket_promotions
        .iter()
        .map(|p| (Source::Promotion(p.promotion_id.clone()), p.percent, p.min_subtotal))
        .collect();
    let mut amounts: Vec<(Source, Cents, Cents)> = Vec::new();
    for discount in input.declared {
        let source = Source::Declared(discount.id.clone());
        match discount.kind {
            DeclaredKind::TicketPercent { percent } => percents.push((source, percent, Cents::ZERO)),
            DeclaredKind::TicketAmount { amount } => amounts.push((source, amount, Cents::ZERO)),
            DeclaredKind::LinePercent { .. } => {}
        }
    }
    if let Some(CouponToApply {
        code,
        reward,
        min_basket,
    }) = &input.coupon
    {
        let source = Source::Coupon(code.clone());
        match reward {
            CouponReward::Percent(bps) => percents.push((source, *bps, *min_basket)),
            CouponReward::Amount(cents) => amounts.push((source, *cents, *min_basket)),
        }
    }
    let mut coupon = None;
    let reductions = percents
        .into_iter()
        .map(|(source, bps, min)| (source, Reduction::Percent(bps), min))
        .chain(
            amounts
                .into_iter()
                .map(|(source, cents, min)| (source, Reduction::Amount(cents), min)),
        );
    for (source, reduction, minimum) in reductions {
        let running = checked_sum(priced.iter().map(|l| l.net))?;
        if running < minimum {
            match &source {
                Source::Coupon(code) => {
                    return Err(PricingError::CouponBelowMinimum {
                        code: code.clone(),
                        minimum,
                        basket: running,
                    });
                }
                // A basket promotion short of its minimum simply does not apply.
                _ => continue,
            }
        }
        let amount = match reduction {
            Reduction::Percent(bps) => running.percent(bps),
            Reduction::Amount(cents) => cents.min(running),
        };
        let shares = allocate(amount, &priced.iter().map(|l| l.net).collect::<Vec<_>>(), &order)?;
        for (line, share) in priced.iter_mut().zip(shares) {
            line.ticket = line.ticket.checked_add(share)?;
            line.net = line.net.checked_sub(share)?;
        }
        if let Source::Coupon(code) = &source {
            coupon = Some(CouponEffect {
                code: code.clone(),
                basket: running,
                discount: amount,
            });
        }
        applied.push(Applied { source, amount });
    }

    let total = checked_sum(priced.iter().map(|l| l.net))?;
    let vat = vat_breakdown(lines, &priced)?;
    Ok(Priced {
        lines: priced,
        subtotal,
        total,
        applied,
        vat,
        coupon,
    })
}

enum Reduction {
    Percent(Bps),
    Amount(Cents),
}

/// Line indexes sorted by line id: the order that breaks ties, whatever the cart's order.
fn tie_order(lines: &[LineToPrice]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by(|a, b| lines[*a].line_id.cmp(&lines[*b].line_id));
    order
}

/// Splits `amount` over lines in proportion to `weights` by the largest-remainder method; the
/// shares sum to `amount` exactly and none exceeds its weight. `amount` must not exceed the sum
/// of the weights, all of which are non-negative.
pub fn allocate(amount: Cents, weights: &[Cents], tie_order: &[usize]) -> Result<Vec<Cents>, Overflow> {
    let total = i128::from(checked_sum(weights.iter().copied())?.get());
    let amount_raw = i128::from(amount.get());
    if total == 0 || amount_raw == 0 {
        return Ok(vec![Cents::ZERO; weights.len()]);
    }
    let mut shares: Vec<i128> = Vec::with_capacity(weights.len());
    let mut remainders: Vec<(i128, usize)> = Vec::with_capacity(weights.len());
    for (i, weight) in weights.iter().enumerate() {
        let exact = amount_raw * i128::from(weight.get());
        shares.push(exact / total);
        remainders.push((exact % total, i));
    }
    let mut left = amount_raw - shares.iter().sum::<i128>();
    // Largest remainder first; equal remainders in tie order.
    let rank: HashMap<usize, usize> = tie_order.iter().enumerate().map(|(r, i)| (*i, r)).collect();
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then(rank[&a.1].cmp(&rank[&b.1])));
    for (remainder, i) in remainders {
        if left == 0 {
            break;
        }
        if remainder > 0 {
            shares[i] += 1;
            left -= 1;
        }
    }
    shares
        .into_iter()
        .map(|s| Cents::new(s as i64).ok_or(Overflow))
        .collect()
}

fn vat_breakdown(lines: &[LineToPrice], priced: &[PricedLine]) -> Result<Vec<VatTotal>, Overflow> {
    vat_totals(
        lines
            .iter()
            .zip(priced)
            .map(|(line, result)| (line.vat_rate, result.net)),
    )
}

/// Amounts summed per VAT rate, highest rate first, each with the VAT it contains.
pub fn vat_totals(amounts: impl IntoIterator<Item = (VatRate, Cents)>) -> Result<Vec<VatTotal>, Overflow> {
    let mut by_rate: Vec<(VatRate, Cents)> = Vec::new();
    for (vat_rate, amount) in amounts {
        match by_rate.iter_mut().find(|(rate, _)| *rate == vat_rate) {
            Some((_, total)) => *total = total.checked_add(amount)?,
            None => by_rate.push((vat_rate, amount)),
        }
    }
    by_rate.sort_by_key(|(rate, _)| std::cmp::Reverse(*rate));
    Ok(by_rate
        .into_iter()
        .map(|(rate, total)| VatTotal {
            rate,
            total,
            vat: vat_included(total, rate),
        })
        .collect())
}

/// The VAT contained in an amount that includes it: `total * r / (100 % + r)`.
pub fn vat_included(total: Cents, rate: VatRate) -> Cents {
    let r = i128::from(rate.hundredths());
    let vat = div_round_half_away(i128::from(total.get()) * r, 10_000 + r);
    // |vat| <= |total|, so it stays in range.
    Cents::new(vat as i64).unwrap_or(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sale::DiscountReason;
    use proptest::prelude::*;

    fn line(id: &str, price: i64, quantity: i64, vat: i64) -> LineToPrice {
        LineToPrice {
            line_id: id.to_owned(),
            unit_price: Cents::new(price).unwrap(),
            quantity,
            vat_rate: VatRate::from_hundredths(vat).unwrap(),
        }
    }

    fn declared(id: &str, kind: DeclaredKind) -> DeclaredDiscount {
        DeclaredDiscount {
            id: id.to_owned(),
            reason: DiscountReason::ManualMarkdown,
            kind,
        }
    }

    fn bps(v: i64) -> Bps {
        Bps::new(v).unwrap()
    }

    fn cents(v: i64) -> Cents {
        Cents::new(v).unwrap()
    }

    #[test]
    fn lines_without_discounts_sum_to_the_subtotal() {
        let lines = [line("a", 130, 3, 550), line("b", 1450, 1, 2000)];
        let priced = price(&PricingInput {
            lines: &lines,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(priced.subtotal, cents(1840));
        assert_eq!(priced.total, cents(1840));
        assert_eq!(
            priced.vat[0],
            VatTotal {
                rate: VatRate::from_hundredths(2000).unwrap(),
                total: cents(1450),
                vat: cents(242)
            }
        );
        assert_eq!(
            priced.vat[1],
            VatTotal {
                rate: VatRate::from_hundredths(550).unwrap(),
                total: cents(390),
                vat: cents(20)
            }
        );
    }

    #[test]
    fn a_line_percent_rounds_half_away_from_zero() {
        let lines = [line("a", 5, 1, 2000), line("b", 1000, 1, 2000)];
        let discounts = [declared(
            "d1",
            DeclaredKind::LinePercent {
                line_id: "a".into(),
                percent: bps(5000),
            },
        )];
        let priced = price(&PricingInput {
            lines: &lines,
            declared: &discounts,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(priced.lines[0].declared, cents(3)); // 2.5 -> 3
        assert_eq!(priced.total, cents(1002));
    }

    #[test]
    fn ticket_discounts_are_allocated_by_largest_remainder() {
        // 100 split over 3 equal lines: 34, 33, 33, the extra cent to the first id.
        let lines = [
            line("c", 1000, 1, 2000),
            line("a", 1000, 1, 2000),
            line("b", 1000, 1, 550),
        ];
        let discounts = [declared("t", DeclaredKind::TicketAmount { amount: cents(100) })];
        let priced = price(&PricingInput {
            lines: &lines,
            declared: &discounts,
            ..Default::default()
        })
        .unwrap();
        let shares: Vec<i64> = priced.lines.iter().map(|l| l.ticket.get()).collect();
        assert_eq!(shares, [33, 34, 33]);
        assert_eq!(priced.total, cents(2900));
        assert_eq!(priced.vat.iter().map(|v| v.total.get()).sum::<i64>(), 2900);
    }

    #[test]
    fn ticket_percents_come_before_ticket_amounts_and_amounts_are_capped() {
        let lines = [line("a", 1000, 1, 2000)];
        let discounts = [
            declared("amount", DeclaredKind::TicketAmount { amount: cents(5000) }),
            declared("percent", DeclaredKind::TicketPercent { percent: bps(1000) }),
        ];
        let priced = price(&PricingInput {
            lines: &lines,
            declared: &discounts,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            priced.applied[0],
            Applied {
                source: Source::Declared("percent".into()),
                amount: cents(100)
            }
        );
        assert_eq!(
            priced.applied[1],
            Applied {
                source: Source::Declared("amount".into()),
                amount: cents(900)
            }
        );
        assert_eq!(priced.total, Cents::ZERO);
    }

    #[test]
    fn a_coupon_reports_the_basket_it_applied_to() {
        let lines = [line("a", 2500, 1, 2000)];
        let discounts = [declared("p", DeclaredKind::TicketPercent { percent: bps(2000) })];
        let coupon = |min_basket| {
            Some(CouponToApply {
                code: "TEN".into(),
                reward: CouponReward::Amount(cents(1000)),
                min_basket: cents(min_basket),
            })
        };
        let input = |min_basket| PricingInput {
            lines: &lines,
            declared: &discounts,
            coupon: coupon(min_basket),
            ..Default::default()
        };
        let priced = price(&input(2000)).unwrap();
        assert_eq!(
            priced.coupon,
            Some(CouponEffect {
                code: "TEN".into(),
                basket: cents(2000),
                discount: cents(1000)
            })
        );
        assert_eq!(priced.total, cents(1000));
        // The minimum is measured on the basket the coupon meets, after the 20 %.
        assert_eq!(
            price(&input(2001)),
            Err(PricingError::CouponBelowMinimum {
                code: "TEN".into(),
                minimum: cents(2001),
                basket: cents(2000)
            })
        );
    }

    #[test]
    fn a_discount_naming_a_missing_line_is_an_error() {
        let lines = [line("a", 100, 1, 2000)];
        let discounts = [declared(
            "d",
            DeclaredKind::LinePercent {
                line_id: "zz".into(),
                percent: bps(10),
            },
        )];
        let result = price(&PricingInput {
            lines: &lines,
            declared: &discounts,
            ..Default::default()
        });
        assert!(matches!(result, Err(PricingError::UnknownLine { .. })));
    }

    #[test]
    fn overflowing_amounts_are_errors_not_wraps() {
        let lines = [line("a", crate::money::MAX_SAFE_INTEGER, 2, 2000)];
        assert_eq!(
            price(&PricingInput {
                lines: &lines,
                ..Default::default()
            }),
            Err(PricingError::Overflow)
        );
    }

    fn arbitrary_cart() -> impl Strategy<Value = (Vec<LineToPrice>, Vec<DeclaredDiscount>)> {
        let lines = prop::collection::vec(
            (
                0i64..50_000,
                1i64..20,
                prop::sample::select(vec![0, 210, 550, 1000, 2000]),
            ),
            1..8,
        );
        lines.prop_flat_map(|specs| {
            let count = specs.len();
            let lines: Vec<LineToPrice> = specs
                .into_iter()
                .enumerate()
                .map(|(i, (p, q, v))| line(&format!("l{i}"), p, q, v))
                .collect();
            let discount = prop_oneof![
                (0..count, 1i64..=10_000).prop_map(|(i, b)| DeclaredKind::LinePercent {
                    line_id: format!("l{i}"),
                    percent: bps(b)
                }),
                (1i64..=10_000).prop_map(|b| DeclaredKind::TicketPercent { percent: bps(b) }),
                (1i64..200_000).prop_map(|c| DeclaredKind::TicketAmount { amount: cents(c) }),
            ];
            let discounts = prop::collection::vec(discount, 0..4).prop_map(|kinds| {
                kinds
                    .into_iter()
                    .enumerate()
                    .map(|(i, kind)| declared(&format!("d{i}"), kind))
                    .collect()
            });
            (Just(lines), discounts)
        })
    }

    proptest! {
        #[test]
        fn totals_stay_between_zero_and_the_subtotal((lines, discounts) in arbitrary_cart()) {
            let priced = price(&PricingInput { lines: &lines, declared: &discounts, ..Default::default() }).unwrap();
            prop_assert!(priced.total >= Cents::ZERO);
            prop_assert!(priced.total <= priced.subtotal);
            for line in &priced.lines {
                prop_assert!(line.net >= Cents::ZERO && line.net <= line.gross);
            }
            let vat_sum: i64 = priced.vat.iter().map(|v| v.total.get()).sum();
            prop_assert_eq!(vat_sum, priced.total.get());
        }

        #[test]
        fn reductions_account_for_every_cent((lines, discounts) in arbitrary_cart()) {
            let priced = price(&PricingInput { lines: &lines, declared: &discounts, ..Default::default() }).unwrap();
            let taken: i64 = priced.applied.iter().map(|a| a.amount.get()).sum();
            prop_assert_eq!(priced.subtotal.get() - priced.total.get(), taken);
            let by_lines: i64 = priced.lines.iter().map(|l| l.promotion.get() + l.declared.get() + l.ticket.get()).sum();
            prop_assert_eq!(by_lines, taken);
        }

        #[test]
        fn line_order_does_not_change_any_line_price((lines, discounts) in arbitrary_cart(), seed in any::<u64>()) {
            let priced = price(&PricingInput { lines: &lines, declared: &discounts, ..Default::default() }).unwrap();
            let mut shuffled: Vec<(usize, LineToPrice)> = lines.iter().cloned().enumerate().collect();
            // A deterministic shuffle from the seed.
            shuffled.sort_by_key(|(i, _)| (*i as u64).wrapping_mul(seed | 1).rotate_left(17));
            let reordered: Vec<LineToPrice> = shuffled.iter().map(|(_, l)| l.clone()).collect();
            let again = price(&PricingInput { lines: &reordered, declared: &discounts, ..Default::default() }).unwrap();
            prop_assert_eq!(again.total, priced.total);
            for (position, (original, _)) in shuffled.iter().enumerate() {
                prop_assert_eq!(&again.lines[position], &priced.lines[*original]);
            }
        }

        #[test]
        fn allocations_sum_exactly_and_never_exceed_a_weight(
            weights in prop::collection::vec(0i64..100_000, 1..10),
            fraction in 0.0f64..=1.0,
        ) {
            let weights: Vec<Cents> = weights.into_iter().map(cents).collect();
            let total: i64 = weights.iter().map(|w| w.get()).sum();
            let amount = cents((total as f64 * fraction) as i64);
            let order: Vec<usize> = (0..weights.len()).collect();
            let shares = allocate(amount, &weights, &order).unwrap();
            prop_assert_eq!(shares.iter().map(|s| s.get()).sum::<i64>(), amount.get());
            for (share, weight) in shares.iter().zip(&weights) {
                prop_assert!(*share >= Cents::ZERO && share <= weight);
            }
        }
    }
}
