//! The accountant's exports, derived from the sealed day closures: `GET /v1/exports/fec` (the
//! Fichier des Écritures Comptables) and `GET /v1/exports/e-reporting` (B2C aggregates per day
//! and VAT rate). Only closed days are exported; a period with a day still open is refused.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, QueryParams};
use crate::openapi::Text;
use crate::ops;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use jiff::civil::Date;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;
use till_app::exports::{Days, Period};
use till_core::exports::fec::{fec, file_name};
use till_core::exports::{ClosedDay, ExportError, ereporting};
use till_core::ids::{RegisterId, StoreId};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Longest period one export covers: a fiscal year.
const MAX_EXPORT_DAYS: i32 = 366;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_fec))
        .routes(routes!(get_e_reporting))
}

/// A local date, `YYYY-MM-DD`.
pub(crate) struct LocalDate;

impl utoipa::PartialSchema for LocalDate {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Date)))
            .pattern(Some("^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))
            .description(Some("A local date, `YYYY-MM-DD`, in each store's time zone."))
            .into()
    }
}

impl utoipa::ToSchema for LocalDate {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("LocalDate")
    }
}

#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
struct ExportQuery {
    /// The first day, inclusive.
    #[param(value_type = LocalDate, inline)]
    from: Date,
    /// The last day, inclusive; not before `from`, less than a year after it, and not after
    /// today in the time zone of any store the period covers.
    #[param(value_type = LocalDate, inline)]
    to: Date,
    /// Only the registers of this store.
    #[param(value_type = Option<Text>)]
    store_id: Option<StoreId>,
    /// Only this register.
    #[param(value_type = Option<Text>)]
    register_id: Option<RegisterId>,
}

pub(crate) fn local_date(text: &str) -> Result<Date, &'static str> {
    text.parse::<Date>()
        .ok()
        .filter(|_| text.len() == 10)
        .ok_or("must be a date such as 2026-03-31")
}

impl FromParams for ExportQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let from = params.required("from", local_date);
        let to = params.required("to", local_date);
        let store_id = params.optional("storeId", StoreId::parse);
        let register_id = params.optional("registerId", RegisterId::parse);
        let (from, to) = (from?, to?);
        if to < from {
            return params.fail("to", "must not be before from");
        }
        if (to - from).get_days() >= MAX_EXPORT_DAYS {
            return params.fail("to", "must be less than a year after from");
        }
        Some(ExportQuery {
            from,
            to,
            store_id: store_id?,
            register_id: register_id?,
        })
    }
}

/// The closed days asked for; a 400 on `to` for a period ending after today in the time zone
/// of a store it covers, or the 422 naming the first day still open.
async fn closed_days(
    state: &AppState,
    query: &ExportQuery,
) -> Result<(Vec<ClosedDay>, BTreeMap<String, Option<String>>), ApiError> {
    let period = Period {
        from: query.from,
        to: query.to,
        store_id: query.store_id.clone(),
        register_id: query.register_id.clone(),
    };
    match till_app::exports::closed_days(state.app(), period).await? {
        Days::Closed { days, sirets } => Ok((days, sirets)),
        Days::NotBegun(today) => Err(crate::phrases::period_ends_after_today(&today)),
        Days::Open { register_id, date } => Err(ApiError::Business(format!(
            "Register {register_id} has sales on {date} that its day closure has not sealed yet; \
             only closed days are exported. Close that day (POST /v1/fiscal/registers/{register_id}/closures) \
             or end the period before it."
        ))),
    }
}

fn refused(error: ExportError) -> ApiError {
    ApiError::Business(error.to_string())
}

/// The FEC of a period.
///
/// The Fichier des Écritures Comptables (article A47 A-1 of the Livre des procédures fiscales)
/// of the sales journal, as tab-separated text with a header line of the 18 column names: one
/// entry per register's closed day, crediting sales (net) and VAT collected per rate and
/// debiting what each tender method took, returns on the opposite side; every entry balanced,
/// numbered from 1 without gaps in chronological order; dates `YYYYMMDD`, amounts with a
/// decimal comma. Accounts come from the configuration (`TILL_FEC_*`). Only closed days: a
/// period with sales on a day its register has not closed is refused (422, naming the register
/// and the day). Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/exports/fec", operation_id = "getFecExport", tag = "exports",
    params(ExportQuery),
    responses((status = 200, description = "The FEC file; `Content-Disposition` names it by the FEC rule (SIREN, `FEC`, closing date)",
                  content((String = "text/tab-separated-values")),
                  headers(("Content-Disposition" = String, description = "`attachment; filename=\"{SIREN}FEC{YYYYMMDD}.txt\"`"))),
              (status = 422, description = "A day of the period is not closed yet, or a day's tickets do not add up to its closure", body = crate::error::ErrorEnvelope)))]
