//! Sales reports: the sales of a period added up by local day or hour, article, seller, tender
//! method or VAT rate.
//!
//! A report is added up from rollups. A rollup adds a set of sales up per UTC quarter hour
//! ([`Bucket`]), per [`Dimension`] and key: every UTC offset in use is a whole number of quarter
//! hours, so a store's local days and hours are unions of whole quarter hours whatever zone the
//! store had when it sold. Storage adds each closed session's rollup to rows of whole UTC
//! hours and days too ([`Rollup::by_grain`]), reads a period as runs of whole days, hours and
//! quarter hours ([`Period::segments`]), and computes the rollup of an open session from its
//! sales with the same function ([`roll_up`]); a report is [`assemble`]d from the pieces of
//! both.
//!
//! Returns subtract: their amounts are stored negative, and their units count negatively here.
//! A return is counted in `returnsCount`, never in `salesCount`. Every sum is checked and stays
//! within the integers a JSON client reads exactly; past that it is an [`Overflow`].

use crate::fiscal::payload::{SaleRecordLine, SaleRecordTender, SaleRecordVat};
use crate::ids::SkuId;
use crate::money::{MAX_SAFE_INTEGER, Overflow, VatRate};
use jiff::Timestamp;
use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use std::collections::BTreeMap;

mod time;

pub use time::{Bucket, Grain, MAX_REPORT_DAYS, Period, PeriodError, Segment};

/// What a rollup adds sales up by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dimension {
    /// Every sale of the quarter hour, under one key: days and hours are made of these.
    Time,
    Article,
    Seller,
    Tender,
    Vat,
}

impl Dimension {
    pub const ALL: [Dimension; 5] = [
        Dimension::Time,
        Dimension::Article,
        Dimension::Seller,
        Dimension::Tender,
        Dimension::Vat,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::Time => "time",
            Dimension::Article => "article",
            Dimension::Seller => "seller",
            Dimension::Tender => "tender",
            Dimension::Vat => "vat",
        }
    }

    pub fn parse(text: &str) -> Option<Dimension> {
        Dimension::ALL.into_iter().find(|d| d.as_str() == text)
    }
}

/// How a report's rows are keyed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupBy {
    /// Local calendar days of each sale's store.
    Day,
    /// Local hours of each sale's store.
    Hour,
    Article,
    Seller,
    Tender,
    Vat,
}

impl GroupBy {
    pub const ALL: [GroupBy; 6] = [
        GroupBy::Day,
        GroupBy::Hour,
        GroupBy::Article,
        GroupBy::Seller,
        GroupBy::Tender,
        GroupBy::Vat,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            GroupBy::Day => "day",
            GroupBy::Hour => "hour",
            GroupBy::Article => "article",
            GroupBy::Seller => "seller",
            GroupBy::Tender => "tender",
            GroupBy::Vat => "vat",
        }
    }

    pub fn parse(text: &str) -> Option<GroupBy> {
        GroupBy::ALL.into_iter().find(|g| g.as_str() == text)
    }

    /// The dimension whose rollups the rows are made of.
    pub fn dimension(self) -> Dimension {
        match self {
            GroupBy::Day | GroupBy::Hour => Dimension::Time,
            GroupBy::Article => Dimension::Article,
            GroupBy::Seller => Dimension::Seller,
            GroupBy::Tender => Dimension::Tender,
            GroupBy::Vat => Dimension::Vat,
        }
    }

    /// Whether rows are local days or hours, which need each sale's quarter hour and store.
    pub fn is_time(self) -> bool {
        self.dimension() == Dimension::Time
    }
}

/// What a set of sales adds up to under one key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Measures {
    /// Tickets of every kind but returns.
    pub sales_count: i64,
    pub returns_count: i64,
    /// Units sold less units returned.
    pub item_count: i64,
    /// Sales less returns, VAT included.
    pub total_cents: i64,
    /// The returns' part of `total_cents`: zero or negative.
    pub returned_cents: i64,
    /// Before promotions and discounts (article rows; zero elsewhere).
    pub gross_cents: i64,
    /// The VAT `total_cents` contains (time, seller and VAT rows; zero elsewhere).
    pub vat_cents: i64,
}

