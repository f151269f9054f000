//! Checking a register's journal from its entries and the business records they seal. The same
//! audit runs on the database (a whole journal) and offline on an archive (a period of it).
//!
//! For every chain: sequences contiguous from the start (or from the archive's anchor), each
//! entry linked to the previous signature in its record and in its signed string, the
//! first-entry flag on entry 1 only, every signature valid under the key it names, the chain's
//! recorded head reached. For every entry: the signed string rebuilt from the business record
//! and compared. For every closure: its sums equal the tickets (or days, or months) it covers,
//! the perpetual grand totals follow their recurrence, and its anchor is the ticket chain's
//! entry at that sequence. The first thing that does not hold is reported.

use super::payload::{
    self, ArchiveRecord, ClosureRecord, DuplicateRecord, EventRecord, LateTickets, Period, SaleRecord, SaleRecordVat,
    ShiftRecord,
};
use super::{ALGORITHM, ChainKind, Entry, PublicKey};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// The entry just before the first one given: where an archive's chain picks up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Anchor {
    pub seq: i64,
    pub signature: Option<String>,
}

/// One chain of the journal, in sequence order.
#[derive(Clone, Debug)]
pub struct Chain {
    pub kind: ChainKind,
    /// `None`: the chain starts at entry 1.
    pub anchor: Option<Anchor>,
    pub entries: Vec<Entry>,
    /// The last sequence the register says it wrote, when known: entries removed from the end
    /// are found this way.
    pub head: Option<i64>,
}

/// A register's journal and everything it seals.
#[derive(Clone, Debug, Default)]
pub struct Journal {
    pub register_id: String,
    pub chains: Vec<Chain>,
    /// Sales by transaction id.
    pub sales: HashMap<String, SaleRecord>,
    /// Shift closures by session id.
    pub shifts: HashMap<String, ShiftRecord>,
    /// Period closures by their sequence in the closure chain.
    pub closures: HashMap<i64, ClosureRecord>,
    pub events: HashMap<i64, EventRecord>,
    pub duplicates: HashMap<i64, DuplicateRecord>,
    pub archives: HashMap<i64, ArchiveRecord>,
    /// Public keys by key id.
    pub keys: HashMap<String, Value>,
    /// Before the first day closure given: the grand totals and the last ticket closed.
    pub opening: Opening,
    /// True when the journal is whole (from the database); month and year sums are checked
    /// only then, since an archive may hold only part of a month's days.
    pub whole: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Opening {
    pub grand_total_cents: i64,
    pub grand_total_abs_cents: i64,
    pub last_ticket_seq: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// A sequence number is missing or out of order.
    Gap,
    /// The previous-signature link or the first-entry flag does not hold.
    Link,
    /// The signature does not verify, or names an unknown key or algorithm.
    Signature,
    /// The signed string differs from the one rebuilt from the business record.
    Altered,
    /// The business record an entry seals is gone.
    MissingRecord,
    /// Entries are missing from the end of a chain.
    Truncated,
    /// A closure's sums differ from what it covers.
    ClosureSum,
    /// A perpetual grand total breaks its recurrence.
    GrandTotal,
    /// A closure's anchor does not match the ticket chain.
    Anchor,
}

impl FailureKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Gap => "gap",
            FailureKind::Link => "link",
            FailureKind::Signature => "signature",
            FailureKind::Altered => "altered",
            FailureKind::MissingRecord => "missing_record",
            FailureKind::Truncated => "truncated",
            FailureKind::ClosureSum => "closure_sum",
            FailureKind::GrandTotal => "grand_total",
            FailureKind::Anchor => "anchor",
        }
    }
}

/// The first entry that does not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub chain: ChainKind,
    pub seq: i64,
    pub kind: FailureKind,
    pub detail: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} entry {}: {} ({})",
            self.chain.as_str(),
            self.seq,
            self.detail,
            self.kind.as_str()
        )
    }
}

fn fail(chain: ChainKind, seq: i64, kind: FailureKind, detail: impl Into<String>) -> Failure {
    Failure {
        chain,
        seq,
        kind,
        detail: detail.into(),
    }
}

