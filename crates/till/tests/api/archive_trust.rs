//! The offline archive verifier and the audit facing what an attacker controls: an archive
//! re-signed whole by a forger, checked against the keys the deployment publishes; broken and
//! hostile files through the real binary; thousands of mutated archives, none of which
//! panics, hangs or passes; damaged journal rows in the database.

use crate::harness::{Engine, TestServer};
use crate::harness::{Shop, line};
use crate::on_both_engines;
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, TestCaseError, TestRunner};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;
use till_core::canonical::to_canonical_string;
use till_core::fiscal::archive::{self, ArchiveDocument, ArchiveError, KeySet, MAX_FILE_BYTES, Trust, Verified};
use till_core::fiscal::payload;
use till_core::fiscal::{ChainKind, FiscalKey};

const MUG: (&str, i64, f64) = ("Mug", 1450, 20.0);
const BAGUETTE: (&str, i64, f64) = ("Baguette", 130, 5.5);
const BOOK: (&str, i64, f64) = ("Livre", 2490, 5.5);

/// An archive as an auditor receives it, and the key set the deployment publishes.
struct Evidence {
    archive: Vec<u8>,
    keys: Vec<u8>,
}

impl Evidence {
    fn trusted(&self) -> KeySet {
        KeySet::from_json(&self.keys).expect("the published keys are a JWK set")
    }

