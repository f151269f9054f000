//! A manager at the till approves, with their PIN, a discount the cashier may not grant alone.
//! The till receives a single-use token carrying one scope, spent by the one sale it approves
//! (the commit spends it, so a refused sale leaves it whole).
//!
//! Checks in order: the rate limiter, the lockout, the PIN, stale grants, the manager's
//! authority, whether approval is needed at all, and whether the channel is open. Every
//! refusal after the session's is written to the audit trail.

use crate::app::{App, Settings};
use crate::caller::Principal;
use crate::pin::{PinCheck, check_pin, seconds_until};
use crate::refusal::{Error, PinHolder, Refusal};
use crate::secret::{ELEVATION_TOKEN_PREFIX, new_id, new_token, token_hash};
use crate::storage::access::NewGrant;
use crate::storage::access::RateDecision;
use crate::storage::people::StaffRecord;
use crate::storage::sessions::SessionPrincipal;
use jiff::Timestamp;
use till_core::grant::Grant;
use till_core::ids::{RegisterId, Subject};
use till_core::staff::{DiscountLimit, StaffMember};

pub use crate::storage::access::ElevationEvent;
pub use crate::storage::access::GrantOperation;

/// The one scope a grant carries.
pub const GRANT_SCOPE: Grant = Grant::DiscountOverride;

/// A request for a grant, parsed: the size of the reduction in cents, in basis points, or both.
pub struct GrantRequest {
    pub manager: Subject,
    pub pin: String,
    pub operation: GrantOperation,
    pub amount: Option<i64>,
    pub percent: Option<i64>,
}

/// A grant issued: its token is shown once, only its hash is kept.
pub struct IssuedGrant {
    pub grant_id: String,
    pub token: String,
    pub scope: String,
    pub operation: GrantOperation,
    pub expires_at: Timestamp,
}

/// The till asking: only a register session's token may ask for a manager's approval.
pub fn asking_till(caller: &Principal) -> Result<&SessionPrincipal, Refusal> {
    caller.session().ok_or(Refusal::NotATill)
}

pub async fn request_grant(app: &App, till: &SessionPrincipal, request: &GrantRequest) -> Result<IssuedGrant, Error> {
    let now = app.now();
    if !till.session.is_open_at(now) {
        return Err(Refusal::GrantSessionClosed(till.session.session_id.clone()).into());
    }
    let audit = Audit {
        app,
        till,
        request,
        now,
    };
    let (settings, manager) = (app.settings(), request.manager.as_str());
    let rate = app
        .access()
        .count_elevation_attempt(
            manager,
            now,
            settings.elevation_rate_limit,
            settings.elevation_rate_window,
        )
        .await?;
    if let RateDecision::LimitedUntil(until) = rate {
        return Err(audit
            .refused(
                "rate_limited",
                Refusal::RateLimited {
                    retry_after: seconds_until(until, now),
                },
            )
            .await);
    }
    let staff = match check_pin(app, &request.manager, &till.session.register_id, &request.pin, now).await? {
        PinCheck::Matched(staff) => staff,
        PinCheck::LockedOut { retry_after } => {
            let holder = PinHolder::Manager;
            return Err(audit
                .refused("refused", Refusal::LockedOut { holder, retry_after })
                .await);
        }
        PinCheck::Wrong { last_chance } => {
            let refusal = audit.refused("refused", Refusal::WrongPin(PinHolder::Manager)).await;
            if last_chance {
                audit.record("locked_out", Some("LOCKED_OUT")).await;
            }
            return Err(refusal);
        }
    };
    if let Some(refusal) = refusal_after_pin(settings, &staff, &till.cashier.member, request, now) {
        return Err(audit.refused("refused", refusal).await);
    }
    issue(app, till, request, now).await
}

/// Whether the manager, known by their PIN, may grant this approval, and whether it is needed.
fn refusal_after_pin(
    settings: &Settings,
    manager: &StaffRecord,
    cashier: &StaffMember,
    request: &GrantRequest,
    now: Timestamp,
) -> Option<Refusal> {
    let synced_for = now.duration_since(manager.grants_synced_at);
    if synced_for.as_secs() > i64::try_from(settings.grants_max_age.as_secs()).unwrap_or(i64::MAX) {
        return Some(Refusal::GrantsStale);
    }
    if !manager.member.grants().contains(Grant::PriceOverride)
        || !within(manager.member.effective_limit(), request.amount, request.percent)
    {
        return Some(Refusal::MissingAuthority);
    }
    if cashier.grants().contains(Grant::PriceOverride)
        || within(cashier.effective_limit(), request.amount, request.percent)
    {
        return Some(Refusal::NoElevationRequired);
    }
    (!settings.elevation_enabled).then_some(Refusal::ElevationUnavailable)
}