/// Audits `journal`; the number of entries checked, or the first failure.
///
/// Every figure it reads may be hostile (an archive comes from anywhere): sums, counts and
/// sequences are added with checks, and one that passes the largest integer is a failure of
/// the entry that holds it, never a panic or a wrapped figure.
pub fn audit(journal: &Journal) -> Result<usize, Failure> {
    let mut checked: usize = 0;
    for chain in &journal.chains {
        // Entries held in memory: their count cannot pass `usize`.
        checked = checked.saturating_add(verify_chain(chain, &journal.keys)?);
        for entry in &chain.entries {
            check_record(journal, entry)?;
        }
    }
    check_closures(journal)?;
    Ok(checked)
}

/// The structure of one chain: sequences, links, flags, signatures, head.
pub fn verify_chain(chain: &Chain, keys: &HashMap<String, Value>) -> Result<usize, Failure> {
    // Read from its JWK when an entry first names it: a key no entry names costs nothing,
    // however many an archive carries.
    let mut read: HashMap<&str, Option<PublicKey>> = HashMap::new();
    let kind = chain.kind;
    let anchor = chain.anchor.clone().unwrap_or_default();
    let mut previous: Option<&str> = anchor.signature.as_deref();
    // The last sequence seen: the anchor's, then each entry's.
    let mut last = anchor.seq;
    for entry in &chain.entries {
        let at = |failure: FailureKind, detail: String| fail(kind, entry.seq, failure, detail);
        let Some(expected) = last.checked_add(1) else {
            return Err(at(
                FailureKind::Gap,
                format!("found entry {} after entry {last}, the largest sequence", entry.seq),
            ));
        };
        if entry.seq != expected {
            return Err(at(
                FailureKind::Gap,
                format!("expected entry {expected}, found entry {}", entry.seq),
            ));
        }
        if entry.previous_signature.as_deref() != previous {
            return Err(at(
                FailureKind::Link,
                "its link to the previous entry's signature is broken".into(),
            ));
        }
        let flag = if entry.seq == 1 { "Y" } else { "N" };
        if !entry
            .payload
            .ends_with(&format!(",{flag},{}", previous.unwrap_or_default()))
        {
            return Err(at(
                FailureKind::Link,
                "its signed string does not end with its flag and the previous signature".into(),
            ));
        }
        if entry.algorithm != ALGORITHM {
            return Err(at(
                FailureKind::Signature,
                format!("unexpected algorithm {}", entry.algorithm),
            ));
        }
        let Some((id, jwk)) = keys.get_key_value(entry.key_id.as_str()) else {
            return Err(at(
                FailureKind::Signature,
                format!("signed with unknown key {}", entry.key_id),
            ));
        };
        let key = read.entry(id.as_str()).or_insert_with(|| PublicKey::from_jwk(jwk));
        if !key
            .as_ref()
            .is_some_and(|key| key.verifies(&entry.payload, &entry.signature))
        {
            return Err(at(FailureKind::Signature, "its signature does not verify".into()));
        }
        previous = Some(&entry.signature);
        last = entry.seq;
    }
    if let Some(head) = chain.head
        && head > last
    {
        return Err(fail(
            kind,
            // Below `head`, so one more cannot overflow.
            last.saturating_add(1),
            FailureKind::Truncated,
            format!("the chain ends at entry {last} but {head} were written"),
        ));
    }
    Ok(chain.entries.len())
}

