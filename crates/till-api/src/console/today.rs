//! `GET /console`: a day at a glance in a store (today by default): sales, revenue, average
//! basket, sales per hour, tenders and VAT, from the same sales report as
//! `GET /v1/reports/sales` over the store's local day.

use super::chart::{HourBar, sales_per_hour};
use super::forms::Query;
use super::language::Language;
use super::layout::{self, Nav, money};
use super::refused::Refused;
use super::session::Visitor;
use super::words::Words;
use crate::error::ApiError;
use crate::extract::{FromParams, Params};
use crate::ops;
use crate::state::AppState;
use axum::extract::State;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use maud::{Markup, html};
use till_app::reports::{ReportRequest, sales_report};
use till_app::storage::Window;
use till_app::stores::{StoreRecord, get_store, list_stores};
use till_core::ids::StoreId;
use till_core::money::div_round_half_away;
use till_core::report::{GroupBy, Measures, Period, Report, RowKey};
use till_core::store::{Currency, Timezone};

/// Most stores a picker lists.
pub const MAX_STORES: usize = 500;

/// The store and day asked for; both may be left out.
pub struct DayQuery {
    pub store: Option<StoreId>,
    pub date: Option<Date>,
}

impl FromParams for DayQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let store = params.optional("store", StoreId::parse);
        let date = params.optional("date", parse_date);
        Some(DayQuery {
            store: store?,
            date: date?,
        })
    }
}

/// A calendar day written `YYYY-MM-DD`, as a date picker sends it.
pub fn parse_date(text: &str) -> Result<Date, &'static str> {
    text.parse::<Date>()
        .ok()
        .filter(|_| text.len() == 10)
        .ok_or("must be a date such as 2026-03-31")
}

/// The stores of the network, for pickers.
pub async fn stores(state: &AppState) -> Result<Vec<StoreRecord>, Refused> {
    let window = Window {
        after: None,
        take: MAX_STORES,
    };
    Ok(list_stores(state.app(), &window).await?)
}

/// The store a page is about: the one asked for, which must exist; none for every store.
pub async fn chosen(state: &AppState, asked: Option<&StoreId>) -> Result<Option<StoreRecord>, Refused> {
    match asked {
        Some(id) => match get_store(state.app(), id).await? {
            Some(store) => Ok(Some(store)),
            None => Err(ApiError::NotFound("There is no store with this id.".into()).into()),
        },
        None => Ok(None),
    }
}

/// The store picker of a form: every store, or one of those listed (the chosen one too, when
/// the list stops before it).
pub fn store_select(stores: &[StoreRecord], store: Option<&StoreRecord>, words: &Words) -> Markup {
    let listed = store.is_none_or(|store| stores.iter().any(|s| s.store_id == store.store_id));
    html! {
        span.field {
            label for="store" { (words.store) }
            select #store name="store" {
                option value="" { (words.every_store) }
                @if !listed && let Some(store) = store {
                    option value=(store.store_id.as_str()) selected { (store.profile.name) " (" (store.store_id.as_str()) ")" }
                }
                @for option in stores {
                    option value=(option.store_id.as_str())
                        selected[store.is_some_and(|s| s.store_id == option.store_id)] {
                        (option.profile.name) " (" (option.store_id.as_str()) ")"
                    }
                }
            }
        }
    }
}

/// The zone a store's days are cut in; Europe/Paris without a store, as closures do.
pub fn zone_of(store: Option<&StoreRecord>) -> TimeZone {
    store.map_or_else(
        || Timezone::default_zone().zone(),
        |store| store.profile.timezone.zone(),
    )
}

/// The zone the days of `store`, or of every store, are cut in: every store's own when they
/// share one, else Europe/Paris.
pub fn day_zone(stores: &[StoreRecord], store: Option<&StoreRecord>) -> TimeZone {
    match (store, stores.split_first()) {
        (Some(store), _) => zone_of(Some(store)),
        (None, Some((first, rest)))
            if rest
                .iter()
                .all(|other| other.profile.timezone == first.profile.timezone) =>
        {
            zone_of(Some(first))
        }
        (None, _) => zone_of(None),
    }
}

pub fn currency_of(store: Option<&StoreRecord>) -> String {
    store.map_or_else(
        || Currency::default_currency().as_str().to_owned(),
        |store| store.profile.currency.as_str().to_owned(),
    )
}

