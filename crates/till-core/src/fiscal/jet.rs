//! The technical events (JET) the journal records: the codes certified products use, and
//! till's own from 1000. Which fact makes which event is decided here; storage only seals it.

use crate::drawer::MovementKind;
use crate::fiscal::payload::Period;
use crate::instant::format_utc;
use jiff::Timestamp;
use std::fmt::Display;

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
pub const INVOICE_ISSUED: TechnicalEvent = event(1050, "invoice issued");
pub const CREDIT_INVOICE_ISSUED: TechnicalEvent = event(1051, "credit invoice issued");

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

/// A technical event as the journal seals it: its kind, and the detail that says what happened
/// (ids and amounts only: never a name, a PIN or a token).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    pub event: TechnicalEvent,
    pub detail: String,
}

fn recorded(event: TechnicalEvent, detail: String) -> Recorded {
    Recorded { event, detail }
}

/// A register's first session starts its journal.
pub fn journal_initialised(register: impl Display) -> Recorded {
    recorded(JOURNAL_INITIALISED, register.to_string())
}

pub fn session_opened(session: impl Display, cashier: impl Display) -> Recorded {
    recorded(SESSION_OPENED, format!("{session} by {cashier}"))
}

pub fn session_closed(session: impl Display, cashier: impl Display) -> Recorded {
    recorded(SESSION_CLOSED, format!("{session} by {cashier}"))
}

/// A closure of `period`, named by the closure's own reference.
pub fn closure(period: Period, reference: impl Display) -> Recorded {
    recorded(period_closed(period), reference.to_string())
}

/// The first sale of a queue that reached the server after its session closed: when the till
/// rang it (empty when it did not say).
pub fn late_sales_received(transaction: impl Display, session: impl Display, rung: Option<Timestamp>) -> Recorded {
    let rung = rung.map(format_utc).unwrap_or_default();
    recorded(
        LATE_SALES_RECEIVED,
        format!("{transaction} of session {session} rung {rung}"),
    )
}

pub fn approval_issued(grant: impl Display, manager: impl Display, operation: &str) -> Recorded {
    recorded(APPROVAL_ISSUED, format!("{grant} by {manager} ({operation})"))
}

pub fn approval_spent(grant: impl Display, transaction: impl Display) -> Recorded {
    recorded(APPROVAL_SPENT, format!("{grant} for {transaction}"))
}

pub fn archive_made(archive: impl Display, from: impl Display, to: impl Display, sha256: &str) -> Recorded {
    recorded(ARCHIVE_MADE, format!("{archive} {from}..{to} sha256 {sha256}"))
}

/// A movement of the drawer: which, how much, in which session, recorded by whom.
pub fn drawer_moved(
    kind: MovementKind,
    movement: impl Display,
    amount: impl Display,
    session: impl Display,
    by: impl Display,
) -> Recorded {
    recorded(cash_moved(kind), format!("{movement} of {amount} in {session} by {by}"))
}

/// An invoice made out for tickets of the register's store: its number, the transaction ids of
/// its tickets, its total with VAT and the SHA-256 (hex) of its CII XML. Nothing of the buyer:
/// the journal names facts, the invoice names the parties.
pub fn invoice_issued(
    credit: bool,
    number: impl Display,
    tickets: &[&str],
    total: impl Display,
    xml_sha256: &str,
) -> Recorded {
    let event = if credit { CREDIT_INVOICE_ISSUED } else { INVOICE_ISSUED };
    recorded(
        event,
        format!(
            "{number} tickets {} total {total} sha256 {xml_sha256}",
            tickets.join(" ")
        ),
    )
}

/// The SHA-256 an invoice's event sealed for its XML: the detail's last word, when the event is
/// an invoice's.
pub fn sealed_invoice_digest(code: i64, detail: &str) -> Option<&str> {
    let invoice = code == INVOICE_ISSUED.code || code == CREDIT_INVOICE_ISSUED.code;
    let (_, digest) = detail.rsplit_once(" sha256 ")?;
    invoice.then_some(digest)
}
