//! Demo data: a Paris épicerie with a few dozen articles at the four French VAT rates, each with
//! its barcode, stock, a cashier and a manager with PINs, a coupon, a gift card, a regular
//! customer with loyalty points, and a till session ready to sell; the day's earlier sales on a
//! second till, so that the console has a day to show; and a second store in Lyon, empty, for
//! goods to be transferred to.

use crate::config::Config;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;
use till_api::auth::secret::{SESSION_TOKEN_PREFIX, hash_pin, new_id, new_token, token_hash};
use till_api::{AppState, ManualClock};
use till_app::App;
use till_core::barcode::Barcode;
use till_core::catalog::CatalogItem;
use till_core::coupon::{Coupon, CouponReward};
use till_core::customer::{Consent, ConsentSource, Email, Phone, Profile};
use till_core::grant::{GrantSet, Role};
use till_core::ids::{CouponCode, CustomerId, PromotionId, RegisterId, SessionId, SkuId, StoreId, Subject};
use till_core::money::{Bps, Cents, VatRate};
use till_core::promotions::{BuySide, GetSide, Mechanics, PromotionRule};
use till_core::seller::{
    AddressLine, CountryCode, LegalName, PostalAddress, PostalCode, SellerIdentity, Siren, VatNumber,
};
use till_core::staff::{DiscountLimit, Pin, StaffMember};
use till_core::store::{Currency, Siret, StoreProfile, Timezone};
use till_core::stored_value::InstrumentCode;
use till_store::catalog::CatalogWrite;
use till_store::customers::{Enrollment, PutCustomer};
use till_store::sessions::{OpenRefusal, OpenSession};
use till_store::staff::PutStaff;
use till_store::stored_value::NewCard;
use till_store::{Conflict, Store, StoreError};

mod day;
use day::{ShopDay, sell_the_day};

pub const STORE: &str = "paris-marais";
/// The chain's second store: no stock until goods are transferred to it.
pub const SECOND_STORE: &str = "lyon-presqu-ile";
pub const REGISTER: &str = "till-1";
/// The till the day's earlier sales were rung on, its shift closed since.
pub const MORNING_REGISTER: &str = "till-2";
/// The register the till in the browser (`/till`) is paired with: its own, so that it opens its
/// session with the cashier's PIN while [`REGISTER`] keeps the session the demo printed.
pub const WEB_REGISTER: &str = "till-3";
/// What the browser till's device token may do: open and close its register's sessions, read
/// the store's snapshot and the feed that keeps it current, and find the customer at the
/// counter (a cashier's role holds no `pos.customers.read`; docs/till.md).
pub const DEVICE_SCOPES: &str = "pos.sessions.open pos.sessions.close pos.catalog.read pos.promotions.read \
     pos.events.read pos.customers.read";
pub const CASHIER: &str = "camille";
pub const CASHIER_PIN: &str = "1234";
pub const MANAGER: &str = "mathis";
pub const MANAGER_PIN: &str = "9876";
/// The demo's gift card: a fixed code, so that the README can spend it. A real card's code is
/// drawn at random when it is issued (`POST /v1/gift-cards`), never written down in advance.
pub const GIFT_CARD: &str = "CADEAU23456789AB";
pub const GIFT_CARD_CENTS: i64 = 5_000;
/// A regular customer, enrolled with points to spend.
pub const REGULAR_CUSTOMER: &str = "client-1789";
pub const REGULAR_CUSTOMER_POINTS: u32 = 2_500;

