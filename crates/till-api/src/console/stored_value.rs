//! `GET /console/stored-value?code=`: a gift card or a credit note by its code, with its
//! balance, state and ledger, as `getGiftCard` and `getCreditNote` read them.

use super::forms::Query;
use super::href::Href;
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

pub async fn page(
    visitor: Visitor,
    State(state): State<AppState>,
    Query(query): Query<CodeQuery>,
) -> Result<(StatusCode, Markup), Refused> {
    visitor.require::<ops::GetGiftCard>()?;
    visitor.require::<ops::GetCreditNote>()?;
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
        h1 { "Gift cards and credit notes" }
        form.picker method="get" action="/console/stored-value" {
            label for="code" { "Gift card or credit note code" }
            input #code name="code" value=[query.code.as_ref().map(InstrumentCode::as_str)] required;
            button type="submit" { "Look up" }
        }
        @match (&query.code, &found) {
            (Some(code), Some(record)) => (instrument(code.as_str(), record, now, &zone, &currency)),
            (Some(_), None) => p.refusal { "No gift card or credit note with this code." },
            (None, _) => {}
        }
    };
    Ok((
        status,
        layout::page("Gift cards & credit notes", Nav::StoredValue, &visitor, body),
    ))
}

fn instrument(
    code: &str,
    record: &InstrumentRecord,
    now: jiff::Timestamp,
    zone: &jiff::tz::TimeZone,
    currency: &str,
) -> Markup {
    let kind = match record.kind {
        InstrumentKind::GiftCard => "Gift card",
        InstrumentKind::CreditNote => "Credit note",
    };
    let state = InstrumentState::at(record.balance, record.expires_at, record.blocked, now);
    html! {
        section #instrument data-balance=(record.balance.get()) data-state=(state.as_str()) {
            h2 { (kind) " " code { (code) } }
            dl.facts {
                @if record.kind == InstrumentKind::CreditNote {
                    div { dt { "Number" } dd { (record.label) } }
                }
                div { dt { "Balance" } dd #balance { (money(record.balance.get(), currency)) } }
                div { dt { "State" } dd #state { (state.as_str()) } }
                div { dt { "Issued" } dd { (layout::local_time(record.issued_at, zone)) } }
                div { dt { "Expires" } dd { (record.expires_at.map_or("never".to_owned(), |at| layout::local_time(at, zone))) } }
                div {
                    dt { "Stores" }
                    dd { @if record.store_ids.is_empty() { "every store" } @else { (record.store_ids.join(", ")) } }
                }
            }
            table #activities {
                caption { "Ledger, oldest first" }
                thead { tr { th { "When" } th { "What" } th.n { "Amount" } th.n { "Balance after" } th { "Sale" } } }
                tbody {
                    @for activity in &record.activities {
                        tr {
                            td { (layout::local_time(activity.at, zone)) }
                            td { (activity.kind.as_str()) }
                            td.n { (money(activity.amount, currency)) }
                            td.n { (money(activity.balance_after, currency)) }
                            td {
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
