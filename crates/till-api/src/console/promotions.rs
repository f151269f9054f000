//! `GET /console/promotions`: every promotion rule, its validity in its stores' time zone;
//! `POST /console/promotions/{id}/deactivate` asks first, then stops the rule as
//! `deactivatePromotion` does.

use super::href::Href;
use super::layout::{self, Nav};
use super::refused::Refused;
use super::session::{FORM_TOKEN, Visitor, Write};
use super::today::{stores, zone_of};
use crate::error::ApiError;
use crate::extract::{FromParams, Params, PathParams};
use crate::ops;
use crate::routes::promotions::deactivate_rule;
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::LOCATION;
use axum::response::{IntoResponse, Response};
use jiff::tz::TimeZone;
use maud::{Markup, html};
use till_app::stores::StoreRecord;
use till_core::ids::PromotionId;
use till_core::promotions::PromotionRule;

/// Refused unless the visitor may read the rules.
pub fn allowed(visitor: &Visitor) -> Result<(), Refused> {
    visitor.require::<ops::ListPromotions>()
}

/// The zone a rule's window is shown in: the one its stores share (every store's, for a rule
/// that runs everywhere), else the default zone, as days are cut.
fn rule_zone(rule: &PromotionRule, stores: &[StoreRecord]) -> TimeZone {
    let covered: Vec<&StoreRecord> = match &rule.store_ids {
        Some(ids) => stores.iter().filter(|store| ids.contains(&store.store_id)).collect(),
        None => stores.iter().collect(),
    };
    match covered.split_first() {
        Some((first, rest))
            if rest
                .iter()
                .all(|other| other.profile.timezone == first.profile.timezone) =>
        {
            zone_of(Some(first))
        }
        _ => zone_of(None),
    }
}

pub async fn page(visitor: Visitor, State(state): State<AppState>) -> Result<Markup, Refused> {
    allowed(&visitor)?;
    let words = visitor.words();
    let language = visitor.language();
    let rules = till_app::promotions::rules(state.app()).await?;
    let may_deactivate = visitor.may::<ops::DeactivatePromotion>();
    // Without the store list, windows are shown in the default zone, and said so.
    let stores = if visitor.may::<ops::ListStores>() {
        stores(&state).await?
    } else {
        Vec::new()
    };
    let body = html! {
        h1 { (words.promotions) }
        table #promotions.wide {
            thead {
                tr {
                    th { (words.rule) } th { (words.kind) } th { (words.valid) } th { (words.stores) }
                    th.n { (words.priority) } th { (words.state) } th {}
                }
            }
            tbody {
                @for stored in &rules {
                    @let rule = &stored.rule;
                    @let zone = rule_zone(rule, &stores);
                    tr data-promotion=(rule.id.as_str()) data-active=(rule.active) {
                        td data-label=(words.rule) { strong { (rule.name) } br; code { (rule.id.as_str()) } }
                        td data-label=(words.kind) {
                            (language.mechanics(&rule.mechanics))
                            @if rule.exclusive { " (" (words.exclusive) ")" }
                        }
                        td data-label=(words.valid) {
                            (layout::local_time(rule.valid_from, &zone, language)) " – "
                            (layout::local_time(rule.valid_until, &zone, language))
                            @if let Some(name) = zone.iana_name() {
                                br; span.note.zone { ((words.zone_note)(name)) }
                            }
                        }
                        td data-label=(words.stores) {
                            @match &rule.store_ids {
                                Some(stores) => (stores.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")),
                                None => (words.every_store_lower),
                            }
                            @if let Some(groups) = &rule.customer_groups {
                                br; span.note { (words.customer_groups) " " (groups.iter().map(String::as_str).collect::<Vec<_>>().join(", ")) }
                            }
                        }
                        td.n data-label=(words.priority) { (rule.priority) }
                        td.state data-label=(words.state) { @if rule.active { (words.active) } @else { (words.inactive) } }
                        td.actions {
                            @if rule.active && may_deactivate {
                                form.inline method="post" action=(deactivate_href(&rule.id)) {
                                    input type="hidden" name=(FORM_TOKEN) value=(visitor.form_token());
                                    button.danger type="submit" { (words.deactivate) }
                                }
                            }
                        }
                    }
                }
                @if rules.is_empty() {
                    tr.empty { td colspan="7" { (words.no_rule) } }
                }
            }
        }
        @if !may_deactivate {
            p.note { ((words.needs_scope_note)(words.deactivating_a_rule, "pos.promotions.write")) }
        }
    };
    Ok(layout::page(words.nav_promotions, Nav::Promotions, &visitor, body))
}

fn deactivate_href(id: &PromotionId) -> Href {
    Href::to("/console/promotions").segment(id.as_str()).then("deactivate")
}

/// `{id}` of the deactivate form.
pub struct PromotionPath(PromotionId);

impl FromParams for PromotionPath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("id", PromotionId::parse).map(PromotionPath)
    }
}

/// The deactivate form: the list's button sends it without `confirm`, the confirmation's
/// button with `confirm=yes`.
pub struct DeactivateForm {
    confirmed: bool,
}

impl FromParams for DeactivateForm {
    fn from_params(params: &Params) -> Option<Self> {
        let confirm = params.optional("confirm", |text| match text {
            "yes" => Ok(()),
            _ => Err("must be yes"),
        })?;
        Some(DeactivateForm {
            confirmed: confirm.is_some(),
        })
    }
}

/// Asks first: the list's button shows what deactivating does, with a button that confirms.
/// Only the confirmed form deactivates the rule; then the list is shown again.
pub async fn deactivate(
    State(state): State<AppState>,
    path: Result<PathParams<PromotionPath>, ApiError>,
    write: Write<DeactivateForm>,
) -> Result<Response, Refused> {
    let PathParams(PromotionPath(id)) = path?;
    let Write { visitor, form } = write;
    visitor.require::<ops::DeactivatePromotion>()?;
    if form.confirmed {
        deactivate_rule(&state, id).await?;
        return Ok((StatusCode::SEE_OTHER, [(LOCATION, "/console/promotions")]).into_response());
    }
    let stored = till_app::promotions::rule(state.app(), &id)
        .await?
        .ok_or_else(|| ApiError::NotFound("No promotion rule with this id.".into()))?;
    Ok(confirmation(&visitor, &stored.rule).into_response())
}

fn confirmation(visitor: &Visitor, rule: &PromotionRule) -> Markup {
    let words = visitor.words();
    let body = html! {
        h1 { (words.deactivate_title) }
        section.confirm #confirm data-promotion=(rule.id.as_str()) {
            @if rule.active {
                p { ((words.deactivate_text)(&rule.name, rule.id.as_str())) }
                form.confirm method="post" action=(deactivate_href(&rule.id)) {
                    input type="hidden" name=(FORM_TOKEN) value=(visitor.form_token());
                    input type="hidden" name="confirm" value="yes";
                    button.danger type="submit" { (words.deactivate_confirm) }
                    a.cancel href="/console/promotions" { (words.cancel) }
                }
            } @else {
                p { (words.already_inactive) }
                p { a href="/console/promotions" { (words.nav_promotions) } }
            }
        }
    };
    layout::page(words.deactivate_title, Nav::Promotions, visitor, body)
}
