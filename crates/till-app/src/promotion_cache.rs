//! The promotion rules every price computation uses, held in memory and indexed by article.
//!
//! A node re-reads the rules when the database's promotion revision has moved, and checks that
//! revision at most once per `ttl`: a rule written on another node applies here within `ttl`
//! (plus the time to reload). A write on this node refreshes the cache before it answers, so
//! the writer's next sale sees its own rule.

use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use till_core::promotions::RuleBook;
use till_store::{Store, StoreError};

pub struct PromotionCache {
    ttl: Duration,
    book: RwLock<Arc<RuleBook>>,
    checked_at: Mutex<Option<Instant>>,
    /// One refresh at a time; the revision the book was built from.
    refresh: tokio::sync::Mutex<Option<i64>>,
}

impl PromotionCache {
    pub fn new(ttl: Duration) -> PromotionCache {
        PromotionCache {
            ttl,
            book: RwLock::new(Arc::new(RuleBook::default())),
            checked_at: Mutex::new(None),
            refresh: tokio::sync::Mutex::new(None),
        }
    }

    /// The current rules, re-read if the revision moved since the last check older than `ttl`.
    pub async fn book(&self, store: &Store) -> Result<Arc<RuleBook>, StoreError> {
        if self.fresh() {
            return Ok(self.current());
        }
        let mut built_from = self.refresh.lock().await;
        if !self.fresh() {
            self.reload_if_moved(store, &mut built_from).await?;
        }
        Ok(self.current())
    }

    /// Re-reads now; called after this node wrote a rule.
    pub async fn refresh(&self, store: &Store) -> Result<(), StoreError> {
        let mut built_from = self.refresh.lock().await;
        self.reload_if_moved(store, &mut built_from).await
    }

    async fn reload_if_moved(&self, store: &Store, built_from: &mut Option<i64>) -> Result<(), StoreError> {
        let revision = store.promotion_revision().await?;
        if *built_from != Some(revision) {
            let rules = store
                .promotions()
                .await?
                .into_iter()
                .map(|stored| stored.rule)
                .collect();
            *self.book.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(RuleBook::new(rules));
            *built_from = Some(revision);
        }
        *self.checked_at.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
        Ok(())
    }

    fn fresh(&self) -> bool {
        self.checked_at
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some_and(|at| at.elapsed() < self.ttl)
    }

    fn current(&self) -> Arc<RuleBook> {
        self.book.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