async fn get_fec(
    _caller: Authorized<ops::GetFecExport>,
    State(state): State<AppState>,
    QueryParams(query): QueryParams<ExportQuery>,
) -> Result<Response, ApiError> {
    let (days, sirets) = closed_days(&state, &query).await?;
    let text = fec(&days, &state.config().fec).map_err(refused)?.render();
    let name = file_name(sirets.values().map(Option::as_deref), query.to);
    let disposition = format!("attachment; filename=\"{name}\"");
    let mut response = ([(CONTENT_TYPE, "text/tab-separated-values; charset=utf-8")], text).into_response();
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        response.headers_mut().insert(CONTENT_DISPOSITION, value);
    }
    Ok(response)
}

/// The e-reporting aggregates of a period.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EReporting {
    /// The first day, as asked.
    #[schema(format = Date)]
    from: String,
    /// The last day, as asked.
    #[schema(format = Date)]
    to: String,
    /// B2C transactions per day, then per VAT rate from the highest: the tickets no invoice
    /// covers.
    days: Vec<EReportingDay>,
    /// The tickets invoiced to businesses (sales an invoice covers, returns a credit invoice
    /// covers), per day and rate in the same form, left out of `days`: `days` and `invoiced`
    /// add up to the day closures.
    invoiced: Vec<EReportingDay>,
}

/// One day and VAT rate, across the registers exported.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EReportingDay {
    /// The local day, `YYYY-MM-DD`.
    #[schema(format = Date)]
    date: String,
    /// The rate in percent (`5.5`).
    #[schema(value_type = f64)]
    vat_rate: serde_json::Number,
    /// Sales less returns, without VAT.
    taxable_base_cents: i64,
    /// The VAT of the sales less that of the returns.
    vat_cents: i64,
    /// Tickets with a part at this rate, sales and returns alike.
    transaction_count: i64,
}

/// The e-reporting aggregates of a period.
///
/// B2C transactions per local day and VAT rate as the e-reporting reform asks: taxable base,
/// VAT and number of transactions, taken from the registers' sealed day closures (returns
/// subtracted). Tickets invoiced to businesses are left out of them and listed apart in
/// `invoiced`, in the same form. Only closed days: a period with sales on a day its register has not closed is
/// refused (422, naming the register and the day). Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/exports/e-reporting", operation_id = "getEReportingExport", tag = "exports",
    params(ExportQuery),
    responses((status = 200, description = "The aggregates", body = EReporting),
              (status = 422, description = "A day of the period is not closed yet, or a day's tickets do not add up to its closure", body = crate::error::ErrorEnvelope)))]
async fn get_e_reporting(
    _caller: Authorized<ops::GetEReportingExport>,
    State(state): State<AppState>,
    QueryParams(query): QueryParams<ExportQuery>,
) -> Result<Json<EReporting>, ApiError> {
    let (days, _) = closed_days(&state, &query).await?;
    let b2c = ereporting::aggregates(&days).map_err(refused)?;
    let invoiced = ereporting::invoiced(&days).map_err(refused)?;
    let rows = |rows: Vec<ereporting::DayRate>| {
        rows.into_iter()
            .map(|row| EReportingDay {
                date: row.date.to_string(),
                vat_rate: row.vat_rate.as_json_number(),
                taxable_base_cents: row.taxable_base_cents,
                vat_cents: row.vat_cents,
                transaction_count: row.transaction_count,
            })
            .collect()
    };
    Ok(Json(EReporting {
        from: query.from.to_string(),
        to: query.to.to_string(),
        days: rows(b2c),
        invoiced: rows(invoiced),
    }))
}
