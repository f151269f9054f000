//! A committed sale's pricing explained line by line, from what its record keeps: each line's
//! gross, its sums taken by promotions, by declared line discounts and by ticket-level
//! reductions, its net, and the sale's reductions (one per source, in the order pricing applied
//! them). The reductions each line lists add up to its gross less its net, and each source's
//! shares to what the sale says it took, to the cent.
//!
//! Ticket-level reductions (basket promotions, declared ticket discounts, the coupon) are
//! shared out again exactly as pricing shared them: each in turn over the lines' running
//! amounts, by the largest remainder. Which line a promotion on products or a declared line
//! discount reduced is not kept when several of one kind reduce several lines: each is then
//! given to the line whose sum it matches, else shared out in the cart's order.
//!
//! A return against a receipt refunds a share of its original's reductions, line by line; its
//! sums of each kind are shared out over the original line's reductions of that kind, in
//! proportion. Every amount of a return is negative, as it is stored.

use crate::fiscal::payload::{SaleRecord, SaleRecordLine};
use crate::money::Cents;
use crate::pricing::allocate;

/// Where a reduction of a line comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReductionSource {
    /// A promotion rule, by its id.
    Promotion(String),
    /// A discount the till declared, by its id.
    Declared(String),
    /// A coupon, by its code.
    Coupon(String),
    /// A return's share of reductions of its original sale that the original's record does not
    /// tell apart: the original's transaction id.
    Original(String),
}

/// One reduction of one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineReduction {
    pub source: ReductionSource,
    /// A promotion's name.
    pub label: Option<String>,
    /// What it took off the line, in cents (negative on a return).
    pub amount: i64,
}

/// A line of the sale explained: its reductions, and its share of the VAT of its rate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExplainedLine {
    pub reductions: Vec<LineReduction>,
    /// The VAT its net contains: the sale's VAT at its rate shared over the lines at that rate
    /// in proportion to their nets, so that the lines add up to the sale's VAT.
    pub vat: i64,
}

/// The step of pricing a reduction belongs to, and the line sum that holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Promotions on products: `promotion_cents`.
    Promotion,
    /// Declared line discounts: `declared_cents`.
    Declared,
    /// Basket promotions, declared ticket discounts and the coupon: `ticket_cents`.
    Ticket,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::Promotion, Kind::Declared, Kind::Ticket];

    fn sum(self, line: &SaleRecordLine) -> i64 {
        match self {
            Kind::Promotion => line.promotion_cents,
            Kind::Declared => line.declared_cents,
            Kind::Ticket => line.ticket_cents,
        }
    }
}

/// A reduction of the sale: its source, its name and what it took (as a positive amount).
#[derive(Clone, Debug)]
struct Taken {
    source: ReductionSource,
    label: Option<String>,
    amount: i64,
}

/// Per line, the reductions of each kind, as positive amounts.
type Shares = Vec<Vec<(Kind, Taken)>>;

/// Explains each line of `sale`, in the order of its lines. `original` is the sale a return
/// gives goods back from, when it was found.
pub fn explain(sale: &SaleRecord, original: Option<&SaleRecord>) -> Vec<ExplainedLine> {
    let sign = if sale.kind == "return" { -1 } else { 1 };
    let shares = match &sale.original {
        Some(ticket) => returned_shares(sale, original, &ticket.transaction_id, sign),
        None => sale_shares(sale, sign),
    };
    let vat = line_vat(sale, sign);
    shares
        .into_iter()
        .zip(vat)
        .map(|(reductions, vat)| ExplainedLine {
            reductions: reductions
                .into_iter()
                .filter(|(_, taken)| taken.amount != 0)
                .map(|(_, taken)| LineReduction {
                    source: taken.source,
                    label: taken.label,
                    amount: sign * taken.amount,
                })
                .collect(),
            vat: sign * vat,
        })
        .collect()
}

