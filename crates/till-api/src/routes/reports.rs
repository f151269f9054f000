//! `GET /v1/reports/sales`: the sales of a period added up by local day or hour, article,
//! seller, tender method or VAT rate, as JSON or, for `Accept: text/csv`, as CSV.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, QueryParams};
use crate::openapi::{QuarterHour, Text, words};
use crate::ops;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::header::{ACCEPT, CONTENT_TYPE, VARY};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use jiff::{Span, Timestamp};
use serde::Serialize;
use till_app::reports::{ReportRequest, sales_report};
use till_core::csv_cell::text_cell;
use till_core::ids::{RegisterId, StoreId};
use till_core::instant::{format_utc, parse_quarter_hour};
use till_core::money::MAX_SAFE_INTEGER;
use till_core::report::{Bucket, GroupBy, Measures, Period, PeriodError, Report, Row, RowKey};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_sales_report))
}

#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
struct ReportQuery {
    /// Only the sales of this store.
    #[param(value_type = Option<Text>)]
    store_id: Option<StoreId>,
    /// Only the sales of this register.
    #[param(value_type = Option<Text>)]
    register_id: Option<RegisterId>,
    /// Where the period starts, inclusive. Default: 24 hours before `to`.
    #[param(value_type = Option<QuarterHour>, inline)]
    from: Option<Timestamp>,
    /// Where the period ends, exclusive; at most 366 days after `from`. Default: the end of
    /// the current quarter hour, so that every sale so far counts.
    #[param(value_type = Option<QuarterHour>, inline)]
    to: Option<Timestamp>,
    /// How rows are keyed.
    #[param(value_type = GroupByName, inline)]
    group_by: GroupBy,
}

/// What `groupBy` names, for the document.
struct GroupByName;

impl utoipa::PartialSchema for GroupByName {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        group_by_schema().into()
    }
}

impl utoipa::ToSchema for GroupByName {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("GroupBy")
    }
}

fn group_by_schema() -> utoipa::openapi::schema::Schema {
    words(
        GroupBy::ALL.iter().map(|group_by| group_by.as_str()),
        false,
        "`day` and `hour`: local to each sale's store; `article`, `seller`, `tender` (method), `vat` (rate).",
    )
}

impl FromParams for ReportQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let store_id = params.optional("storeId", StoreId::parse);
        let register_id = params.optional("registerId", RegisterId::parse);
        let from = params.optional("from", parse_quarter_hour);
        let to = params.optional("to", parse_quarter_hour);
        let group_by = params.required("groupBy", |text| {
            GroupBy::parse(text).ok_or("must be day, hour, article, seller, tender or vat")
        });
        Some(ReportQuery {
            store_id: store_id?,
            register_id: register_id?,
            from: from?,
            to: to?,
            group_by: group_by?,
        })
    }
}

/// The period asked for, its defaults taken at `now`. A refusal names `to` when it was
/// given, since it is measured from `from`; else `from`.
fn period(from: Option<Timestamp>, to: Option<Timestamp>, now: Timestamp) -> Result<Period, ApiError> {
    let day = Span::new().hours(24);
    let end = to.unwrap_or_else(|| Bucket::of(now).next().start());
    let (field, other_end) = match to {
        Some(_) => ("to", "from"),
        None => ("from", "the end of the current quarter hour"),
    };
    let start = match from {
        Some(from) => from,
        None => end
            .checked_sub(day)
            .map_err(|_| ApiError::field("to", "must be at least 24 hours after the earliest accepted instant"))?,
    };
    Period::new(start, end).map_err(|error| {
        let message = match (error, to) {
            (PeriodError::Empty, Some(_)) => "must be after from".to_owned(),
            (PeriodError::Empty, None) => format!("must be before {other_end}"),
            (PeriodError::TooLong, Some(_)) => "must be at most 366 days after from".to_owned(),
            (PeriodError::TooLong, None) => format!("must be at most 366 days before {other_end}"),
            (PeriodError::NotOnQuarterHour, _) => "must fall on a quarter hour".to_owned(),
        };
        ApiError::field(field, message)
    })
}

/// A sales report.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SalesReport {
    #[schema(schema_with = group_by_schema)]
    group_by: &'static str,
    store_id: Option<String>,
    register_id: Option<String>,
    /// Where the period starts (inclusive), in UTC.
    from: String,
    /// Where it ends (exclusive), in UTC.
    to: String,
    rows: Vec<ReportRow>,
    /// Every sale of the period counted once.
    totals: ReportTotals,
}

