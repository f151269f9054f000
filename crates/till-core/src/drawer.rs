//! The cash drawer of a shift: money put in or taken out besides sales, what each tender
//! method should hold (the X report while the shift runs, the Z report at its close) and what
//! the cashier counted against it.
//!
//! The X and the Z report are the same [`shift_report`] of the same figures, one before the
//! close and one at it: they cannot drift. Counts are compared with what was expected per
//! tender method; the difference is counted minus expected, so a drawer short of cash shows a
//! negative difference. Every sum is checked.

use crate::fiscal::payload::{LateTickets, SaleRecordVat, ShiftCardPayments, ShiftCount};
use crate::money::{Cents, Overflow};
use crate::payment::{CardTotals, TerminalKey};
use std::collections::BTreeMap;

/// The tender method whose takings stay in the drawer.
pub const CASH: &str = "cash";

/// Why money moved in or out of the drawer without a sale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MovementKind {
    /// Money put in: change brought from the safe, a float top-up.
    PaidIn,
    /// Money taken out to pay for something: a delivery, stamps.
    PaidOut,
    /// Takings taken out to the safe during the shift.
    Drop,
    /// The drawer opened without a sale.
    NoSale,
}

impl MovementKind {
    pub const ALL: [MovementKind; 4] = [
        MovementKind::PaidIn,
        MovementKind::PaidOut,
        MovementKind::Drop,
        MovementKind::NoSale,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MovementKind::PaidIn => "paid_in",
            MovementKind::PaidOut => "paid_out",
            MovementKind::Drop => "drop",
            MovementKind::NoSale => "no_sale",
        }
    }

    /// Whether the movement moves money (all but the drawer opened without a sale).
    pub fn moves_money(self) -> bool {
        self != MovementKind::NoSale
    }

    pub fn parse(text: &str) -> Option<MovementKind> {
        MovementKind::ALL.into_iter().find(|kind| kind.as_str() == text)
    }

    /// What the movement does to the cash the drawer should hold.
    fn sign(self) -> i64 {
        match self {
            MovementKind::PaidIn => 1,
            MovementKind::PaidOut | MovementKind::Drop => -1,
            MovementKind::NoSale => 0,
        }
    }
}

/// What is wrong with a movement's amount for its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AmountProblem {
    /// Money moved: the amount must be more than zero.
    MustBePositive,
    /// The drawer only opened: the amount must be zero.
    NoSaleMovesNothing,
}

/// Checks `amount` for a movement of `kind`.
pub fn check_amount(kind: MovementKind, amount: Cents) -> Result<(), AmountProblem> {
    match (kind, amount.get()) {
        (MovementKind::NoSale, 0) => Ok(()),
        (MovementKind::NoSale, _) => Err(AmountProblem::NoSaleMovesNothing),
        (_, cents) if cents > 0 => Ok(()),
        _ => Err(AmountProblem::MustBePositive),
    }
}

/// A shift's movements added up by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MovementTotals {
    pub paid_in: Cents,
    pub paid_out: Cents,
    pub drops: Cents,
    /// Times the drawer opened without a sale.
    pub no_sales: i64,
}

impl MovementTotals {
    /// Adds one movement.
    pub fn add(&mut self, kind: MovementKind, amount: Cents) -> Result<(), Overflow> {
        match kind {
            MovementKind::PaidIn => self.paid_in = self.paid_in.checked_add(amount)?,
            MovementKind::PaidOut => self.paid_out = self.paid_out.checked_add(amount)?,
            MovementKind::Drop => self.drops = self.drops.checked_add(amount)?,
            MovementKind::NoSale => self.no_sales = self.no_sales.checked_add(1).ok_or(Overflow)?,
        }
        Ok(())
    }

    /// What they change in the cash the drawer should hold.
    fn net(&self) -> Result<Cents, Overflow> {
        [
            (MovementKind::PaidIn, self.paid_in),
            (MovementKind::PaidOut, self.paid_out),
            (MovementKind::Drop, self.drops),
        ]
        .into_iter()
        .try_fold(Cents::ZERO, |net, (kind, amount)| {
            net.checked_add(amount.checked_mul(kind.sign())?)
        })
    }
}

