//! Who may grant the declared discounts of a sale: the caller alone (`price:override`, or within
//! their own discount limit), or a manager through a single-use elevation token.

use crate::auth::Principal;
use crate::auth::secret::{ELEVATION_TOKEN_PREFIX, is_token_shaped, token_hash};
use crate::error::ApiError;
use crate::state::AppState;
use axum::http::HeaderValue;
use till_core::grant::Grant;
use till_core::money::{Bps, Cents};
use till_core::pricing::Priced;
use till_core::sale::{DeclaredKind, SaleRequest};
use till_core::staff::effective_limit;
use till_store::elevation::GrantOperation;

/// Declared discounts need authority: the caller's own (`price:override`, or within their
/// discount limit) or a manager's single-use elevation token, whose grant id is returned so the
/// commit spends it. A token presented when none is needed is left unspent.
pub async fn authorize_discounts(
    state: &AppState,
    caller: &Principal,
    request: &SaleRequest,
    priced: &Priced,
    elevation: Option<&HeaderValue>,
) -> Result<Option<String>, ApiError> {
    if request.declared_discounts.is_empty() || caller.has(Grant::PriceOverride) {
        return Ok(None);
    }
    let amount = priced.declared_total();
    let base = priced
        .subtotal
        .checked_sub(priced.promotion_total())
        .unwrap_or(priced.subtotal);
    let limit = match caller.session() {
        Some(session) => session.cashier.member.effective_limit(),
        None => match state.store().get_staff(&caller.subject).await? {
            Some(staff) => staff.member.effective_limit(),
            None => effective_limit(None, caller.grants),
        },
    };
    // The percent limit caps the amount with the same rounding the discounts get, plus the
    // cent each percent discount may have gained rounding half away: rounding never tips a
    // discount over a limit.
    let percent_discounts = request
        .declared_discounts
        .iter()
        .filter(|d| !matches!(d.kind, DeclaredKind::TicketAmount { .. }))
        .count();
    let slack = Cents::new(percent_discounts as i64).unwrap_or(Cents::ZERO);
    let percent_cap = base.percent(limit.percent).checked_add(slack).unwrap_or(base);
    if amount <= limit.amount && amount <= percent_cap {
        return Ok(None);
    }
    if let Some(token) = elevation {
        return approved_by(state, request, token).await.map(Some);
    }
    let percent = share_bps(amount, base);
    Err(ApiError::Forbidden(format!(
        "The declared discounts take {amount} ({}.{:02} %), more than {} may grant alone; a manager's approval \
         (x-elevation-token) or the price:override permission is needed.",
        percent.get() / 100,
        percent.get() % 100,
        caller.subject
    )))
}

/// The grant behind an `x-elevation-token`, if it may approve this sale's discounts: unspent,
/// unexpired, issued to the sale's session, for the scope of the discounts (line or ticket).
/// Spending it is the commit's job, so a refused sale leaves it whole.
async fn approved_by(state: &AppState, request: &SaleRequest, header: &HeaderValue) -> Result<String, ApiError> {
    let refuse = |why: &str| ApiError::Forbidden(format!("The elevation token cannot approve these discounts: {why}."));
    let token = header
        .to_str()
        .ok()
        .filter(|token| is_token_shaped(token, ELEVATION_TOKEN_PREFIX))
        .ok_or_else(|| refuse("it is not an elevation token"))?;
    let grant = state
        .store()
        .grant_by_token(&token_hash(token))
        .await?
        .ok_or_else(|| refuse("no such grant"))?;
    if grant.spent_at.is_some() {
        return Err(refuse("it was already spent"));
    }
    if grant.expires_at <= state.now() {
        return Err(refuse("it has expired"));
    }
    if grant.session_id != request.session_id.as_str() {
        return Err(refuse("it was issued to another till session"));
    }
    let line = request.declared_discounts.iter().any(|d| d.is_line_scoped());
    let ticket = request.declared_discounts.iter().any(|d| !d.is_line_scoped());
    let needed = match (line, ticket) {
        (true, true) => {
            return Err(refuse(
                "one approval covers line discounts or ticket discounts, not both",
            ));
        }
        (true, false) => GrantOperation::DiscountLine,
        _ => GrantOperation::DiscountTicket,
    };
    if grant.operation != needed {
        return Err(refuse(&format!(
            "it approves {}, the sale needs {}",
            grant.operation.as_str(),
            needed.as_str()
        )));
    }
    Ok(grant.grant_id)
}

/// `amount` as a share of `base`, in basis points rounded up (an approval is never understated).
fn share_bps(amount: Cents, base: Cents) -> Bps {
    if base.get() <= 0 {
        return if amount.get() > 0 {
            Bps::FULL
        } else {
            Bps::new(0).unwrap_or(Bps::FULL)
        };
    }
    let (numerator, base) = (i128::from(amount.get()) * 10_000, i128::from(base.get()));
    let bps = (numerator + base - 1) / base;
    Bps::new(bps.min(10_000) as i64).unwrap_or(Bps::FULL)
}
