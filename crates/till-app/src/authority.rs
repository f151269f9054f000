//! Who may grant the declared discounts of a sale: the caller alone (`price:override`, or within
//! their own discount limit), or a manager through a single-use elevation token.

use crate::app::App;
use crate::caller::Principal;
use crate::refusal::{Error, Refusal, Unapproved};
use crate::secret::{ELEVATION_TOKEN_PREFIX, is_token_shaped, token_hash};
use crate::storage::access::GrantOperation;
use crate::storage::access::GrantRecord;
use till_core::grant::Grant;
use till_core::ids::SessionId;
use till_core::money::{Bps, Cents};
use till_core::pricing::Priced;
use till_core::sale::{DeclaredKind, SaleRequest};
use till_core::staff::effective_limit;

/// Declared discounts need authority: the caller's own (`price:override`, or within their
/// discount limit) or a manager's single-use elevation token, whose grant id is returned so the
/// commit spends it. A token presented when none is needed is left unspent.
pub(crate) async fn authorize_discounts(
    app: &App,
    caller: &Principal,
    request: &SaleRequest,
    priced: &Priced,
    elevation: Option<&[u8]>,
) -> Result<Option<String>, Error> {
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
        None => match app.people().get_staff(&caller.subject).await? {
            Some(staff) => staff.member.effective_limit(),
            None => effective_limit(None, caller.grants),
        },
    };
    let size = DiscountSize::of(request, amount, base);
    if size.within(Some(limit.amount), Some(limit.percent)) {
        return Ok(None);
    }
    if let Some(token) = elevation {
        return approved_by(app, request, size, token).await.map(Some);
    }
    Err(Refusal::DiscountsBeyondLimit {
        amount,
        share: share_bps(amount, base),
        subject: caller.subject.clone(),
    }
    .into())
}

/// How much the declared discounts of a sale take, as limits and approvals measure it.
#[derive(Clone, Copy)]
struct DiscountSize {
    amount: Cents,
    /// What percentages apply to: the subtotal after promotions.
    base: Cents,
    /// The cent each percent discount may have gained rounding half away.
    slack: Cents,
}

impl DiscountSize {
    fn of(request: &SaleRequest, amount: Cents, base: Cents) -> DiscountSize {
        let percent_discounts = request
            .declared_discounts
            .iter()
            .filter(|d| !matches!(d.kind, DeclaredKind::TicketAmount { .. }))
            .count();
        DiscountSize {
            amount,
            base,
            slack: Cents::new(percent_discounts as i64).unwrap_or(Cents::ZERO),
        }
    }

    /// Whether the discounts stay within an amount and a percentage (`None`: no such cap). The
    /// percentage caps the amount with the same rounding the discounts get, plus the slack:
    /// rounding never tips a discount over a limit.
    fn within(self, amount: Option<Cents>, percent: Option<Bps>) -> bool {
        let percent_cap = |percent: Bps| self.base.percent(percent).checked_add(self.slack).unwrap_or(self.base);
        amount.is_none_or(|cap| self.amount <= cap) && percent.is_none_or(|cap| self.amount <= percent_cap(cap))
    }
}

/// The grant behind an `x-elevation-token` if it is unspent, unexpired and issued to this till
/// session. Spending it is the commit's job, so a refused sale leaves it whole.
async fn usable_grant(
    app: &App,
    session_id: &SessionId,
    header: &[u8],
) -> Result<Result<GrantRecord, Unapproved>, Error> {
    let Some(token) = std::str::from_utf8(header)
        .ok()
        .filter(|token| is_token_shaped(token, ELEVATION_TOKEN_PREFIX))
    else {
        return Ok(Err(Unapproved::NotAToken));
    };
    let Some(grant) = app.access().grant_by_token(&token_hash(token)).await? else {
        return Ok(Err(Unapproved::NoSuchGrant));
    };
    Ok(if grant.spent_at.is_some() {
        Err(Unapproved::Spent)
    } else if grant.expires_at <= app.now() {
        Err(Unapproved::Expired)
    } else if grant.session_id != session_id.as_str() {
        Err(Unapproved::OtherSession)
    } else {
        Ok(grant)
    })
}

/// The grant behind an `x-elevation-token`, if it may approve this sale's discounts: usable,
/// for the scope of the discounts (line or ticket), and at least as large as they are.
async fn approved_by(app: &App, request: &SaleRequest, size: DiscountSize, header: &[u8]) -> Result<String, Error> {
    let refuse = |why: Unapproved| Error::from(Refusal::DiscountsNotApproved(why));
    let grant = usable_grant(app, &request.session_id, header).await?.map_err(refuse)?;
    let line = request.declared_discounts.iter().any(|d| d.is_line_scoped());
    let ticket = request.declared_discounts.iter().any(|d| !d.is_line_scoped());
    let needed = match (line, ticket) {
        (true, true) => return Err(refuse(Unapproved::LineAndTicket)),
        (true, false) => GrantOperation::DiscountLine,
        _ => GrantOperation::DiscountTicket,
    };
    if grant.operation != needed {
        return Err(refuse(Unapproved::WrongOperation {
            approves: grant.operation,
            needs: needed,
        }));
    }
    let approved_amount = grant.amount_cents.and_then(Cents::new);
    let approved_percent = grant.percent_bps.and_then(Bps::new);
    if !size.within(approved_amount, approved_percent) {
        return Err(refuse(Unapproved::TooSmall {
            amount: approved_amount,
            percent: approved_percent,
            takes: size.amount,
        }));
    }
    Ok(grant.grant_id)
}

/// A return without a receipt gives money back on the till's word alone: it needs the caller's
/// `price:override`, or a manager's single-use approval for a ticket-level operation whose
/// amount covers the refund. Returns the grant to spend, if one was needed.
pub(crate) async fn authorize_unreceipted_return(
    app: &App,
    caller: &Principal,
    request: &SaleRequest,
    refund: Cents,
    elevation: Option<&[u8]>,
) -> Result<Option<String>, Error> {
    if caller.has(Grant::PriceOverride) {
        return Ok(None);
    }
    let Some(header) = elevation else {
        return Err(Refusal::ReturnNeedsApproval.into());
    };
    let refuse = |why: Unapproved| Error::from(Refusal::ReturnNotApproved(why));
    let grant = usable_grant(app, &request.session_id, header).await?.map_err(refuse)?;
    if grant.operation != GrantOperation::DiscountTicket {
        return Err(refuse(Unapproved::WrongOperation {
            approves: grant.operation,
            needs: GrantOperation::DiscountTicket,
        }));
    }
    match grant.amount_cents.and_then(Cents::new) {
        Some(approved) if approved >= refund => Ok(Some(grant.grant_id)),
        Some(approved) => Err(refuse(Unapproved::RefundAboveApproval { approved, refund })),
        None => Err(refuse(Unapproved::NoAmount)),
    }
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