/// The reductions of a sale priced here, line by line.
fn sale_shares(sale: &SaleRecord, sign: i64) -> Shares {
    let lines = &sale.lines;
    let taken: Vec<(bool, Taken)> = sale
        .adjustments
        .iter()
        .map(|adjustment| {
            let id = adjustment.source_id.clone();
            let (by_line, source) = match adjustment.source.as_str() {
                "promotion" => (Some(Kind::Promotion), ReductionSource::Promotion(id)),
                "declared" => (Some(Kind::Declared), ReductionSource::Declared(id)),
                _ => (None, ReductionSource::Coupon(id)),
            };
            let taken = Taken {
                source,
                label: adjustment.label.clone(),
                amount: sign * adjustment.amount_cents,
            };
            (by_line.is_some(), taken)
        })
        .collect();
    // Pricing applied the promotions on products first, then the declared line discounts, then
    // the ticket-level reductions: each kind of line reduction is the run of its sources that
    // makes up the lines' sum of that kind.
    let mut rest = taken.as_slice();
    let mut by_kind: Vec<(Kind, Vec<Taken>)> = Vec::new();
    for kind in [Kind::Promotion, Kind::Declared] {
        let due: i64 = lines.iter().map(|line| sign * kind.sum(line)).sum();
        let mut run = Vec::new();
        let mut sum = 0;
        while let Some(((by_line, taken), after)) = rest.split_first() {
            let of_kind = *by_line && kind_of(&taken.source) == Some(kind);
            if !of_kind || sum >= due {
                break;
            }
            sum += taken.amount;
            run.push(taken.clone());
            rest = after;
        }
        by_kind.push((kind, run));
    }
    let ticket: Vec<Taken> = rest.iter().map(|(_, taken)| taken.clone()).collect();

    let mut shares: Shares = vec![Vec::new(); lines.len()];
    for (kind, run) in &by_kind {
        let due: Vec<i64> = lines.iter().map(|line| sign * kind.sum(line)).collect();
        for (line, taken) in match_then_fill(run, &due) {
            shares[line].push((*kind, taken));
        }
    }
    let due: Vec<i64> = lines.iter().map(|line| sign * line.ticket_cents).collect();
    let replayed = replay_ticket(lines, &ticket, sign).filter(|per_line| {
        per_line
            .iter()
            .zip(&due)
            .all(|(taken, due)| taken.iter().map(|t| t.amount).sum::<i64>() == *due)
    });
    match replayed {
        Some(per_line) => {
            for (line, taken) in per_line.into_iter().enumerate() {
                shares[line].extend(taken.into_iter().map(|t| (Kind::Ticket, t)));
            }
        }
        None => {
            for (line, taken) in match_then_fill(&ticket, &due) {
                shares[line].push((Kind::Ticket, taken));
            }
        }
    }
    shares
}

fn kind_of(source: &ReductionSource) -> Option<Kind> {
    match source {
        ReductionSource::Promotion(_) => Some(Kind::Promotion),
        ReductionSource::Declared(_) => Some(Kind::Declared),
        ReductionSource::Coupon(_) | ReductionSource::Original(_) => None,
    }
}

/// The ticket-level reductions shared out as pricing shared them: each in turn over the lines'
/// amounts after their line reductions and the ticket reductions before it, in proportion, by
/// the largest remainder, ties broken by line id. `None` when an amount is out of range.
fn replay_ticket(lines: &[SaleRecordLine], ticket: &[Taken], sign: i64) -> Option<Vec<Vec<Taken>>> {
    let mut running: Vec<Cents> = lines
        .iter()
        .map(|line| Cents::new(sign * (line.gross_cents - line.promotion_cents - line.declared_cents)))
        .collect::<Option<_>>()?;
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by(|a, b| lines[*a].line_id.cmp(&lines[*b].line_id));
    let mut per_line = vec![Vec::new(); lines.len()];
    for taken in ticket {
        let amount = Cents::new(taken.amount)?;
        let shares = allocate(amount, &running, &order).ok()?;
        for (line, share) in shares.into_iter().enumerate() {
            running[line] = running[line].checked_sub(share).ok()?;
            per_line[line].push(Taken {
                amount: share.get(),
                ..taken.clone()
            });
        }
    }
    Some(per_line)
}

