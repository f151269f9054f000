//! The fiscal tools on the command line, through the real binary: they read only what is
//! there (no database or key made in the wrong folder), write a bundle into a folder of its
//! own and never through a link, and read a bundle or an archive by plain names, regular files
//! only, of a bounded size.

use crate::harness::Shop;
use crate::harness::{Engine, TestServer, fresh_postgres_database};
use crate::on_both_engines;
use serde_json::json;
use std::path::Path;
use std::process::Command;
use till_core::exports::bundle::{FORMAT, Manifest, ManifestFile, seal_manifest};
use till_core::fiscal::FiscalKey;

/// Runs the `till` binary in `dir`, with no configuration but `env`: its exit code (`None`
/// when a signal ended it) and everything it printed.
fn till_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut command = crate::harness::till_command();
    command.args(args).current_dir(dir).env("TILL_LOG", "error");
    for name in [
        "TILL_CONFIG",
        "TILL_DATABASE_URL",
        "TILL_DATA_DIR",
        "TILL_FISCAL_KEY_FILE",
    ] {
        command.env_remove(name);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("the till binary runs");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code(), printed)
}

/// Every entry under `dir`, recursively.
fn entries(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        found.push(path.display().to_string());
        if path.is_dir() {
            found.extend(entries(&path));
        }
    }
    found
}

/// Today in Paris (the stores' default zone), and the day after.
fn today_and_tomorrow() -> (String, String) {
    let today = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::get("Europe/Paris").unwrap())
        .date();
    (today.to_string(), today.tomorrow().unwrap().to_string())
}

/// `till fiscal verify` and `till fiscal bundle` where there is no till database: a sentence
/// naming the place, a failure, and nothing made (no data directory, no database, no key, no
/// table).
async fn a_tool_that_reads_makes_nothing_where_no_till_database_is(engine: Engine) {
    let home = tempfile::tempdir().unwrap();
    let (today, _) = today_and_tomorrow();
    let bundle = [
        "fiscal",
        "bundle",
        "--register",
        "r1",
        "--from",
        &today,
        "--to",
        &today,
        "--out",
        "audit",
    ];
    let postgres = match engine {
        Engine::Sqlite => None,
        Engine::Postgres => Some(fresh_postgres_database().await),
    };
    let env: Vec<(&str, &str)> = postgres.iter().map(|url| ("TILL_DATABASE_URL", url.as_str())).collect();
    for args in [
        &["fiscal", "verify"][..],
        &["fiscal", "verify", "--register", "r1"],
        &bundle,
    ] {
        let (code, printed) = till_in(home.path(), args, &env);
        assert_eq!(code, Some(1), "{args:?}: {printed}");
        let expected = match engine {
            Engine::Sqlite => "there is no till database at ./till-data/till.db",
            Engine::Postgres => "is not a till database",
        };
        assert!(printed.contains(expected), "{args:?}: {printed}");
        assert!(!printed.contains("no such table"), "{printed}");
        assert_eq!(entries(home.path()), Vec::<String>::new(), "{args:?} made files");
    }
    if let Some(url) = postgres {
        use sqlx::Connection;
        sqlx::any::install_default_drivers();
        let mut conn = sqlx::AnyConnection::connect(&url).await.unwrap();
        let tables: i64 =
            sqlx::query_scalar("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()")
                .fetch_one(&mut conn)
                .await
                .unwrap();
        assert_eq!(tables, 0, "the empty database was given tables");
        let _ = conn.close().await;
    }
}

/// Runs `till fiscal bundle` of r1's `from`..`to` into `out` on the server's database.
fn bundle(server: &TestServer, from: &str, to: &str, out: &Path) -> (bool, String) {
    server.run_till(&[
        "fiscal",
        "bundle",
        "--register",
        "r1",
        "--from",
        from,
        "--to",
        to,
        "--out",
        out.to_str().unwrap(),
    ])
}

