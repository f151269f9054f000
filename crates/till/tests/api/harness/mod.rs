//! A real till server on 127.0.0.1:0 per test, on SQLite or PostgreSQL, and a small client.

mod mail_sink;
mod shop;

pub use mail_sink::{MailSink, free_port};

pub use shop::{BAGUETTE, BOOK, MUG, Shop, line};

use jiff::Timestamp;
use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use std::sync::Arc;
use till::config::Config;
use till::server::{self, Running};
use till_api::ManualClock;

pub const SECRET: &str = "test-secret-of-at-least-32-bytes-long!";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

impl Engine {
    /// Whether this engine is part of the run: both are by default; `TILL_TEST_ENGINES=sqlite`
    /// narrows a quick local run (read when the tests are built, see the crate's build.rs).
    pub fn enabled(self) -> bool {
        match self {
            Engine::Sqlite => !cfg!(till_test_without_sqlite),
            Engine::Postgres => !cfg!(till_test_without_postgres),
        }
    }
}

/// Runs each named `async fn(Engine)` as two tests, `name::sqlite` and `name::postgres`; the
/// half whose engine is not part of the run is reported ignored.
#[macro_export]
macro_rules! on_both_engines {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[cfg_attr(till_test_without_sqlite, ignore = "SQLite is not among TILL_TEST_ENGINES")]
                async fn sqlite() {
                    super::$name($crate::harness::Engine::Sqlite).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[cfg_attr(till_test_without_postgres, ignore = "PostgreSQL is not among TILL_TEST_ENGINES")]
                async fn postgres() {
                    super::$name($crate::harness::Engine::Postgres).await;
                }
            }
        )*
    };
}

pub struct TestServer {
    pub base: String,
    pub http: reqwest::Client,
    pub clock: Arc<ManualClock>,
    pub config: Config,
    running: Option<Running>,
    _dir: tempfile::TempDir,
}

impl TestServer {
    pub async fn start(engine: Engine) -> TestServer {
        TestServer::start_with(engine, |_| {}).await
    }

    /// Starts a server after `tweak` adjusts its configuration.
    pub async fn start_with(engine: Engine, tweak: impl FnOnce(&mut Config)) -> TestServer {
        TestServer::start_at(engine, Timestamp::now(), tweak).await
    }

    /// Starts a server whose clock reads `start`.
    pub async fn start_at(engine: Engine, start: Timestamp, tweak: impl FnOnce(&mut Config)) -> TestServer {
        let dir = tempfile::tempdir().expect("temporary directory");
        let mut config = Config {
            listen: "127.0.0.1:0".to_owned(),
            data_dir: dir.path().to_path_buf(),
            jwt_secret: Some(SECRET.to_owned()),
            db_max_connections: 6,
            sqlite_synchronous: till_store::SqliteSynchronous::Normal,
            ..Config::default()
        };
        if engine == Engine::Postgres {
            config.database_url = Some(fresh_postgres_database().await);
        }
        tweak(&mut config);
        let clock = Arc::new(ManualClock::new(start));
        let running = server::start(&config, clock.clone()).await.expect("server starts");
        TestServer {
            base: running.url(),
            http: reqwest::Client::new(),
            clock,
            config,
            running: Some(running),
            _dir: dir,
        }
    }

    /// The store the server's app was given: what a test reaches below the API.
    pub fn store(&self) -> &till_store::Store {
        &self.running.as_ref().expect("running").store
    }

    pub fn state(&self) -> &till_api::AppState {
        &self.running.as_ref().expect("running").state
    }

    /// Stops the server gracefully and starts it again on the same database and data
    /// directory, at a new address.
    pub async fn restart(&mut self) {
        if let Some(running) = self.running.take() {
            running.stop().await.expect("clean stop");
        }
        let running = server::start(&self.config, self.clock.clone())
            .await
            .expect("server starts again");
        self.base = running.url();
        self.running = Some(running);
    }

    /// Stops the server gracefully (requests in flight finish).
    pub async fn stop(mut self) {
        if let Some(running) = self.running.take() {
            running.stop().await.expect("clean stop");
        }
    }

    /// The server's clock.
    pub fn clock_now(&self) -> Timestamp {
        till_api::Clock::now(&*self.clock)
    }

