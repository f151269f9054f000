//! Layered configuration: built-in defaults, then `till.toml` (or `--config`/`TILL_CONFIG`),
//! then `TILL_*` environment variables, then command-line flags.

use crate::transport;
use anyhow::{anyhow, bail};
use axum::http::{HeaderValue, Uri};
use figment::providers::{Env, Format, Serialized, Toml};
use figment::{Figment, Provider};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;
use till_api::auth::{JwksSource, JwtSettings};
use till_api::state::MailSettings;
use till_api::{ApiConfig, Settings, WebhookSettings};
use till_core::exports::fec::FecAccounts;
use till_core::sale::TenderMethod;
use till_core::webhooks::RetryPolicy;
use till_store::{SqliteSynchronous, StoreOptions};

/// What an operator can set, by the names they set it with: `listen` in the file is
/// `TILL_LISTEN` in the environment. The fields are grouped by the part of till that acts on
/// them; each part owns its defaults ([`Config::default`] reads them there) and each is handed
/// its own typed settings ([`Config::store_options`], [`Config::api_config`],
/// [`Config::transport`], [`Config::jwt_settings`]), which refuse a value that makes no sense
/// instead of quietly changing it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    // The node.
    /// Address to bind.
    pub listen: String,
    /// Where the embedded database and generated keys live.
    pub data_dir: PathBuf,
    /// PKCS#8 PEM ECDSA P-256 key signing the fiscal journal; generated into the data
    /// directory when absent.
    pub fiscal_key_file: Option<PathBuf>,
    /// `text` for people, `json` for a log collector.
    pub log_format: LogFormat,
    /// A tracing filter such as `info` or `till=debug,sqlx=warn`; the access log, a line per
    /// request, is the target `till::access` (`info,till::access=off` leaves it out).
    pub log: String,

    // The database (till-store's StoreOptions).
    /// `sqlite://PATH` or `postgres://...`; default: `till.db` in the data directory.
    pub database_url: Option<String>,
    /// `postgres://...` of a standby for the reads that may lag a moment (reports, search of
    /// the back office, exports); default: none, every read on the primary.
    pub database_read_url: Option<String>,
    /// Connections to the database a node holds at most.
    pub db_max_connections: u32,
    /// The longest a request waits for a free database connection.
    pub db_acquire_timeout_ms: u64,
    /// The longest one statement may run (PostgreSQL).
    pub db_statement_timeout_ms: u64,
    /// `full`: an acknowledged sale survives a power cut; `normal`: it survives a crash of till.
    pub sqlite_synchronous: SqliteSynchronous,
    /// At `full`, the SQLite writer writes a commit's log frames together (docs/performance.md);
    /// off, SQLite writes them one by one.
    pub sqlite_gathered_log: bool,
    /// The most a price written on another node takes to apply here.
    pub catalog_cache_seconds: u64,
    /// The most a session closed or a staff member changed on another node takes to apply to a
    /// till's requests here.
    pub session_cache_seconds: u64,

    // Selling (till-app's Settings).
    /// The gap allowed between the server's total and a till's `amountDue`.
    pub cash_rounding_tolerance_cents: i64,
    /// Loyalty points per whole currency unit paid (not with loyalty points).
    pub loyalty_points_per_unit: i64,
    /// Cents a loyalty point is worth when spent as a `loyalty` tender.
    pub loyalty_point_value_cents: i64,
    /// Tender methods whose balances another system keeps (a comma list, none by default):
    /// accepted unchecked, their `reference` recorded.
    #[serde(deserialize_with = "list::comma_separated")]
    pub external_tenders: Vec<String>,
    /// How long a credit note issued by a return may be spent.
    pub credit_note_validity_days: u64,
    /// How long a customer's profile is kept without any activity before the daily retention
    /// job erases it.
    pub customer_retention_days: u64,
    /// Whether a `card` tender must name its payment attempt (docs/payments.md).
    pub card_attempts_required: bool,
    /// Where customers reach this deployment (`https://receipts.example.com`): when set, a
    /// printed receipt carries a second QR code, its public page (docs/receipts.md).
    #[serde(deserialize_with = "text::optional")]
    pub public_url: Option<String>,
    /// How long an approved card payment waits for its sale before it is an orphan, from 1 to
    /// 86400 seconds.
    pub payment_orphan_seconds: u64,
    /// How long after it was rung a sale from a till that was offline can still be booked.
    pub max_sale_age_hours: u64,
    /// How far a sale's `issuedAt` may lie outside its session, before its opening or after
    /// its close: the till's clock and the server's differ a little.
    pub clock_skew_seconds: u64,
    /// Lifetime of a register session and its token.
    pub session_ttl_seconds: u64,
    /// Wrong PINs in a row before a staff member is locked out.
    pub pin_max_failures: u32,
    /// How long a lock-out lasts.
    pub pin_lockout_seconds: u64,
    /// Off: every elevation request gets ELEVATION_UNAVAILABLE.
    pub elevation_enabled: bool,
    /// Lifetime of a manager's approval.
    pub elevation_ttl_seconds: u64,
    /// Elevation attempts per manager per window before RATE_LIMITED.
    pub elevation_rate_limit: u32,
    /// The window `elevation_rate_limit` counts in.
    pub elevation_rate_window_seconds: u64,
    /// A manager whose grants were last written longer ago is refused with GRANTS_STALE.
    pub grants_max_age_seconds: u64,
    /// The most a promotion rule written on another node takes to apply here.
    pub promotion_cache_seconds: u64,

    // Webhooks (till-api's WebhookSettings).
    /// Lets webhook URLs lead to loopback, private and other non-public addresses: for tests
    /// and closed networks only, since such a URL reaches inside the deployment.
    pub webhook_allow_private: bool,
    /// The longest a webhook receiver has to answer a delivery.
    pub webhook_timeout_seconds: u64,
    /// The wait before a failed delivery is tried again the first time; it doubles after each
    /// further failure.
    pub webhook_retry_first_ms: u64,
    /// How long an endpoint is retried after its first failure in a row before it is disabled.
    pub webhook_retry_window_seconds: u64,

    // E-receipts (till-api's MailSettings, docs/receipts.md).
    /// The mail server receipts are sent through: `smtps://host:465` (TLS),
    /// `smtp://host:587?tls=required` (STARTTLS), `smtp://localhost:25` (a local relay, no
    /// TLS), with `user:password@` before the host when it asks. Unset: no e-receipts.
    #[serde(deserialize_with = "text::optional")]
    pub smtp_url: Option<String>,
    /// The sender of e-receipts: `tickets@example.fr` or `Boutique <tickets@example.fr>`.
    #[serde(deserialize_with = "text::optional")]
    pub smtp_from: Option<String>,
    /// The wait before an e-mail that failed in a way that may pass is tried again the first
    /// time; it doubles after each further failure.
    pub smtp_retry_first_ms: u64,
    /// How long after it was queued an e-mail is still tried before it is given up.
    pub smtp_retry_window_seconds: u64,

    // The FEC export (till-core's FecAccounts).
    /// Journal code of the sales entries.
    #[serde(deserialize_with = "text::required")]
    pub fec_journal_code: String,
    /// Journal label of the sales entries.
    #[serde(deserialize_with = "text::required")]
    pub fec_journal_label: String,
    /// Sales, net of VAT.
    #[serde(deserialize_with = "text::required")]
    pub fec_sales_account: String,
    /// VAT collected.
    #[serde(deserialize_with = "text::required")]
    pub fec_vat_account: String,
    /// `method=account` pairs, each over the default of its method; a comma list in the
    /// environment, a list or a comma list in the file.
    #[serde(deserialize_with = "list::comma_separated")]
    pub fec_tender_accounts: Vec<String>,
    /// Tender methods `fec_tender_accounts` does not name.
    #[serde(deserialize_with = "text::required")]
    pub fec_other_tender_account: String,
    /// What a tender gave over the amount due and the shop kept.
    #[serde(deserialize_with = "text::required")]
    pub fec_forfeited_account: String,
    /// `account=label` pairs, each over the French default of its account (the `CompteLib` of
    /// every line of that account); a comma list in the environment, a list or a comma list in
    /// the file.
    #[serde(deserialize_with = "list::comma_separated")]
    pub fec_account_labels: Vec<String>,

    // Identity (till-api's JwtSettings).
    /// HS256 shared secret for identity-provider tokens (development, tests).
    #[serde(deserialize_with = "text::optional")]
    pub jwt_secret: Option<String>,
    /// The identity provider's public keys (RS256/ES256), read over HTTPS.
    pub jwt_jwks_url: Option<String>,
    /// The identity provider's public keys, read from a file.
    pub jwt_jwks_file: Option<PathBuf>,
    /// The `iss` every token must carry.
    #[serde(deserialize_with = "text::required")]
    pub jwt_issuer: String,
    /// The `aud` every token must carry.
    #[serde(deserialize_with = "text::required")]
    pub jwt_audience: String,
    /// Clock skew tolerated on `exp` and `nbf`.
    pub jwt_leeway_seconds: u64,
    /// Shortest gap between two reads of the JWKS when unknown key ids arrive.
    pub jwt_jwks_min_refresh_seconds: u64,

    // HTTP (the transport's Settings, and till-api's body limit).
    /// The largest request body; past it, 413.
    pub max_body_bytes: usize,
    /// PEM certificate chain served over HTTPS, with `tls_key`; neither set: plain HTTP.
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of the certificate in `tls_cert`.
    pub tls_key: Option<PathBuf>,
    /// How often the certificate files are checked for a change (also on SIGHUP).
    pub tls_reload_seconds: u64,
    /// Origins (`scheme://host[:port]`) whose browser pages may call the API; a comma list in
    /// the environment, a list or a comma list in the file. None by default.
    #[serde(deserialize_with = "list::comma_separated")]
    pub cors_origins: Vec<String>,
    /// A request head (and, over HTTPS, the handshake before it) must arrive complete within
    /// this time of the connection opening or of its first byte.
    pub http_header_timeout_seconds: u64,
    /// A request body must arrive complete within this time once till waits for it (right
    /// after its head); past it, 408.
    pub http_body_timeout_seconds: u64,
    /// A kept-alive connection with no request under way is closed after this time.
    pub http_idle_timeout_seconds: u64,
    /// Connections served at once; past it, 503 with `Retry-After` (docs/deploy.md).
    pub max_connections: usize,
    /// When set, `/metrics` answers only a request carrying it as a bearer token.
    #[serde(deserialize_with = "text::optional")]
    pub metrics_token: Option<String>,

    // The console (till-api's console).
    /// `fr` or `en`: the console's language for a visitor who chose none with its switch and
    /// whose browser asks for neither.
    pub console_language: ConsoleLanguage,
}

