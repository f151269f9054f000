//! A register's fiscal periods: days (`YYYY-MM-DD`, in the store's time zone), months
//! (`YYYY-MM`) and years (`YYYY`). A day closes at the first ticket after its midnight; a month
//! and a year close the same way once a later one has begun. Written as text, a period sorts
//! as it falls in time, and so is compared here. A month's closure combines its days', a
//! year's its months'.

use crate::fiscal::payload::{ClosureRecord, Period, SaleRecordVat};
use crate::ids::SessionId;

/// The month a day falls in.
pub fn month_of(day: &str) -> &str {
    &day[..7]
}

/// The year a day or a month falls in.
pub fn year_of(period: &str) -> &str {
    &period[..4]
}

/// Where a register's periods stand, as its record keeps them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Standing<'a> {
    /// The day the register has tickets on that no closure covers yet.
    pub open_day: Option<&'a str>,
    pub last_day: Option<&'a str>,
    pub last_month: Option<&'a str>,
    pub last_year: Option<&'a str>,
}

/// The periods that ended before today and are still open, in the order they close: a day
/// closed now may end its month, and a month its year.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Due {
    pub day: Option<String>,
    pub month: Option<String>,
    pub year: Option<String>,
}

impl Due {
    /// What is due for a register standing as `standing` on the local day `today`.
    pub fn of(standing: Standing<'_>, today: &str) -> Due {
        let day = standing.open_day.filter(|day| *day < today).map(str::to_owned);
        let month = to_close(
            day.as_deref().or(standing.last_day),
            standing.last_month,
            month_of,
            today,
        );
        let year = to_close(
            month.as_deref().or(standing.last_month),
            standing.last_year,
            year_of,
            today,
        );
        Due { day, month, year }
    }

    pub fn is_empty(&self) -> bool {
        self.day.is_none() && self.month.is_none() && self.year.is_none()
    }
}

/// The period (`of` the last closed `shorter` one) if it is not closed yet and `today` is
/// past it.
fn to_close(shorter: Option<&str>, closed: Option<&str>, of: fn(&str) -> &str, today: &str) -> Option<String> {
    let period = of(shorter?);
    (closed.is_none_or(|closed| closed < period) && period < of(today)).then(|| period.to_owned())
}

/// The day through which a register was closed early, when `today` falls in that closed
/// period: no ticket is booked on the register then, and no session opens on it.
pub fn closed_early<'a>(today: &str, closed_through: Option<&'a str>) -> Option<&'a str> {
    closed_through.filter(|through| today <= *through)
}

/// A day closed while it is not over and a session of its register is open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionOpenOnDay {
    pub session: SessionId,
}

/// Whether `day` may be closed on the local day `today`, `open_session` being the register's
/// session open now, if any. A day that is over closes whatever is open (a shift running past
/// midnight). A day that is not over closes only with no session open: the session would stay
/// open on a day that books nothing more, every one of its sales refused until midnight.
pub fn may_close_day(day: &str, today: &str, open_session: Option<&SessionId>) -> Result<(), SessionOpenOnDay> {
    match open_session {
        Some(session) if day >= today => Err(SessionOpenOnDay {
            session: session.clone(),
        }),
        _ => Ok(()),
    }
}

