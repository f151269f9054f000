//! The articles a node has priced, held in memory so that a sale does not read the catalog.
//!
//! Every catalog write bumps the database's catalog revision in its own transaction. A node
//! compares that revision with the one its articles were read under at most once per `ttl` and
//! forgets them all when it has moved, so an article written on another node is priced anew
//! here within `ttl`. A write on this node forgets them before it answers.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use till_core::catalog::CatalogItem;
use till_core::ids::SkuId;

/// The most articles kept; past it the cache starts over, which bounds its memory (a few MiB)
/// whatever the size of the catalog.
const CAPACITY: usize = 20_000;

pub(crate) struct CatalogCache {
    ttl: Duration,
    state: RwLock<Cached>,
    /// One revision check at a time.
    pub(crate) checking: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Cached {
    /// Shared with the look-ups that found them: a sale takes a reference per line rather
    /// than a copy of the article's texts.
    items: HashMap<SkuId, Arc<CatalogItem>>,
    /// Moves whenever `items` is emptied, so that a read that began before cannot put back
    /// what it found.
    generation: u64,
    revision: Option<i64>,
    checked_at: Option<Instant>,
}

/// What a look-up found, and what it must read itself.
pub(crate) struct Lookup<'a> {
    pub found: HashMap<SkuId, Arc<CatalogItem>>,
    pub missing: Vec<&'a SkuId>,
    generation: u64,
}

impl CatalogCache {
    pub(crate) fn new(ttl: Duration) -> CatalogCache {
        CatalogCache {
            ttl,
            state: RwLock::new(Cached::default()),
            checking: tokio::sync::Mutex::new(()),
        }
    }

    /// True while the last revision check is younger than `ttl`.
    pub(crate) fn fresh(&self) -> bool {
        self.read().checked_at.is_some_and(|at| at.elapsed() < self.ttl)
    }

    /// Records the database's revision; forgets every article if it moved.
    pub(crate) fn checked(&self, revision: i64) {
        let mut state = self.write();
        if state.revision != Some(revision) {
            state.forget();
            state.revision = Some(revision);
        }
        state.checked_at = Some(Instant::now());
    }

    /// Forgets every article and checks the revision on the next look-up: after this node
    /// wrote the catalog.
    pub(crate) fn forget(&self) {
        let mut state = self.write();
        state.forget();
        state.checked_at = None;
    }

    pub(crate) fn lookup<'a>(&self, sku_ids: &[&'a SkuId]) -> Lookup<'a> {
        let state = self.read();
        let mut found = HashMap::with_capacity(sku_ids.len());
        let mut missing = Vec::new();
        for &sku_id in sku_ids {
            match state.items.get(sku_id) {
                Some(item) => {
                    found.insert(sku_id.clone(), item.clone());
                }
                None => missing.push(sku_id),
            }
        }
        Lookup {
            found,
            missing,
            generation: state.generation,
        }
    }

    /// Keeps what a look-up read from the database, unless the cache was emptied meanwhile.
    pub(crate) fn keep<'i>(&self, lookup: &Lookup<'_>, read: impl IntoIterator<Item = &'i Arc<CatalogItem>>) {
        let mut state = self.write();
        if state.generation != lookup.generation {
            return;
        }
        for item in read {
            if state.items.len() >= CAPACITY {
                state.forget();
                return;
            }
            state.items.insert(item.sku_id.clone(), item.clone());
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Cached> {
        self.state.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Cached> {
        self.state.write().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Cached {
    fn forget(&mut self) {
        self.items.clear();
        self.generation += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use till_core::money::{Cents, VatRate};

    /// SKU ids are SHA-256 hex.
    fn sku(n: u8) -> SkuId {
        SkuId::parse(&format!("{n:064x}")).unwrap()
    }

    fn item(n: u8, price: i64) -> Arc<CatalogItem> {
        Arc::new(CatalogItem {
            sku_id: sku(n),
            name: format!("article {n}"),
            price: Cents::new(price).unwrap(),
            vat_rate: VatRate::from_hundredths(2000).unwrap(),
        })
    }

    #[test]
    fn a_read_that_began_before_a_write_is_not_kept() {
        let cache = CatalogCache::new(Duration::from_secs(1));
        let sku = sku(1);
        let lookup = cache.lookup(&[&sku]);
        assert_eq!(lookup.missing.len(), 1);
        // The catalog is written (and forgotten) while the read is on its way.
        cache.forget();
        cache.keep(&lookup, [&item(1, 100)]);
        assert_eq!(cache.lookup(&[&sku]).missing.len(), 1, "the old price was put back");
        let lookup = cache.lookup(&[&sku]);
        cache.keep(&lookup, [&item(1, 120)]);
        assert_eq!(cache.lookup(&[&sku]).found[&sku].price.get(), 120);
    }

    #[test]
    fn a_moved_revision_forgets_every_article() {
        let cache = CatalogCache::new(Duration::from_secs(60));
        assert!(!cache.fresh(), "a new cache checks the revision first");
        cache.checked(3);
        assert!(cache.fresh());
        let sku = sku(1);
        let lookup = cache.lookup(&[&sku]);
        cache.keep(&lookup, [&item(1, 100)]);
        cache.checked(3);
        assert!(cache.lookup(&[&sku]).missing.is_empty(), "same revision, same articles");
        cache.checked(4);
        assert_eq!(cache.lookup(&[&sku]).missing.len(), 1);
    }
}