/// The languages of the console, as the configuration names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConsoleLanguage {
    #[serde(alias = "FR")]
    Fr,
    #[serde(alias = "EN")]
    En,
}

impl From<till_api::console::Language> for ConsoleLanguage {
    fn from(language: till_api::console::Language) -> Self {
        match language {
            till_api::console::Language::French => ConsoleLanguage::Fr,
            till_api::console::Language::English => ConsoleLanguage::En,
        }
    }
}

impl From<ConsoleLanguage> for till_api::console::Language {
    fn from(language: ConsoleLanguage) -> Self {
        match language {
            ConsoleLanguage::Fr => till_api::console::Language::French,
            ConsoleLanguage::En => till_api::console::Language::English,
        }
    }
}

/// How the node writes its log lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[serde(alias = "TEXT")]
    Text,
    #[serde(alias = "JSON")]
    Json,
}

impl Default for Config {
    /// The node's own defaults here; every other one is read from the part that acts on it.
    fn default() -> Self {
        let store = StoreOptions::default();
        let api = ApiConfig::default();
        let app = api.app;
        let jwt = JwtSettings::default();
        let http = transport::Settings::default();
        Config {
            listen: "127.0.0.1:8080".to_owned(),
            data_dir: PathBuf::from("./till-data"),
            fiscal_key_file: None,
            log_format: LogFormat::Text,
            log: "info,sqlx=warn,rmcp=warn".to_owned(),

            database_url: None,
            database_read_url: None,
            db_max_connections: store.max_connections,
            db_acquire_timeout_ms: millis(store.acquire_timeout),
            db_statement_timeout_ms: millis(store.statement_timeout),
            sqlite_synchronous: store.sqlite_synchronous,
            sqlite_gathered_log: store.sqlite_gathered_log,
            catalog_cache_seconds: store.catalog_cache_ttl.as_secs(),
            session_cache_seconds: store.session_cache_ttl.as_secs(),

            cash_rounding_tolerance_cents: app.cash_rounding_tolerance_cents,
            loyalty_points_per_unit: app.loyalty_points_per_unit,
            loyalty_point_value_cents: app.loyalty_point_value_cents,
            external_tenders: app.external_tenders.iter().map(|m| m.as_str().to_owned()).collect(),
            credit_note_validity_days: app.credit_note_validity.as_secs() / DAY.as_secs(),
            customer_retention_days: app.customer_retention.as_secs() / DAY.as_secs(),
            card_attempts_required: app.card_attempts_required,
            public_url: app.public_url.clone(),
            payment_orphan_seconds: app.payment_orphan_window.duration().as_secs().unsigned_abs(),
            max_sale_age_hours: app.max_sale_age.as_secs() / 3600,
            clock_skew_seconds: app.clock_skew.as_secs(),
            session_ttl_seconds: app.session_ttl.as_secs(),
            pin_max_failures: app.pin_max_failures,
            pin_lockout_seconds: app.pin_lockout.as_secs(),
            elevation_enabled: app.elevation_enabled,
            elevation_ttl_seconds: app.elevation_ttl.as_secs(),
            elevation_rate_limit: app.elevation_rate_limit,
            elevation_rate_window_seconds: app.elevation_rate_window.as_secs(),
            grants_max_age_seconds: app.grants_max_age.as_secs(),
            promotion_cache_seconds: app.promotion_cache_ttl.as_secs(),

            webhook_allow_private: api.webhooks.allow_private,
            webhook_timeout_seconds: api.webhooks.timeout.as_secs(),
            webhook_retry_first_ms: millis(api.webhooks.retry.first_delay),
            webhook_retry_window_seconds: api.webhooks.retry.window.as_secs(),

            smtp_url: None,
            smtp_from: None,
            smtp_retry_first_ms: millis(app.mail_retry.first_delay),
            smtp_retry_window_seconds: app.mail_retry.window.as_secs(),

            fec_journal_code: api.fec.journal_code.clone(),
            fec_journal_label: api.fec.journal_label.clone(),
            fec_sales_account: api.fec.sales.clone(),
            fec_vat_account: api.fec.vat.clone(),
            fec_tender_accounts: api
                .fec
                .tenders
                .iter()
                .map(|(method, account)| format!("{method}={account}"))
                .collect(),
            fec_other_tender_account: api.fec.other_tenders.clone(),
            fec_forfeited_account: api.fec.forfeited.clone(),
            fec_account_labels: api
                .fec
                .labels
                .iter()
                .map(|(account, label)| format!("{account}={label}"))
                .collect(),

            jwt_secret: jwt.hs256_secret,
            jwt_jwks_url: None,
            jwt_jwks_file: None,
            jwt_issuer: jwt.issuer,
            jwt_audience: jwt.audience,
            jwt_leeway_seconds: jwt.leeway.as_secs(),
            jwt_jwks_min_refresh_seconds: jwt.jwks_min_refresh.as_secs(),

            max_body_bytes: api.max_body_bytes,
            tls_cert: None,
            tls_key: None,
            tls_reload_seconds: transport::TLS_CHECK_EVERY.as_secs(),
            cors_origins: Vec::new(),
            http_header_timeout_seconds: http.header_timeout.as_secs(),
            http_body_timeout_seconds: http.body_timeout.as_secs(),
            http_idle_timeout_seconds: http.idle_timeout.as_secs(),
            max_connections: http.max_connections,
            metrics_token: api.metrics_token,

            console_language: till_api::console::Language::default().into(),
        }
    }
}