/// A month's closure from its days', or a year's from its months': their totals and VAT
/// summed, the tickets they cover, and the grand totals the last of them reached. `None`
/// without a closure beneath.
pub fn combine(
    register_id: &str,
    period: Period,
    from: String,
    to: String,
    parts: &[ClosureRecord],
    now: i64,
) -> Option<ClosureRecord> {
    let mut vat: Vec<SaleRecordVat> = Vec::new();
    for part in parts {
        for line in &part.vat {
            match vat.iter_mut().find(|v| v.vat_rate == line.vat_rate) {
                Some(v) => {
                    v.total_cents += line.total_cents;
                    v.vat_cents += line.vat_cents;
                }
                None => vat.push(line.clone()),
            }
        }
    }
    vat.sort_by_key(|v| std::cmp::Reverse(v.vat_rate));
    let with_tickets: Vec<&ClosureRecord> = parts.iter().filter(|p| p.ticket_count > 0).collect();
    let last = parts.last()?;
    Some(ClosureRecord {
        register_id: register_id.to_owned(),
        period,
        period_from: from,
        period_to: to,
        ticket_count: parts.iter().map(|p| p.ticket_count).sum(),
        first_ticket_seq: with_tickets.first().map_or(0, |p| p.first_ticket_seq),
        last_ticket_seq: with_tickets.last().map_or(0, |p| p.last_ticket_seq),
        last_ticket_signature: with_tickets.last().and_then(|p| p.last_ticket_signature.clone()),
        total_cents: parts.iter().map(|p| p.total_cents).sum(),
        abs_total_cents: parts.iter().map(|p| p.abs_total_cents).sum(),
        grand_total_cents: last.grand_total_cents,
        grand_total_abs_cents: last.grand_total_abs_cents,
        vat,
        closed_at: now,
        // Late sales are shown apart on the day that received them; a month sums its days.
        late: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn due(day: Option<&str>, month: Option<&str>, year: Option<&str>) -> Due {
        Due {
            day: day.map(str::to_owned),
            month: month.map(str::to_owned),
            year: year.map(str::to_owned),
        }
    }

    #[test]
    fn a_day_not_over_closes_only_with_no_session_open() {
        let session = SessionId::from_trusted("ses_1".to_owned());
        assert_eq!(may_close_day("2026-11-26", "2026-11-26", None), Ok(()));
        assert_eq!(
            may_close_day("2026-11-26", "2026-11-26", Some(&session)),
            Err(SessionOpenOnDay {
                session: session.clone()
            })
        );
        assert_eq!(
            may_close_day("2026-11-25", "2026-11-26", Some(&session)),
            Ok(()),
            "yesterday closes while today's shift runs"
        );
    }

    #[test]
    fn a_day_closed_early_stays_closed_through_its_period() {
        assert_eq!(closed_early("2026-11-26", None), None);
        assert_eq!(closed_early("2026-11-26", Some("2026-11-26")), Some("2026-11-26"));
        assert_eq!(
            closed_early("2026-11-26", Some("2026-11-30")),
            Some("2026-11-30"),
            "a month closed early"
        );
        assert_eq!(closed_early("2026-11-27", Some("2026-11-26")), None, "the next day");
    }

    #[test]
    fn periods_are_named_by_their_prefix() {
        assert_eq!(month_of("2025-03-31"), "2025-03");
        assert_eq!(year_of("2025-03-31"), "2025");
        assert_eq!(year_of("2025-03"), "2025");
    }

    #[test]
    fn nothing_is_due_on_the_day_the_register_has_tickets_on() {
        let standing = Standing {
            open_day: Some("2025-03-14"),
            last_day: Some("2025-03-13"),
            last_month: Some("2025-02"),
            last_year: Some("2024"),
        };
        let due = Due::of(standing, "2025-03-14");
        assert!(due.is_empty(), "{due:?}");
    }

    #[test]
    fn the_first_ticket_after_midnight_closes_the_day_before() {
        let standing = Standing {
            open_day: Some("2025-03-14"),
            last_day: Some("2025-03-13"),
            last_month: Some("2025-02"),
            last_year: Some("2024"),
        };
        assert_eq!(Due::of(standing, "2025-03-15"), due(Some("2025-03-14"), None, None));
    }

    #[test]
    fn a_day_that_ends_its_month_and_year_closes_all_three() {
        let standing = Standing {
            open_day: Some("2025-12-31"),
            last_day: Some("2025-12-30"),
            last_month: Some("2025-11"),
            last_year: Some("2024"),
        };
        assert_eq!(
            Due::of(standing, "2026-01-02"),
            due(Some("2025-12-31"), Some("2025-12"), Some("2025"))
        );
    }

    #[test]
    fn a_month_ends_even_when_its_last_day_had_no_ticket_open() {
        // The last day with tickets was closed early (or by a session's close): nothing is open
        // on a day, but its month has ended since.
        let standing = Standing {
            open_day: None,
            last_day: Some("2025-03-20"),
            last_month: Some("2025-02"),
            last_year: Some("2024"),
        };
        assert_eq!(Due::of(standing, "2025-04-01"), due(None, Some("2025-03"), None));
    }

    #[test]
    fn a_period_closed_already_is_not_closed_again() {
        let standing = Standing {
            open_day: None,
            last_day: Some("2025-03-20"),
            last_month: Some("2025-03"),
            last_year: Some("2024"),
        };
        assert!(Due::of(standing, "2025-04-01").is_empty());
        let closed_year = Standing {
            open_day: None,
            last_day: Some("2025-12-31"),
            last_month: Some("2025-12"),
            last_year: Some("2025"),
        };
        assert!(Due::of(closed_year, "2026-01-05").is_empty());
    }

    #[test]
    fn a_new_register_has_nothing_to_close() {
        assert!(Due::of(Standing::default(), "2025-03-14").is_empty());
    }

    fn day(on: &str, tickets: (i64, i64), total: i64, grand: i64, vat: &[(i64, i64)]) -> ClosureRecord {
        let (first, last) = tickets;
        ClosureRecord {
            register_id: "till-1".into(),
            period: Period::Day,
            period_from: on.into(),
            period_to: on.into(),
            ticket_count: if last > 0 { last - first + 1 } else { 0 },
            first_ticket_seq: first,
            last_ticket_seq: last,
            last_ticket_signature: (last > 0).then(|| format!("sig-{last}")),
            total_cents: total,
            abs_total_cents: total.abs(),
            grand_total_cents: grand,
            grand_total_abs_cents: grand.abs(),
            vat: vat
                .iter()
                .map(|&(rate, total)| SaleRecordVat {
                    vat_rate: rate,
                    total_cents: total,
                    vat_cents: total / 10,
                })
                .collect(),
            closed_at: 0,
            late: None,
        }
    }

    /// March 2025's closure from `days`, closed at 9.
    fn march(days: &[ClosureRecord]) -> ClosureRecord {
        let (from, to) = ("2025-03-01".into(), "2025-03-31".into());
        combine("till-1", Period::Month, from, to, days, 9).expect("days to combine")
    }

    #[test]
    fn a_month_sums_its_days_and_spans_the_tickets_they_cover() {
        let days = [
            day("2025-03-01", (1, 3), 3000, 3000, &[(550, 1000), (2000, 2000)]),
            day("2025-03-02", (0, 0), 0, 3000, &[]),
            day("2025-03-03", (4, 4), 500, 3500, &[(2000, 500)]),
        ];
        let month = march(&days);
        assert_eq!(
            (month.period, month.period_from.as_str()),
            (Period::Month, "2025-03-01")
        );
        assert_eq!(month.period_to, "2025-03-31");
        assert_eq!(
            (month.ticket_count, month.total_cents, month.abs_total_cents),
            (4, 3500, 3500)
        );
        assert_eq!((month.first_ticket_seq, month.last_ticket_seq), (1, 4));
        assert_eq!(month.last_ticket_signature.as_deref(), Some("sig-4"));
        assert_eq!(month.grand_total_cents, 3500, "the grand total the last day reached");
        let vat: Vec<(i64, i64)> = month.vat.iter().map(|v| (v.vat_rate, v.total_cents)).collect();
        assert_eq!(vat, [(2000, 2500), (550, 1000)], "one line a rate, highest first");
        assert_eq!(month.closed_at, 9);
    }

    #[test]
    fn a_period_without_tickets_covers_none_and_keeps_the_grand_totals() {
        let days = [day("2025-03-01", (0, 0), 0, 7000, &[])];
        let month = march(&days);
        assert_eq!(
            (month.ticket_count, month.first_ticket_seq, month.last_ticket_seq),
            (0, 0, 0)
        );
        assert_eq!((month.last_ticket_signature, month.grand_total_cents), (None, 7000));
        assert!(combine("till-1", Period::Year, "2025-01-01".into(), "2025-12-31".into(), &[], 9).is_none());
    }
}
