//! The `pos.*` scope vocabulary, the `price:override` permission, and staff roles.

use std::fmt;

macro_rules! grants {
    ($($variant:ident = $text:literal,)*) => {
        /// One scope or permission a principal may hold.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Grant { $($variant,)* }

        impl Grant {
            pub const ALL: &'static [Grant] = &[$(Grant::$variant,)*];

            pub const fn as_str(self) -> &'static str {
                match self { $(Grant::$variant => $text,)* }
            }

            /// `None` for text outside the vocabulary (identity providers carry other scopes too).
            pub fn parse(text: &str) -> Option<Grant> {
                match text { $($text => Some(Grant::$variant),)* _ => None }
            }
        }
    };
}

grants! {
    SalesFinalize = "pos.sales.finalize",
    SalesRead = "pos.sales.read",
    ReturnsCreate = "pos.returns.create",
    ElevationRequest = "pos.elevation.request",
    SessionsOpen = "pos.sessions.open",
    SessionsClose = "pos.sessions.close",
    PromotionsRead = "pos.promotions.read",
    PromotionsWrite = "pos.promotions.write",
    StoresWrite = "pos.stores.write",
    CatalogWrite = "pos.catalog.write",
    StockWrite = "pos.stock.write",
    StaffWrite = "pos.staff.write",
    CouponsWrite = "pos.coupons.write",
    CatalogRead = "pos.catalog.read",
    StockRead = "pos.stock.read",
    CustomersRead = "pos.customers.read",
    StaffRead = "pos.staff.read",
    FiscalRead = "pos.fiscal.read",
    FiscalClose = "pos.fiscal.close",
    DiscountOverride = "pos.discount.override",
    PriceOverride = "price:override",
    StoredValueRead = "pos.storedvalue.read",
    StoredValueWrite = "pos.storedvalue.write",
    EventsRead = "pos.events.read",
    WebhooksRead = "pos.webhooks.read",
    WebhooksWrite = "pos.webhooks.write",
    ReportsRead = "pos.reports.read",
    CustomersWrite = "pos.customers.write",
    CustomersErase = "pos.customers.erase",
    InvoicesWrite = "pos.invoices.write",
}

impl fmt::Display for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of grants, small enough to copy.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct GrantSet(u32);

impl GrantSet {
    pub const EMPTY: GrantSet = GrantSet(0);

    pub const fn of(grants: &[Grant]) -> GrantSet {
        let mut bits = 0u32;
        let mut i = 0;
        while i < grants.len() {
            bits |= 1 << grants[i] as u8;
            i += 1;
        }
        GrantSet(bits)
    }

    pub fn all() -> GrantSet {
        GrantSet::of(Grant::ALL)
    }

    /// Reads a space-separated list, ignoring words outside the vocabulary.
    pub fn from_words<'a>(words: impl IntoIterator<Item = &'a str>) -> GrantSet {
        words.into_iter().filter_map(Grant::parse).collect()
    }

    pub const fn contains(self, grant: Grant) -> bool {
        self.0 & (1 << grant as u8) != 0
    }

    pub fn contains_any(self, grants: &[Grant]) -> bool {
        grants.iter().any(|g| self.contains(*g))
    }

    pub const fn union(self, other: GrantSet) -> GrantSet {
        GrantSet(self.0 | other.0)
    }

    pub fn iter(self) -> impl Iterator<Item = Grant> {
        Grant::ALL.iter().copied().filter(move |g| self.contains(*g))
    }

    /// Space-separated, in vocabulary order: the storage and `scope` claim form.
    pub fn to_words(self) -> String {
        self.iter().map(Grant::as_str).collect::<Vec<_>>().join(" ")
    }
}

impl FromIterator<Grant> for GrantSet {
    fn from_iter<I: IntoIterator<Item = Grant>>(iter: I) -> Self {
        GrantSet(iter.into_iter().fold(0, |bits, g| bits | 1 << g as u8))
    }
}

impl fmt::Debug for GrantSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter().map(Grant::as_str)).finish()
    }
}

/// A staff member's role, which gives default grants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Cashier,
    Manager,
    Admin,
}

const CASHIER: GrantSet = GrantSet::of(&[
    Grant::SalesFinalize,
    Grant::SalesRead,
    Grant::ReturnsCreate,
    Grant::ElevationRequest,
    Grant::StoredValueRead,
]);

impl Role {
    pub const ALL: [Role; 3] = [Role::Cashier, Role::Manager, Role::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Cashier => "cashier",
            Role::Manager => "manager",
            Role::Admin => "admin",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == text)
    }

    pub fn default_grants(self) -> GrantSet {
        match self {
            Role::Cashier => CASHIER,
            Role::Manager => CASHIER.union(GrantSet::of(&[Grant::PriceOverride, Grant::ReportsRead])),
            Role::Admin => GrantSet::all(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grant_round_trips_through_its_text() {
        for grant in Grant::ALL {
            assert_eq!(Grant::parse(grant.as_str()), Some(*grant));
        }
        assert!(Grant::ALL.len() <= 32, "GrantSet is a u32");
    }

    #[test]
    fn words_outside_the_vocabulary_are_ignored() {
        let set = GrantSet::from_words("openid pos.sales.read profile price:override".split(' '));
        assert_eq!(set.to_words(), "pos.sales.read price:override");
    }

    #[test]
    fn roles_grant_the_documented_defaults() {
        let cashier = Role::Cashier.default_grants();
        assert!(cashier.contains(Grant::SalesFinalize));
        assert!(cashier.contains(Grant::ElevationRequest));
        assert!(!cashier.contains(Grant::PriceOverride));
        assert!(cashier.contains(Grant::StoredValueRead));
        assert!(!cashier.contains(Grant::StoredValueWrite));
        let manager = Role::Manager.default_grants();
        assert!(manager.contains(Grant::PriceOverride));
        assert!(!manager.contains(Grant::StaffWrite));
        assert!(manager.contains(Grant::StoredValueRead));
        assert!(!manager.contains(Grant::StoredValueWrite));
        assert!(!manager.contains(Grant::WebhooksRead) && !manager.contains(Grant::WebhooksWrite));
        assert!(manager.contains(Grant::ReportsRead));
        assert!(!cashier.contains(Grant::ReportsRead));
        assert_eq!(Role::Admin.default_grants(), GrantSet::all());
    }
}