/// (name, price in cents, VAT in hundredths of a percent)
pub const ARTICLES: &[(&str, i64, i64)] = &[
    ("Baguette tradition", 130, 550),
    ("Confiture d'abricot 370 g", 495, 550),
    ("Miel de lavande 250 g", 850, 550),
    ("Chocolat noir 70 % 100 g", 320, 550),
    ("Café moulu pur arabica 250 g", 590, 550),
    ("Thé vert au jasmin 100 g", 650, 550),
    ("Huile d'olive vierge extra 50 cl", 1290, 550),
    ("Pâtes artisanales 500 g", 380, 550),
    ("Sablés bretons 125 g", 420, 550),
    ("Eau minérale 1,5 L", 95, 550),
    ("Yaourts nature x4", 260, 550),
    ("Comté 18 mois 200 g", 680, 550),
    ("Livre : Cuisine du marché", 2490, 550),
    ("Sandwich jambon-beurre", 550, 1000),
    ("Salade composée du jour", 890, 1000),
    ("Jus d'orange pressé 25 cl", 400, 1000),
    ("Part de quiche lorraine", 480, 1000),
    ("Café à emporter", 240, 1000),
    ("Croque-monsieur", 650, 1000),
    ("Tote bag en coton bio", 1290, 2000),
    ("Mug en grès", 1450, 2000),
    ("Bougie parfumée figuier", 2400, 2000),
    ("Carnet A5 ligné", 990, 2000),
    ("Stylo plume", 1990, 2000),
    ("Côtes-du-Rhône rouge 75 cl", 1150, 2000),
    ("Champagne brut 75 cl", 3490, 2000),
    ("Parapluie pliant", 2900, 2000),
    ("Piles AA x4", 690, 2000),
    ("Savon de Marseille 300 g", 450, 2000),
    ("Crème mains karité 75 ml", 890, 2000),
    ("Le Monde (quotidien)", 320, 210),
    ("Magazine hebdomadaire", 450, 210),
];

/// The EAN-13 of the demo article at `index` in [`ARTICLES`]: a French prefix, then its index,
/// then its check digit.
pub fn barcode(index: usize) -> Barcode {
    Barcode::completing(&format!("37601234{index:04}")).expect("twelve digits")
}

/// The SKU id of a demo article: the SHA-256 of its name, so it is the same on every run.
pub fn sku_id(name: &str) -> SkuId {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(name.as_bytes());
    SkuId::parse(&digest.iter().map(|b| format!("{b:02x}")).collect::<String>()).expect("hex of a digest")
}

/// A `curl` command for a first sale on the demo till, as the README shows it.
pub fn first_sale_command() -> String {
    let (baguette, mug) = (sku_id("Baguette tradition"), sku_id("Mug en grès"));
    sale_command(
        ("demo-0001", "T1-0001", "client-42"),
        &[(baguette, 2, 130, "5.5"), (mug, 1, 1450, "20")],
        1710,
        &[r#"{"id": "p1", "method": "cash", "applied": 1710, "presented": 2000, "change": 290, "forfeited": 0}"#],
    )
}

/// A `curl` command for a sale on the demo till paid with the demo's gift card and its regular
/// customer's points, as the README shows it.
pub fn stored_value_sale_command() -> String {
    let (champagne, comte) = (sku_id("Champagne brut 75 cl"), sku_id("Comté 18 mois 200 g"));
    let card = format!(
        r#"{{"id": "p1", "method": "gift_card", "reference": "{GIFT_CARD}", "applied": 3000, "presented": 3000, "change": 0, "forfeited": 0}}"#
    );
    sale_command(
        ("demo-0003", "T1-0002", REGULAR_CUSTOMER),
        &[(champagne, 1, 3490, "20"), (comte, 1, 680, "5.5")],
        4170,
        &[
            &card,
            r#"{"id": "p2", "method": "loyalty", "applied": 1170, "presented": 1170, "change": 0, "forfeited": 0}"#,
        ],
    )
}

/// A finalize `curl` on the demo till's session: `(transaction id, number, customer)`, lines of
/// `(article, quantity, unit price, VAT rate)`, the amount due and the tenders as written.
fn sale_command(
    (transaction, number, customer): (&str, &str, &str),
    lines: &[(SkuId, i64, i64, &str)],
    amount_due: i64,
    tenders: &[&str],
) -> String {
    let lines = lines
        .iter()
        .enumerate()
        .map(|(n, (sku, quantity, price, vat))| {
            format!(
                r#"         {{"id": "l{}", "skuId": "{sku}", "quantity": {quantity}, "unitPrice": {price}, "vatRate": {vat}, "free": false}}"#,
                n + 1
            )
        })
        .collect::<Vec<_>>()
        .join(",\n");
    let tenders = tenders
        .iter()
        .map(|tender| format!("         {tender}"))
        .collect::<Vec<_>>()
        .join(",\n");
    format!(
        r#"curl -s -X POST $TILL/v1/checkout/finalize \
  -H "Authorization: Bearer $TILL_SESSION_TOKEN" -H 'content-type: application/json' \
  -d '{{"transactionId": "{transaction}", "number": "{number}", "storeId": "{STORE}",
       "sellerId": "{CASHIER}", "customerId": "{customer}", "sessionId": "'$TILL_SESSION'",
       "cart": {{"freeLineSequence": 0, "lines": [
{lines}]}},
       "tenders": {{"amountDue": {amount_due}, "sequence": 1, "tenders": [
{tenders}]}}}}'"#
    )
}

