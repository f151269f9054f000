//! Who is asking: the principal a credential resolved to, as the use cases weigh it.

use till_core::grant::{Grant, GrantSet};
use till_core::ids::Subject;
use till_store::sessions::SessionPrincipal;

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
}
