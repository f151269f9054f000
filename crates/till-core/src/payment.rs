//! Card payments: the payment-attempt ledger. The till records an attempt before it asks the
//! card terminal, then what the terminal said; a sale captures an approved attempt in its own
//! transaction, one sale per attempt. So no card is charged for a sale that was not recorded,
//! and no sale is recorded for a charge that failed: an approval no sale took becomes an orphan
//! to give back, a lost answer (`unknown`) waits to be settled.
//!
//! Card data never reaches till beyond the last four digits: every text an attempt or an
//! outcome carries is refused when it holds a run of twelve digits or more, however spaced.
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

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
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
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(String);

        impl $name {
            /// Longest value, in characters.
            pub const MAX_CHARS: usize = $max;

            pub fn parse(text: &str) -> Result<Self, FieldProblem> {
                check_payment_text(text, $max, $lines)?;
                Ok(Self(text.to_owned()))
            }

            /// For values read back from storage, which were parsed when written.
            pub fn from_trusted(value: String) -> Self {
                Self(value)
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
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

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
// Outcome

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

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
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
    #[error("at most {room} cents are left to refund to this payment")]
    OverRoom { room: Cents },
    #[error("amounts exceed the largest representable value")]
    Overflow,
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

/// Checks a refund of `amount` against a payment that already gave `refunded` back: the payment
/// must be captured, and the refund positive and within the room left. Answers the room left
/// after it.
pub fn check_refund(payment: &Attempt, refunded: Cents, amount: Cents) -> Result<Cents, RefundRefusal> {
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
    let room = refund_room(captured, refunded).map_err(|_| RefundRefusal::Overflow)?;
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
pub fn refund(
    payment: &Attempt,
    refunded: Cents,
    request: RefundRequest,
    now: Timestamp,
) -> Result<Attempt, RefundRefusal> {
    check_refund(payment, refunded, request.amount)?;
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
    })
}

// ---------------------------------------------------------------------------------------------
// Card totals of the X and Z reports

/// A terminal and its provider, as the reports group card payments.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TerminalKey {
    pub terminal_id: Option<TerminalId>,
    pub provider: Option<Provider>,
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
    pub orphans: u64,
    pub voids: u64,
    /// Answers still lost.
    pub unknowns: u64,
}

impl CardTotals {
    fn add(&mut self, attempt: &Attempt) -> Result<(), Overflow> {
        let count = |n: u64, counted: bool| n.checked_add(u64::from(counted)).ok_or(Overflow);
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
                if let Some(authorized) = attempt.authorized().filter(|_| approved) {
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
        self.orphans = count(self.orphans, attempt.orphaned_at.is_some())?;
        self.voids = count(self.voids, attempt.state == PaymentState::Voided)?;
        self.unknowns = count(self.unknowns, attempt.state == PaymentState::Unknown)?;
        Ok(())
    }
}

/// The card totals per terminal and provider, in their order. Every attempt names its key,
/// so a terminal that only declined shows with zeros.
pub fn card_totals<'a>(
    attempts: impl IntoIterator<Item = &'a Attempt>,
) -> Result<BTreeMap<TerminalKey, CardTotals>, Overflow> {
    let mut totals: BTreeMap<TerminalKey, CardTotals> = BTreeMap::new();
    for attempt in attempts {
        let key = TerminalKey {
            terminal_id: attempt.terminal_id.clone(),
            provider: attempt.provider.clone(),
        };
        totals.entry(key).or_default().add(attempt)?;
    }
    Ok(totals)
}
