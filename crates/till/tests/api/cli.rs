//! The `till` command as an operator runs it: what it says of itself, how it refuses a
//! configuration it does not understand, and how a first token is had.

use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

/// The `till` binary with none of the caller's `TILL_*` variables, logging errors only.
fn till(args: &[&str]) -> Command {
    let mut command = crate::harness::till_command();
    command.args(args).env("TILL_LOG", "error");
    command
}

fn run(command: &mut Command) -> (bool, String, String) {
    let output = command.output().expect("the till binary runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_version_names_the_commit_it_was_built_from() {
    let (ok, printed, _) = run(&mut till(&["--version"]));
    assert!(ok);
    let commit = printed
        .trim()
        .strip_prefix(concat!("till ", env!("CARGO_PKG_VERSION"), " (commit "))
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{printed}"));
    let checkout = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|output| output.status.success());
    match checkout {
        Some(output) => assert_eq!(commit, String::from_utf8_lossy(&output.stdout).trim()),
        None => assert!(!commit.is_empty(), "{printed}"),
    }
}

#[test]
fn a_misspelled_key_in_the_file_stops_the_start_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("till.toml");
    std::fs::write(&file, "log_formt = \"json\"\n").unwrap();
    let (ok, _, said) = run(till(&["migrate"])
        .arg("--config")
        .arg(&file)
        .arg("--data-dir")
        .arg(dir.path()));
    assert!(!ok, "started with an unknown key");
    assert!(said.contains("unknown key `log_formt`"), "{said}");
    assert!(!dir.path().join("till.db").exists(), "nothing was created");

    // The same misspelling in the environment, beside a setting and one of the demo's variables.
    let (ok, _, said) = run(till(&["migrate"])
        .arg("--data-dir")
        .arg(dir.path())
        .env("TILL_LOG_FORMT", "json")
        .env("TILL_LISTEN", "127.0.0.1:9")
        .env("TILL_TOKEN", "a-token-pasted-from-the-demo"));
    assert!(!ok, "started with an unknown variable");
    assert!(said.contains("unknown environment variable TILL_LOG_FORMT"), "{said}");
    assert!(!said.contains("a-token-pasted-from-the-demo"), "{said}");
    assert!(!dir.path().join("till.db").exists(), "nothing was created");
    let (ok, _, said) = run(till(&["migrate"])
        .arg("--data-dir")
        .arg(dir.path())
        .env("TILL_TOKEN", "a-token-pasted-from-the-demo"));
    assert!(ok, "{said}");
}

fn claims(token: &str, secret: &str) -> Value {
    let mut validation = Validation::new(Algorithm::HS256);
    validation.set_audience(&["till"]);
    validation.set_issuer(&["till-dev"]);
    decode::<Value>(token.trim(), &DecodingKey::from_secret(secret.as_bytes()), &validation)
        .expect("signed with the data directory's secret")
        .claims
}

#[test]
fn till_token_signs_with_the_data_directorys_development_secret() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().to_str().unwrap();
    let args = [
        "token",
        "--data-dir",
        data_dir,
        "--sub",
        "ops",
        "--scope",
        "pos.sales.read",
    ];
    let (ok, _, said) = run(&mut till(&args));
    assert!(!ok, "minted a token without any secret");
    assert!(
        said.contains("TILL_JWT_SECRET") && said.contains("dev-jwt-secret"),
        "{said}"
    );

    let secret = "a-development-secret-long-enough-for-hs256";
    std::fs::write(dir.path().join("dev-jwt-secret"), format!("{secret}\n")).unwrap();
    let (ok, token, said) = run(&mut till(&args));
    assert!(ok, "{said}");
    let minted = claims(&token, secret);
    assert_eq!(minted["sub"], "ops");
    assert_eq!(minted["scope"], "pos.sales.read");

    // A secret set explicitly is the one used.
    let explicit = "another-secret-that-is-long-enough-for-hs256";
    let (ok, token, _) = run(till(&args).env("TILL_JWT_SECRET", explicit));
    assert!(ok);
    assert_eq!(claims(&token, explicit)["sub"], "ops");
}