    /// The ids of the keys the deployment publishes.
    fn key_ids(&self) -> Vec<String> {
        let keys: Value = serde_json::from_slice(&self.keys).unwrap();
        keys["keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["kid"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// Today in the shop's time zone.
fn shop_today() -> jiff::civil::Date {
    jiff::Zoned::new(jiff::Timestamp::now(), jiff::tz::TimeZone::get("Europe/Paris").unwrap()).date()
}

/// A day of r1: three sales at two VAT rates, a receipt reprinted twice, the session's Z
/// report, the day closed; then the archive of yesterday and today, and the answer of
/// `GET /v1/fiscal/keys`.
async fn a_days_evidence(engine: Engine) -> (Shop, Evidence) {
    let shop = Shop::open(engine).await;
    let sales = [
        ("t1", vec![line("l1", MUG, 1), line("l2", BAGUETTE, 3)], 1450 + 3 * 130),
        ("t2", vec![line("l1", BOOK, 1)], 2490),
        ("t3", vec![line("l1", MUG, 2)], 2 * 1450),
    ];
    for (transaction, lines, total) in sales {
        let sold = shop.finalize(&shop.sale(transaction, lines, total)).await;
        assert_eq!(sold.status, 201, "{}", sold.text);
    }
    for _ in 0..3 {
        let printed = shop.server.post("/v1/sales/t1/prints", &shop.till, json!({})).await;
        assert_eq!(printed.status, 201, "{}", printed.text);
    }
    let session = format!("/v1/register-sessions/{}/close", shop.session);
    let closed = shop.server.post(&session, &shop.server.admin(), json!({})).await;
    assert_eq!(closed.status, 200, "{}", closed.text);
    let manager = shop.server.token("manager", "pos.fiscal.close");
    let day = shop
        .server
        .post("/v1/fiscal/registers/r1/closures", &manager, json!({"period": "day"}))
        .await;
    assert_eq!(day.status, 201, "{}", day.text);
    let today = shop_today();
    let period = json!({"registerId": "r1", "from": today.yesterday().unwrap().to_string(), "to": today.to_string()});
    let auditor = shop.server.token("auditor", "pos.fiscal.close");
    let made = shop.server.post("/v1/fiscal/archives", &auditor, period).await;
    assert_eq!(made.status, 201, "{}", made.text);
    let keys = shop.server.call(Method::GET, "/v1/fiscal/keys", None, None).await;
    assert_eq!(keys.status, 200, "{}", keys.text);
    let evidence = Evidence {
        archive: made.text.into_bytes(),
        keys: keys.text.into_bytes(),
    };
    (shop, evidence)
}

/// The document of an archive file, when it still reads as one.
fn document_of(file: &[u8]) -> Option<ArchiveDocument> {
    let file: Value = serde_json::from_slice(file).ok()?;
    serde_json::from_value(file.get("archive")?.clone()).ok()
}

/// `file` made whole again by someone who can rewrite it but holds none of the deployment's
/// keys: every entry re-signed with `forger`, the archive sealed with it.
fn forged(file: &[u8], forger: &FiscalKey) -> Vec<u8> {
    let mut document = document_of(file).expect("an archive");
    resign(&mut document, forger);
    archive::seal(&document, forger).expect("sealed").into_bytes()
}

/// Re-signs every entry of `document` with `key`: each signed string rebuilt from its record
/// and chained to the new signatures, the day closures anchored on the new ticket
/// signatures, and `key` the only key carried. An entry whose record is gone keeps its string.
fn resign(document: &mut ArchiveDocument, key: &FiscalKey) {
    let mut chains = std::mem::take(&mut document.chains);
    let mut renamed: HashMap<String, String> = HashMap::new();
    // Tickets first: the day closures name their last ticket's signature.
    for tickets_first in [true, false] {
        if !tickets_first {
            for closure in &mut document.closures {
                let anchor = &mut closure.record.last_ticket_signature;
                if let Some(new) = anchor.as_ref().and_then(|old| renamed.get(old)) {
                    *anchor = Some(new.clone());
                }
            }
        }
        for chain in chains
            .iter_mut()
            .filter(|c| (c.kind == ChainKind::Ticket) == tickets_first)
        {
            let mut previous = chain.previous_signature.clone();
            for entry in &mut chain.entries {
                if let Some(text) =
                    signed_string(document, entry.kind, entry.seq, &entry.reference, previous.as_deref())
                {
                    entry.payload = text;
                }
                let signature = key.sign(&entry.payload);
                renamed.insert(entry.signature.clone(), signature.clone());
                entry.signature = signature;
                entry.previous_signature = previous;
                entry.key_id = key.key_id().to_owned();
                previous = Some(entry.signature.clone());
            }
        }
    }
    document.chains = chains;
    document.keys = vec![key.public_jwk().clone()];
}

/// The string an entry of `kind` at `seq` signs, rebuilt from the record the document holds.
fn signed_string(
    document: &ArchiveDocument,
    kind: ChainKind,
    seq: i64,
    reference: &str,
    previous: Option<&str>,
) -> Option<String> {
    Some(match kind {
        ChainKind::Ticket => {
            let sale = document.sales.iter().find(|s| s.transaction_id == reference)?;
            payload::ticket(sale, seq, previous)
        }
        ChainKind::Closure => match document.closures.iter().find(|c| c.seq == seq) {
            Some(closure) => payload::period_closure(&closure.record, seq, previous),
            None => {
                let shift = document.shifts.iter().find(|s| s.session_id == reference)?;
                payload::shift_closure(shift, seq, previous)
            }
        },
        ChainKind::Duplicate => {
            let reprint = document.duplicates.iter().find(|d| d.seq == seq)?;
            payload::duplicate(&reprint.record, seq, previous)
        }
        ChainKind::Event => payload::event(&document.events.iter().find(|e| e.seq == seq)?.record, seq, previous),
        ChainKind::Archive => {
            let made = document.archives.iter().find(|a| a.seq == seq)?;
            payload::archive(&made.record, seq, previous)
        }
    })
}

/// Runs the `till` binary with `args`, away from any database and configuration: its exit
/// code (`None` when a signal ended it) and everything it printed.
fn till(args: &[&Path]) -> (Option<i32>, String) {
    let home = tempfile::tempdir().unwrap();
    let output = crate::harness::till_command()
        .args(args)
        .current_dir(home.path())
        .env_remove("TILL_DATABASE_URL")
        .env_remove("TILL_CONFIG")
        .env("TILL_DATA_DIR", home.path())
        .env("TILL_LOG", "error")
        .output()
        .expect("the till binary runs");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code(), printed)
}

/// `till fiscal verify-archive FILE [--keys KEYS]`.
fn verify_archive(file: &Path, keys: Option<&Path>) -> (Option<i32>, String) {
    let mut args = vec![Path::new("fiscal"), Path::new("verify-archive"), file];
    if let Some(keys) = keys {
        args.extend([Path::new("--keys"), keys]);
    }
    till(&args)
}

async fn a_forged_archive_holds_on_its_own_keys_but_not_on_the_deployments(engine: Engine) {
    let (shop, evidence) = a_days_evidence(engine).await;
    shop.server.stop().await;
    let deployment = evidence.key_ids();
    let trusted = evidence.trusted();
    let genuine = archive::verify(&evidence.archive, Trust::KeySet(&trusted)).expect("the genuine archive holds");
    assert_eq!(genuine.key_ids, deployment);

    // Re-signed whole with a key of the forger's own, the archive is self-consistent: it
    // holds on the keys it carries, entry for entry, and only the deployment's keys tell.
    let forger = FiscalKey::from_secret_bytes(&[42; 32]).unwrap();
    let forgery = forged(&evidence.archive, &forger);
    assert_ne!(forgery, evidence.archive);
    let alone = archive::verify_file(&forgery).expect("the forgery holds on its own keys");
    assert_eq!(
        (alone.entries, alone.key_ids.clone()),
        (genuine.entries, vec![forger.key_id().to_owned()])
    );
    assert_eq!(
        archive::verify(&forgery, Trust::KeySet(&trusted)),
        Err(ArchiveError::UntrustedKey(forger.key_id().into()))
    );

    // What the auditor runs.
    let dir = tempfile::tempdir().unwrap();
    let (file, fake, keys) = (
        dir.path().join("archive.json"),
        dir.path().join("forged.json"),
        dir.path().join("keys.json"),
    );
    std::fs::write(&file, &evidence.archive).unwrap();
    std::fs::write(&fake, &forgery).unwrap();
    std::fs::write(&keys, &evidence.keys).unwrap();
    let (status, printed) = verify_archive(&file, Some(&keys));
    assert_eq!(status, Some(0), "{printed}");
    assert!(
        printed.contains(&format!(
            "signed with keys {}, found in the trusted key set",
            deployment[0]
        )),
        "{printed}"
    );
    let (status, printed) = verify_archive(&file, None);
    assert_eq!(status, Some(0), "{printed}");
    assert!(printed.contains(&deployment[0]), "{printed}");
    assert!(
        printed.contains("taken from the archive itself and not independently trusted"),
        "{printed}"
    );
    let (status, printed) = verify_archive(&fake, None);
    assert_eq!(status, Some(0), "{printed}");
    assert!(
        printed.contains(&format!(
            "signed with keys {}, taken from the archive itself",
            forger.key_id()
        )),
        "{printed}"
    );
    let (status, printed) = verify_archive(&fake, Some(&keys));
    assert_eq!(status, Some(1), "{printed}");
    let refusal = format!(
        "FAILED: the archive is signed with key {}, which is not in the trusted key set",
        forger.key_id()
    );
    assert!(printed.contains(&refusal), "{printed}");

    // A key set that is not one refuses to check anything, in a sentence.
    for (name, text) in [
        ("archive-as-keys.json", evidence.archive.clone()),
        ("empty.json", b"{\"keys\": []}".to_vec()),
        ("garbage.json", b"not json".to_vec()),
        ("nothing.json", Vec::new()),
    ] {
        let not_keys = dir.path().join(name);
        std::fs::write(&not_keys, text).unwrap();
        let (status, printed) = verify_archive(&file, Some(&not_keys));
        assert_eq!(status, Some(1), "{name}: {printed}");
        assert!(
            printed.contains("FAILED: the trusted key set") && printed.contains("cannot be used: it "),
            "{name}: {printed}"
        );
    }
}

async fn broken_and_hostile_archives_end_in_exit_status_1_and_a_sentence(engine: Engine) {
    let (shop, evidence) = a_days_evidence(engine).await;
    shop.server.stop().await;
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys.json");
    std::fs::write(&keys, &evidence.keys).unwrap();
    let bytes = &evidence.archive;
    let half = bytes.len() / 2;
    let mut not_utf8 = bytes.clone();
    not_utf8[half] = 0xff;
    // Figures past the largest amount, made self-consistent by a forger: the audit reaches
    // them and must add them with checks.
    let forger = FiscalKey::from_secret_bytes(&[43; 32]).unwrap();
    let mut document = document_of(bytes).unwrap();
    for sale in &mut document.sales {
        sale.total_cents = i64::MAX;
    }
    resign(&mut document, &forger);
    let huge = archive::seal(&document, &forger).unwrap().into_bytes();
    for (name, file, says) in [
        ("truncated", bytes[..half].to_vec(), "is not JSON"),
        ("empty", Vec::new(), "is not JSON"),
        ("not-utf8", not_utf8, "is not JSON"),
        ("doubled", [bytes.as_slice(), bytes].concat(), "is not JSON"),
        (
            "unsealed",
            bytes.replace_first(b"\"archive\":", b"\"archive\" :"),
            "not in canonical form",
        ),
        ("huge-totals", huge, "pass the largest amount"),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, &file).unwrap();
        for keys in [None, Some(keys.as_path())] {
            let (status, printed) = verify_archive(&path, keys);
            assert_eq!(status, Some(1), "{name}: {printed}");
            assert!(printed.contains(": FAILED: "), "{name}: {printed}");
            if keys.is_none() {
                assert!(printed.contains(says), "{name}: {printed}");
            }
        }
    }
    // A file past the size limit is refused from its size, not read: a sparse one holds no
    // disk blocks.
    let large = dir.path().join("large.json");
    std::fs::File::create(&large)
        .unwrap()
        .set_len(MAX_FILE_BYTES + 1)
        .unwrap();
    let (status, printed) = verify_archive(&large, None);
    assert_eq!(status, Some(1), "{printed}");
    assert!(
        printed.contains(&format!("holds {} bytes, more than", MAX_FILE_BYTES + 1)),
        "{printed}"
    );
}

trait ReplaceFirst {
    fn replace_first(&self, from: &[u8], to: &[u8]) -> Vec<u8>;
}

impl ReplaceFirst for Vec<u8> {
    fn replace_first(&self, from: &[u8], to: &[u8]) -> Vec<u8> {
        let at = self.windows(from.len()).position(|w| w == from).expect("found");
        [&self[..at], to, &self[at + from.len()..]].concat()
    }
}

/// Mutated archives fed to the verifier by default; `PROPTEST_CASES` asks for more.
const MUTATED_ARCHIVES: u32 = 1024;

/// Far longer than a verification of the small archive takes: a case still running then hangs.
const HANG: Duration = Duration::from_secs(60);

/// One change to a real archive.
#[derive(Clone, Debug)]
enum Mutation {
    FlipBits {
        at: usize,
        mask: u8,
    },
    Truncate {
        at: usize,
    },
    Delete {
        at: usize,
        len: usize,
    },
    Duplicate {
        at: usize,
        len: usize,
        to: usize,
    },
    Insert {
        at: usize,
        bytes: Vec<u8>,
    },
    /// An edit of the `pick`-th node of the JSON the edit applies to, then `seal`.
    Json {
        pick: usize,
        edit: Edit,
        seal: Seal,
    },
}

#[derive(Clone, Debug)]
enum Edit {
    /// A number becomes this one.
    Number(Value),
    EmptyString,
    LongString(usize),
    /// An array or object loses its members.
    Emptied,
    /// A member or item disappears.
    Removed,
    /// A value of another type takes a node's place.
    Replaced(Value),
    /// An array's item appears twice.
    Doubled,
}

/// What the maker of a mutated archive does after editing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seal {
    /// Nothing: the seal no longer matches.
    Kept,
    /// Seals the document again with a key of their own, added to the keys it carries.
    Resealed,
    /// Re-signs every entry and seals with a key of their own: the audit reads the edit.
    Forged,
}

