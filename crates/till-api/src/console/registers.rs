//! `GET /console/registers`: each register of a store with its open session, its day when
//! closed early, and its latest Z reports, from the session list the API reads;
//! `POST /console/registers/{registerId}/verify` audits a register's journal as
//! `verifyRegisterJournal` does and shows each chain's state.

use super::forms::Query;
use super::href::Href;
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
use till_app::stores::StoreRecord;
use till_core::ids::RegisterId;

/// Sessions read for the page, newest opened first: the registers of a store at work.
const SESSIONS_READ: usize = 300;
/// Z reports shown per register.
const Z_REPORTS_SHOWN: usize = 5;

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

async fn render(
    visitor: &Visitor,
    state: &AppState,
    asked: DayQuery,
    verified: Option<Verified>,
) -> Result<Markup, Refused> {
    visitor.require::<ops::ListSessions>()?;
    visitor.require::<ops::ListStores>()?;
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
    let body = html! {
        h1 { "Registers" }
        (store_picker(&stores, store))
        @if let Some(verified) = &verified {
            (verdict(verified))
        }
        @if views.is_empty() {
            p { "No register of this store has opened a session yet." }
        }
        @for view in &views {
            section.register #(format!("register-{}", view.register_id.as_str())) {
                h2 { "Register " (view.register_id.as_str()) }
                @match &view.open {
                    Some(open) => p.open {
                        "Open session " code { (open.session_id.as_str()) } " by " (open.cashier_subject.as_str())
                        " since " (layout::local_time(open.opened_at, &zone))
                        ", float " (money(open.opening_float.get(), &currency)) "."
                    },
                    None => p { "No session open." },
                }
                @if let Some(closed) = closed_days.iter().find(|closed| closed.register_id == view.register_id) {
                    p.day-closed {
                        @if closed.through == closed.day {
                            "Day " (closed.day) " is closed: no session opens on this register until tomorrow."
                        } @else {
                            "Day " (closed.day) " is closed, with the period through " (closed.through)
                            ": no session opens on this register until that period is over."
                        }
                    }
                }
                (z_reports(&view.closed, &zone, &currency))
                @if may_verify {
                    form.verify method="post" action=(Href::to("/console/registers").segment(view.register_id.as_str()).then("verify")) {
                        input type="hidden" name=(FORM_TOKEN) value=(visitor.form_token());
                        @if let Some(store) = store {
                            input type="hidden" name="store" value=(store.store_id.as_str());
                        }
                        button type="submit" { "Verify its journal" }
                    }
                } @else {
                    p.note { "Verifying a journal needs the scope " code { "pos.fiscal.read" } "." }
                }
            }
        }
    };
    Ok(layout::page("Registers", Nav::Registers, visitor, body))
}

fn store_picker(stores: &[StoreRecord], store: Option<&StoreRecord>) -> Markup {
    html! {
        form.picker method="get" action="/console/registers" {
            (store_select(stores, store))
            button type="submit" { "Show" }
        }
    }
}

/// The Z reports of closed sessions, newest first, with the figures sealed in them.
fn z_reports(closed: &[SessionRecord], zone: &TimeZone, currency: &str) -> Markup {
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
                caption { "Z reports" }
                thead { tr { th { "Closed" } th { "Cashier" } th.n { "Sales" } th.n { "Total" } } }
                tbody {
                    @for session in closed {
                        tr {
                            td { (session.closed_at.map(|at| layout::local_time(at, zone)).unwrap_or_default()) }
                            td { (session.cashier_subject.as_str()) }
                            td.n { (figure(session, "salesCount").map(|n| n.to_string()).unwrap_or_default()) }
                            td.n { (figure(session, "totalCents").map(|cents| money(cents, currency)).unwrap_or_default()) }
                        }
                    }
                }
            }
        }
    }
}

fn verdict(verified: &Verified) -> Markup {
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
                h2.ok { "The journal of " (verified.register_id.as_str()) " holds" }
            } @else {
                h2.failed { "The journal of " (verified.register_id.as_str()) " does not hold" }
            }
            table {
                thead { tr { th { "Chain" } th.n { "Entries" } th { "State" } } }
                tbody {
                    @for (chain, entries) in &chains {
                        tr data-chain=(chain) {
                            td { (chain) }
                            td.n { (entries) }
                            td {
                                @if failed_chain == Some(*chain) { "broken" } @else if verification.ok { "verified" } @else { "not reached" }
                            }
                        }
                    }
                }
            }
            @if let Some(failure) = &verification.first_failure {
                p.refusal {
                    "First failure: " (failure.chain) " entry " (failure.seq) " (" (failure.kind) "): " (failure.reason)
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
