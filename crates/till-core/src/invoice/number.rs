//! An invoice's number, `F-{storeId}-{year}-{seq}`: one gapless sequence per store and year,
//! from one, written with at least six digits so that numbers of a year sort as they were issued.
//! A store id may hold dashes; the year and the sequence never do, so a number is read from its
//! end.

use crate::ids::StoreId;
use std::fmt;

/// A number as issued: the store, the year of its issue date, its place in that year.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InvoiceNumber {
    store_id: StoreId,
    year: i16,
    seq: u64,
}

/// Why a text is not an invoice number, or why no next number can be had.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NumberProblem {
    #[error("must be F-{{storeId}}-{{year}}-{{sequence}}")]
    Form,
    #[error("must have a year of 4 digits")]
    Year,
    /// Leading zeros past the six-digit width, a zero, or not digits at all.
    #[error("must have a sequence from 000001, written with at least 6 digits")]
    Sequence,
    /// The last number given belongs to another store.
    #[error("the last number is of another store")]
    AnotherStore,
    #[error("the sequence of the year is exhausted")]
    Exhausted,
}

const PREFIX: &str = "F-";
const WIDTH: usize = 6;

impl InvoiceNumber {
    /// The first number of `store_id` in `year`.
    pub fn first(store_id: StoreId, year: i16) -> Result<InvoiceNumber, NumberProblem> {
        if !(1..=9999).contains(&year) {
            return Err(NumberProblem::Year);
        }
        Ok(InvoiceNumber { store_id, year, seq: 1 })
    }

    /// The number that follows `last`, the store's last number issued (none yet: `None`), for
    /// an invoice issued in `year`: the sequence starts again from one each year.
    /// The number `seq` of `store_id`'s `year`, as storage counted it.
    pub fn of(store_id: StoreId, year: i16, seq: u64) -> Result<InvoiceNumber, NumberProblem> {
        if seq == 0 {
            return Err(NumberProblem::Sequence);
        }
        Ok(InvoiceNumber {
            seq,
            ..InvoiceNumber::first(store_id, year)?
        })
    }

    pub fn next(last: Option<&InvoiceNumber>, store_id: &StoreId, year: i16) -> Result<InvoiceNumber, NumberProblem> {
        let Some(last) = last else {
            return InvoiceNumber::first(store_id.clone(), year);
        };
        if &last.store_id != store_id {
            return Err(NumberProblem::AnotherStore);
        }
        if last.year != year {
            return InvoiceNumber::first(store_id.clone(), year);
        }
        let seq = last.seq.checked_add(1).ok_or(NumberProblem::Exhausted)?;
        Ok(InvoiceNumber { seq, ..last.clone() })
    }

    /// Reads a number as [`fmt::Display`] writes it, and only so: `format(parse(text)) == text`.
    pub fn parse(text: &str) -> Result<InvoiceNumber, NumberProblem> {
        let rest = text.strip_prefix(PREFIX).ok_or(NumberProblem::Form)?;
        let (rest, seq) = rest.rsplit_once('-').ok_or(NumberProblem::Form)?;
        let (store, year) = rest.rsplit_once('-').ok_or(NumberProblem::Form)?;
        let store_id = StoreId::parse(store).map_err(|_| NumberProblem::Form)?;
        let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
        if year.len() != 4 || !digits(year) {
            return Err(NumberProblem::Year);
        }
        let year: i16 = year.parse().map_err(|_| NumberProblem::Year)?;
        let padded = seq.len() == WIDTH || !seq.starts_with('0');
        if !digits(seq) || seq.len() < WIDTH || !padded {
            return Err(NumberProblem::Sequence);
        }
        let seq: u64 = seq.parse().map_err(|_| NumberProblem::Sequence)?;
        if seq == 0 || year == 0 {
            return Err(if seq == 0 {
                NumberProblem::Sequence
            } else {
                NumberProblem::Year
            });
        }
        Ok(InvoiceNumber { store_id, year, seq })
    }