fn hostile_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(i64::MAX)),
        Just(json!(i64::MIN)),
        Just(json!(i64::MAX - 1)),
        Just(json!(u64::MAX)),
        Just(json!(-1)),
        Just(json!(0)),
        Just(json!(1)),
        Just(json!(0.5)),
        Just(json!(-1.5)),
        Just(json!(1e300)),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    let other = prop_oneof![
        Just(Value::Null),
        Just(json!(true)),
        Just(json!("x")),
        Just(json!([])),
        Just(json!({})),
        Just(json!(7))
    ];
    prop_oneof![
        4 => hostile_number().prop_map(Edit::Number),
        1 => Just(Edit::EmptyString),
        1 => (1..20_000usize).prop_map(Edit::LongString),
        1 => Just(Edit::Emptied),
        2 => Just(Edit::Removed),
        1 => other.prop_map(Edit::Replaced),
        1 => Just(Edit::Doubled),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let seal = prop_oneof![1 => Just(Seal::Kept), 1 => Just(Seal::Resealed), 2 => Just(Seal::Forged)];
    prop_oneof![
        1 => (any::<usize>(), 1..=255u8).prop_map(|(at, mask)| Mutation::FlipBits { at, mask }),
        1 => any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        1 => (any::<usize>(), 1..64usize).prop_map(|(at, len)| Mutation::Delete { at, len }),
        1 => (any::<usize>(), 1..256usize, any::<usize>())
            .prop_map(|(at, len, to)| Mutation::Duplicate { at, len, to }),
        1 => (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        6 => (any::<usize>(), edit(), seal).prop_map(|(pick, edit, seal)| Mutation::Json { pick, edit, seal }),
    ]
}

/// A step from a JSON value to one of its members or items.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// The path to every node under `value`, the root excepted, with the node.
fn nodes<'a>(value: &'a Value, at: &mut Vec<Step>, found: &mut Vec<(Vec<Step>, &'a Value)>) {
    let children: Vec<(Step, &Value)> = match value {
        Value::Object(members) => members.iter().map(|(k, v)| (Step::Key(k.clone()), v)).collect(),
        Value::Array(items) => items.iter().enumerate().map(|(n, v)| (Step::Index(n), v)).collect(),
        _ => return,
    };
    for (step, child) in children {
        at.push(step);
        found.push((at.clone(), child));
        nodes(child, at, found);
        at.pop();
    }
}

fn node_mut<'a>(value: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    path.iter().try_fold(value, |node, step| match step {
        Step::Key(key) => node.get_mut(key.as_str()),
        Step::Index(n) => node.get_mut(*n),
    })
}

