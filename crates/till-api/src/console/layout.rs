//! The frame of every page (head, navigation, language switch, sign-out) and how amounts,
//! instants and rates are written on them in each language.

use super::language::{Frame, Language, switch_href};
use super::refused::Refused;
use super::session::{FORM_TOKEN, Visitor};
use super::words::Words;
use jiff::Timestamp;
use jiff::civil::{Date, Weekday};
use jiff::tz::TimeZone;
use maud::{DOCTYPE, Markup, html};

/// The pages of the navigation, in its order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Nav {
    Today,
    Registers,
    Sales,
    Customers,
    Promotions,
    StoredValue,
    Stock,
}

impl Nav {
    pub const ALL: [Nav; 7] = [
        Nav::Today,
        Nav::Registers,
        Nav::Sales,
        Nav::Customers,
        Nav::Promotions,
        Nav::StoredValue,
        Nav::Stock,
    ];

    pub fn href(self) -> &'static str {
        match self {
            Nav::Today => "/console",
            Nav::Registers => "/console/registers",
            Nav::Sales => "/console/sales",
            Nav::Customers => "/console/customers",
            Nav::Promotions => "/console/promotions",
            Nav::StoredValue => "/console/stored-value",
            Nav::Stock => "/console/stock",
        }
    }

    fn label(self, words: &Words) -> &'static str {
        match self {
            Nav::Today => words.nav_today,
            Nav::Registers => words.nav_registers,
            Nav::Sales => words.nav_sales,
            Nav::Customers => words.nav_customers,
            Nav::Promotions => words.nav_promotions,
            Nav::StoredValue => words.nav_stored_value,
            Nav::Stock => words.nav_stock,
        }
    }

    /// Whether the visitor may open the page: the page's own check, so that the navigation
    /// never leads to a refusal.
    pub fn allowed(self, visitor: &Visitor) -> bool {
        let check: fn(&Visitor) -> Result<(), Refused> = match self {
            Nav::Today => super::today::allowed,
            Nav::Registers => super::registers::allowed,
            Nav::Sales => super::sales::allowed,
            Nav::Customers => super::customers::allowed,
            Nav::Promotions => super::promotions::allowed,
            Nav::StoredValue => super::stored_value::allowed,
            Nav::Stock => super::stock::allowed,
        };
        check(visitor).is_ok()
    }
}

fn head(title: &str, words: &Words) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) " · " (words.console) }
            link rel="icon" type="image/svg+xml" href="/console/static/favicon.svg";
            link rel="stylesheet" href="/console/static/console.css";
        }
    }
}

/// The links to the other language, back to the same page.
fn switch(frame: &Frame) -> Markup {
    let words = frame.language.words();
    html! {
        nav.lang aria-label=(words.language) {
            @for language in Language::ALL {
                @if language == frame.language {
                    span.current lang=(language.code()) aria-current="true" title=(language.own_name()) {
                        (language.code().to_uppercase())
                    }
                } @else {
                    a href=(switch_href(language, frame.here.as_deref())) lang=(language.code())
                        hreflang=(language.code()) title=(language.own_name()) {
                        (language.code().to_uppercase())
                    }
                }
            }
        }
    }
}

/// A page of the signed-in console. Its navigation lists the pages the visitor may open.
pub fn page(title: &str, current: Nav, visitor: &Visitor, main: Markup) -> Markup {
    let frame = &visitor.frame;
    let words = frame.language.words();
    html! {
        (DOCTYPE)
        html lang=(frame.language.code()) {
            (head(title, words))
            body {
                header.top {
                    a.brand href="/console" { "till" }
                    nav.pages aria-label=(words.pages) {
                        @for item in Nav::ALL {
                            @if item.allowed(visitor) {
                                a.current[item == current] href=(item.href())
                                    aria-current=[(item == current).then_some("page")] { (item.label(words)) }
                            }
                        }
                    }
                    div.tools {
                        (switch(frame))
                        form.sign-out method="post" action="/console/sign-out" {
                            input type="hidden" name=(FORM_TOKEN) value=(visitor.form_token());
                            span.who title=(words.signed_in_as) { (visitor.principal.subject.as_str()) }
                            button type="submit" title=(format!("{} {}", words.signed_in_as, visitor.principal.subject.as_str())) { (words.sign_out) }
                        }
                    }
                }
                main { (main) }
            }
        }
    }
}