/// Every key the configuration file may set: the names of [`Config`]'s fields.
pub fn known_keys() -> BTreeSet<String> {
    match serde_json::to_value(Config::default()) {
        Ok(serde_json::Value::Object(fields)) => fields.into_iter().map(|(key, _)| key).collect(),
        _ => BTreeSet::new(),
    }
}

/// A key of the file that till does not know (a misspelling, often) stops the start, naming
/// it, rather than leaving the setting meant at its default unnoticed. A missing file is none.
fn refuse_unknown_keys(file: &Path) -> Result<(), Box<figment::Error>> {
    let read = Toml::file(file).data().map_err(Box::new)?;
    let known = known_keys();
    let unknown: Vec<String> = read
        .values()
        .flat_map(|keys| keys.keys())
        .filter(|key| !known.contains(key.as_str()))
        .map(|key| format!("`{key}`"))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(Box::new(figment::Error::from(format!(
        "{}: unknown {} {} (till.example.toml lists every key)",
        file.display(),
        if unknown.len() == 1 { "key" } else { "keys" },
        unknown.join(", ")
    ))))
}

/// `TILL_*` names that are not settings and that till still knows: where the file is, the
/// token `till mcp` acts with, what a build names its commit with, and the variables the demo
/// prints for a shell's requests (they may still be set when that shell runs `till`).
const NOT_SETTINGS: [&str; 6] = [
    "TILL_CONFIG",
    "TILL_MCP_TOKEN",
    "TILL_BUILD_COMMIT",
    "TILL_TOKEN",
    "TILL_SESSION",
    "TILL_SESSION_TOKEN",
];

/// A `TILL_*` variable that names no setting (a misspelling, often) stops the start, naming
/// it, as an unknown key of the file does.
fn refuse_unknown_variables(names: impl Iterator<Item = std::ffi::OsString>) -> Result<(), Box<figment::Error>> {
    let known = known_keys();
    let mut unknown: Vec<String> = names
        .map(|name| name.to_string_lossy().into_owned())
        .filter(|name| name.starts_with("TILL_") && !NOT_SETTINGS.contains(&name.as_str()))
        .filter(|name| !known.contains(&name["TILL_".len()..].to_ascii_lowercase()))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    unknown.sort();
    Err(Box::new(figment::Error::from(format!(
        "unknown environment {} {}: no setting has that name (till.example.toml lists every key; \
         TILL_<KEY> sets it)",
        if unknown.len() == 1 { "variable" } else { "variables" },
        unknown.join(", ")
    ))))
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Values given on the command line; `None` leaves the lower layers' value.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Overrides {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listen: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_format: Option<String>,
}

