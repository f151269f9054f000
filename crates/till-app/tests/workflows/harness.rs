//! A till on a scratch SQLite store: the use cases run as the server runs them, without HTTP.

use jiff::Timestamp;
use std::sync::Arc;
use till_app::finalize::finalize;
use till_app::secret::{hash_pin, token_hash};
use till_app::sessions::{OpenRequest, open};
use till_app::{Answers, App, Booked, Clock, Credential, Error, ManualClock, Principal, Refusal, Settings};
use till_core::committed::SaleAnswer;
use till_core::fiscal::FiscalKey;
use till_core::grant::Role;
use till_core::ids::{RegisterId, SessionId, SkuId, StoreId, Subject, TransactionId};
use till_core::money::{Cents, VatRate};
use till_core::pricing::CouponEffect;
use till_core::sale::{Cart, CartLine, SaleRequest, SaleType, Tender, TenderMethod, TenderSet};
use till_core::staff::{Pin, StaffMember};
use till_store::sales::{NewSale, ReturnOf};
use till_store::staff::PutStaff;
use till_store::{Store, StoreOptions};

pub const CASHIER: &str = "cashier-1";
pub const MANAGER: &str = "manager-1";
pub const PIN: &str = "2468";
pub const STORE: &str = "store-1";
pub const REGISTER: &str = "till-1";

/// A till and its clock, on a database of its own.
pub struct Till {
    pub app: App,
    /// The store the app was given, for what a test sets up or checks below the use cases.
    pub store: Store,
    pub clock: Arc<ManualClock>,
    _dir: tempfile::TempDir,
}

impl Till {
    pub async fn new() -> Till {
        Till::with(Settings::default()).await
    }

    /// A till with a cashier and a manager, both with [`PIN`].
    pub async fn with(settings: Settings) -> Till {
        let dir = tempfile::tempdir().expect("a scratch directory");
        let url = format!("sqlite://{}", dir.path().join("till.db").display());
        let store = Store::connect(&url, &StoreOptions::default())
            .await
            .expect("a scratch store");
        store.migrate().await.expect("migrations apply");
        let clock = Arc::new(ManualClock::new(Timestamp::from_second(1_800_000_000).unwrap()));
        let key = FiscalKey::from_secret_bytes(&[7; 32]).expect("a P-256 key");
        store
            .use_fiscal_key(key, clock.now())
            .await
            .expect("the key is published");
        let app = App::new(Arc::new(store.clone()), settings, clock.clone(), Arc::new(PlainAnswers));
        let till = Till {
            app,
            store,
            clock,
            _dir: dir,
        };
        till.staff(CASHIER, Role::Cashier).await;
        till.staff(MANAGER, Role::Manager).await;
        till
    }

    async fn staff(&self, subject: &str, role: Role) {
        let member = StaffMember {
            display_name: subject.to_owned(),
            role,
            permissions: Default::default(),
            discount_limit: None,
        };
        let put = PutStaff {
            subject: Subject::parse(subject).unwrap(),
            member,
            pin_hash: Some(hash_pin(&Pin::parse(PIN).unwrap())),
        };
        self.store.put_staff(put, self.clock.now()).await.unwrap();
    }

    /// Finalizes `sale` as `till` sends it, without a manager's approval.
    pub async fn finalize(&self, till: &Principal, sale: SaleRequest) -> Result<Booked, Error> {
        finalize(&self.app, till, sale, None).await
    }

    /// An article of the catalog at `price` cents.
    pub async fn article(&self, sku: &SkuId, price: i64) {
        let item = till_core::catalog::CatalogItem {
            sku_id: sku.clone(),
            name: "Article".to_owned(),
            price: Cents::new(price).unwrap(),
            vat_rate: VatRate::from_hundredths(2000).unwrap(),
        };
        self.store.import_catalog(vec![item], self.clock.now()).await.unwrap();
    }

    /// Opens a session for `cashier` with `pin`, on [`REGISTER`].
    pub async fn open(&self, cashier: &str, pin: &str) -> Result<till_app::sessions::Opened, Error> {
        let request = OpenRequest {
            store_id: StoreId::parse(STORE).unwrap(),
            register_id: RegisterId::parse(REGISTER).unwrap(),
            cashier: Subject::parse(cashier).unwrap(),
            pin: pin.to_owned(),
            opening_float: Cents::ZERO,
        };
        open(&self.app, request).await
    }