    pub fn store_id(&self) -> &StoreId {
        &self.store_id
    }

    pub fn year(&self) -> i16 {
        self.year
    }

    pub fn seq(&self) -> u64 {
        self.seq
    }
}

impl fmt::Display for InvoiceNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}-{:04}-{:0WIDTH$}", self.store_id, self.year, self.seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn store(id: &str) -> StoreId {
        StoreId::parse(id).unwrap()
    }

    #[test]
    fn numbers_read_from_their_end() {
        let number = InvoiceNumber::parse("F-paris-marais-2026-000042").unwrap();
        assert_eq!(number.store_id().as_str(), "paris-marais");
        assert_eq!((number.year(), number.seq()), (2026, 42));
        assert_eq!(number.to_string(), "F-paris-marais-2026-000042");
        assert_eq!(
            InvoiceNumber::parse("F-s1-2026-1234567").unwrap().seq(),
            1_234_567,
            "past six digits the sequence grows"
        );
    }

    #[test]
    fn only_the_written_form_is_read() {
        let refused = [
            ("", NumberProblem::Form),
            ("F-2026-000001", NumberProblem::Form),
            ("G-s1-2026-000001", NumberProblem::Form),
            ("F--2026-000001", NumberProblem::Form),
            ("F-s1-26-000001", NumberProblem::Year),
            ("F-s1-0000-000001", NumberProblem::Year),
            ("F-s1-２０２６-000001", NumberProblem::Year),
            ("F-s1-2026-1", NumberProblem::Sequence),
            ("F-s1-2026-000000", NumberProblem::Sequence),
            ("F-s1-2026-0000001", NumberProblem::Sequence),
            ("F-s1-2026-+00001", NumberProblem::Sequence),
            ("F-s1-2026-99999999999999999999", NumberProblem::Sequence),
        ];
        for (text, problem) in refused {
            assert_eq!(InvoiceNumber::parse(text), Err(problem), "{text}");
        }
    }

    #[test]
    fn the_sequence_follows_the_last_number_and_starts_again_each_year() {
        let s1 = store("s1");
        let first = InvoiceNumber::next(None, &s1, 2026).unwrap();
        assert_eq!(first.to_string(), "F-s1-2026-000001");
        let second = InvoiceNumber::next(Some(&first), &s1, 2026).unwrap();
        assert_eq!(second.to_string(), "F-s1-2026-000002");
        let new_year = InvoiceNumber::next(Some(&second), &s1, 2027).unwrap();
        assert_eq!(new_year.to_string(), "F-s1-2027-000001");
        assert_eq!(
            InvoiceNumber::next(Some(&second), &store("s2"), 2026),
            Err(NumberProblem::AnotherStore)
        );
        let last = InvoiceNumber {
            store_id: s1.clone(),
            year: 2026,
            seq: u64::MAX,
        };
        assert_eq!(
            InvoiceNumber::next(Some(&last), &s1, 2026),
            Err(NumberProblem::Exhausted)
        );
        assert_eq!(InvoiceNumber::first(s1, 10_000), Err(NumberProblem::Year));
    }

    proptest! {
        /// Every number written reads back as itself.
        #[test]
        fn a_number_round_trips(store_id in "[a-z0-9-]{1,20}", year in 1i16..=9999, seq in 1u64..u64::MAX) {
            let number = InvoiceNumber { store_id: store(&store_id), year, seq };
            prop_assert_eq!(InvoiceNumber::parse(&number.to_string()), Ok(number));
        }

        /// No text makes the parser panic, and whatever it reads it writes back unchanged.
        #[test]
        fn any_text_is_read_or_refused(text in "\\PC{0,30}", tail in "F-[a-z-]{0,4}-[0-9]{0,5}-[0-9]{0,8}") {
            for text in [text, tail] {
                if let Ok(number) = InvoiceNumber::parse(&text) {
                    prop_assert_eq!(number.to_string(), text);
                }
            }
        }
    }
}
