//! Writes a SQLite commit's log frames to the file in a few calls instead of two per page.
//!
//! SQLite appends a commit to its write-ahead log one frame at a time, a 24-byte header and
//! then the page, each with its own `pwrite`. A batch of sales changes many pages, so its
//! commit made two system calls per page, and each went through the file system's write path
//! for every page of the file it touched: a frame is not aligned to the file's pages, so that
//! is two or three of them per frame. That was a large share of the writer thread's time (see
//! docs/performance.md, "The gathered log"). This shim over the platform's own VFS keeps a
//! commit's frames in memory while each follows the last in the file, and writes them together
//! before SQLite syncs the log, reads it or does anything else with it.
//!
//! It also syncs the log with `fdatasync` rather than `fsync`. The bundled SQLite is built
//! without `HAVE_FDATASYNC`, so its own sync is a full `fsync`, and a file's times change with
//! every commit: on ext4 that is a second write, of the inode, to wait for at each commit.
//! Nothing reads a log's times, and `fdatasync` still syncs its size when it grows. The first
//! sync of each open log goes to the platform's VFS, which syncs the directory of a new log.
//!
//! It is for the writer's connection at `synchronous = FULL` alone. At FULL, SQLite syncs the
//! log at each commit before it publishes the new frames in the wal-index, so no other
//! connection can look for a frame that is still held here, and a commit is never
//! acknowledged with its frames in memory. At NORMAL, SQLite publishes frames before any
//! sync, so the shim must not be used there.
//!
//! That order is how SQLite works, not a promise it documents, so the shim registers only on
//! the SQLite versions it was verified against ([`VERIFIED`]): the power-cut test
//! (`power_cut.rs`), which forgets every write not yet synced, passed on each. On any other,
//! and when switched off (`StoreOptions::sqlite_gathered_log`, `TILL_SQLITE_GATHERED_LOG`),
//! the writer writes its log through SQLite's own VFS.

use crate::error::StoreError;
use rusqlite::ffi;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::sync::{Mutex, OnceLock};

/// The name the writer opens its connection with.
pub(crate) const VFS_NAME: &CStr = c"till-gathered-log";

/// The SQLite versions (`sqlite3_libversion_number`) the shim was verified against. Another
/// version gets the shim once the power-cut test has passed on it.
pub(crate) const VERIFIED: &[c_int] = &[3_051_003];

/// Held bytes are written once they reach this much: a megabyte that stays allocated, for
/// a few batches' commits.
const MOST_HELD: usize = 1 << 20;

/// What the shim keeps beside the VFS it forwards to.
struct Shim {
    base: *mut ffi::sqlite3_vfs,
    /// Whether the log's syncs may go to a descriptor of the shim's own (`fdatasync`): only
    /// over the platform's VFS, which writes straight to the file. Over any other, every sync
    /// goes to that VFS.
    data_sync: bool,
}

/// Registers the shim over `base`, a registered VFS (the platform's default when `None`), once
/// per process and base; answers the name to open connections with. Refuses a SQLite it was
/// not verified against.
pub(crate) fn register(base: Option<&'static CStr>) -> Result<&'static CStr, StoreError> {
    let version = rusqlite::version_number();
    if !VERIFIED.contains(&version) {
        return Err(StoreError::Config(format!(
            "the SQLite log shim was not verified against SQLite {}",
            rusqlite::version()
        )));
    }
    // Finding a VFS initializes SQLite: the process's settings come first.
    super::process_settings();
    let registered = match base {
        None => {
            static DEFAULT: OnceLock<Result<&'static CStr, c_int>> = OnceLock::new();
            // SAFETY: runs once per process.
            *DEFAULT.get_or_init(|| unsafe { register_over(None, VFS_NAME, true) })
        }
        Some(base) => {
            static OVER: Mutex<Vec<(&'static CStr, Result<&'static CStr, c_int>)>> = Mutex::new(Vec::new());
            let mut over = OVER.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            match over.iter().find(|(known, _)| *known == base) {
                Some((_, registered)) => *registered,
                None => {
                    let name = format!("{}-over-{}", VFS_NAME.to_string_lossy(), base.to_string_lossy());
                    let name: &'static CStr = match CString::new(name) {
                        Ok(name) => Box::leak(name.into_boxed_c_str()),
                        Err(_) => return Err(StoreError::Config("a VFS name holds a NUL byte".to_owned())),
                    };
                    // SAFETY: runs once per base, under the lock.
                    let registered = unsafe { register_over(Some(base), name, false) };
                    over.push((base, registered));
                    registered
                }
            }
        }
    };
    registered.map_err(|code| StoreError::Config(format!("the SQLite log shim could not be registered (code {code})")))
}

