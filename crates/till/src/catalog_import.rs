//! `till catalog import FILE`: loads a catalog of any size from NDJSON, one article per line
//! with the fields of an item of `POST /v1/catalog/import` (`skuId`, `name`, `priceCents`,
//! `vatRate`, `effectiveFrom?`, `barcodes?`), read by the same parsing.
//!
//! The file is streamed: articles are written a chunk at a time, each chunk in one
//! transaction, so memory holds one chunk whatever the file's size. A bad line stops the
//! import at that line; the articles before it are written. Writing an article is idempotent,
//! so running the import again on the corrected file is safe.

use std::collections::HashSet;
use std::fmt;
use std::io::BufRead;
use std::time::{Duration, Instant};
use till_api::error::ApiError;
use till_api::routes::catalog::import_line;
use till_core::catalog::price_starts;
use till_core::ids::SkuId;
use till_store::Store;
use till_store::catalog::CatalogWrite;

/// Articles written per transaction.
pub const CHUNK: usize = 100_000;

/// The SQLite writer's page cache while importing, in MiB: a million articles' indexes are
/// read back from the file at every chunk with the service's smaller cache. A bound, like the
/// chunk, that holds whatever the file's size.
pub const SQLITE_CACHE_MIB: u32 = 512;

/// What an import wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Imported {
    pub created: usize,
    pub updated: usize,
}

/// An import that stopped, with what it wrote before.
#[derive(Debug)]
pub struct Stopped {
    pub written: Imported,
    pub reason: Reason,
}

#[derive(Debug)]
pub enum Reason {
    /// A line that is not an article; `field` is empty when the line is not JSON at all.
    BadLine {
        line: usize,
        field: String,
        message: String,
    },
    /// The database refused the chunk of these lines (a barcode another article keeps, say).
    Refused { first: usize, last: usize, message: String },
    /// The file could not be read.
    Read(std::io::Error),
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reason {
            Reason::BadLine { line, field, message } if field.is_empty() => write!(f, "line {line}: {message}")?,
            Reason::BadLine { line, field, message } => write!(f, "line {line}: {field} {message}")?,
            Reason::Refused { first, last, message } => write!(f, "lines {first} to {last}: {message}")?,
            Reason::Read(error) => write!(f, "cannot read the file: {error}")?,
        }
        write!(
            f,
            "; the import stopped there, after writing {} articles ({} created, {} updated); \
             fix the file and run it again",
            self.written.created + self.written.updated,
            self.written.created,
            self.written.updated
        )
    }
}

impl std::error::Error for Stopped {}

/// Imports every line of `file` into `store`, each article priced from the moment its chunk
/// is written unless it names a later instant.
pub async fn import(store: &Store, file: impl BufRead) -> Result<Imported, Stopped> {
    let mut import = Import::default();
    for (index, line) in file.lines().enumerate() {
        let number = index + 1;
        let line = line.map_err(|error| import.stop(Reason::Read(error)))?;
        if line.trim().is_empty() {
            continue;
        }
        let write = match parse(&line, number) {
            Ok(write) => write,
            Err(reason) => {
                // Every article before the bad line is written, so a rerun starts clean.
                import.flush(store).await?;
                return Err(import.stop(reason));
            }
        };
        // Two lines of one article go to separate transactions, the later one last.
        if import.ids.contains(&write.item.sku_id) {
            import.flush(store).await?;
        }
        if import.pending.is_empty() {
            import.lines.0 = number;
        }
        import.ids.insert(write.item.sku_id.clone());
        import.pending.push(write);
        import.lines.1 = number;
        if import.pending.len() == CHUNK {
            import.flush(store).await?;
        }
    }
    import.flush(store).await?;
    Ok(import.written)
}

/// The line as an article, priced from now unless it says when.
fn parse(line: &str, number: usize) -> Result<CatalogWrite, Reason> {
    let bad = |field: &str, message: String| Reason::BadLine {
        line: number,
        field: field.to_owned(),
        message,
    };
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|_| bad("", "is not a JSON object".to_owned()))?;
    import_line(&value, jiff::Timestamp::now()).map_err(|error| match error {
        ApiError::Validation(problems) => {
            let first = problems.into_iter().next();
            let (field, message) = first.map(|p| (p.field, p.message)).unwrap_or_default();
            bad(&field, message)
        }
        other => bad("", other.to_string()),
    })
}

/// The chunk being read, and what the chunks before it wrote.
#[derive(Default)]
struct Import {
    pending: Vec<CatalogWrite>,
    ids: HashSet<SkuId>,
    /// The first and last line of the chunk.
    lines: (usize, usize),
    written: Imported,
}

impl Import {
    async fn flush(&mut self, store: &Store) -> Result<(), Stopped> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let now = jiff::Timestamp::now();
        // A price the file does not date starts when its chunk is written, not when its line
        // was read.
        let from_now = price_starts(None, now).unwrap_or(now);
        let mut writes = std::mem::take(&mut self.pending);
        for write in &mut writes {
            write.starts = write.starts.max(from_now);
        }
        self.ids.clear();
        let (first, last) = self.lines;
        match store.write_catalog(writes, now).await {
            Ok(summary) => {
                self.written.created += summary.created;
                self.written.updated += summary.updated;
                if let Err(error) = store.settle_catalog().await {
                    tracing::warn!(%error, "could not gather the catalog's statistics");
                }
                Ok(())
            }
            Err(error) => Err(self.stop(Reason::Refused {
                first,
                last,
                message: ApiError::from(error).to_string(),
            })),
        }
    }

    fn stop(&self, reason: Reason) -> Stopped {
        Stopped {
            written: self.written,
            reason,
        }
    }
}

/// The line `till catalog import` prints when it is done.
pub fn summary(imported: Imported, took: Duration) -> String {
    format!(
        "imported {} articles: {} created, {} updated, in {:.1} s",
        imported.created + imported.updated,
        imported.created,
        imported.updated,
        took.as_secs_f64()
    )
}

/// Times `import` on the file at `path`.
pub async fn import_file(store: &Store, path: &std::path::Path) -> anyhow::Result<(Imported, Duration)> {
    let file = std::fs::File::open(path).map_err(|error| anyhow::anyhow!("cannot open {}: {error}", path.display()))?;
    let started = Instant::now();
    let imported = import(store, std::io::BufReader::with_capacity(1 << 20, file)).await?;
    Ok((imported, started.elapsed()))
}