    /// An HS256 access token for `subject` with space-separated `scope`.
    pub fn token(&self, subject: &str, scope: &str) -> String {
        till::token::mint(
            SECRET,
            &self.config.jwt_issuer,
            &self.config.jwt_audience,
            subject,
            scope,
            Timestamp::now(),
            std::time::Duration::from_secs(3600),
        )
    }

    /// A token holding every scope and permission.
    pub fn admin(&self) -> String {
        self.token("admin", &till_core::grant::GrantSet::all().to_words())
    }

    pub async fn get(&self, path: &str, token: &str) -> Reply {
        self.call(Method::GET, path, Some(token), None).await
    }

    pub async fn put(&self, path: &str, token: &str, body: Value) -> Reply {
        self.call(Method::PUT, path, Some(token), Some(body)).await
    }

    pub async fn post(&self, path: &str, token: &str, body: Value) -> Reply {
        self.call(Method::POST, path, Some(token), Some(body)).await
    }

    pub async fn call(&self, method: Method, path: &str, token: Option<&str>, body: Option<Value>) -> Reply {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        Reply::read(request.send().await.expect("request sent")).await
    }

    /// Sends a request built by the caller, for headers and bodies `call` cannot express.
    pub async fn send(&self, build: impl FnOnce(&reqwest::Client, String) -> reqwest::RequestBuilder) -> Reply {
        let request = build(&self.http, self.base.clone());
        Reply::read(request.send().await.expect("request sent")).await
    }

    /// Provisions a store named after its id.
    /// Runs the `till` binary on this server's database and data directory (its fiscal key):
    /// whether it succeeded, and what it printed on both outputs.
    pub fn run_till<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> (bool, String) {
        let output = till_command()
            .args(args)
            .env("TILL_DATABASE_URL", self.config.database_url())
            .env("TILL_DATA_DIR", &self.config.data_dir)
            .env("TILL_LOG", "error")
            .output()
            .expect("the till binary runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.success(), text)
    }

    pub async fn provision_store(&self, store: &str) {
        let reply = self
            .put(&format!("/v1/stores/{store}"), &self.admin(), json!({"name": store}))
            .await;
        assert!(reply.status == 201 || reply.status == 200, "store: {}", reply.text);
    }

    /// Provisions an article named `name`; returns its SKU id.
    pub async fn provision_sku(&self, name: &str, price_cents: i64, vat_rate: f64) -> String {
        let id = sku(name);
        let body = json!({"name": name, "priceCents": price_cents, "vatRate": vat_rate});
        let reply = self.put(&format!("/v1/catalog/skus/{id}"), &self.admin(), body).await;
        assert!(reply.status == 201 || reply.status == 200, "sku: {}", reply.text);
        id
    }

    pub async fn provision_staff(&self, subject: &str, role: &str, pin: &str) {
        let body = json!({"displayName": subject, "role": role, "pin": pin});
        let reply = self.put(&format!("/v1/staff/{subject}"), &self.admin(), body).await;
        assert!(reply.status == 201 || reply.status == 200, "staff: {}", reply.text);
    }

    /// Opens a session for `cashier` on `register`; returns (session id, token).
    pub async fn open_session(&self, store: &str, register: &str, cashier: &str, pin: &str) -> (String, String) {
        let body = json!({"storeId": store, "registerId": register, "cashierSubject": cashier, "pin": pin});
        let reply = self.post("/v1/register-sessions", &self.admin(), body).await;
        assert_eq!(reply.status, 201, "open session: {}", reply.text);
        (reply.str("sessionId"), reply.str("token"))
    }
}

impl TestServer {
    /// A connection of its own to the server's database.
    async fn database(&self) -> sqlx::AnyConnection {
        use sqlx::Connection;
        sqlx::any::install_default_drivers();
        sqlx::AnyConnection::connect(&self.config.database_url())
            .await
            .expect("connect to the server's database")
    }

    /// How many rows `table` holds.
    pub async fn count_rows(&self, table: &str) -> i64 {
        use sqlx::Connection;
        let mut conn = self.database().await;
        let count: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {table}")))
            .fetch_one(&mut conn)
            .await
            .expect("a count");
        let _ = conn.close().await;
        count
    }

