//! Instants on the wire: strict ISO 8601 parsing and one UTC output form.

use jiff::Timestamp;
use jiff::civil::{Date, DateTime, Time};
use jiff::tz::Offset;

/// Why a date-time was refused. The messages are written for the person who typed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InstantError {
    #[error("must be an ISO 8601 date-time such as 2026-03-01T09:30:00Z")]
    Syntax,
    #[error("must end in Z (UTC)")]
    NotUtc,
    #[error("is not a real calendar date or time")]
    NotOnCalendar,
    #[error("is out of the accepted range: years 0001 to 9998, or 0002 to 9997 when written with an offset")]
    OutOfRange,
}

/// The years an instant may be written in: 0001 to 9998 in UTC, a year less at either end with
/// an offset, so that every accepted text is an instant of the years 0001 to 9998 in UTC too and
/// is answered in the form it was accepted in.
const YEARS: std::ops::RangeInclusive<u32> = 1..=9998;
const YEARS_WITH_OFFSET: std::ops::RangeInclusive<u32> = 2..=9997;

/// The time of day after the date, seconds and fraction optional.
macro_rules! time_pattern {
    () => {
        "-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\\.[0-9]{1,9})?)?"
    };
}

/// Years 0001 to 9998.
macro_rules! years {
    () => {
        "(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-8])"
    };
}

/// Years 0002 to 9997.
macro_rules! years_with_offset {
    () => {
        "(?:000[2-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-7])"
    };
}

/// What [`parse_instant`] accepts with [`Zone::UtcOnly`], as a regular expression that
/// ECMA-262, Python and Rust read alike, for the OpenAPI document. Whether the date exists is
/// left to the `date-time` format beside it.
pub const UTC_PATTERN: &str = concat!("^", years!(), time_pattern!(), "Z$");

/// What [`parse_instant`] accepts with [`Zone::UtcOrOffset`], as [`UTC_PATTERN`] is for UTC.
pub const UTC_OR_OFFSET_PATTERN: &str = concat!(
    "^(?:",
    years!(),
    time_pattern!(),
    "Z|",
    years_with_offset!(),
    time_pattern!(),
    "[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$"
);

/// Which zone designators a field accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// Only `Z`.
    UtcOnly,
    /// `Z` or a `+hh:mm` / `-hh:mm` offset.
    UtcOrOffset,
}

/// Parses `YYYY-MM-DDTHH:MM[:SS[.fraction]]` followed by the zone designator `zone` allows.
/// Seconds and fraction are optional; the date must exist (2024-02-29 yes, 2026-02-30 no).
pub fn parse_instant(text: &str, zone: Zone) -> Result<Timestamp, InstantError> {
    let bytes = text.as_bytes();
    let (local, designator) = split_designator(bytes)?;
    let offset_seconds = match (designator, zone) {
        (Designator::Utc, _) => 0,
        (Designator::Offset(_), Zone::UtcOnly) => return Err(InstantError::NotUtc),
        (Designator::Offset(seconds), Zone::UtcOrOffset) => seconds,
    };
    let years = match designator {
        Designator::Utc => YEARS,
        Designator::Offset(_) => YEARS_WITH_OFFSET,
    };
    let datetime = parse_local(local, years)?;
    let offset = Offset::from_seconds(offset_seconds).map_err(|_| InstantError::NotOnCalendar)?;
    offset.to_timestamp(datetime).map_err(|_| InstantError::OutOfRange)
}

/// The time of day of a quarter hour, after the date.
macro_rules! quarter_hour_pattern {
    () => {
        "-[0-9]{2}-[0-9]{2}T[0-9]{2}:(?:00|15|30|45)(?::00(?:\\.0{1,9})?)?"
    };
}

/// What [`parse_quarter_hour`] accepts, as [`UTC_OR_OFFSET_PATTERN`] is for any instant: the
/// minutes of the time and of the offset 00, 15, 30 or 45, the seconds and fraction zero.
pub const QUARTER_HOUR_PATTERN: &str = concat!(
    "^(?:",
    years!(),
    quarter_hour_pattern!(),
    "Z|",
    years_with_offset!(),
    quarter_hour_pattern!(),
    "[+-](?:[01][0-9]|2[0-3]):(?:00|15|30|45))$"
);

