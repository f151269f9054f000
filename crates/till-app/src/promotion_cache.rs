//! The promotion rules every price computation uses, held in memory and indexed by article.
//!
//! A node re-reads the rules when the database's promotion revision has moved, and checks that
//! revision at most once per `ttl`: a rule written on another node applies here within `ttl`
//! (plus the time to reload). A write on this node refreshes the cache before it answers, so
//! the writer's next sale sees its own rule. The mechanism is [`Kept`], shared with the
//! store's caches.

use crate::storage::StoreError;
use crate::storage::kept::Kept;
use crate::storage::offers::Offers;
use std::sync::Arc;
use std::time::Duration;
use till_core::promotions::RuleBook;

pub struct PromotionCache {
    book: Kept<Arc<RuleBook>>,
}

impl PromotionCache {
    pub fn new(ttl: Duration) -> PromotionCache {
        PromotionCache { book: Kept::new(ttl) }
    }

    /// The current rules, re-read if the revision moved since the last check older than `ttl`.
    pub async fn book(&self, store: &dyn Offers) -> Result<Arc<RuleBook>, StoreError> {
        self.book
            .check(
                async || store.promotion_revision().await,
                async || rule_book(store).await,
            )
            .await?;
        Ok(self.book.look(|book| book.clone()).found)
    }

    /// Re-reads now; called after this node wrote a rule.
    pub async fn refresh(&self, store: &dyn Offers) -> Result<(), StoreError> {
        self.book
            .check_now(
                async || store.promotion_revision().await,
                async || rule_book(store).await,
            )
            .await
    }
}

/// Every stored rule, indexed by article.
async fn rule_book(store: &dyn Offers) -> Result<Arc<RuleBook>, StoreError> {
    let rules = store
        .promotions()
        .await?
        .into_iter()
        .map(|stored| stored.rule)
        .collect();
    Ok(Arc::new(RuleBook::new(rules)))
}