/// What one tender method took on the shift's tickets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodTakings {
    pub method: String,
    /// What the tickets applied to their totals with it (returns negative).
    pub applied: Cents,
    /// What was handed over with it beyond the total and not given back as change.
    pub forfeited: Cents,
}

/// What a shift booked, as the X and Z reports add it up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShiftFigures {
    pub opening_float: Cents,
    pub sales_count: i64,
    pub total: Cents,
    pub vat: Vec<SaleRecordVat>,
    pub takings: Vec<MethodTakings>,
    pub movements: MovementTotals,
    /// Late sales of the register's earlier sessions received since its previous shift closed.
    pub late: LateFigures,
    /// The shift's card payment attempts added up per terminal and provider.
    pub cards: BTreeMap<TerminalKey, CardTotals>,
}

/// Late sales a shift's report shows apart: sales of sessions already closed when they arrived
/// from a till that was offline. Their money is in no drawer of this shift, so they change
/// nothing it should hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LateFigures {
    pub sales_count: i64,
    pub total: Cents,
    /// What each tender method took on them.
    pub takings: Vec<MethodTakings>,
}

impl LateFigures {
    /// As a closure seals them; `None` when there were none.
    pub fn sealed(&self) -> Option<LateTickets> {
        LateTickets {
            sales_count: self.sales_count,
            total_cents: self.total.get(),
        }
        .some()
    }
}

/// What the cashier counted of one tender method.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Count {
    pub method: String,
    pub counted: Cents,
}

/// One tender method's line of a shift report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TenderLine {
    pub method: String,
    pub applied: Cents,
    /// What the method should hold: for cash, the float, the cash kept from tickets and the
    /// movements; for any other method, what it took.
    pub expected: Cents,
    /// Set when the cashier counted the method.
    pub counted: Option<Cents>,
    /// Counted minus expected, when counted.
    pub difference: Option<Cents>,
}

/// The X or Z report of a shift.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShiftReport {
    pub sales_count: i64,
    pub total: Cents,
    pub vat: Vec<SaleRecordVat>,
    /// Methods in name order: every method the tickets used, cash whenever the drawer should
    /// hold some, and every method counted.
    pub tenders: Vec<TenderLine>,
    pub movements: MovementTotals,
    pub expected_cash: Cents,
    /// Shown apart, when there were any.
    pub late: Option<LateFigures>,
    /// Per terminal and provider, in their order.
    pub cards: BTreeMap<TerminalKey, CardTotals>,
}

impl ShiftReport {
    /// The counted lines, as the shift's closure seals them.
    pub fn sealed_counts(&self) -> Vec<ShiftCount> {
        self.tenders
            .iter()
            .filter_map(|line| {
                Some(ShiftCount {
                    method: line.method.clone(),
                    expected_cents: line.expected.get(),
                    counted_cents: line.counted?.get(),
                    difference_cents: line.difference?.get(),
                })
            })
            .collect()
    }

    /// The card totals per terminal and provider, as the reports show them and the shift's
    /// closure seals them.
    pub fn card_payments(&self) -> Vec<ShiftCardPayments> {
        self.cards
            .iter()
            .map(|(key, totals)| ShiftCardPayments {
                terminal_id: key.terminal_id.as_ref().map(|id| id.as_str().to_owned()),
                provider: key.provider.as_ref().map(|p| p.as_str().to_owned()),
                authorized_cents: totals.authorized.get(),
                captured_cents: totals.captured.get(),
                refunded_cents: totals.refunded.get(),
                orphan_count: totals.orphans,
                void_count: totals.voids,
                unknown_count: totals.unknowns,
            })
            .collect()
    }
}