/// `file` with `edit` made to the `pick`-th node it applies to (nothing when none does).
fn edited(file: &Value, pick: usize, edit: &Edit) -> Value {
    let mut found = Vec::new();
    nodes(file, &mut Vec::new(), &mut found);
    let applies = |node: &Value| match edit {
        Edit::Number(_) => node.is_number(),
        Edit::EmptyString | Edit::LongString(_) => node.is_string(),
        Edit::Emptied => node.is_array() || node.is_object(),
        Edit::Doubled => node.as_array().is_some_and(|items| !items.is_empty()),
        Edit::Removed | Edit::Replaced(_) => true,
    };
    let candidates: Vec<&Vec<Step>> = found.iter().filter(|(_, node)| applies(node)).map(|(p, _)| p).collect();
    let mut file = file.clone();
    let Some(path) = candidates.get(pick % candidates.len().max(1)).map(|p| (*p).clone()) else {
        return file;
    };
    if let Edit::Removed = edit {
        let (last, parent) = path.split_last().unwrap();
        match (node_mut(&mut file, parent).unwrap(), last) {
            (Value::Object(members), Step::Key(key)) => drop(members.remove(key)),
            (Value::Array(items), Step::Index(n)) => drop(items.remove(*n)),
            _ => unreachable!("a path steps by keys into objects and by indexes into arrays"),
        }
        return file;
    }
    let node = node_mut(&mut file, &path).unwrap();
    match edit {
        Edit::Number(number) => *node = number.clone(),
        Edit::EmptyString => *node = json!(""),
        Edit::LongString(len) => *node = Value::String("é".repeat(*len)),
        Edit::Emptied => match node {
            Value::Array(items) => items.clear(),
            Value::Object(members) => members.clear(),
            _ => {}
        },
        Edit::Doubled => {
            if let Value::Array(items) = node {
                items.push(items[0].clone());
            }
        }
        Edit::Replaced(other) => *node = other.clone(),
        Edit::Removed => {}
    }
    file
}