/// # Safety
/// Registers a VFS named `name` that lives as long as the process, so call it at most once per
/// name.
unsafe fn register_over(
    base: Option<&'static CStr>,
    name: &'static CStr,
    data_sync: bool,
) -> Result<&'static CStr, c_int> {
    // SAFETY: a null name asks for the default VFS; SQLite initializes itself if needed.
    let base = unsafe { ffi::sqlite3_vfs_find(base.map_or(std::ptr::null(), CStr::as_ptr)) };
    if base.is_null() {
        return Err(ffi::SQLITE_ERROR);
    }
    // SAFETY: `base` is a registered VFS, which SQLite never frees.
    let base_ref = unsafe { &*base };
    let Ok(own_size) = c_int::try_from(size_of::<LogFile>()) else {
        return Err(ffi::SQLITE_ERROR);
    };
    let shim = Box::leak(Box::new(Shim { base, data_sync }));
    let vfs = Box::leak(Box::new(ffi::sqlite3_vfs {
        // Version 1: SQLite then uses xCurrentTime and no system-call hooks.
        iVersion: 1,
        // A log file is this shim's state followed by the base VFS's own file.
        szOsFile: own_size + base_ref.szOsFile,
        mxPathname: base_ref.mxPathname,
        pNext: std::ptr::null_mut(),
        zName: name.as_ptr(),
        pAppData: std::ptr::from_mut(shim).cast(),
        xOpen: Some(open),
        xDelete: Some(delete),
        xAccess: Some(access),
        xFullPathname: Some(full_pathname),
        xDlOpen: Some(dl_open),
        xDlError: Some(dl_error),
        xDlSym: Some(dl_sym),
        xDlClose: Some(dl_close),
        xRandomness: Some(randomness),
        xSleep: Some(sleep),
        xCurrentTime: Some(current_time),
        xGetLastError: Some(get_last_error),
        xCurrentTimeInt64: None,
        xSetSystemCall: None,
        xGetSystemCall: None,
        xNextSystemCall: None,
    }));
    // SAFETY: the VFS is leaked, so it outlives every connection opened with it.
    match unsafe { ffi::sqlite3_vfs_register(vfs, 0) } {
        ffi::SQLITE_OK => Ok(name),
        code => Err(code),
    }
}

/// What this shim keeps beside the VFS it forwards to.
///
/// # Safety
/// `vfs` is this shim's VFS.
unsafe fn shim<'a>(vfs: *mut ffi::sqlite3_vfs) -> &'a Shim {
    // SAFETY: `register_over` stored a leaked `Shim` in pAppData.
    unsafe { &*(*vfs).pAppData.cast::<Shim>() }
}

/// The VFS this shim forwards to.
///
/// # Safety
/// `vfs` is this shim's VFS.
unsafe fn base(vfs: *mut ffi::sqlite3_vfs) -> *mut ffi::sqlite3_vfs {
    // SAFETY: as SQLite passed it.
    unsafe { shim(vfs).base }
}