/// The entry's signed string, rebuilt from the record it seals, must be the stored one.
fn check_record(journal: &Journal, entry: &Entry) -> Result<(), Failure> {
    let previous = entry.previous_signature.as_deref();
    let missing = |what: &str| {
        fail(
            entry.kind,
            entry.seq,
            FailureKind::MissingRecord,
            format!("{what} {} is missing", entry.reference),
        )
    };
    let rebuilt = match entry.kind {
        ChainKind::Ticket => {
            let sale = journal.sales.get(&entry.reference).ok_or_else(|| missing("sale"))?;
            payload::ticket(sale, entry.seq, previous)
        }
        ChainKind::Closure => match journal.closures.get(&entry.seq) {
            Some(closure) => payload::period_closure(closure, entry.seq, previous),
            None => {
                let shift = journal
                    .shifts
                    .get(&entry.reference)
                    .ok_or_else(|| missing("closure of"))?;
                payload::shift_closure(shift, entry.seq, previous)
            }
        },
        ChainKind::Duplicate => {
            let record = journal
                .duplicates
                .get(&entry.seq)
                .ok_or_else(|| missing("reprint of"))?;
            payload::duplicate(record, entry.seq, previous)
        }
        ChainKind::Event => {
            let record = journal.events.get(&entry.seq).ok_or_else(|| missing("event"))?;
            payload::event(record, entry.seq, previous)
        }
        ChainKind::Archive => {
            let record = journal.archives.get(&entry.seq).ok_or_else(|| missing("archive"))?;
            payload::archive(record, entry.seq, previous)
        }
    };
    if rebuilt != entry.payload {
        return Err(fail(
            entry.kind,
            entry.seq,
            FailureKind::Altered,
            format!("the record of {} no longer matches what was signed", entry.reference),
        ));
    }
    Ok(())
}

/// Totals of a set of tickets or closures. Every addition is checked: `None` when a sum
/// passes the largest amount, which no real register reaches.
#[derive(Default, PartialEq, Eq)]
struct Sums {
    count: i64,
    total: i64,
    abs: i64,
    vat: BTreeMap<i64, (i64, i64)>,
}

impl Sums {
    /// Adds `count` tickets of `total` (and `abs`, the sum of their magnitudes) with `vat`.
    fn add(&mut self, count: i64, total: i64, abs: i64, vat: &[SaleRecordVat]) -> Option<()> {
        self.count = self.count.checked_add(count)?;
        self.total = self.total.checked_add(total)?;
        self.abs = self.abs.checked_add(abs)?;
        self.add_vat(vat)
    }

    /// Adds one ticket: its total, its magnitude and its VAT.
    fn add_sale(&mut self, sale: &SaleRecord) -> Option<()> {
        self.add(1, sale.total_cents, sale.total_cents.checked_abs()?, &sale.vat)
    }

    fn add_vat(&mut self, vat: &[SaleRecordVat]) -> Option<()> {
        for v in vat {
            let entry = self.vat.entry(v.vat_rate).or_default();
            entry.0 = entry.0.checked_add(v.total_cents)?;
            entry.1 = entry.1.checked_add(v.vat_cents)?;
        }
        Some(())
    }

    fn matches(&self, closure: &ClosureRecord) -> bool {
        let mut theirs = Sums::default();
        // A closure whose own VAT rows overflow cannot equal sums that did not.
        if theirs.add_vat(&closure.vat).is_none() {
            return false;
        }
        self.total == closure.total_cents
            && self.abs == closure.abs_total_cents
            && self.count == closure.ticket_count
            && self
                .vat
                .iter()
                .filter(|(_, (t, v))| *t != 0 || *v != 0)
                .eq(theirs.vat.iter().filter(|(_, (t, v))| *t != 0 || *v != 0))
    }
}

/// `late` with one more late sale.
fn add_late(late: LateTickets, sale: &SaleRecord) -> Option<LateTickets> {
    Some(LateTickets {
        sales_count: late.sales_count.checked_add(1)?,
        total_cents: late.total_cents.checked_add(sale.total_cents)?,
    })
}

/// What a closure's sums passing the largest amount is reported as.
fn overflow(seq: i64, what: &str) -> Failure {
    fail(
        ChainKind::Closure,
        seq,
        FailureKind::ClosureSum,
        format!("the totals of {what} pass the largest amount"),
    )
}

