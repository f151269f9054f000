//! Card payments: the payment-attempt ledger. The till records an attempt before it asks the
//! card terminal, then what the terminal said; a sale captures an approved attempt in its own
//! transaction, one sale per attempt. So no card is charged for a sale that was not recorded,
//! and no sale is recorded for a charge that failed: an approval no sale took becomes an orphan
//! to give back, a lost answer (`unknown`) waits to be settled.
//!
//! Card data never reaches till beyond the last four digits: every text of an outcome, and an
//! attempt's terminal and provider, are refused when they hold a run of twelve digits or more,
//! however spaced.
//!
//! This module holds the rules only: parsed types, the state machine as functions from an
//! attempt to its next value, and the card totals of the X and Z reports. Storage applies a
//! change guarded by the state it was computed from.

pub use crate::ids::PaymentId;
use crate::ids::{SessionId, TransactionId};
use crate::money::{Cents, Overflow};
use crate::sale::{Tender, TenderMethod};
use jiff::{SignedDuration, Timestamp};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

// Card data

/// Fewest digits read as a card number: the shortest card numbers have twelve. Shorter runs (an
/// authorisation code, a date, a terminal's number) are not card data.
pub const CARD_NUMBER_MIN_DIGITS: usize = 12;

/// What may stand between the digits of a card number as people type and terminals print it:
/// any white space (line breaks included, so a number split over two lines is still one) and
/// the dashes and minus signs.
fn joins_digits(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '-' | '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{fe58}' | '\u{fe63}' | '\u{ff0d}'
        )
}

/// Whether `text` holds a run of [`CARD_NUMBER_MIN_DIGITS`] digits or more, counting digits
/// separated only by white space and dashes as one run (`4970 1012 3456 7890`,
/// `4970-1012-3456-7890`). Any other character ends a run.
pub fn holds_card_number(text: &str) -> bool {
    let mut run = 0;
    for c in text.chars() {
        if c.is_ascii_digit() {
            run += 1;
            if run >= CARD_NUMBER_MIN_DIGITS {
                return true;
            }
        } else if !joins_digits(c) {
            run = 0;
        }
    }
    false
}

// Fields and their refusals

/// A field of a payment request or of an outcome, by its name in the interface: a refusal
/// names it so the answer can point at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PaymentField {
    AmountCents,
    TerminalId,
    Provider,
    Status,
    AuthorizedCents,
    AuthorizationCode,
    CardBrand,
    Last4,
    EntryMode,
    TerminalTransactionId,
    TerminalReceipt,
}

impl PaymentField {
    pub fn as_str(self) -> &'static str {
        match self {
            PaymentField::AmountCents => "amountCents",
            PaymentField::TerminalId => "terminalId",
            PaymentField::Provider => "provider",
            PaymentField::Status => "status",
            PaymentField::AuthorizedCents => "authorizedCents",
            PaymentField::AuthorizationCode => "authorizationCode",
            PaymentField::CardBrand => "cardBrand",
            PaymentField::Last4 => "last4",
            PaymentField::EntryMode => "entryMode",
            PaymentField::TerminalTransactionId => "terminalTransactionId",
            PaymentField::TerminalReceipt => "terminalReceipt",
        }
    }
}

impl fmt::Display for PaymentField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a field's value was refused. The words never repeat the value: it may be card data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FieldProblem {
    #[error("must not be empty")]
    Empty,
    #[error("must be at most {0} characters")]
    TooLong(usize),
    #[error("must not contain control characters")]
    ControlCharacter,
    #[error("must not hold a card number: at most its last four digits")]
    CardNumber,
    #[error("must be exactly four digits")]
    NotFourDigits,
    #[error("must be a positive number of cents")]
    NotAPositiveAmount,
    #[error("must be one of authorized, partially_authorized, declined, cancelled, unknown")]
    NotAStatus,
    #[error("is required when status is {0}")]
    Required(OutcomeStatus),
    #[error("must be absent when status is {0}")]
    NotAllowed(OutcomeStatus),
}

/// A refused field: the API answers 400 naming `field`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field} {problem}")]
pub struct FieldRefusal {
    pub field: PaymentField,
    pub problem: FieldProblem,
}

impl FieldRefusal {
    fn of(field: PaymentField) -> impl FnOnce(FieldProblem) -> FieldRefusal {
        move |problem| FieldRefusal { field, problem }
    }
}

/// The rules of every free text of an attempt or an outcome: not empty, at most `max`
/// characters, no control character (a line break only where `lines` allows it), no card
/// number.
fn check_payment_text(text: &str, max: usize, lines: bool) -> Result<(), FieldProblem> {
    if text.is_empty() {
        return Err(FieldProblem::Empty);
    }
    if text.chars().count() > max {
        return Err(FieldProblem::TooLong(max));
    }
    if text.chars().any(|c| c.is_control() && !(lines && c == '\n')) {
        return Err(FieldProblem::ControlCharacter);
    }
    if holds_card_number(text) {
        return Err(FieldProblem::CardNumber);
    }
    Ok(())
}

macro_rules! payment_text {
    ($(#[$meta:meta])* $name:ident, $max:expr, lines: $lines:expr) => {
        parsed_text!($(#[$meta])* $name);

        impl $name {
            /// Longest value, in characters.
            pub const MAX_CHARS: usize = $max;

            pub fn parse(text: &str) -> Result<Self, FieldProblem> {
                check_payment_text(text, $max, $lines)?;
                Ok(Self(text.to_owned()))
            }
        }
    };
}

payment_text!(
    /// The card terminal the till asked, as the till names it.
    TerminalId,
    64,
    lines: false
);
payment_text!(
    /// Who processes the terminal's payments (an acquirer, a payment service).
    Provider,
    64,
    lines: false
);
payment_text!(
    /// The issuer's approval code, printed on the receipt (six characters on most networks).
    AuthorizationCode,
    32,
    lines: false
);
payment_text!(
    /// The card's network as the terminal names it (`CB`, `VISA`, ...).
    CardBrand,
    32,
    lines: false
);
payment_text!(
    /// How the card was read, as the terminal says it (`contactless`, `chip`, ...). Free text:
    /// each terminal has its own words.
    EntryMode,
    32,
    lines: false
);
payment_text!(
    /// The terminal's own reference of the transaction, to find it in the terminal's journal.
    TerminalTransactionId,
    64,
    lines: false
);
payment_text!(
    /// The terminal's receipt text, to print with the sale's: lines separated by line feeds.
    TerminalReceipt,
    4_096,
    lines: true
);

/// The last four digits of the card, the only part of its number till keeps.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Last4(String);

impl Last4 {
    pub fn parse(text: &str) -> Result<Last4, FieldProblem> {
        if text.len() == 4 && text.bytes().all(|b| b.is_ascii_digit()) {
            Ok(Last4(text.to_owned()))
        } else {
            Err(FieldProblem::NotFourDigits)
        }
    }

    pub fn from_trusted(value: String) -> Last4 {
        Last4(value)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An amount the till asks for, or a terminal approved: positive cents.
pub fn parse_amount(cents: i64) -> Result<Cents, FieldProblem> {
    Cents::new(cents)
        .filter(|amount| amount.get() > 0)
        .ok_or(FieldProblem::NotAPositiveAmount)
}

// States

/// Whether an attempt takes money from the card or gives it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AttemptKind {
    Payment,
    Refund,
}

impl AttemptKind {
    pub const ALL: [AttemptKind; 2] = [AttemptKind::Payment, AttemptKind::Refund];

    pub fn as_str(self) -> &'static str {
        match self {
            AttemptKind::Payment => "payment",
            AttemptKind::Refund => "refund",
        }
    }

    pub fn parse(text: &str) -> Option<AttemptKind> {
        AttemptKind::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

/// Where an attempt stands. A payment goes `requested` → an outcome's state; an approved one
/// (`authorized`, `partially_authorized`) → `captured` by a sale, or `orphaned` when no sale
/// took it in time, and an approved or orphaned one → `voided` when the terminal gave the money
/// back. `unknown` waits for an outcome. A refund is made `refunded` by its return.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PaymentState {
    Requested,
    Authorized,
    PartiallyAuthorized,
    Declined,
    Cancelled,
    Unknown,
    Captured,
    Voided,
    Orphaned,
    Refunded,
}

impl PaymentState {
    pub const ALL: [PaymentState; 10] = [
        PaymentState::Requested,
        PaymentState::Authorized,
        PaymentState::PartiallyAuthorized,
        PaymentState::Declined,
        PaymentState::Cancelled,
        PaymentState::Unknown,
        PaymentState::Captured,
        PaymentState::Voided,
        PaymentState::Orphaned,
        PaymentState::Refunded,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PaymentState::Requested => "requested",
            PaymentState::Authorized => "authorized",
            PaymentState::PartiallyAuthorized => "partially_authorized",
            PaymentState::Declined => "declined",
            PaymentState::Cancelled => "cancelled",
            PaymentState::Unknown => "unknown",
            PaymentState::Captured => "captured",
            PaymentState::Voided => "voided",
            PaymentState::Orphaned => "orphaned",
            PaymentState::Refunded => "refunded",
        }
    }

    pub fn parse(text: &str) -> Option<PaymentState> {
        PaymentState::ALL.into_iter().find(|state| state.as_str() == text)
    }

    /// Approved by the terminal and waiting for a sale.
    pub fn is_approved(self) -> bool {
        matches!(self, PaymentState::Authorized | PaymentState::PartiallyAuthorized)
    }

    /// Still waiting for the terminal's answer: an outcome may settle it.
    pub fn is_open(self) -> bool {
        matches!(self, PaymentState::Requested | PaymentState::Unknown)
    }
}

impl fmt::Display for PaymentState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

// Outcomes

/// What the terminal answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OutcomeStatus {
    /// The whole amount asked for.
    Authorized,
    /// Less than asked for: the rest is due in other tenders.
    PartiallyAuthorized,
    Declined,
    /// Stopped at the terminal before the card was charged.
    Cancelled,
    /// The answer was lost: a later outcome settles it.
    Unknown,
}

impl OutcomeStatus {
    pub const ALL: [OutcomeStatus; 5] = [
        OutcomeStatus::Authorized,
        OutcomeStatus::PartiallyAuthorized,
        OutcomeStatus::Declined,
        OutcomeStatus::Cancelled,
        OutcomeStatus::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        self.state().as_str()
    }

    pub fn parse(text: &str) -> Option<OutcomeStatus> {
        OutcomeStatus::ALL.into_iter().find(|status| status.as_str() == text)
    }

    /// The state an open attempt takes with this outcome.
    pub fn state(self) -> PaymentState {
        match self {
            OutcomeStatus::Authorized => PaymentState::Authorized,
            OutcomeStatus::PartiallyAuthorized => PaymentState::PartiallyAuthorized,
            OutcomeStatus::Declined => PaymentState::Declined,
            OutcomeStatus::Cancelled => PaymentState::Cancelled,
            OutcomeStatus::Unknown => PaymentState::Unknown,
        }
    }

    /// Whether the terminal approved an amount: only then is there an amount and a code.
    pub fn approves(self) -> bool {
        self.state().is_approved()
    }
}

impl fmt::Display for OutcomeStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An outcome as the request carries it, before parsing. Storage reads one back the same way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutcomeInput<'a> {
    pub status: &'a str,
    pub authorized_cents: Option<i64>,
    pub authorization_code: Option<&'a str>,
    pub card_brand: Option<&'a str>,
    pub last4: Option<&'a str>,
    pub entry_mode: Option<&'a str>,
    pub terminal_transaction_id: Option<&'a str>,
    pub terminal_receipt: Option<&'a str>,
}

/// What the terminal said, parsed. An approval (`authorized`, `partially_authorized`) carries
/// the amount approved, and may carry the approval code; `declined`, `cancelled` and `unknown`
/// carry neither (nothing was approved). The card's brand, last four digits, entry mode, the
/// terminal's transaction reference and its receipt are optional with every status: a
/// standalone terminal's outcome is keyed by hand, and a declined card may have been read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    status: OutcomeStatus,
    authorized: Option<Cents>,
    authorization_code: Option<AuthorizationCode>,
    card_brand: Option<CardBrand>,
    last4: Option<Last4>,
    entry_mode: Option<EntryMode>,
    terminal_transaction_id: Option<TerminalTransactionId>,
    terminal_receipt: Option<TerminalReceipt>,
}