/// A write-ahead log file: what SQLite sees first, then what this shim holds, then (in the
/// same allocation, SQLite's `szOsFile` bytes) the base VFS's own file.
#[repr(C)]
struct LogFile {
    base: ffi::sqlite3_file,
    inner: *mut ffi::sqlite3_file,
    /// Where the held bytes go in the file.
    held_at: i64,
    held: Vec<u8>,
    /// The same file opened again, for `fdatasync`; `None` where it could not be opened or the
    /// shim is over another VFS than the platform's, and syncs then go to the base VFS.
    data_sync: Option<std::fs::File>,
    /// Whether the base VFS synced the file once, with the directory that names it.
    synced_once: bool,
}

impl LogFile {
    /// # Safety
    /// `file` was opened by [`open`] with [`LOG_METHODS`] and not closed.
    unsafe fn from<'a>(file: *mut ffi::sqlite3_file) -> &'a mut LogFile {
        // SAFETY: `open` wrote a `LogFile` at `file`; SQLite calls a file's methods from one
        // thread at a time (the connection's mutex).
        unsafe { &mut *file.cast::<LogFile>() }
    }

    fn methods(&self) -> &ffi::sqlite3_io_methods {
        // SAFETY: `inner` was opened successfully, so its methods are set until it is closed.
        unsafe { &*(*self.inner).pMethods }
    }

    /// Holds `bytes` for `offset`, first writing what is held when they do not follow it.
    fn hold(&mut self, bytes: &[u8], offset: i64) -> c_int {
        let follows = !self.held.is_empty() && offset == self.held_at + self.held.len() as i64;
        if !follows || self.held.len() + bytes.len() > MOST_HELD {
            let code = self.write_held();
            if code != ffi::SQLITE_OK {
                return code;
            }
            if bytes.len() >= MOST_HELD {
                return self.write_through(bytes, offset);
            }
            self.held_at = offset;
        }
        self.held.extend_from_slice(bytes);
        ffi::SQLITE_OK
    }

    /// Writes what is held. Dropped even when the write fails: SQLite then fails the
    /// transaction, and the log's frames past its last commit count for nothing.
    fn write_held(&mut self) -> c_int {
        if self.held.is_empty() {
            return ffi::SQLITE_OK;
        }
        let code = self.write_through(&self.held, self.held_at);
        // Keeps the allocation for the next commit.
        self.held.clear();
        code
    }

    /// Writes `bytes` at `offset` in pieces the base VFS takes whole: the unix VFS writes
    /// at most 128 KiB less one byte per call. Every piece but the last ends on a 4 KiB
    /// boundary of the file, so that no page of the file takes two calls.
    fn write_through(&self, mut bytes: &[u8], mut offset: i64) -> c_int {
        const MOST_PER_CALL: i64 = (1 << 17) - 1;
        const FILE_PAGE: i64 = 4096;
        let Some(write) = self.methods().xWrite else {
            return ffi::SQLITE_IOERR_WRITE;
        };
        while !bytes.is_empty() {
            let boundary = (offset + MOST_PER_CALL) / FILE_PAGE * FILE_PAGE;
            let piece = usize::try_from(boundary - offset).map_or(bytes.len(), |len| len.min(bytes.len()));
            let (now, rest) = bytes.split_at(piece);
            // SAFETY: `inner` is open; `now` is valid for its length, under 128 KiB.
            let code = unsafe { write(self.inner, now.as_ptr().cast(), now.len() as c_int, offset) };
            if code != ffi::SQLITE_OK {
                return code;
            }
            bytes = rest;
            offset += piece as i64;
        }
        ffi::SQLITE_OK
    }
}

