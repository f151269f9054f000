//! Assembles the service from its configuration: the one path `till serve` and the tests take.

use crate::config::Config;
use crate::transport;
use anyhow::{Context, bail};
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use till_api::auth::Authenticator;
use till_api::delivery::Deliveries;
use till_api::{AppState, Clock};
use till_app::App;
use till_core::fiscal::FiscalKey;
use till_store::{Engine, EngineOf, Found, Store, StoreOptions};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The shared state the API serves from, and the store the app was given: the binary keeps it
/// for what only the binary does (demo data, the tools, closing the database at shutdown).
#[derive(Clone)]
pub struct Service {
    pub state: AppState,
    pub store: Store,
}

/// Connects, migrates, starts the database's background work (the SQLite checkpointer, the
/// PostgreSQL stock fold) and builds the shared state: the one place the store is wired into
/// the app.
pub async fn prepare(config: &Config, clock: Arc<dyn Clock>) -> anyhow::Result<Service> {
    let api = config.api_config().context("invalid configuration")?;
    let store = open_store(config).await?;
    let key = load_fiscal_key(config)?;
    tracing::info!(key_id = key.key_id(), "fiscal journal key ready");
    store
        .use_fiscal_key(key, clock.now())
        .await
        .context("cannot publish the fiscal key")?;
    let auth = Authenticator::new(config.jwt_settings());
    match auth.jwt().load_keys().await {
        Ok(0) => {}
        Ok(count) => tracing::info!(keys = count, "identity provider keys loaded"),
        Err(error) => {
            tracing::warn!(%error, "identity provider keys unavailable; will retry on first use")
        }
    }
    let app = App::new(Arc::new(store.clone()), api.app.clone(), clock, AppState::answers());
    let state = AppState::new(app, auth, api);
    // The state put the process's metrics recorder in place: the store's metrics get their
    // help text from it.
    till_store::metrics::describe();
    Ok(Service { state, store })
}

/// Connects, migrates and starts the database's background work, as the service and the
/// tools that write much (`till catalog import`) need it.
pub async fn open_store(config: &Config) -> anyhow::Result<Store> {
    open_store_with(config, config.store_options()).await
}

/// As [`open_store`], with `options` rather than the configuration's.
pub async fn open_store_with(config: &Config, options: StoreOptions) -> anyhow::Result<Store> {
    let url = config.database_url();
    if Engine::from_url(&url)? == Engine::Sqlite && config.database_url.is_none() {
        create_data_dir(&config.data_dir)?;
    }
    let store = Store::connect(&url, &options)
        .await
        .with_context(|| format!("cannot open the database at {}", redact(&url)))?;
    store.migrate().await.context("cannot migrate the database")?;
    store
        .start_maintenance()
        .context("cannot start the database's background work")?;
    Ok(store)
}

/// Where the key sealing the journal is: `fiscal_key_file` if set, else `fiscal-key.pem` in
/// the data directory; and whether it is generated there when absent.
fn fiscal_key_path(config: &Config) -> (PathBuf, bool) {
    match &config.fiscal_key_file {
        Some(path) => (path.clone(), false),
        None => (config.data_dir.join("fiscal-key.pem"), true),
    }
}

fn parse_fiscal_key(pem: &str, path: &Path) -> anyhow::Result<FiscalKey> {
    FiscalKey::from_pkcs8_pem(pem).with_context(|| format!("{} is not a P-256 key", path.display()))
}

/// The key sealing the journal (see [`fiscal_key_path`]), generated (readable by the owner
/// only) the first time.
pub fn load_fiscal_key(config: &Config) -> anyhow::Result<FiscalKey> {
    let (path, generate) = fiscal_key_path(config);
    match std::fs::read_to_string(&path) {
        Ok(pem) => parse_fiscal_key(&pem, &path),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound && generate => {
            let key = loop {
                let mut secret = [0u8; 32];
                getrandom::fill(&mut secret).map_err(|e| anyhow::anyhow!("random generator failed: {e}"))?;
                // Almost every 32-byte string is a valid scalar; draw again if not.
                if let Ok(key) = FiscalKey::from_secret_bytes(&secret) {
                    break key;
                }
            };
            create_data_dir(&config.data_dir)?;
            write_private(&path, &key.to_pkcs8_pem())?;
            tracing::info!(path = %path.display(), "generated a fiscal signing key");
            Ok(key)
        }
        Err(error) => Err(error).with_context(|| format!("cannot read the fiscal key {}", path.display())),
    }
}

