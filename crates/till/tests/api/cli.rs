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