impl Measures {
    pub fn checked_add(self, other: Measures) -> Result<Measures, Overflow> {
        Ok(Measures {
            sales_count: sum(self.sales_count, other.sales_count)?,
            returns_count: sum(self.returns_count, other.returns_count)?,
            item_count: sum(self.item_count, other.item_count)?,
            total_cents: sum(self.total_cents, other.total_cents)?,
            returned_cents: sum(self.returned_cents, other.returned_cents)?,
            gross_cents: sum(self.gross_cents, other.gross_cents)?,
            vat_cents: sum(self.vat_cents, other.vat_cents)?,
        })
    }

    fn add(&mut self, other: Measures) -> Result<(), Overflow> {
        *self = self.checked_add(other)?;
        Ok(())
    }
}

fn sum(a: i64, b: i64) -> Result<i64, Overflow> {
    a.checked_add(b)
        .filter(|total| total.abs() <= MAX_SAFE_INTEGER)
        .ok_or(Overflow)
}

/// A committed ticket as reports read it: its amounts as stored (negative on a return), its
/// units as sold (positive on a return too).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportedSale {
    /// When it was committed, in microseconds since the epoch.
    pub emitted_at: i64,
    pub is_return: bool,
    pub seller_id: String,
    pub item_count: i64,
    pub total_cents: i64,
    pub lines: Vec<SaleRecordLine>,
    pub tenders: Vec<SaleRecordTender>,
    pub vat: Vec<SaleRecordVat>,
}

impl ReportedSale {
    /// The ticket counted once under a key.
    fn counted(&self) -> Measures {
        Measures {
            sales_count: i64::from(!self.is_return),
            returns_count: i64::from(self.is_return),
            ..Measures::default()
        }
    }

    /// Units of the ticket as they count: negative on a return.
    fn units(&self, quantity: i64) -> Result<i64, Overflow> {
        if self.is_return {
            quantity.checked_neg().ok_or(Overflow)
        } else {
            Ok(quantity)
        }
    }

    /// The returns' part of an amount of this ticket.
    fn returned(&self, amount: i64) -> i64 {
        if self.is_return { amount } else { 0 }
    }
}

/// A set of sales added up per dimension, quarter hour and key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rollup(BTreeMap<(Dimension, Bucket, String), Measures>);

/// Adds `sales` up per dimension, quarter hour and key.
pub fn roll_up<'a>(sales: impl IntoIterator<Item = &'a ReportedSale>) -> Result<Rollup, Overflow> {
    let mut rollup = Rollup::default();
    for sale in sales {
        rollup.add_sale(sale)?;
    }
    Ok(rollup)
}

impl Rollup {
    /// Every row: dimension, quarter hour, key, measures.
    pub fn rows(&self) -> impl Iterator<Item = (Dimension, Bucket, &str, &Measures)> {
        self.0
            .iter()
            .map(|((dimension, bucket, key), measures)| (*dimension, *bucket, key.as_str(), measures))
    }

    /// The rows added up per span of `grain`, each under the span's first quarter hour.
    pub fn by_grain(&self, grain: Grain) -> Result<Rollup, Overflow> {
        let mut coarser = Rollup::default();
        for ((dimension, bucket, key), measures) in &self.0 {
            coarser.add(*dimension, grain.start(*bucket), key, *measures)?;
        }
        Ok(coarser)
    }

    /// The pieces of a report grouped by `group_by` that this rollup holds, its sales made in
    /// a store of `zone`.
    pub fn pieces(&self, group_by: GroupBy, zone: &TimeZone) -> Vec<Piece> {
        let wanted = group_by.dimension();
        self.rows()
            .filter_map(|(dimension, bucket, key, measures)| match dimension {
                Dimension::Time if group_by.is_time() => Some(Piece::Quarter {
                    zone: zone.clone(),
                    bucket,
                    measures: *measures,
                }),
                Dimension::Time => Some(Piece::Span(*measures)),
                other if other == wanted => Some(Piece::Keyed {
                    key: key.to_owned(),
                    measures: *measures,
                }),
                _ => None,
            })
            .collect()
    }

    fn add(&mut self, dimension: Dimension, bucket: Bucket, key: &str, measures: Measures) -> Result<(), Overflow> {
        self.0
            .entry((dimension, bucket, key.to_owned()))
            .or_default()
            .add(measures)
    }