    /// The till's principal: the cashier's session, opened now.
    pub async fn session(&self) -> Principal {
        let opened = self.open(CASHIER, PIN).await.expect("the session opens");
        self.principal(&opened.token).await
    }

    /// The principal a till's token resolves to now, as each request resolves it.
    pub async fn principal(&self, token: &str) -> Principal {
        let found = self.store.session_by_token(&token_hash(token)).await.unwrap();
        let session = found.expect("the token resolves to its session");
        Principal {
            subject: session.cashier.subject.clone(),
            grants: session.cashier.member.grants(),
            credential: Credential::Session(Box::new(session)),
        }
    }
}

/// A till selling one article at `price` cents, and its cashier's session.
pub async fn selling(price: i64) -> (Till, Principal, SkuId) {
    let till = Till::new().await;
    let (cashier, article) = (till.session().await, sku(1));
    till.article(&article, price).await;
    (till, cashier, article)
}

/// The session a till's principal stands for.
pub fn session_of(till: &Principal) -> SessionId {
    till.session().expect("a till").session.session_id.clone()
}

/// A sale of `quantity` units of `sku` at `price` each, paid `paid` in cash.
pub fn sale(id: &str, till: &Principal, sku: &SkuId, quantity: i64, price: i64, paid: i64) -> SaleRequest {
    SaleRequest {
        transaction_id: TransactionId::parse(id).unwrap(),
        number: format!("N-{id}"),
        store_id: StoreId::parse(STORE).unwrap(),
        seller_id: Subject::parse(CASHIER).unwrap(),
        customer_id: None,
        session_id: session_of(till),
        register_id: None,
        kind: SaleType::Sale,
        cart: Cart {
            lines: vec![CartLine {
                id: "l1".to_owned(),
                sku_id: Some(sku.clone()),
                quantity,
                unit_price: Cents::new(price).unwrap(),
                vat_rate: VatRate::from_hundredths(2000).unwrap(),
                free: false,
                custom: false,
                serial: None,
                kit_id: None,
                gift_card: None,
            }],
            free_line_sequence: 1,
        },
        declared_discounts: Vec::new(),
        coupon_code: None,
        issued_at: None,
        tenders: cash(paid),
    }
}

/// `amount` in cash, exactly.
pub fn cash(amount: i64) -> TenderSet {
    let amount = Cents::new(amount).unwrap();
    TenderSet {
        amount_due: amount,
        tenders: vec![Tender {
            id: "cash".to_owned(),
            method: TenderMethod::Cash,
            applied: amount,
            presented: amount,
            change: Cents::ZERO,
            forfeited: Cents::ZERO,
            reference: None,
        }],
        sequence: 1,
    }
}

pub fn sku(n: u8) -> SkuId {
    SkuId::parse(&format!("{n:02x}").repeat(32)).unwrap()
}

/// The refusal of a use case, or a panic naming what came instead.
pub fn refusal<T>(outcome: Result<T, Error>) -> Refusal {
    match outcome {
        Err(Error::Refused(refusal)) => refusal,
        Err(other) => panic!("expected a refusal, got {other:?}"),
        Ok(_) => panic!("expected a refusal, got an outcome"),
    }
}

/// Answers that say what was committed, so that tests can read them back.
struct PlainAnswers;

impl Answers for PlainAnswers {
    fn sale(&self, sale: &NewSale, _cart: &Cart, _coupon: Option<&CouponEffect>) -> Result<String, serde_json::Error> {
        Ok(format!(
            r#"{{"sale":"{}","total":{}}}"#,
            sale.transaction_id,
            sale.total.get()
        ))
    }

    fn return_ticket(&self, ticket: &NewSale, original: &ReturnOf) -> SaleAnswer {
        let (id, of, total) = (
            ticket.transaction_id.clone(),
            original.transaction_id.clone(),
            ticket.total.get(),
        );
        SaleAnswer::NamingCreditNote(Arc::new(move |credit_note: &str, _| {
            Ok(format!(
                r#"{{"return":"{id}","of":"{of}","total":{total},"creditNote":"{credit_note}"}}"#
            ))
        }))
    }
}