unsafe extern "C" fn open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: SQLite passes this shim's VFS and `szOsFile` bytes at `file`, enough for the
    // base VFS's file alone or for a `LogFile` followed by it.
    unsafe {
        let base = base(vfs);
        let Some(base_open) = (*base).xOpen else {
            return ffi::SQLITE_CANTOPEN;
        };
        if flags & ffi::SQLITE_OPEN_WAL == 0 {
            // The database file and the rest are the base VFS's files, unchanged.
            return base_open(base, name, file, flags, out_flags);
        }
        let inner = file.cast::<u8>().add(size_of::<LogFile>()).cast::<ffi::sqlite3_file>();
        let code = base_open(base, name, inner, flags, out_flags);
        if code != ffi::SQLITE_OK {
            if let Some(close) = (*inner).pMethods.as_ref().and_then(|methods| methods.xClose) {
                close(inner);
            }
            (*file).pMethods = std::ptr::null();
            return code;
        }
        let data_sync = (shim(vfs).data_sync && !name.is_null())
            .then(|| CStr::from_ptr(name))
            .map(|path| std::path::Path::new(std::ffi::OsStr::from_bytes(path.to_bytes())))
            .and_then(|path| std::fs::File::open(path).ok());
        file.cast::<LogFile>().write(LogFile {
            base: ffi::sqlite3_file { pMethods: &LOG_METHODS },
            inner,
            held_at: 0,
            held: Vec::new(),
            data_sync,
            synced_once: false,
        });
        ffi::SQLITE_OK
    }
}

/// A log file's methods. Version 1: SQLite maps shared memory and pages through the database
/// file, never through its log.
static LOG_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved_lock),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: SQLite closes a file once; the `LogFile` is dropped in place after its last use.
    unsafe {
        let log = LogFile::from(file);
        let written = log.write_held();
        let closed = log.methods().xClose.map_or(ffi::SQLITE_OK, |close| close(log.inner));
        std::ptr::drop_in_place(file.cast::<LogFile>());
        if written != ffi::SQLITE_OK { written } else { closed }
    }
}

unsafe extern "C" fn write(file: *mut ffi::sqlite3_file, data: *const c_void, amount: c_int, offset: i64) -> c_int {
    let Ok(len) = usize::try_from(amount) else {
        return ffi::SQLITE_IOERR_WRITE;
    };
    // SAFETY: SQLite passes `amount` readable bytes at `data`.
    unsafe {
        let bytes = std::slice::from_raw_parts(data.cast::<u8>(), len);
        LogFile::from(file).hold(bytes, offset)
    }
}

/// Forwards a method to the base VFS's file. With `held first`, after writing what is held,
/// so that the file is as SQLite believes it to be before SQLite reads, sizes, truncates or
/// syncs it; the other methods neither read nor write the file's bytes.
macro_rules! forwarded {
    (held first, $name:ident ( $($arg:ident : $ty:ty),* ), $method:ident, $missing:expr) => {
        forwarded!(@ $name($($arg: $ty),*), $method, $missing, |log: &mut LogFile| log.write_held());
    };
    ($name:ident ( $($arg:ident : $ty:ty),* ), $method:ident, $missing:expr) => {
        forwarded!(@ $name($($arg: $ty),*), $method, $missing, |_: &mut LogFile| ffi::SQLITE_OK);
    };
    (@ $name:ident ( $($arg:ident : $ty:ty),* ), $method:ident, $missing:expr, $first:expr) => {
        unsafe extern "C" fn $name(file: *mut ffi::sqlite3_file, $($arg: $ty),*) -> c_int {
            // SAFETY: SQLite calls this on a log file opened by `open`.
            let log = unsafe { LogFile::from(file) };
            let code = ($first)(&mut *log);
            if code != ffi::SQLITE_OK {
                return code;
            }
            match log.methods().$method {
                // SAFETY: forwarded as SQLite passed them, to the file they belong to.
                Some(method) => unsafe { method(log.inner, $($arg),*) },
                None => $missing,
            }
        }
    };
}