/// The file of the data directory holding the development secret.
pub const DEV_SECRET_FILE: &str = "dev-jwt-secret";

/// The development secret the data directory holds, if the demo made one there.
pub fn existing_dev_secret(data_dir: &Path) -> Option<String> {
    let secret = std::fs::read_to_string(data_dir.join(DEV_SECRET_FILE)).ok()?;
    Some(secret.trim().to_owned()).filter(|secret| !secret.is_empty())
}

/// The development secret kept in the data directory, created on first use.
pub fn dev_secret(data_dir: &Path) -> anyhow::Result<String> {
    if let Some(secret) = existing_dev_secret(data_dir) {
        return Ok(secret);
    }
    let path = data_dir.join(DEV_SECRET_FILE);
    crate::server::create_data_dir(data_dir)?;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("random generator failed: {e}"))?;
    let secret = URL_SAFE_NO_PAD.encode(bytes);
    // Anyone who reads it can mint an admin token.
    crate::server::write_private(&path, &secret)?;
    Ok(secret)
}

/// What a newcomer needs to make requests right away: the lines the demo prints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DemoSession {
    pub session_id: String,
    pub token: String,
    /// A back-office token with every scope.
    pub admin_token: String,
    /// The browser till's device token ([`DEVICE_SCOPES`]), minted with the admin token.
    #[serde(default)]
    pub device_token: String,
    admin_expires_at: Timestamp,
    /// A digest of the signing settings the admin token was minted with: another secret,
    /// issuer or audience mints a new one.
    signed_with: String,
}

/// How long the demo's back-office token is valid.
const ADMIN_TOKEN_TTL: SignedDuration = SignedDuration::from_hours(24);
/// A kept back-office token closer than this to its end is minted anew.
const ADMIN_TOKEN_MARGIN: SignedDuration = SignedDuration::from_hours(1);
/// Where the demo keeps the lines it printed, readable by the data directory's owner only.
const KEPT_SESSION_FILE: &str = "demo-session.json";

