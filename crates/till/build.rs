//! Which engines the black-box tests run on: `TILL_TEST_ENGINES`, both by default. The half of
//! a test whose engine is not part of the run is compiled as ignored, so that the run reports
//! it skipped rather than passed.

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
}