impl Config {
    /// Reads every layer. `file` is the `--config` path; without it `TILL_CONFIG`, then
    /// `./till.toml` if it exists.
    pub fn load(file: Option<&Path>, overrides: &Overrides) -> Result<Config, Box<figment::Error>> {
        refuse_unknown_variables(std::env::vars_os().map(|(name, _)| name))?;
        Config::read(file, overrides)
    }

    /// The layers as [`Config::load`] reads them, once the environment's names are known.
    fn read(file: Option<&Path>, overrides: &Overrides) -> Result<Config, Box<figment::Error>> {
        let file = file
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("TILL_CONFIG").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("till.toml"));
        refuse_unknown_keys(&file)?;
        Figment::from(Serialized::defaults(Config::default()))
            .merge(Toml::file(file))
            .merge(Env::prefixed("TILL_").ignore(&["config"]))
            .merge(Serialized::defaults(overrides))
            .extract()
            .map_err(Box::new)
    }

    pub fn database_url(&self) -> String {
        self.database_url
            .clone()
            .unwrap_or_else(|| format!("sqlite://{}", self.data_dir.join("till.db").display()))
    }

    pub fn store_options(&self) -> StoreOptions {
        StoreOptions {
            max_connections: self.db_max_connections,
            acquire_timeout: Duration::from_millis(self.db_acquire_timeout_ms),
            statement_timeout: Duration::from_millis(self.db_statement_timeout_ms),
            sqlite_synchronous: self.sqlite_synchronous,
            catalog_cache_ttl: Duration::from_secs(self.catalog_cache_seconds),
            session_cache_ttl: Duration::from_secs(self.session_cache_seconds),
            sqlite_gathered_log: self.sqlite_gathered_log,
            read_url: self.database_read_url.clone(),
            ..StoreOptions::default()
        }
    }

    /// The HTTP layer's and the use cases' settings, or the first value that makes no sense.
    pub fn api_config(&self) -> anyhow::Result<ApiConfig> {
        let mail = mail_settings(self.smtp_url.as_deref(), self.smtp_from.as_deref())?;
        Ok(ApiConfig {
            max_body_bytes: self.max_body_bytes,
            app: Settings {
                cash_rounding_tolerance_cents: not_negative(
                    "cash_rounding_tolerance_cents",
                    self.cash_rounding_tolerance_cents,
                )?,
                session_ttl: Duration::from_secs(self.session_ttl_seconds),
                elevation_ttl: Duration::from_secs(self.elevation_ttl_seconds),
                pin_max_failures: u32::try_from(at_least_one("pin_max_failures", self.pin_max_failures.into())?)?,
                pin_lockout: Duration::from_secs(self.pin_lockout_seconds),
                loyalty_points_per_unit: not_negative("loyalty_points_per_unit", self.loyalty_points_per_unit)?,
                loyalty_point_value_cents: i64::try_from(at_least_one(
                    "loyalty_point_value_cents",
                    u64::try_from(self.loyalty_point_value_cents).unwrap_or(0),
                )?)?,
                external_tenders: self
                    .external_tenders
                    .iter()
                    .map(|name| {
                        TenderMethod::parse(name)
                            .ok_or_else(|| anyhow!("TILL_EXTERNAL_TENDERS: {name} is not a tender method"))
                    })
                    .collect::<anyhow::Result<_>>()?,
                credit_note_validity: DAY
                    * u32::try_from(at_least_one(
                        "credit_note_validity_days",
                        self.credit_note_validity_days,
                    )?)?,
                customer_retention: DAY
                    * u32::try_from(at_least_one("customer_retention_days", self.customer_retention_days)?)?,
                card_attempts_required: self.card_attempts_required,
                public_url: self.public_url.as_deref().map(public_url).transpose()?,
                e_receipts: mail.is_some(),
                mail_retry: RetryPolicy {
                    first_delay: Duration::from_millis(at_least_one("smtp_retry_first_ms", self.smtp_retry_first_ms)?),
                    window: Duration::from_secs(at_least_one(
                        "smtp_retry_window_seconds",
                        self.smtp_retry_window_seconds,
                    )?),
                },
                payment_orphan_window: i64::try_from(self.payment_orphan_seconds)
                    .ok()
                    .and_then(till_core::payment::OrphanWindow::from_seconds)
                    .ok_or_else(|| anyhow::anyhow!("payment_orphan_seconds must be from 1 to 86400"))?,
                max_sale_age: Duration::from_secs(3600)
                    * u32::try_from(at_least_one("max_sale_age_hours", self.max_sale_age_hours)?)?,
                clock_skew: Duration::from_secs(self.clock_skew_seconds),
                elevation_enabled: self.elevation_enabled,
                elevation_rate_limit: u32::try_from(at_least_one(
                    "elevation_rate_limit",
                    self.elevation_rate_limit.into(),
                )?)?,
                elevation_rate_window: Duration::from_secs(at_least_one(
                    "elevation_rate_window_seconds",
                    self.elevation_rate_window_seconds,
                )?),
                promotion_cache_ttl: Duration::from_secs(self.promotion_cache_seconds),
                grants_max_age: Duration::from_secs(self.grants_max_age_seconds),
            },
            webhooks: WebhookSettings {
                allow_private: self.webhook_allow_private,
                timeout: Duration::from_secs(at_least_one("webhook_timeout_seconds", self.webhook_timeout_seconds)?),
                retry: RetryPolicy {
                    first_delay: Duration::from_millis(at_least_one(
                        "webhook_retry_first_ms",
                        self.webhook_retry_first_ms,
                    )?),
                    window: Duration::from_secs(at_least_one(
                        "webhook_retry_window_seconds",
                        self.webhook_retry_window_seconds,
                    )?),
                },
            },
            mail,
            fec: self.fec_accounts()?,
            metrics_token: self.metrics_token.as_deref().map(metrics_token).transpose()?,
            build: till_api::state::Build {
                version: env!("CARGO_PKG_VERSION"),
                commit: env!("BUILT_FROM_COMMIT"),
            },
            console_language: self.console_language.into(),
        })
    }

    /// The FEC's accounts: each tender method's over its default, every one writable in the
    /// file's columns.
    fn fec_accounts(&self) -> anyhow::Result<FecAccounts> {
        let mut tenders = FecAccounts::default().tenders;
        for pair in &self.fec_tender_accounts {
            let (method, account) = pair.split_once('=').ok_or_else(|| {
                anyhow!("TILL_FEC_TENDER_ACCOUNTS: `{pair}` is not method=account, such as card=5112")
            })?;
            let method = TenderMethod::parse(method.trim())
                .ok_or_else(|| anyhow!("TILL_FEC_TENDER_ACCOUNTS: {} is not a tender method", method.trim()))?;
            tenders.insert(method.as_str().to_owned(), account.trim().to_owned());
        }
        let mut labels = FecAccounts::default().labels;
        for pair in &self.fec_account_labels {
            let (account, label) = pair.split_once('=').ok_or_else(|| {
                anyhow!("TILL_FEC_ACCOUNT_LABELS: `{pair}` is not account=label, such as 5112=Cartes bancaires")
            })?;
            labels.insert(account.trim().to_owned(), label.trim().to_owned());
        }
        let accounts = FecAccounts {
            journal_code: self.fec_journal_code.clone(),
            journal_label: self.fec_journal_label.clone(),
            sales: self.fec_sales_account.clone(),
            vat: self.fec_vat_account.clone(),
            tenders,
            other_tenders: self.fec_other_tender_account.clone(),
            forfeited: self.fec_forfeited_account.clone(),
            labels,
        };
        accounts.check().map_err(|bad| match bad.setting.split_once(' ') {
            Some((setting, method)) => anyhow!("TILL_FEC_{}: {method} {}", setting.to_ascii_uppercase(), bad.reason),
            None => anyhow!("TILL_FEC_{} {}", bad.setting.to_ascii_uppercase(), bad.reason),
        })?;
        Ok(accounts)
    }

    /// The HTTP transport's settings, or what is wrong with them.
    pub fn transport(&self) -> anyhow::Result<transport::Settings> {
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(transport::TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
                check_every: Duration::from_secs(at_least_one("tls_reload_seconds", self.tls_reload_seconds)?),
            }),
            (None, None) => None,
            (Some(_), None) => bail!("TILL_TLS_CERT is set without TILL_TLS_KEY: set both to serve HTTPS, or neither"),
            (None, Some(_)) => bail!("TILL_TLS_KEY is set without TILL_TLS_CERT: set both to serve HTTPS, or neither"),
        };
        let cors_origins = self
            .cors_origins
            .iter()
            .map(|origin| cors_origin(origin))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let seconds = |name, value| at_least_one(name, value).map(Duration::from_secs);
        if self.max_connections == 0 {
            bail!("TILL_MAX_CONNECTIONS must be at least 1");
        }
        Ok(transport::Settings {
            tls,
            cors_origins,
            header_timeout: seconds("http_header_timeout_seconds", self.http_header_timeout_seconds)?,
            body_timeout: seconds("http_body_timeout_seconds", self.http_body_timeout_seconds)?,
            idle_timeout: seconds("http_idle_timeout_seconds", self.http_idle_timeout_seconds)?,
            max_connections: self.max_connections,
            max_body_bytes: self.max_body_bytes,
        })
    }

    pub fn jwt_settings(&self) -> JwtSettings {
        let jwks = match (&self.jwt_jwks_url, &self.jwt_jwks_file) {
            (Some(url), _) => Some(JwksSource::Url(url.clone())),
            (None, Some(path)) => Some(JwksSource::File(path.clone())),
            (None, None) => None,
        };
        JwtSettings {
            hs256_secret: self.jwt_secret.clone(),
            jwks,
            issuer: self.jwt_issuer.clone(),
            audience: self.jwt_audience.clone(),
            leeway: Duration::from_secs(self.jwt_leeway_seconds),
            jwks_min_refresh: Duration::from_secs(self.jwt_jwks_min_refresh_seconds),
        }
    }
}