    /// The tables of the server's database holding `value` anywhere in a row, as text.
    pub async fn tables_holding(&self, engine: Engine, value: &str) -> Vec<String> {
        use sqlx::Connection;
        let mut conn = self.database().await;
        let tables: Vec<String> = match engine {
            Engine::Sqlite => sqlx::query_scalar(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
            ),
            Engine::Postgres => sqlx::query_scalar(
                "SELECT table_name::text FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1",
            ),
        }
        .fetch_all(&mut conn)
        .await
        .expect("the tables");
        let pattern = format!("%{}%", value.replace('\'', "''"));
        let mut holding = Vec::new();
        for table in tables {
            let condition = match engine {
                Engine::Sqlite => {
                    let columns: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                        "SELECT name FROM pragma_table_info('{table}')"
                    )))
                    .fetch_all(&mut conn)
                    .await
                    .expect("the columns");
                    columns
                        .iter()
                        .map(|column| format!("CAST(\"{column}\" AS TEXT) LIKE '{pattern}'"))
                        .collect::<Vec<_>>()
                        .join(" OR ")
                }
                Engine::Postgres => format!("t::text LIKE '{pattern}'"),
            };
            let count: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                "SELECT count(*) FROM \"{table}\" t WHERE {condition}"
            )))
            .fetch_one(&mut conn)
            .await
            .expect("a count");
            if count > 0 {
                holding.push(table);
            }
        }
        let _ = conn.close().await;
        holding
    }

    /// Runs one statement straight on the server's database, leaving every trigger in place;
    /// the database's refusal, if any.
    pub async fn run_sql(&self, statement: &str) -> Result<(), String> {
        use sqlx::{Connection, Executor};
        let mut conn = self.database().await;
        let outcome = conn
            .execute(sqlx::AssertSqlSafe(statement.to_owned()))
            .await
            .map(drop)
            .map_err(|error| error.to_string());
        let _ = conn.close().await;
        outcome
    }

    /// Changes `from` into `to` in a sale's packed document, as someone with database access
    /// and the packing code could.
    pub async fn edit_sale_document(&self, transaction: &str, from: &str, to: &str) {
        let mut conn = self.database().await;
        let packed: Vec<u8> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT packed FROM sales WHERE transaction_id = '{transaction}'"
        )))
        .fetch_one(&mut conn)
        .await
        .expect("a packed sale");
        let texts = till_store::packed::unpack(&packed).expect("the sale unpacks");
        assert!(texts.detail.contains(from), "{}", texts.detail);
        let edited = till_store::packed::pack(&texts.response, &texts.detail.replace(from, to)).expect("packs");
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE sales SET packed = $1 WHERE transaction_id = '{transaction}'"
        )))
        .bind(edited)
        .execute(&mut conn)
        .await
        .expect("edit the sale");
        let _ = sqlx::Connection::close(conn).await;
    }

    /// Runs `statements` straight on the server's database, as someone with database access
    /// would, after lifting the append-only triggers of the journal.
    pub async fn tamper(&self, engine: Engine, statements: &[&str]) {
        use sqlx::{Connection, Executor};
        let mut conn = self.database().await;
        let unlock = match engine {
            Engine::Sqlite => {
                "PRAGMA busy_timeout = 5000; \
                 DROP TRIGGER IF EXISTS fiscal_entries_no_update; DROP TRIGGER IF EXISTS fiscal_entries_no_delete; \
                 DROP TRIGGER IF EXISTS fiscal_closures_no_update; DROP TRIGGER IF EXISTS fiscal_closures_no_delete; \
                 DROP TRIGGER IF EXISTS technical_events_no_update; DROP TRIGGER IF EXISTS technical_events_no_delete;"
            }
            Engine::Postgres => {
                "ALTER TABLE fiscal_entries DISABLE TRIGGER USER; \
                 ALTER TABLE fiscal_closures DISABLE TRIGGER USER; ALTER TABLE technical_events DISABLE TRIGGER USER;"
            }
        };
        conn.execute(unlock).await.expect("lift the triggers");
        for statement in statements {
            conn.execute(sqlx::AssertSqlSafe(statement.to_string()))
                .await
                .expect("tamper");
        }
        let _ = conn.close().await;
    }
}

