//! `till serve` processes on one database: started, checked ready, killed without warning,
//! started again on the same port.

use anyhow::{Context, Result, bail};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

/// What every node of a cluster shares.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// The `till` binary.
    pub binary: PathBuf,
    pub database_url: String,
    pub jwt_secret: String,
    /// One signing key for all nodes, as a deployment would mount it.
    pub fiscal_key_file: PathBuf,
    /// Further `TILL_*` settings.
    pub env: Vec<(String, String)>,
    /// Each node's data directory and log live under it.
    pub work_dir: PathBuf,
}

/// One `till serve` process, on a port it keeps across restarts.
pub struct Node {
    index: usize,
    port: u16,
    config: NodeConfig,
    child: Option<Child>,
}

impl Node {
    pub fn new(index: usize, config: NodeConfig) -> Result<Node> {
        Ok(Node {
            index,
            port: free_port()?,
            config,
            child: None,
        })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// The process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// Starts the process and waits until `/readyz` answers 200.
    pub async fn start(&mut self) -> Result<()> {
        let dir = self.config.work_dir.join(format!("node-{}", self.index));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("till.log"))?;
        let mut command = Command::new(&self.config.binary);
        command
            .arg("serve")
            .arg("--listen")
            .arg(format!("127.0.0.1:{}", self.port));
        // Only what this cluster says: nothing leaks in from the caller's TILL_* variables.
        for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("TILL_")) {
            command.env_remove(name);
        }
        command
            .env("TILL_DATABASE_URL", &self.config.database_url)
            .env("TILL_DATA_DIR", &dir)
            .env("TILL_JWT_SECRET", &self.config.jwt_secret)
            .env("TILL_FISCAL_KEY_FILE", &self.config.fiscal_key_file)
            // TILL_LOAD_NODE_LOG, when set, is the nodes' log filter (to see the writer's batches).
            .env(
                "TILL_LOG",
                std::env::var("TILL_LOAD_NODE_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .envs(self.config.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .kill_on_drop(true);
        let child = command
            .spawn()
            .with_context(|| format!("starting {}", self.config.binary.display()))?;
        self.child = Some(child);
        self.wait_ready(Duration::from_secs(60)).await
    }

    async fn wait_ready(&mut self, limit: Duration) -> Result<()> {
        let http = super::client::http_client(Duration::from_secs(2))?;
        let deadline = Instant::now() + limit;
        loop {
            if let Some(child) = &mut self.child
                && let Some(status) = child.try_wait()?
            {
                self.child = None;
                bail!(
                    "node {} exited ({status}) while starting; see {}",
                    self.index,
                    self.log_path().display()
                );
            }
            let ready = http.get(format!("{}/readyz", self.url())).send().await;
            if ready.is_ok_and(|r| r.status().is_success()) {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("node {} not ready after {limit:?}", self.index);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// SIGKILL: no shutdown, no flush, nothing finishes; what the database acknowledged is
    /// all that remains.
    pub async fn kill(&mut self) -> Result<()> {
        if let Some(mut child) = self.child.take() {
            child.kill().await.context("killing a node")?;
        }
        Ok(())
    }

    pub fn log_path(&self) -> PathBuf {
        self.config
            .work_dir
            .join(format!("node-{}", self.index))
            .join("till.log")
    }
}

/// Several nodes on one database.
pub struct Cluster {
    pub nodes: Vec<Node>,
}

impl Cluster {
    /// Starts `count` nodes one after the other (the first brings the schema up to date).
    pub async fn start(config: NodeConfig, count: usize) -> Result<Cluster> {
        let mut nodes = Vec::with_capacity(count);
        for index in 0..count {
            let mut node = Node::new(index, config.clone())?;
            node.start().await?;
            nodes.push(node);
        }
        Ok(Cluster { nodes })
    }

    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(Node::url).collect()
    }

    pub async fn kill_all(&mut self) -> Result<()> {
        for node in &mut self.nodes {
            node.kill().await?;
        }
        Ok(())
    }
}

/// A port nothing listens on right now.
fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}