/// Writes the demo data on a data directory that does not hold it yet, sells the day so far on
/// the second till (once a day), and answers the demo till's session and a back-office token.
///
/// A restart on the same data directory changes nothing of the demo: the data is written once
/// (the regular customer last, so that their account says the rest is there), and the session and
/// token printed last time are printed again while they hold; only a session that was closed
/// or ran out, or a token near its end, is replaced.
///
/// The shop opens in the morning: the data is written then, and the day's sales follow it, each
/// at its own instant, through a use-case context whose clock the demo sets (a sale is committed
/// at its context's now, and priced with the catalog in force then).
pub async fn seed(state: &AppState, store: &Store, config: &Config) -> anyhow::Result<DemoSession> {
    let store_id = StoreId::parse(STORE)?;
    let day = ShopDay::of(state.now(), state.config().app.session_ttl)?;
    let clock = Arc::new(ManualClock::new(day.opening));
    let morning = App::new(
        Arc::new(store.clone()),
        state.config().app.clone(),
        clock.clone(),
        AppState::answers(),
    );
    let regular = CustomerId::parse(REGULAR_CUSTOMER)?;
    if store.loyalty_account(&regular).await?.is_none() {
        provision(&morning, store).await?;
    }
    state.promotions().refresh(store).await?;
    sell_the_day(&morning, store, &clock, &day).await?;
    let kept = read_kept_session(&config.data_dir);
    let session = demo_session(state, store, &store_id, kept.as_ref()).await?;
    let signed_with = signing_digest(config);
    let now = state.now();
    let admin = match kept {
        Some(kept)
            if kept.signed_with == signed_with
                && !kept.device_token.is_empty()
                && now
                    .checked_add(ADMIN_TOKEN_MARGIN)
                    .is_ok_and(|soon| soon < kept.admin_expires_at) =>
        {
            (kept.admin_token, kept.device_token, kept.admin_expires_at)
        }
        _ => {
            let secret = config.jwt_secret.as_deref().unwrap_or_default();
            let scopes = GrantSet::all().to_words();
            let ttl = std::time::Duration::try_from(ADMIN_TOKEN_TTL)?;
            let token = crate::token::mint(
                secret,
                &config.jwt_issuer,
                &config.jwt_audience,
                "demo-admin",
                &scopes,
                now,
                ttl,
            );
            let device = crate::token::mint(
                secret,
                &config.jwt_issuer,
                &config.jwt_audience,
                &format!("device-{WEB_REGISTER}"),
                DEVICE_SCOPES,
                now,
                ttl,
            );
            (token, device, now.checked_add(ADMIN_TOKEN_TTL)?)
        }
    };
    let (admin_token, device_token, admin_expires_at) = admin;
    let demo = DemoSession {
        session_id: session.session_id,
        token: session.token,
        admin_token,
        device_token,
        admin_expires_at,
        signed_with,
    };
    keep_session(&config.data_dir, &demo)?;
    Ok(demo)
}

