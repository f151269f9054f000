//! What every use case shares: the store, the settings, the clock, the promotion rules in
//! memory and the writer of the answers tickets are stored with.

use crate::answers::Answers;
use crate::promotion_cache::PromotionCache;
use crate::storage::{self, Storage};
use jiff::Timestamp;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use till_core::sale::TenderMethod;

/// The settings the use cases act on; the binary fills them from its layered configuration.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Allowed gap between the server's total and the till's `amountDue`.
    pub cash_rounding_tolerance_cents: i64,
    pub session_ttl: Duration,
    pub elevation_ttl: Duration,
    pub pin_max_failures: u32,
    pub pin_lockout: Duration,
    /// Loyalty points per whole currency unit paid (not with loyalty).
    pub loyalty_points_per_unit: i64,
    /// Cents one loyalty point is worth when spent (at least 1).
    pub loyalty_point_value_cents: i64,
    /// Tender methods whose balances another system keeps: taken unchecked, their reference
    /// recorded.
    pub external_tenders: Vec<TenderMethod>,
    /// How long a credit note a return issues may be spent.
    pub credit_note_validity: Duration,
    /// How long a customer's profile is kept without activity before it is erased.
    pub customer_retention: Duration,
    /// Whether a `card` tender must name its payment attempt in `reference`.
    pub card_attempts_required: bool,
    /// Where customers reach the deployment, without a last `/`: a printed receipt then links
    /// to its public page.
    pub public_url: Option<String>,
    /// Whether a mail server is configured: receipts are sent by e-mail only then.
    pub e_receipts: bool,
    /// When a receipt's e-mail that failed in a way that may pass is tried again.
    pub mail_retry: till_core::webhooks::RetryPolicy,
    /// How long an approved card payment waits for its sale before it is an orphan.
    pub payment_orphan_window: till_core::payment::OrphanWindow,
    /// How long after it was rung (`issuedAt`) a sale from a till that was offline can still be
    /// booked.
    pub max_sale_age: Duration,
    /// How far a sale's `issuedAt` may lie outside its session (before its opening, after its
    /// close): the till's clock and the server's differ a little.
    pub clock_skew: Duration,
    /// The elevation channel; when off, requests get ELEVATION_UNAVAILABLE.
    pub elevation_enabled: bool,
    /// Elevation attempts a manager may make per window before RATE_LIMITED.
    pub elevation_rate_limit: u32,
    pub elevation_rate_window: Duration,
    /// A manager whose grants were last synchronised longer ago than this is GRANTS_STALE.
    pub grants_max_age: Duration,
    /// How long a node trusts its in-memory promotion rules before checking for writes made
    /// on other nodes.
    pub promotion_cache_ttl: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            cash_rounding_tolerance_cents: 0,
            session_ttl: Duration::from_secs(16 * 3600),
            elevation_ttl: Duration::from_secs(300),
            pin_max_failures: 5,
            pin_lockout: Duration::from_secs(900),
            loyalty_points_per_unit: 1,
            loyalty_point_value_cents: 1,
            external_tenders: Vec::new(),
            credit_note_validity: Duration::from_secs(365 * 24 * 3600),
            customer_retention: Duration::from_secs(1095 * 24 * 3600),
            card_attempts_required: false,
            public_url: None,
            e_receipts: false,
            mail_retry: till_core::webhooks::RetryPolicy::default(),
            payment_orphan_window: till_core::payment::OrphanWindow::default(),
            max_sale_age: Duration::from_secs(72 * 3600),
            clock_skew: Duration::from_secs(300),
            elevation_enabled: true,
            elevation_rate_limit: 10,
            elevation_rate_window: Duration::from_secs(60),
            grants_max_age: Duration::from_secs(30 * 24 * 3600),
            promotion_cache_ttl: Duration::from_secs(1),
        }
    }
}

/// Where "now" comes from. Tests drive a [`ManualClock`]; the service reads the system clock.
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> Timestamp;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that moves only when told to.
pub struct ManualClock(Mutex<Timestamp>);

impl ManualClock {
    pub fn new(start: Timestamp) -> ManualClock {
        ManualClock(Mutex::new(start))
    }