/// From the start of `date` in `zone` to the start of the next day.
pub fn local_day(date: Date, zone: &TimeZone) -> Result<(jiff::Timestamp, jiff::Timestamp), ApiError> {
    let out_of_range = || ApiError::field("date", "is out of the range of days this server handles");
    let start = date.to_zoned(zone.clone()).map_err(|_| out_of_range())?;
    let end = date
        .tomorrow()
        .and_then(|next| next.to_zoned(zone.clone()))
        .map_err(|_| out_of_range())?;
    Ok((start.timestamp(), end.timestamp()))
}

/// The figures of a day, as the page shows them.
pub struct DayFigures {
    pub totals: Measures,
    /// Rounded to the cent; none on a day without sales.
    pub average_basket_cents: Option<i64>,
    pub hours: [HourBar; 24],
    pub tenders: Vec<(String, Measures)>,
    pub vat: Vec<(i64, Measures)>,
}

/// Sales less returns over tickets sold, to the nearest cent, as money is rounded everywhere.
fn average(total_cents: i64, sales: i64) -> Option<i64> {
    (sales > 0)
        .then(|| div_round_half_away(i128::from(total_cents), i128::from(sales)))
        .and_then(|average| i64::try_from(average).ok())
}

impl DayFigures {
    /// From the day's reports by hour, by tender and by VAT rate.
    pub fn of(by_hour: Report, by_tender: Report, by_vat: Report) -> DayFigures {
        let mut hours: [HourBar; 24] = std::array::from_fn(|hour| HourBar {
            hour: u8::try_from(hour).unwrap_or_default(),
            ..HourBar::default()
        });
        for row in &by_hour.rows {
            if let RowKey::Hour(hour) = &row.key
                && let Some(bar) = hours.get_mut(usize::try_from(hour.local.hour()).unwrap_or(usize::MAX))
            {
                // The hour that happens twice when clocks go back is one bar.
                bar.sales = bar.sales.saturating_add(row.measures.sales_count);
                bar.total_cents = bar.total_cents.saturating_add(row.measures.total_cents);
            }
        }
        let tenders = by_tender
            .rows
            .into_iter()
            .filter_map(|row| match row.key {
                RowKey::Text(method) => Some((method, row.measures)),
                _ => None,
            })
            .collect();
        let vat = by_vat
            .rows
            .into_iter()
            .filter_map(|row| match row.key {
                RowKey::Vat(rate) => Some((rate.hundredths(), row.measures)),
                _ => None,
            })
            .collect();
        let totals = by_hour.totals;
        DayFigures {
            average_basket_cents: average(totals.total_cents, totals.sales_count),
            totals,
            hours,
            tenders,
            vat,
        }
    }
}

/// The day's figures of `store` (every store when none), by the report's own code.
pub async fn day_figures(state: &AppState, store: Option<StoreId>, period: Period) -> Result<DayFigures, Refused> {
    let report = |group_by| {
        sales_report(
            state.app(),
            ReportRequest {
                store_id: store.clone(),
                register_id: None,
                period,
                group_by,
            },
        )
    };
    let by_hour = report(GroupBy::Hour).await?;
    let by_tender = report(GroupBy::Tender).await?;
    let by_vat = report(GroupBy::Vat).await?;
    Ok(DayFigures::of(by_hour, by_tender, by_vat))
}

/// Refused unless the visitor may read the day's report and pick a store.
pub fn allowed(visitor: &Visitor) -> Result<(), Refused> {
    visitor.require::<ops::GetSalesReport>()?;
    visitor.require::<ops::ListStores>()
}

pub async fn page(
    visitor: Visitor,
    State(state): State<AppState>,
    Query(query): Query<DayQuery>,
) -> Result<Markup, Refused> {
    allowed(&visitor)?;
    let words = visitor.words();
    let language = visitor.language();
    let stores = stores(&state).await?;
    let store = chosen(&state, query.store.as_ref()).await?;
    let store = store.as_ref();
    let zone = day_zone(&stores, store);
    let date = query.date.unwrap_or_else(|| state.now().to_zoned(zone.clone()).date());
    let (from, to) = local_day(date, &zone)?;
    let period =
        Period::new(from, to).map_err(|_| ApiError::field("date", "is not a day this server can report on"))?;
    let figures = day_figures(&state, store.map(|s| s.store_id.clone()), period).await?;
    let currency = currency_of(store.or(stores.first()));
    let title = format!(
        "{} — {}",
        store.map_or(words.every_store, |s| s.profile.name.as_str()),
        layout::long_date(date, language)
    );
    let body = html! {
        h1 { (title) }
        (day_picker(&stores, store, date, words))
        (figures_view(&figures, &currency, language))
    };
    Ok(layout::page(words.nav_today, Nav::Today, &visitor, body))
}