/// A page outside the signed-in frame: sign-in, refusals.
pub fn bare(title: &str, frame: &Frame, main: Markup) -> Markup {
    let words = frame.language.words();
    html! {
        (DOCTYPE)
        html lang=(frame.language.code()) {
            (head(title, words))
            body {
                header.top {
                    a.brand href="/console" { "till" }
                    nav.pages aria-label=(words.pages) {
                        a href="/console" { (words.nav_today) }
                        a href="/console/sign-in" { (words.sign_in) }
                    }
                    div.tools { (switch(frame)) }
                }
                main { (main) }
            }
        }
    }
}

/// The digits of `value` in groups of three, `separator` between groups.
fn grouped(value: u64, separator: &str) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 * separator.len());
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push_str(separator);
        }
        out.push(digit);
    }
    out
}

/// No-break space: before the currency symbol and `%` in French.
const NBSP: &str = "\u{a0}";
/// Narrow no-break space: between groups of digits in French.
const NNBSP: &str = "\u{202f}";

/// An amount in cents, exactly: `1234` in `EUR` → `12,34 €` in French, `€12.34` in English.
/// A currency without a symbol here is written with its code (`12,34 CHF`, `CHF 12.34`).
pub fn money(cents: i64, currency: &str, language: Language) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    let (units, hundredths) = (abs / 100, abs % 100);
    let symbol = match currency {
        "EUR" => Some("€"),
        "GBP" => Some("£"),
        _ => None,
    };
    match language {
        Language::French => {
            let mark = symbol.unwrap_or(currency);
            format!("{sign}{},{hundredths:02}{NBSP}{mark}", grouped(units, NNBSP))
        }
        Language::English => {
            let figure = format!("{}.{hundredths:02}", grouped(units, ","));
            match symbol {
                Some(symbol) => format!("{sign}{symbol}{figure}"),
                None => format!("{sign}{currency}{NBSP}{figure}"),
            }
        }
    }
}

const MONTHS_FR: [&str; 12] = [
    "janvier",
    "février",
    "mars",
    "avril",
    "mai",
    "juin",
    "juillet",
    "août",
    "septembre",
    "octobre",
    "novembre",
    "décembre",
];
const MONTHS_EN: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

fn month_name(date: Date, language: Language) -> &'static str {
    let names = match language {
        Language::French => &MONTHS_FR,
        Language::English => &MONTHS_EN,
    };
    usize::try_from(date.month() - 1)
        .ok()
        .and_then(|index| names.get(index))
        .copied()
        .unwrap_or_default()
}

fn weekday_name(day: Weekday, language: Language) -> &'static str {
    match (language, day) {
        (Language::French, Weekday::Monday) => "lundi",
        (Language::French, Weekday::Tuesday) => "mardi",
        (Language::French, Weekday::Wednesday) => "mercredi",
        (Language::French, Weekday::Thursday) => "jeudi",
        (Language::French, Weekday::Friday) => "vendredi",
        (Language::French, Weekday::Saturday) => "samedi",
        (Language::French, Weekday::Sunday) => "dimanche",
        (Language::English, Weekday::Monday) => "Monday",
        (Language::English, Weekday::Tuesday) => "Tuesday",
        (Language::English, Weekday::Wednesday) => "Wednesday",
        (Language::English, Weekday::Thursday) => "Thursday",
        (Language::English, Weekday::Friday) => "Friday",
        (Language::English, Weekday::Saturday) => "Saturday",
        (Language::English, Weekday::Sunday) => "Sunday",
    }
}

/// A calendar day: `27/11/2026` in French, `27 Nov 2026` in English.
pub fn date(date: Date, language: Language) -> String {
    match language {
        Language::French => format!("{:02}/{:02}/{}", date.day(), date.month(), date.year()),
        Language::English => {
            let month: String = month_name(date, language).chars().take(3).collect();
            format!("{} {month} {}", date.day(), date.year())
        }
    }
}