forwarded!(held first, read(data: *mut c_void, amount: c_int, offset: i64), xRead, ffi::SQLITE_IOERR_READ);
forwarded!(held first, truncate(size: i64), xTruncate, ffi::SQLITE_IOERR_TRUNCATE);
forwarded!(held first, forwarded_sync(flags: c_int), xSync, ffi::SQLITE_IOERR_FSYNC);

/// Syncs the log's data (see the module's documentation).
unsafe extern "C" fn sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    // SAFETY: SQLite calls this on a log file opened by `open`.
    let through_base = unsafe {
        let log = LogFile::from(file);
        !log.synced_once || log.data_sync.is_none()
    };
    if through_base {
        // SAFETY: as SQLite called it. A failed sync leaves the directory to the next one.
        let code = unsafe { forwarded_sync(file, flags) };
        if code == ffi::SQLITE_OK {
            // SAFETY: as above; the forwarded call has returned.
            unsafe { LogFile::from(file) }.synced_once = true;
        }
        return code;
    }
    // SAFETY: as above.
    let log = unsafe { LogFile::from(file) };
    let code = log.write_held();
    if code != ffi::SQLITE_OK {
        return code;
    }
    // Another descriptor of the same file: a sync covers the file, whichever descriptor asks.
    match log.data_sync.as_ref().map(std::fs::File::sync_data) {
        Some(Ok(())) => ffi::SQLITE_OK,
        _ => ffi::SQLITE_IOERR_FSYNC,
    }
}

forwarded!(held first, file_size(size: *mut i64), xFileSize, ffi::SQLITE_IOERR_FSTAT);
forwarded!(held first, file_control(op: c_int, arg: *mut c_void), xFileControl, ffi::SQLITE_NOTFOUND);
forwarded!(lock(level: c_int), xLock, ffi::SQLITE_OK);
forwarded!(unlock(level: c_int), xUnlock, ffi::SQLITE_OK);
forwarded!(check_reserved_lock(out: *mut c_int), xCheckReservedLock, ffi::SQLITE_OK);
forwarded!(sector_size(), xSectorSize, 4096);
forwarded!(device_characteristics(), xDeviceCharacteristics, 0);

/// Forwards one of the VFS's own methods to the base VFS, unchanged.
macro_rules! to_base {
    ($name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty, $method:ident, $missing:expr) => {
        unsafe extern "C" fn $name(vfs: *mut ffi::sqlite3_vfs, $($arg: $ty),*) -> $ret {
            // SAFETY: forwarded as SQLite passed them, to the VFS this shim wraps.
            unsafe {
                let base = base(vfs);
                (*base).$method.map_or($missing, |method| method(base, $($arg),*))
            }
        }
    };
}

type Symbol = unsafe extern "C" fn(*mut ffi::sqlite3_vfs, *mut c_void, *const c_char);

to_base!(delete(name: *const c_char, sync_dir: c_int) -> c_int, xDelete, ffi::SQLITE_IOERR_DELETE);
to_base!(access(name: *const c_char, flags: c_int, out: *mut c_int) -> c_int, xAccess, ffi::SQLITE_IOERR_ACCESS);
to_base!(full_pathname(name: *const c_char, size: c_int, out: *mut c_char) -> c_int, xFullPathname, ffi::SQLITE_CANTOPEN);
to_base!(dl_open(name: *const c_char) -> *mut c_void, xDlOpen, std::ptr::null_mut());
to_base!(dl_error(size: c_int, out: *mut c_char) -> (), xDlError, ());
to_base!(dl_sym(handle: *mut c_void, symbol: *const c_char) -> Option<Symbol>, xDlSym, None);
to_base!(dl_close(handle: *mut c_void) -> (), xDlClose, ());
to_base!(randomness(size: c_int, out: *mut c_char) -> c_int, xRandomness, 0);
to_base!(sleep(micros: c_int) -> c_int, xSleep, 0);
to_base!(current_time(out: *mut f64) -> c_int, xCurrentTime, ffi::SQLITE_ERROR);
to_base!(get_last_error(size: c_int, out: *mut c_char) -> c_int, xGetLastError, 0);