/// Whether a reduction of the given size fits `limit`; a dimension not given is not checked.
fn within(limit: DiscountLimit, amount: Option<i64>, percent: Option<i64>) -> bool {
    amount.is_none_or(|a| a <= limit.amount.get()) && percent.is_none_or(|p| p.min(10_000) <= limit.percent.get())
}

async fn issue(
    app: &App,
    till: &SessionPrincipal,
    request: &GrantRequest,
    now: Timestamp,
) -> Result<IssuedGrant, Error> {
    let token = new_token(ELEVATION_TOKEN_PREFIX);
    let expires_at = now.checked_add(app.settings().elevation_ttl).map_err(Error::internal)?;
    let grant = NewGrant {
        grant_id: new_id("grt"),
        token_hash: token_hash(&token),
        manager_subject: request.manager.as_str().to_owned(),
        session_id: till.session.session_id.as_str().to_owned(),
        register_id: till.session.register_id.as_str().to_owned(),
        cashier_subject: till.cashier.subject.as_str().to_owned(),
        operation: request.operation,
        scope: GRANT_SCOPE.as_str().to_owned(),
        amount_cents: request.amount,
        percent_bps: request.percent,
        issued_at: now,
        expires_at,
    };
    let issued = IssuedGrant {
        grant_id: grant.grant_id.clone(),
        token,
        scope: grant.scope.clone(),
        operation: request.operation,
        expires_at,
    };
    app.access().issue_grant(grant).await?;
    Ok(issued)
}

/// The audit trail, newest first, of one manager or one register when named: every grant
/// issued, spent or refused and every lockout.
pub async fn events(
    app: &App,
    manager: Option<&Subject>,
    register: Option<&RegisterId>,
    limit: i64,
) -> Result<Vec<ElevationEvent>, Error> {
    let manager = manager.map(Subject::as_str);
    let register = register.map(RegisterId::as_str);
    Ok(app.access().elevation_events(manager, register, limit).await?)
}

impl Refusal {
    /// The code of the elevation channel's vocabulary a refusal is known by, in the audit
    /// trail and in the answer, if it has one.
    pub fn channel_code(&self) -> Option<&'static str> {
        Some(match self {
            Refusal::RateLimited { .. } => "RATE_LIMITED",
            Refusal::LockedOut { .. } => "LOCKED_OUT",
            Refusal::WrongPin(PinHolder::Manager) => "INVALID_CREDENTIAL",
            Refusal::GrantsStale => "GRANTS_STALE",
            Refusal::MissingAuthority => "MISSING_AUTHORITY",
            Refusal::NoElevationRequired => "NO_ELEVATION_REQUIRED",
            Refusal::ElevationUnavailable => "ELEVATION_UNAVAILABLE",
            _ => return None,
        })
    }
}

/// Writes refusals to the audit trail. A failure to write is logged, not answered: the request
/// is refused either way.
struct Audit<'a> {
    app: &'a App,
    till: &'a SessionPrincipal,
    request: &'a GrantRequest,
    now: Timestamp,
}

impl Audit<'_> {
    /// Records `refusal` with `outcome` and answers it.
    async fn refused(&self, outcome: &str, refusal: Refusal) -> Error {
        self.record(outcome, refusal.channel_code()).await;
        refusal.into()
    }

    async fn record(&self, outcome: &str, code: Option<&str>) {
        let event = ElevationEvent {
            outcome: outcome.to_owned(),
            code: code.map(str::to_owned),
            manager_subject: self.request.manager.as_str().to_owned(),
            session_id: Some(self.till.session.session_id.as_str().to_owned()),
            register_id: Some(self.till.session.register_id.as_str().to_owned()),
            cashier_subject: Some(self.till.cashier.subject.as_str().to_owned()),
            operation: Some(self.request.operation.as_str().to_owned()),
            amount_cents: self.request.amount,
            percent_bps: self.request.percent,
            ..ElevationEvent::default()
        };
        if let Err(error) = self.app.access().record_elevation_event(event, self.now).await {
            tracing::error!(%error, "could not record an elevation event");
        }
    }
}
