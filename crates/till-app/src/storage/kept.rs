//! What a node keeps in memory of data any node may change (the articles it prices, the
//! promotion rules, the session tokens it resolved), and how long it trusts it: one mechanism
//! for every such cache, [`Kept`].
//!
//! A write on this node forgets what it changed before it answers, so the node that wrote sees
//! its own write at once. A write on another node applies here within the cache's time to live
//! (`ttl`): where the database keeps a revision of the data, bumped by every write, the cache
//! compares it at most once per `ttl` and builds its value again when it has moved
//! ([`Kept::check`]); where it keeps none, each entry is trusted for `ttl` after it was read
//! ([`Kept::young`]).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

pub struct Kept<T> {
    ttl: Duration,
    state: RwLock<State<T>>,
    /// One revision check at a time.
    checking: tokio::sync::Mutex<()>,
}

struct State<T> {
    value: T,
    /// Moves whenever the value is forgotten or built again, so that a read of the database
    /// that began before cannot put back what it found.
    generation: u64,
    /// The database's revision the value was built from.
    revision: Option<i64>,
    checked_at: Option<Instant>,
}

/// What a look at the kept value found, and when it looked: [`Kept::keep`] takes it back.
pub struct Seen<R> {
    pub found: R,
    generation: u64,
}

impl<T: Default> Kept<T> {
    pub fn new(ttl: Duration) -> Kept<T> {
        Kept {
            ttl,
            state: RwLock::new(State {
                value: T::default(),
                generation: 0,
                revision: None,
                checked_at: None,
            }),
            checking: tokio::sync::Mutex::new(()),
        }
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Whether something read at `read_at` may still be trusted.
    pub fn young(&self, read_at: Instant) -> bool {
        read_at.elapsed() < self.ttl
    }

    /// True while the last revision check is younger than `ttl`.
    pub fn fresh(&self) -> bool {
        self.read().checked_at.is_some_and(|at| self.young(at))
    }

    /// Brings the value up to the database, unless the revision was checked less than `ttl`
    /// ago: reads the revision with `revision` (one check at a time) and, when it has moved,
    /// builds the value again with `rebuild`.
    pub async fn check<E>(
        &self,
        revision: impl AsyncFnOnce() -> Result<i64, E>,
        rebuild: impl AsyncFnOnce() -> Result<T, E>,
    ) -> Result<(), E> {
        if self.fresh() {
            return Ok(());
        }
        let _one_check = self.checking.lock().await;
        if self.fresh() {
            return Ok(());
        }
        self.check_holding(revision, rebuild).await
    }

    /// Checks the revision now, whenever it was last checked: after this node wrote the data,
    /// so that its next look finds the write.
    pub async fn check_now<E>(
        &self,
        revision: impl AsyncFnOnce() -> Result<i64, E>,
        rebuild: impl AsyncFnOnce() -> Result<T, E>,
    ) -> Result<(), E> {
        let _one_check = self.checking.lock().await;
        self.check_holding(revision, rebuild).await
    }

    async fn check_holding<E>(
        &self,
        revision: impl AsyncFnOnce() -> Result<i64, E>,
        rebuild: impl AsyncFnOnce() -> Result<T, E>,
    ) -> Result<(), E> {
        let now = revision().await?;
        if self.read().revision != Some(now) {
            let value = rebuild().await?;
            let mut state = self.write();
            state.value = value;
            state.generation += 1;
            state.revision = Some(now);
        }
        self.write().checked_at = Some(Instant::now());
        Ok(())
    }

    /// Forgets the value, and checks the revision at the next look: after this node wrote the
    /// data.
    pub fn forget(&self) {
        let mut state = self.write();
        state.value = T::default();
        state.generation += 1;
        state.checked_at = None;
    }

    /// What `look` finds in the value now.
    pub fn look<R>(&self, look: impl FnOnce(&T) -> R) -> Seen<R> {
        let state = self.read();
        Seen {
            found: look(&state.value),
            generation: state.generation,
        }
    }

    /// Adds what was read from the database after `seen` with `add`, unless the value was
    /// forgotten or built again since: what was read may be older than the write that
    /// forgot it.
    pub fn keep<R>(&self, seen: &Seen<R>, add: impl FnOnce(&mut T)) {
        let mut state = self.write();
        if state.generation == seen.generation {
            add(&mut state.value);
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, State<T>> {
        self.state.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, State<T>> {
        self.state.write().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Inserts `value` under `key` into a map of at most `capacity` entries: a full map starts
/// over first, which bounds a cache's memory whatever the size of what it caches.
pub fn insert_within<K: Hash + Eq, V>(map: &mut HashMap<K, V>, capacity: usize, key: K, value: V) {
    if map.len() >= capacity && !map.contains_key(&key) {
        map.clear();
    }
    map.insert(key, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    type Prices = Kept<HashMap<&'static str, i64>>;

    async fn check(kept: &Prices, revision: i64) {
        kept.check(async || Ok::<_, ()>(revision), async || Ok(HashMap::new()))
            .await
            .unwrap();
    }

    #[test]
    fn a_read_that_began_before_a_forget_is_not_kept() {
        let kept = Prices::new(Duration::from_secs(1));
        let seen = kept.look(|prices| prices.get("mug").copied());
        assert_eq!(seen.found, None);
        // The data is written (and forgotten) while the read is on its way.
        kept.forget();
        kept.keep(&seen, |prices| {
            prices.insert("mug", 100);
        });
        assert_eq!(
            kept.look(|prices| prices.get("mug").copied()).found,
            None,
            "the old price was put back"
        );
        let seen = kept.look(|prices| prices.get("mug").copied());
        kept.keep(&seen, |prices| {
            prices.insert("mug", 120);
        });
        assert_eq!(kept.look(|prices| prices.get("mug").copied()).found, Some(120));
    }

    #[tokio::test]
    async fn a_moved_revision_builds_the_value_again_and_a_same_one_keeps_it() {
        let kept = Prices::new(Duration::from_secs(60));
        assert!(!kept.fresh(), "a new cache checks the revision first");
        check(&kept, 3).await;
        assert!(kept.fresh());
        let seen = kept.look(|_| ());
        kept.keep(&seen, |prices| {
            prices.insert("mug", 100);
        });
        kept.check_now(async || Ok::<_, ()>(3), async || Ok(HashMap::new()))
            .await
            .unwrap();
        assert_eq!(kept.look(|prices| prices.len()).found, 1, "same revision, same value");
        kept.check_now(async || Ok::<_, ()>(4), async || Ok(HashMap::from([("book", 5)])))
            .await
            .unwrap();
        assert_eq!(kept.look(|prices| prices.clone()).found, HashMap::from([("book", 5)]));
    }

    #[test]
    fn a_full_map_starts_over() {
        let mut prices = HashMap::from([("mug", 100), ("book", 5)]);
        insert_within(&mut prices, 2, "book", 6);
        assert_eq!(
            prices,
            HashMap::from([("mug", 100), ("book", 6)]),
            "a known key is replaced in place"
        );
        insert_within(&mut prices, 2, "pen", 2);
        assert_eq!(prices, HashMap::from([("pen", 2)]));
    }

    #[tokio::test]
    async fn the_revision_is_read_at_most_once_per_ttl() {
        let kept = Prices::new(Duration::from_secs(60));
        let mut reads = 0;
        for _ in 0..3 {
            kept.check(
                async || {
                    reads += 1;
                    Ok::<_, ()>(1)
                },
                async || Ok(HashMap::new()),
            )
            .await
            .unwrap();
        }
        assert_eq!(reads, 1);
        kept.forget();
        assert!(!kept.fresh(), "a forget has the next look check the revision");
    }
}
