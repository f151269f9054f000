//! Automatic promotion rules: written, replaced under a version check,
//! deactivated, read. Every write brings this node's rules in memory up to date before it
//! answers, so that the writer's next sale is priced with what it just wrote; other nodes see
//! it within the cache's time to live.

use crate::app::App;
use crate::refusal::Error;
use till_core::ids::PromotionId;
use till_core::promotions::PromotionRule;

pub use crate::storage::offers::Replaced;
pub use crate::storage::offers::StoredRule;

/// Creates the rule or replaces the one with its id; `true` when created.
pub async fn upsert(app: &App, rule: PromotionRule) -> Result<(StoredRule, bool), Error> {
    let written = app.promotion_rules().upsert_promotion(rule, app.now()).await?;
    refresh(app).await?;
    Ok(written)
}

/// Replaces an existing rule wholesale, never creating one; with `expected`, only while the
/// stored rule is at that version.
pub async fn replace(app: &App, rule: PromotionRule, expected: Option<i64>) -> Result<Replaced, Error> {
    let replaced = app
        .promotion_rules()
        .replace_promotion(rule, expected, app.now())
        .await?;
    if let Replaced::Done(_) = replaced {
        refresh(app).await?;
    }
    Ok(replaced)
}

/// Turns a rule off: it stays readable and no longer applies. `None` when there is no such rule.
pub async fn deactivate(app: &App, id: PromotionId) -> Result<Option<StoredRule>, Error> {
    let stored = app.promotion_rules().deactivate_promotion(id, app.now()).await?;
    if stored.is_some() {
        refresh(app).await?;
    }
    Ok(stored)
}

pub async fn rule(app: &App, id: &PromotionId) -> Result<Option<StoredRule>, Error> {
    Ok(app.promotion_rules().get_promotion(id).await?)
}

/// Every rule, by id.
pub async fn rules(app: &App) -> Result<Vec<StoredRule>, Error> {
    Ok(app.promotion_rules().promotions().await?)
}

/// Re-reads this node's rules in memory now, after a write.
pub async fn refresh(app: &App) -> Result<(), Error> {
    Ok(app.promotions().refresh(app.promotion_rules()).await?)
}
