//! Stored value: money held for a customer (gift cards, credit notes) and loyalty points. A
//! balance only moves inside a sale's or a return's transaction, never below zero, and every
//! move is an activity of its ledger. This module holds the arithmetic: what a ticket's tenders
//! and gift-card lines take from or give to which instrument, and how much of a refund goes
//! back to stored value.

use crate::ids::{CustomerId, TenderReference};
use crate::money::{Cents, checked_sum};
use crate::returns::prorate;
use crate::sale::{Tender, TenderMethod};
use jiff::Timestamp;

/// A gift card code's symbols: digits and capitals without the ones read alike (0/O, 1/I/L).
pub const CODE_ALPHABET: &[u8] = b"23456789ABCDEFGHJKMNPQRSTUVWXYZ";

/// Symbols in a generated gift card code: 31^16 codes, about 79 bits.
pub const CODE_LENGTH: usize = 16;

/// Kinds of instrument holding money.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstrumentKind {
    GiftCard,
    CreditNote,
}

impl InstrumentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            InstrumentKind::GiftCard => "gift_card",
            InstrumentKind::CreditNote => "credit_note",
        }
    }
}

/// An instrument's state at an instant, computed from what is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstrumentState {
    Active,
    Exhausted,
    Expired,
    Blocked,
}

impl InstrumentState {
    pub const ALL: [InstrumentState; 4] = [
        InstrumentState::Active,
        InstrumentState::Exhausted,
        InstrumentState::Expired,
        InstrumentState::Blocked,
    ];

    /// Blocked before expired before exhausted: the state says what stops a redemption first.
    pub fn at(balance: Cents, expires_at: Option<Timestamp>, blocked: bool, at: Timestamp) -> InstrumentState {
        if blocked {
            InstrumentState::Blocked
        } else if expires_at.is_some_and(|expiry| expiry <= at) {
            InstrumentState::Expired
        } else if balance.get() <= 0 {
            InstrumentState::Exhausted
        } else {
            InstrumentState::Active
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            InstrumentState::Active => "active",
            InstrumentState::Exhausted => "exhausted",
            InstrumentState::Expired => "expired",
            InstrumentState::Blocked => "blocked",
        }
    }
}

/// What an activity of an instrument's ledger did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActivityKind {
    Issue,
    Activate,
    Load,
    Redeem,
    Refund,
    Adjust,
    Expire,
    Block,
    Unblock,
}

impl ActivityKind {
    pub const ALL: [ActivityKind; 9] = [
        ActivityKind::Issue,
        ActivityKind::Activate,
        ActivityKind::Load,
        ActivityKind::Redeem,
        ActivityKind::Refund,
        ActivityKind::Adjust,
        ActivityKind::Expire,
        ActivityKind::Block,
        ActivityKind::Unblock,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ActivityKind::Issue => "issue",
            ActivityKind::Activate => "activate",
            ActivityKind::Load => "load",
            ActivityKind::Redeem => "redeem",
            ActivityKind::Refund => "refund",
            ActivityKind::Adjust => "adjust",
            ActivityKind::Expire => "expire",
            ActivityKind::Block => "block",
            ActivityKind::Unblock => "unblock",
        }
    }

    pub fn parse(text: &str) -> Option<ActivityKind> {
        ActivityKind::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

/// What moved a customer's loyalty points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointsActivity {
    /// Earned by a sale.
    Earn,
    /// Spent as a `loyalty` tender.
    Redeem,
    /// Spent points given back by a return.
    Refund,
    /// Earned points taken back by a return.
    TakeBack,
    /// The balance a customer had before the ledger existed.
    Adjust,
    /// The balance an erased customer lost.
    Forfeit,
}

impl PointsActivity {
    pub fn as_str(self) -> &'static str {
        match self {
            PointsActivity::Earn => "earn",
            PointsActivity::Redeem => "redeem",
            PointsActivity::Refund => "refund",
            PointsActivity::TakeBack => "take_back",
            PointsActivity::Adjust => "adjust",
            PointsActivity::Forfeit => "forfeit",
        }
    }
}

