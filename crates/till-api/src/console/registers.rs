//! `GET /console/registers`: each register of a store with its open session and that session's
//! card payment attempts, its day when closed early, and its latest Z reports, from the
//! session and payment lists the API reads;
//! `POST /console/registers/{registerId}/verify` audits a register's journal as
//! `verifyRegisterJournal` does and shows each chain's state.

use super::forms::Query;
use super::href::Href;
use super::language::Language;
use super::layout::{self, Nav, money};
use super::refused::Refused;
use super::session::{FORM_TOKEN, Visitor, Write};
use super::today::{DayQuery, chosen, currency_of, day_zone, store_select, stores};
use crate::error::ApiError;
use crate::extract::{FromParams, Params, PathParams};
use crate::ops;
use crate::routes::fiscal::{Verification, verify_journal};
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use jiff::tz::TimeZone;
use maud::{Markup, html};
use std::collections::BTreeMap;
use till_app::console::closed_days;
use till_app::sessions::{SessionFilter, SessionRecord};
use till_app::storage::Window;
use till_app::storage::payments::PaymentFilter;
use till_app::stores::StoreRecord;
use till_core::ids::{RegisterId, SessionId};
use till_core::payment::{Attempt, AttemptKind};

/// Sessions read for the page, newest opened first: the registers of a store at work.
const SESSIONS_READ: usize = 300;
/// Z reports shown per register.
const Z_REPORTS_SHOWN: usize = 5;
/// Card payment attempts shown of an open session.
const ATTEMPTS_SHOWN: usize = 50;

/// One register as the page shows it.
struct RegisterView {
    register_id: RegisterId,
    open: Option<SessionRecord>,
    /// Closed sessions, newest first.
    closed: Vec<SessionRecord>,
}

/// The registers of the sessions read, the most recently opened first.
fn registers(sessions: Vec<SessionRecord>, now: jiff::Timestamp) -> Vec<RegisterView> {
    let mut views: Vec<RegisterView> = Vec::new();
    for session in sessions {
        let index = match views.iter().position(|view| view.register_id == session.register_id) {
            Some(index) => index,
            None => {
                views.push(RegisterView {
                    register_id: session.register_id.clone(),
                    open: None,
                    closed: Vec::new(),
                });
                views.len() - 1
            }
        };
        let view = &mut views[index];
        if session.is_open_at(now) {
            view.open.get_or_insert(session);
        } else if session.closed_at.is_some() && view.closed.len() < Z_REPORTS_SHOWN {
            view.closed.push(session);
        }
    }
    views
}

/// What a register's page shows after its verify button.
struct Verified {
    register_id: RegisterId,
    verification: Verification,
}

/// Refused unless the visitor may list the sessions and pick a store.
pub fn allowed(visitor: &Visitor) -> Result<(), Refused> {
    visitor.require::<ops::ListSessions>()?;
    visitor.require::<ops::ListStores>()
}