/// Why a quarter hour was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QuarterHourError {
    #[error(transparent)]
    Instant(#[from] InstantError),
    #[error("must fall on a quarter hour: minutes 00, 15, 30 or 45 (offset too), no seconds")]
    NotOnQuarterHour,
}

/// Parses an instant written as [`parse_instant`] reads one with [`Zone::UtcOrOffset`] that
/// starts a quarter hour, in UTC as in its own offset: where a report may start or end, since
/// reports add sales up by quarter hours.
pub fn parse_quarter_hour(text: &str) -> Result<Timestamp, QuarterHourError> {
    const QUARTER_NANOS: i128 = 15 * 60 * 1_000_000_000;
    let at = parse_instant(text, Zone::UtcOrOffset)?;
    // With an offset of whole quarter hours, the local time starts one exactly when UTC does.
    let offset_minutes = match text.as_bytes() {
        [.., b'Z'] => 0,
        [.., m1, m2] => two_digits(*m1, *m2)?,
        _ => return Err(InstantError::Syntax.into()),
    };
    if at.as_nanosecond() % QUARTER_NANOS != 0 || offset_minutes % 15 != 0 {
        return Err(QuarterHourError::NotOnQuarterHour);
    }
    Ok(at)
}

/// The one output form: RFC 3339 in UTC ending in `Z`.
pub fn format_utc(at: Timestamp) -> String {
    at.to_string()
}

/// Microseconds since the Unix epoch, the storage form of every instant.
pub fn to_micros(at: Timestamp) -> i64 {
    // Every representable Timestamp fits: jiff's range is about ±10^4 years.
    at.as_microsecond()
}

pub fn from_micros(micros: i64) -> Timestamp {
    Timestamp::from_microsecond(micros).unwrap_or(Timestamp::UNIX_EPOCH)
}

#[derive(Clone, Copy)]
enum Designator {
    Utc,
    Offset(i32),
}

fn split_designator(bytes: &[u8]) -> Result<(&[u8], Designator), InstantError> {
    if let Some(local) = bytes.strip_suffix(b"Z") {
        return Ok((local, Designator::Utc));
    }
    // `+hh:mm` or `-hh:mm`; the sign must come after the date part (which has `-` of its own).
    if bytes.len() > 6 {
        let (local, zone) = bytes.split_at(bytes.len() - 6);
        if let [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] = zone {
            let hours = two_digits(*h1, *h2)?;
            let minutes = two_digits(*m1, *m2)?;
            if hours > 23 || minutes > 59 {
                return Err(InstantError::NotOnCalendar);
            }
            let seconds = (hours * 3600 + minutes * 60) as i32;
            return Ok((
                local,
                Designator::Offset(if *sign == b'-' { -seconds } else { seconds }),
            ));
        }
    }
    if bytes.ends_with(b"z") {
        return Err(InstantError::Syntax);
    }
    Err(InstantError::NotUtc)
}