/// What a code may hold: letters, digits, `-` and `_` (cards a chain already sold keep their
/// printed codes, numeric or dashed).
fn is_code_symbol(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// The shortest and longest code a gift card or a credit note may have.
pub const CODE_MIN_LENGTH: usize = 4;
pub const CODE_MAX_LENGTH: usize = 64;

/// Why a text is not a gift card's or credit note's code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("must be 4 to 64 letters, digits, `-` or `_`")]
pub struct NotACode;

/// A gift card's or a credit note's code: 4 to 64 letters, digits, `-` and `_`, compared
/// without case (kept in capitals). The codes till draws are [`CODE_LENGTH`] symbols of
/// [`CODE_ALPHABET`]; a chain's own printed cards may have others.
#[derive(Clone, PartialEq, Eq)]
pub struct InstrumentCode(String);

impl InstrumentCode {
    pub fn parse(text: &str) -> Result<InstrumentCode, NotACode> {
        let shaped = (CODE_MIN_LENGTH..=CODE_MAX_LENGTH).contains(&text.len()) && text.bytes().all(is_code_symbol);
        if !shaped {
            return Err(NotACode);
        }
        Ok(InstrumentCode(text.to_ascii_uppercase()))
    }

    /// The code `random` spells: 128 random bits written in base 31, of which the code keeps
    /// the last 16 symbols (the bias toward some codes is below 2^-48).
    pub fn from_random(random: [u8; 16]) -> InstrumentCode {
        let base = CODE_ALPHABET.len() as u128;
        let mut rest = u128::from_be_bytes(random);
        let mut code = String::with_capacity(CODE_LENGTH);
        for _ in 0..CODE_LENGTH {
            code.push(char::from(CODE_ALPHABET[(rest % base) as usize]));
            rest /= base;
        }
        InstrumentCode(code)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The last four symbols, what a receipt prints.
    pub fn last_four(&self) -> &str {
        &self.0[self.0.len() - 4..]
    }

    /// How storage finds the instrument: see [`code_lookup`].
    pub fn lookup(&self) -> String {
        code_lookup(&self.0)
    }
}

/// A code is a bearer credential: it is never written out in full by `Debug`.
impl std::fmt::Debug for InstrumentCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "InstrumentCode(…{})", self.last_four())
    }
}

/// The instrument a tender draws on or pays into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Instrument {
    GiftCard(InstrumentCode),
    /// The reference as presented: a fiscal number, or any text that is not a credit note's
    /// code, finds none, and is refused as an unknown one is.
    CreditNote(TenderReference),
    /// The credit note a return issues, numbered with the return's credit-note number.
    NewCreditNote,
    Points(CustomerId),
}

/// One move of stored value by a ticket's tender.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TenderMove {
    /// The tender's index in the ticket's tender set: refusals name it by it.
    pub tender: usize,
    pub instrument: Instrument,
    /// Positive: cents for a card or a credit note, the worth of `points` for points.
    pub amount: Cents,
    /// Points moved, for a `loyalty` tender; zero otherwise.
    pub points: i64,
    pub direction: Direction,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// A sale's tender spends the instrument's balance.
    Redeem,
    /// A return's tender pays back into it (a `credit_note` tender issues a new credit note).
    Refund,
}

/// What a cart line selling a gift card does to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CardAction {
    /// Brings a new card into use with the line's amount; a card already active is refused.
    Activate,
    /// Adds the line's amount to an active card.
    Load,
}

impl CardAction {
    pub const ALL: [CardAction; 2] = [CardAction::Activate, CardAction::Load];

    pub fn as_str(self) -> &'static str {
        match self {
            CardAction::Activate => "activate",
            CardAction::Load => "load",
        }
    }
}

/// A cart line that sells a gift card (a multi-purpose voucher, at VAT 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GiftCardSale {
    pub code: InstrumentCode,
    pub action: CardAction,
}

/// A gift card sold by a line of the ticket, with the line's net amount.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CardMove {
    pub line_id: String,
    pub code: InstrumentCode,
    pub action: CardAction,
    pub amount: Cents,
}