/// The store and day picker, a form that reloads the page.
pub fn day_picker(stores: &[StoreRecord], store: Option<&StoreRecord>, date: Date, words: &Words) -> Markup {
    html! {
        form.picker method="get" action="/console" {
            (store_select(stores, store, words))
            span.field {
                label for="date" { (words.day) }
                input #date type="date" name="date" value=(date.to_string());
            }
            button type="submit" { (words.show) }
        }
    }
}

fn figures_view(figures: &DayFigures, currency: &str, language: Language) -> Markup {
    let totals = &figures.totals;
    let words = language.words();
    let money = |cents| money(cents, currency, language);
    html! {
        dl.figures {
            div { dt { (words.sales_count) } dd #sales-count data-value=(totals.sales_count) { (totals.sales_count) } }
            div { dt { (words.revenue) } dd #revenue data-value=(totals.total_cents) { (money(totals.total_cents)) } }
            div {
                dt { (words.average_basket) }
                @match figures.average_basket_cents {
                    Some(average) => dd #average-basket data-value=(average) { (money(average)) },
                    None => dd #average-basket data-value="" { (words.none) },
                }
            }
            div { dt { (words.returns) } dd #returns-count data-value=(totals.returns_count) { (totals.returns_count) " (" (money(totals.returned_cents)) ")" } }
            div { dt { (words.items) } dd #item-count data-value=(totals.item_count) { (totals.item_count) } }
        }
        section {
            h2 { (words.sales_per_hour) }
            (sales_per_hour(&figures.hours, currency, language))
        }
        div.columns {
            section {
                h2 { (words.tenders) }
                table #tenders {
                    thead { tr { th { (words.method) } th.n { (words.tickets) } th.n { (words.amount) } } }
                    tbody {
                        @for (method, measures) in &figures.tenders {
                            tr data-method=(method) data-total=(measures.total_cents) {
                                td data-label=(words.method) { (language.method(method)) }
                                td.n data-label=(words.tickets) { (measures.sales_count) }
                                td.n data-label=(words.amount) { (money(measures.total_cents)) }
                            }
                        }
                        @if figures.tenders.is_empty() {
                            tr.empty { td colspan="3" { (words.no_sales_this_day) } }
                        }
                    }
                }
            }
            section {
                h2 { (words.vat) }
                table #vat {
                    thead { tr { th { (words.rate) } th.n { (words.base) } th.n { (words.vat) } th.n { (words.total_with_vat) } } }
                    tbody {
                        @for (rate, measures) in &figures.vat {
                            tr data-rate=(rate) data-vat=(measures.vat_cents) data-total=(measures.total_cents) {
                                td data-label=(words.rate) { (layout::rate(*rate, language)) }
                                td.n data-label=(words.base) { (money(measures.total_cents.saturating_sub(measures.vat_cents))) }
                                td.n data-label=(words.vat) { (money(measures.vat_cents)) }
                                td.n data-label=(words.total_with_vat) { (money(measures.total_cents)) }
                            }
                        }
                        @if figures.vat.is_empty() {
                            tr.empty { td colspan="4" { (words.no_sales_this_day) } }
                        }
                    }
                    tfoot {
                        tr {
                            th { (words.total) }
                            td.n data-label=(words.base) { (money(totals.total_cents.saturating_sub(totals.vat_cents))) }
                            td.n #vat-total data-label=(words.vat) data-value=(totals.vat_cents) { (money(totals.vat_cents)) }
                            td.n data-label=(words.total_with_vat) { (money(totals.total_cents)) }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_average_basket_is_rounded_to_the_nearest_cent() {
        assert_eq!(average(1000, 3), Some(333));
        assert_eq!(average(1001, 2), Some(501));
        assert_eq!(average(-1001, 2), Some(-501));
        assert_eq!(average(1000, 0), None);
    }

    #[test]
    fn a_paris_day_is_cut_at_its_own_midnight() {
        let zone = TimeZone::get("Europe/Paris").unwrap();
        let (from, to) = local_day("2026-03-29".parse().unwrap(), &zone).unwrap();
        assert_eq!(from.to_string(), "2026-03-28T23:00:00Z");
        // The day clocks go forward has 23 hours.
        assert_eq!(to.to_string(), "2026-03-29T22:00:00Z");
        assert!(parse_date("2026-3-29").is_err());
        assert!(parse_date("2026-03-29").is_ok());
    }
}