/// The key sealing the journal as it is, for the tools that read: never generated. `Err`
/// names the path where it was looked for.
pub fn existing_fiscal_key(config: &Config) -> anyhow::Result<FiscalKey> {
    let (path, _) = fiscal_key_path(config);
    match std::fs::read_to_string(&path) {
        Ok(pem) => parse_fiscal_key(&pem, &path),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Err(anyhow::anyhow!(
            "there is no fiscal key at {} (TILL_FISCAL_KEY_FILE, else fiscal-key.pem in the data directory)",
            path.display()
        )),
        Err(error) => Err(error).with_context(|| format!("cannot read the fiscal key {}", path.display())),
    }
}

/// The database as it is, for the tools that read it (`till fiscal verify`, `till fiscal
/// bundle`): no data directory, no database file, no table and no migration is made. Where no
/// till database is, the answer says so and names the place.
pub async fn open_existing_store(config: &Config) -> anyhow::Result<Store> {
    let url = config.database_url();
    let shown = redact(&url);
    let found = Store::inspect(&url)
        .await
        .with_context(|| format!("cannot open the database at {shown}"))?;
    match found {
        Found::NoFile(path) => bail!(
            "there is no till database at {}: run this where till's data directory is, or name the \
             database with --data-dir or --database-url (TILL_DATA_DIR, TILL_DATABASE_URL)",
            path.display()
        ),
        Found::NotTill => bail!("the database at {shown} is not a till database"),
        Found::Behind => bail!("the database at {shown} was made by an older till; run `till migrate` first"),
        Found::Current => {}
    }
    Store::connect(&url, &config.store_options())
        .await
        .with_context(|| format!("cannot open the database at {shown}"))
}

/// Creates the data directory (and its missing parents) open to the service's user alone: it
/// holds the database, the fiscal key and the demo's token secret. One that already exists
/// is left as the operator set it, with a warning when others may read it.
pub fn create_data_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .with_context(|| format!("cannot create the data directory {}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir)?.permissions().mode();
        if mode & 0o077 != 0 {
            tracing::warn!(
                dir = %dir.display(),
                mode = format!("{:o}", mode & 0o777),
                "the data directory is open to other users; `chmod 700` it"
            );
        }
    }
    Ok(())
}

/// Creates `path` with `contents`, readable by its owner only; refuses to overwrite.
pub fn write_private(path: &std::path::Path, contents: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(contents.as_bytes())?;
    file.sync_all()?;
    Ok(())
}

/// A server running in this process.
pub struct Running {
    pub addr: SocketAddr,
    pub state: AppState,
    pub store: Store,
    scheme: &'static str,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Running {
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// Stops accepting, lets requests in flight finish, and waits.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        (&mut self.task).await.context("server task failed")??;
        self.store.close().await;
        Ok(())
    }
}

/// Binds `config.listen` and serves until [`Running::stop`].
pub async fn start(config: &Config, clock: Arc<dyn Clock>) -> anyhow::Result<Running> {
    let transport = transport(config).await?;
    let Service { state, store } = prepare(config, clock).await?;
    let listener = TcpListener::bind(&config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let addr = listener.local_addr()?;
    let scheme = transport.scheme();
    let (shutdown, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serve(listener, state.clone(), transport, async {
        let _ = stopped.await;
    }));
    Ok(Running {
        addr,
        state,
        store,
        scheme,
        shutdown: Some(shutdown),
        task,
    })
}

/// The transport the configuration asks for, its certificate loaded: every mistake in it is
/// an error here, before the database is touched.
pub async fn transport(config: &Config) -> anyhow::Result<transport::Server> {
    let settings = config.transport().context("invalid configuration")?;
    transport::Server::new(settings).await
}

/// Serves until `shutdown` resolves, then drains requests in flight. This node delivers
/// webhooks and e-receipts meanwhile, and stops once the requests are drained.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    transport: transport::Server,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let deliveries = Deliveries::start(&state);
    let jobs = till_api::jobs::Jobs::start(&state);
    let mailer = till_api::mailer::Mailer::start(&state);
    let app = till_api::app(state);
    // Over TLS the console's cookie is marked Secure.
    let app = if transport.scheme() == "https" {
        app.layer(axum::Extension(till_api::console::SecureCookies))
    } else {
        app
    };
    let origins = &transport.settings().cors_origins;
    let app = if origins.is_empty() {
        app
    } else {
        app.layer(till_api::cors(origins.clone()))
    };
    let served = transport.serve(listener, app, shutdown).await;
    deliveries.stop().await;
    jobs.stop().await;
    if let Some(mailer) = mailer {
        mailer.stop().await;
    }
    served
}

/// The URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn redact_hides_the_password_only() {
        assert_eq!(
            super::redact("postgres://till:s3cret@db:5432/till"),
            "postgres://till:***@db:5432/till"
        );
        assert_eq!(
            super::redact("sqlite://./till-data/till.db"),
            "sqlite://./till-data/till.db"
        );
    }
}