/// A day written `YYYY-MM-DD` by the store, as [`date`] writes it; as it is when it is not one.
pub fn date_text(text: &str, language: Language) -> String {
    match super::today::parse_date(text) {
        Ok(day) => date(day, language),
        Err(_) => text.to_owned(),
    }
}

/// A day in full: `vendredi 27 novembre 2026`, `Friday 27 November 2026`.
pub fn long_date(date: Date, language: Language) -> String {
    format!(
        "{} {} {} {}",
        weekday_name(date.weekday(), language),
        date.day(),
        month_name(date, language),
        date.year()
    )
}

/// An instant on the clock of `zone`: `27/11/2026 14:05`, `27 Nov 2026 14:05`.
pub fn local_time(at: Timestamp, zone: &TimeZone, language: Language) -> String {
    let local = at.to_zoned(zone.clone());
    format!(
        "{} {:02}:{:02}",
        date(local.date(), language),
        local.hour(),
        local.minute()
    )
}

/// A VAT rate in hundredths of a percent: `550` → `5,5 %` in French, `5.5%` in English.
pub fn rate(hundredths: i64, language: Language) -> String {
    let (point, percent) = match language {
        Language::French => (",", "\u{a0}%"),
        Language::English => (".", "%"),
    };
    let sign = if hundredths < 0 { "-" } else { "" };
    let abs = hundredths.unsigned_abs();
    let whole = abs / 100;
    match abs % 100 {
        0 => format!("{sign}{whole}{percent}"),
        part if part % 10 == 0 => format!("{sign}{whole}{point}{}{percent}", part / 10),
        part => format!("{sign}{whole}{point}{part:02}{percent}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_written_to_the_cent_in_each_language() {
        let fr = |cents, currency| money(cents, currency, Language::French);
        let en = |cents, currency| money(cents, currency, Language::English);
        assert_eq!(fr(21300, "EUR"), "213,00\u{a0}€");
        assert_eq!(fr(123456, "EUR"), "1\u{202f}234,56\u{a0}€");
        assert_eq!(fr(-5, "EUR"), "-0,05\u{a0}€");
        assert_eq!(fr(100_000_000, "CHF"), "1\u{202f}000\u{202f}000,00\u{a0}CHF");
        assert_eq!(en(21300, "EUR"), "€213.00");
        assert_eq!(en(-123456, "EUR"), "-€1,234.56");
        assert_eq!(en(0, "CHF"), "CHF\u{a0}0.00");
        assert_eq!(en(99_999, "GBP"), "£999.99");
        // The extremes are written, not overflowed.
        assert_eq!(en(i64::MIN, "EUR"), "-€92,233,720,368,547,758.08");
        assert_eq!(fr(i64::MAX, "EUR").chars().filter(|c| *c == '\u{202f}').count(), 5);
    }

    #[test]
    fn days_and_instants_are_written_in_each_language() {
        let day: Date = "2026-11-27".parse().unwrap();
        assert_eq!(date(day, Language::French), "27/11/2026");
        assert_eq!(date(day, Language::English), "27 Nov 2026");
        assert_eq!(long_date(day, Language::French), "vendredi 27 novembre 2026");
        assert_eq!(long_date(day, Language::English), "Friday 27 November 2026");
        assert_eq!(date_text("2026-03-01", Language::French), "01/03/2026");
        assert_eq!(date_text("not a day", Language::French), "not a day");
        let paris = TimeZone::get("Europe/Paris").unwrap();
        let at: Timestamp = "2026-11-27T13:05:00Z".parse().unwrap();
        assert_eq!(local_time(at, &paris, Language::French), "27/11/2026 14:05");
        assert_eq!(local_time(at, &paris, Language::English), "27 Nov 2026 14:05");
    }

    #[test]
    fn rates_are_written_as_percentages() {
        assert_eq!(rate(550, Language::French), "5,5\u{a0}%");
        assert_eq!(rate(550, Language::English), "5.5%");
        assert_eq!(rate(2000, Language::French), "20\u{a0}%");
        assert_eq!(rate(210, Language::English), "2.1%");
        assert_eq!(rate(1025, Language::French), "10,25\u{a0}%");
    }
}