/// Parses an optional field, naming it in a refusal.
fn optional<T>(
    field: PaymentField,
    text: Option<&str>,
    parse: fn(&str) -> Result<T, FieldProblem>,
) -> Result<Option<T>, FieldRefusal> {
    text.map(parse).transpose().map_err(FieldRefusal::of(field))
}

impl Outcome {
    /// Checks the shape of every field first (card data above all), then which fields the
    /// status allows. The amount against the attempt's is checked by [`apply_outcome`].
    pub fn parse(input: &OutcomeInput<'_>) -> Result<Outcome, FieldRefusal> {
        let status = OutcomeStatus::parse(input.status).ok_or(FieldRefusal {
            field: PaymentField::Status,
            problem: FieldProblem::NotAStatus,
        })?;
        let authorized = input
            .authorized_cents
            .map(parse_amount)
            .transpose()
            .map_err(FieldRefusal::of(PaymentField::AuthorizedCents))?;
        let outcome = Outcome {
            status,
            authorized,
            authorization_code: optional(
                PaymentField::AuthorizationCode,
                input.authorization_code,
                AuthorizationCode::parse,
            )?,
            card_brand: optional(PaymentField::CardBrand, input.card_brand, CardBrand::parse)?,
            last4: optional(PaymentField::Last4, input.last4, Last4::parse)?,
            entry_mode: optional(PaymentField::EntryMode, input.entry_mode, EntryMode::parse)?,
            terminal_transaction_id: optional(
                PaymentField::TerminalTransactionId,
                input.terminal_transaction_id,
                TerminalTransactionId::parse,
            )?,
            terminal_receipt: optional(
                PaymentField::TerminalReceipt,
                input.terminal_receipt,
                TerminalReceipt::parse,
            )?,
        };
        if status.approves() {
            if outcome.authorized.is_none() {
                return Err(FieldRefusal {
                    field: PaymentField::AuthorizedCents,
                    problem: FieldProblem::Required(status),
                });
            }
        } else {
            let not_allowed = |field| FieldRefusal {
                field,
                problem: FieldProblem::NotAllowed(status),
            };
            if outcome.authorized.is_some() {
                return Err(not_allowed(PaymentField::AuthorizedCents));
            }
            if outcome.authorization_code.is_some() {
                return Err(not_allowed(PaymentField::AuthorizationCode));
            }
        }
        Ok(outcome)
    }

    pub fn status(&self) -> OutcomeStatus {
        self.status
    }

    /// The amount approved; `Some` exactly for an approval.
    pub fn authorized(&self) -> Option<Cents> {
        self.authorized
    }

    pub fn authorization_code(&self) -> Option<&AuthorizationCode> {
        self.authorization_code.as_ref()
    }

    pub fn card_brand(&self) -> Option<&CardBrand> {
        self.card_brand.as_ref()
    }

    pub fn last4(&self) -> Option<&Last4> {
        self.last4.as_ref()
    }

    pub fn entry_mode(&self) -> Option<&EntryMode> {
        self.entry_mode.as_ref()
    }

    pub fn terminal_transaction_id(&self) -> Option<&TerminalTransactionId> {
        self.terminal_transaction_id.as_ref()
    }

    pub fn terminal_receipt(&self) -> Option<&TerminalReceipt> {
        self.terminal_receipt.as_ref()
    }
}

// Attempts

/// `POST /v1/payments`, parsed: an attempt the till is about to put to the terminal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptRequest {
    pub payment_id: PaymentId,
    pub session_id: SessionId,
    /// Positive: see [`parse_amount`].
    pub amount: Cents,
    pub terminal_id: Option<TerminalId>,
    pub provider: Option<Provider>,
}

/// An attempt as the ledger keeps it. Its fields only change through the functions below.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    pub id: PaymentId,
    pub kind: AttemptKind,
    pub session_id: SessionId,
    /// A payment: what the till asked the terminal for. A refund: what it gives back.
    pub amount: Cents,
    pub terminal_id: Option<TerminalId>,
    pub provider: Option<Provider>,
    pub state: PaymentState,
    /// The terminal's answer; `None` while `requested`, and for a refund.
    pub outcome: Option<Outcome>,
    /// A refund: when its return recorded it.
    pub requested_at: Timestamp,
    /// When an approval was recorded: the orphan window runs from here.
    pub authorized_at: Option<Timestamp>,
    /// A payment: the sale that captured it. A refund: the return that made it.
    pub captured_by: Option<TransactionId>,
    pub captured_at: Option<Timestamp>,
    /// Kept when it is voided later: the reports count every orphan.
    pub orphaned_at: Option<Timestamp>,
    pub voided_at: Option<Timestamp>,
    /// A refund: the captured payment it gives money back to.
    pub refund_of: Option<PaymentId>,
    /// A payment: what refunds gave back to it so far (zero for a refund).
    pub refunded: Cents,
}

impl Attempt {
    /// A new attempt, `requested`, recorded before the terminal is asked.
    pub fn requested(request: AttemptRequest, now: Timestamp) -> Attempt {
        Attempt {
            id: request.payment_id,
            kind: AttemptKind::Payment,
            session_id: request.session_id,
            amount: request.amount,
            terminal_id: request.terminal_id,
            provider: request.provider,
            state: PaymentState::Requested,
            outcome: None,
            requested_at: now,
            authorized_at: None,
            captured_by: None,
            captured_at: None,
            orphaned_at: None,
            voided_at: None,
            refund_of: None,
            refunded: Cents::ZERO,
        }
    }

    /// Whether a repeated `POST /v1/payments` with this body asks for this very attempt (the
    /// same answer again) rather than another under the same id (a conflict).
    pub fn was_requested_by(&self, request: &AttemptRequest) -> bool {
        self.kind == AttemptKind::Payment
            && self.id == request.payment_id
            && self.session_id == request.session_id
            && self.amount == request.amount
            && self.terminal_id == request.terminal_id
            && self.provider == request.provider
    }

    /// What a payment's approval put on the card: what a sale captures and refunds draw on.
    pub fn authorized(&self) -> Option<Cents> {
        self.outcome.as_ref().and_then(Outcome::authorized)
    }
}

/// What a transition did to an attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// The same request again: nothing to write, the same answer.
    Unchanged,
    /// The attempt's next value, to write guarded by the state it had.
    Changed(Box<Attempt>),
}

impl Change {
    fn to(attempt: Attempt) -> Change {
        Change::Changed(Box::new(attempt))
    }
}

// An outcome on an attempt

/// Why an outcome was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OutcomeRefusal {
    /// A refund attempt is settled by its return, not by an outcome.
    #[error("a refund takes no outcome")]
    NotAPayment,
    /// The attempt was settled by another outcome (a 409).
    #[error("the payment was settled by another outcome; it is {state}")]
    Conflict { state: PaymentState },
    /// `authorized` approves the whole amount asked for, no other.
    #[error("authorizedCents must equal the amount requested, {requested} cents")]
    NotTheRequestedAmount { requested: Cents },
    /// `partially_authorized` approves less than asked for.
    #[error("authorizedCents must be less than the amount requested, {requested} cents")]
    NotLessThanRequested { requested: Cents },
}

impl OutcomeRefusal {
    /// The field to name, when the refusal is about one.
    pub fn field(self) -> Option<PaymentField> {
        match self {
            OutcomeRefusal::NotTheRequestedAmount { .. } | OutcomeRefusal::NotLessThanRequested { .. } => {
                Some(PaymentField::AuthorizedCents)
            }
            OutcomeRefusal::NotAPayment | OutcomeRefusal::Conflict { .. } => None,
        }
    }
}

