//! `till catalog import FILE`: loads a catalog of any size from NDJSON, one article per line
//! with the fields of an item of `POST /v1/catalog/import` (`skuId`, `name`, `priceCents`,
//! `vatRate`, `effectiveFrom?`, `barcodes?`), read by the same parsing.
//!
//! The file is streamed: articles are written a chunk at a time, each chunk in one
//! transaction, so memory holds one chunk whatever the file's size. A bad line stops the
//! import at that line; the articles before it are written. Writing an article is idempotent,
//! so running the import again on the corrected file is safe.

use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasher;
use std::io::{BufRead, Read as _};
use std::time::{Duration, Instant};
use till_api::error::ApiError;
use till_api::routes::catalog::import_line;
use till_core::catalog::price_starts;
use till_store::Store;
use till_store::catalog::CatalogWrite;
use tokio::sync::mpsc::Sender;

/// Articles written per transaction. Article ids are hashes, so each chunk rewrites most pages
/// of the catalog's indexes however few articles it holds: fewer, bigger chunks rewrite them
/// fewer times. Three chunks are in memory at most (see [`import`]).
pub const CHUNK: usize = 200_000;

/// The SQLite writer's page cache while importing, in MiB: a million articles' indexes are
/// read back from the file at every chunk with the service's smaller cache. A bound, like the
/// chunk, that holds whatever the file's size.
pub const SQLITE_CACHE_MIB: u32 = 256;

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
/// is written unless it names a later instant. A thread reads and parses the next chunk while
/// this one is written; the one chunk between them bounds memory to three.
pub async fn import(store: &Store, file: impl BufRead + Send + 'static) -> Result<Imported, Stopped> {
    let (sender, mut chunks) = tokio::sync::mpsc::channel(1);
    let reader = tokio::task::spawn_blocking(move || read_chunks(file, &sender));
    let mut written = Imported::default();
    let outcome = loop {
        match chunks.recv().await {
            Some(Read::Chunk(chunk)) => {
                if let Err(reason) = write(store, chunk, &mut written).await {
                    break Err(reason);
                }
            }
            Some(Read::Stop(reason)) => break Err(reason),
            None => break Ok(()),
        }
    };
    // A refused chunk leaves the reader blocked on a full channel: closing it lets it end.
    drop(chunks);
    let outcome = match (outcome, reader.await) {
        // The reader ended without saying why (it panicked): the file was not read to its end.
        (Ok(()), Err(_)) => Err(Reason::Read(std::io::Error::other(
            "reading the file stopped unexpectedly",
        ))),
        (outcome, _) => outcome,
    };
    outcome.map(|()| written).map_err(|reason| Stopped { written, reason })
}

/// What the reading thread hands over: a chunk of articles, or why it stopped (after handing
/// over every article before that line).
enum Read {
    Chunk(Chunk),
    Stop(Reason),
}

/// Articles of consecutive lines, with the first and last of those lines.
struct Chunk {
    writes: Vec<CatalogWrite>,
    lines: (usize, usize),
}

/// Longest line read, in bytes: an article's fields take a few kilobytes at most, and a line
/// with no end (a file that is no catalog, `/dev/zero`) is refused here rather than read until
/// memory runs out.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Reads `file` into chunks of [`CHUNK`] articles, sent in order until the file ends or a
/// line is bad; returns early when the writer has stopped listening.
fn read_chunks(mut file: impl BufRead, sender: &Sender<Read>) {
    let mut filling = Filling::default();
    let mut seen = Seen::default();
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        number += 1;
        line.clear();
        let limit = u64::try_from(MAX_LINE_BYTES + 1).unwrap_or(u64::MAX);
        match (&mut file).take(limit).read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(error) => return filling.stop(sender, Reason::Read(error)),
        }
        if line.last() == Some(&b'\n') {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        } else if line.len() > MAX_LINE_BYTES {
            let reason = Reason::BadLine {
                line: number,
                field: String::new(),
                message: format!("is longer than {MAX_LINE_BYTES} bytes, the longest line an article takes"),
            };
            return filling.stop(sender, reason);
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            let reason = Reason::BadLine {
                line: number,
                field: String::new(),
                message: "is not UTF-8 text".to_owned(),
            };
            return filling.stop(sender, reason);
        };
        if text.trim().is_empty() {
            continue;
        }
        let write = match parse(text, number).and_then(|write| seen.first_time(write, number)) {
            Ok(write) => write,
            Err(reason) => return filling.stop(sender, reason),
        };
        filling.push(write, number);
        if filling.writes.len() == CHUNK && !filling.hand_over(sender) {
            return;
        }
    }
    filling.hand_over(sender);
}