const DAY: Duration = Duration::from_secs(24 * 3600);

fn not_negative(name: &str, value: i64) -> anyhow::Result<i64> {
    if value < 0 {
        bail!("TILL_{} cannot be negative", name.to_ascii_uppercase());
    }
    Ok(value)
}

fn at_least_one(name: &str, value: u64) -> anyhow::Result<u64> {
    if value == 0 {
        bail!("TILL_{} must be at least 1", name.to_ascii_uppercase());
    }
    Ok(value)
}

/// `TILL_PUBLIC_URL`: an `http` or `https` address with a host and nothing after it but a
/// path, kept without its last `/`.
fn public_url(text: &str) -> anyhow::Result<String> {
    let uri: Uri = text
        .parse()
        .map_err(|_| anyhow!("TILL_PUBLIC_URL must be an address such as https://receipts.example.com"))?;
    let web = matches!(uri.scheme_str(), Some("http" | "https"));
    if !web || uri.host().is_none() || uri.query().is_some() {
        bail!("TILL_PUBLIC_URL must be an http or https address with a host and no query");
    }
    Ok(text.trim_end_matches('/').to_owned())
}

/// `TILL_SMTP_URL` and `TILL_SMTP_FROM`: both or neither, each as the mailer reads it. The
/// URL is never repeated in an error: it may hold a password.
fn mail_settings(url: Option<&str>, from: Option<&str>) -> anyhow::Result<Option<MailSettings>> {
    let (url, from) = match (url, from) {
        (None, None) => return Ok(None),
        (Some(url), Some(from)) => (url, from),
        (Some(_), None) => bail!("TILL_SMTP_FROM must name the sender of e-receipts when TILL_SMTP_URL is set"),
        (None, Some(_)) => bail!("TILL_SMTP_FROM is set without TILL_SMTP_URL"),
    };
    if !(url.starts_with("smtp://") || url.starts_with("smtps://")) {
        bail!("TILL_SMTP_URL must start with smtp:// or smtps://");
    }
    let settings = MailSettings {
        url: url.to_owned(),
        from: from.to_owned(),
    };
    till_api::mailer::check(&settings).map_err(|error| anyhow!("{error}"))?;
    Ok(Some(settings))
}