async fn render(
    visitor: &Visitor,
    state: &AppState,
    asked: DayQuery,
    verified: Option<Verified>,
) -> Result<Markup, Refused> {
    allowed(visitor)?;
    let words = visitor.words();
    let language = visitor.language();
    let stores = stores(state).await?;
    let store = chosen(state, asked.store.as_ref()).await?;
    let store = store.as_ref();
    let now = state.now();
    let filter = SessionFilter {
        store_id: store.map(|s| s.store_id.clone()),
        register_id: None,
        open: None,
    };
    let window = Window {
        after: None,
        take: SESSIONS_READ,
    };
    let sessions = till_app::sessions::list(state.app(), &filter, now, &window).await?;
    let views = registers(sessions, now);
    let closed_days = closed_days(state.app(), store.map(|s| &s.store_id), now).await?;
    let zone = day_zone(&stores, store);
    let currency = currency_of(store.or(stores.first()));
    let may_verify = visitor.may::<ops::VerifyRegisterJournal>();
    let mut attempts: BTreeMap<SessionId, Vec<Attempt>> = BTreeMap::new();
    if visitor.may::<ops::ListPayments>() {
        for open in views.iter().filter_map(|view| view.open.as_ref()) {
            let filter = PaymentFilter {
                session_id: Some(open.session_id.clone()),
                state: None,
            };
            let window = Window {
                after: None,
                take: ATTEMPTS_SHOWN,
            };
            let listed = till_app::payments::list(state.app(), &visitor.principal, filter, &window).await?;
            attempts.insert(open.session_id.clone(), listed);
        }
    }
    let body = html! {
        h1 { (words.registers) }
        (store_picker(&stores, store, language))
        @if let Some(verified) = &verified {
            (verdict(verified, language))
        }
        @if views.is_empty() {
            p { (words.no_register) }
        }
        @for view in &views {
            section.register #(format!("register-{}", view.register_id.as_str())) {
                h2 { (words.register) " " (view.register_id.as_str()) }
                @match &view.open {
                    Some(open) => p.open {
                        ((words.open_session)(
                            html! { code { (open.session_id.as_str()) } },
                            open.cashier_subject.as_str(),
                            &layout::local_time(open.opened_at, &zone, language),
                            &money(open.opening_float.get(), &currency, language),
                        ))
                    },
                    None => p { (words.no_session_open) },
                }
                @if let Some(open) = &view.open {
                    @match attempts.get(&open.session_id) {
                        Some(listed) => (card_payments(listed, &zone, &currency, language)),
                        None => p.note { ((words.needs_scope_note)(words.seeing_card_payments, "pos.sales.read")) },
                    }
                }
                @if let Some(closed) = closed_days.iter().find(|closed| closed.register_id == view.register_id) {
                    p.day-closed {
                        @let day = layout::date_text(&closed.day, language);
                        @if closed.through == closed.day {
                            ((words.day_closed)(&day))
                        } @else {
                            ((words.period_closed)(&day, &layout::date_text(&closed.through, language)))
                        }
                    }
                }
                (z_reports(&view.closed, &zone, &currency, language))
                @if may_verify {
                    form.verify method="post" action=(Href::to("/console/registers").segment(view.register_id.as_str()).then("verify")) {
                        input type="hidden" name=(FORM_TOKEN) value=(visitor.form_token());
                        @if let Some(store) = store {
                            input type="hidden" name="store" value=(store.store_id.as_str());
                        }
                        button type="submit" { (words.verify_journal) }
                    }
                } @else {
                    p.note { ((words.needs_scope_note)(words.verifying_a_journal, "pos.fiscal.read")) }
                }
            }
        }
    };
    Ok(layout::page(words.nav_registers, Nav::Registers, visitor, body))
}

fn store_picker(stores: &[StoreRecord], store: Option<&StoreRecord>, language: Language) -> Markup {
    let words = language.words();
    html! {
        form.picker method="get" action="/console/registers" {
            (store_select(stores, store, words))
            button type="submit" { (words.show) }
        }
    }
}

/// An open session's card payment attempts, by id: what each terminal was asked, what it said,
/// and the sale that took it.
fn card_payments(attempts: &[Attempt], zone: &TimeZone, currency: &str, language: Language) -> Markup {
    let words = language.words();
    html! {
        @if attempts.is_empty() {
            p.card-payments { (words.no_card_payment) }
        } @else {
            table.card-payments {
                caption { (words.card_payments) }
                thead { tr {
                    th { (words.payment) } th { (words.asked_at) } th { (words.terminal) }
                    th.n { (words.amount) } th { (words.state) } th { (words.card) } th { (words.sale) }
                } }
                tbody {
                    @for attempt in attempts {
                        @let card = attempt.outcome.as_ref().map(|outcome| {
                            let brand = outcome.card_brand().map(|b| b.as_str()).unwrap_or_default();
                            let last4 = outcome.last4().map(|l| format!("•••• {}", l.as_str())).unwrap_or_default();
                            format!("{brand} {last4}").trim().to_owned()
                        });
                        tr {
                            td data-label=(words.payment) { code { (attempt.id.as_str()) } }
                            td data-label=(words.asked_at) { (layout::local_time(attempt.requested_at, zone, language)) }
                            td data-label=(words.terminal) { (attempt.terminal_id.as_ref().map(|t| t.as_str()).unwrap_or_default()) }
                            td.n data-label=(words.amount) {
                                @if attempt.kind == AttemptKind::Refund { "−" }
                                (money(attempt.authorized().unwrap_or(attempt.amount).get(), currency, language))
                            }
                            td data-label=(words.state) { ((words.payment_state)(attempt.state)) }
                            td data-label=(words.card) { (card.unwrap_or_default()) }
                            td data-label=(words.sale) { (attempt.captured_by.as_ref().map(|t| t.as_str()).unwrap_or_default()) }
                        }
                    }
                }
            }
        }
    }
}

