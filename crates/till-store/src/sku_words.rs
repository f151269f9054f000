//! The catalog search by name (table `sku_words`, migrations 0012 and 0016): each distinct word
//! of an article's name, folded by [`till_core::words`], with all of that name's words beside
//! it, written by every catalog write in the same transaction as the name; searched as
//! [`crate::name_search`] says.

use crate::catalog::{CatalogRecord, CatalogWrite, Rows, article_columns, record, value_rows};
use crate::db::Store;
use crate::error::StoreError;
use crate::name_search;
use crate::page::Window;
use crate::sql::{Conn, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
pub use till_app::storage::catalog::WordKey;
use till_core::ids::SkuId;
use till_core::instant::to_micros;
use till_core::words::{NameQuery, name_words};

/// Words per statement when those of former names are deleted: 2 parameters each.
const DELETE_ROWS: usize = 500;
/// Rows per multi-row insert: 3 parameters each.
const INSERT_ROWS: usize = 1_000;
/// Articles whose words one transaction of the backfill writes.
const BACKFILL_CHUNK: usize = 5_000;

/// An article found by its word `w.word`, read whole (`$1`: the instant it is read at).
const SEARCH_COLUMNS: &str = concat!(
    "SELECT w.word, ",
    article_columns!(),
    " FROM sku_words w JOIN skus s ON s.sku_id = w.sku_id"
);

impl Store {
    pub async fn search_catalog(
        &self,
        search: &NameQuery,
        window: &Window<WordKey>,
        now: Timestamp,
    ) -> Result<Vec<(WordKey, CatalogRecord)>, StoreError> {
        let (sql, params) = statement(search, window.after.as_ref());
        let mut read = query(sql).bind(to_micros(now));
        for param in params {
            read = read.bind(param);
        }
        let rows = read
            .bind(i64::try_from(window.take).unwrap_or(i64::MAX))
            .fetch_all(self.reader())
            .await?;
        rows.iter()
            .map(|row| {
                let key = WordKey {
                    word: row.try_get("word")?,
                    sku_id: SkuId::from_trusted(row.try_get("sku_id")?),
                };
                Ok((key, record(row, now)?))
            })
            .collect()
    }

    /// Writes the words of the articles written before the search existed, once: migration
    /// 0012 leaves a row in `sku_words_backfill` for it, deleted with the last words.
    pub(crate) async fn backfill_sku_words(&self) -> Result<(), StoreError> {
        let pending = query("SELECT singleton FROM sku_words_backfill")
            .fetch_optional(self.reader())
            .await?;
        if pending.is_none() {
            return Ok(());
        }
        let mut after: Option<String> = None;
        loop {
            match self.write(after, |c, a| Box::pin(backfill_chunk(c, a))).await? {
                Some(last) => after = Some(last),
                None => return Ok(()),
            }
        }
    }
}

/// The search's statement and the texts it binds from `$2` on (`$1` is the instant it reads
/// at), its limit last (not among them).
fn statement(search: &NameQuery, after: Option<&WordKey>) -> (String, Vec<String>) {
    let mut params: Vec<String> = Vec::new();
    let mut bind = |value: String| {
        params.push(value);
        format!("${}", params.len() + 1)
    };
    let after = after.map(|key| (key.word.as_str(), key.sku_id.as_str()));
    let conditions = name_search::conditions(search, after, "sku_id", &mut bind);
    let limit = params.len() + 2;
    let sql = format!(
        "{SEARCH_COLUMNS} WHERE {} ORDER BY w.word, w.sku_id LIMIT ${limit}",
        conditions.join(" AND ")
    );
    (sql, params)
}

/// A row of `sku_words`, ordered as its key: a word of an article's name, with all of that
/// name's words (shared by the name's rows, as the id is with the article).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct WordRow<'a> {
    word: String,
    sku_id: &'a str,
    words: Arc<str>,
}

/// The rows of an article's words.
fn rows<'a>(sku_id: &'a str, name: &str) -> impl Iterator<Item = WordRow<'a>> {
    let words = name_words(name);
    let spaced: Arc<str> = name_search::spaced(&words).into();
    words.into_iter().map(move |word| WordRow {
        word,
        sku_id,
        words: spaced.clone(),
    })
}