    /// Adds one sale in.
    pub fn add_sale(&mut self, sale: &ReportedSale) -> Result<(), Overflow> {
        let bucket = Bucket::of_micros(sale.emitted_at);
        let counted = sale.counted();
        let vat_cents = sale.vat.iter().try_fold(0, |total, v| sum(total, v.vat_cents))?;
        let ticket = Measures {
            item_count: sale.units(sale.item_count)?,
            total_cents: sale.total_cents,
            returned_cents: sale.returned(sale.total_cents),
            vat_cents,
            ..counted
        };
        self.add(Dimension::Time, bucket, "", ticket)?;
        self.add(Dimension::Seller, bucket, &sale.seller_id, ticket)?;

        // Within the ticket first, so that a ticket counts once under each key it touches.
        let mut articles: BTreeMap<&str, Measures> = BTreeMap::new();
        for line in &sale.lines {
            let key = line.sku_id.as_deref().unwrap_or(SkuId::CUSTOM);
            articles.entry(key).or_insert(counted).add(Measures {
                item_count: sale.units(line.quantity)?,
                total_cents: line.net_cents,
                returned_cents: sale.returned(line.net_cents),
                gross_cents: line.gross_cents,
                ..Measures::default()
            })?;
        }
        let mut methods: BTreeMap<&str, Measures> = BTreeMap::new();
        for tender in &sale.tenders {
            let first = Measures {
                item_count: ticket.item_count,
                ..counted
            };
            methods.entry(tender.method.as_str()).or_insert(first).add(Measures {
                total_cents: tender.applied_cents,
                returned_cents: sale.returned(tender.applied_cents),
                ..Measures::default()
            })?;
        }
        let mut rates: BTreeMap<i64, Measures> = BTreeMap::new();
        for line in &sale.lines {
            rates.entry(line.vat_rate).or_insert(counted).add(Measures {
                item_count: sale.units(line.quantity)?,
                ..Measures::default()
            })?;
        }
        for vat in &sale.vat {
            rates.entry(vat.vat_rate).or_insert(counted).add(Measures {
                total_cents: vat.total_cents,
                returned_cents: sale.returned(vat.total_cents),
                vat_cents: vat.vat_cents,
                ..Measures::default()
            })?;
        }

        for (key, measures) in articles {
            self.add(Dimension::Article, bucket, key, measures)?;
        }
        for (key, measures) in methods {
            self.add(Dimension::Tender, bucket, key, measures)?;
        }
        for (rate, measures) in rates {
            self.add(Dimension::Vat, bucket, &rate.to_string(), measures)?;
        }
        Ok(())
    }
}

/// A part of a report, from a stored rollup or one computed from open sessions' sales.
#[derive(Clone, Debug)]
pub enum Piece {
    /// The sales of one store's quarter hour, for reports by day or hour.
    Quarter {
        /// The store's time zone.
        zone: TimeZone,
        bucket: Bucket,
        measures: Measures,
    },
    /// Sales over any span, for the totals of reports by key.
    Span(Measures),
    /// The sales under one key of the report's dimension.
    Keyed { key: String, measures: Measures },
}

/// A row's key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RowKey {
    /// A local calendar day.
    Day(Date),
    /// A local hour: its local start, with the offset in force then, which tells apart the
    /// two hours of the same name when clocks go back.
    Hour(LocalHour),
    /// An article's id (the reserved custom id for custom lines), a seller, a tender method.
    Text(String),
    Vat(VatRate),
}

/// A local hour as its store's clocks showed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LocalHour {
    /// When it starts, which orders hours of stores in different zones.
    pub start: Timestamp,
    /// Its start on the store's clock, minutes and seconds zero.
    pub local: DateTime,
    /// The store's UTC offset then, in seconds.
    pub offset_seconds: i32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub key: RowKey,
    pub measures: Measures,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub group_by: GroupBy,
    /// Days and hours in time order; VAT rates highest first; other keys by total, largest
    /// first, then by key.
    pub rows: Vec<Row>,
    /// Every sale of the report counted once.
    pub totals: Measures,
}

/// Why a report could not be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Overflow(#[from] Overflow),
    #[error("a rollup names the VAT rate {0:?}")]
    UnknownRate(String),
}

