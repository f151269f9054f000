//! The frame of every page (head, navigation, sign-out) and how amounts and instants are
//! written on them.

use super::session::{FORM_TOKEN, Visitor};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use maud::{DOCTYPE, Markup, html};

/// The pages of the navigation, in its order.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    Today,
    Registers,
    Sales,
    Promotions,
    StoredValue,
    Stock,
}

impl Nav {
    const ALL: [Nav; 6] = [
        Nav::Today,
        Nav::Registers,
        Nav::Sales,
        Nav::Promotions,
        Nav::StoredValue,
        Nav::Stock,
    ];

    fn href(self) -> &'static str {
        match self {
            Nav::Today => "/console",
            Nav::Registers => "/console/registers",
            Nav::Sales => "/console/sales",
            Nav::Promotions => "/console/promotions",
            Nav::StoredValue => "/console/stored-value",
            Nav::Stock => "/console/stock",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Nav::Today => "Today",
            Nav::Registers => "Registers",
            Nav::Sales => "Sales",
            Nav::Promotions => "Promotions",
            Nav::StoredValue => "Gift cards & credit notes",
            Nav::Stock => "Stock",
        }
    }
}

fn head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) " · till console" }
            link rel="stylesheet" href="/console/static/console.css";
        }
    }
}

/// A page of the signed-in console.
pub fn page(title: &str, current: Nav, visitor: &Visitor, main: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body {
                header.top {
                    span.brand { "till" }
                    nav {
                        @for item in Nav::ALL {
                            a.current[item == current] href=(item.href()) { (item.label()) }
                        }
                    }
                    form.sign-out method="post" action="/console/sign-out" {
                        input type="hidden" name=(FORM_TOKEN) value=(visitor.form_token());
                        span.who { (visitor.principal.subject.as_str()) }
                        button type="submit" { "Sign out" }
                    }
                }
                main { (main) }
            }
        }
    }
}

/// A page outside the signed-in frame: sign-in, refusals.
pub fn bare(title: &str, main: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body {
                header.top {
                    span.brand { "till" }
                    nav { a href="/console" { "Today" } a href="/console/sign-in" { "Sign in" } }
                }
                main { (main) }
            }
        }
    }
}

/// `1234` in `EUR` → `12.34 EUR`.
pub fn money(cents: i64, currency: &str) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    format!("{sign}{}.{:02} {currency}", abs / 100, abs % 100)
}

/// An instant on the clock of `zone`: `2026-11-26 14:05`.
pub fn local_time(at: Timestamp, zone: &TimeZone) -> String {
    at.to_zoned(zone.clone()).strftime("%Y-%m-%d %H:%M").to_string()
}

/// A VAT rate in hundredths of a percent: `550` → `5.5 %`.
pub fn rate(hundredths: i64) -> String {
    let whole = hundredths / 100;
    match hundredths % 100 {
        0 => format!("{whole} %"),
        part if part % 10 == 0 => format!("{whole}.{} %", part / 10),
        part => format!("{whole}.{part:02} %"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_written_to_the_cent() {
        assert_eq!(money(1710, "EUR"), "17.10 EUR");
        assert_eq!(money(-5, "EUR"), "-0.05 EUR");
        assert_eq!(money(0, "CHF"), "0.00 CHF");
    }

    #[test]
    fn rates_are_written_as_percentages() {
        assert_eq!(rate(550), "5.5 %");
        assert_eq!(rate(2000), "20 %");
        assert_eq!(rate(210), "2.1 %");
        assert_eq!(rate(1025), "10.25 %");
    }
}