/// The report of a shift that booked `figures`, with what was `counted` (nothing for an X
/// report or a close without counts).
pub fn shift_report(figures: &ShiftFigures, counted: &[Count]) -> Result<ShiftReport, Overflow> {
    let mut lines: BTreeMap<&str, TenderLine> = BTreeMap::new();
    let mut cash_kept = Cents::ZERO;
    for taken in &figures.takings {
        let line = lines.entry(&taken.method).or_insert_with(|| empty_line(&taken.method));
        line.applied = line.applied.checked_add(taken.applied)?;
        if taken.method == CASH {
            // The drawer keeps what was handed over less the change: applied plus forfeited.
            cash_kept = cash_kept.checked_add(taken.applied)?.checked_add(taken.forfeited)?;
        } else {
            line.expected = line.expected.checked_add(taken.applied)?;
        }
    }
    let expected_cash = figures
        .opening_float
        .checked_add(cash_kept)?
        .checked_add(figures.movements.net()?)?;
    if expected_cash != Cents::ZERO || lines.contains_key(CASH) {
        lines.entry(CASH).or_insert_with(|| empty_line(CASH)).expected = expected_cash;
    }
    for count in counted {
        let line = lines.entry(&count.method).or_insert_with(|| empty_line(&count.method));
        line.counted = Some(count.counted);
        line.difference = Some(count.counted.checked_sub(line.expected)?);
    }
    Ok(ShiftReport {
        sales_count: figures.sales_count,
        total: figures.total,
        vat: figures.vat.clone(),
        tenders: lines.into_values().collect(),
        movements: figures.movements,
        expected_cash,
        late: (figures.late.sales_count != 0).then(|| figures.late.clone()),
        cards: figures.cards.clone(),
    })
}