/// The report grouped by `group_by` that `pieces` add up to. Quarter and span pieces make the
/// totals, and the rows too when grouping by day or hour; keyed pieces make the rows of
/// groupings by key.
pub fn assemble(group_by: GroupBy, pieces: impl IntoIterator<Item = Piece>) -> Result<Report, ReportError> {
    let mut rows: BTreeMap<RowKey, Measures> = BTreeMap::new();
    let mut totals = Measures::default();
    for piece in pieces {
        match piece {
            Piece::Quarter { zone, bucket, measures } => {
                totals.add(measures)?;
                if group_by.is_time() {
                    rows.entry(time_key(group_by, &zone, bucket))
                        .or_default()
                        .add(measures)?;
                }
            }
            Piece::Span(measures) => totals.add(measures)?,
            Piece::Keyed { key, measures } if !group_by.is_time() => {
                let key = match group_by {
                    GroupBy::Vat => RowKey::Vat(
                        key.parse()
                            .ok()
                            .and_then(VatRate::from_hundredths)
                            .ok_or(ReportError::UnknownRate(key))?,
                    ),
                    _ => RowKey::Text(key),
                };
                rows.entry(key).or_default().add(measures)?;
            }
            Piece::Keyed { .. } => {}
        }
    }
    let mut rows: Vec<Row> = rows.into_iter().map(|(key, measures)| Row { key, measures }).collect();
    match group_by {
        GroupBy::Day | GroupBy::Hour => {}
        GroupBy::Vat => rows.reverse(),
        GroupBy::Article | GroupBy::Seller | GroupBy::Tender => {
            // Stable: equal totals stay in key order.
            rows.sort_by_key(|row| std::cmp::Reverse(row.measures.total_cents));
        }
    }
    Ok(Report { group_by, rows, totals })
}