/// Writes the words of the next articles by id after `after`; answers the last one, or `None`
/// when none was left (and the backfill is marked done).
fn backfill_chunk<'a>(
    conn: &'a mut Conn,
    after: &'a Option<String>,
) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
    Box::pin(async move {
        let read = match after {
            Some(after) => {
                query("SELECT sku_id, name FROM skus WHERE sku_id > $1 ORDER BY sku_id LIMIT $2").bind(after)
            }
            None => query("SELECT sku_id, name FROM skus ORDER BY sku_id LIMIT $1"),
        };
        let rows = read.bind(BACKFILL_CHUNK as i64).fetch_all(&mut *conn).await?;
        let Some(last) = rows.last() else {
            query("DELETE FROM sku_words_backfill").execute(&mut *conn).await?;
            return Ok(None);
        };
        let last: String = last.try_get("sku_id")?;
        let articles = rows
            .iter()
            .map(|row| Ok((row.try_get::<String>("sku_id")?, row.try_get::<String>("name")?)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        let mut words: Vec<WordRow> = articles
            .iter()
            .flat_map(|(sku_id, name)| self::rows(sku_id, name))
            .collect();
        words.sort_unstable();
        // Words written since the backfill began are there already.
        insert(conn, &words, Rows::Known).await?;
        Ok(Some(last))
    })
}

/// Gives each written article the words of its name, forgetting those of its former name
/// (`former`: `(sku_id, name)` of the articles the catalog held before the write).
pub(crate) async fn replace(
    conn: &mut Conn,
    writes: &[CatalogWrite],
    former: &[(String, String)],
) -> Result<(), StoreError> {
    let mut words: Vec<WordRow> = writes
        .iter()
        .flat_map(|write| rows(write.item.sku_id.as_str(), &write.item.name))
        .collect();
    // In the table's key order, so that the inserts walk its pages in turn.
    words.sort_unstable();
    let names: HashMap<&str, &str> = writes
        .iter()
        .map(|write| (write.item.sku_id.as_str(), write.item.name.as_str()))
        .collect();
    let mut stale: Vec<(String, &str)> = former
        .iter()
        .flat_map(|(sku_id, name)| {
            let now = names
                .get(sku_id.as_str())
                .map(|now| name_words(now))
                .unwrap_or_default();
            name_words(name)
                .into_iter()
                .filter(move |word| !now.contains(word))
                .map(|word| (word, sku_id.as_str()))
        })
        .collect();
    stale.sort_unstable();
    for chunk in stale.chunks(DELETE_ROWS) {
        let keys = value_rows(chunk.len(), 2, 1, "");
        let mut delete = query(format!("DELETE FROM sku_words WHERE (word, sku_id) IN (VALUES {keys})"));
        for (word, sku_id) in chunk {
            delete = delete.bind(word.as_str()).bind(*sku_id);
        }
        delete.execute(&mut *conn).await?;
    }
    let known: BTreeSet<&str> = former.iter().map(|(sku_id, _)| sku_id.as_str()).collect();
    let (of_known, of_new): (Vec<_>, Vec<_>) = words.into_iter().partition(|row| known.contains(row.sku_id));
    insert(conn, &of_new, Rows::New).await?;
    insert(conn, &of_known, Rows::Known).await
}

/// Writes `(word, sku_id, words)` rows; a known article's row already there takes the name's
/// words given.
async fn insert(conn: &mut Conn, words: &[WordRow<'_>], rows: Rows) -> Result<(), StoreError> {
    for chunk in words.chunks(INSERT_ROWS) {
        let values = value_rows(chunk.len(), 3, 1, "");
        let mut insert = query(format!(
            "INSERT INTO sku_words (word, sku_id, words) VALUES {values}{}",
            rows.on_conflict("word, sku_id", &["words"])
        ));
        for row in chunk {
            insert = insert.bind(row.word.as_str()).bind(row.sku_id).bind(&*row.words);
        }
        insert.execute(&mut *conn).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{migrated_scratch_database, query_plan, scratch_sqlite_store};
    use till_core::catalog::CatalogItem;
    use till_core::money::{Cents, VatRate};

    fn write(id: &str, name: &str, now: Timestamp) -> CatalogWrite {
        CatalogWrite {
            item: CatalogItem {
                sku_id: SkuId::parse(&id.repeat(64)).unwrap(),
                name: name.to_owned(),
                price: Cents::new(100).unwrap(),
                vat_rate: VatRate::from_hundredths(2_000).unwrap(),
            },
            starts: now,
            barcodes: None,
        }
    }

    async fn found(store: &Store, q: &str, now: Timestamp) -> Vec<String> {
        let window = Window { after: None, take: 100 };
        let found = store
            .search_catalog(&NameQuery::parse(q).unwrap(), &window, now)
            .await
            .unwrap();
        found.into_iter().map(|(_, record)| record.item.name).collect()
    }

    #[tokio::test]
    async fn the_store_writes_the_words_of_articles_from_before_the_search_when_it_starts() {
        let dir = tempfile::tempdir().unwrap();
        let (_, store) = scratch_sqlite_store(dir.path()).await;
        store.migrate().await.unwrap();
        let now = Timestamp::now();
        let writes = vec![write("a", "Crème fraîche", now), write("b", "Café crème", now)];
        store.write_catalog(writes, now).await.unwrap();
        // As a database migrated to 0012 with articles in it: no words yet, the backfill due.
        store
            .write((), |conn, ()| {
                Box::pin(async move {
                    query("DELETE FROM sku_words").execute(&mut *conn).await?;
                    query("INSERT INTO sku_words_backfill (singleton) VALUES (1)")
                        .execute(&mut *conn)
                        .await?;
                    Ok(())
                })
            })
            .await
            .unwrap();
        assert!(found(&store, "creme", now).await.is_empty());
        store.migrate().await.unwrap();
        assert_eq!(found(&store, "creme", now).await, ["Crème fraîche", "Café crème"]);
        assert_eq!(found(&store, "fraiche", now).await, ["Crème fraîche"]);
        let pending = query("SELECT singleton FROM sku_words_backfill")
            .fetch_optional(store.reader())
            .await
            .unwrap();
        assert!(pending.is_none());
        store.close().await;
    }

    #[tokio::test]
    async fn a_rename_keeping_a_word_is_found_by_its_new_words_only() {
        let dir = tempfile::tempdir().unwrap();
        let (_, store) = scratch_sqlite_store(dir.path()).await;
        store.migrate().await.unwrap();
        let now = Timestamp::now();
        store
            .write_catalog(vec![write("a", "Chocolat noir", now), write("b", "Noisette", now)], now)
            .await
            .unwrap();
        assert_eq!(found(&store, "chocolat n", now).await, ["Chocolat noir"]);
        store
            .write_catalog(vec![write("a", "Chocolat blanc", now)], now)
            .await
            .unwrap();
        assert!(found(&store, "chocolat n", now).await.is_empty());
        assert!(found(&store, "noir", now).await.is_empty());
        assert_eq!(found(&store, "chocolat b", now).await, ["Chocolat blanc"]);
        assert_eq!(found(&store, "blanc ch", now).await, ["Chocolat blanc"]);
        // The prefix lists an article once, at its first word with it.
        assert_eq!(found(&store, "no", now).await, ["Noisette"]);
        store
            .write_catalog(vec![write("c", "Noix noisette", now)], now)
            .await
            .unwrap();
        assert_eq!(found(&store, "no", now).await, ["Noisette", "Noix noisette"]);
        store.close().await;
    }

    #[tokio::test]
    async fn a_page_seeks_its_key_and_reads_in_the_index_order() {
        let dir = tempfile::tempdir().unwrap();
        let conn = migrated_scratch_database(dir.path()).await;
        let after = WordKey {
            word: "chocolat".into(),
            sku_id: SkuId::parse(&"f".repeat(64)).unwrap(),
        };
        for (q, seek) in [
            ("ch", "SEARCH w USING PRIMARY KEY ((word,sku_id)>(?,?) AND word<?)"),
            ("chocolat ch", "SEARCH w USING PRIMARY KEY (word=? AND sku_id>?)"),
            ("noir chocolat ch", "SEARCH w USING PRIMARY KEY (word=? AND sku_id>?)"),
        ] {
            let (sql, mut params) = statement(&NameQuery::parse(q).unwrap(), Some(&after));
            params.insert(0, "1790000000000000".into());
            params.push("50".into());
            let params: Vec<&str> = params.iter().map(String::as_str).collect();
            let plan = query_plan(&conn, &sql, &params).join("\n");
            assert!(plan.starts_with(seek), "{q}: {plan}");
            // The page is not sorted (each article's few prices and barcodes are).
            assert!(!plan.contains("TEMP B-TREE FOR ORDER BY"), "{q}: {plan}");
            assert!(!plan.contains("SCAN"), "{q}: {plan}");
            // Each article's prices and barcodes are sought by its id.
            assert!(plan.contains("SEARCH p USING PRIMARY KEY (sku_id=?)"), "{q}: {plan}");
            assert!(
                plan.contains("SEARCH b USING INDEX sku_barcodes_by_sku (sku_id=?)"),
                "{q}: {plan}"
            );
        }
    }
}
