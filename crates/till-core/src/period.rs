//! A register's fiscal periods: days (`YYYY-MM-DD`, in the store's time zone), months
//! (`YYYY-MM`) and years (`YYYY`). A day closes at the first ticket after its midnight; a month
//! and a year close the same way once a later one has begun. Written as text, a period sorts
//! as it falls in time, and so is compared here.

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
}
