//! `till serve --demo` as a newcomer runs it, through the real binary: a restart on the same
//! data directory changes nothing of the demo and prints the same lines.

use crate::harness::{Engine, fresh_postgres_database};
use crate::on_both_engines;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A `till serve --demo` process and what it printed up to the end of its first sale command.
pub(crate) struct Demo {
    child: Child,
    printed: String,
}

impl Demo {
    async fn start(data_dir: &Path, database_url: Option<&str>, port: u16) -> Demo {
        Demo::start_logging(data_dir, database_url, port, None).await
    }

    /// Starts the demo; with `log`, it logs at debug level, as JSON lines, into that file.
    pub(crate) async fn start_logging(
        data_dir: &Path,
        database_url: Option<&str>,
        port: u16,
        log: Option<&Path>,
    ) -> Demo {
        let mut command = Command::from(crate::harness::till_command());
        command
            .args(["serve", "--demo", "--listen", &format!("127.0.0.1:{port}")])
            .arg("--data-dir")
            .arg(data_dir)
            .env("TILL_LOG", "error")
            .env_remove("TILL_JWT_SECRET")
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        if let Some(log) = log {
            let file = std::fs::File::create(log).expect("the log file");
            command
                .env("TILL_LOG", "debug")
                .env("TILL_LOG_FORMAT", "json")
                .stderr(Stdio::from(file));
        }
        if let Some(url) = database_url {
            command.env("TILL_DATABASE_URL", url);
        }
        let mut child = command.spawn().expect("till serve --demo starts");
        let mut lines = BufReader::new(child.stdout.take().expect("its standard output")).lines();
        // The last line the demo prints is the last line of its first sale command.
        let last = till::demo::first_sale_command()
            .lines()
            .last()
            .expect("a command")
            .to_owned();
        let mut printed = String::new();
        let read = async {
            while let Some(line) = lines.next_line().await.expect("the demo's output reads") {
                printed.push_str(&line);
                printed.push('\n');
                if line == last {
                    return;
                }
            }
            panic!("the demo stopped before printing its lines:\n{printed}");
        };
        tokio::time::timeout(Duration::from_secs(120), read)
            .await
            .expect("the demo is ready within two minutes");
        Demo { child, printed }
    }

    /// The value of `export NAME=...` in what the demo printed.
    pub(crate) fn export(&self, name: &str) -> String {
        let prefix = format!("export {name}=");
        self.printed
            .lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("{name} not printed:\n{}", self.printed))
            .to_owned()
    }

    /// Stops it as an operator does (SIGTERM) and waits for it to exit.
    pub(crate) async fn stop(mut self) {
        let pid = self.child.id().expect("running") as libc::pid_t;
        // SAFETY: kill sends a signal to a process this test started; no memory is touched.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        let status = tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .expect("stops within 30 s")
            .expect("exits");
        assert!(status.success(), "till exited with {status}");
    }
}

/// A port free at the time of asking, so that both starts print the same address.
pub(crate) fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

async fn get(base: &str, path: &str, token: &str) -> Value {
    let reply = reqwest::Client::new()
        .get(format!("{base}{path}"))
        .bearer_auth(token)
        .send()
        .await
        .expect("request sent");
    assert_eq!(reply.status(), 200, "{path}");
    reply.json().await.expect("JSON")
}

/// Every event of the feed, from its start.
async fn every_event(base: &str, token: &str) -> Vec<Value> {
    let mut events = Vec::new();
    let mut path = "/v1/events?limit=500".to_owned();
    loop {
        let page = get(base, &path, token).await;
        let batch = page["events"].as_array().expect("events").clone();
        if batch.is_empty() {
            return events;
        }
        events.extend(batch);
        path = format!(
            "/v1/events?limit=500&after={}",
            page["nextCursor"].as_str().expect("a cursor")
        );
    }
}

/// The README's first sale, sent with the session the demo printed.
pub(crate) async fn first_sale(base: &str, demo: &Demo) -> reqwest::Response {
    let command = till::demo::first_sale_command();
    let body = command
        .split("-d '")
        .nth(1)
        .and_then(|rest| rest.rsplit_once('\''))
        .map(|(json, _)| json.replace("'$TILL_SESSION'", &demo.export("TILL_SESSION")))
        .expect("the command has a body");
    reqwest::Client::new()
        .post(format!("{base}/v1/checkout/finalize"))
        .bearer_auth(demo.export("TILL_SESSION_TOKEN"))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("request sent")
}

async fn a_demo_restarted_on_its_data_dir_changes_nothing_and_prints_the_same_lines(engine: Engine) {
    // The server installs it when it runs in the test's process; here it runs beside it.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().expect("a data directory");
    let database = match engine {
        Engine::Sqlite => None,
        Engine::Postgres => Some(fresh_postgres_database().await),
    };
    let port = free_port();
    let first = Demo::start(dir.path(), database.as_deref(), port).await;
    let base = first.export("TILL");
    let admin = first.export("TILL_TOKEN");
    let sold = first_sale(&base, &first).await;
    assert_eq!(sold.status(), 201);
    let sold = sold.text().await.expect("the sale's answer");
    let mug = till::demo::sku_id("Mug en grès");
    let stock_path = format!("/v1/stores/{}/stock/{}", till::demo::STORE, mug.as_str());
    let movements_path = format!("{stock_path}/movements?limit=500");
    // On PostgreSQL the feed numbers events a moment after their commit: the sale's event,
    // the last one written, is waited for, so that the count below holds all of them.
    let mut feed = every_event(&base, &admin).await;
    for _ in 0..100 {
        if feed.iter().any(|event| event["type"] == "sale.completed") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        feed = every_event(&base, &admin).await;
    }
    let before = (
        feed,
        get(&base, &stock_path, &admin).await,
        get(&base, &movements_path, &admin).await,
    );
    let first_printed = first.printed.clone();
    first.stop().await;

    let second = Demo::start(dir.path(), database.as_deref(), port).await;
    assert_eq!(second.printed, first_printed, "a restart prints the same lines");
    let after = (
        every_event(&base, &admin).await,
        get(&base, &stock_path, &admin).await,
        get(&base, &movements_path, &admin).await,
    );
    assert_eq!(after.0.len(), before.0.len(), "a restart adds no event");
    assert_eq!(after, before, "a restart changes no stock and no event");
    // The printed first sale is the same sale: sent again, it replays.
    let again = first_sale(&base, &second).await;
    assert_eq!(again.status(), 201);
    assert_eq!(
        again.headers().get("x-idempotent-replay").map(|v| v.to_str().unwrap()),
        Some("true")
    );
    assert_eq!(again.text().await.expect("the replay's answer"), sold);
    second.stop().await;
}

on_both_engines!(a_demo_restarted_on_its_data_dir_changes_nothing_and_prints_the_same_lines);