#[cfg(test)]
mod tests {
    use super::register;
    use rusqlite::{Connection, OpenFlags};
    use std::path::Path;

    /// The writer's connection as the store opens it: through the shim, in WAL mode at FULL,
    /// and (here) with no checkpoint, so that what was committed lives in the log alone.
    fn writer(path: &Path) -> Connection {
        let conn = Connection::open_with_flags_and_vfs(path, OpenFlags::default(), register(None).unwrap()).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA wal_autocheckpoint = 0;
             CREATE TABLE IF NOT EXISTS notes (n INTEGER PRIMARY KEY, body BLOB NOT NULL)",
        )
        .unwrap();
        conn
    }

    fn count_and_sum(conn: &Connection) -> (i64, i64) {
        conn.query_row("SELECT count(*), coalesce(sum(n), 0) FROM notes", [], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .unwrap()
    }

    /// A commit is in the log file when COMMIT returns, not only in this process's memory:
    /// copies of the files taken then, as a crash right after would leave them, hold it.
    #[test]
    fn a_commit_is_in_the_log_file_when_it_returns() {
        let dir = tempfile::tempdir().unwrap();
        let conn = writer(&dir.path().join("till.db"));
        for batch in 0..5_i64 {
            let tx = conn.unchecked_transaction().unwrap();
            for n in 0..40 {
                tx.execute(
                    "INSERT INTO notes (n, body) VALUES (?1, zeroblob(900))",
                    [batch * 40 + n],
                )
                .unwrap();
            }
            tx.commit().unwrap();

            let copy = dir.path().join(format!("copy-{batch}"));
            std::fs::create_dir(&copy).unwrap();
            for file in ["till.db", "till.db-wal"] {
                std::fs::copy(dir.path().join(file), copy.join(file)).unwrap();
            }
            let recovered = Connection::open(copy.join("till.db")).unwrap();
            let rows = (batch + 1) * 40;
            assert_eq!(
                count_and_sum(&recovered),
                (rows, rows * (rows - 1) / 2),
                "after commit {batch}"
            );
        }
    }

    /// A transaction larger than the page cache writes pages to the log before its commit and
    /// reads some of them back, or writes them again in place; another connection, outside the
    /// shim, then reads exactly what was committed.
    #[test]
    fn pages_spilled_before_the_commit_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("till.db");
        let conn = writer(&path);
        conn.execute_batch("PRAGMA cache_size = 8").unwrap();
        let tx = conn.unchecked_transaction().unwrap();
        for n in 0..3_000_i64 {
            tx.execute("INSERT INTO notes (n, body) VALUES (?1, randomblob(300))", [n])
                .unwrap();
        }
        // Every page again, after most of them left the cache for the log.
        tx.execute("UPDATE notes SET body = zeroblob(length(body))", [])
            .unwrap();
        tx.commit().unwrap();

        let reader = Connection::open(&path).unwrap();
        assert_eq!(count_and_sum(&reader), (3_000, 3_000 * 2_999 / 2));
        let nonzero: i64 = reader
            .query_row("SELECT count(*) FROM notes WHERE body != zeroblob(300)", [], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(nonzero, 0, "a page was read back as it was before the update");
        let check: String = reader
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        assert_eq!(check, "ok");
    }

    /// Connections outside the shim see each commit as soon as it returns.
    #[test]
    fn readers_outside_the_shim_see_each_commit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("till.db");
        let conn = writer(&path);
        let reader = Connection::open(&path).unwrap();
        for n in 0..200_i64 {
            conn.execute("INSERT INTO notes (n, body) VALUES (?1, zeroblob(100))", [n])
                .unwrap();
            assert_eq!(count_and_sum(&reader), (n + 1, n * (n + 1) / 2));
        }
    }
}