fn check_closures(journal: &Journal) -> Result<(), Failure> {
    let tickets: HashMap<i64, &Entry> = journal
        .chains
        .iter()
        .filter(|c| c.kind == ChainKind::Ticket)
        .flat_map(|c| &c.entries)
        .map(|e| (e.seq, e))
        .collect();
    let mut closures: Vec<(i64, &ClosureRecord)> = journal.closures.iter().map(|(seq, c)| (*seq, c)).collect();
    closures.sort_by_key(|(seq, _)| *seq);
    let opening = &journal.opening;
    let (mut grand, mut grand_abs, mut last_ticket) = (
        opening.grand_total_cents,
        opening.grand_total_abs_cents,
        opening.last_ticket_seq,
    );
    let mut days: Vec<&ClosureRecord> = Vec::new();
    let mut months: Vec<&ClosureRecord> = Vec::new();
    for (seq, closure) in closures {
        let sum_fail = |detail: String| fail(ChainKind::Closure, seq, FailureKind::ClosureSum, detail);
        match closure.period {
            Period::Day => {
                let mut sums = Sums::default();
                let mut late = LateTickets::default();
                if closure.ticket_count > 0 {
                    if last_ticket.checked_add(1) != Some(closure.first_ticket_seq) {
                        return Err(sum_fail(format!(
                            "it starts at ticket {} but the previous day ended at ticket {last_ticket}",
                            closure.first_ticket_seq
                        )));
                    }
                    for ticket_seq in closure.first_ticket_seq..=closure.last_ticket_seq {
                        let Some(entry) = tickets.get(&ticket_seq) else {
                            return Err(fail(
                                ChainKind::Closure,
                                seq,
                                FailureKind::Anchor,
                                format!("it covers ticket {ticket_seq}, which is not in the ticket chain"),
                            ));
                        };
                        let Some(sale) = journal.sales.get(&entry.reference) else {
                            return Err(fail(
                                ChainKind::Ticket,
                                ticket_seq,
                                FailureKind::MissingRecord,
                                "its sale is missing",
                            ));
                        };
                        sums.add_sale(sale).ok_or_else(|| overflow(seq, "its tickets"))?;
                        if sale.late {
                            late = add_late(late, sale).ok_or_else(|| overflow(seq, "its late sales"))?;
                        }
                    }
                    let anchor = tickets.get(&closure.last_ticket_seq).map(|e| e.signature.as_str());
                    if anchor != closure.last_ticket_signature.as_deref() {
                        return Err(fail(
                            ChainKind::Closure,
                            seq,
                            FailureKind::Anchor,
                            format!("its anchor is not the signature of ticket {}", closure.last_ticket_seq),
                        ));
                    }
                    last_ticket = closure.last_ticket_seq;
                }
                if !sums.matches(closure) {
                    return Err(sum_fail(format!(
                        "its totals differ from those of the tickets {}..{}",
                        closure.first_ticket_seq, closure.last_ticket_seq
                    )));
                }
                if late.some() != closure.late {
                    return Err(sum_fail(format!(
                        "the late sales it shows apart differ from those among the tickets {}..{}",
                        closure.first_ticket_seq, closure.last_ticket_seq
                    )));
                }
                let (Some(next), Some(next_abs)) = (
                    grand.checked_add(closure.total_cents),
                    grand_abs.checked_add(closure.abs_total_cents),
                ) else {
                    return Err(fail(
                        ChainKind::Closure,
                        seq,
                        FailureKind::GrandTotal,
                        "its grand totals pass the largest amount",
                    ));
                };
                (grand, grand_abs) = (next, next_abs);
                if (grand, grand_abs) != (closure.grand_total_cents, closure.grand_total_abs_cents) {
                    return Err(fail(
                        ChainKind::Closure,
                        seq,
                        FailureKind::GrandTotal,
                        format!("its grand totals should be {grand} and {grand_abs}"),
                    ));
                }
                days.push(closure);
            }
            Period::Month | Period::Year if journal.whole => {
                // `YYYY-MM` of a month, `YYYY` of a year: the days or months it sums start so.
                let (prefix, candidates) = match closure.period {
                    Period::Month => (closure.period_from.get(..7), &days),
                    _ => (closure.period_from.get(..4), &months),
                };
                let Some(prefix) = prefix else {
                    return Err(sum_fail(format!(
                        "its period starts on {:?}, which is not a date",
                        closure.period_from
                    )));
                };
                let parts: Vec<&ClosureRecord> = candidates
                    .iter()
                    .copied()
                    .filter(|part| part.period_from.starts_with(prefix))
                    .collect();
                let mut sums = Sums::default();
                for part in &parts {
                    sums.add(part.ticket_count, part.total_cents, part.abs_total_cents, &part.vat)
                        .ok_or_else(|| overflow(seq, "the periods it covers"))?;
                }
                if !sums.matches(closure) {
                    return Err(sum_fail(format!(
                        "its totals differ from those of the {} periods it covers",
                        parts.len()
                    )));
                }
                let expected = parts
                    .last()
                    .map_or((grand, grand_abs), |p| (p.grand_total_cents, p.grand_total_abs_cents));
                if expected != (closure.grand_total_cents, closure.grand_total_abs_cents) {
                    return Err(fail(
                        ChainKind::Closure,
                        seq,
                        FailureKind::GrandTotal,
                        "its grand totals differ from its last period's",
                    ));
                }
                if closure.period == Period::Month {
                    months.push(closure);
                }
            }
            Period::Month | Period::Year => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fiscal::FiscalKey;
    use crate::fiscal::payload::tests_support::sale;

    /// A journal of `sales` tickets closed by one day closure, all signed by `key`.
    fn journal(key: &FiscalKey, sales: i64) -> Journal {
        let totals: Vec<i64> = (1..=sales).map(|n| 100 * n).collect();
        journal_of(key, &[&totals], Opening::default())
    }

    /// A whole journal picking up at `opening`: for each of `days`, one ticket of each of its
    /// totals and the day's closure, whose sums wrap where they pass the largest amount; all
    /// signed by `key`. The seals hold, the figures are hostile.
    fn journal_of(key: &FiscalKey, days: &[&[i64]], opening: Opening) -> Journal {
        let mut journal = Journal {
            register_id: "till-1".into(),
            whole: true,
            opening: opening.clone(),
            ..Journal::default()
        };
        journal.keys.insert(key.key_id().into(), key.public_jwk().clone());
        let (mut tickets, mut closures) = (Vec::new(), Vec::new());
        let (mut previous, mut previous_closure): (Option<String>, Option<String>) = (None, None);
        let (mut grand, mut grand_abs) = (opening.grand_total_cents, opening.grand_total_abs_cents);
        let mut seq = opening.last_ticket_seq;
        for (day, totals) in (1..).zip(days) {
            let first = seq + 1;
            for total in *totals {
                seq += 1;
                let mut record = sale(*total);
                record.transaction_id = format!("t{seq}");
                let text = payload::ticket(&record, seq, previous.as_deref());
                let entry = signed(
                    key,
                    ChainKind::Ticket,
                    seq,
                    text,
                    previous.clone(),
                    &record.transaction_id,
                );
                previous = Some(entry.signature.clone());
                journal.sales.insert(record.transaction_id.clone(), record);
                tickets.push(entry);
            }
            let total = totals.iter().fold(0i64, |sum, t| sum.wrapping_add(*t));
            let abs = totals.iter().fold(0i64, |sum, t| sum.wrapping_add(t.wrapping_abs()));
            (grand, grand_abs) = (grand.wrapping_add(total), grand_abs.wrapping_add(abs));
            let date = format!("2026-03-{day:02}");
            let closure = ClosureRecord {
                register_id: "till-1".into(),
                period: Period::Day,
                period_from: date.clone(),
                period_to: date.clone(),
                ticket_count: i64::try_from(totals.len()).unwrap(),
                first_ticket_seq: first,
                last_ticket_seq: seq,
                last_ticket_signature: previous.clone(),
                total_cents: total,
                abs_total_cents: abs,
                grand_total_cents: grand,
                grand_total_abs_cents: grand_abs,
                vat: vec![SaleRecordVat {
                    vat_rate: 2000,
                    total_cents: total,
                    vat_cents: totals.iter().fold(0i64, |sum, t| sum.wrapping_add(t / 6)),
                }],
                closed_at: 0,
                late: None,
            };
            let text = payload::period_closure(&closure, day, previous_closure.as_deref());
            let entry = signed(key, ChainKind::Closure, day, text, previous_closure.clone(), &date);
            previous_closure = Some(entry.signature.clone());
            journal.closures.insert(day, closure);
            closures.push(entry);
        }
        let anchor = |seq: i64| (seq > 0).then_some(Anchor { seq, signature: None });
        journal.chains = vec![
            Chain {
                kind: ChainKind::Ticket,
                anchor: anchor(opening.last_ticket_seq),
                head: Some(seq),
                entries: tickets,
            },
            Chain {
                kind: ChainKind::Closure,
                anchor: None,
                head: Some(i64::try_from(closures.len()).unwrap()),
                entries: closures,
            },
        ];
        journal
    }

    fn signed(
        key: &FiscalKey,
        kind: ChainKind,
        seq: i64,
        payload: String,
        previous: Option<String>,
        reference: &str,
    ) -> Entry {
        Entry {
            register_id: "till-1".into(),
            kind,
            seq,
            signature: key.sign(&payload),
            payload,
            previous_signature: previous,
            key_id: key.key_id().into(),
            algorithm: ALGORITHM.into(),
            reference: reference.into(),
            created_at: jiff::Timestamp::UNIX_EPOCH,
        }
    }

    fn key() -> FiscalKey {
        FiscalKey::from_secret_bytes(&[5u8; 32]).unwrap()
    }

    #[test]
    fn an_intact_journal_passes() {
        assert_eq!(audit(&journal(&key(), 4)), Ok(5));
    }

    #[test]
    fn an_altered_sale_field_is_named() {
        let mut altered = journal(&key(), 4);
        altered.sales.get_mut("t2").unwrap().lines[0].label = Some("Other".into());
        let failure = audit(&altered).unwrap_err();
        assert_eq!(
            (failure.chain, failure.seq, failure.kind),
            (ChainKind::Ticket, 2, FailureKind::Altered)
        );
    }

    #[test]
    fn a_gap_and_a_truncation_are_found() {
        let mut gap = journal(&key(), 4);
        gap.chains[0].entries.remove(1);
        assert_eq!(audit(&gap).unwrap_err().kind, FailureKind::Gap);
        let mut truncated = journal(&key(), 4);
        truncated.chains[0].entries.truncate(3);
        let failure = audit(&truncated).unwrap_err();
        assert_eq!((failure.seq, failure.kind), (4, FailureKind::Truncated));
        // Without the head, the day closure's anchor still reveals the missing ticket.
        truncated.chains[0].head = None;
        let failure = audit(&truncated).unwrap_err();
        assert_eq!((failure.chain, failure.kind), (ChainKind::Closure, FailureKind::Anchor));
    }

    #[test]
    fn closure_sums_and_grand_totals_are_checked() {
        let key = key();
        let mut journal = journal(&key, 3);
        // Re-sign a closure with a wrong total: the signature holds, the sum does not.
        let closure = journal.closures.get_mut(&1).unwrap();
        closure.total_cents += 1;
        closure.grand_total_cents += 1;
        let text = payload::period_closure(closure, 1, None);
        journal.chains[1].entries[0] = signed(&key, ChainKind::Closure, 1, text, None, "2026-03-01");
        assert_eq!(audit(&journal).unwrap_err().kind, FailureKind::ClosureSum);
    }

    /// The failure `journal` ends with, found on a thread of its own: a panic there is an
    /// `Err` of the join, reported as such rather than taking the test runner down.
    fn failure_of(journal: Journal) -> Failure {
        let verdict = std::thread::spawn(move || audit(&journal)).join();
        verdict.expect("the audit panicked").expect_err("the audit passed")
    }

    #[test]
    fn tickets_summing_past_the_largest_amount_fail_the_closure() {
        let key = key();
        for totals in [[i64::MAX, 1], [i64::MIN, -1]] {
            let failure = failure_of(journal_of(&key, &[&totals], Opening::default()));
            assert_eq!(
                (failure.chain, failure.seq, failure.kind),
                (ChainKind::Closure, 1, FailureKind::ClosureSum),
                "{totals:?}: {failure}"
            );
            assert!(failure.detail.contains("largest amount"), "{failure}");
        }
        // A ticket of the smallest amount has no magnitude in an `i64`.
        let failure = failure_of(journal_of(&key, &[&[i64::MIN]], Opening::default()));
        assert_eq!(failure.kind, FailureKind::ClosureSum, "{failure}");
    }

    #[test]
    fn grand_totals_past_the_largest_amount_fail_the_closure() {
        let key = key();
        // Each day's sums hold; the second day's grand total cannot.
        let failure = failure_of(journal_of(&key, &[&[i64::MAX], &[1]], Opening::default()));
        assert_eq!(
            (failure.seq, failure.kind, failure.detail.contains("largest amount")),
            (2, FailureKind::GrandTotal, true),
            "{failure}"
        );
        let mut journal = journal(&key, 2);
        journal.opening.grand_total_abs_cents = i64::MAX - 1;
        assert_eq!(failure_of(journal).kind, FailureKind::GrandTotal);
    }

    #[test]
    fn days_summing_past_the_largest_amount_fail_their_month() {
        let key = key();
        // Grand totals that start low enough for both days to hold, then a month of them.
        let opening = Opening {
            grand_total_cents: i64::MIN + 1,
            grand_total_abs_cents: i64::MIN + 1,
            last_ticket_seq: 0,
        };
        let mut journal = journal_of(&key, &[&[i64::MAX], &[1]], opening);
        journal.closures.insert(3, unsealed(Period::Month, "2026-03-01", 0));
        let failure = failure_of(journal);
        assert_eq!(
            (failure.seq, failure.kind, failure.detail.contains("largest amount")),
            (3, FailureKind::ClosureSum, true),
            "{failure}"
        );
    }

    #[test]
    fn sequences_at_the_largest_integer_are_gaps() {
        // The ticket chain picks up after the largest sequence: no entry can follow it.
        let mut journal = journal(&key(), 2);
        journal.chains[0].anchor = Some(Anchor {
            seq: i64::MAX,
            signature: None,
        });
        let failure = failure_of(journal);
        assert_eq!(
            (failure.chain, failure.kind),
            (ChainKind::Ticket, FailureKind::Gap),
            "{failure}"
        );
        // The day before ended at the largest ticket: no day can start after it.
        let mut journal = self::journal(&key(), 2);
        journal.opening.last_ticket_seq = i64::MAX;
        assert_eq!(failure_of(journal).kind, FailureKind::ClosureSum);
        // A head past the end is a truncation whatever its value.
        let mut journal = self::journal(&key(), 2);
        journal.chains[0].head = Some(i64::MAX);
        assert_eq!(failure_of(journal).kind, FailureKind::Truncated);
    }

    /// A closure not sealed by any entry, with the figures and dates a damaged row could hold.
    fn unsealed(period: Period, period_from: &str, total: i64) -> ClosureRecord {
        ClosureRecord {
            register_id: "till-1".into(),
            period,
            period_from: period_from.into(),
            period_to: period_from.into(),
            ticket_count: 0,
            first_ticket_seq: 0,
            last_ticket_seq: 0,
            last_ticket_signature: None,
            total_cents: total,
            abs_total_cents: total,
            grand_total_cents: 0,
            grand_total_abs_cents: 0,
            vat: vec![],
            closed_at: 0,
            late: None,
        }
    }

    #[test]
    fn a_month_or_year_closure_with_a_period_that_is_no_date_fails_without_panicking() {
        for (period, from) in [
            (Period::Month, ""),
            (Period::Month, "2026-0"),
            (Period::Month, "2026-0\u{e9}-01"),
            (Period::Year, "20"),
            (Period::Year, "202\u{e9}"),
        ] {
            let mut journal = journal(&key(), 2);
            journal.closures.insert(7, unsealed(period, from, 0));
            let failure = failure_of(journal);
            assert_eq!(
                (failure.seq, failure.kind),
                (7, FailureKind::ClosureSum),
                "{from:?}: {failure}"
            );
        }
    }
}
