//! Which engines the black-box tests run on: `TILL_TEST_ENGINES`, both by default. The half of
//! a test whose engine is not part of the run is compiled as ignored, so that the run reports
//! it skipped rather than passed.
//!
//! And the commit the binary is built from, for `till --version` and the metrics' build info:
//! `TILL_BUILD_COMMIT` where the build has no Git checkout (a container's build context), else
//! what Git says of the checkout, else `unknown`.

use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=TILL_TEST_ENGINES");
    println!("cargo::rustc-check-cfg=cfg(till_test_without_sqlite, till_test_without_postgres)");
    let wanted = std::env::var("TILL_TEST_ENGINES").unwrap_or_else(|_| "sqlite,postgres".to_owned());
    for engine in ["sqlite", "postgres"] {
        if !wanted.split(',').any(|name| name.trim() == engine) {
            println!("cargo::rustc-cfg=till_test_without_{engine}");
        }
    }
    println!("cargo::rerun-if-env-changed=TILL_BUILD_COMMIT");
    let commit = std::env::var("TILL_BUILD_COMMIT")
        .ok()
        .filter(|commit| !commit.trim().is_empty())
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo::rustc-env=BUILT_FROM_COMMIT={}", commit.trim());
}

/// The checked-out commit, abbreviated; the build runs again when it moves.
fn git_commit() -> Option<String> {
    let git = |args: &[&str]| {
        let output = Command::new("git").args(args).output().ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    };
    let head = git(&["rev-parse", "--git-path", "HEAD"])?;
    println!("cargo::rerun-if-changed={head}");
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        println!(
            "cargo::rerun-if-changed={}",
            git(&["rev-parse", "--git-path", &branch])?
        );
        println!(
            "cargo::rerun-if-changed={}",
            git(&["rev-parse", "--git-path", "packed-refs"])?
        );
    }
    git(&["rev-parse", "--short=12", "HEAD"])
}
