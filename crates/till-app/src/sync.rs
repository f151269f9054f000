//! A till's snapshot of its store (docs/sync.md): the articles with the prices in force and
//! scheduled there, the promotion rules and coupons that may apply there, and the staff, read
//! in one consistent read with the feed cursor to follow from. A till that holds it prices a
//! sale offline as the server will.

use crate::app::App;
use crate::refusal::Error;
use crate::storage::StoreError;
use crate::storage::sync::{Snapshots, Taken};
use jiff::Timestamp;
use std::sync::Arc;
use till_core::ids::StoreId;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

pub use crate::storage::sync::{SnapshotArticle, SnapshotHead, SnapshotPart};

/// Pages read ahead of the reader: a few, so that memory stays flat whatever the catalog's size.
const PAGES_AHEAD: usize = 2;

/// A snapshot being read: its head, then its parts as the store reads them.
pub struct Snapshot {
    pub head: SnapshotHead,
    parts: mpsc::Receiver<SnapshotPart>,
    read: JoinHandle<Result<Taken, StoreError>>,
}

pub enum Snapshotted {
    Taken(Box<Snapshot>),
    UnknownStore,
}

/// Starts reading `store_id`'s snapshot; answers once its head is read.
pub async fn snapshot(app: &App, store_id: StoreId) -> Result<Snapshotted, Error> {
    let (sender, mut parts) = mpsc::channel(PAGES_AHEAD);
    let snapshots: Arc<dyn Snapshots> = app.snapshots();
    let now = app.now();
    let read = tokio::spawn(async move { snapshots.store_snapshot(&store_id, now, sender).await });
    match parts.recv().await {
        Some(SnapshotPart::Head(head)) => Ok(Snapshotted::Taken(Box::new(Snapshot {
            head: *head,
            parts,
            read,
        }))),
        Some(_) => Err(corrupt("a snapshot began without its head")),
        None => match ended(read).await? {
            Taken::UnknownStore => Ok(Snapshotted::UnknownStore),
            Taken::Whole | Taken::Abandoned => Err(corrupt("a snapshot ended without its head")),
        },
    }
}

impl Snapshot {
    /// The next part, holding only the rules and coupons that may apply in the store from the
    /// snapshot's instant on; `None` once the read has ended.
    pub async fn next(&mut self) -> Option<SnapshotPart> {
        let (store, at) = (&self.head.store.store_id, self.head.taken_at);
        Some(match self.parts.recv().await? {
            SnapshotPart::Promotions(rules) => {
                SnapshotPart::Promotions(rules.into_iter().filter(|r| r.rule.may_run_from(store, at)).collect())
            }
            SnapshotPart::Coupons(coupons) => {
                SnapshotPart::Coupons(coupons.into_iter().filter(|c| c.coupon.may_apply_from(at)).collect())
            }
            part => part,
        })
    }

    /// Whether the read that [`Snapshot::next`] ended was whole: a snapshot cut short by a
    /// failure must not look complete to the till.
    pub async fn whole(self) -> Result<(), Error> {
        match ended(self.read).await? {
            Taken::Whole => Ok(()),
            Taken::UnknownStore | Taken::Abandoned => Err(corrupt("a snapshot's read stopped early")),
        }
    }

    pub fn taken_at(&self) -> Timestamp {
        self.head.taken_at
    }
}

async fn ended(read: JoinHandle<Result<Taken, StoreError>>) -> Result<Taken, Error> {
    match read.await {
        Ok(taken) => Ok(taken?),
        Err(stopped) => Err(Error::internal(stopped)),
    }
}

fn corrupt(what: &str) -> Error {
    Error::Store(StoreError::Corrupt(what.to_owned()))
}
