//! The checks of a FEC file that the administration's test tool makes on the file alone, and the
//! parsing of its dates and amounts they need.

use super::{COLUMNS, fec_amount};
use jiff::civil::Date;
use std::collections::BTreeMap;

/// The checks of the administration's test tool (Test Compta Demat) that can be made on the
/// file alone, in the order it reports them. The first defect is answered, with its line.
pub fn check(text: &str) -> Result<Checked, String> {
    let body = text
        .strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .unwrap_or(text);
    let mut lines = body.split('\n').map(|line| line.strip_suffix('\r').unwrap_or(line));
    let header = lines.next().unwrap_or_default();
    if header.split('\t').collect::<Vec<_>>() != COLUMNS {
        return Err(format!(
            "line 1: the header is not the 18 column names in order: {header:?}"
        ));
    }
    let mut checked = Checked::default();
    let mut balance: Option<(String, String, i64, i64)> = None;
    let mut seen: BTreeMap<String, u64> = BTreeMap::new();
    let mut last_date: Option<Date> = None;
    for (index, line) in lines.enumerate() {
        let at = index + 2;
        let fields: Vec<&str> = line.split('\t').collect();
        if fields.len() != COLUMNS.len() {
            return Err(format!("line {at}: {} fields, not 18", fields.len()));
        }
        let [
            journal,
            journal_label,
            number,
            date,
            account,
            account_label,
            _,
            _,
            piece,
            piece_date,
            label,
            debit,
            credit,
            _,
            date_let,
            valid,
            foreign,
            _,
        ] = fields[..]
        else {
            return Err(format!("line {at}: not 18 fields"));
        };
        for (name, value) in [
            ("JournalCode", journal),
            ("JournalLib", journal_label),
            ("EcritureNum", number),
            ("CompteNum", account),
            ("CompteLib", account_label),
            ("PieceRef", piece),
            ("EcritureLib", label),
        ] {
            if value.trim().is_empty() {
                return Err(format!("line {at}: {name} is empty"));
            }
        }
        let date = parse_date(date).ok_or_else(|| format!("line {at}: EcritureDate {date:?} is not YYYYMMDD"))?;
        parse_date(piece_date).ok_or_else(|| format!("line {at}: PieceDate {piece_date:?} is not YYYYMMDD"))?;
        let valid = parse_date(valid).ok_or_else(|| format!("line {at}: ValidDate {valid:?} is not YYYYMMDD"))?;
        if !date_let.is_empty() && parse_date(date_let).is_none() {
            return Err(format!("line {at}: DateLet {date_let:?} is not YYYYMMDD"));
        }
        if valid < date {
            return Err(format!("line {at}: ValidDate is before EcritureDate"));
        }
        let debit = parse_amount(debit)
            .ok_or_else(|| format!("line {at}: Debit {debit:?} is not an amount such as 1234,50"))?;
        let credit = parse_amount(credit)
            .ok_or_else(|| format!("line {at}: Credit {credit:?} is not an amount such as 1234,50"))?;
        if !foreign.is_empty() && parse_amount(foreign.trim_start_matches('-')).is_none() {
            return Err(format!("line {at}: Montantdevise {foreign:?} is not an amount"));
        }
        if debit != 0 && credit != 0 {
            return Err(format!("line {at}: both Debit and Credit are filled"));
        }
        if last_date.is_some_and(|last| date < last) {
            return Err(format!("line {at}: EcritureDate goes back in time"));
        }
        last_date = Some(date);
        let same_entry = balance.as_ref().is_some_and(|(j, n, _, _)| j == journal && n == number);
        if !same_entry {
            if let Some(done) = balance.take() {
                close_entry(&done, at)?;
                checked.entries += 1;
            }
            let numeric: u64 = number
                .parse()
                .map_err(|_| format!("line {at}: EcritureNum {number:?} is not a number"))?;
            let expected = seen.get(journal).map_or(1, |last| last + 1);
            if numeric != expected {
                return Err(format!(
                    "line {at}: entry {number} of journal {journal} follows {}; entries are numbered without gaps",
                    expected - 1
                ));
            }
            seen.insert(journal.to_owned(), numeric);
            balance = Some((journal.to_owned(), number.to_owned(), 0, 0));
        }
        if let Some((_, _, d, c)) = balance.as_mut() {
            *d = d
                .checked_add(debit)
                .ok_or_else(|| format!("line {at}: debits pass the largest amount"))?;
            *c = c
                .checked_add(credit)
                .ok_or_else(|| format!("line {at}: credits pass the largest amount"))?;
        }
        checked.lines += 1;
        checked.debit_cents = checked
            .debit_cents
            .checked_add(debit)
            .ok_or("debits pass the largest amount")?;
        checked.credit_cents = checked
            .credit_cents
            .checked_add(credit)
            .ok_or("credits pass the largest amount")?;
    }
    if let Some(done) = balance.take() {
        close_entry(&done, checked.lines + 2)?;
        checked.entries += 1;
    }
    Ok(checked)
}

fn close_entry((journal, number, debit, credit): &(String, String, i64, i64), at: usize) -> Result<(), String> {
    if debit == credit {
        Ok(())
    } else {
        Err(format!(
            "before line {at}: entry {number} of journal {journal} does not balance: debit {}, credit {}",
            fec_amount(*debit),
            fec_amount(*credit)
        ))
    }
}

/// What a file that passed [`check`] holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    pub lines: usize,
    pub entries: usize,
    pub debit_cents: i64,
    pub credit_cents: i64,
}

fn parse_date(text: &str) -> Option<Date> {
    (text.len() == 8 && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| Date::strptime("%Y%m%d", text).ok())
        .flatten()
}

/// `digits,dd` into cents; nothing else (no sign, no point, no thousands separator).
pub fn parse_amount(text: &str) -> Option<i64> {
    let (units, hundredths) = text.split_once(',')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(units) || hundredths.len() != 2 || !digits(hundredths) {
        return None;
    }
    units
        .parse::<i64>()
        .ok()?
        .checked_mul(100)?
        .checked_add(hundredths.parse().ok()?)
}