/// The local day or hour of `zone` that a quarter hour belongs to.
fn time_key(group_by: GroupBy, zone: &TimeZone, bucket: Bucket) -> RowKey {
    let zoned = bucket.start().to_zoned(zone.clone());
    if group_by == GroupBy::Day {
        return RowKey::Day(zoned.date());
    }
    // Offsets change on the hour, so the quarter hour's offset is its hour's.
    let offset = zoned.offset();
    let local = zoned.date().at(zoned.hour(), 0, 0, 0);
    RowKey::Hour(LocalHour {
        start: offset.to_timestamp(local).unwrap_or_else(|_| zoned.timestamp()),
        local,
        offset_seconds: offset.seconds(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instant::parse_instant;
    use proptest::prelude::*;

    fn at(text: &str) -> i64 {
        parse_instant(text, crate::instant::Zone::UtcOrOffset)
            .expect("an instant")
            .as_microsecond()
    }

    fn line(sku: Option<&str>, quantity: i64, gross: i64, net: i64, rate: i64) -> SaleRecordLine {
        SaleRecordLine {
            line_id: format!("l{quantity}{net}"),
            sku_id: sku.map(str::to_owned),
            label: None,
            quantity,
            unit_price_cents: gross / quantity.max(1),
            vat_rate: rate,
            gross_cents: gross,
            promotion_cents: 0,
            declared_cents: gross - net,
            ticket_cents: 0,
            net_cents: net,
        }
    }

    fn tender(method: &str, applied: i64) -> SaleRecordTender {
        SaleRecordTender {
            tender_id: method.to_owned(),
            method: method.to_owned(),
            applied_cents: applied,
            presented_cents: applied,
            change_cents: 0,
            forfeited_cents: 0,
            reference: None,
            reference_last4: None,
            reference_digest: None,
        }
    }

    fn vat(rate: i64, total: i64, vat: i64) -> SaleRecordVat {
        SaleRecordVat {
            vat_rate: rate,
            total_cents: total,
            vat_cents: vat,
        }
    }

    /// Two mugs (one discounted) and a baguette, paid by card and cash; then one mug back.
    fn sale_and_return() -> [ReportedSale; 2] {
        let sale = ReportedSale {
            emitted_at: at("2026-03-02T10:05:00Z"),
            is_return: false,
            seller_id: "camille".into(),
            item_count: 3,
            total_cents: 2930,
            lines: vec![
                line(Some("mug"), 2, 2900, 2800, 2000),
                line(Some("baguette"), 1, 130, 130, 550),
            ],
            tenders: vec![tender("card", 2000), tender("cash", 930)],
            vat: vec![vat(2000, 2800, 467), vat(550, 130, 7)],
        };
        let back = ReportedSale {
            emitted_at: at("2026-03-02T10:20:00Z"),
            is_return: true,
            seller_id: "mathis".into(),
            item_count: 1,
            total_cents: -1400,
            lines: vec![line(Some("mug"), 1, -1450, -1400, 2000)],
            tenders: vec![tender("card", -1400)],
            vat: vec![vat(2000, -1400, -233)],
        };
        [sale, back]
    }

    fn report(group_by: GroupBy, sales: &[ReportedSale]) -> Report {
        let rollup = roll_up(sales).expect("rolls up");
        assemble(
            group_by,
            rollup.pieces(group_by, &TimeZone::get("Europe/Paris").unwrap()),
        )
        .expect("assembles")
    }

    fn keyed(report: &Report) -> Vec<(String, Measures)> {
        report
            .rows
            .iter()
            .map(|row| {
                let key = match &row.key {
                    RowKey::Text(text) => text.clone(),
                    RowKey::Vat(rate) => rate.hundredths().to_string(),
                    other => format!("{other:?}"),
                };
                (key, row.measures)
            })
            .collect()
    }

    fn m(sales: i64, returns: i64, items: i64, total: i64, returned: i64, gross: i64, vat: i64) -> Measures {
        Measures {
            sales_count: sales,
            returns_count: returns,
            item_count: items,
            total_cents: total,
            returned_cents: returned,
            gross_cents: gross,
            vat_cents: vat,
        }
    }

    #[test]
    fn each_grouping_adds_a_sale_and_its_return_up_with_the_return_subtracting() {
        let sales = sale_and_return();
        let totals = m(1, 1, 2, 1530, -1400, 0, 241);
        for group_by in GroupBy::ALL {
            assert_eq!(report(group_by, &sales).totals, totals, "{group_by:?}");
        }
        let by_day = report(GroupBy::Day, &sales);
        assert_eq!(by_day.rows.len(), 1);
        assert_eq!(by_day.rows[0].key, RowKey::Day(Date::constant(2026, 3, 2)));
        assert_eq!(by_day.rows[0].measures, totals);
        assert_eq!(
            keyed(&report(GroupBy::Seller, &sales)),
            [
                ("camille".to_owned(), m(1, 0, 3, 2930, 0, 0, 474)),
                ("mathis".to_owned(), m(0, 1, -1, -1400, -1400, 0, -233)),
            ]
        );
        assert_eq!(
            keyed(&report(GroupBy::Article, &sales)),
            [
                ("mug".to_owned(), m(1, 1, 1, 1400, -1400, 1450, 0)),
                ("baguette".to_owned(), m(1, 0, 1, 130, 0, 130, 0)),
            ]
        );
        assert_eq!(
            keyed(&report(GroupBy::Tender, &sales)),
            [
                ("cash".to_owned(), m(1, 0, 3, 930, 0, 0, 0)),
                ("card".to_owned(), m(1, 1, 2, 600, -1400, 0, 0)),
            ]
        );
        assert_eq!(
            keyed(&report(GroupBy::Vat, &sales)),
            [
                ("2000".to_owned(), m(1, 1, 1, 1400, -1400, 0, 234)),
                ("550".to_owned(), m(1, 0, 1, 130, 0, 0, 7)),
            ]
        );
    }

    #[test]
    fn custom_lines_share_the_reserved_article_id() {
        let mut sale = sale_and_return()[0].clone();
        sale.lines.push(line(None, 1, 500, 500, 0));
        sale.lines.push(line(None, 2, 300, 300, 0));
        let rows = keyed(&report(GroupBy::Article, &[sale]));
        let custom = rows.iter().find(|(key, _)| key == SkuId::CUSTOM).expect("a custom row");
        assert_eq!(custom.1, m(1, 0, 3, 800, 0, 800, 0));
    }

    fn days_and_hours(sales_at: &[&str], zone: &str) -> (Vec<String>, Vec<String>) {
        let sales: Vec<ReportedSale> = sales_at
            .iter()
            .map(|text| ReportedSale {
                emitted_at: at(text),
                ..sale_and_return()[0].clone()
            })
            .collect();
        let rollup = roll_up(&sales).unwrap();
        let zone = TimeZone::get(zone).unwrap();
        let keys = |group_by| {
            assemble(group_by, rollup.pieces(group_by, &zone))
                .unwrap()
                .rows
                .into_iter()
                .map(|row| match row.key {
                    RowKey::Day(date) => format!("{date} x{}", row.measures.sales_count),
                    RowKey::Hour(hour) => {
                        format!(
                            "{} {} x{}",
                            hour.local,
                            hour.offset_seconds / 3600,
                            row.measures.sales_count
                        )
                    }
                    other => format!("{other:?}"),
                })
                .collect::<Vec<_>>()
        };
        (keys(GroupBy::Day), keys(GroupBy::Hour))
    }

    #[test]
    fn days_and_hours_are_the_stores_own_across_midnight_and_clock_changes() {
        // Clocks go forward in Paris at 01:00Z on 2026-03-29: 02:00 local never happens.
        let (days, hours) = days_and_hours(
            &[
                "2026-03-28T22:50:00Z",
                "2026-03-28T23:10:00Z",
                "2026-03-29T00:59:00Z",
                "2026-03-29T01:00:00Z",
            ],
            "Europe/Paris",
        );
        assert_eq!(days, ["2026-03-28 x1", "2026-03-29 x3"]);
        assert_eq!(
            hours,
            [
                "2026-03-28T23:00:00 1 x1",
                "2026-03-29T00:00:00 1 x1",
                "2026-03-29T01:00:00 1 x1",
                "2026-03-29T03:00:00 2 x1",
            ]
        );
        // They go back at 01:00Z on 2026-10-25: 02:00 local happens twice.
        let (days, hours) = days_and_hours(&["2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z"], "Europe/Paris");
        assert_eq!(days, ["2026-10-25 x2"]);
        assert_eq!(hours, ["2026-10-25T02:00:00 2 x1", "2026-10-25T02:00:00 1 x1"]);
        // A zone half an hour off UTC still has whole hours.
        let (_, hours) = days_and_hours(&["2026-03-02T10:29:00Z", "2026-03-02T10:30:00Z"], "Asia/Kolkata");
        assert_eq!(hours, ["2026-03-02T15:00:00 5 x1", "2026-03-02T16:00:00 5 x1"]);
    }

    #[test]
    fn periods_are_whole_quarter_hours_forward_and_at_most_a_leap_year() {
        let ts = |text| parse_instant(text, crate::instant::Zone::UtcOrOffset).unwrap();
        let period = Period::new(ts("2026-03-01T00:00Z"), ts("2026-03-02T00:15Z")).unwrap();
        assert_eq!(period.buckets().1.index() - period.buckets().0.index(), 97);
        assert_eq!(
            Period::new(ts("2026-03-01T00:00Z"), ts("2026-03-01T00:00Z")),
            Err(PeriodError::Empty)
        );
        assert_eq!(
            Period::new(ts("2026-03-02T00:00Z"), ts("2026-03-01T00:00Z")),
            Err(PeriodError::Empty)
        );
        assert!(Period::new(ts("2027-01-01T00:00Z"), ts("2028-01-02T00:00Z")).is_ok());
        assert_eq!(
            Period::new(ts("2027-01-01T00:00Z"), ts("2028-01-02T00:15Z")),
            Err(PeriodError::TooLong)
        );
        assert_eq!(
            Period::new(ts("2026-03-01T00:05Z"), ts("2026-03-02T00:00Z")),
            Err(PeriodError::NotOnQuarterHour)
        );
    }

    #[test]
    fn a_month_of_paris_days_is_whole_utc_days_and_an_hour_at_each_end() {
        let ts = |text| parse_instant(text, crate::instant::Zone::UtcOrOffset).unwrap();
        let month = Period::new(ts("2026-03-01T00:00+01:00"), ts("2026-04-01T00:00+02:00")).unwrap();
        let spans: Vec<(Grain, i64)> = month
            .segments(&[Grain::Day, Grain::Hour, Grain::Quarter])
            .iter()
            .map(|s| (s.grain, (s.to.index() - s.from.index()) / s.grain.quarters()))
            .collect();
        assert_eq!(spans, [(Grain::Hour, 1), (Grain::Day, 30), (Grain::Hour, 22)]);
        let kolkata = Period::new(ts("2026-03-01T00:00+05:30"), ts("2026-03-03T00:00+05:30")).unwrap();
        let spans: Vec<(Grain, i64)> = kolkata
            .segments(&[Grain::Day, Grain::Quarter])
            .iter()
            .map(|s| (s.grain, (s.to.index() - s.from.index()) / s.grain.quarters()))
            .collect();
        assert_eq!(spans, [(Grain::Quarter, 22), (Grain::Day, 1), (Grain::Quarter, 74)]);
    }

    #[test]
    fn sums_past_what_json_carries_are_refused() {
        let mut sale = sale_and_return()[0].clone();
        sale.total_cents = MAX_SAFE_INTEGER;
        assert!(roll_up([&sale]).is_ok());
        assert_eq!(roll_up([&sale, &sale]), Err(Overflow));
    }

    /// A consistent ticket: lines, VAT and tenders that add up to its total, negative on a
    /// return, emitted within three days of early March.
    fn arbitrary_sale() -> impl Strategy<Value = ReportedSale> {
        let lines = prop::collection::vec(
            (
                prop::option::of(prop::sample::select(vec!["mug", "baguette", "book"])),
                1i64..5,
                0i64..5_000,
                prop::sample::select(vec![2000i64, 550, 0]),
            ),
            1..5,
        );
        (
            lines,
            any::<bool>(),
            prop::sample::select(vec!["camille", "mathis"]),
            0i64..(3 * 24 * 3600),
            prop::collection::vec(prop::sample::select(vec!["card", "cash", "gift_card"]), 1..3),
        )
            .prop_map(|(lines, is_return, seller, seconds, methods)| {
                let sign = if is_return { -1 } else { 1 };
                let lines: Vec<SaleRecordLine> = lines
                    .into_iter()
                    .map(|(sku, quantity, net, rate)| line(sku, quantity, sign * (net + 10), sign * net, rate))
                    .collect();
                let total: i64 = lines.iter().map(|l| l.net_cents).sum();
                let mut rates: BTreeMap<i64, i64> = BTreeMap::new();
                for line in &lines {
                    *rates.entry(line.vat_rate).or_default() += line.net_cents;
                }
                let vat = rates
                    .into_iter()
                    .map(|(rate, total)| SaleRecordVat {
                        vat_rate: rate,
                        total_cents: total,
                        vat_cents: total * rate / (10_000 + rate),
                    })
                    .collect();
                // The first method takes what the others leave.
                let share = total / methods.len() as i64;
                let tenders = methods
                    .iter()
                    .enumerate()
                    .map(|(i, method)| {
                        let others = share * (methods.len() as i64 - 1);
                        tender(method, if i == 0 { total - others } else { share })
                    })
                    .collect();
                ReportedSale {
                    emitted_at: at("2026-03-01T00:00:00Z") + seconds * 1_000_000,
                    is_return,
                    seller_id: seller.to_owned(),
                    item_count: lines.iter().map(|l| l.quantity).sum(),
                    total_cents: total,
                    lines,
                    tenders,
                    vat,
                }
            })
    }

    fn sum_rows(report: &Report) -> Measures {
        report
            .rows
            .iter()
            .try_fold(Measures::default(), |total, row| total.checked_add(row.measures))
            .unwrap()
    }

    proptest! {
        #[test]
        fn every_grouping_adds_up_to_the_totals(sales in prop::collection::vec(arbitrary_sale(), 0..30)) {
            let tickets = sales.iter().filter(|s| !s.is_return).count() as i64;
            let returns = sales.len() as i64 - tickets;
            let net: i64 = sales.iter().map(|s| s.total_cents).sum();
            let items: i64 = sales.iter().map(|s| if s.is_return { -s.item_count } else { s.item_count }).sum();
            for group_by in GroupBy::ALL {
                let report = report(group_by, &sales);
                let (rows, totals) = (sum_rows(&report), report.totals);
                prop_assert_eq!((totals.sales_count, totals.returns_count), (tickets, returns));
                prop_assert_eq!((totals.total_cents, totals.item_count), (net, items));
                // Amounts add up in every grouping; tickets and their items where each ticket
                // falls under one key.
                prop_assert_eq!(rows.total_cents, totals.total_cents, "{:?}", group_by);
                prop_assert_eq!(rows.returned_cents, totals.returned_cents, "{:?}", group_by);
                match group_by {
                    GroupBy::Day | GroupBy::Hour | GroupBy::Seller => prop_assert_eq!(rows, totals),
                    GroupBy::Article | GroupBy::Vat => prop_assert_eq!(rows.item_count, totals.item_count),
                    GroupBy::Tender => {}
                }
                if group_by == GroupBy::Vat {
                    prop_assert_eq!(rows.vat_cents, totals.vat_cents);
                }
            }
        }

        #[test]
        fn a_return_of_everything_cancels_its_sale(sale in arbitrary_sale()) {
            let mut sale = sale;
            sale.is_return = false;
            let mut back = sale.clone();
            back.is_return = true;
            back.total_cents = -sale.total_cents;
            for line in &mut back.lines {
                line.net_cents = -line.net_cents;
                line.gross_cents = -line.gross_cents;
            }
            for tender in &mut back.tenders {
                tender.applied_cents = -tender.applied_cents;
            }
            for vat in &mut back.vat {
                vat.total_cents = -vat.total_cents;
                vat.vat_cents = -vat.vat_cents;
            }
            for group_by in GroupBy::ALL {
                let report = report(group_by, &[sale.clone(), back.clone()]);
                for row in &report.rows {
                    prop_assert_eq!(row.measures.total_cents, 0);
                    prop_assert_eq!(row.measures.item_count, 0);
                    prop_assert_eq!(row.measures.sales_count, row.measures.returns_count);
                }
                prop_assert_eq!(report.totals.total_cents, 0);
            }
        }

        #[test]
        fn rollups_of_parts_add_up_to_the_rollup_of_the_whole(
            sales in prop::collection::vec(arbitrary_sale(), 0..30),
            cut in 0usize..30,
        ) {
            let cut = cut.min(sales.len());
            let (closed, open) = sales.split_at(cut);
            let zone = TimeZone::get("Europe/Paris").unwrap();
            let (closed, open) = (roll_up(closed).unwrap(), roll_up(open).unwrap());
            for group_by in GroupBy::ALL {
                let mut pieces = closed.pieces(group_by, &zone);
                pieces.extend(open.pieces(group_by, &zone));
                prop_assert_eq!(assemble(group_by, pieces).unwrap(), report(group_by, &sales));
            }
        }

        #[test]
        fn coarser_grains_add_up_the_same_spans(
            sales in prop::collection::vec(arbitrary_sale(), 0..30),
            grain in prop::sample::select(vec![Grain::Quarter, Grain::Hour, Grain::Day]),
        ) {
            let rollup = roll_up(&sales).unwrap();
            let coarser = rollup.by_grain(grain).unwrap();
            for (_, bucket, _, _) in coarser.rows() {
                prop_assert_eq!(grain.start(bucket), bucket);
            }
            // Every span of the grain holds what its quarter hours held, key by key.
            let mut expected: BTreeMap<(Dimension, Bucket, String), Measures> = BTreeMap::new();
            for (dimension, bucket, key, measures) in rollup.rows() {
                let entry = expected.entry((dimension, grain.start(bucket), key.to_owned())).or_default();
                *entry = entry.checked_add(*measures).unwrap();
            }
            let found: BTreeMap<(Dimension, Bucket, String), Measures> = coarser
                .rows()
                .map(|(dimension, bucket, key, measures)| ((dimension, bucket, key.to_owned()), *measures))
                .collect();
            prop_assert_eq!(found, expected);
        }

        #[test]
        fn segments_tile_the_period_with_whole_spans(
            from in 0i64..2_000,
            length in 1i64..2_000,
            store_level in any::<bool>(),
        ) {
            let base = Bucket::of(parse_instant("2026-03-01T00:00Z", crate::instant::Zone::UtcOnly).unwrap()).index();
            let period = Period::new(
                Bucket::from_index(base + from).start(),
                Bucket::from_index(base + from + length).start(),
            ).unwrap();
            let grains: &[Grain] = if store_level {
                &[Grain::Day, Grain::Hour, Grain::Quarter]
            } else {
                &[Grain::Day, Grain::Quarter]
            };
            let segments = period.segments(grains);
            let (start, end) = period.buckets();
            let mut at = start;
            for segment in &segments {
                prop_assert_eq!(segment.from, at, "{:?}", segments);
                prop_assert!(segment.from < segment.to);
                prop_assert_eq!(segment.grain.start(segment.from), segment.from);
                prop_assert_eq!(segment.grain.start(segment.to), segment.to);
                prop_assert!(grains.contains(&segment.grain));
                at = segment.to;
            }
            prop_assert_eq!(at, end);
            // At most one run of days, two of hours and two of quarter hours.
            prop_assert!(segments.len() <= 5, "{:?}", segments);
        }
    }
}
