//! `GET /console/promotions`: every promotion rule; `POST
//! /console/promotions/{id}/deactivate` stops one, as `deactivatePromotion` does.

use super::href::Href;
use super::layout::{self, Nav};
use super::refused::Refused;
use super::session::{FORM_TOKEN, NoFields, Visitor, Write};
use crate::error::ApiError;
use crate::extract::{FromParams, Params, PathParams};
use crate::ops;
use crate::routes::promotions::deactivate_rule;
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::LOCATION;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use till_core::ids::PromotionId;
use till_core::promotions::Mechanics;

fn mechanics(mechanics: &Mechanics) -> &'static str {
    match mechanics {
        Mechanics::Bogo { .. } => "buy some, get some",
        Mechanics::Bundle { .. } => "bundle",
        Mechanics::PercentOff { .. } => "percent off",
    }
}

pub async fn page(visitor: Visitor, State(state): State<AppState>) -> Result<Markup, Refused> {
    visitor.require::<ops::ListPromotions>()?;
    let rules = till_app::promotions::rules(state.app()).await?;
    let may_deactivate = visitor.may::<ops::DeactivatePromotion>();
    let zone = super::today::zone_of(None);
    let body = html! {
        h1 { "Promotions" }
        table #promotions {
            thead {
                tr {
                    th { "Rule" } th { "Kind" } th { "Valid" } th { "Stores" } th.n { "Priority" } th { "State" } th {}
                }
            }
            tbody {
                @for stored in &rules {
                    @let rule = &stored.rule;
                    tr data-promotion=(rule.id.as_str()) data-active=(rule.active) {
                        td { strong { (rule.name) } br; code { (rule.id.as_str()) } }
                        td { (mechanics(&rule.mechanics)) @if rule.exclusive { " (exclusive)" } }
                        td { (layout::local_time(rule.valid_from, &zone)) " – " (layout::local_time(rule.valid_until, &zone)) }
                        td {
                            @match &rule.store_ids {
                                Some(stores) => (stores.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")),
                                None => "every store",
                            }
                        }
                        td.n { (rule.priority) }
                        td.state { @if rule.active { "active" } @else { "inactive" } }
                        td {
                            @if rule.active && may_deactivate {
                                form.inline method="post"
                                    action=(Href::to("/console/promotions").segment(rule.id.as_str()).then("deactivate")) {
                                    input type="hidden" name=(FORM_TOKEN) value=(visitor.form_token());
                                    button.danger type="submit" { "Deactivate" }
                                }
                            }
                        }
                    }
                }
                @if rules.is_empty() {
                    tr { td colspan="7" { "No promotion rule yet." } }
                }
            }
        }
        @if !may_deactivate {
            p.note { "Deactivating a rule needs the scope " code { "pos.promotions.write" } "." }
        }
    };
    Ok(layout::page("Promotions", Nav::Promotions, &visitor, body))
}

/// `{id}` of the deactivate form.
pub struct PromotionPath(PromotionId);

impl FromParams for PromotionPath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("id", PromotionId::parse).map(PromotionPath)
    }
}

/// Deactivates the rule, then shows the list again.
pub async fn deactivate(
    State(state): State<AppState>,
    path: Result<PathParams<PromotionPath>, ApiError>,
    write: Write<NoFields>,
) -> Result<Response, Refused> {
    let PathParams(PromotionPath(id)) = path?;
    write.visitor.require::<ops::DeactivatePromotion>()?;
    deactivate_rule(&state, id).await?;
    Ok((StatusCode::SEE_OTHER, [(LOCATION, "/console/promotions")]).into_response())
}