/// Everything a ticket moves in stored value, done in its transaction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TicketMoves {
    pub tenders: Vec<TenderMove>,
    pub cards: Vec<CardMove>,
    /// When a credit note the ticket issues expires.
    pub credit_note_expires_at: Option<Timestamp>,
    /// The code a credit note the ticket issues is redeemed with, drawn before the commit;
    /// `None` when the ticket issues none.
    pub credit_note_code: Option<InstrumentCode>,
}

impl TicketMoves {
    pub fn is_empty(&self) -> bool {
        self.tenders.is_empty() && self.cards.is_empty()
    }

    /// Whether a tender issues a new credit note, which then needs a code.
    pub fn issues_credit_note(tenders: &[TenderMove]) -> bool {
        tenders.iter().any(|t| t.instrument == Instrument::NewCreditNote)
    }
}

/// How a gift card or a credit note is found in storage: the SHA-256 of its code in capitals,
/// in hex, so that the time an index look-up takes depends on the hash, not on the code. Text
/// that is not a code gets a hash no instrument has.
pub fn code_lookup(code: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(code.to_ascii_uppercase().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The deployment's key for the digests that name a gift card or a credit note in sealed
/// records: an HMAC-SHA256 key that every node shares and no record carries, so that a digest
/// lets an auditor follow one instrument through the journal without telling its code, and
/// cannot be recomputed from an archive.
pub struct InstrumentDigestKey(ring::hmac::Key);

impl InstrumentDigestKey {
    pub fn from_secret(secret: &[u8]) -> InstrumentDigestKey {
        InstrumentDigestKey(ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret))
    }

    /// The digest of the instrument of `kind` found by `lookup` (see [`code_lookup`]), in
    /// base64url. It is taken over the look-up rather than the code because storage keeps
    /// only the look-up: the instruments issued before digests existed get theirs too.
    pub fn digest(&self, kind: InstrumentKind, lookup: &str) -> String {
        use base64::Engine as _;
        let tag = ring::hmac::sign(&self.0, format!("{}:{lookup}", kind.as_str()).as_bytes());
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(tag.as_ref())
    }
}

impl std::fmt::Debug for InstrumentDigestKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InstrumentDigestKey(..)")
    }
}

/// How a sealed record names what a tender drew on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SealedReference {
    /// Another method's reference (an outside system's voucher), as given.
    Clear(String),
    /// A gift card's or a credit note's code, a bearer credential: its last four symbols and
    /// its keyed digest, the same for every use of one instrument.
    Masked { last_four: String, digest: String },
}

/// What a sealed record keeps of `reference`, the reference of a tender of `method`.
pub fn sealed_reference(method: TenderMethod, reference: &str, key: &InstrumentDigestKey) -> SealedReference {
    let kind = match method {
        TenderMethod::GiftCard => InstrumentKind::GiftCard,
        TenderMethod::CreditNote => InstrumentKind::CreditNote,
        _ => return SealedReference::Clear(reference.to_owned()),
    };
    let capitals = reference.to_ascii_uppercase();
    let skipped = capitals.chars().count().saturating_sub(4);
    SealedReference::Masked {
        last_four: capitals.chars().skip(skipped).collect(),
        digest: key.digest(kind, &code_lookup(&capitals)),
    }
}

/// Why a stored-value tender cannot be taken as it stands, before any balance is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TenderProblem {
    /// A gift card or credit note tender without a `reference`.
    NoReference,
    /// A gift card tender whose `reference` is not a code's shape.
    NotACode,
    /// A loyalty tender on a sale without a customer.
    NoCustomer,
    /// A loyalty tender whose `applied` is not a whole number of points' worth.
    NotWholePoints { point_value: i64 },
}

/// How a ticket's tenders move stored value.
#[derive(Clone, Copy, Debug)]
pub struct TenderRules<'a> {
    /// Methods whose balances another system keeps: accepted unchecked.
    pub external: &'a [TenderMethod],
    /// Cents one loyalty point is worth (at least 1).
    pub point_value: i64,
}