/// The lines a previous start kept, if they can be read.
fn read_kept_session(data_dir: &Path) -> Option<DemoSession> {
    let text = std::fs::read_to_string(data_dir.join(KEPT_SESSION_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Keeps the printed lines for the next start, replacing the file whole.
fn keep_session(data_dir: &Path, demo: &DemoSession) -> anyhow::Result<()> {
    if read_kept_session(data_dir).as_ref() == Some(demo) {
        return Ok(());
    }
    let path = data_dir.join(KEPT_SESSION_FILE);
    let next = data_dir.join(format!("{KEPT_SESSION_FILE}.new"));
    let _ = std::fs::remove_file(&next);
    crate::server::write_private(&next, &serde_json::to_string(demo)?)?;
    std::fs::rename(&next, &path)?;
    Ok(())
}

/// Which signing settings a token is minted with, without keeping the secret itself.
fn signing_digest(config: &Config) -> String {
    use sha2::Digest;
    let mut digest = sha2::Sha256::new();
    for part in [
        config.jwt_secret.as_deref().unwrap_or_default(),
        &config.jwt_issuer,
        &config.jwt_audience,
    ] {
        digest.update(part.as_bytes());
        digest.update([0]);
    }
    digest.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The demo company's identity, printed on the first store's receipts.
fn demo_seller() -> anyhow::Result<SellerIdentity> {
    let country = CountryCode::parse("FR")?;
    Ok(SellerIdentity {
        legal_name: Some(LegalName::parse("Till Épicerie SAS")?),
        address: Some(PostalAddress {
            line1: AddressLine::parse("12 rue des Archives")?,
            line2: None,
            postal_code: PostalCode::parse("75004", &country)?,
            city: AddressLine::parse("Paris")?,
            country,
        }),
        siren: Some(Siren::parse("732829320")?),
        vat_number: Some(VatNumber::parse("FR44732829320")?),
    })
}

/// Writes the demo data at `app`'s now.
async fn provision(app: &App, store: &Store) -> anyhow::Result<()> {
    let now = app.now();
    let store_id = StoreId::parse(STORE)?;
    store
        .put_store(
            store_id.clone(),
            StoreProfile {
                name: "Till Épicerie — Le Marais".to_owned(),
                timezone: Timezone::default_zone(),
                currency: Currency::default_currency(),
                siret: Siret::parse("73282932000074"),
                seller: demo_seller()?,
            },
            now,
        )
        .await?;
    let items = ARTICLES
        .iter()
        .map(|(name, price, vat)| CatalogItem {
            sku_id: sku_id(name),
            name: (*name).to_owned(),
            price: Cents::new(*price).expect("demo price"),
            vat_rate: VatRate::from_hundredths(*vat).expect("demo VAT rate"),
        })
        .collect::<Vec<_>>();
    let writes = items
        .iter()
        .enumerate()
        .map(|(index, item)| CatalogWrite {
            item: item.clone(),
            starts: now,
            barcodes: Some(vec![barcode(index)]),
        })
        .collect();
    store.write_catalog(writes, now).await?;
    store
        .put_store(
            StoreId::parse(SECOND_STORE)?,
            StoreProfile {
                name: "Till Épicerie — Presqu'île".to_owned(),
                timezone: Timezone::default_zone(),
                currency: Currency::default_currency(),
                siret: None,
                seller: SellerIdentity::default(),
            },
            now,
        )
        .await?;
    for item in &items {
        store.put_stock(store_id.clone(), item.sku_id.clone(), 40, now).await?;
    }
    let people = [
        (
            CASHIER,
            "Camille Martin",
            Role::Cashier,
            CASHIER_PIN,
            DiscountLimit {
                percent: bps(500),
                amount: cents(500),
            },
        ),
        (
            MANAGER,
            "Mathis Bernard",
            Role::Manager,
            MANAGER_PIN,
            DiscountLimit {
                percent: bps(3_000),
                amount: cents(5_000),
            },
        ),
    ];
    for (subject, name, role, pin, limit) in people {
        let pin = Pin::parse(pin).expect("demo PIN");
        let pin_hash = tokio::task::spawn_blocking(move || hash_pin(&pin)).await?;
        let member = StaffMember {
            display_name: name.to_owned(),
            role,
            permissions: GrantSet::EMPTY,
            discount_limit: Some(limit),
        };
        store
            .put_staff(
                PutStaff {
                    subject: Subject::parse(subject)?,
                    member,
                    pin_hash: Some(pin_hash),
                },
                now,
            )
            .await?;
    }
    store
        .put_coupon(
            CouponCode::parse("BIENVENUE10")?,
            Coupon {
                reward: CouponReward::Percent(bps(1_000)),
                min_basket: cents(2_000),
                valid_from: None,
                valid_until: None,
                max_redemptions: None,
                active: true,
            },
            now,
        )
        .await?;
    // Three baguettes for the price of two, all year.
    let baguettes = vec![sku_id("Baguette tradition")];
    let year = |text: &str| text.parse::<jiff::Timestamp>().map_err(anyhow::Error::from);
    let promotion = PromotionRule {
        id: PromotionId::parse("baguettes-3-pour-2")?,
        name: "3 baguettes pour le prix de 2".to_owned(),
        valid_from: year("2026-01-01T00:00:00Z")?,
        valid_until: year("2099-12-31T23:59:59Z")?,
        priority: 0,
        exclusive: false,
        store_ids: None,
        customer_groups: None,
        active: true,
        mechanics: Mechanics::Bogo {
            buy: BuySide {
                product_ids: baguettes.clone().into(),
                quantity: 2,
            },
            get: GetSide {
                product_ids: baguettes.into(),
                quantity: 1,
                percent_bps: Bps::FULL,
            },
            max_applications: None,
        },
    };
    store.upsert_promotion(promotion, now).await?;
    app.promotions().refresh(store).await?;
    // Issued and enrolled at the first start only: later starts keep what was spent since.
    let card = NewCard {
        code: InstrumentCode::parse(GIFT_CARD).expect("the demo's card code"),
        balance: cents(GIFT_CARD_CENTS),
        expires_at: None,
        store_ids: vec![store_id.clone()],
        now,
    };
    match store.issue_gift_card(card).await {
        Ok(_) | Err(StoreError::Conflict(Conflict::GiftCardExists)) => {}
        Err(other) => return Err(other.into()),
    }
    // Last: its enrollment says the rest is there, so a start that stopped half-way writes
    // everything again.
    store
        .enroll_customer(Enrollment {
            customer_id: CustomerId::parse(REGULAR_CUSTOMER)?,
            points: REGULAR_CUSTOMER_POINTS,
            now,
        })
        .await?;
    for (customer, profile) in customer_profiles() {
        // Written once: a later start keeps what the back office changed since.
        let known = store.get_customer(&customer).await?;
        if known.is_some_and(|known| known.profile.display_name.is_some()) {
            continue;
        }
        let consent = Some(Consent {
            marketing_email: false,
            marketing_sms: false,
            e_receipt: profile.email.is_some(),
        });
        let put = PutCustomer {
            customer_id: customer,
            profile,
            consent,
            source: ConsentSource::Console,
        };
        store.put_customer(put, now).await?;
    }
    Ok(())
}

/// The demo's customers in the directory: the regular one, found at the counter by the phone
/// number the README searches for, and the one the README's first sale names.
fn customer_profiles() -> [(CustomerId, Profile); 2] {
    let profile = |name: &str, email: &str, phone: &str, postal_code: &str, groups: &[&str]| Profile {
        display_name: Some(name.to_owned()),
        email: Email::parse(email),
        phone: Phone::parse(phone),
        postal_code: Some(postal_code.to_owned()),
        birth_date: None,
        groups: groups.iter().map(|group| group.to_string()).collect(),
        notes: None,
    };
    [
        (
            CustomerId::from_trusted(REGULAR_CUSTOMER.to_owned()),
            profile(
                "Hélène Martin",
                "helene.martin@example.fr",
                "06 12 34 56 78",
                "75004",
                &["fidelite"],
            ),
        ),
        (
            CustomerId::from_trusted("client-42".to_owned()),
            profile(
                "Louis Bernard",
                "louis.bernard@example.fr",
                "07 98 76 54 32",
                "75003",
                &[],
            ),
        ),
    ]
}

/// The demo till's session and its token: the one a previous start printed while it is open,
/// else a new one.
struct TillSession {
    session_id: String,
    token: String,
}

async fn demo_session(
    state: &AppState,
    store: &Store,
    store_id: &StoreId,
    kept: Option<&DemoSession>,
) -> anyhow::Result<TillSession> {
    if let Some(kept) = kept {
        let found = store.session_by_token(&token_hash(&kept.token)).await?;
        let still_open = found.is_some_and(|principal| {
            principal.session.session_id.as_str() == kept.session_id && principal.session.is_open_at(state.now())
        });
        if still_open {
            return Ok(TillSession {
                session_id: kept.session_id.clone(),
                token: kept.token.clone(),
            });
        }
    }
    open_demo_session(state, store, store_id).await
}

async fn open_demo_session(state: &AppState, store: &Store, store_id: &StoreId) -> anyhow::Result<TillSession> {
    for _ in 0..2 {
        let token = new_token(SESSION_TOKEN_PREFIX);
        let now = state.now();
        let opened = store
            .open_session(OpenSession {
                session_id: SessionId::from_trusted(new_id("ses")),
                token_hash: token_hash(&token),
                store_id: store_id.clone(),
                register_id: RegisterId::parse(REGISTER)?,
                cashier_subject: Subject::parse(CASHIER)?,
                opening_float: cents(15_000),
                opened_at: now,
                expires_at: now.checked_add(state.config().app.session_ttl)?,
            })
            .await?;
        match opened {
            Ok(record) => {
                return Ok(TillSession {
                    session_id: record.session_id.into_string(),
                    token,
                });
            }
            // The previous demo run left its shift open: close it and start a new one.
            Err(OpenRefusal::AlreadyOpen(previous)) => {
                store.close_session(previous, now, Vec::new()).await?;
            }
            Err(other) => anyhow::bail!("cannot open the demo session: {other:?}"),
        }
    }
    anyhow::bail!("cannot open the demo session")
}

fn bps(value: i64) -> Bps {
    Bps::new(value).expect("demo rate")
}

fn cents(value: i64) -> Cents {
    Cents::new(value).expect("demo amount")
}