/// Records what the terminal said. An open attempt (`requested`, `unknown`) takes the
/// outcome's state; an approval starts the orphan window at `now`. Any other attempt was
/// settled by an outcome: the same one again is [`Change::Unchanged`] (a retry, even after a
/// sale captured the attempt), another is a conflict.
pub fn apply_outcome(attempt: &Attempt, outcome: &Outcome, now: Timestamp) -> Result<Change, OutcomeRefusal> {
    if attempt.kind != AttemptKind::Payment {
        return Err(OutcomeRefusal::NotAPayment);
    }
    if attempt.outcome.as_ref() == Some(outcome) {
        return Ok(Change::Unchanged);
    }
    if !attempt.state.is_open() {
        return Err(OutcomeRefusal::Conflict { state: attempt.state });
    }
    let requested = attempt.amount;
    match (outcome.status, outcome.authorized) {
        (OutcomeStatus::Authorized, Some(approved)) if approved != requested => {
            return Err(OutcomeRefusal::NotTheRequestedAmount { requested });
        }
        (OutcomeStatus::PartiallyAuthorized, Some(approved)) if approved >= requested => {
            return Err(OutcomeRefusal::NotLessThanRequested { requested });
        }
        _ => {}
    }
    let mut next = attempt.clone();
    next.state = outcome.status.state();
    next.outcome = Some(outcome.clone());
    next.authorized_at = outcome.status.approves().then_some(now);
    Ok(Change::to(next))
}

// Capture by a sale

/// The field a sale's refusal names: its `N`th tender.
pub fn tender_field(index: usize) -> String {
    format!("tenders.tenders.{index}")
}

/// A sale's `card` tender naming an attempt, as the sale's transaction sees it.
#[derive(Clone, Copy, Debug)]
pub struct CaptureBy<'a> {
    pub transaction_id: &'a TransactionId,
    pub session_id: &'a SessionId,
    /// The tender's `applied`.
    pub applied: Cents,
}

/// Why a `card` tender cannot capture the attempt it names: each is a 422 naming the tender.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CaptureRefusal {
    /// `TILL_CARD_ATTEMPTS_REQUIRED` is on and the tender names no attempt.
    #[error("a card tender must name its payment in reference")]
    ReferenceRequired,
    /// Two tenders of the sale name one attempt.
    #[error("the payment is named by another tender of this sale")]
    NamedTwice,
    #[error("no such payment")]
    NoSuchPayment,
    #[error("the payment is a refund")]
    NotAPayment,
    #[error("the payment was captured by another sale")]
    AlreadyCaptured,
    #[error("the payment is {state}, not authorized")]
    NotAuthorized { state: PaymentState },
    #[error("the payment belongs to another session")]
    OtherSession,
    #[error("the payment authorized {authorized} cents, not the tender's applied amount")]
    OtherAmount { authorized: Cents },
}

/// The sale's `card` tenders that name an attempt, by index, with the attempt's id. Refuses a
/// tender without a reference when attempts are required, and an attempt named twice (two
/// tenders would otherwise each pass the capture check against the same approval).
pub fn card_references(
    tenders: &[Tender],
    attempts_required: bool,
) -> Result<Vec<(usize, PaymentId)>, (usize, CaptureRefusal)> {
    let mut named = BTreeSet::new();
    let mut references = Vec::new();
    for (index, tender) in tenders.iter().enumerate() {
        if tender.method != TenderMethod::Card {
            continue;
        }
        let Some(reference) = &tender.reference else {
            if attempts_required {
                return Err((index, CaptureRefusal::ReferenceRequired));
            }
            continue;
        };
        // A reference passed the rules of every id: it is a payment id as written.
        let id = PaymentId::from_trusted(reference.as_str().to_owned());
        if !named.insert(id.clone()) {
            return Err((index, CaptureRefusal::NamedTwice));
        }
        references.push((index, id));
    }
    Ok(references)
}

/// The sale's capture of an attempt: only an approved payment of the sale's session, for
/// exactly the amount approved, and once. The sale that captured it asking again is
/// [`Change::Unchanged`].
pub fn capture(attempt: &Attempt, by: CaptureBy<'_>, now: Timestamp) -> Result<Change, CaptureRefusal> {
    if attempt.kind != AttemptKind::Payment {
        return Err(CaptureRefusal::NotAPayment);
    }
    if attempt.state == PaymentState::Captured {
        return if attempt.captured_by.as_ref() == Some(by.transaction_id) {
            Ok(Change::Unchanged)
        } else {
            Err(CaptureRefusal::AlreadyCaptured)
        };
    }
    if !attempt.state.is_approved() {
        return Err(CaptureRefusal::NotAuthorized { state: attempt.state });
    }
    if &attempt.session_id != by.session_id {
        return Err(CaptureRefusal::OtherSession);
    }
    let authorized = attempt
        .authorized()
        .ok_or(CaptureRefusal::NotAuthorized { state: attempt.state })?;
    if authorized != by.applied {
        return Err(CaptureRefusal::OtherAmount { authorized });
    }
    let mut next = attempt.clone();
    next.state = PaymentState::Captured;
    next.captured_by = Some(by.transaction_id.clone());
    next.captured_at = Some(now);
    Ok(Change::to(next))
}

// Void

/// Why a void was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VoidRefusal {
    #[error("a refund cannot be voided")]
    NotAPayment,
    /// Nothing approved to give back, or a sale holds it (a return gives it back then).
    #[error("a {state} payment cannot be voided")]
    NotVoidable { state: PaymentState },
}

/// Records that the terminal gave an approval back: an approved or orphaned payment becomes
/// `voided`. Voiding a voided one again is [`Change::Unchanged`] (a retry).
pub fn void(attempt: &Attempt, now: Timestamp) -> Result<Change, VoidRefusal> {
    if attempt.kind != AttemptKind::Payment {
        return Err(VoidRefusal::NotAPayment);
    }
    match attempt.state {
        PaymentState::Voided => Ok(Change::Unchanged),
        PaymentState::Authorized | PaymentState::PartiallyAuthorized | PaymentState::Orphaned => {
            let mut next = attempt.clone();
            next.state = PaymentState::Voided;
            next.voided_at = Some(now);
            Ok(Change::to(next))
        }
        state => Err(VoidRefusal::NotVoidable { state }),
    }
}

// Orphans

/// How long an approval waits for its sale before it is an orphan
/// (`TILL_PAYMENT_ORPHAN_SECONDS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct OrphanWindow(SignedDuration);

impl OrphanWindow {
    pub const DEFAULT_SECONDS: i64 = 900;
    /// A day: an orphan must show in the report of the shift it happened in.
    pub const MAX_SECONDS: i64 = 86_400;
    /// The sweep runs at least this often, and at least as often as the window.
    pub const MAX_CHECK_INTERVAL: SignedDuration = SignedDuration::from_secs(60);

    /// `None` outside `1..=MAX_SECONDS`: a window of zero would orphan every approval at once.
    pub fn from_seconds(seconds: i64) -> Option<OrphanWindow> {
        (1..=Self::MAX_SECONDS)
            .contains(&seconds)
            .then(|| OrphanWindow(SignedDuration::from_secs(seconds)))
    }

    pub fn duration(self) -> SignedDuration {
        self.0
    }

    /// How often the sweep must look.
    pub fn check_interval(self) -> SignedDuration {
        self.0.min(Self::MAX_CHECK_INTERVAL)
    }

    /// Approvals recorded before this instant are due at `now`: storage selects them with it.
    pub fn cutoff(self, now: Timestamp) -> Timestamp {
        now.checked_sub(self.0).unwrap_or(Timestamp::MIN)
    }
}

impl Default for OrphanWindow {
    fn default() -> OrphanWindow {
        OrphanWindow(SignedDuration::from_secs(Self::DEFAULT_SECONDS))
    }
}

/// Whether an approved payment has waited for its sale longer than the window at `now`.
pub fn orphan_due(attempt: &Attempt, now: Timestamp, window: OrphanWindow) -> bool {
    attempt.kind == AttemptKind::Payment
        && attempt.state.is_approved()
        && attempt.authorized_at.is_some_and(|at| at < window.cutoff(now))
}

/// The attempt made an orphan, when it is due; `None` otherwise.
pub fn orphan(attempt: &Attempt, now: Timestamp, window: OrphanWindow) -> Option<Attempt> {
    orphan_due(attempt, now, window).then(|| {
        let mut next = attempt.clone();
        next.state = PaymentState::Orphaned;
        next.orphaned_at = Some(now);
        next
    })
}

// Refunds

/// What is left to refund on a payment that captured `captured`, of which `refunded` went back.
pub fn refund_room(captured: Cents, refunded: Cents) -> Result<Cents, Overflow> {
    captured.checked_sub(refunded)
}

/// Why a card refund tender was refused: a 422 naming the tender.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RefundRefusal {
    #[error("no such payment")]
    NoSuchPayment,
    #[error("the payment is a refund")]
    NotAPayment,
    #[error("the payment is {state}, not captured")]
    NotCaptured { state: PaymentState },
    /// The payment was captured by a sale other than the one returned.
    #[error("the payment was not captured by the original sale")]
    OtherSale,
    #[error("a refund must be a positive number of cents")]
    NotPositive,
    #[error("only {room} is left to refund to this payment")]
    OverRoom { room: Cents },
    #[error("amounts exceed the largest representable value")]
    Overflow,
    #[error("another tender of the return names the same payment")]
    NamedTwice,
}