fn parse_local(bytes: &[u8], years: std::ops::RangeInclusive<u32>) -> Result<DateTime, InstantError> {
    // YYYY-MM-DDTHH:MM is 16 bytes; then optionally :SS and .fraction.
    if bytes.len() < 16 || bytes[4] != b'-' || bytes[7] != b'-' || bytes[10] != b'T' || bytes[13] != b':' {
        return Err(InstantError::Syntax);
    }
    let year = four_digits(&bytes[0..4])?;
    if !years.contains(&year) {
        return Err(InstantError::OutOfRange);
    }
    let month = two_digits(bytes[5], bytes[6])?;
    let day = two_digits(bytes[8], bytes[9])?;
    let hour = two_digits(bytes[11], bytes[12])?;
    let minute = two_digits(bytes[14], bytes[15])?;
    let mut second = 0;
    let mut nanos = 0;
    let rest = &bytes[16..];
    if !rest.is_empty() {
        let [b':', s1, s2, fraction @ ..] = rest else {
            return Err(InstantError::Syntax);
        };
        second = two_digits(*s1, *s2)?;
        if !fraction.is_empty() {
            let [b'.', digits @ ..] = fraction else {
                return Err(InstantError::Syntax);
            };
            if digits.is_empty() || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
                return Err(InstantError::Syntax);
            }
            let mut value = 0u32;
            for digit in digits {
                value = value * 10 + u32::from(digit - b'0');
            }
            nanos = value * 10u32.pow(9 - digits.len() as u32);
        }
    }
    let date = Date::new(year as i16, month as i8, day as i8).map_err(|_| InstantError::NotOnCalendar)?;
    let time =
        Time::new(hour as i8, minute as i8, second as i8, nanos as i32).map_err(|_| InstantError::NotOnCalendar)?;
    Ok(date.to_datetime(time))
}

fn two_digits(a: u8, b: u8) -> Result<u32, InstantError> {
    if a.is_ascii_digit() && b.is_ascii_digit() {
        Ok(u32::from(a - b'0') * 10 + u32::from(b - b'0'))
    } else {
        Err(InstantError::Syntax)
    }
}