/// A bundle ends today at the latest, goes into a new or empty folder, and is never written
/// through a link; until it is, no archive is sealed.
async fn a_bundle_refuses_a_future_period_and_a_folder_with_anything_in_it(engine: Engine) {
    let shop = Shop::open(engine).await;
    let server = &shop.server;
    let (today, tomorrow) = today_and_tomorrow();
    let dir = tempfile::tempdir().unwrap();

    let out = dir.path().join("audit");
    let (made, printed) = bundle(server, &today, &tomorrow, &out);
    assert!(!made, "{printed}");
    assert!(
        printed.contains(&format!("--to {tomorrow} is after today ({today} in Europe/Paris)")),
        "{printed}"
    );
    assert!(!out.exists(), "a refused bundle wrote {}", out.display());
    assert_eq!(server.count_rows("fiscal_archives").await, 0);

    // A folder with a link planted in it, to a file the bundle must not overwrite.
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let planted = dir.path().join("planted");
    std::fs::create_dir(&planted).unwrap();
    std::os::unix::fs::symlink(&victim, planted.join("archive.json")).unwrap();
    let (made, printed) = bundle(server, &today, &today, &planted);
    assert!(!made && printed.contains("already holds files"), "{printed}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    // `--out` itself a link to an empty folder.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&empty, &link).unwrap();
    let (made, printed) = bundle(server, &today, &today, &link);
    assert!(!made && printed.contains("is a symbolic link"), "{printed}");
    assert_eq!(entries(&empty), Vec::<String>::new());
    assert_eq!(server.count_rows("fiscal_archives").await, 0, "nothing sealed");

    // An empty folder takes the bundle.
    let (made, printed) = bundle(server, &today, &today, &empty);
    assert!(made, "{printed}");
    assert!(empty.join("manifest.json").is_file() && empty.join("archive.json").is_file());
    assert_eq!(server.count_rows("fiscal_archives").await, 1);
    shop.server.stop().await;
}

/// Runs `till fiscal verify-bundle DIR` (the bundle's own keys).
fn verify_bundle(dir: &Path) -> (Option<i32>, String) {
    let home = tempfile::tempdir().unwrap();
    till_in(home.path(), &["fiscal", "verify-bundle", dir.to_str().unwrap()], &[])
}

/// verify-bundle reads the folder's own regular files by plain names: a link or a pipe in
/// the folder, or a manifest naming a file outside it, is a failure said in a sentence,
/// without reading through or waiting.
async fn verify_bundle_reads_only_the_folders_own_files(engine: Engine) {
    let shop = Shop::open(engine).await;
    let (today, _) = today_and_tomorrow();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("audit");
    let (made, printed) = bundle(&shop.server, &today, &today, &out);
    assert!(made, "{printed}");
    shop.server.stop().await;
    let (code, printed) = verify_bundle(&out);
    assert_eq!(code, Some(0), "{printed}");

    // The same bytes, through a link.
    let copy = dir.path().join("e-reporting.json");
    std::fs::rename(out.join("e-reporting.json"), &copy).unwrap();
    std::os::unix::fs::symlink(&copy, out.join("e-reporting.json")).unwrap();
    let (code, printed) = verify_bundle(&out);
    assert_eq!(code, Some(1), "{printed}");
    assert!(
        printed.contains("FAILED: manifest: e-reporting.json is a symbolic link"),
        "{printed}"
    );
    std::fs::remove_file(out.join("e-reporting.json")).unwrap();
    std::fs::rename(&copy, out.join("e-reporting.json")).unwrap();

    // A pipe no one writes to: refused at once, not waited on.
    let archive = dir.path().join("archive.json");
    std::fs::rename(out.join("archive.json"), &archive).unwrap();
    let made = Command::new("mkfifo").arg(out.join("archive.json")).status().unwrap();
    assert!(made.success());
    let (code, printed) = verify_bundle(&out);
    assert_eq!(code, Some(1), "{printed}");
    assert!(printed.contains("archive.json is not a regular file"), "{printed}");

    // `verify-archive` on a device: refused, nothing read.
    let home = tempfile::tempdir().unwrap();
    let (code, printed) = till_in(home.path(), &["fiscal", "verify-archive", "/dev/zero"], &[]);
    assert_eq!(code, Some(1), "{printed}");
    assert!(printed.contains("/dev/zero: it is not a regular file"), "{printed}");

    // A manifest, signed with the key of its own key set, naming a file outside the folder.
    let forged = dir.path().join("forged");
    std::fs::create_dir(&forged).unwrap();
    std::fs::write(dir.path().join("secret.txt"), "not the bundle's").unwrap();
    let key = FiscalKey::from_secret_bytes(&[5; 32]).unwrap();
    std::fs::write(
        forged.join("keys.json"),
        json!({"keys": [key.public_jwk()]}).to_string(),
    )
    .unwrap();
    for name in ["../secret.txt", "/etc/hostname"] {
        let manifest = Manifest {
            format: FORMAT.to_owned(),
            register_id: "r1".to_owned(),
            period_from: today.clone(),
            period_to: today.clone(),
            fec_file: name.to_owned(),
            sales_account: "707".to_owned(),
            vat_account: "44571".to_owned(),
            files: vec![ManifestFile {
                name: name.to_owned(),
                sha256: "00".to_owned(),
            }],
        };
        std::fs::write(forged.join("manifest.json"), seal_manifest(&manifest, &key).unwrap()).unwrap();
        let (code, printed) = verify_bundle(&forged);
        assert_eq!(code, Some(1), "{printed}");
        assert!(
            printed.contains(&format!(
                "FAILED: manifest: the manifest names {name:?}, which is not a plain file name of the folder"
            )),
            "{printed}"
        );
        assert!(!printed.contains("does not match its SHA-256"), "{printed}");
    }
}

/// `till fiscal verify-receipt` checks a receipt's proof with the keys the checker saved, with
/// no database and no configuration: what it proves, or why not (exit 1).
#[test]
fn verify_receipt_says_what_a_proof_proves_and_refuses_a_changed_one() {
    use till_core::fiscal::proof::ProvenTicket;
    let dir = tempfile::tempdir().unwrap();
    let (signer, other) = (
        FiscalKey::from_secret_bytes(&[9; 32]).unwrap(),
        FiscalKey::from_secret_bytes(&[8; 32]).unwrap(),
    );
    for (file, key) in [("keys.json", &signer), ("other.json", &other)] {
        let set = json!({"keys": [key.public_jwk()]});
        std::fs::write(dir.path().join(file), set.to_string()).unwrap();
    }
    let ticket = ProvenTicket {
        register_id: "r1".into(),
        ticket_seq: 7,
        total_cents: 2900,
        issued_at: "2026-03-30T09:15:07Z".parse().unwrap(),
    };
    let proof = ticket.prove(&signer);
    let check = |text: &str, keys: &str| till_in(dir.path(), &["fiscal", "verify-receipt", text, "--keys", keys], &[]);
    let (code, printed) = check(&proof, "keys.json");
    assert_eq!(code, Some(0), "{printed}");
    assert!(
        printed.contains("ok: register r1 sealed ticket 7 of 2900 cents at 2026-03-30T09:15:07Z"),
        "{printed}"
    );
    for (text, keys, why) in [
        (
            proof.replacen(":2900:", ":29000:", 1),
            "keys.json",
            "signature does not verify",
        ),
        (proof.clone(), "other.json", "which the key set does not hold"),
        (
            "https://example.com/r/abc".to_owned(),
            "keys.json",
            "not a till receipt proof",
        ),
    ] {
        let (code, printed) = check(&text, keys);
        assert_eq!(code, Some(1), "{printed}");
        assert!(printed.contains("FAILED") && printed.contains(why), "{why}: {printed}");
    }
    assert!(
        entries(dir.path()).iter().all(|entry| entry.ends_with(".json")),
        "nothing written"
    );
}

on_both_engines!(
    a_tool_that_reads_makes_nothing_where_no_till_database_is,
    a_bundle_refuses_a_future_period_and_a_folder_with_anything_in_it,
    verify_bundle_reads_only_the_folders_own_files,
);