/// One row: the sales under one key. A ticket counts under each key it touches (a ticket of
/// two articles counts in both rows); amounts are net of returns.
#[derive(Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportRow {
    /// `day`: the local date (`2026-03-29`). `hour`: the local start with the store's offset
    /// then (`2026-03-29T03:00:00+02:00`). `article`: the article's id (64 zeros for custom
    /// lines). `seller`: the seller's subject. `tender`: the method. `vat`: the rate in percent
    /// (`5.5`).
    key: String,
    /// Tickets of every kind but returns.
    sales_count: i64,
    returns_count: i64,
    /// Units sold less units returned; for `tender`, those of the tickets paid that way.
    item_count: i64,
    /// Sales less returns, VAT included; for `tender`, what was paid that way.
    total_cents: i64,
    /// The returns' part of `totalCents`: zero or negative.
    returned_cents: i64,
    /// `vat` rows: the rate as a number.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<f64>)]
    vat_rate: Option<serde_json::Number>,
    /// `vat` rows: `totalCents` less its VAT.
    #[serde(skip_serializing_if = "Option::is_none")]
    base_cents: Option<i64>,
    /// `day`, `hour`, `seller` and `vat` rows: the VAT `totalCents` contains.
    #[serde(skip_serializing_if = "Option::is_none")]
    vat_cents: Option<i64>,
    /// `article` rows: before promotions and discounts.
    #[serde(skip_serializing_if = "Option::is_none")]
    gross_cents: Option<i64>,
}

/// The period's sales, each counted once.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportTotals {
    sales_count: i64,
    returns_count: i64,
    item_count: i64,
    total_cents: i64,
    returned_cents: i64,
    /// The VAT `totalCents` contains.
    vat_cents: i64,
    /// `totalCents` less its VAT.
    base_cents: i64,
}

/// The amounts each grouping adds to the counts every row has.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Extra {
    VatRate,
    Base,
    Vat,
    Gross,
}

impl Extra {
    /// In the order of [`ReportRow`]'s fields, which CSV columns follow.
    fn of(group_by: GroupBy) -> &'static [Extra] {
        match group_by {
            GroupBy::Day | GroupBy::Hour | GroupBy::Seller => &[Extra::Vat],
            GroupBy::Article => &[Extra::Gross],
            GroupBy::Tender => &[],
            GroupBy::Vat => &[Extra::VatRate, Extra::Base, Extra::Vat],
        }
    }

    fn column(self) -> &'static str {
        match self {
            Extra::VatRate => "vatRate",
            Extra::Base => "baseCents",
            Extra::Vat => "vatCents",
            Extra::Gross => "grossCents",
        }
    }
}

const COUNTS: [&str; 6] = [
    "key",
    "salesCount",
    "returnsCount",
    "itemCount",
    "totalCents",
    "returnedCents",
];

impl ReportRow {
    fn of(group_by: GroupBy, row: &Row) -> Result<ReportRow, ApiError> {
        let extras = Extra::of(group_by);
        let has = |extra| extras.contains(&extra);
        let m = &row.measures;
        let (key, vat_rate) = match &row.key {
            RowKey::Day(date) => (date.to_string(), None),
            RowKey::Hour(hour) => (
                format!(
                    "{}T{:02}:00:00{}",
                    hour.local.date(),
                    hour.local.hour(),
                    offset_text(hour.offset_seconds)
                ),
                None,
            ),
            RowKey::Text(text) => (text.clone(), None),
            RowKey::Vat(rate) => (rate.as_json_number().to_string(), Some(rate.as_json_number())),
        };
        Ok(ReportRow {
            key,
            sales_count: m.sales_count,
            returns_count: m.returns_count,
            item_count: m.item_count,
            total_cents: m.total_cents,
            returned_cents: m.returned_cents,
            vat_rate: vat_rate.filter(|_| has(Extra::VatRate)),
            base_cents: has(Extra::Base).then(|| base(m)).transpose()?,
            vat_cents: has(Extra::Vat).then_some(m.vat_cents),
            gross_cents: has(Extra::Gross).then_some(m.gross_cents),
        })
    }
}

