//! The promotion rules every price computation uses, held in memory and indexed by article.
//!
//! A node re-reads the rules when the database's promotion revision has moved, and checks that
//! revision at most once per `ttl`: a rule written on another node applies here within `ttl`
//! (plus the time to reload). A write on this node refreshes the cache before it answers, so
//! the writer's next sale sees its own rule. The mechanism is [`Kept`], shared with the
//! store's caches.

use crate::storage::StoreError;
use crate::storage::kept::Kept;
use crate::storage::offers::Promotions;
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
    pub async fn book(&self, store: &dyn Promotions) -> Result<Arc<RuleBook>, StoreError> {
        self.book
            .check(
                async || store.promotion_revision().await,
                async || rule_book(store).await,
            )
            .await?;
        Ok(self.book.look(|book| book.clone()).found)
    }

    /// Re-reads now; called after this node wrote a rule.
    pub async fn refresh(&self, store: &dyn Promotions) -> Result<(), StoreError> {
        self.book
            .check_now(
                async || store.promotion_revision().await,
                async || rule_book(store).await,
            )
            .await
    }
}

/// Every stored rule, indexed by article.
async fn rule_book(store: &dyn Promotions) -> Result<Arc<RuleBook>, StoreError> {
    let rules = store
        .promotions()
        .await?
        .into_iter()
        .map(|stored| stored.rule)
        .collect();
    Ok(Arc::new(RuleBook::new(rules)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::offers::{Replaced, StoredRule};
    use jiff::Timestamp;
    use std::sync::Mutex;
    use till_core::ids::PromotionId;
    use till_core::money::Bps;
    use till_core::promotions::{Mechanics, PromotionRule};

    /// The rules as the database holds them, written by "another node": each write moves the
    /// revision, as the stores' do. Counts the full reads.
    #[derive(Default)]
    struct Database {
        state: Mutex<(i64, Vec<StoredRule>, usize)>,
    }

    impl Database {
        fn write(&self, id: &str) {
            let at = Timestamp::from_second(1_800_000_000).unwrap();
            let rule = PromotionRule {
                id: PromotionId::parse(id).unwrap(),
                name: id.to_owned(),
                valid_from: at,
                valid_until: at,
                priority: 0,
                exclusive: false,
                store_ids: None,
                customer_groups: None,
                active: true,
                mechanics: Mechanics::PercentOff {
                    product_ids: None,
                    percent_bps: Bps::new(1000).unwrap(),
                    min_subtotal_cents: None,
                },
            };
            let mut state = self.state.lock().unwrap();
            state.0 += 1;
            state.1.push(StoredRule {
                rule,
                version: 1,
                created_at: at,
                updated_at: at,
            });
        }

        fn reads(&self) -> usize {
            self.state.lock().unwrap().2
        }
    }

    #[async_trait::async_trait]
    impl Promotions for Database {
        async fn promotions(&self) -> Result<Vec<StoredRule>, StoreError> {
            let mut state = self.state.lock().unwrap();
            state.2 += 1;
            Ok(state.1.clone())
        }
        async fn promotion_revision(&self) -> Result<i64, StoreError> {
            Ok(self.state.lock().unwrap().0)
        }
        async fn get_promotion(&self, _: &PromotionId) -> Result<Option<StoredRule>, StoreError> {
            Ok(None)
        }
        async fn upsert_promotion(&self, _: PromotionRule, _: Timestamp) -> Result<(StoredRule, bool), StoreError> {
            Err(StoreError::NotWritten)
        }
        async fn replace_promotion(
            &self,
            _: PromotionRule,
            _: Option<i64>,
            _: Timestamp,
        ) -> Result<Replaced, StoreError> {
            Err(StoreError::NotWritten)
        }
        async fn deactivate_promotion(&self, _: PromotionId, _: Timestamp) -> Result<Option<StoredRule>, StoreError> {
            Ok(None)
        }
    }

    #[tokio::test]
    async fn a_rule_written_elsewhere_is_priced_after_the_ttl_or_a_refresh_and_read_once() {
        let database = Database::default();
        let cache = PromotionCache::new(Duration::from_secs(3600));
        assert!(cache.book(&database).await.unwrap().is_empty());
        database.write("spring");
        assert!(cache.book(&database).await.unwrap().is_empty(), "trusted for its ttl");
        cache.refresh(&database).await.unwrap();
        assert_eq!(cache.book(&database).await.unwrap().len(), 1);
        assert_eq!(database.reads(), 2, "one read to build, one after the revision moved");

        let checking = PromotionCache::new(Duration::ZERO);
        assert_eq!(checking.book(&database).await.unwrap().len(), 1);
        checking.book(&database).await.unwrap();
        assert_eq!(database.reads(), 3, "an unmoved revision is not read again");
        database.write("summer");
        assert_eq!(checking.book(&database).await.unwrap().len(), 2);
    }
}