/// A node started with no way to check a token says how to get one.
#[tokio::test]
async fn a_start_without_an_identity_provider_says_how_to_mint_a_first_token() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::from(till(&["serve", "--listen", "127.0.0.1:0"]))
        .arg("--data-dir")
        .arg(dir.path())
        .env("TILL_LOG", "warn")
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("till serve starts");
    let mut lines = BufReader::new(child.stderr.take().expect("its standard error")).lines();
    let hint = async {
        while let Some(line) = lines.next_line().await.expect("its log reads") {
            if line.contains("no identity provider") {
                return line;
            }
        }
        panic!("till stopped without saying it has no identity provider");
    };
    let line = tokio::time::timeout(Duration::from_secs(60), hint)
        .await
        .expect("said within a minute");
    assert!(line.contains("TILL_JWT_JWKS_URL"), "{line}");
    assert!(line.contains("till token --sub admin --scope"), "{line}");
    assert!(line.contains("pos.sales.finalize"), "{line}");
    assert_no_file_named(dir.path(), "dev-jwt-secret");
}

fn assert_no_file_named(dir: &Path, name: &str) {
    assert!(!dir.join(name).exists(), "{name} was made");
}

/// Every request leaves one line in the access log: its route's template, status, duration,
/// request id and the subject it acted as; never the token it carried.
#[tokio::test]
async fn every_request_leaves_one_access_log_line_without_its_token() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let secret = "an-access-log-secret-long-enough-for-hs256";
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let mut child = tokio::process::Command::from(till(&["serve"]))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .env("TILL_LOG", "warn,till::access=info")
        .env("TILL_LOG_FORMAT", "json")
        .env("TILL_JWT_SECRET", secret)
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("till serve starts");
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let ready = async {
        while http.get(format!("{base}/readyz")).send().await.is_err() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), ready)
        .await
        .expect("ready within a minute");
    let (_, token, _) =
        run(till(&["token", "--sub", "auditor-7", "--scope", "pos.sales.read"]).env("TILL_JWT_SECRET", secret));
    let token = token.trim().to_owned();
    let read = http
        .get(format!("{base}/v1/sales/txn-not-there"))
        .bearer_auth(&token)
        .header("x-request-id", "my-request-1")
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 404);
    assert_eq!(read.headers()["x-request-id"], "my-request-1");
    let refused = http
        .get(format!("{base}/v1/sales/txn-not-there"))
        .bearer_auth("not-a-token")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let generated = refused.headers()["x-request-id"].to_str().unwrap().to_owned();

    let mut lines = BufReader::new(child.stderr.take().expect("its standard error")).lines();
    let mut access = Vec::new();
    let collect = async {
        while access.len() < 2 {
            let line = lines.next_line().await.expect("its log reads").expect("a line");
            assert!(
                !line.contains(&token) && !line.contains("not-a-token"),
                "a token was logged: {line}"
            );
            assert!(
                !line.contains('\u{1b}'),
                "colour codes in a log that is not a terminal: {line}"
            );
            let entry: Value = serde_json::from_str(&line).expect("a JSON line");
            if entry["target"] == "till::access" && entry["route"] != "/readyz" {
                access.push(entry);
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), collect)
        .await
        .expect("logged within 30 s");
    assert_eq!(access[0]["method"], "GET");
    assert_eq!(access[0]["route"], "/v1/sales/{transactionId}");
    assert_eq!(access[0]["status"], 404);
    assert_eq!(access[0]["request_id"], "my-request-1");
    assert_eq!(access[0]["subject"], "auditor-7");
    assert!(access[0]["duration_ms"].as_f64().is_some_and(|ms| ms >= 0.0));
    assert_eq!(access[1]["status"], 401);
    assert_eq!(access[1]["request_id"], generated.as_str());
    assert_eq!(access[1]["subject"], "-");
}