/// The Z reports of closed sessions, newest first, with the figures sealed in them.
fn z_reports(closed: &[SessionRecord], zone: &TimeZone, currency: &str, language: Language) -> Markup {
    let words = language.words();
    let figure = |session: &SessionRecord, name: &str| {
        session
            .z_report
            .as_ref()
            .and_then(|report| report.get(name))
            .and_then(serde_json::Value::as_i64)
    };
    html! {
        @if !closed.is_empty() {
            table.z-reports {
                caption { (words.z_reports) }
                thead { tr { th { (words.closed) } th { (words.cashier) } th.n { (words.sales_count) } th.n { (words.total) } } }
                tbody {
                    @for session in closed {
                        tr {
                            td data-label=(words.closed) { (session.closed_at.map(|at| layout::local_time(at, zone, language)).unwrap_or_default()) }
                            td data-label=(words.cashier) { (session.cashier_subject.as_str()) }
                            td.n data-label=(words.sales_count) { (figure(session, "salesCount").map(|n| n.to_string()).unwrap_or_default()) }
                            td.n data-label=(words.total) { (figure(session, "totalCents").map(|cents| money(cents, currency, language)).unwrap_or_default()) }
                        }
                    }
                }
            }
        }
    }
}

fn verdict(verified: &Verified, language: Language) -> Markup {
    let words = language.words();
    let verification = &verified.verification;
    let chains: BTreeMap<&str, usize> = verification
        .chains
        .iter()
        .map(|(chain, entries)| (chain.as_str(), *entries))
        .collect();
    let failed_chain = verification
        .first_failure
        .as_ref()
        .map(|failure| failure.chain.as_str());
    html! {
        section.verdict #verdict data-register=(verified.register_id.as_str()) data-ok=(verification.ok)
            data-entries=(verification.entries) {
            @if verification.ok {
                h2.ok { ((words.journal_holds)(verified.register_id.as_str())) }
            } @else {
                h2.failed { ((words.journal_broken)(verified.register_id.as_str())) }
            }
            table {
                thead { tr { th { (words.chain) } th.n { (words.entries) } th { (words.state) } } }
                tbody {
                    @for (chain, entries) in &chains {
                        tr data-chain=(chain) {
                            td data-label=(words.chain) { (language.chain(chain)) }
                            td.n data-label=(words.entries) { (entries) }
                            td data-label=(words.state) {
                                @if failed_chain == Some(*chain) { (words.broken) } @else if verification.ok { (words.verified) } @else { (words.not_reached) }
                            }
                        }
                    }
                }
            }
            @if let Some(failure) = &verification.first_failure {
                p.refusal {
                    (words.first_failure) (words.colon) (language.chain(&failure.chain)) ", " (words.entry) " " (failure.seq)
                    " (" code { (failure.kind) } ")" (words.colon) span lang="en" { (failure.reason) }
                }
            }
        }
    }
}

pub async fn page(
    visitor: Visitor,
    State(state): State<AppState>,
    Query(query): Query<DayQuery>,
) -> Result<Markup, Refused> {
    render(&visitor, &state, query, None).await
}

/// `{registerId}` of the verify form.
pub struct RegisterPath(RegisterId);

impl FromParams for RegisterPath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("registerId", RegisterId::parse).map(RegisterPath)
    }
}

/// The store the verify form came from, to show its registers again.
pub struct StoreField(DayQuery);

impl FromParams for StoreField {
    fn from_params(params: &Params) -> Option<Self> {
        DayQuery::from_params(params).map(StoreField)
    }
}

/// Audits the register's journal (a failure not reported before is recorded, as the API's
/// verify does), then shows the registers with the verdict.
pub async fn verify(
    State(state): State<AppState>,
    path: Result<PathParams<RegisterPath>, ApiError>,
    write: Write<StoreField>,
) -> Result<(StatusCode, Markup), Refused> {
    let PathParams(RegisterPath(register)) = path?;
    let Write {
        visitor,
        form: StoreField(asked),
    } = write;
    visitor.require::<ops::VerifyRegisterJournal>()?;
    let verification = verify_journal(&state, register.clone()).await?;
    let verified = Verified {
        register_id: register,
        verification,
    };
    Ok((StatusCode::OK, render(&visitor, &state, asked, Some(verified)).await?))
}