/// The stored value each tender moves, in tender order. `tenders` are as the till sent them
/// (positive); `direction` says whether the ticket spends (a sale) or pays back (a return). A
/// `credit_note` tender of a return names no instrument: it issues a new credit note, so its
/// reference is not needed.
pub fn tender_moves(
    tenders: &[Tender],
    customer: Option<&CustomerId>,
    direction: Direction,
    rules: TenderRules<'_>,
) -> Result<Vec<TenderMove>, (usize, TenderProblem)> {
    let mut moves = Vec::new();
    for (index, tender) in tenders.iter().enumerate() {
        if rules.external.contains(&tender.method) || tender.applied.get() == 0 {
            continue;
        }
        let reference = || tender.reference.clone().ok_or((index, TenderProblem::NoReference));
        let (instrument, points) = match tender.method {
            TenderMethod::GiftCard => {
                let code =
                    InstrumentCode::parse(reference()?.as_str()).map_err(|_| (index, TenderProblem::NotACode))?;
                (Instrument::GiftCard(code), 0)
            }
            TenderMethod::CreditNote if direction == Direction::Refund => (Instrument::NewCreditNote, 0),
            TenderMethod::CreditNote => (Instrument::CreditNote(reference()?), 0),
            TenderMethod::Loyalty => {
                let customer = customer.ok_or((index, TenderProblem::NoCustomer))?;
                let points = points_worth(tender.applied, rules.point_value).map_err(|p| (index, p))?;
                (Instrument::Points(customer.clone()), points)
            }
            _ => continue,
        };
        moves.push(TenderMove {
            tender: index,
            instrument,
            amount: tender.applied,
            points,
            direction,
        });
    }
    Ok(moves)
}

/// The points `amount` is worth, when it is a whole number of them.
pub fn points_worth(amount: Cents, point_value: i64) -> Result<i64, TenderProblem> {
    let point_value = point_value.max(1);
    if amount.get() % point_value != 0 {
        return Err(TenderProblem::NotWholePoints { point_value });
    }
    Ok(amount.get() / point_value)
}

/// Whether a tender's method draws on a balance till keeps.
pub fn is_stored_value(method: TenderMethod) -> bool {
    matches!(
        method,
        TenderMethod::GiftCard | TenderMethod::CreditNote | TenderMethod::Loyalty
    )
}

/// What an original sale was paid with, as a return sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaidWith {
    pub total: Cents,
    /// Paid with gift cards, credit notes and points together.
    pub stored_value: Cents,
    /// Of which with points.
    pub loyalty: Cents,
}

impl PaidWith {
    /// From the original's tenders, as sealed.
    pub fn of(total: Cents, tenders: impl IntoIterator<Item = (TenderMethod, Cents)> + Clone) -> Option<PaidWith> {
        let sum = |keep: fn(TenderMethod) -> bool| {
            checked_sum(tenders.clone().into_iter().filter(|(m, _)| keep(*m)).map(|(_, a)| a)).ok()
        };
        Some(PaidWith {
            total,
            stored_value: sum(is_stored_value)?,
            loyalty: sum(|m| m == TenderMethod::Loyalty)?,
        })
    }
}

/// What a refund owes stored value: the share of the original's stored value this refund
/// covers, spread over the original's total cumulatively like every refund (see
/// [`crate::returns`]): however a sale is returned, in one go or in parts, exactly what it was
/// paid with stored value goes back to stored value, and no more points than were spent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefundShare {
    /// Gift card, credit note and loyalty tenders of the return must add up to this at least.
    pub to_stored_value: Cents,
    /// Loyalty tenders of the return may give back this much at most.
    pub loyalty_at_most: Cents,
}

pub fn refund_share(paid: PaidWith, refunded_before: Cents, refund: Cents) -> RefundShare {
    let (total, before, now) = (paid.total.get(), refunded_before.get(), refund.get());
    let share = |amount: Cents| Cents::new(prorate(amount.get(), total, before, now)).unwrap_or(Cents::ZERO);
    RefundShare {
        to_stored_value: share(paid.stored_value),
        loyalty_at_most: share(paid.loyalty),
    }
}

/// Why a return's tenders break the refund policy, with the tender to name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefundPolicyError {
    /// Less than `owed` goes back to stored value; the tender named pays the rest out.
    OwedToStoredValue { tender: usize, owed: Cents },
    /// More points given back than this share of the spent ones.
    TooManyPoints { tender: usize, at_most: Cents },
}