/// `+hh:mm` or `-hh:mm`.
fn offset_text(seconds: i32) -> String {
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

/// What `measures` total without their VAT.
fn base(measures: &Measures) -> Result<i64, ApiError> {
    measures
        .total_cents
        .checked_sub(measures.vat_cents)
        .filter(|base| base.abs() <= MAX_SAFE_INTEGER)
        .ok_or_else(|| ApiError::from(till_app::Refusal::ReportTooLarge))
}

impl SalesReport {
    fn of(report: &Report, asked: &Asked) -> Result<SalesReport, ApiError> {
        let t = &report.totals;
        Ok(SalesReport {
            group_by: report.group_by.as_str(),
            store_id: asked.store_id.clone(),
            register_id: asked.register_id.clone(),
            from: format_utc(asked.period.from()),
            to: format_utc(asked.period.to()),
            rows: report
                .rows
                .iter()
                .map(|row| ReportRow::of(report.group_by, row))
                .collect::<Result<_, _>>()?,
            totals: ReportTotals {
                sales_count: t.sales_count,
                returns_count: t.returns_count,
                item_count: t.item_count,
                total_cents: t.total_cents,
                returned_cents: t.returned_cents,
                vat_cents: t.vat_cents,
                base_cents: base(t)?,
            },
        })
    }

    /// The rows as CSV: a header line, then one line per row, in the order of the JSON rows;
    /// no totals line, so that every line is a row. The key is text a person may have typed (a
    /// seller's or an article's id), written so that a spreadsheet never reads it as a formula;
    /// counts and amounts are numbers till writes and go as they are.
    fn csv(&self, group_by: GroupBy) -> Result<String, ApiError> {
        let header = COUNTS
            .into_iter()
            .chain(Extra::of(group_by).iter().map(|extra| extra.column()));
        let mut writer = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
        writer.write_record(header).map_err(ApiError::internal)?;
        for row in &self.rows {
            let row = ReportRow {
                key: text_cell(&row.key).into_owned(),
                ..row.clone()
            };
            writer.serialize(row).map_err(ApiError::internal)?;
        }
        let bytes = writer.into_inner().map_err(|e| ApiError::internal(e.into_error()))?;
        String::from_utf8(bytes).map_err(ApiError::internal)
    }
}

/// What the answer repeats of the request, defaults resolved.
struct Asked {
    store_id: Option<String>,
    register_id: Option<String>,
    period: Period,
}

/// Whether the caller asked for CSV: `text/csv` in `Accept` with a weight above zero and
/// above any `application/json`'s.
fn wants_csv(headers: &HeaderMap) -> bool {
    let mut csv = 0.0f32;
    let mut json = 0.0f32;
    for value in headers.get_all(ACCEPT) {
        let Ok(value) = value.to_str() else { continue };
        for range in value.split(',') {
            let mut parts = range.split(';');
            let mime = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            let weight = parts
                .filter_map(|param| param.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            match mime.as_str() {
                "text/csv" => csv = csv.max(weight),
                "application/json" => json = json.max(weight),
                _ => {}
            }
        }
    }
    csv > 0.0 && csv > json
}

/// Sales added up over a period.
///
/// The sales of a period (`from` inclusive, `to` exclusive, on quarter hours; the last 24
/// hours by default) in a store, on a register or across every store, with one row per local
/// day or hour of each sale's store (`day`, `hour`: a chain's stores in several zones each
/// count their own days), per article, seller, tender method or VAT rate, and the totals.
/// Returns subtract: their amounts and units count negatively, and a return counts in
/// `returnsCount`, not `salesCount`. With `Accept: text/csv` the same rows come as CSV (a
/// header line, one line per row, no totals line). Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/reports/sales", operation_id = "getSalesReport", tag = "reports",
    params(ReportQuery),
    responses((status = 200, description = "The report, as JSON or, for `Accept: text/csv`, its rows as CSV",
                  content((SalesReport = "application/json"), (String = "text/csv")),
                  headers(("Vary" = String, description = "`accept`: the answer depends on it")))))]
async fn get_sales_report(
    _caller: Authorized<ops::GetSalesReport>,
    State(state): State<AppState>,
    QueryParams(query): QueryParams<ReportQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let period = period(query.from, query.to, state.now())?;
    let asked = Asked {
        store_id: query.store_id.as_ref().map(|s| s.as_str().to_owned()),
        register_id: query.register_id.as_ref().map(|r| r.as_str().to_owned()),
        period,
    };
    let group_by = query.group_by;
    let report = sales_report(
        state.app(),
        ReportRequest {
            store_id: query.store_id,
            register_id: query.register_id,
            period,
            group_by,
        },
    )
    .await?;
    let view = SalesReport::of(&report, &asked)?;
    let mut response = if wants_csv(&headers) {
        ([(CONTENT_TYPE, "text/csv; charset=utf-8")], view.csv(group_by)?).into_response()
    } else {
        Json(view).into_response()
    };
    response.headers_mut().insert(VARY, HeaderValue::from_static("accept"));
    Ok(response)
}