/// A return's `card` refund tender naming a payment, as the return's transaction sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefundRequest {
    /// The refund attempt's own id, chosen by the caller.
    pub id: PaymentId,
    /// The return's transaction.
    pub transaction_id: TransactionId,
    /// The sale the return gives back: the payment must be that sale's.
    pub original: TransactionId,
    pub session_id: SessionId,
    pub amount: Cents,
    pub terminal_id: Option<TerminalId>,
    pub provider: Option<Provider>,
}

/// Checks a refund of `amount` against a payment and what it gave back so far
/// ([`Attempt::refunded`]): the payment must be captured, and the refund positive and within
/// the room left. Answers the room left after it.
pub fn check_refund(payment: &Attempt, amount: Cents) -> Result<Cents, RefundRefusal> {
    if payment.kind != AttemptKind::Payment {
        return Err(RefundRefusal::NotAPayment);
    }
    if payment.state != PaymentState::Captured {
        return Err(RefundRefusal::NotCaptured { state: payment.state });
    }
    if amount.get() <= 0 {
        return Err(RefundRefusal::NotPositive);
    }
    let captured = payment
        .authorized()
        .ok_or(RefundRefusal::NotCaptured { state: payment.state })?;
    let room = refund_room(captured, payment.refunded).map_err(|_| RefundRefusal::Overflow)?;
    if amount > room {
        return Err(RefundRefusal::OverRoom {
            room: room.max(Cents::ZERO),
        });
    }
    room.checked_sub(amount).map_err(|_| RefundRefusal::Overflow)
}

/// The refund attempt a return records, `refunded` from the start: the return's transaction
/// is what settles it. Refused as [`check_refund`] refuses, and when the payment was captured
/// by another sale than the one returned.
pub fn refund(payment: &Attempt, request: RefundRequest, now: Timestamp) -> Result<Attempt, RefundRefusal> {
    check_refund(payment, request.amount)?;
    if payment.captured_by.as_ref() != Some(&request.original) {
        return Err(RefundRefusal::OtherSale);
    }
    Ok(Attempt {
        id: request.id,
        kind: AttemptKind::Refund,
        session_id: request.session_id,
        amount: request.amount,
        terminal_id: request.terminal_id,
        provider: request.provider,
        state: PaymentState::Refunded,
        outcome: None,
        requested_at: now,
        authorized_at: None,
        captured_by: Some(request.transaction_id),
        captured_at: Some(now),
        orphaned_at: None,
        voided_at: None,
        refund_of: Some(payment.id.clone()),
        refunded: Cents::ZERO,
    })
}

// Card totals of the X and Z reports

/// A terminal and its provider, as the reports group card payments.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TerminalKey {
    pub terminal_id: Option<TerminalId>,
    pub provider: Option<Provider>,
}

/// What the X and Z reports read of an attempt: a Z report keeps exactly this of each attempt
/// of its shift, as the attempt stood at the close, and the audit adds it up again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportedAttempt {
    pub key: TerminalKey,
    pub kind: AttemptKind,
    pub state: PaymentState,
    /// What was asked (a payment) or given back (a refund).
    pub amount: Cents,
    /// What the terminal approved, for a payment it approved.
    pub authorized: Option<Cents>,
    /// Whether it became an orphan, voided since or not.
    pub orphaned: bool,
}

impl Attempt {
    pub fn reported(&self) -> ReportedAttempt {
        ReportedAttempt {
            key: TerminalKey {
                terminal_id: self.terminal_id.clone(),
                provider: self.provider.clone(),
            },
            kind: self.kind,
            state: self.state,
            amount: self.amount,
            authorized: self.authorized(),
            orphaned: self.orphaned_at.is_some(),
        }
    }
}

/// A terminal's card figures over the attempts of a shift.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CardTotals {
    /// Approved by the terminal, whatever became of the approval after.
    pub authorized: Cents,
    /// Taken by sales.
    pub captured: Cents,
    /// Given back by returns.
    pub refunded: Cents,
    /// Approvals no sale took in time, voided since or not.
    pub orphans: i64,
    pub voids: i64,
    /// Answers still lost.
    pub unknowns: i64,
}

impl CardTotals {
    fn add(&mut self, attempt: &ReportedAttempt) -> Result<(), Overflow> {
        let count = |n: i64, counted: bool| n.checked_add(i64::from(counted)).ok_or(Overflow);
        let approved = matches!(
            attempt.state,
            PaymentState::Authorized
                | PaymentState::PartiallyAuthorized
                | PaymentState::Captured
                | PaymentState::Voided
                | PaymentState::Orphaned
        );
        match attempt.kind {
            AttemptKind::Payment => {
                if let Some(authorized) = attempt.authorized.filter(|_| approved) {
                    self.authorized = self.authorized.checked_add(authorized)?;
                    if attempt.state == PaymentState::Captured {
                        self.captured = self.captured.checked_add(authorized)?;
                    }
                }
            }
            AttemptKind::Refund => {
                if attempt.state == PaymentState::Refunded {
                    self.refunded = self.refunded.checked_add(attempt.amount)?;
                }
            }
        }
        self.orphans = count(self.orphans, attempt.orphaned)?;
        self.voids = count(self.voids, attempt.state == PaymentState::Voided)?;
        self.unknowns = count(self.unknowns, attempt.state == PaymentState::Unknown)?;
        Ok(())
    }
}

