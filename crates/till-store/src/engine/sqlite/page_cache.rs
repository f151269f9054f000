//! SQLite's own page cache, wrapped so that a commit's end does not scan it for nothing.
//!
//! When a B-tree page splits, SQLite may put the new pages in page-number order by renaming them
//! through a temporary number: the page number that holds the pending-byte lock, just past the
//! first gibibyte of the file. Its page cache then remembers that number as the highest key it
//! ever held, and at the end of the transaction, told to drop every page past the end of the
//! file, it finds the range from the file's end to that number larger than its hash table and
//! walks the whole table: every bucket, every cached page, though the renamed page left that
//! number long before. Under load nearly every commit of the writer had such a split, and the
//! walk was a sixth of the writer's time (docs/performance.md, "Page cache truncation").
//!
//! This wrapper hands every call to SQLite's default cache and keeps, for each cache, the
//! highest key it has handed a page under (the temporary number aside, which it follows apart,
//! since SQLite always renames the page away again within the same call). A truncation with
//! nothing at or past its limit is then a no-op and is not passed on; any other is passed on
//! whole. SQLite's cache is untouched otherwise, so the wrapper changes when work is skipped,
//! never what the cache holds.

use crate::error::StoreError;
use rusqlite::ffi;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The byte SQLite's file locks sit on; its page is never a page of the database.
const PENDING_BYTE: c_uint = 0x4000_0000;

/// SQLite's default page cache, as `SQLITE_CONFIG_GETPCACHE2` gave it.
struct Default(ffi::sqlite3_pcache_methods2);

// SAFETY: the methods are plain functions and `pArg` is the default cache's own global state,
// which SQLite itself shares between threads.
unsafe impl Send for Default {}
unsafe impl Sync for Default {}

static DEFAULT: OnceLock<Default> = OnceLock::new();

/// Truncations passed over: nothing was cached at or past their limit.
static SKIPPED: AtomicU64 = AtomicU64::new(0);

/// How many truncations the wrapper passed over in this process.
pub fn skipped_truncations() -> u64 {
    SKIPPED.load(Ordering::Relaxed)
}

/// The outcome of installing the wrapper, decided once per process.
static INSTALLED: OnceLock<Result<(), c_int>> = OnceLock::new();

/// One cache: SQLite's, and the highest key it may hold a page under.
struct Cache {
    inner: *mut ffi::sqlite3_pcache,
    /// No page is cached under a key above this one, the temporary number aside.
    highest: c_uint,
    /// The number SQLite renames pages through while it reorders a split.
    temporary: c_uint,
    /// Whether a page is cached under `temporary` now.
    holds_temporary: bool,
}

/// Installs the wrapper, once per process, before SQLite starts; answers whether it is in place.
/// Once SQLite has started (a connection opened before), it can no longer be installed: the
/// node runs on SQLite's cache as it is, and says so.
pub fn install() -> Result<(), StoreError> {
    let installed = INSTALLED.get_or_init(|| {
        let mut default = ffi::sqlite3_pcache_methods2 {
            iVersion: 0,
            pArg: std::ptr::null_mut(),
            xInit: None,
            xShutdown: None,
            xCreate: None,
            xCachesize: None,
            xPagecount: None,
            xFetch: None,
            xUnpin: None,
            xRekey: None,
            xTruncate: None,
            xDestroy: None,
            xShrink: None,
        };
        // SAFETY: both calls are made before SQLite is initialised (else SQLite refuses them
        // with SQLITE_MISUSE and changes nothing); the methods given stay valid for the
        // process's life.
        unsafe {
            let read = ffi::sqlite3_config(ffi::SQLITE_CONFIG_GETPCACHE2, &mut default as *mut _);
            if read != ffi::SQLITE_OK {
                return Err(read);
            }
            let default = &DEFAULT.get_or_init(|| Default(default)).0;
            let wrapped = Box::leak(Box::new(ffi::sqlite3_pcache_methods2 {
                iVersion: default.iVersion,
                pArg: std::ptr::null_mut(),
                xInit: Some(init),
                xShutdown: Some(shutdown),
                xCreate: Some(create),
                xCachesize: Some(cache_size),
                xPagecount: Some(page_count),
                xFetch: Some(fetch),
                xUnpin: Some(unpin),
                xRekey: Some(rekey),
                xTruncate: Some(truncate),
                xDestroy: Some(destroy),
                xShrink: Some(shrink),
            }));
            let set = ffi::sqlite3_config(ffi::SQLITE_CONFIG_PCACHE2, wrapped as *mut _);
            if set != ffi::SQLITE_OK {
                return Err(set);
            }
        }
        Ok(())
    });
    installed.map_err(|code| {
        StoreError::Config(format!(
            "SQLite's page cache could not be wrapped (SQLite error {code})"
        ))
    })
}

fn default() -> &'static ffi::sqlite3_pcache_methods2 {
    // Every method below runs only once `install` has set it.
    &DEFAULT
        .get()
        .expect("the default page cache is read before the wrapper is installed")
        .0
}