/// A 64-hex SKU id derived from a name.
pub fn sku(name: &str) -> String {
    till::demo::sku_id(name).as_str().to_owned()
}

pub async fn fresh_postgres_database() -> String {
    use sqlx::Connection;
    let admin_url = std::env::var("TILL_TEST_POSTGRES_URL").expect(
        "TILL_TEST_POSTGRES_URL is not set: run scripts/test (it starts a throwaway PostgreSQL), \
         or set TILL_TEST_ENGINES=sqlite for a SQLite-only run",
    );
    let name = format!(
        "till_test_{}",
        till_api::auth::secret::new_id("db")
            .replace(['-', '_'], "")
            .to_lowercase()
    );
    let mut admin = sqlx::PgConnection::connect(&admin_url)
        .await
        .expect("connect to the test PostgreSQL");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .expect("create a test database");
    let _ = admin.close().await;
    match admin_url.rfind('/') {
        Some(slash) => format!("{}/{name}", &admin_url[..slash]),
        None => panic!("TILL_TEST_POSTGRES_URL must end in /DATABASE"),
    }
}

/// A response, read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub text: String,
    pub body: Value,
}

impl Reply {
    async fn read(response: reqwest::Response) -> Reply {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.expect("body read");
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply {
            status,
            headers,
            text,
            body,
        }
    }

    pub fn str(&self, key: &str) -> String {
        self.body[key]
            .as_str()
            .unwrap_or_else(|| panic!("{key} missing from {}", self.text))
            .to_owned()
    }

    /// Asserts the exact error envelope: status, code, and nothing but the documented keys.
    pub fn assert_error(&self, status: u16, code: &str) -> &Reply {
        assert_eq!(self.status, status, "status of {}", self.text);
        let content_type = self
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        assert!(
            content_type.starts_with("application/json"),
            "content type {content_type}"
        );
        let error = self.body["error"]
            .as_object()
            .unwrap_or_else(|| panic!("no envelope: {}", self.text));
        assert_eq!(
            self.body.as_object().map(|o| o.len()),
            Some(1),
            "only `error` at top: {}",
            self.text
        );
        assert_eq!(error["code"], json!(code), "code of {}", self.text);
        assert_eq!(error["statusCode"], json!(status), "statusCode of {}", self.text);
        assert!(
            error["message"].as_str().is_some_and(|m| !m.is_empty()),
            "message of {}",
            self.text
        );
        let allowed = ["code", "message", "statusCode", "fieldErrors"];
        assert!(
            error.keys().all(|k| allowed.contains(&k.as_str())),
            "extra keys in {}",
            self.text
        );
        assert_eq!(
            error.contains_key("fieldErrors"),
            code == "VALIDATION_FAILED",
            "fieldErrors in {}",
            self.text
        );
        self
    }

    /// The (field, message) pairs of a VALIDATION_FAILED answer.
    pub fn field_errors(&self) -> Vec<(String, String)> {
        self.body["error"]["fieldErrors"]
            .as_array()
            .unwrap_or_else(|| panic!("no fieldErrors in {}", self.text))
            .iter()
            .map(|e| {
                (
                    e["field"].as_str().unwrap().to_owned(),
                    e["message"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    /// The field paths of a VALIDATION_FAILED answer.
    pub fn fields(&self) -> Vec<String> {
        self.field_errors().into_iter().map(|(field, _)| field).collect()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // A test that panicked never called stop(); the runtime ends its tasks anyway.
        self.running.take();
    }
}

/// The `till` binary without the caller's `TILL_*` variables (this suite's own among them),
/// which a node refuses when they name no setting: each test sets what it means.
pub fn till_command() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_till"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("TILL_") {
            command.env_remove(name);
        }
    }
    command
}

/// What zbarimg (Debian's zbar-tools) reads in an image, PNG or SVG as `file_name`'s
/// extension says.
pub fn read_qr_code(file_name: &str, image: impl AsRef<[u8]>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file_name);
    std::fs::write(&path, image).unwrap();
    let read = std::process::Command::new("zbarimg")
        .args(["--quiet", "--raw"])
        .arg(&path)
        .output()
        .expect("zbarimg (Debian's zbar-tools) reads QR codes");
    String::from_utf8_lossy(&read.stdout).trim().to_owned()
}
