//! Session tokens a node resolved lately, so that a till's every request does not read its
//! session and cashier again.
//!
//! An entry is trusted for `ttl`: a session closed or a cashier changed on another node applies
//! here within it. A write of either on this node forgets every entry before it answers. What
//! matters to the books does not wait for `ttl`: a sale on a session closed meanwhile is
//! refused by its commit, which checks the session in the database.

use crate::sessions::SessionPrincipal;
use std::collections::HashMap;
use std::sync::RwLock;
use std::time::{Duration, Instant};

/// The most tokens kept; past it the cache starts over, which bounds its memory (about a KiB a
/// token) whatever the number of tills.
const CAPACITY: usize = 4_096;

pub(crate) struct SessionCache {
    ttl: Duration,
    /// By token hash: the principal and when it was read.
    entries: RwLock<HashMap<Vec<u8>, (Instant, SessionPrincipal)>>,
}

impl SessionCache {
    /// A `ttl` of zero keeps nothing: every request reads its session.
    pub(crate) fn new(ttl: Duration) -> SessionCache {
        SessionCache {
            ttl,
            entries: RwLock::new(HashMap::new()),
        }
    }

    /// The principal read for `token_hash` less than `ttl` ago.
    pub(crate) fn get(&self, token_hash: &[u8]) -> Option<SessionPrincipal> {
        let entries = self.entries.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (read_at, principal) = entries.get(token_hash)?;
        (read_at.elapsed() < self.ttl).then(|| principal.clone())
    }

    /// Keeps `principal`, read at `read_at` (before the read began, so that its age is never
    /// understated).
    pub(crate) fn keep(&self, token_hash: &[u8], principal: &SessionPrincipal, read_at: Instant) {
        if self.ttl.is_zero() {
            return;
        }
        let mut entries = self.entries.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        if entries.len() >= CAPACITY && !entries.contains_key(token_hash) {
            entries.clear();
        }
        entries.insert(token_hash.to_vec(), (read_at, principal.clone()));
    }

    /// Forgets every token: this node closed a session or changed a staff member.
    pub(crate) fn forget(&self) {
        self.entries
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clear();
    }
}