/// The keys the file gave so far, an article's id and each of its barcodes, with the line
/// that gave each: as `POST /v1/catalog/import` refuses an article twice or a barcode on two
/// articles, so does the file, whatever the lines between them. A key is kept as a keyed
/// 128-bit hash (two draws of the standard library's keyed hasher), not as its text, so that
/// a file of millions of articles costs some tens of bytes each; two different keys meeting
/// on one hash is beyond any file's reach.
#[derive(Default)]
struct Seen {
    hashers: (std::hash::RandomState, std::hash::RandomState),
    lines: HashMap<(u64, u64), usize>,
}

impl Seen {
    fn fingerprint(&self, kind: u8, key: &str) -> (u64, u64) {
        let hash = |hasher: &std::hash::RandomState| hasher.hash_one((kind, key));
        (hash(&self.hashers.0), hash(&self.hashers.1))
    }

    /// `write` when none of its keys came before, else the line naming the first one that did.
    fn first_time(&mut self, write: CatalogWrite, line: usize) -> Result<CatalogWrite, Reason> {
        let bad = |field: String, message: String| Reason::BadLine { line, field, message };
        let sku = self.fingerprint(0, write.item.sku_id.as_str());
        if let Some(first) = self.lines.get(&sku) {
            return Err(bad(
                "skuId".to_owned(),
                format!("appears more than once in the file (first on line {first})"),
            ));
        }
        let barcodes: Vec<(u64, u64)> = write
            .barcodes
            .iter()
            .flatten()
            .map(|barcode| self.fingerprint(1, barcode.gtin.as_str()))
            .collect();
        for (index, barcode) in barcodes.iter().enumerate() {
            if let Some(first) = self.lines.get(barcode) {
                return Err(bad(
                    format!("barcodes.{index}"),
                    format!("is also a barcode of the article on line {first}; a barcode belongs to one article"),
                ));
            }
        }
        for key in std::iter::once(sku).chain(barcodes) {
            self.lines.insert(key, line);
        }
        Ok(write)
    }
}

/// The chunk the reading thread is filling.
#[derive(Default)]
struct Filling {
    writes: Vec<CatalogWrite>,
    lines: (usize, usize),
}

impl Filling {
    fn push(&mut self, write: CatalogWrite, line: usize) {
        if self.writes.is_empty() {
            self.lines.0 = line;
        }
        self.lines.1 = line;
        self.writes.push(write);
    }

    /// Sends the chunk (when it holds an article) and starts the next; false when the writer
    /// has stopped listening.
    fn hand_over(&mut self, sender: &Sender<Read>) -> bool {
        let Filling { writes, lines } = std::mem::take(self);
        writes.is_empty() || sender.blocking_send(Read::Chunk(Chunk { writes, lines })).is_ok()
    }

    /// Sends every article before the line that stopped the reading, then why it stopped, so
    /// that a rerun of the corrected file starts clean.
    fn stop(&mut self, sender: &Sender<Read>, reason: Reason) {
        if self.hand_over(sender) {
            let _ = sender.blocking_send(Read::Stop(reason));
        }
    }
}

/// Writes `chunk` in one transaction, adding what it wrote to `written`.
async fn write(store: &Store, chunk: Chunk, written: &mut Imported) -> Result<(), Reason> {
    let now = jiff::Timestamp::now();
    // A price the file does not date starts when its chunk is written, not when its line
    // was read.
    let from_now = price_starts(None, now).unwrap_or(now);
    let mut writes = chunk.writes;
    for write in &mut writes {
        write.starts = write.starts.max(from_now);
    }
    let (first, last) = chunk.lines;
    match store.write_catalog(writes, now).await {
        Ok(summary) => {
            written.created += summary.created;
            written.updated += summary.updated;
            if let Err(error) = store.settle_catalog().await {
                tracing::warn!(%error, "could not gather the catalog's statistics");
            }
            Ok(())
        }
        Err(error) => Err(Reason::Refused {
            first,
            last,
            message: ApiError::from(error).to_string(),
        }),
    }
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
