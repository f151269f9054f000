//! Time in reports: UTC quarter hours ([`Bucket`]), the coarser grains rollups are kept at,
//! and a report's period cut into runs of whole days, hours and quarter hours.

use jiff::{Span, Timestamp};

/// The longest period one report covers: a leap year.
pub const MAX_REPORT_DAYS: i64 = 366;

const QUARTER_HOUR_MICROS: i64 = 15 * 60 * 1_000_000;

/// A quarter hour of UTC time, numbered from the Unix epoch: the grain of every rollup.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bucket(i64);

impl Bucket {
    /// The quarter hour an instant (microseconds since the epoch) falls in.
    pub fn of_micros(micros: i64) -> Bucket {
        Bucket(micros.div_euclid(QUARTER_HOUR_MICROS))
    }

    /// The quarter hour `at` falls in.
    pub fn of(at: Timestamp) -> Bucket {
        Bucket::of_micros(at.as_microsecond())
    }

    pub fn from_index(index: i64) -> Bucket {
        Bucket(index)
    }

    pub fn index(self) -> i64 {
        self.0
    }

    /// The quarter hour after this one.
    pub fn next(self) -> Bucket {
        Bucket(self.0.saturating_add(1))
    }

    /// When the quarter hour starts.
    pub fn start(self) -> Timestamp {
        Timestamp::from_microsecond(self.0.saturating_mul(QUARTER_HOUR_MICROS)).unwrap_or(Timestamp::UNIX_EPOCH)
    }
}

/// How much time one rollup row spans: a quarter hour, or a whole UTC hour or day of them.
/// Long periods add up few day rows; their ends, hours and quarter hours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Grain {
    Quarter,
    Hour,
    Day,
}

impl Grain {
    /// Quarter hours in one span.
    pub fn quarters(self) -> i64 {
        match self {
            Grain::Quarter => 1,
            Grain::Hour => 4,
            Grain::Day => 96,
        }
    }

    /// The first quarter hour of the span `bucket` is in.
    pub fn start(self, bucket: Bucket) -> Bucket {
        Bucket(bucket.0.div_euclid(self.quarters()) * self.quarters())
    }

    /// The first quarter hour of the first span that starts at or after `bucket`.
    fn start_at_or_after(self, bucket: Bucket) -> Bucket {
        let start = self.start(bucket);
        if start == bucket {
            start
        } else {
            Bucket(start.0.saturating_add(self.quarters()))
        }
    }
}

/// A run of whole spans of one grain: quarter hours `from` (inclusive) to `to` (exclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub grain: Grain,
    pub from: Bucket,
    pub to: Bucket,
}

/// The period a report covers, `from` inclusive, `to` exclusive, both on quarter hours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    from: Timestamp,
    to: Timestamp,
}

/// Why a period was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PeriodError {
    #[error("must be after from")]
    Empty,
    #[error("must be at most 366 days after from")]
    TooLong,
    #[error("must fall on a quarter hour")]
    NotOnQuarterHour,
}

impl Period {
    pub fn new(from: Timestamp, to: Timestamp) -> Result<Period, PeriodError> {
        let on_quarter = |at: Timestamp| at.as_microsecond().rem_euclid(QUARTER_HOUR_MICROS) == 0;
        if !on_quarter(from) || !on_quarter(to) {
            return Err(PeriodError::NotOnQuarterHour);
        }
        if from >= to {
            return Err(PeriodError::Empty);
        }
        let longest = Span::new().hours(24 * MAX_REPORT_DAYS);
        if from.checked_add(longest).is_ok_and(|latest| to > latest) {
            return Err(PeriodError::TooLong);
        }
        Ok(Period { from, to })
    }

    pub fn from(self) -> Timestamp {
        self.from
    }

    pub fn to(self) -> Timestamp {
        self.to
    }

    /// The first quarter hour of the period and the first after it.
    pub fn buckets(self) -> (Bucket, Bucket) {
        (Bucket::of(self.from), Bucket::of(self.to))
    }

    /// The period cut into the fewest runs of whole spans of `grains` (coarsest first; the
    /// last must be [`Grain::Quarter`]): whole days in the middle, then whole hours, then
    /// quarter hours at the ends.
    pub fn segments(self, grains: &[Grain]) -> Vec<Segment> {
        let (from, to) = self.buckets();
        let mut segments = Vec::new();
        cut(from, to, grains, &mut segments);
        segments
    }
}

/// Cuts `[from, to)` into whole spans of the first of `grains` and, at its ends, of the next.
fn cut(from: Bucket, to: Bucket, grains: &[Grain], segments: &mut Vec<Segment>) {
    let Some((&grain, finer)) = grains.split_first() else {
        return;
    };
    if from >= to {
        return;
    }
    if finer.is_empty() {
        segments.push(Segment { grain, from, to });
        return;
    }
    let (inner_from, inner_to) = (grain.start_at_or_after(from), grain.start(to));
    if inner_from >= inner_to {
        cut(from, to, finer, segments);
        return;
    }
    cut(from, inner_from, finer, segments);
    segments.push(Segment {
        grain,
        from: inner_from,
        to: inner_to,
    });
    cut(inner_to, to, finer, segments);
}