/// Each source given to lines so that the lines get `due` and the sources what they took: a
/// source that matches what a line is due goes to it whole, the rest are shared out in the
/// lines' order. What no source covers of a line (a damaged record) is given to the last
/// source, so that the line still adds up.
fn match_then_fill(sources: &[Taken], due: &[i64]) -> Vec<(usize, Taken)> {
    let mut left: Vec<i64> = sources.iter().map(|taken| taken.amount).collect();
    let mut owed: Vec<i64> = due.to_vec();
    let mut given = Vec::new();
    let mut give = |line: usize, source: usize, amount: i64, left: &mut [i64], owed: &mut [i64]| {
        left[source] -= amount;
        owed[line] -= amount;
        given.push((
            line,
            Taken {
                amount,
                ..sources[source].clone()
            },
        ));
    };
    for source in 0..sources.len() {
        if left[source] > 0
            && let Some(line) = owed.iter().position(|owed| *owed == left[source])
        {
            give(line, source, left[source], &mut left, &mut owed);
        }
    }
    for line in 0..owed.len() {
        for source in 0..sources.len() {
            let amount = owed[line].min(left[source]);
            if amount > 0 {
                give(line, source, amount, &mut left, &mut owed);
            }
        }
        if owed[line] != 0
            && let Some(last) = sources.len().checked_sub(1)
        {
            let amount = owed[line];
            give(line, last, amount, &mut left, &mut owed);
        }
    }
    given
}

/// A return's reductions, line by line: each of its sums shared out over the original line's
/// reductions of that kind, in proportion to them.
fn returned_shares(sale: &SaleRecord, original: Option<&SaleRecord>, original_id: &str, sign: i64) -> Shares {
    let explained = original.map(|original| (original, sale_shares(original, 1)));
    sale.lines
        .iter()
        .map(|line| {
            let sold = explained.as_ref().and_then(|(original, shares)| {
                let index = original.lines.iter().position(|sold| sold.line_id == line.line_id)?;
                Some(&shares[index])
            });
            let mut reductions = Vec::new();
            for kind in Kind::ALL {
                let refunded = sign * kind.sum(line);
                if refunded == 0 {
                    continue;
                }
                let of_kind: Vec<&Taken> = sold
                    .into_iter()
                    .flatten()
                    .filter(|(k, taken)| *k == kind && taken.amount > 0)
                    .map(|(_, taken)| taken)
                    .collect();
                let weights: Option<Vec<Cents>> = of_kind.iter().map(|taken| Cents::new(taken.amount)).collect();
                let order: Vec<usize> = (0..of_kind.len()).collect();
                let shares = match (Cents::new(refunded), weights) {
                    (Some(amount), Some(weights)) if !of_kind.is_empty() => allocate(amount, &weights, &order).ok(),
                    _ => None,
                };
                match shares {
                    Some(shares) if shares.iter().map(|s| s.get()).sum::<i64>() == refunded => {
                        reductions.extend(of_kind.iter().zip(shares).map(|(taken, share)| {
                            (
                                kind,
                                Taken {
                                    amount: share.get(),
                                    ..(*taken).clone()
                                },
                            )
                        }));
                    }
                    _ => reductions.push((
                        kind,
                        Taken {
                            source: ReductionSource::Original(original_id.to_owned()),
                            label: None,
                            amount: refunded,
                        },
                    )),
                }
            }
            reductions
        })
        .collect()
}