    pub fn advance(&self, by: Duration) {
        let mut now = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *now = now.checked_add(by).expect("clock within range");
    }

    pub fn set(&self, to: Timestamp) {
        *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = to;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The use cases' context.
pub struct App {
    store: Arc<dyn Storage>,
    settings: Settings,
    clock: Arc<dyn Clock>,
    promotions: PromotionCache,
    answers: Arc<dyn Answers>,
}

impl App {
    pub fn new(store: Arc<dyn Storage>, settings: Settings, clock: Arc<dyn Clock>, answers: Arc<dyn Answers>) -> App {
        let promotions = PromotionCache::new(settings.promotion_cache_ttl);
        App {
            store,
            settings,
            clock,
            promotions,
            answers,
        }
    }

    // Each capability of storage, for the use cases that name it.

    /// The sales book.
    pub fn sales_book(&self) -> &dyn storage::sales::SalesBook {
        &*self.store
    }

    /// The fiscal journal.
    pub fn journal(&self) -> &dyn storage::fiscal::FiscalJournal {
        &*self.store
    }

    /// Register sessions and their drawers.
    pub fn sessions(&self) -> &dyn storage::sessions::Sessions {
        &*self.store
    }

    /// Gift cards, credit notes and loyalty accounts.
    pub fn stored_value(&self) -> &dyn storage::stored_value::StoredValue {
        &*self.store
    }

    /// The catalog and its prices.
    pub fn catalog(&self) -> &dyn storage::catalog::Catalog {
        &*self.store
    }

    /// Promotion rules as stored (priced from through [`App::promotions`]).
    pub fn promotion_rules(&self) -> &dyn storage::offers::Promotions {
        &*self.store
    }

    /// Coupons.
    pub fn coupons(&self) -> &dyn storage::offers::Coupons {
        &*self.store
    }

    /// Stock, counts and transfers.
    pub fn stock(&self) -> &dyn storage::stock::Stock {
        &*self.store
    }

    /// Snapshots of a store for its tills, read by a task of their own.
    pub fn snapshots(&self) -> Arc<dyn storage::sync::Snapshots> {
        self.store.clone()
    }

    /// The event feed and webhooks.
    pub fn feed(&self) -> &dyn storage::feed::Feed {
        &*self.store
    }

    /// Stores and staff.
    pub fn people(&self) -> &dyn storage::people::People {
        &*self.store
    }

    /// The customer directory.
    pub fn customers(&self) -> &dyn storage::customers::Customers {
        &*self.store
    }

    /// The payment-attempt ledger.
    pub fn payments(&self) -> &dyn storage::payments::Payments {
        &*self.store
    }

    /// Invoices for business customers.
    pub fn invoices(&self) -> &dyn storage::invoices::Invoices {
        &*self.store
    }

    /// Receipts sent by e-mail.
    pub fn mail(&self) -> &dyn storage::receipt_mail::ReceiptMail {
        &*self.store
    }

    /// Grants, confirmations and console sign-outs.
    pub fn access(&self) -> &dyn storage::access::Access {
        &*self.store
    }

    /// How durable an answer is.
    pub fn durability(&self) -> &dyn storage::durability::Durability {
        &*self.store
    }

    /// `answer`, given again to a request made before, once what that request committed is
    /// as durable as a new commit would be (see [`storage::durability`]).
    pub(crate) async fn answer_again<T>(&self, answer: T) -> Result<T, storage::StoreError> {
        self.durability().barrier().await?;
        Ok(answer)
    }

    /// Whether the database answers.
    pub fn health(&self) -> &dyn storage::Health {
        &*self.store
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Now, to the microsecond: the precision every instant is stored with, so what an answer
    /// says and what the database holds are the same instant.
    pub fn now(&self) -> Timestamp {
        let now = self.clock.now();
        Timestamp::from_microsecond(now.as_microsecond()).unwrap_or(now)
    }

    pub fn promotions(&self) -> &PromotionCache {
        &self.promotions
    }

    pub(crate) fn answers(&self) -> &dyn Answers {
        &*self.answers
    }
}