/// The card totals per terminal and provider, in their order. Every attempt names its key,
/// so a terminal that only declined shows with zeros.
pub fn card_totals(
    attempts: impl IntoIterator<Item = ReportedAttempt>,
) -> Result<BTreeMap<TerminalKey, CardTotals>, Overflow> {
    let mut totals: BTreeMap<TerminalKey, CardTotals> = BTreeMap::new();
    for attempt in attempts {
        totals.entry(attempt.key.clone()).or_default().add(&attempt)?;
    }
    Ok(totals)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::TenderReference;
    use proptest::prelude::*;

    fn cents(value: i64) -> Cents {
        Cents::new(value).unwrap()
    }

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(1_780_000_000 + second).unwrap()
    }

    fn session(id: &str) -> SessionId {
        SessionId::parse(id).unwrap()
    }

    fn sale(id: &str) -> TransactionId {
        TransactionId::parse(id).unwrap()
    }

    fn request(id: &str, session_id: &str, amount: i64) -> AttemptRequest {
        AttemptRequest {
            payment_id: PaymentId::parse(id).unwrap(),
            session_id: session(session_id),
            amount: cents(amount),
            terminal_id: Some(TerminalId::parse("tpe-1").unwrap()),
            provider: Some(Provider::parse("acquirer").unwrap()),
        }
    }

    fn requested(amount: i64) -> Attempt {
        Attempt::requested(request("pay-1", "ses_1", amount), at(0))
    }

    fn outcome(status: &str, authorized: Option<i64>) -> Outcome {
        Outcome::parse(&OutcomeInput {
            status,
            authorized_cents: authorized,
            ..OutcomeInput::default()
        })
        .unwrap()
    }

    fn changed(change: Change) -> Attempt {
        match change {
            Change::Changed(next) => *next,
            Change::Unchanged => panic!("expected a change"),
        }
    }

    /// An attempt brought to `state` the way the ledger brings it there.
    fn in_state(state: PaymentState) -> Attempt {
        let attempt = requested(1_000);
        let settle = |status, amount| changed(apply_outcome(&attempt, &outcome(status, amount), at(10)).unwrap());
        match state {
            PaymentState::Requested => attempt,
            PaymentState::Authorized => settle("authorized", Some(1_000)),
            PaymentState::PartiallyAuthorized => settle("partially_authorized", Some(600)),
            PaymentState::Declined => settle("declined", None),
            PaymentState::Cancelled => settle("cancelled", None),
            PaymentState::Unknown => settle("unknown", None),
            PaymentState::Captured => {
                let authorized = in_state(PaymentState::Authorized);
                changed(take(&authorized, "sale-1", "ses_1", 1_000, at(20)).unwrap())
            }
            PaymentState::Voided => changed(void(&in_state(PaymentState::Authorized), at(30)).unwrap()),
            PaymentState::Orphaned => {
                orphan(&in_state(PaymentState::Authorized), at(10_000), OrphanWindow::default()).unwrap()
            }
            PaymentState::Refunded => {
                let captured = in_state(PaymentState::Captured);
                refund(&captured, refund_request(400), at(40)).unwrap()
            }
        }
    }

    /// A sale's capture of `attempt` with a tender of `applied`.
    fn take(
        attempt: &Attempt,
        transaction: &str,
        session_id: &str,
        applied: i64,
        now: Timestamp,
    ) -> Result<Change, CaptureRefusal> {
        let (transaction_id, session_id) = (sale(transaction), session(session_id));
        let by = CaptureBy {
            transaction_id: &transaction_id,
            session_id: &session_id,
            applied: cents(applied),
        };
        capture(attempt, by, now)
    }

    /// `payment` as it stands once `cents` were refunded to it.
    fn gave_back(payment: &Attempt, cents: i64) -> Attempt {
        Attempt {
            refunded: Cents::new(cents).unwrap(),
            ..payment.clone()
        }
    }

    fn refund_request(amount: i64) -> RefundRequest {
        RefundRequest {
            id: PaymentId::parse("ref-1").unwrap(),
            transaction_id: sale("return-1"),
            original: sale("sale-1"),
            session_id: session("ses_2"),
            amount: cents(amount),
            terminal_id: Some(TerminalId::parse("tpe-2").unwrap()),
            provider: Some(Provider::parse("acquirer").unwrap()),
        }
    }

    // Card data

    #[test]
    fn card_numbers_are_found_however_they_are_spaced() {
        for card in [
            "4970101234567890",
            "4970 1012 3456 7890",
            "4970-1012-3456-7890",
            "4970 - 1012 - 3456 - 7890",
            "4970\u{a0}1012\u{a0}3456\u{a0}7890",
            "4970\u{2013}1012\u{2013}3456\u{2013}7890",
            "4970 1012\n3456 7890",
            "PAN:4970101234567890;",
            "497010123456",
            "4970101234567890123",
            "49701012345678901234567",
            "carte 3782 822463 10005 ok",
        ] {
            assert!(holds_card_number(card), "{card:?}");
        }
        for not_card in [
            "",
            "123456",
            "A1B2C3",
            "12345678901",
            "**** **** **** 7890",
            "############7890",
            "4970 10XX XXXX 7890",
            "12/05/2026 14:32:10",
            "2026-05-12",
            "AUTO 123456 TERM 12345678",
            "12345.678901",
            "1234567/8901234",
        ] {
            assert!(!holds_card_number(not_card), "{not_card:?}");
        }
    }

    #[test]
    fn every_text_field_refuses_empty_long_control_and_card_text() {
        type Parse = fn(&str) -> Result<(), FieldProblem>;
        let fields: [(Parse, usize); 7] = [
            (|t| TerminalId::parse(t).map(drop), TerminalId::MAX_CHARS),
            (|t| Provider::parse(t).map(drop), Provider::MAX_CHARS),
            (|t| AuthorizationCode::parse(t).map(drop), AuthorizationCode::MAX_CHARS),
            (|t| CardBrand::parse(t).map(drop), CardBrand::MAX_CHARS),
            (|t| EntryMode::parse(t).map(drop), EntryMode::MAX_CHARS),
            (
                |t| TerminalTransactionId::parse(t).map(drop),
                TerminalTransactionId::MAX_CHARS,
            ),
            (|t| TerminalReceipt::parse(t).map(drop), TerminalReceipt::MAX_CHARS),
        ];
        for (parse, max) in fields {
            assert_eq!(parse("ok é 123456"), Ok(()));
            assert_eq!(parse(&"é".repeat(max)), Ok(()));
            assert_eq!(parse(""), Err(FieldProblem::Empty));
            assert_eq!(parse(&"x".repeat(max + 1)), Err(FieldProblem::TooLong(max)));
            assert_eq!(parse("a\rb"), Err(FieldProblem::ControlCharacter));
            assert_eq!(parse("a\u{85}b"), Err(FieldProblem::ControlCharacter));
            assert_eq!(parse("4970 1012 3456 7890"), Err(FieldProblem::CardNumber));
        }
        assert_eq!(
            TerminalReceipt::parse("CB\nMONTANT 12,50 EUR").map(|r| r.to_string()),
            Ok("CB\nMONTANT 12,50 EUR".into())
        );
        assert_eq!(TerminalReceipt::parse("a\tb"), Err(FieldProblem::ControlCharacter));
        assert_eq!(TerminalId::parse("a\nb"), Err(FieldProblem::ControlCharacter));
    }

    #[test]
    fn last4_is_exactly_four_ascii_digits() {
        assert_eq!(Last4::parse("7890").unwrap().as_str(), "7890");
        assert_eq!(Last4::parse("0000").unwrap().as_str(), "0000");
        for refused in ["", "789", "78901", "78a0", " 789", "７８９０", "4970101234567890"] {
            assert_eq!(Last4::parse(refused), Err(FieldProblem::NotFourDigits), "{refused:?}");
        }
    }

    #[test]
    fn amounts_are_positive_safe_cents() {
        assert_eq!(parse_amount(1), Ok(cents(1)));
        assert_eq!(
            parse_amount(crate::money::MAX_SAFE_INTEGER),
            Ok(cents(crate::money::MAX_SAFE_INTEGER))
        );
        for refused in [0, -1, crate::money::MAX_SAFE_INTEGER + 1, i64::MIN] {
            assert_eq!(parse_amount(refused), Err(FieldProblem::NotAPositiveAmount));
        }
    }

    #[test]
    fn states_kinds_and_statuses_read_back_as_written() {
        for state in PaymentState::ALL {
            assert_eq!(PaymentState::parse(state.as_str()), Some(state));
        }
        for kind in AttemptKind::ALL {
            assert_eq!(AttemptKind::parse(kind.as_str()), Some(kind));
        }
        for status in OutcomeStatus::ALL {
            assert_eq!(OutcomeStatus::parse(status.as_str()), Some(status));
            assert_eq!(PaymentState::parse(status.as_str()), Some(status.state()));
        }
        assert_eq!(PaymentState::parse("Authorized"), None);
        assert_eq!(OutcomeStatus::parse("captured"), None);
        assert_eq!(AttemptKind::parse("sale"), None);
        let approving: Vec<_> = OutcomeStatus::ALL.into_iter().filter(|s| s.approves()).collect();
        assert_eq!(
            approving,
            [OutcomeStatus::Authorized, OutcomeStatus::PartiallyAuthorized]
        );
    }

    // Outcomes

    #[test]
    fn a_full_outcome_keeps_every_field() {
        let parsed = Outcome::parse(&OutcomeInput {
            status: "authorized",
            authorized_cents: Some(1_250),
            authorization_code: Some("123456"),
            card_brand: Some("CB"),
            last4: Some("7890"),
            entry_mode: Some("contactless"),
            terminal_transaction_id: Some("T-000042"),
            terminal_receipt: Some("CARTE BANCAIRE\n**** **** **** 7890\nLE 12/05/26 14:32"),
        })
        .unwrap();
        assert_eq!(parsed.status(), OutcomeStatus::Authorized);
        assert_eq!(parsed.authorized(), Some(cents(1_250)));
        assert_eq!(parsed.authorization_code().map(|c| c.as_str()), Some("123456"));
        assert_eq!(parsed.card_brand().map(|c| c.as_str()), Some("CB"));
        assert_eq!(parsed.last4().map(|c| c.as_str()), Some("7890"));
        assert_eq!(parsed.entry_mode().map(|c| c.as_str()), Some("contactless"));
        assert_eq!(parsed.terminal_transaction_id().map(|c| c.as_str()), Some("T-000042"));
        assert!(parsed.terminal_receipt().unwrap().as_str().ends_with("14:32"));
    }

    #[test]
    fn an_outcome_refusal_names_its_field() {
        let refused = |input: OutcomeInput<'_>| Outcome::parse(&input).unwrap_err();
        let authorized = OutcomeInput {
            status: "authorized",
            authorized_cents: Some(100),
            ..OutcomeInput::default()
        };
        assert_eq!(
            refused(OutcomeInput {
                status: "approved",
                ..authorized
            }),
            FieldRefusal {
                field: PaymentField::Status,
                problem: FieldProblem::NotAStatus
            }
        );
        assert_eq!(
            refused(OutcomeInput {
                authorized_cents: None,
                ..authorized
            }),
            FieldRefusal {
                field: PaymentField::AuthorizedCents,
                problem: FieldProblem::Required(OutcomeStatus::Authorized)
            }
        );
        assert_eq!(
            refused(OutcomeInput {
                status: "partially_authorized",
                authorized_cents: None,
                ..authorized
            }),
            FieldRefusal {
                field: PaymentField::AuthorizedCents,
                problem: FieldProblem::Required(OutcomeStatus::PartiallyAuthorized)
            }
        );
        assert_eq!(
            refused(OutcomeInput {
                authorized_cents: Some(0),
                ..authorized
            }),
            FieldRefusal {
                field: PaymentField::AuthorizedCents,
                problem: FieldProblem::NotAPositiveAmount
            }
        );
        for status in ["declined", "cancelled", "unknown"] {
            let parsed = OutcomeStatus::parse(status).unwrap();
            assert_eq!(
                refused(OutcomeInput { status, ..authorized }),
                FieldRefusal {
                    field: PaymentField::AuthorizedCents,
                    problem: FieldProblem::NotAllowed(parsed)
                }
            );
            assert_eq!(
                refused(OutcomeInput {
                    status,
                    authorized_cents: None,
                    authorization_code: Some("123456"),
                    ..authorized
                }),
                FieldRefusal {
                    field: PaymentField::AuthorizationCode,
                    problem: FieldProblem::NotAllowed(parsed)
                }
            );
            let read = Outcome::parse(&OutcomeInput {
                status,
                last4: Some("7890"),
                card_brand: Some("VISA"),
                terminal_receipt: Some("REFUSE"),
                ..OutcomeInput::default()
            })
            .unwrap();
            assert_eq!((read.status(), read.authorized()), (parsed, None));
        }
        assert_eq!(
            refused(OutcomeInput {
                last4: Some("789"),
                ..authorized
            }),
            FieldRefusal {
                field: PaymentField::Last4,
                problem: FieldProblem::NotFourDigits
            }
        );
        let card = "4970-1012-3456-7890";
        let with_card: [(PaymentField, OutcomeInput<'_>); 7] = [
            (
                PaymentField::AuthorizationCode,
                OutcomeInput {
                    authorization_code: Some(card),
                    ..authorized
                },
            ),
            (
                PaymentField::CardBrand,
                OutcomeInput {
                    card_brand: Some(card),
                    ..authorized
                },
            ),
            (
                PaymentField::Last4,
                OutcomeInput {
                    last4: Some(card),
                    ..authorized
                },
            ),
            (
                PaymentField::EntryMode,
                OutcomeInput {
                    entry_mode: Some(card),
                    ..authorized
                },
            ),
            (
                PaymentField::TerminalTransactionId,
                OutcomeInput {
                    terminal_transaction_id: Some(card),
                    ..authorized
                },
            ),
            (
                PaymentField::TerminalReceipt,
                OutcomeInput {
                    terminal_receipt: Some(card),
                    ..authorized
                },
            ),
            // Card data is refused before the status's own rules are looked at.
            (
                PaymentField::TerminalReceipt,
                OutcomeInput {
                    status: "declined",
                    terminal_receipt: Some(card),
                    ..authorized
                },
            ),
        ];
        for (field, input) in with_card {
            let refusal = refused(input);
            assert_eq!(refusal.field, field);
            assert!(!refusal.to_string().contains("7890"), "{refusal}");
            assert!(refusal.to_string().starts_with(field.as_str()), "{refusal}");
        }
    }

    // Outcome on an attempt

    #[test]
    fn a_requested_attempt_takes_the_outcomes_state() {
        for (status, amount, state) in [
            ("authorized", Some(1_000), PaymentState::Authorized),
            ("partially_authorized", Some(999), PaymentState::PartiallyAuthorized),
            ("partially_authorized", Some(1), PaymentState::PartiallyAuthorized),
            ("declined", None, PaymentState::Declined),
            ("cancelled", None, PaymentState::Cancelled),
            ("unknown", None, PaymentState::Unknown),
        ] {
            let said = outcome(status, amount);
            let next = changed(apply_outcome(&requested(1_000), &said, at(5)).unwrap());
            assert_eq!(next.state, state);
            assert_eq!(next.outcome.as_ref(), Some(&said));
            assert_eq!(next.authorized(), amount.map(cents));
            assert_eq!(next.authorized_at, state.is_approved().then_some(at(5)));
        }
    }

    #[test]
    fn an_approval_must_match_the_amount_requested() {
        let attempt = requested(1_000);
        let requested = cents(1_000);
        let cases = [
            ("authorized", 999, OutcomeRefusal::NotTheRequestedAmount { requested }),
            ("authorized", 1_001, OutcomeRefusal::NotTheRequestedAmount { requested }),
            (
                "partially_authorized",
                1_000,
                OutcomeRefusal::NotLessThanRequested { requested },
            ),
            (
                "partially_authorized",
                1_001,
                OutcomeRefusal::NotLessThanRequested { requested },
            ),
        ];
        for (status, wrong, expected) in cases {
            let refusal = apply_outcome(&attempt, &outcome(status, Some(wrong)), at(5)).unwrap_err();
            assert_eq!(refusal, expected, "{status} {wrong}");
            assert_eq!(refusal.field(), Some(PaymentField::AuthorizedCents));
        }
    }

    #[test]
    fn a_settled_attempt_takes_its_own_outcome_again_and_no_other() {
        let outcomes = [
            outcome("authorized", Some(1_000)),
            outcome("partially_authorized", Some(600)),
            outcome("declined", None),
            outcome("cancelled", None),
        ];
        for first in &outcomes {
            let settled = changed(apply_outcome(&requested(1_000), first, at(5)).unwrap());
            assert_eq!(apply_outcome(&settled, first, at(6)), Ok(Change::Unchanged));
            for other in outcomes
                .iter()
                .chain([&outcome("unknown", None)])
                .filter(|o| *o != first)
            {
                assert_eq!(
                    apply_outcome(&settled, other, at(6)),
                    Err(OutcomeRefusal::Conflict { state: settled.state })
                );
            }
        }
        // Another approval code is another outcome.
        let coded = |code| {
            Outcome::parse(&OutcomeInput {
                status: "authorized",
                authorized_cents: Some(1_000),
                authorization_code: Some(code),
                ..OutcomeInput::default()
            })
            .unwrap()
        };
        let settled = changed(apply_outcome(&requested(1_000), &coded("111111"), at(5)).unwrap());
        assert_eq!(
            apply_outcome(&settled, &coded("222222"), at(6)),
            Err(OutcomeRefusal::Conflict {
                state: PaymentState::Authorized
            })
        );
    }

    #[test]
    fn a_lost_answer_waits_for_the_real_one() {
        let unknown = in_state(PaymentState::Unknown);
        assert_eq!(
            apply_outcome(&unknown, &outcome("unknown", None), at(11)),
            Ok(Change::Unchanged)
        );
        let settled = changed(apply_outcome(&unknown, &outcome("authorized", Some(1_000)), at(50)).unwrap());
        assert_eq!(settled.state, PaymentState::Authorized);
        assert_eq!(
            settled.authorized_at,
            Some(at(50)),
            "the orphan window runs from the settling answer"
        );
        let declined = changed(apply_outcome(&unknown, &outcome("declined", None), at(50)).unwrap());
        assert_eq!(declined.state, PaymentState::Declined);
        assert_eq!(
            apply_outcome(&unknown, &outcome("authorized", Some(5)), at(50)),
            Err(OutcomeRefusal::NotTheRequestedAmount {
                requested: cents(1_000)
            })
        );
        let more = Outcome::parse(&OutcomeInput {
            status: "unknown",
            terminal_transaction_id: Some("T-9"),
            ..OutcomeInput::default()
        })
        .unwrap();
        assert_eq!(
            changed(apply_outcome(&unknown, &more, at(12)).unwrap()).outcome,
            Some(more)
        );
    }

    #[test]
    fn after_the_approval_only_its_own_outcome_is_a_retry() {
        let approval = outcome("authorized", Some(1_000));
        for state in [PaymentState::Captured, PaymentState::Voided, PaymentState::Orphaned] {
            let attempt = in_state(state);
            assert_eq!(
                apply_outcome(&attempt, &approval, at(99)),
                Ok(Change::Unchanged),
                "{state}"
            );
            assert_eq!(
                apply_outcome(&attempt, &outcome("declined", None), at(99)),
                Err(OutcomeRefusal::Conflict { state })
            );
        }
        let refund = in_state(PaymentState::Refunded);
        assert_eq!(
            apply_outcome(&refund, &approval, at(99)),
            Err(OutcomeRefusal::NotAPayment)
        );
        assert_eq!(OutcomeRefusal::NotAPayment.field(), None);
    }

    // Capture

    #[test]
    fn a_sale_captures_an_approval_of_its_session_for_its_amount_once() {
        let authorized = in_state(PaymentState::Authorized);
        let captured = changed(take(&authorized, "sale-1", "ses_1", 1_000, at(20)).unwrap());
        assert_eq!(captured.state, PaymentState::Captured);
        assert_eq!(captured.captured_by, Some(sale("sale-1")));
        assert_eq!(captured.captured_at, Some(at(20)));
        assert_eq!(take(&captured, "sale-1", "ses_1", 1_000, at(21)), Ok(Change::Unchanged));
        assert_eq!(
            take(&captured, "sale-2", "ses_1", 1_000, at(21)),
            Err(CaptureRefusal::AlreadyCaptured)
        );
        let partial = in_state(PaymentState::PartiallyAuthorized);
        let taken = changed(take(&partial, "sale-1", "ses_1", 600, at(20)).unwrap());
        assert_eq!(
            (taken.state, taken.authorized()),
            (PaymentState::Captured, Some(cents(600)))
        );
    }

    #[test]
    fn a_capture_is_refused_for_each_reason_apart() {
        let authorized = in_state(PaymentState::Authorized);
        assert_eq!(
            take(&authorized, "sale-1", "ses_2", 1_000, at(20)),
            Err(CaptureRefusal::OtherSession)
        );
        assert_eq!(
            take(&authorized, "sale-1", "ses_1", 999, at(20)),
            Err(CaptureRefusal::OtherAmount {
                authorized: cents(1_000)
            })
        );
        assert_eq!(
            take(
                &in_state(PaymentState::PartiallyAuthorized),
                "sale-1",
                "ses_1",
                1_000,
                at(20)
            ),
            Err(CaptureRefusal::OtherAmount { authorized: cents(600) })
        );
        for state in [
            PaymentState::Requested,
            PaymentState::Declined,
            PaymentState::Cancelled,
            PaymentState::Unknown,
            PaymentState::Voided,
            PaymentState::Orphaned,
        ] {
            assert_eq!(
                take(&in_state(state), "sale-1", "ses_1", 1_000, at(20_000)),
                Err(CaptureRefusal::NotAuthorized { state })
            );
        }
        assert_eq!(
            take(&in_state(PaymentState::Refunded), "sale-1", "ses_2", 400, at(50)),
            Err(CaptureRefusal::NotAPayment)
        );
        assert_eq!(tender_field(3), "tenders.tenders.3");
    }

    fn tender(method: TenderMethod, reference: Option<&str>) -> Tender {
        Tender {
            id: "t".into(),
            method,
            applied: cents(100),
            presented: cents(100),
            change: Cents::ZERO,
            forfeited: Cents::ZERO,
            reference: reference.map(|r| TenderReference::parse(r).unwrap()),
        }
    }

    #[test]
    fn a_sales_card_tenders_name_each_attempt_once() {
        let tenders = [
            tender(TenderMethod::Cash, None),
            tender(TenderMethod::Card, Some("pay-1")),
            tender(TenderMethod::GiftCard, Some("pay-2")),
            tender(TenderMethod::Card, None),
            tender(TenderMethod::Card, Some("pay-2")),
        ];
        assert_eq!(
            card_references(&tenders, false),
            Ok(vec![
                (1, PaymentId::parse("pay-1").unwrap()),
                (4, PaymentId::parse("pay-2").unwrap())
            ])
        );
        assert_eq!(
            card_references(&tenders, true),
            Err((3, CaptureRefusal::ReferenceRequired))
        );
        let twice = [
            tender(TenderMethod::Card, Some("pay-1")),
            tender(TenderMethod::Card, Some("pay-1")),
        ];
        assert_eq!(card_references(&twice, false), Err((1, CaptureRefusal::NamedTwice)));
    }

    // Void

    #[test]
    fn an_approval_or_an_orphan_is_voided_and_nothing_else() {
        for state in [
            PaymentState::Authorized,
            PaymentState::PartiallyAuthorized,
            PaymentState::Orphaned,
        ] {
            let before = in_state(state);
            let voided = changed(void(&before, at(20_000)).unwrap());
            assert_eq!(
                (voided.state, voided.voided_at),
                (PaymentState::Voided, Some(at(20_000)))
            );
            assert_eq!(voided.orphaned_at, before.orphaned_at, "an orphan voided stays counted");
            assert_eq!(void(&voided, at(20_001)), Ok(Change::Unchanged));
        }
        for state in [
            PaymentState::Requested,
            PaymentState::Declined,
            PaymentState::Cancelled,
            PaymentState::Unknown,
            PaymentState::Captured,
        ] {
            assert_eq!(void(&in_state(state), at(50)), Err(VoidRefusal::NotVoidable { state }));
        }
        assert_eq!(
            void(&in_state(PaymentState::Refunded), at(50)),
            Err(VoidRefusal::NotAPayment)
        );
    }

    // Orphans

    #[test]
    fn the_orphan_window_is_bounded_and_checked_often_enough() {
        assert_eq!(OrphanWindow::from_seconds(0), None);
        assert_eq!(OrphanWindow::from_seconds(-1), None);
        assert_eq!(OrphanWindow::from_seconds(OrphanWindow::MAX_SECONDS + 1), None);
        assert_eq!(OrphanWindow::default(), OrphanWindow::from_seconds(900).unwrap());
        assert_eq!(OrphanWindow::default().check_interval(), SignedDuration::from_secs(60));
        assert_eq!(
            OrphanWindow::from_seconds(20).unwrap().check_interval(),
            SignedDuration::from_secs(20)
        );
        let window = OrphanWindow::from_seconds(OrphanWindow::MAX_SECONDS).unwrap();
        assert_eq!(window.cutoff(Timestamp::MIN), Timestamp::MIN);
    }

    #[test]
    fn an_approval_no_sale_took_is_an_orphan_once_the_window_is_over() {
        let window = OrphanWindow::from_seconds(900).unwrap();
        for state in [PaymentState::Authorized, PaymentState::PartiallyAuthorized] {
            let approved = in_state(state);
            let authorized_at = approved.authorized_at.unwrap();
            let edge = authorized_at.checked_add(window.duration()).unwrap();
            assert!(!orphan_due(&approved, edge, window), "not before the window is over");
            assert_eq!(orphan(&approved, edge, window), None);
            let late = edge.checked_add(SignedDuration::from_secs(1)).unwrap();
            assert!(orphan_due(&approved, late, window));
            let orphaned = orphan(&approved, late, window).unwrap();
            assert_eq!(
                (orphaned.state, orphaned.orphaned_at),
                (PaymentState::Orphaned, Some(late))
            );
        }
        for state in [
            PaymentState::Requested,
            PaymentState::Declined,
            PaymentState::Cancelled,
            PaymentState::Unknown,
            PaymentState::Captured,
            PaymentState::Voided,
            PaymentState::Orphaned,
            PaymentState::Refunded,
        ] {
            assert!(!orphan_due(&in_state(state), at(1_000_000), window), "{state}");
        }
    }

    // Refunds

    #[test]
    fn a_refund_stays_within_what_the_payment_captured() {
        let captured = in_state(PaymentState::Captured);
        assert_eq!(refund_room(cents(1_000), cents(400)), Ok(cents(600)));
        assert_eq!(
            refund_room(cents(crate::money::MAX_SAFE_INTEGER), cents(-1)),
            Err(Overflow)
        );
        assert_eq!(check_refund(&captured, cents(1_000)), Ok(Cents::ZERO));
        assert_eq!(check_refund(&gave_back(&captured, 400), cents(250)), Ok(cents(350)));
        assert_eq!(
            check_refund(&gave_back(&captured, 400), cents(601)),
            Err(RefundRefusal::OverRoom { room: cents(600) })
        );
        assert_eq!(
            check_refund(&gave_back(&captured, 1_000), cents(1)),
            Err(RefundRefusal::OverRoom { room: Cents::ZERO })
        );
        assert_eq!(check_refund(&captured, Cents::ZERO), Err(RefundRefusal::NotPositive));
        assert_eq!(check_refund(&captured, cents(-5)), Err(RefundRefusal::NotPositive));
        assert_eq!(
            check_refund(&gave_back(&captured, -crate::money::MAX_SAFE_INTEGER), cents(1)),
            Err(RefundRefusal::Overflow)
        );
        for state in [
            PaymentState::Requested,
            PaymentState::Authorized,
            PaymentState::PartiallyAuthorized,
            PaymentState::Declined,
            PaymentState::Unknown,
            PaymentState::Voided,
            PaymentState::Orphaned,
        ] {
            assert_eq!(
                check_refund(&in_state(state), cents(1)),
                Err(RefundRefusal::NotCaptured { state })
            );
        }
        assert_eq!(
            check_refund(&in_state(PaymentState::Refunded), cents(1)),
            Err(RefundRefusal::NotAPayment)
        );
    }

    #[test]
    fn a_return_records_its_refund_as_an_attempt() {
        let captured = in_state(PaymentState::Captured);
        let made = refund(&gave_back(&captured, 100), refund_request(900), at(40)).unwrap();
        assert_eq!(
            (made.kind, made.state, made.amount),
            (AttemptKind::Refund, PaymentState::Refunded, cents(900))
        );
        assert_eq!(made.refund_of, Some(captured.id.clone()));
        assert_eq!(made.captured_by, Some(sale("return-1")));
        assert_eq!(made.outcome, None);
        assert_eq!(
            refund(&gave_back(&captured, 100), refund_request(901), at(40)),
            Err(RefundRefusal::OverRoom { room: cents(900) })
        );
        let elsewhere = RefundRequest {
            original: sale("sale-9"),
            ..refund_request(100)
        };
        assert_eq!(refund(&captured, elsewhere, at(40)), Err(RefundRefusal::OtherSale));
    }

    #[test]
    fn a_repeated_request_is_told_from_another_under_the_same_id() {
        let attempt = Attempt::requested(request("pay-1", "ses_1", 1_000), at(0));
        assert!(attempt.was_requested_by(&request("pay-1", "ses_1", 1_000)));
        assert!(!attempt.was_requested_by(&request("pay-1", "ses_1", 1_001)));
        assert!(!attempt.was_requested_by(&request("pay-1", "ses_2", 1_000)));
        let elsewhere = AttemptRequest {
            terminal_id: None,
            ..request("pay-1", "ses_1", 1_000)
        };
        assert!(!attempt.was_requested_by(&elsewhere));
        assert_eq!(
            (attempt.state, attempt.kind),
            (PaymentState::Requested, AttemptKind::Payment)
        );
    }

    // Card totals

    #[test]
    fn card_totals_add_up_per_terminal_and_provider_in_order() {
        let on = |mut attempt: Attempt, terminal: Option<&str>| {
            attempt.terminal_id = terminal.map(|t| TerminalId::parse(t).unwrap());
            attempt
        };
        let voided_orphan = changed(void(&in_state(PaymentState::Orphaned), at(20_000)).unwrap());
        let attempts = [
            on(in_state(PaymentState::Captured), Some("b")),
            on(in_state(PaymentState::Captured), Some("b")),
            on(in_state(PaymentState::Authorized), Some("b")),
            on(in_state(PaymentState::PartiallyAuthorized), Some("b")),
            on(in_state(PaymentState::Refunded), Some("b")),
            on(in_state(PaymentState::Declined), Some("a")),
            on(in_state(PaymentState::Unknown), Some("a")),
            on(in_state(PaymentState::Voided), Some("a")),
            on(voided_orphan, Some("a")),
            on(in_state(PaymentState::Orphaned), None),
        ];
        let totals = card_totals(attempts.iter().map(Attempt::reported)).unwrap();
        let keys: Vec<_> = totals
            .keys()
            .map(|k| k.terminal_id.as_ref().map(TerminalId::as_str))
            .collect();
        assert_eq!(keys, [None, Some("a"), Some("b")]);
        let of = |terminal: Option<&str>| {
            totals[&TerminalKey {
                terminal_id: terminal.map(|t| TerminalId::parse(t).unwrap()),
                provider: Some(Provider::parse("acquirer").unwrap()),
            }]
        };
        assert_eq!(
            of(Some("b")),
            CardTotals {
                authorized: cents(3_600),
                captured: cents(2_000),
                refunded: cents(400),
                ..CardTotals::default()
            }
        );
        assert_eq!(
            of(Some("a")),
            CardTotals {
                authorized: cents(2_000),
                orphans: 1,
                voids: 2,
                unknowns: 1,
                ..CardTotals::default()
            }
        );
        assert_eq!(
            of(None),
            CardTotals {
                authorized: cents(1_000),
                orphans: 1,
                ..CardTotals::default()
            }
        );
        let mut huge = in_state(PaymentState::Refunded);
        huge.amount = cents(crate::money::MAX_SAFE_INTEGER);
        assert_eq!(card_totals([huge.reported(), huge.reported()]), Err(Overflow));
    }

    // Properties

    /// The detector's rule written another way: drop every joining character, then look for
    /// twelve digits in a row.
    fn has_twelve_digits_once_joined(text: &str) -> bool {
        let kept: String = text.chars().filter(|c| !joins_digits(*c)).collect();
        kept.split(|c: char| !c.is_ascii_digit())
            .any(|run| run.len() >= CARD_NUMBER_MIN_DIGITS)
    }

    fn joiner() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![Just(' '), Just('-'), Just('\u{a0}'), Just('\u{2013}'), Just('\n')],
            0..3,
        )
        .prop_map(|chars| chars.into_iter().collect())
    }

    #[derive(Clone, Debug)]
    enum Op {
        Outcome {
            attempt: usize,
            status: OutcomeStatus,
            amount: usize,
            code: bool,
        },
        Capture {
            attempt: usize,
            sale: usize,
            same_session: bool,
            exact: bool,
        },
        Void {
            attempt: usize,
        },
        Wait {
            seconds: i64,
        },
        Sweep,
        Refund {
            attempt: usize,
            amount: i64,
            original: bool,
        },
    }

    /// Operations weighted toward the ones that move money, so most runs capture and refund.
    fn op() -> impl Strategy<Value = Op> {
        let status = prop_oneof![
            4 => Just(OutcomeStatus::Authorized),
            2 => Just(OutcomeStatus::PartiallyAuthorized),
            1 => Just(OutcomeStatus::Declined),
            1 => Just(OutcomeStatus::Cancelled),
            1 => Just(OutcomeStatus::Unknown),
        ];
        let amount = prop_oneof![3 => Just(0usize), 1 => 1..4usize];
        let likely = || proptest::bool::weighted(0.8);
        prop_oneof![
            3 => (0..3usize, status, amount, proptest::bool::weighted(0.2))
                .prop_map(|(attempt, status, amount, code)| Op::Outcome { attempt, status, amount, code }),
            3 => (0..3usize, 0..3usize, likely(), likely()).prop_map(|(attempt, sale, same_session, exact)| Op::Capture {
                attempt,
                sale,
                same_session,
                exact
            }),
            1 => (0..3usize).prop_map(|attempt| Op::Void { attempt }),
            1 => (1..1_200i64).prop_map(|seconds| Op::Wait { seconds }),
            1 => Just(Op::Sweep),
            3 => (0..3usize, 1..1_500i64, likely())
                .prop_map(|(attempt, amount, original)| Op::Refund { attempt, amount, original }),
        ]
    }

    fn may_follow(from: PaymentState, to: PaymentState) -> bool {
        use PaymentState::*;
        match from {
            Requested | Unknown => matches!(to, Authorized | PartiallyAuthorized | Declined | Cancelled | Unknown),
            Authorized | PartiallyAuthorized => matches!(to, Captured | Orphaned | Voided),
            Orphaned => to == Voided,
            Declined | Cancelled | Captured | Voided | Refunded => false,
        }
    }

    proptest! {
        #[test]
        fn the_detector_reads_digits_joined_by_spaces_and_dashes_as_one_run(
            text in proptest::collection::vec(
                prop_oneof![
                    4 => proptest::char::range('0', '9'),
                    1 => Just(' '), 1 => Just('-'), 1 => Just('\n'), 1 => Just('\u{2014}'),
                    1 => Just('/'), 1 => Just(':'), 1 => Just('.'), 1 => Just('a'), 1 => Just('é'),
                ],
                0..40,
            ).prop_map(|chars| chars.into_iter().collect::<String>())
        ) {
            prop_assert_eq!(holds_card_number(&text), has_twelve_digits_once_joined(&text));
        }

        #[test]
        fn every_card_number_is_refused_however_written(
            digits in proptest::collection::vec(proptest::char::range('0', '9'), 12..=19),
            joins in proptest::collection::vec(joiner(), 19),
            before in "[A-Za-z:]{0,6}",
            after in "[A-Za-z ]{0,6}",
        ) {
            let mut text = before.clone();
            for (digit, join) in digits.iter().zip(&joins) {
                text.push(*digit);
                text.push_str(join);
            }
            text.push_str(&after);
            prop_assert!(holds_card_number(&text));
            prop_assert_eq!(TerminalReceipt::parse(&text), Err(FieldProblem::CardNumber));
            let refusal = Outcome::parse(&OutcomeInput {
                status: "declined",
                terminal_receipt: Some(&text),
                ..OutcomeInput::default()
            }).unwrap_err();
            prop_assert_eq!(refusal, FieldRefusal { field: PaymentField::TerminalReceipt, problem: FieldProblem::CardNumber });
        }

        #[test]
        fn shorter_digit_runs_pass(
            runs in proptest::collection::vec(("[0-9]{1,11}", joiner(), prop_oneof![Just("/"), Just(":"), Just("."), Just("x"), Just("EUR")]), 0..12),
        ) {
            let text: String = runs.iter().map(|(run, join, stop)| format!("{run}{join}{stop}{join}")).collect();
            prop_assert!(!holds_card_number(&text));
            if !text.is_empty() {
                prop_assert!(TerminalReceipt::parse(&text).is_ok(), "{:?}", text);
            }
        }

        /// Whatever outcomes, captures, voids, waits, sweeps and refunds come, in any order: an
        /// attempt is captured once at most, a captured attempt names the one sale that took it
        /// for exactly its approval, a settled outcome never changes, states follow the
        /// machine's edges, refunds never exceed what was captured, and the card totals agree.
        #[test]
        fn the_ledger_never_captures_twice_nor_refunds_more_than_it_took(ops in proptest::collection::vec(op(), 0..40)) {
            let window = OrphanWindow::from_seconds(900).unwrap();
            let sessions = ["ses_a", "ses_a", "ses_b"];
            let amounts = [1_000, 2_500, 700];
            let mut attempts: Vec<Attempt> = (0..3)
                .map(|i| Attempt::requested(request(&format!("pay-{i}"), sessions[i], amounts[i]), at(0)))
                .collect();
            let mut captures = [0u32; 3];
            let mut taken: Vec<(TransactionId, SessionId, usize, Cents)> = Vec::new();
            let mut refunded = [Cents::ZERO; 3];
            let mut refunds: Vec<Attempt> = Vec::new();
            let mut now = at(0);
            for (step, op) in ops.into_iter().enumerate() {
                let before = attempts.clone();
                match op {
                    Op::Outcome { attempt, status, amount, code } => {
                        let requested = amounts[attempt];
                        let approved = [requested, requested - 1, requested / 2, requested + 1][amount];
                        let said = Outcome::parse(&OutcomeInput {
                            status: status.as_str(),
                            authorized_cents: status.approves().then_some(approved),
                            authorization_code: (status.approves() && code).then_some("A1B2C3"),
                            ..OutcomeInput::default()
                        }).unwrap();
                        if let Ok(Change::Changed(next)) = apply_outcome(&attempts[attempt], &said, now) {
                            attempts[attempt] = *next;
                        }
                    }
                    Op::Capture { attempt, sale: which, same_session, exact } => {
                        let transaction = sale(&format!("sale-{which}"));
                        let own = attempts[attempt].session_id.clone();
                        let session_id = if same_session { own } else { session("ses_z") };
                        let applied = attempts[attempt].authorized().unwrap_or(cents(amounts[attempt]));
                        let applied = if exact { applied } else { applied.checked_add(cents(1)).unwrap() };
                        let by = CaptureBy { transaction_id: &transaction, session_id: &session_id, applied };
                        if let Ok(Change::Changed(next)) = capture(&attempts[attempt], by, now) {
                            prop_assert_eq!(next.state, PaymentState::Captured);
                            captures[attempt] += 1;
                            taken.push((transaction.clone(), session_id.clone(), attempt, applied));
                            attempts[attempt] = *next;
                        }
                    }
                    Op::Void { attempt } => {
                        if let Ok(Change::Changed(next)) = void(&attempts[attempt], now) {
                            attempts[attempt] = *next;
                        }
                    }
                    Op::Wait { seconds } => now = now.checked_add(SignedDuration::from_secs(seconds)).unwrap(),
                    Op::Sweep => {
                        for attempt in attempts.iter_mut() {
                            if let Some(next) = orphan(attempt, now, window) {
                                *attempt = next;
                            }
                        }
                    }
                    Op::Refund { attempt, amount, original } => {
                        let payment = &attempts[attempt];
                        let original = match (&payment.captured_by, original) {
                            (Some(by), true) => by.clone(),
                            _ => sale("sale-other"),
                        };
                        let asked = RefundRequest {
                            id: PaymentId::parse(&format!("ref-{step}")).unwrap(),
                            transaction_id: sale(&format!("return-{step}")),
                            original,
                            session_id: session("ses_c"),
                            amount: cents(amount),
                            terminal_id: payment.terminal_id.clone(),
                            provider: payment.provider.clone(),
                        };
                        let payment = Attempt { refunded: refunded[attempt], ..payment.clone() };
                        if let Ok(made) = refund(&payment, asked, now) {
                            refunded[attempt] = refunded[attempt].checked_add(made.amount).unwrap();
                            refunds.push(made);
                        }
                    }
                }
                for (i, (old, new)) in before.iter().zip(&attempts).enumerate() {
                    if old.state != new.state {
                        prop_assert!(may_follow(old.state, new.state), "{} -> {}", old.state, new.state);
                    }
                    if !old.state.is_open() {
                        prop_assert_eq!(&old.outcome, &new.outcome, "a settled outcome changed");
                    }
                    if old.captured_by.is_some() {
                        prop_assert_eq!(&old.captured_by, &new.captured_by);
                    }
                    prop_assert!(captures[i] <= 1, "attempt {} captured {} times", i, captures[i]);
                    if new.state == PaymentState::Captured {
                        let by = new.captured_by.clone();
                        prop_assert!(by.is_some(), "captured without a sale");
                        let took: Vec<_> = taken.iter().filter(|(_, _, a, _)| *a == i).collect();
                        prop_assert_eq!(took.len(), 1);
                        prop_assert_eq!(Some(&took[0].0), by.as_ref());
                        prop_assert_eq!(&took[0].1, &new.session_id);
                        prop_assert_eq!(Some(took[0].3), new.authorized());
                    } else {
                        prop_assert_eq!(captures[i], 0);
                        prop_assert_eq!(&new.captured_by, &None);
                    }
                    let captured = if new.state == PaymentState::Captured { new.authorized().unwrap() } else { Cents::ZERO };
                    prop_assert!(refunded[i] <= captured, "refunded {} of {}", refunded[i], captured);
                }
            }
            let totals = card_totals(attempts.iter().chain(&refunds).map(Attempt::reported)).unwrap();
            let sum = |f: fn(&CardTotals) -> Cents| totals.values().map(f).sum::<Option<Cents>>().unwrap();
            let captured: Vec<Cents> = attempts.iter().filter(|a| a.state == PaymentState::Captured).filter_map(Attempt::authorized).collect();
            prop_assert_eq!(sum(|t| t.captured), captured.into_iter().sum::<Option<Cents>>().unwrap());
            prop_assert_eq!(sum(|t| t.refunded), refunded.into_iter().sum::<Option<Cents>>().unwrap());
            prop_assert!(sum(|t| t.refunded) <= sum(|t| t.captured));
            prop_assert!(sum(|t| t.captured) <= sum(|t| t.authorized));
        }
    }
}
