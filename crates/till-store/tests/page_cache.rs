//! SQLite's page cache under its wrapper (`till_store::page_cache`), in a process of its own so
//! that the wrapper is installed before SQLite starts, as a node's first store does.

use till_store::page_cache;

/// Rows written in a scrambled key order, so that pages split in the middle and are renamed.
fn write<'c>(conn: &'c rusqlite::Connection, tag: &str, count: u32) -> rusqlite::Transaction<'c> {
    let tx = conn.unchecked_transaction().unwrap();
    for i in 0..count {
        let key = format!("{:08x}", i.wrapping_mul(2_654_435_761));
        tx.execute(
            "INSERT OR REPLACE INTO t (k, v) VALUES (?1, ?2)",
            (key, format!("{tag}{i:0>200}")),
        )
        .unwrap();
    }
    tx
}

/// A commit whose splits renamed pages skips the scan of the cache, and a transaction that grew
/// the file and rolled back still drops the pages past the file's end: rows written, rolled
/// back, written again otherwise, read back whole, and SQLite's own check of the file passes.
#[test]
fn truncations_are_skipped_only_when_nothing_is_past_the_limit() {
    page_cache::install().expect("the wrapper installs before SQLite starts");
    let dir = tempfile::tempdir().unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID;",
    )
    .unwrap();
    let before = page_cache::skipped_truncations();
    write(&conn, "kept", 2_000).commit().unwrap();
    assert!(
        page_cache::skipped_truncations() > before,
        "a commit after renamed splits still scanned"
    );
    write(&conn, "gone", 20_000).rollback().unwrap();
    write(&conn, "kept", 2_000).commit().unwrap();
    let (rows, gone): (i64, i64) = conn
        .query_row(
            "SELECT count(*), count(*) FILTER (WHERE v LIKE 'gone%') FROM t",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!((rows, gone), (2_000, 0));
    let check: String = conn.query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap();
    assert_eq!(check, "ok");
    // A second connection reads the same file through its own cache.
    let other = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
    let seen: i64 = other.query_row("SELECT count(*) FROM t", [], |row| row.get(0)).unwrap();
    assert_eq!(seen, 2_000);
}