/// `document` (an archive's `archive` member, edited) sealed by `forger`, who adds their key.
fn resealed(mut document: Value, forger: &FiscalKey) -> Vec<u8> {
    if let Some(keys) = document.get_mut("keys").and_then(Value::as_array_mut) {
        keys.push(forger.public_jwk().clone());
    }
    let signature = json!({
        "algorithm": "ES256",
        "keyId": forger.key_id(),
        "value": forger.sign(&to_canonical_string(&document)),
    });
    to_canonical_string(&json!({"archive": document, "signature": signature})).into_bytes()
}

/// The file `mutation` makes of `original`.
fn mutated(original: &[u8], file: &Value, mutation: &Mutation, forger: &FiscalKey) -> Vec<u8> {
    let len = original.len();
    let at = |n: usize| n % (len + 1);
    let span = |from: usize, n: usize| from..from.saturating_add(n).min(len);
    match mutation {
        Mutation::FlipBits { at: n, mask } => {
            let mut bytes = original.to_vec();
            bytes[n % len] ^= mask;
            bytes
        }
        Mutation::Truncate { at: n } => original[..at(*n)].to_vec(),
        Mutation::Delete { at: n, len: cut } => {
            let cut = span(at(*n), *cut);
            [&original[..cut.start], &original[cut.end..]].concat()
        }
        Mutation::Duplicate { at: n, len: copied, to } => {
            let copied = &original[span(at(*n), *copied)];
            let to = at(*to);
            [&original[..to], copied, &original[to..]].concat()
        }
        Mutation::Insert { at: n, bytes } => {
            let n = at(*n);
            [&original[..n], bytes, &original[n..]].concat()
        }
        Mutation::Json { pick, edit, seal } => {
            let changed = edited(file, *pick, edit);
            let document = changed.get("archive").cloned().unwrap_or(Value::Null);
            match seal {
                Seal::Kept => to_canonical_string(&changed).into_bytes(),
                Seal::Resealed => resealed(document, forger),
                Seal::Forged => match serde_json::from_value::<ArchiveDocument>(document.clone()) {
                    Ok(mut document) => {
                        resign(&mut document, forger);
                        archive::seal(&document, forger).expect("sealed").into_bytes()
                    }
                    Err(_) => resealed(document, forger),
                },
            }
        }
    }
}

