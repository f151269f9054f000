//! Sales per hour as an SVG bar chart, drawn from typed values with integer geometry. No
//! style attribute (the content security policy forbids inline styles): the stylesheet colours
//! the classes.

use super::language::Language;
use maud::{Markup, html};

/// One hour of a day: its local hour (0 to 23), the sales in it and what they took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HourBar {
    pub hour: u8,
    pub sales: i64,
    pub total_cents: i64,
}

const WIDTH: i64 = 720;
const HEIGHT: i64 = 260;
const LEFT: i64 = 40;
const BOTTOM: i64 = 28;
const TOP: i64 = 16;
const SLOT: i64 = (WIDTH - LEFT) / 24;
const BAR: i64 = SLOT - 6;

/// The bars of the 24 hours of a day, `hours` in hour order.
pub fn sales_per_hour(hours: &[HourBar; 24], currency: &str, language: Language) -> Markup {
    let words = language.words();
    let plot = HEIGHT - BOTTOM - TOP;
    let most = hours.iter().map(|bar| bar.sales).max().unwrap_or(0).max(1);
    let base = HEIGHT - BOTTOM;
    // A gridline at the top and at half, labelled with whole sales.
    let marks = [most, most / 2];
    html! {
        svg.chart viewBox=(format!("0 0 {WIDTH} {HEIGHT}")) role="img"
            aria-label=(words.sales_per_hour) xmlns="http://www.w3.org/2000/svg" {
            title { (words.sales_per_hour) }
            @for mark in marks {
                @let y = base - mark * plot / most;
                @if mark > 0 {
                    line.grid x1=(LEFT) x2=(WIDTH) y1=(y) y2=(y) {}
                    text.axis x=(LEFT - 6) y=(y + 4) text-anchor="end" { (mark) }
                }
            }
            line.baseline x1=(LEFT) x2=(WIDTH) y1=(base) y2=(base) {}
            @for bar in hours {
                @let x = LEFT + i64::from(bar.hour) * SLOT + 3;
                @let height = bar.sales.max(0) * plot / most;
                rect.bar x=(x) y=(base - height) width=(BAR) height=(height)
                    data-hour=(bar.hour) data-sales=(bar.sales) data-total=(bar.total_cents) {
                    title { ((words.hour_bar)(bar.hour, bar.sales, &super::layout::money(bar.total_cents, currency, language))) }
                }
                @if bar.hour % 3 == 0 {
                    text.axis x=(x + BAR / 2) y=(HEIGHT - 8) text-anchor="middle" { (format!("{:02}h", bar.hour)) }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(sales: &[(u8, i64)]) -> [HourBar; 24] {
        let mut hours: [HourBar; 24] = std::array::from_fn(|hour| HourBar {
            hour: hour as u8,
            ..HourBar::default()
        });
        for (hour, count) in sales {
            hours[usize::from(*hour)].sales = *count;
            hours[usize::from(*hour)].total_cents = count * 250;
        }
        hours
    }

    #[test]
    fn the_busiest_hour_fills_the_plot_and_others_scale_to_it() {
        let svg = sales_per_hour(&day(&[(9, 4), (12, 2)]), "EUR", Language::English).into_string();
        let plot = HEIGHT - BOTTOM - TOP;
        assert!(
            svg.contains(&format!("height=\"{plot}\" data-hour=\"9\" data-sales=\"4\"")),
            "{svg}"
        );
        assert!(
            svg.contains(&format!("height=\"{}\" data-hour=\"12\" data-sales=\"2\"", plot / 2)),
            "{svg}"
        );
        assert!(svg.contains("height=\"0\" data-hour=\"3\" data-sales=\"0\""), "{svg}");
        assert_eq!(svg.matches("<rect").count(), 24);
    }

    #[test]
    fn a_day_without_sales_draws_empty_bars_without_dividing_by_zero() {
        let svg = sales_per_hour(&day(&[]), "EUR", Language::French).into_string();
        assert_eq!(svg.matches("height=\"0\"").count(), 24);
        assert!(!svg.contains("style="));
    }
}