/// # Safety
/// `cache` is a pointer [`create`] returned and SQLite has not destroyed.
unsafe fn cache<'a>(cache: *mut ffi::sqlite3_pcache) -> &'a mut Cache {
    // SAFETY: per the function's contract; SQLite calls a cache's methods one at a time.
    unsafe { &mut *(cache as *mut Cache) }
}

unsafe extern "C" fn init(_: *mut c_void) -> c_int {
    let default = default();
    match default.xInit {
        // SAFETY: SQLite's own initialisation of its own cache.
        Some(init) => unsafe { init(default.pArg) },
        None => ffi::SQLITE_OK,
    }
}

unsafe extern "C" fn shutdown(_: *mut c_void) {
    let default = default();
    if let Some(shutdown) = default.xShutdown {
        // SAFETY: as above.
        unsafe { shutdown(default.pArg) }
    }
}

unsafe extern "C" fn create(page_size: c_int, extra: c_int, purgeable: c_int) -> *mut ffi::sqlite3_pcache {
    let Some(create) = default().xCreate else {
        return std::ptr::null_mut();
    };
    // SAFETY: SQLite's arguments, passed on.
    let inner = unsafe { create(page_size, extra, purgeable) };
    if inner.is_null() {
        return inner;
    }
    let temporary = PENDING_BYTE / c_uint::try_from(page_size.max(1)).unwrap_or(1) + 1;
    let wrapped = Box::new(Cache {
        inner,
        highest: 0,
        temporary,
        holds_temporary: false,
    });
    Box::into_raw(wrapped) as *mut ffi::sqlite3_pcache
}

unsafe extern "C" fn cache_size(wrapped: *mut ffi::sqlite3_pcache, pages: c_int) {
    // SAFETY: `wrapped` is ours, per SQLite's contract with the cache; likewise below.
    let cache = unsafe { cache(wrapped) };
    if let Some(cache_size) = default().xCachesize {
        unsafe { cache_size(cache.inner, pages) }
    }
}

unsafe extern "C" fn page_count(wrapped: *mut ffi::sqlite3_pcache) -> c_int {
    let cache = unsafe { cache(wrapped) };
    match default().xPagecount {
        Some(page_count) => unsafe { page_count(cache.inner) },
        None => 0,
    }
}

unsafe extern "C" fn fetch(
    wrapped: *mut ffi::sqlite3_pcache,
    key: c_uint,
    create: c_int,
) -> *mut ffi::sqlite3_pcache_page {
    let cache = unsafe { cache(wrapped) };
    let Some(fetch) = default().xFetch else {
        return std::ptr::null_mut();
    };
    let page = unsafe { fetch(cache.inner, key, create) };
    if !page.is_null() {
        cache.saw(key);
    }
    page
}

unsafe extern "C" fn unpin(wrapped: *mut ffi::sqlite3_pcache, page: *mut ffi::sqlite3_pcache_page, discard: c_int) {
    let cache = unsafe { cache(wrapped) };
    if let Some(unpin) = default().xUnpin {
        unsafe { unpin(cache.inner, page, discard) }
    }
}

unsafe extern "C" fn rekey(
    wrapped: *mut ffi::sqlite3_pcache,
    page: *mut ffi::sqlite3_pcache_page,
    old: c_uint,
    new: c_uint,
) {
    let cache = unsafe { cache(wrapped) };
    if let Some(rekey) = default().xRekey {
        unsafe { rekey(cache.inner, page, old, new) }
    }
    if old == cache.temporary {
        cache.holds_temporary = false;
    }
    cache.saw(new);
}

unsafe extern "C" fn truncate(wrapped: *mut ffi::sqlite3_pcache, limit: c_uint) {
    let cache = unsafe { cache(wrapped) };
    let temporary_dropped = cache.holds_temporary && cache.temporary >= limit;
    if limit > cache.highest && !temporary_dropped {
        SKIPPED.fetch_add(1, Ordering::Relaxed);
        return;
    }
    if let Some(truncate) = default().xTruncate {
        unsafe { truncate(cache.inner, limit) }
    }
    cache.highest = cache.highest.min(limit.saturating_sub(1));
    if temporary_dropped {
        cache.holds_temporary = false;
    }
}

unsafe extern "C" fn destroy(wrapped: *mut ffi::sqlite3_pcache) {
    // SAFETY: SQLite destroys a cache once and calls nothing on it afterwards.
    let cache = unsafe { Box::from_raw(wrapped as *mut Cache) };
    if let Some(destroy) = default().xDestroy {
        unsafe { destroy(cache.inner) }
    }
}

unsafe extern "C" fn shrink(wrapped: *mut ffi::sqlite3_pcache) {
    let cache = unsafe { cache(wrapped) };
    if let Some(shrink) = default().xShrink {
        unsafe { shrink(cache.inner) }
    }
}

impl Cache {
    /// A page is now cached under `key`.
    fn saw(&mut self, key: c_uint) {
        if key == self.temporary {
            self.holds_temporary = true;
        } else {
            self.highest = self.highest.max(key);
        }
    }
}
