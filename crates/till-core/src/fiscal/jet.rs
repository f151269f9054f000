//! The technical events (JET) the journal records: the codes certified products use, and
//! till's own from 1000. Which fact makes which event is decided here; storage only seals it.

use crate::drawer::MovementKind;
use crate::fiscal::payload::Period;

/// A kind of technical event: its code and the label sealed with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TechnicalEvent {
    pub code: i64,
    pub label: &'static str,
}

const fn event(code: i64, label: &'static str) -> TechnicalEvent {
    TechnicalEvent { code, label }
}

pub const JOURNAL_INITIALISED: TechnicalEvent = event(260, "journal initialised");
pub const SESSION_OPENED: TechnicalEvent = event(80, "session opened");
pub const SESSION_CLOSED: TechnicalEvent = event(40, "session closed");
pub const DAY_CLOSED: TechnicalEvent = event(50, "day closed");
pub const MONTH_CLOSED: TechnicalEvent = event(50, "month closed");
pub const YEAR_CLOSED: TechnicalEvent = event(60, "year closed");
pub const ARCHIVE_MADE: TechnicalEvent = event(20, "archive made");
pub const INTEGRITY_FAILURE: TechnicalEvent = event(90, "integrity failure found");
pub const APPROVAL_ISSUED: TechnicalEvent = event(1010, "manager approval issued");
pub const APPROVAL_SPENT: TechnicalEvent = event(1020, "manager approval spent");
pub const CASH_PAID_IN: TechnicalEvent = event(1030, "cash paid in");
pub const CASH_PAID_OUT: TechnicalEvent = event(1031, "cash paid out");
pub const CASH_DROPPED: TechnicalEvent = event(1032, "cash dropped to the safe");
pub const NO_SALE: TechnicalEvent = event(1033, "drawer opened without a sale");
pub const LATE_SALES_RECEIVED: TechnicalEvent = event(1040, "late sales received");

/// The event a closure of `period` records.
pub fn period_closed(period: Period) -> TechnicalEvent {
    match period {
        Period::Day => DAY_CLOSED,
        Period::Month => MONTH_CLOSED,
        Period::Year => YEAR_CLOSED,
    }
}

/// The event a movement of the drawer records.
pub fn cash_moved(kind: MovementKind) -> TechnicalEvent {
    match kind {
        MovementKind::PaidIn => CASH_PAID_IN,
        MovementKind::PaidOut => CASH_PAID_OUT,
        MovementKind::Drop => CASH_DROPPED,
        MovementKind::NoSale => NO_SALE,
    }
}