/// Each line's share of the VAT at its rate, in proportion to the nets at that rate (positive
/// amounts).
fn line_vat(sale: &SaleRecord, sign: i64) -> Vec<i64> {
    let lines = &sale.lines;
    let mut vat = vec![0; lines.len()];
    for rate in &sale.vat {
        let at_rate: Vec<usize> = (0..lines.len())
            .filter(|i| lines[*i].vat_rate == rate.vat_rate)
            .collect();
        let nets: Option<Vec<Cents>> = at_rate.iter().map(|i| Cents::new(sign * lines[*i].net_cents)).collect();
        let mut order: Vec<usize> = (0..at_rate.len()).collect();
        order.sort_by(|a, b| lines[at_rate[*a]].line_id.cmp(&lines[at_rate[*b]].line_id));
        let shares = Cents::new(sign * rate.vat_cents)
            .zip(nets)
            .and_then(|(amount, nets)| allocate(amount, &nets, &order).ok());
        if let Some(shares) = shares {
            for (i, share) in at_rate.iter().zip(shares) {
                vat[*i] = share.get();
            }
        }
    }
    vat
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fiscal::payload::{OriginalTicket, SaleRecordAdjustment, SaleRecordVat};
    use crate::money::VatRate;
    use crate::pricing::{BasketPercent, LineToPrice, PricingInput, price};
    use crate::pricing::{CouponToApply, LineReduction as PromotionOnLine};
    use crate::sale::{DeclaredDiscount, DeclaredKind, DiscountReason};

    fn cents(value: i64) -> Cents {
        Cents::new(value).unwrap()
    }

    fn record(lines: &[LineToPrice], input: PricingInput<'_>) -> SaleRecord {
        let priced = price(&PricingInput { lines, ..input }).unwrap();
        let mut adjustments: Vec<SaleRecordAdjustment> = Vec::new();
        for applied in &priced.applied {
            let (source, id) = match &applied.source {
                crate::pricing::Source::Promotion(id) => ("promotion", id),
                crate::pricing::Source::Declared(id) => ("declared", id),
                crate::pricing::Source::Coupon(code) => ("coupon", code),
            };
            match adjustments
                .iter_mut()
                .find(|a| a.source == source && &a.source_id == id)
            {
                Some(existing) => existing.amount_cents += applied.amount.get(),
                None => adjustments.push(SaleRecordAdjustment {
                    source: source.to_owned(),
                    source_id: id.clone(),
                    label: None,
                    amount_cents: applied.amount.get(),
                }),
            }
        }
        SaleRecord {
            transaction_id: "t1".into(),
            number: "1".into(),
            kind: "sale".into(),
            store_id: "s1".into(),
            seller_id: "camille".into(),
            customer_id: None,
            session_id: "ses".into(),
            register_id: "r1".into(),
            subtotal_cents: priced.subtotal.get(),
            total_cents: priced.total.get(),
            item_count: 0,
            change_cents: 0,
            points_earned: 0,
            coupon_code: None,
            issued_at: None,
            emitted_at: 0,
            late: false,
            lines: lines
                .iter()
                .zip(&priced.lines)
                .map(|(line, result)| SaleRecordLine {
                    line_id: line.line_id.clone(),
                    sku_id: None,
                    label: None,
                    quantity: line.quantity,
                    unit_price_cents: line.unit_price.get(),
                    vat_rate: line.vat_rate.hundredths(),
                    gross_cents: result.gross.get(),
                    promotion_cents: result.promotion.get(),
                    declared_cents: result.declared.get(),
                    ticket_cents: result.ticket.get(),
                    net_cents: result.net.get(),
                })
                .collect(),
            tenders: Vec::new(),
            vat: priced
                .vat
                .iter()
                .map(|v| SaleRecordVat {
                    vat_rate: v.rate.hundredths(),
                    total_cents: v.total.get(),
                    vat_cents: v.vat.get(),
                })
                .collect(),
            adjustments,
            original: None,
        }
    }

    fn line(id: &str, price: i64, quantity: i64, vat: i64) -> LineToPrice {
        LineToPrice {
            line_id: id.to_owned(),
            unit_price: cents(price),
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

    /// Every line adds up, every source's shares add up to what it took, the VAT adds up.
    fn assert_adds_up(sale: &SaleRecord, explained: &[ExplainedLine]) {
        for (line, explained) in sale.lines.iter().zip(explained) {
            let reduced: i64 = explained.reductions.iter().map(|r| r.amount).sum();
            assert_eq!(line.gross_cents - reduced, line.net_cents, "{line:?} {explained:?}");
        }
        for adjustment in &sale.adjustments {
            let shared: i64 = explained
                .iter()
                .flat_map(|line| &line.reductions)
                .filter(|r| match &r.source {
                    ReductionSource::Promotion(id) => adjustment.source == "promotion" && *id == adjustment.source_id,
                    ReductionSource::Declared(id) => adjustment.source == "declared" && *id == adjustment.source_id,
                    ReductionSource::Coupon(code) => adjustment.source == "coupon" && *code == adjustment.source_id,
                    ReductionSource::Original(_) => false,
                })
                .map(|r| r.amount)
                .sum();
            assert_eq!(shared, adjustment.amount_cents, "{adjustment:?}");
        }
        let vat: i64 = explained.iter().map(|line| line.vat).sum();
        assert_eq!(vat, sale.vat.iter().map(|v| v.vat_cents).sum::<i64>());
    }

    #[test]
    fn every_kind_of_reduction_is_given_to_its_lines() {
        let lines = [
            line("a", 130, 3, 550),
            line("b", 1450, 2, 2000),
            line("c", 999, 1, 2000),
        ];
        let declared = [
            declared(
                "d-line",
                DeclaredKind::LinePercent {
                    line_id: "b".into(),
                    percent: crate::money::Bps::new(1000).unwrap(),
                },
            ),
            declared("d-ticket", DeclaredKind::TicketAmount { amount: cents(77) }),
        ];
        let sale = record(
            &lines,
            PricingInput {
                promotions: vec![PromotionOnLine {
                    line: 0,
                    amount: cents(130),
                    promotion_id: "bogo".into(),
                }],
                basket_promotions: vec![BasketPercent {
                    promotion_id: "basket".into(),
                    percent: crate::money::Bps::new(500).unwrap(),
                    min_subtotal: Cents::ZERO,
                }],
                declared: &declared,
                coupon: Some(CouponToApply {
                    code: "WELCOME".into(),
                    reward: crate::coupon::CouponReward::Amount(cents(101)),
                    min_basket: Cents::ZERO,
                }),
                ..Default::default()
            },
        );
        let explained = explain(&sale, None);
        assert_adds_up(&sale, &explained);
        assert_eq!(
            explained[0].reductions[0].source,
            ReductionSource::Promotion("bogo".into())
        );
        assert_eq!(explained[0].reductions[0].amount, 130);
        assert_eq!(
            explained[1].reductions[0].source,
            ReductionSource::Declared("d-line".into())
        );
        assert!(
            explained[2]
                .reductions
                .iter()
                .all(|r| !matches!(&r.source, ReductionSource::Declared(id) if id == "d-line"))
        );
        for line in &explained {
            assert!(
                line.reductions
                    .iter()
                    .any(|r| r.source == ReductionSource::Coupon("WELCOME".into()))
            );
            assert!(
                line.reductions
                    .iter()
                    .any(|r| r.source == ReductionSource::Promotion("basket".into()))
            );
        }
    }

    #[test]
    fn line_reductions_of_one_kind_on_several_lines_go_where_they_match() {
        let lines = [line("a", 500, 1, 2000), line("b", 800, 1, 2000)];
        let declared = [
            declared(
                "on-b",
                DeclaredKind::LinePercent {
                    line_id: "b".into(),
                    percent: crate::money::Bps::new(2500).unwrap(),
                },
            ),
            declared(
                "on-a",
                DeclaredKind::LinePercent {
                    line_id: "a".into(),
                    percent: crate::money::Bps::new(1000).unwrap(),
                },
            ),
        ];
        let sale = record(
            &lines,
            PricingInput {
                promotions: vec![
                    PromotionOnLine {
                        line: 1,
                        amount: cents(100),
                        promotion_id: "p-b".into(),
                    },
                    PromotionOnLine {
                        line: 0,
                        amount: cents(60),
                        promotion_id: "p-a".into(),
                    },
                ],
                declared: &declared,
                ..Default::default()
            },
        );
        let explained = explain(&sale, None);
        assert_adds_up(&sale, &explained);
        let sources = |i: usize| {
            explained[i]
                .reductions
                .iter()
                .map(|r| r.source.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            sources(0),
            [
                ReductionSource::Promotion("p-a".into()),
                ReductionSource::Declared("on-a".into())
            ]
        );
        assert_eq!(
            sources(1),
            [
                ReductionSource::Promotion("p-b".into()),
                ReductionSource::Declared("on-b".into())
            ]
        );
    }

    #[test]
    fn a_return_refunds_its_share_of_each_reduction() {
        let lines = [line("a", 1000, 4, 2000), line("b", 300, 1, 550)];
        let declared = [declared(
            "d",
            DeclaredKind::TicketPercent {
                percent: crate::money::Bps::new(1000).unwrap(),
            },
        )];
        let original = record(
            &lines,
            PricingInput {
                promotions: vec![PromotionOnLine {
                    line: 0,
                    amount: cents(1000),
                    promotion_id: "p".into(),
                }],
                declared: &declared,
                ..Default::default()
            },
        );
        // Two of the four units of line a come back: half of each of its sums, negative.
        let sold = &original.lines[0];
        let mut back = sold.clone();
        back.quantity = 2;
        back.gross_cents = -sold.gross_cents / 2;
        back.promotion_cents = -sold.promotion_cents / 2;
        back.declared_cents = 0;
        back.ticket_cents = -sold.ticket_cents / 2;
        back.net_cents = back.gross_cents - back.promotion_cents - back.ticket_cents;
        let vat = crate::pricing::vat_included(cents(-back.net_cents), VatRate::from_hundredths(2000).unwrap());
        let sale = SaleRecord {
            transaction_id: "r1".into(),
            kind: "return".into(),
            subtotal_cents: back.gross_cents,
            total_cents: back.net_cents,
            vat: vec![SaleRecordVat {
                vat_rate: 2000,
                total_cents: back.net_cents,
                vat_cents: -vat.get(),
            }],
            lines: vec![back.clone()],
            adjustments: Vec::new(),
            original: Some(OriginalTicket {
                transaction_id: "t1".into(),
                register_id: "r1".into(),
                seq: 1,
            }),
            ..original.clone()
        };
        let explained = explain(&sale, Some(&original));
        let reductions = &explained[0].reductions;
        assert_eq!(
            reductions[0],
            LineReduction {
                source: ReductionSource::Promotion("p".into()),
                label: None,
                amount: -500
            }
        );
        assert_eq!(reductions[1].source, ReductionSource::Declared("d".into()));
        assert_eq!(
            back.gross_cents - reductions.iter().map(|r| r.amount).sum::<i64>(),
            back.net_cents
        );
        assert_eq!(explained[0].vat, -vat.get());
        // Without its original, the refunded sums still add up, named by the original's id.
        let alone = explain(&sale, None);
        assert!(
            alone[0]
                .reductions
                .iter()
                .all(|r| r.source == ReductionSource::Original("t1".into()))
        );
        assert_eq!(
            alone[0].reductions.iter().map(|r| r.amount).sum::<i64>(),
            back.gross_cents - back.net_cents
        );
    }
}
