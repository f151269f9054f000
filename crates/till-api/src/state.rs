//! What every handler shares: the use cases' context (the store, the settings, the clock),
//! the authenticator and the HTTP layer's own settings.

use crate::auth::Authenticator;
use crate::routes::checkout::event::TicketAnswers;
use axum::Router;
use jiff::Timestamp;
use metrics_exporter_prometheus::PrometheusHandle;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use till_app::promotion_cache::PromotionCache;
use till_app::{Answers, App, Settings};
use till_core::exports::fec::FecAccounts;
use till_core::webhooks::RetryPolicy;

/// The settings the HTTP layer acts on; the binary fills them from its layered configuration.
#[derive(Clone, Debug)]
pub struct ApiConfig {
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// The use cases' settings.
    pub app: Settings,
    /// How the feed is delivered to webhook endpoints.
    pub webhooks: WebhookSettings,
    /// The mail server receipts are sent through; none: receipts are not sent by e-mail.
    pub mail: Option<MailSettings>,
    /// The accounts of the FEC export.
    pub fec: FecAccounts,
    /// When set, `/metrics` is read only with this bearer token.
    pub metrics_token: Option<String>,
    /// What `/metrics` says this node runs.
    pub build: Build,
    /// The console's language for a visitor who asks for none it speaks.
    pub console_language: crate::console::Language,
}

/// The release a node runs: its version and the commit it was built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Build {
    pub version: &'static str,
    pub commit: &'static str,
}

impl Default for ApiConfig {
    fn default() -> Self {
        ApiConfig {
            max_body_bytes: 4 * 1024 * 1024,
            app: Settings::default(),
            webhooks: WebhookSettings::default(),
            mail: None,
            fec: FecAccounts::default(),
            metrics_token: None,
            build: Build {
                version: env!("CARGO_PKG_VERSION"),
                commit: "unknown",
            },
            console_language: crate::console::Language::default(),
        }
    }
}

/// How webhook deliveries are made (docs/events.md).
/// The mail server e-receipts go through.
#[derive(Clone, PartialEq, Eq)]
pub struct MailSettings {
    /// `smtp://` or `smtps://`, with the user and password the server asks, if any.
    pub url: String,
    /// The sender: an address, or a name and an address (`Boutique <tickets@example.fr>`).
    pub from: String,
}

impl std::fmt::Debug for MailSettings {
    // The URL may hold a password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailSettings")
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookSettings {
    /// Whether an endpoint may be on a loopback, private or otherwise non-public address: for
    /// tests and closed networks only, since such a URL reaches inside the deployment.
    pub allow_private: bool,
    /// The longest a receiver has to answer a delivery.
    pub timeout: Duration,
    pub retry: RetryPolicy,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        WebhookSettings {
            allow_private: false,
            timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
        }
    }
}

#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    app: App,
    auth: Authenticator,
    config: ApiConfig,
    metrics: PrometheusHandle,
    /// How many receipts' public pages the node still answers now (`GET /r/{token}`).
    public_pages: governor::DefaultDirectRateLimiter,
    /// The service's router without its state (which would make a cycle), built on first use.
    service: OnceLock<Router<AppState>>,
}

impl AppState {
    /// The state of a service whose use cases run in `app`, made with [`AppState::answers`].
    pub fn new(app: App, auth: Authenticator, config: ApiConfig) -> AppState {
        AppState {
            inner: Arc::new(Inner {
                app,
                auth,
                config,
                metrics: crate::metrics::handle(),
                public_pages: crate::routes::receipt_links::limiter(),
                service: OnceLock::new(),
            }),
        }
    }

    /// The use cases' context.
    pub fn app(&self) -> &App {
        &self.inner.app
    }

    /// How finalize's answers are written before their commit: what [`App::new`] is given.
    pub fn answers() -> Arc<dyn Answers> {
        Arc::new(TicketAnswers)
    }

    pub fn auth(&self) -> &Authenticator {
        &self.inner.auth
    }

    pub fn config(&self) -> &ApiConfig {
        &self.inner.config
    }

    /// Now, to the microsecond: the precision every instant is stored with, so what a response
    /// says and what the database holds are the same instant.
    pub fn now(&self) -> Timestamp {
        self.inner.app.now()
    }

    pub fn promotions(&self) -> &PromotionCache {
        self.inner.app.promotions()
    }

    pub fn metrics(&self) -> &PrometheusHandle {
        &self.inner.metrics
    }

    pub fn public_pages(&self) -> &governor::DefaultDirectRateLimiter {
        &self.inner.public_pages
    }

    /// The whole service as one router over this state; an agent's tool calls go through it.
    pub fn service(&self) -> Router {
        self.inner
            .service
            .get_or_init(|| crate::service(self.config()))
            .clone()
            .with_state(self.clone())
    }
}