fn four_digits(bytes: &[u8]) -> Result<u32, InstantError> {
    Ok(two_digits(bytes[0], bytes[1])? * 100 + two_digits(bytes[2], bytes[3])?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> Result<Timestamp, InstantError> {
        parse_instant(text, Zone::UtcOnly)
    }

    #[test]
    fn utc_instants_accept_optional_seconds_and_fraction() {
        assert_eq!(format_utc(utc("2026-03-01T09:30Z").unwrap()), "2026-03-01T09:30:00Z");
        assert_eq!(format_utc(utc("2026-03-01T09:30:15Z").unwrap()), "2026-03-01T09:30:15Z");
        assert_eq!(
            format_utc(utc("2026-03-01T09:30:15.5Z").unwrap()),
            "2026-03-01T09:30:15.5Z"
        );
        assert_eq!(
            format_utc(utc("2026-03-01T09:30:15.123456789Z").unwrap()),
            "2026-03-01T09:30:15.123456789Z"
        );
    }

    #[test]
    fn utc_instants_must_be_on_the_calendar() {
        assert!(utc("2024-02-29T00:00:00Z").is_ok());
        assert_eq!(utc("2026-02-29T00:00:00Z"), Err(InstantError::NotOnCalendar));
        assert_eq!(utc("2026-02-30T00:00:00Z"), Err(InstantError::NotOnCalendar));
        assert_eq!(utc("2026-13-01T00:00:00Z"), Err(InstantError::NotOnCalendar));
        assert_eq!(utc("2026-01-01T24:00:00Z"), Err(InstantError::NotOnCalendar));
        assert_eq!(utc("2026-01-01T23:60:00Z"), Err(InstantError::NotOnCalendar));
        assert_eq!(utc("2026-01-01T23:59:60Z"), Err(InstantError::NotOnCalendar));
    }

    #[test]
    fn utc_instants_refuse_offsets_and_bad_syntax() {
        assert_eq!(utc("2026-03-01T09:30:00+01:00"), Err(InstantError::NotUtc));
        assert_eq!(utc("2026-03-01T09:30:00"), Err(InstantError::NotUtc));
        assert_eq!(utc("2026-03-01 09:30:00Z"), Err(InstantError::Syntax));
        assert_eq!(utc("2026-03-01T09:30:00.Z"), Err(InstantError::Syntax));
        assert_eq!(utc("2026-03-01T9:30:00Z"), Err(InstantError::Syntax));
        assert_eq!(utc("2026-03-01Z"), Err(InstantError::Syntax));
        assert_eq!(utc("2026-03-01T09:30:00z"), Err(InstantError::Syntax));
        assert_eq!(utc(""), Err(InstantError::NotUtc));
    }

    #[test]
    fn offsets_convert_to_utc() {
        let at = parse_instant("2026-03-01T09:30:00+01:00", Zone::UtcOrOffset).unwrap();
        assert_eq!(format_utc(at), "2026-03-01T08:30:00Z");
        let at = parse_instant("2026-03-01T23:30-02:30", Zone::UtcOrOffset).unwrap();
        assert_eq!(format_utc(at), "2026-03-02T02:00:00Z");
        assert!(parse_instant("2026-03-01T09:30:00+24:00", Zone::UtcOrOffset).is_err());
    }

    #[test]
    fn instants_past_the_accepted_years_say_so() {
        assert_eq!(utc("9999-12-31T23:59:59Z"), Err(InstantError::OutOfRange));
        assert_eq!(utc("0000-01-01T00:00:00Z"), Err(InstantError::OutOfRange));
        assert!(InstantError::OutOfRange.to_string().contains("years 0001 to 9998"));
        assert_eq!(
            utc("9998-12-31T23:59:59.999999999Z").map(format_utc).as_deref(),
            Ok("9998-12-31T23:59:59.999999999Z")
        );
        assert!(utc("0001-01-01T00:00:00Z").is_ok());
        let offset = |text| parse_instant(text, Zone::UtcOrOffset);
        assert_eq!(offset("9998-01-01T00:00:00+01:00"), Err(InstantError::OutOfRange));
        assert_eq!(offset("0001-12-31T23:00:00-01:00"), Err(InstantError::OutOfRange));
        // With an offset, the extreme texts still land in the accepted years once in UTC.
        assert_eq!(
            offset("9997-12-31T23:59-23:59").map(format_utc).as_deref(),
            Ok("9998-01-01T23:58:00Z")
        );
        assert_eq!(
            offset("0002-01-01T00:00+23:59").map(format_utc).as_deref(),
            Ok("0001-12-31T00:01:00Z")
        );
    }

    #[test]
    fn the_documented_patterns_are_what_is_accepted() {
        assert_eq!(
            UTC_PATTERN,
            r"^(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-8])-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?Z$"
        );
        // Every year the patterns let through is accepted, and no other.
        for year in 0..=9999u32 {
            let text = format!("{year:04}-06-15T12:00:00");
            let z_accepted = utc(&format!("{text}Z")).is_ok();
            assert_eq!(z_accepted, (1..=9998).contains(&year), "{year}");
            let offset_accepted = parse_instant(&format!("{text}+01:00"), Zone::UtcOrOffset).is_ok();
            assert_eq!(offset_accepted, (2..=9997).contains(&year), "{year}");
        }
    }

    #[test]
    fn quarter_hours_start_one_in_utc_and_in_their_own_offset() {
        let read = |text| parse_quarter_hour(text).map(format_utc);
        assert_eq!(read("2026-03-29T00:00+01:00").as_deref(), Ok("2026-03-28T23:00:00Z"));
        assert_eq!(read("2026-03-29T10:45Z").as_deref(), Ok("2026-03-29T10:45:00Z"));
        assert_eq!(
            read("2026-03-29T10:15:00.000+05:45").as_deref(),
            Ok("2026-03-29T04:30:00Z")
        );
        for text in [
            "2026-03-29T10:10Z",
            "2026-03-29T10:15:01Z",
            "2026-03-29T10:15:00.5Z",
            // Whole in UTC (10:00Z), not in its own offset.
            "2026-03-29T10:07+00:07",
        ] {
            assert_eq!(read(text), Err(QuarterHourError::NotOnQuarterHour), "{text}");
        }
        assert_eq!(
            read("2026-02-30T10:00Z"),
            Err(QuarterHourError::Instant(InstantError::NotOnCalendar))
        );
        assert_eq!(read("yesterday"), Err(QuarterHourError::Instant(InstantError::NotUtc)));
    }

    #[test]
    fn micros_round_trip() {
        let at = utc("2026-03-01T09:30:15.123456Z").unwrap();
        assert_eq!(from_micros(to_micros(at)), at);
    }
}