/// `TILL_METRICS_TOKEN`: printable characters a bearer header carries as they are.
fn metrics_token(token: &str) -> anyhow::Result<String> {
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
        bail!("TILL_METRICS_TOKEN must be printable ASCII without spaces, and not empty");
    }
    Ok(token.to_owned())
}

/// One entry of `TILL_CORS_ORIGINS`: an exact origin as a browser sends it, never a wildcard.
fn cors_origin(text: &str) -> anyhow::Result<HeaderValue> {
    let text = text.trim();
    if text == "*" {
        bail!("TILL_CORS_ORIGINS: `*` is not accepted; list each origin that may call the API");
    }
    let malformed = || anyhow!("TILL_CORS_ORIGINS: `{text}` is not an origin such as https://till.example.com");
    let uri: Uri = text.parse().map_err(|_| malformed())?;
    let (Some(scheme @ ("http" | "https")), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err(malformed());
    };
    // Nothing but the scheme and the host (and port): no path, no user, no trailing slash.
    if authority.as_str().contains('@') || text != format!("{scheme}://{authority}") {
        return Err(malformed());
    }
    // Browsers send the scheme and host in lower case.
    HeaderValue::from_str(&text.to_ascii_lowercase()).map_err(|_| malformed())
}

/// A list given as one comma-separated text (the environment) or as a list (the file).
mod list {
    use serde::{Deserialize, Deserializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Items {
        Text(String),
        List(Vec<String>),
    }

    pub fn comma_separated<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
        let items = match Items::deserialize(deserializer)? {
            Items::Text(text) => text.split(',').map(str::to_owned).collect(),
            Items::List(items) => items,
        };
        Ok(items
            .into_iter()
            .map(|item| item.trim().to_owned())
            .filter(|item| !item.is_empty())
            .collect())
    }
}

/// Environment values are typed by guess (`TILL_JWT_SECRET=123456` reads as a number); these
/// accept any scalar for fields that are text.
mod text {
    use serde::{Deserialize, Deserializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Scalar {
        Text(String),
        Integer(i64),
        Float(f64),
        Flag(bool),
    }

    impl Scalar {
        fn into_string(self) -> String {
            match self {
                Scalar::Text(text) => text,
                Scalar::Integer(n) => n.to_string(),
                Scalar::Float(f) => f.to_string(),
                Scalar::Flag(b) => b.to_string(),
            }
        }
    }

    pub fn required<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
        Scalar::deserialize(deserializer).map(Scalar::into_string)
    }

    pub fn optional<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
        Option::<Scalar>::deserialize(deserializer).map(|value| value.map(Scalar::into_string))
    }
}

#[cfg(test)]
// figment's Jail closures return figment::Error by design.
#[allow(clippy::result_large_err)]
mod tests {
    use super::*;

    #[test]
    fn a_key_the_file_should_not_hold_stops_the_start_naming_it() {
        figment::Jail::expect_with(|jail| {
            jail.create_file(
                "till.toml",
                "log_formt = \"json\"\nlisten = \"127.0.0.1:9\"\n[server]\nport = 1\n",
            )?;
            let error = Config::read(None, &Overrides::default()).expect_err("unknown keys are refused");
            let text = error.to_string();
            assert!(text.contains("`log_formt`") && text.contains("`server`"), "{text}");
            assert!(!text.contains("`listen`"), "{text}");
            jail.create_file("till.toml", "log_format = \"json\"\n")?;
            assert_eq!(
                Config::read(None, &Overrides::default()).map_err(|e| *e)?.log_format,
                LogFormat::Json
            );
            Ok(())
        });
    }

    #[test]
    fn a_variable_that_names_no_setting_stops_the_start_naming_it() {
        let names = |list: &[&str]| {
            list.iter()
                .map(std::ffi::OsString::from)
                .collect::<Vec<_>>()
                .into_iter()
        };
        let error = refuse_unknown_variables(names(&["TILL_LOG_FORMT", "TILL_LISTEN", "PATH", "TILL_LISTN"]))
            .expect_err("misspellings are refused");
        let text = error.to_string();
        assert!(text.contains("TILL_LISTN, TILL_LOG_FORMT"), "{text}");
        assert!(!text.contains("TILL_LISTEN,"), "{text}");
        refuse_unknown_variables(names(&["TILL_LOG_FORMAT", "TILL_TOKEN", "TILL_CONFIG", "HOME"]))
            .expect("settings and the demo's variables are known");
    }