type Verdicts = (Result<Verified, ArchiveError>, Result<Verified, ArchiveError>);

/// The verdicts on `bytes` with the archive's own keys and with `trusted`, reached on a
/// thread of their own: `Err` when it panicked or was still running after [`HANG`].
fn verdicts(bytes: Vec<u8>, trusted: Arc<KeySet>) -> Result<Verdicts, &'static str> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let alone = archive::verify_file(&bytes);
        let _ = sender.send((alone, archive::verify(&bytes, Trust::KeySet(&trusted))));
    });
    receiver.recv_timeout(HANG).map_err(|error| match error {
        RecvTimeoutError::Timeout => "still running: it hangs",
        RecvTimeoutError::Disconnected => "it panicked",
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_mutated_archives_end_in_a_verdict() {
    // The verifier never touches a database: one engine makes the archive.
    let Some(engine) = [Engine::Sqlite, Engine::Postgres].into_iter().find(|e| e.enabled()) else {
        return;
    };
    let (shop, evidence) = a_days_evidence(engine).await;
    shop.server.stop().await;
    let original = evidence.archive.clone();
    let file: Value = serde_json::from_slice(&original).unwrap();
    let trusted = Arc::new(evidence.trusted());
    let forger = FiscalKey::from_secret_bytes(&[44; 32]).unwrap();
    // What the cases reached, to show the mutations get past the form and into the audit.
    let (audited, forgeries_held) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(MUTATED_ARCHIVES);
    let mut runner = TestRunner::new(ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let outcome = runner.run(&mutation(), |mutation| {
        let bytes = mutated(&original, &file, &mutation, &forger);
        let unchanged = bytes == original;
        let (alone, checked) = verdicts(bytes, Arc::clone(&trusted)).map_err(TestCaseError::fail)?;
        if matches!(alone, Err(ArchiveError::Journal(_))) {
            audited.fetch_add(1, Ordering::Relaxed);
        }
        let resigned = matches!(
            mutation,
            Mutation::Json {
                seal: Seal::Resealed | Seal::Forged,
                ..
            }
        );
        if resigned && alone.is_ok() {
            forgeries_held.fetch_add(1, Ordering::Relaxed);
        }
        if unchanged && !resigned {
            prop_assert!(
                alone.is_ok() && checked.is_ok(),
                "the archive unchanged fails: {alone:?} {checked:?}"
            );
        } else if !resigned {
            prop_assert!(alone.is_err(), "a changed archive holds: {alone:?}");
        }
        // Whatever changed, signed by a key outside the deployment's set, never holds.
        if !unchanged {
            prop_assert!(
                checked.is_err(),
                "a changed archive holds on the deployment's keys: {checked:?}"
            );
        }
        Ok(())
    });
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
    if cases >= 256 {
        assert!(audited.load(Ordering::Relaxed) > 0, "no mutation reached the audit");
        assert!(
            forgeries_held.load(Ordering::Relaxed) > 0,
            "no forgery held on its own keys"
        );
    }
}

/// A closed day: three sales and its closure, the journal whole.
async fn closed_day(engine: Engine) -> Shop {
    let shop = Shop::open(engine).await;
    for n in 1..=3 {
        let sold = shop
            .finalize(&shop.sale(&format!("t{n}"), vec![line("l1", MUG, n)], n * 1450))
            .await;
        assert_eq!(sold.status, 201, "{}", sold.text);
    }
    let session = format!("/v1/register-sessions/{}/close", shop.session);
    let closed = shop.server.post(&session, &shop.server.admin(), json!({})).await;
    assert_eq!(closed.status, 200, "{}", closed.text);
    let manager = shop.server.token("manager", "pos.fiscal.close");
    let day = shop
        .server
        .post("/v1/fiscal/registers/r1/closures", &manager, json!({"period": "day"}))
        .await;
    assert_eq!(day.status, 201, "{}", day.text);
    assert_eq!(shop.verify("r1").await["ok"], true);
    shop
}

/// `till fiscal verify --register r1` on the server's database.
fn verify_database(server: &TestServer) -> (Option<i32>, String) {
    let output = crate::harness::till_command()
        .args(["fiscal", "verify", "--register", "r1"])
        .env_remove("TILL_CONFIG")
        .env("TILL_DATABASE_URL", server.config.database_url())
        .env("TILL_DATA_DIR", &server.config.data_dir)
        .env("TILL_LOG", "error")
        .output()
        .expect("the till binary runs");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code(), printed)
}

/// Rows no entry seals, with what a damaged database could hold: the audit reads them and
/// answers a verdict, over HTTP and from the command line, never a 500 or a crash.
async fn damaged_journal_rows_end_in_a_verdict(engine: Engine) {
    let shop = closed_day(engine).await;
    // A reprint numbered at the smallest integer, of a sale that was never reprinted.
    shop.server
        .tamper(
            engine,
            &["INSERT INTO receipt_prints (transaction_id, print_no, register_id, operator, printed_at, duplicate_seq) \
               VALUES ('t1', -9223372036854775808, 'r1', 'camille', 0, 50)"],
        )
        .await;
    let verdict = shop.verify("r1").await;
    assert_eq!(
        verdict["ok"], true,
        "a reprint no entry seals is no part of the journal: {verdict}"
    );
    // A month closure whose period is no date.
    shop.server
        .tamper(
            engine,
            &["INSERT INTO fiscal_closures (register_id, closure_seq, period, period_from, period_to, ticket_count, \
               first_ticket_seq, last_ticket_seq, last_ticket_signature, total_cents, abs_total_cents, grand_total_cents, \
               grand_total_abs_cents, vat, closed_at) \
               VALUES ('r1', 99, 'MONTH', '', '', 0, 0, 0, NULL, 0, 0, 0, 0, '[]', 0)"],
        )
        .await;
    let path = "/v1/fiscal/registers/r1/verify";
    let reply = shop
        .server
        .get(path, &shop.server.token("auditor", "pos.fiscal.read"))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["ok"], false, "{}", reply.text);
    let failure = &reply.body["firstFailure"];
    assert_eq!(
        (
            failure["chain"].as_str(),
            failure["seq"].as_i64(),
            failure["kind"].as_str()
        ),
        (Some("closure"), Some(99), Some("closure_sum")),
        "{}",
        reply.text
    );
    let (status, printed) = verify_database(&shop.server);
    assert_eq!(status, Some(1), "{printed}");
    assert!(
        printed.contains("r1: FAILED at closure entry 99: its period starts on \"\", which is not a date"),
        "{printed}"
    );
    shop.server.stop().await;
}

on_both_engines!(
    a_forged_archive_holds_on_its_own_keys_but_not_on_the_deployments,
    broken_and_hostile_archives_end_in_exit_status_1_and_a_sentence,
    damaged_journal_rows_end_in_a_verdict,
);