/// Checks a return's tenders (positive, as the till sent them) against the share it owes.
pub fn check_refund(share: RefundShare, tenders: &[Tender]) -> Result<(), RefundPolicyError> {
    let sum = |keep: fn(TenderMethod) -> bool| -> i64 {
        tenders.iter().filter(|t| keep(t.method)).map(|t| t.applied.get()).sum()
    };
    let loyalty = sum(|m| m == TenderMethod::Loyalty);
    if loyalty > share.loyalty_at_most.get() {
        let tender = tenders
            .iter()
            .position(|t| t.method == TenderMethod::Loyalty)
            .unwrap_or(0);
        return Err(RefundPolicyError::TooManyPoints {
            tender,
            at_most: share.loyalty_at_most,
        });
    }
    if sum(is_stored_value) < share.to_stored_value.get() {
        let tender = tenders.iter().position(|t| !is_stored_value(t.method)).unwrap_or(0);
        return Err(RefundPolicyError::OwedToStoredValue {
            tender,
            owed: share.to_stored_value,
        });
    }
    Ok(())
}

/// Why a gift card, a credit note or a customer's points refused a move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InstrumentRefusal {
    /// No such instrument, or one this store may not take: the two are not told apart.
    Unknown,
    Blocked,
    Expired,
    /// Less on it than the tender takes.
    Insufficient {
        balance: Cents,
    },
    /// Fewer points than the tender spends.
    NotEnoughPoints {
        points: i64,
    },
    /// A card activated again.
    AlreadyActive,
}

/// An instrument as it stood when a move on it was refused.
pub struct Standing {
    /// Whether the store asking may take it.
    pub taken_here: bool,
    pub blocked: bool,
    pub expires_at: Option<Timestamp>,
    pub balance: Cents,
}

/// Why a move the instrument's guard refused was refused, in the order a cashier is told:
/// an instrument this store may not take answers as an unknown one, so that a code tried at
/// the wrong store tells nothing more than a wrong code.
pub fn why_refused(standing: Option<&Standing>, now: Timestamp) -> InstrumentRefusal {
    match standing {
        None => InstrumentRefusal::Unknown,
        Some(s) if !s.taken_here => InstrumentRefusal::Unknown,
        Some(s) if s.blocked => InstrumentRefusal::Blocked,
        Some(s) if s.expires_at.is_some_and(|expiry| expiry <= now) => InstrumentRefusal::Expired,
        Some(s) => InstrumentRefusal::Insufficient { balance: s.balance },
    }
}

