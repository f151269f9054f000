//! Assembles the service from its configuration: the one path `till serve` and the tests take.

use crate::config::Config;
use anyhow::Context;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use till_api::auth::Authenticator;
use till_api::{AppState, Clock};
use till_store::{Engine, Store};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Connects, migrates and builds the shared state.
pub async fn prepare(config: &Config, clock: Arc<dyn Clock>) -> anyhow::Result<AppState> {
    let url = config.database_url();
    if Engine::from_url(&url)? == Engine::Sqlite && config.database_url.is_none() {
        std::fs::create_dir_all(&config.data_dir).with_context(|| {
            format!(
                "cannot create the data directory {}",
                config.data_dir.display()
            )
        })?;
    }
    let store = Store::connect(&url, &config.store_options())
        .await
        .with_context(|| format!("cannot open the database at {}", redact(&url)))?;
    store
        .migrate()
        .await
        .context("cannot migrate the database")?;
    let auth = Authenticator::new(config.jwt_settings());
    match auth.jwt().load_keys().await {
        Ok(0) => {}
        Ok(count) => tracing::info!(keys = count, "identity provider keys loaded"),
        Err(error) => {
            tracing::warn!(%error, "identity provider keys unavailable; will retry on first use")
        }
    }
    Ok(AppState::new(store, auth, config.api_config(), clock))
}

/// A server running in this process.
pub struct Running {
    pub addr: SocketAddr,
    pub state: AppState,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Running {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting, lets requests in flight finish, and waits.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        (&mut self.task).await.context("server task failed")??;
        self.state.store().close().await;
        Ok(())
    }
}

/// Binds `config.listen` and serves until [`Running::stop`].
pub async fn start(config: &Config, clock: Arc<dyn Clock>) -> anyhow::Result<Running> {
    let state = prepare(config, clock).await?;
    let listener = TcpListener::bind(&config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let addr = listener.local_addr()?;
    let (shutdown, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serve(listener, state.clone(), async {
        let _ = stopped.await;
    }));
    Ok(Running {
        addr,
        state,
        shutdown: Some(shutdown),
        task,
    })
}

/// Serves until `shutdown` resolves, then drains requests in flight.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, till_api::app(state))
        .with_graceful_shutdown(shutdown)
        .await
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