    /// `till.example.toml` states every key: set to its default, or commented out where it has
    /// none; read as a configuration file, it changes nothing.
    #[test]
    fn the_example_file_states_every_key_with_its_default() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../till.example.toml");
        let text = std::fs::read_to_string(&path).expect("till.example.toml at the repository's root");
        refuse_unknown_keys(&path).expect("every key of the example is known");
        let read: Config = Figment::from(Serialized::defaults(Config::default()))
            .merge(Toml::file(&path))
            .extract()
            .expect("the example reads");
        assert_eq!(
            serde_json::to_value(&read).unwrap(),
            serde_json::to_value(Config::default()).unwrap(),
            "the example sets each key to its default"
        );
        let defaults = serde_json::to_value(Config::default()).unwrap();
        let stated: BTreeSet<String> = text
            .lines()
            .filter_map(|line| line.trim_start_matches("# ").split_once(" = "))
            .map(|(key, _)| key.to_owned())
            .filter(|key| defaults.get(key).is_some())
            .collect();
        assert_eq!(stated, known_keys(), "every key is in the example");
        for line in text.lines().filter(|line| line.starts_with("# ")) {
            if let Some((key, _)) = line[2..].split_once(" = ") {
                assert!(defaults[key].is_null(), "{key} has a default: state it uncommented");
            }
        }
    }

    #[test]
    fn each_layer_overrides_the_one_below() {
        figment::Jail::expect_with(|jail| {
            jail.create_file(
                "till.toml",
                "listen = \"0.0.0.0:9000\"\njwt_audience = \"from-file\"\npin_max_failures = 3\n",
            )?;
            jail.set_env("TILL_JWT_AUDIENCE", "from-env");
            // Typed by guess as a number by the environment layer; it must stay text.
            jail.set_env("TILL_JWT_SECRET", "123456");
            let flags = Overrides {
                listen: Some("127.0.0.1:1".into()),
                ..Overrides::default()
            };
            let config = Config::read(None, &flags).expect("loads");
            assert_eq!(config.listen, "127.0.0.1:1", "a flag beats the file");
            assert_eq!(config.jwt_audience, "from-env", "the environment beats the file");
            assert_eq!(config.pin_max_failures, 3, "the file beats the default");
            assert_eq!(config.jwt_issuer, "till-dev", "defaults fill the rest");
            assert_eq!(config.jwt_secret.as_deref(), Some("123456"));
            assert_eq!(config.database_url(), "sqlite://./till-data/till.db");
            Ok(())
        });
    }

    #[test]
    fn every_default_is_the_one_of_the_part_that_acts_on_it() {
        let config = Config::default();
        let debug = |value: &dyn std::fmt::Debug| format!("{value:?}");
        assert_eq!(debug(&config.store_options()), debug(&StoreOptions::default()));
        let api = config.api_config().expect("the defaults hold");
        // The build is the binary's own, not a setting.
        assert_eq!(api.build.commit, env!("BUILT_FROM_COMMIT"));
        assert_eq!(
            debug(&ApiConfig {
                build: ApiConfig::default().build,
                ..api
            }),
            debug(&ApiConfig::default())
        );
        assert_eq!(debug(&config.jwt_settings()), debug(&JwtSettings::default()));
        assert_eq!(
            debug(&config.transport().expect("the defaults hold")),
            debug(&transport::Settings::default())
        );
    }

    #[test]
    fn a_value_that_makes_no_sense_is_refused_by_name_not_changed() {
        for (config, variable) in [
            (
                Config {
                    pin_max_failures: 0,
                    ..Config::default()
                },
                "TILL_PIN_MAX_FAILURES",
            ),
            (
                Config {
                    elevation_rate_limit: 0,
                    ..Config::default()
                },
                "TILL_ELEVATION_RATE_LIMIT",
            ),
            (
                Config {
                    elevation_rate_window_seconds: 0,
                    ..Config::default()
                },
                "TILL_ELEVATION_RATE_WINDOW_SECONDS",
            ),
            (
                Config {
                    loyalty_points_per_unit: -1,
                    ..Config::default()
                },
                "TILL_LOYALTY_POINTS_PER_UNIT",
            ),
            (
                Config {
                    loyalty_point_value_cents: 0,
                    ..Config::default()
                },
                "TILL_LOYALTY_POINT_VALUE_CENTS",
            ),
            (
                Config {
                    credit_note_validity_days: 0,
                    ..Config::default()
                },
                "TILL_CREDIT_NOTE_VALIDITY_DAYS",
            ),
            (
                Config {
                    external_tenders: vec!["voucher".into()],
                    ..Config::default()
                },
                "TILL_EXTERNAL_TENDERS",
            ),
            (
                Config {
                    cash_rounding_tolerance_cents: -5,
                    ..Config::default()
                },
                "TILL_CASH_ROUNDING_TOLERANCE_CENTS",
            ),
            (
                Config {
                    webhook_timeout_seconds: 0,
                    ..Config::default()
                },
                "TILL_WEBHOOK_TIMEOUT_SECONDS",
            ),
            (
                Config {
                    webhook_retry_first_ms: 0,
                    ..Config::default()
                },
                "TILL_WEBHOOK_RETRY_FIRST_MS",
            ),
            (
                Config {
                    webhook_retry_window_seconds: 0,
                    ..Config::default()
                },
                "TILL_WEBHOOK_RETRY_WINDOW_SECONDS",
            ),
            (
                Config {
                    fec_sales_account: String::new(),
                    ..Config::default()
                },
                "TILL_FEC_SALES_ACCOUNT",
            ),
            (
                Config {
                    fec_tender_accounts: vec!["card=51 12".to_owned()],
                    ..Config::default()
                },
                "TILL_FEC_TENDER_ACCOUNTS",
            ),
            (
                Config {
                    fec_tender_accounts: vec!["paypal=512".to_owned()],
                    ..Config::default()
                },
                "TILL_FEC_TENDER_ACCOUNTS",
            ),
            (
                Config {
                    metrics_token: Some(String::new()),
                    ..Config::default()
                },
                "TILL_METRICS_TOKEN",
            ),
            (
                Config {
                    metrics_token: Some("two words".to_owned()),
                    ..Config::default()
                },
                "TILL_METRICS_TOKEN",
            ),
        ] {
            let error = config.api_config().expect_err(variable);
            assert!(error.to_string().contains(variable), "{variable}: {error}");
        }
        figment::Jail::expect_with(|jail| {
            jail.set_env("TILL_SQLITE_SYNCHRONOUS", "NORMAL");
            jail.set_env("TILL_LOG_FORMAT", "json");
            let config = Config::read(None, &Overrides::default()).expect("loads");
            assert_eq!(config.store_options().sqlite_synchronous, SqliteSynchronous::Normal);
            assert_eq!(config.log_format, LogFormat::Json);
            // A mode that is not one is refused, not read as `full`.
            jail.set_env("TILL_SQLITE_SYNCHRONOUS", "off");
            let error = Config::read(None, &Overrides::default()).expect_err("not a mode");
            assert!(
                error.to_string().to_lowercase().contains("sqlite_synchronous"),
                "{error}"
            );
            jail.set_env("TILL_SQLITE_SYNCHRONOUS", "full");
            jail.set_env("TILL_LOG_FORMAT", "xml");
            let error = Config::read(None, &Overrides::default()).expect_err("not a format");
            assert!(error.to_string().to_lowercase().contains("log_format"), "{error}");
            Ok(())
        });
    }

    #[test]
    fn webhooks_go_to_public_addresses_unless_allowed() {
        let settings = Config::default().api_config().expect("the defaults hold").webhooks;
        assert!(!settings.allow_private);
        assert_eq!(settings.timeout, Duration::from_secs(10));
        assert_eq!(settings.retry.first_delay, Duration::from_secs(10));
        assert_eq!(settings.retry.window, Duration::from_secs(24 * 3600));
        figment::Jail::expect_with(|jail| {
            jail.set_env("TILL_WEBHOOK_ALLOW_PRIVATE", "true");
            let config = Config::read(None, &Overrides::default()).expect("loads");
            assert!(config.api_config().expect("valid").webhooks.allow_private);
            Ok(())
        });
    }

    #[test]
    fn the_gathered_log_is_on_unless_switched_off() {
        assert!(Config::default().store_options().sqlite_gathered_log);
        figment::Jail::expect_with(|jail| {
            jail.set_env("TILL_SQLITE_GATHERED_LOG", "false");
            let config = Config::read(None, &Overrides::default()).expect("loads");
            assert!(!config.store_options().sqlite_gathered_log);
            Ok(())
        });
    }

    #[test]
    fn the_transport_defaults_to_plain_http_without_cors() {
        let settings = Config::default().transport().expect("the defaults hold");
        assert!(settings.tls.is_none());
        assert!(settings.cors_origins.is_empty());
        assert_eq!(settings.header_timeout, Duration::from_secs(10));
        assert_eq!(settings.body_timeout, Duration::from_secs(60));
        assert_eq!(settings.idle_timeout, Duration::from_secs(75));
        assert_eq!(settings.max_connections, 512);
    }

    #[test]
    fn tls_takes_a_certificate_and_its_key_or_neither() {
        figment::Jail::expect_with(|jail| {
            jail.set_env("TILL_TLS_CERT", "/etc/till/cert.pem");
            let config = Config::read(None, &Overrides::default()).expect("loads");
            let error = config.transport().expect_err("a certificate without its key");
            assert!(
                error.to_string().contains("TILL_TLS_CERT is set without TILL_TLS_KEY"),
                "{error}"
            );
            jail.set_env("TILL_TLS_KEY", "/etc/till/key.pem");
            let config = Config::read(None, &Overrides::default()).expect("loads");
            let tls = config.transport().expect("both set").tls.expect("HTTPS");
            assert_eq!(tls.cert, Path::new("/etc/till/cert.pem"));
            assert_eq!(tls.key, Path::new("/etc/till/key.pem"));
            Ok(())
        });
        let key_alone = Config {
            tls_key: Some("key.pem".into()),
            ..Config::default()
        };
        assert!(key_alone.transport().is_err());
    }

    #[test]
    fn cors_origins_are_an_exact_list() {
        figment::Jail::expect_with(|jail| {
            jail.set_env("TILL_CORS_ORIGINS", "https://till.example.com, http://localhost:5173");
            let config = Config::read(None, &Overrides::default()).expect("loads");
            let origins = config.transport().expect("valid origins").cors_origins;
            assert_eq!(origins, ["https://till.example.com", "http://localhost:5173"]);
            jail.create_file("till.toml", "cors_origins = [\"https://Back.Example.com\"]\n")?;
            jail.clear_env();
            let config = Config::read(None, &Overrides::default()).expect("loads");
            assert_eq!(
                config.transport().expect("valid").cors_origins,
                ["https://back.example.com"]
            );
            Ok(())
        });
        for refused in [
            "*",
            "till.example.com",
            "https://till.example.com/",
            "https://till.example.com/app",
            "ftp://till.example.com",
            "https://user@till.example.com",
            "null",
        ] {
            let config = Config {
                cors_origins: vec!["https://fine.example.com".into(), refused.into()],
                ..Config::default()
            };
            let error = config.transport().expect_err(refused);
            assert!(
                error.to_string().starts_with("TILL_CORS_ORIGINS: "),
                "{refused}: {error}"
            );
        }
    }

    #[test]
    fn timeouts_and_the_connection_cap_cannot_be_zero() {
        let zero_header = Config {
            http_header_timeout_seconds: 0,
            ..Config::default()
        };
        let error = zero_header.transport().expect_err("zero");
        assert!(
            error.to_string().contains("TILL_HTTP_HEADER_TIMEOUT_SECONDS"),
            "{error}"
        );
        for config in [
            Config {
                http_body_timeout_seconds: 0,
                ..Config::default()
            },
            Config {
                http_idle_timeout_seconds: 0,
                ..Config::default()
            },
            Config {
                max_connections: 0,
                ..Config::default()
            },
        ] {
            assert!(config.transport().is_err());
        }
    }

    #[test]
    fn the_fec_accounts_are_french_by_default_and_each_method_can_be_moved() {
        figment::Jail::expect_with(|jail| {
            let fec = Config::read(None, &Overrides::default())
                .unwrap()
                .api_config()
                .unwrap()
                .fec;
            assert_eq!(
                (fec.sales.as_str(), fec.vat.as_str(), fec.journal_code.as_str()),
                ("707", "44571", "VE")
            );
            assert_eq!(
                (fec.tender("cash"), fec.tender("card"), fec.tender("cheque")),
                ("530", "5112", "511")
            );
            jail.set_env("TILL_FEC_TENDER_ACCOUNTS", "card=5115");
            jail.set_env("TILL_FEC_SALES_ACCOUNT", "7071");
            let fec = Config::read(None, &Overrides::default())
                .unwrap()
                .api_config()
                .unwrap()
                .fec;
            assert_eq!((fec.tender("card"), fec.tender("cash")), ("5115", "530"));
            assert_eq!(fec.sales, "7071");
            assert_eq!(
                (fec.label("5115"), fec.label("7071"), fec.label("530")),
                ("Cartes bancaires à encaisser", "Ventes de marchandises", "Caisse")
            );
            jail.set_env("TILL_FEC_ACCOUNT_LABELS", "5115=CB Paris, 530=Caisse centrale");
            let fec = Config::read(None, &Overrides::default())
                .unwrap()
                .api_config()
                .unwrap()
                .fec;
            assert_eq!((fec.label("5115"), fec.label("530")), ("CB Paris", "Caisse centrale"));
            assert_eq!(fec.label("44571"), "TVA collectée");
            jail.set_env("TILL_FEC_ACCOUNT_LABELS", "530=");
            let refused = Config::read(None, &Overrides::default())
                .unwrap()
                .api_config()
                .unwrap_err();
            assert!(
                refused.to_string().contains("TILL_FEC_ACCOUNT_LABELS: 530"),
                "{refused}"
            );
            Ok(())
        });
    }

    #[test]
    fn an_explicit_config_file_must_parse() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("other.toml", "pin_max_failures = \"many\"\n")?;
            assert!(Config::read(Some(Path::new("other.toml")), &Overrides::default()).is_err());
            Ok(())
        });
    }
}