fn empty_line(method: &str) -> TenderLine {
    TenderLine {
        method: method.to_owned(),
        applied: Cents::ZERO,
        expected: Cents::ZERO,
        counted: None,
        difference: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::money::MAX_SAFE_INTEGER;

    fn cents(value: i64) -> Cents {
        Cents::new(value).unwrap()
    }

    fn takings(method: &str, applied: i64, forfeited: i64) -> MethodTakings {
        MethodTakings {
            method: method.to_owned(),
            applied: cents(applied),
            forfeited: cents(forfeited),
        }
    }

    fn shift() -> ShiftFigures {
        let mut movements = MovementTotals::default();
        movements.add(MovementKind::PaidIn, cents(5_000)).unwrap();
        movements.add(MovementKind::PaidOut, cents(1_200)).unwrap();
        movements.add(MovementKind::Drop, cents(20_000)).unwrap();
        movements.add(MovementKind::NoSale, Cents::ZERO).unwrap();
        ShiftFigures {
            opening_float: cents(10_000),
            sales_count: 3,
            total: cents(31_000),
            vat: Vec::new(),
            takings: vec![takings("card", 7_000, 0), takings(CASH, 24_000, 50)],
            movements,
            late: LateFigures::default(),
            cards: BTreeMap::new(),
        }
    }

    #[test]
    fn cash_expected_is_the_float_plus_cash_kept_and_movements_in_less_out() {
        let report = shift_report(&shift(), &[]).unwrap();
        // 10,000 float + 24,050 kept + 5,000 in - 1,200 out - 20,000 dropped.
        assert_eq!(report.expected_cash, cents(17_850));
        let methods: Vec<(&str, i64, i64)> = report
            .tenders
            .iter()
            .map(|l| (l.method.as_str(), l.applied.get(), l.expected.get()))
            .collect();
        assert_eq!(methods, [("card", 7_000, 7_000), ("cash", 24_000, 17_850)]);
        assert!(
            report
                .tenders
                .iter()
                .all(|l| l.counted.is_none() && l.difference.is_none())
        );
        assert_eq!(report.movements.no_sales, 1);
        assert!(report.sealed_counts().is_empty());
    }

    #[test]
    fn a_count_gives_counted_minus_expected_and_a_method_not_sold_with_counts_too() {
        let counted = [
            Count {
                method: CASH.into(),
                counted: cents(17_800),
            },
            Count {
                method: "card".into(),
                counted: cents(7_000),
            },
            Count {
                method: "cheque".into(),
                counted: cents(1_500),
            },
        ];
        let report = shift_report(&shift(), &counted).unwrap();
        let differences: Vec<(&str, Option<i64>)> = report
            .tenders
            .iter()
            .map(|l| (l.method.as_str(), l.difference.map(Cents::get)))
            .collect();
        assert_eq!(
            differences,
            [("card", Some(0)), ("cash", Some(-50)), ("cheque", Some(1_500))]
        );
        let sealed = report.sealed_counts();
        assert_eq!(sealed.len(), 3);
        assert_eq!(
            sealed[1],
            ShiftCount {
                method: CASH.into(),
                expected_cents: 17_850,
                counted_cents: 17_800,
                difference_cents: -50,
            }
        );
    }

    #[test]
    fn the_x_report_and_the_z_report_of_the_same_figures_are_equal() {
        let figures = shift();
        assert_eq!(
            shift_report(&figures, &[]).unwrap(),
            shift_report(&figures, &[]).unwrap()
        );
    }

    #[test]
    fn late_sales_are_shown_apart_and_change_nothing_the_drawer_should_hold() {
        let on_time = shift_report(&shift(), &[]).unwrap();
        let mut figures = shift();
        figures.late = LateFigures {
            sales_count: 2,
            total: cents(4_500),
            takings: vec![takings(CASH, 4_500, 0)],
        };
        let with_late = shift_report(&figures, &[]).unwrap();
        assert_eq!(with_late.expected_cash, on_time.expected_cash);
        assert_eq!(with_late.tenders, on_time.tenders);
        assert_eq!(
            (with_late.sales_count, with_late.total),
            (on_time.sales_count, on_time.total)
        );
        assert_eq!(with_late.late, Some(figures.late.clone()));
        assert_eq!(
            figures.late.sealed(),
            Some(LateTickets {
                sales_count: 2,
                total_cents: 4_500
            })
        );
        assert_eq!(on_time.late, None);
        assert_eq!(LateFigures::default().sealed(), None);
    }

    #[test]
    fn a_drawer_with_a_float_and_no_cash_sale_still_expects_its_float() {
        let figures = ShiftFigures {
            opening_float: cents(5_000),
            takings: vec![takings("card", 900, 0)],
            ..ShiftFigures::default()
        };
        let report = shift_report(&figures, &[]).unwrap();
        assert_eq!(report.expected_cash, cents(5_000));
        assert_eq!(report.tenders.len(), 2);
        let empty = shift_report(&ShiftFigures::default(), &[]).unwrap();
        assert!(empty.tenders.is_empty(), "no cash line when the drawer holds nothing");
    }

    #[test]
    fn amounts_fit_their_kind() {
        assert_eq!(check_amount(MovementKind::NoSale, Cents::ZERO), Ok(()));
        assert_eq!(
            check_amount(MovementKind::NoSale, cents(1)),
            Err(AmountProblem::NoSaleMovesNothing)
        );
        for kind in [MovementKind::PaidIn, MovementKind::PaidOut, MovementKind::Drop] {
            assert_eq!(check_amount(kind, cents(1)), Ok(()));
            assert_eq!(check_amount(kind, Cents::ZERO), Err(AmountProblem::MustBePositive));
        }
        for kind in MovementKind::ALL {
            assert_eq!(MovementKind::parse(kind.as_str()), Some(kind));
        }
    }

    #[test]
    fn sums_past_the_exact_integers_are_an_overflow() {
        let figures = ShiftFigures {
            opening_float: cents(MAX_SAFE_INTEGER),
            takings: vec![takings(CASH, 1, 0)],
            ..ShiftFigures::default()
        };
        assert_eq!(shift_report(&figures, &[]), Err(Overflow));
    }
}
