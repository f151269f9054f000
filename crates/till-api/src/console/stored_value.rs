//! `GET /console/stored-value?code=`: a gift card or a credit note by its code, with its
//! balance, state and ledger, as `getGiftCard` and `getCreditNote` read them.

use super::forms::Query;
use super::href::Href;
use super::language::Language;
use super::layout::{self, Nav, money};
use super::refused::Refused;
use super::session::Visitor;
use crate::extract::{FromParams, Params};
use crate::ops;
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use maud::{Markup, html};
use till_app::stored_value::{self, InstrumentRecord};
use till_core::stored_value::{InstrumentCode, InstrumentKind, InstrumentState};

pub struct CodeQuery {
    code: Option<InstrumentCode>,
}

impl FromParams for CodeQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let code = params.optional("code", |text: &str| InstrumentCode::parse(text.trim()))?;
        Some(CodeQuery { code })
    }
}

/// Refused unless the visitor may read gift cards and credit notes.
pub fn allowed(visitor: &Visitor) -> Result<(), Refused> {
    visitor.require::<ops::GetGiftCard>()?;
    visitor.require::<ops::GetCreditNote>()
}

pub async fn page(
    visitor: Visitor,
    State(state): State<AppState>,
    Query(query): Query<CodeQuery>,
) -> Result<(StatusCode, Markup), Refused> {
    allowed(&visitor)?;
    let words = visitor.words();
    let language = visitor.language();
    let found = match &query.code {
        Some(code) => stored_value::instrument(state.app(), &visitor.principal, code).await?,
        None => None,
    };
    let status = if query.code.is_some() && found.is_none() {
        StatusCode::NOT_FOUND
    } else {
        StatusCode::OK
    };
    let zone = super::today::zone_of(None);
    let currency = super::today::currency_of(None);
    let now = state.now();
    let body = html! {
        h1 { (words.stored_value_title) }
        form.picker method="get" action="/console/stored-value" {
            span.field.wide {
                label for="code" { (words.code_label) }
                input #code name="code" value=[query.code.as_ref().map(InstrumentCode::as_str)] required;
            }
            button type="submit" { (words.look_up) }
        }
        @match (&query.code, &found) {
            (Some(code), Some(record)) => (instrument(code.as_str(), record, now, &zone, &currency, language)),
            (Some(_), None) => p.refusal { (words.no_such_code) },
            (None, _) => {}
        }
    };
    Ok((
        status,
        layout::page(words.nav_stored_value, Nav::StoredValue, &visitor, body),
    ))
}

fn instrument(
    code: &str,
    record: &InstrumentRecord,
    now: jiff::Timestamp,
    zone: &jiff::tz::TimeZone,
    currency: &str,
    language: Language,
) -> Markup {
    let words = language.words();
    let money = |cents| money(cents, currency, language);
    let kind = language.instrument(record.kind);
    let state = InstrumentState::at(record.balance, record.expires_at, record.blocked, now);
    html! {
        section #instrument data-balance=(record.balance.get()) data-state=(state.as_str()) {
            h2 { (kind) " " code { (code) } }
            dl.facts {
                @if record.kind == InstrumentKind::CreditNote {
                    div { dt { (words.number) } dd { (record.label) } }
                }
                div { dt { (words.balance) } dd #balance { (money(record.balance.get())) } }
                div { dt { (words.state) } dd #state { (language.instrument_state(record.kind, state)) } }
                div { dt { (words.issued) } dd { (layout::local_time(record.issued_at, zone, language)) } }
                div { dt { (words.expires) } dd { (record.expires_at.map_or(words.never.to_owned(), |at| layout::local_time(at, zone, language))) } }
                div {
                    dt { (words.stores) }
                    dd { @if record.store_ids.is_empty() { (words.every_store_lower) } @else { (record.store_ids.join(", ")) } }
                }
            }
            table #activities {
                caption { (words.ledger) }
                thead { tr { th { (words.when) } th { (words.what) } th.n { (words.amount) } th.n { (words.balance_after) } th { (words.sale) } } }
                tbody {
                    @for activity in &record.activities {
                        tr {
                            td data-label=(words.when) { (layout::local_time(activity.at, zone, language)) }
                            td data-label=(words.what) { (language.activity(activity.kind)) }
                            td.n data-label=(words.amount) { (money(activity.amount)) }
                            td.n data-label=(words.balance_after) { (money(activity.balance_after)) }
                            td data-label=(words.sale) {
                                @if let Some(transaction) = &activity.transaction_id {
                                    a href=(Href::to("/console/sales").segment(transaction)) { (transaction) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