/// The credit-note (avoir) number of a return: its register and ticket sequence, so credit
/// notes are numbered without gaps along the register's tickets.
pub fn credit_note_number(register_id: &str, seq: i64) -> String {
    format!("AV-{register_id}-{seq:06}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cents(value: i64) -> Cents {
        Cents::new(value).unwrap()
    }

    #[test]
    fn a_refused_instrument_is_unknown_elsewhere_then_blocked_then_expired_then_short() {
        let now = Timestamp::from_second(1_000).unwrap();
        let standing = |taken_here, blocked, expires_at: Option<i64>| Standing {
            taken_here,
            blocked,
            expires_at: expires_at.map(|s| Timestamp::from_second(s).unwrap()),
            balance: cents(250),
        };
        assert_eq!(why_refused(None, now), InstrumentRefusal::Unknown);
        assert_eq!(
            why_refused(Some(&standing(false, true, Some(1))), now),
            InstrumentRefusal::Unknown
        );
        assert_eq!(
            why_refused(Some(&standing(true, true, Some(1))), now),
            InstrumentRefusal::Blocked
        );
        assert_eq!(
            why_refused(Some(&standing(true, false, Some(1_000))), now),
            InstrumentRefusal::Expired
        );
        assert_eq!(
            why_refused(Some(&standing(true, false, Some(1_001))), now),
            InstrumentRefusal::Insufficient { balance: cents(250) }
        );
    }

    fn tender(method: TenderMethod, applied: i64, reference: Option<&str>) -> Tender {
        Tender {
            id: format!("t-{}", method.as_str()),
            method,
            applied: cents(applied),
            presented: cents(applied),
            change: Cents::ZERO,
            forfeited: Cents::ZERO,
            reference: reference.map(|r| TenderReference::parse(r).unwrap()),
        }
    }

    const RULES: TenderRules<'static> = TenderRules {
        external: &[],
        point_value: 5,
    };

    #[test]
    fn a_state_says_what_stops_a_redemption_first() {
        let now: Timestamp = "2026-11-25T12:00:00Z".parse().unwrap();
        let past: Timestamp = "2026-11-01T00:00:00Z".parse().unwrap();
        assert_eq!(InstrumentState::at(cents(5), None, false, now), InstrumentState::Active);
        assert_eq!(
            InstrumentState::at(Cents::ZERO, None, false, now),
            InstrumentState::Exhausted
        );
        assert_eq!(
            InstrumentState::at(cents(5), Some(past), false, now),
            InstrumentState::Expired
        );
        assert_eq!(
            InstrumentState::at(cents(5), Some(now), false, now),
            InstrumentState::Expired
        );
        assert_eq!(
            InstrumentState::at(cents(5), Some(past), true, now),
            InstrumentState::Blocked
        );
    }

    #[test]
    fn generated_codes_are_of_the_printed_shape_and_differ() {
        let code = InstrumentCode::from_random([7; 16]);
        assert_eq!(InstrumentCode::parse(code.as_str()), Ok(code.clone()));
        assert_ne!(InstrumentCode::from_random([8; 16]), code);
        assert_eq!(InstrumentCode::from_random([0; 16]).as_str(), "2222222222222222");
        assert!(code.as_str().bytes().all(|b| CODE_ALPHABET.contains(&b)));
        assert_eq!(code.last_four(), &code.as_str()[12..]);
        assert!(!format!("{code:?}").contains(&code.as_str()[..12]));
    }

    #[test]
    fn codes_a_chain_already_printed_are_taken_and_compared_without_case() {
        for printed in [
            "6280001234567890",
            "GC-2026-000123",
            "gift_card_0001",
            "ABCD",
            &"9".repeat(64),
        ] {
            let code = InstrumentCode::parse(printed).unwrap();
            assert_eq!(code.as_str(), printed.to_ascii_uppercase());
        }
        let lower = InstrumentCode::parse("gc-2026-000123").unwrap();
        assert_eq!(lower, InstrumentCode::parse("GC-2026-000123").unwrap());
        assert_eq!(lower.lookup(), code_lookup("GC-2026-000123"));
        assert_eq!(lower.last_four(), "0123");
        for refused in ["ABC", &"9".repeat(65), "GC 2026", "GC/2026", "GC.2026", "carte-é12", ""] {
            assert_eq!(InstrumentCode::parse(refused), Err(NotACode), "{refused:?}");
        }
    }

    #[test]
    fn a_sealed_record_masks_a_code_and_names_it_by_a_keyed_digest() {
        let key = InstrumentDigestKey::from_secret(b"one deployment");
        let card = sealed_reference(TenderMethod::GiftCard, "gc-2026-000123", &key);
        let SealedReference::Masked { last_four, digest } = &card else {
            panic!("a card's code is masked: {card:?}");
        };
        assert_eq!(last_four, "0123");
        assert!(!digest.contains("2026"));
        assert_eq!(
            sealed_reference(TenderMethod::GiftCard, "GC-2026-000123", &key),
            card,
            "one card, one digest, whatever the case"
        );
        assert_eq!(
            digest,
            &key.digest(InstrumentKind::GiftCard, &code_lookup("GC-2026-000123")),
            "the digest storage keeps for the card"
        );
        let other = InstrumentDigestKey::from_secret(b"another deployment");
        assert_ne!(sealed_reference(TenderMethod::GiftCard, "GC-2026-000123", &other), card);
        assert_ne!(
            sealed_reference(TenderMethod::CreditNote, "GC-2026-000123", &key),
            card,
            "a credit note and a card never share a digest"
        );
        assert_eq!(
            sealed_reference(TenderMethod::MealVoucher, "TR-42", &key),
            SealedReference::Clear("TR-42".into())
        );
        assert!(!format!("{key:?}").contains("deployment"));
    }

    #[test]
    fn each_stored_value_tender_names_its_instrument() {
        let customer = CustomerId::parse("c1").unwrap();
        let tenders = [
            tender(TenderMethod::Cash, 100, None),
            tender(TenderMethod::GiftCard, 200, Some("card")),
            tender(TenderMethod::CreditNote, 300, Some("AV-r-000001")),
            tender(TenderMethod::Loyalty, 50, None),
        ];
        let moves = tender_moves(&tenders, Some(&customer), Direction::Redeem, RULES).unwrap();
        assert_eq!(moves.iter().map(|m| m.tender).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(
            moves[0].instrument,
            Instrument::GiftCard(InstrumentCode::parse("CARD").unwrap())
        );
        assert_eq!(moves[2].instrument, Instrument::Points(customer.clone()));
        assert_eq!((moves[2].amount, moves[2].points), (cents(50), 10));
    }

    #[test]
    fn a_stored_value_tender_missing_what_it_draws_on_is_refused() {
        let customer = CustomerId::parse("c1").unwrap();
        let card = [
            tender(TenderMethod::Cash, 1, None),
            tender(TenderMethod::GiftCard, 200, None),
        ];
        assert_eq!(
            tender_moves(&card, None, Direction::Redeem, RULES),
            Err((1, TenderProblem::NoReference))
        );
        let note = [tender(TenderMethod::CreditNote, 200, None)];
        assert_eq!(
            tender_moves(&note, None, Direction::Redeem, RULES),
            Err((0, TenderProblem::NoReference))
        );
        let points = [tender(TenderMethod::Loyalty, 50, None)];
        assert_eq!(
            tender_moves(&points, None, Direction::Redeem, RULES),
            Err((0, TenderProblem::NoCustomer))
        );
        let misshapen = [tender(TenderMethod::GiftCard, 200, Some("GC 2026"))];
        assert_eq!(
            tender_moves(&misshapen, None, Direction::Redeem, RULES),
            Err((0, TenderProblem::NotACode))
        );
        let odd = [tender(TenderMethod::Loyalty, 51, None)];
        assert_eq!(
            tender_moves(&odd, Some(&customer), Direction::Redeem, RULES),
            Err((0, TenderProblem::NotWholePoints { point_value: 5 }))
        );
    }

    #[test]
    fn external_methods_are_not_drawn_on_and_a_return_issues_its_credit_note() {
        let external = TenderRules {
            external: &[TenderMethod::GiftCard],
            point_value: 1,
        };
        let card = [tender(TenderMethod::GiftCard, 200, None)];
        assert_eq!(tender_moves(&card, None, Direction::Redeem, external), Ok(vec![]));
        let note = [tender(TenderMethod::CreditNote, 200, None)];
        let moves = tender_moves(&note, None, Direction::Refund, RULES).unwrap();
        assert_eq!(
            (&moves[0].instrument, moves[0].direction),
            (&Instrument::NewCreditNote, Direction::Refund)
        );
    }

    #[test]
    fn a_refund_of_a_sale_paid_with_stored_value_owes_it_its_share() {
        let paid = PaidWith::of(
            cents(10_000),
            [
                (TenderMethod::Card, cents(6_000)),
                (TenderMethod::GiftCard, cents(3_000)),
                (TenderMethod::Loyalty, cents(1_000)),
            ],
        )
        .unwrap();
        let share = refund_share(paid, Cents::ZERO, cents(5_000));
        assert_eq!(
            share,
            RefundShare {
                to_stored_value: cents(2_000),
                loyalty_at_most: cents(500)
            }
        );
        let cash_out = [tender(TenderMethod::Cash, 5_000, None)];
        assert_eq!(
            check_refund(share, &cash_out),
            Err(RefundPolicyError::OwedToStoredValue {
                tender: 0,
                owed: cents(2_000)
            })
        );
        let split = [
            tender(TenderMethod::Card, 3_000, None),
            tender(TenderMethod::CreditNote, 1_500, None),
            tender(TenderMethod::Loyalty, 500, None),
        ];
        assert_eq!(check_refund(share, &split), Ok(()));
        let greedy = [
            tender(TenderMethod::Card, 4_000, None),
            tender(TenderMethod::Loyalty, 1_000, None),
        ];
        assert_eq!(
            check_refund(share, &greedy),
            Err(RefundPolicyError::TooManyPoints {
                tender: 1,
                at_most: cents(500)
            })
        );
    }

    /// A ledger as storage keeps it: redemptions refused past the balance.
    #[derive(Debug, Default)]
    struct Held {
        balance: i64,
        put_in: i64,
    }

    impl Held {
        fn redeem(&mut self, amount: i64) -> bool {
            let taken = self.balance >= amount;
            if taken {
                self.balance -= amount;
            }
            taken
        }

        fn load(&mut self, amount: i64) {
            self.balance += amount;
            self.put_in += amount;
        }
    }

    proptest! {
        /// However a sale is split across cash, a gift card, a credit note and points, and
        /// later returned in parts with every stored-value share paid back as the policy
        /// demands (points to points, the rest to the card or to a new credit note), no
        /// instrument ends above what was ever put in it or below zero, no more points come
        /// back than were spent, and once all is returned, exactly what stored value paid has
        /// gone back to stored value.
        #[test]
        fn stored_value_goes_back_where_it_came_from(
            total in 1i64..50_000,
            card_share in 0i64..=100,
            note_share in 0i64..=100,
            points_share in 0i64..=100,
            card_balance in 0i64..60_000,
            note_balance in 0i64..60_000,
            customer_points in 0i64..60_000,
            parts in proptest::collection::vec(1i64..=100, 1..6),
            to_card in proptest::collection::vec(any::<bool>(), 6),
        ) {
            let point_value = 1;
            let (mut card, mut note, mut points) = (Held::default(), Held::default(), Held::default());
            card.load(card_balance);
            note.load(note_balance);
            points.load(customer_points);
            let mut left = total;
            let mut split = Vec::new();
            for (method, share, held) in [
                (TenderMethod::GiftCard, card_share, &mut card),
                (TenderMethod::CreditNote, note_share, &mut note),
                (TenderMethod::Loyalty, points_share, &mut points),
            ] {
                let amount = (left * share / 100).min(left);
                if amount > 0 && held.redeem(amount) {
                    split.push((method, cents(amount)));
                    left -= amount;
                }
            }
            split.push((TenderMethod::Cash, cents(left)));
            let paid = PaidWith::of(cents(total), split.clone()).unwrap();
            let spent_points = paid.loyalty.get() / point_value;
            let (mut refunded, mut back_to_stored, mut points_back) = (0i64, 0i64, 0i64);
            let mut new_notes = Vec::new();
            let weight: i64 = parts.iter().sum();
            let mut cumulative = 0;
            for (part, card_gets_it) in parts.iter().zip(to_card) {
                cumulative += part;
                let refund = total * cumulative / weight - refunded;
                let share = refund_share(paid, cents(refunded), cents(refund));
                let loyalty = share.loyalty_at_most.get();
                let rest = share.to_stored_value.get() - loyalty;
                let mut tenders = vec![tender(TenderMethod::Loyalty, loyalty, None)];
                tenders.push(tender(if card_gets_it { TenderMethod::GiftCard } else { TenderMethod::CreditNote }, rest, Some("X")));
                tenders.push(tender(TenderMethod::Cash, refund - loyalty - rest, None));
                prop_assert_eq!(check_refund(share, &tenders), Ok(()));
                let paying_out_more = [tender(TenderMethod::Cash, refund, None)];
                if share.to_stored_value.get() > 0 {
                    prop_assert!(check_refund(share, &paying_out_more).is_err());
                }
                points.load(loyalty / point_value);
                points_back += loyalty / point_value;
                if card_gets_it { card.load(rest) } else {
                    let mut issued = Held::default();
                    issued.load(rest);
                    new_notes.push(issued);
                }
                back_to_stored += loyalty + rest;
                refunded += refund;
            }
            prop_assert_eq!(refunded, total);
            prop_assert_eq!(back_to_stored, paid.stored_value.get());
            prop_assert!(points_back <= spent_points);
            for held in [&card, &note, &points].into_iter().chain(new_notes.iter()) {
                prop_assert!(held.balance >= 0 && held.balance <= held.put_in, "{held:?}");
            }
        }
    }
}
