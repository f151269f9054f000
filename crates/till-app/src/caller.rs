//! Who is asking: the principal a credential resolved to, as the use cases weigh it.

use crate::storage::sessions::SessionPrincipal;
use till_core::grant::{Grant, GrantSet};
use till_core::ids::{StoreId, Subject};

/// An authenticated caller.
#[derive(Clone, Debug)]
pub struct Principal {
    pub subject: Subject,
    pub grants: GrantSet,
    pub credential: Credential,
}

#[derive(Clone, Debug)]
pub enum Credential {
    /// An identity provider's access token.
    Token,
    /// A till's register-session token.
    Session(Box<SessionPrincipal>),
}

impl Principal {
    pub fn session(&self) -> Option<&SessionPrincipal> {
        match &self.credential {
            Credential::Session(session) => Some(session),
            Credential::Token => None,
        }
    }

    pub fn has(&self, grant: Grant) -> bool {
        self.grants.contains(grant)
    }

    /// The one store whose sales and register sessions this caller reads: a till's own. A
    /// back-office token reads every store's.
    pub fn reads_one_store(&self) -> Option<&StoreId> {
        self.session().map(|till| &till.session.store_id)
    }

    /// Whether the caller reads the sales and register sessions of `store`.
    pub fn reads_store(&self, store: &str) -> bool {
        self.reads_one_store().is_none_or(|own| own.as_str() == store)
    }

    /// The store a list of sales or sessions is narrowed to for this caller, given the one it
    /// `asked` for (if any): a till's own store, or what a back-office token asked. `None` when a
    /// till asked for another store: its list is empty.
    pub fn store_to_list(&self, asked: Option<StoreId>) -> Option<Option<StoreId>> {
        match (self.reads_one_store(), asked) {
            (None, asked) => Some(asked),
            (Some(own), None) => Some(Some(own.clone())),
            (Some(own), Some(asked)) => (*own == asked).then_some(Some(asked)),
        }
    }
}
