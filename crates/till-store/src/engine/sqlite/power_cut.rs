//! What a power cut leaves of a SQLite store, proved on the files: a VFS that keeps every write
//! not yet synced in memory, as the operating system's page cache does, and forgets it at the
//! cut, the idea of LazyFS. A crash of the process (the crash test's SIGKILL) loses nothing the
//! operating system was handed; a power cut loses whatever was not synced, so only this shows
//! that a commit is acknowledged after its frames are on the disk, with or without the
//! gathered-log shim over it (see `gathered_log`).
//!
//! The test runs sales through a store whose every connection (writer, readers, checkpointer)
//! opens its files through this VFS, cuts the power at a random write, truncation or sync of
//! its group commits and checkpoints, and opens the files as the disk then holds them.

use rusqlite::ffi;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard, OnceLock};

/// The name stores under test open their files with.
pub(super) const VFS_NAME: &CStr = c"till-power-cut";

/// A change to a file that the disk does not hold yet.
enum Change {
    Write(i64, Vec<u8>),
    Truncate(i64),
}

/// What the operating system holds of each file and has not written to the disk: its changes
/// in order, applied when any descriptor of the file syncs, lost at the cut. Every operation
/// that changes a file or reads one takes this lock, so that the cut falls between two of them.
static UNSYNCED: LazyLock<Mutex<HashMap<PathBuf, Vec<Change>>>> = LazyLock::new(Default::default);

/// Set at the cut: from then on nothing reaches the disk and every operation fails, as if the
/// machine had stopped.
static CUT: AtomicBool = AtomicBool::new(false);

/// Writes, truncations and syncs left until the cut; negative when none is armed.
static COUNTDOWN: AtomicI64 = AtomicI64::new(-1);

/// Writes, truncations and syncs since the last [`arm`].
static SEEN: AtomicI64 = AtomicI64::new(0);

fn unsynced() -> MutexGuard<'static, HashMap<PathBuf, Vec<Change>>> {
    UNSYNCED.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Power on, with nothing pending and no cut armed.
pub(super) fn power_on() {
    let mut unsynced = unsynced();
    unsynced.clear();
    COUNTDOWN.store(-1, Ordering::SeqCst);
    CUT.store(false, Ordering::SeqCst);
}

/// The cut after `ops` more writes, truncations and syncs (`None`: not before [`cut`]).
pub(super) fn arm(ops: Option<i64>) {
    let _unsynced = unsynced();
    SEEN.store(0, Ordering::SeqCst);
    COUNTDOWN.store(ops.unwrap_or(-1), Ordering::SeqCst);
}

/// Cuts the power now, unless it is cut already; answers the writes, truncations and syncs
/// seen since [`arm`].
pub(super) fn cut() -> i64 {
    cut_holding(&mut unsynced());
    SEEN.load(Ordering::SeqCst)
}

fn cut_holding(unsynced: &mut HashMap<PathBuf, Vec<Change>>) {
    CUT.store(true, Ordering::SeqCst);
    unsynced.clear();
}

/// Counts a write, truncation or sync, made while holding [`UNSYNCED`]: false when the power is
/// off, or goes off at this one.
fn powered(unsynced: &mut HashMap<PathBuf, Vec<Change>>) -> bool {
    if CUT.load(Ordering::SeqCst) {
        return false;
    }
    SEEN.fetch_add(1, Ordering::SeqCst);
    if COUNTDOWN.fetch_sub(1, Ordering::SeqCst) == 1 {
        cut_holding(unsynced);
        return false;
    }
    true
}

/// Registers the VFS over the platform's, once per process.
pub(super) fn register() -> &'static CStr {
    static REGISTERED: OnceLock<c_int> = OnceLock::new();
    super::process_settings();
    // SAFETY: runs once; the VFS is leaked and outlives every connection.
    let code = *REGISTERED.get_or_init(|| unsafe {
        let base = ffi::sqlite3_vfs_find(std::ptr::null());
        assert!(!base.is_null(), "SQLite has a default VFS");
        let own = c_int::try_from(size_of::<VolatileFile>()).expect("a small struct");
        let vfs = Box::leak(Box::new(ffi::sqlite3_vfs {
            iVersion: 1,
            szOsFile: own + (*base).szOsFile,
            mxPathname: (*base).mxPathname,
            pNext: std::ptr::null_mut(),
            zName: VFS_NAME.as_ptr(),
            pAppData: base.cast(),
            xOpen: Some(open),
            xDelete: Some(delete),
            xAccess: Some(access),
            xFullPathname: Some(full_pathname),
            xDlOpen: None,
            xDlError: None,
            xDlSym: None,
            xDlClose: None,
            xRandomness: Some(randomness),
            xSleep: Some(sleep),
            xCurrentTime: Some(current_time),
            xGetLastError: Some(get_last_error),
            xCurrentTimeInt64: None,
            xSetSystemCall: None,
            xGetSystemCall: None,
            xNextSystemCall: None,
        }));
        ffi::sqlite3_vfs_register(vfs, 0)
    });
    assert_eq!(code, ffi::SQLITE_OK, "the power-cut VFS registers");
    VFS_NAME
}

/// # Safety
/// `vfs` is this VFS.
unsafe fn base(vfs: *mut ffi::sqlite3_vfs) -> *mut ffi::sqlite3_vfs {
    // SAFETY: `register` stored the platform's VFS in pAppData.
    unsafe { (*vfs).pAppData.cast() }
}

/// A file whose changes wait in [`UNSYNCED`] until it syncs, followed in its allocation by the
/// platform VFS's own file, which writes to the disk.
#[repr(C)]
struct VolatileFile {
    base: ffi::sqlite3_file,
    inner: *mut ffi::sqlite3_file,
    path: PathBuf,
}

impl VolatileFile {
    /// # Safety
    /// `file` was opened by [`open`] and not closed.
    unsafe fn from<'a>(file: *mut ffi::sqlite3_file) -> &'a VolatileFile {
        // SAFETY: `open` wrote a `VolatileFile` there.
        unsafe { &*file.cast::<VolatileFile>() }
    }

    fn methods(&self) -> &ffi::sqlite3_io_methods {
        // SAFETY: `inner` is open until `close`.
        unsafe { &*(*self.inner).pMethods }
    }

    /// The size of the file on the disk.
    fn durable_size(&self) -> Result<i64, c_int> {
        let mut size = 0;
        let size_of = self.methods().xFileSize.ok_or(ffi::SQLITE_IOERR_FSTAT)?;
        // SAFETY: `inner` is open; `size` is a valid out-pointer.
        match unsafe { size_of(self.inner, &mut size) } {
            ffi::SQLITE_OK => Ok(size),
            code => Err(code),
        }
    }

    /// Writes `change` to the disk through the platform's file.
    fn apply(&self, change: &Change) -> c_int {
        match change {
            Change::Write(at, bytes) => match (self.methods().xWrite, c_int::try_from(bytes.len())) {
                // SAFETY: `inner` is open; `bytes` is valid for its length.
                (Some(write), Ok(len)) => unsafe { write(self.inner, bytes.as_ptr().cast(), len, *at) },
                _ => ffi::SQLITE_IOERR_WRITE,
            },
            Change::Truncate(size) => match self.methods().xTruncate {
                // SAFETY: `inner` is open.
                Some(truncate) => unsafe { truncate(self.inner, *size) },
                None => ffi::SQLITE_IOERR_TRUNCATE,
            },
        }
    }
}

unsafe extern "C" fn open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: SQLite passes this VFS and `szOsFile` bytes at `file`.
    unsafe {
        let base = base(vfs);
        let Some(base_open) = (*base).xOpen else {
            return ffi::SQLITE_CANTOPEN;
        };
        if CUT.load(Ordering::SeqCst) {
            (*file).pMethods = std::ptr::null();
            return ffi::SQLITE_CANTOPEN;
        }
        if name.is_null() {
            // A temporary file, gone with the process anyway.
            return base_open(base, name, file, flags, out_flags);
        }
        let inner = file
            .cast::<u8>()
            .add(size_of::<VolatileFile>())
            .cast::<ffi::sqlite3_file>();
        let code = base_open(base, name, inner, flags, out_flags);
        if code != ffi::SQLITE_OK {
            if let Some(close) = (*inner).pMethods.as_ref().and_then(|methods| methods.xClose) {
                close(inner);
            }
            (*file).pMethods = std::ptr::null();
            return code;
        }
        let path = Path::new(std::ffi::OsStr::from_bytes(CStr::from_ptr(name).to_bytes())).to_path_buf();
        file.cast::<VolatileFile>().write(VolatileFile {
            base: ffi::sqlite3_file { pMethods: &METHODS },
            inner,
            path,
        });
        ffi::SQLITE_OK
    }
}

/// Version 2: shared memory goes to the platform's file, as the page cache's mappings do;
/// pages are never fetched by mapping (version 3).
static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 2,
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
    xShmMap: Some(shm_map),
    xShmLock: Some(shm_lock),
    xShmBarrier: Some(shm_barrier),
    xShmUnmap: Some(shm_unmap),
    xFetch: None,
    xUnfetch: None,
};

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: SQLite closes a file once. What it left unsynced stays in the page cache.
    unsafe {
        let volatile = VolatileFile::from(file);
        let closed = volatile
            .methods()
            .xClose
            .map_or(ffi::SQLITE_OK, |close| close(volatile.inner));
        std::ptr::drop_in_place(file.cast::<VolatileFile>());
        closed
    }
}

unsafe extern "C" fn read(file: *mut ffi::sqlite3_file, data: *mut c_void, amount: c_int, offset: i64) -> c_int {
    // SAFETY: SQLite reads a file opened by `open` into `amount` writable bytes at `data`.
    let (volatile, buffer) = unsafe {
        let Ok(len) = usize::try_from(amount) else {
            return ffi::SQLITE_IOERR_READ;
        };
        (
            VolatileFile::from(file),
            std::slice::from_raw_parts_mut(data.cast::<u8>(), len),
        )
    };
    let unsynced = unsynced();
    if CUT.load(Ordering::SeqCst) {
        return ffi::SQLITE_IOERR_READ;
    }
    let Some(read) = volatile.methods().xRead else {
        return ffi::SQLITE_IOERR_READ;
    };
    // SAFETY: forwarded as SQLite passed it; a short read fills the rest with zeros.
    let code = unsafe { read(volatile.inner, data, amount, offset) };
    if code != ffi::SQLITE_OK && code != ffi::SQLITE_IOERR_SHORT_READ {
        return code;
    }
    let mut size = match volatile.durable_size() {
        Ok(size) => size,
        Err(code) => return code,
    };
    let end = offset + i64::from(amount);
    for change in unsynced.get(&volatile.path).into_iter().flatten() {
        match change {
            Change::Write(at, bytes) => {
                let (from, to) = (offset.max(*at), end.min(at + bytes.len() as i64));
                if from < to {
                    buffer[(from - offset) as usize..(to - offset) as usize]
                        .copy_from_slice(&bytes[(from - at) as usize..(to - at) as usize]);
                }
                size = size.max(at + bytes.len() as i64);
            }
            Change::Truncate(to) => {
                if *to < end {
                    buffer[(offset.max(*to) - offset) as usize..].fill(0);
                }
                size = *to;
            }
        }
    }
    if end > size {
        ffi::SQLITE_IOERR_SHORT_READ
    } else {
        ffi::SQLITE_OK
    }
}

unsafe extern "C" fn write(file: *mut ffi::sqlite3_file, data: *const c_void, amount: c_int, offset: i64) -> c_int {
    // SAFETY: SQLite passes `amount` readable bytes at `data` for a file opened by `open`.
    let (volatile, bytes) = unsafe {
        let Ok(len) = usize::try_from(amount) else {
            return ffi::SQLITE_IOERR_WRITE;
        };
        (
            VolatileFile::from(file),
            std::slice::from_raw_parts(data.cast::<u8>(), len),
        )
    };
    let mut unsynced = unsynced();
    if !powered(&mut unsynced) {
        return ffi::SQLITE_IOERR_WRITE;
    }
    let changes = unsynced.entry(volatile.path.clone()).or_default();
    changes.push(Change::Write(offset, bytes.to_vec()));
    ffi::SQLITE_OK
}

unsafe extern "C" fn truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
    // SAFETY: SQLite calls this on a file opened by `open`.
    let volatile = unsafe { VolatileFile::from(file) };
    let mut unsynced = unsynced();
    if !powered(&mut unsynced) {
        return ffi::SQLITE_IOERR_TRUNCATE;
    }
    let changes = unsynced.entry(volatile.path.clone()).or_default();
    changes.push(Change::Truncate(size));
    ffi::SQLITE_OK
}

/// Writes the file's changes to the disk, then syncs it, as `fsync` does whichever descriptor
/// asks.
unsafe extern "C" fn sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    // SAFETY: SQLite calls this on a file opened by `open`.
    let volatile = unsafe { VolatileFile::from(file) };
    let mut unsynced = unsynced();
    if !powered(&mut unsynced) {
        return ffi::SQLITE_IOERR_FSYNC;
    }
    for change in unsynced.remove(&volatile.path).into_iter().flatten() {
        let code = volatile.apply(&change);
        if code != ffi::SQLITE_OK {
            return code;
        }
    }
    match volatile.methods().xSync {
        // SAFETY: `inner` is open.
        Some(sync) => unsafe { sync(volatile.inner, flags) },
        None => ffi::SQLITE_IOERR_FSYNC,
    }
}

unsafe extern "C" fn file_size(file: *mut ffi::sqlite3_file, out: *mut i64) -> c_int {
    // SAFETY: SQLite calls this on a file opened by `open`, with a valid out-pointer.
    let volatile = unsafe { VolatileFile::from(file) };
    let unsynced = unsynced();
    if CUT.load(Ordering::SeqCst) {
        return ffi::SQLITE_IOERR_FSTAT;
    }
    let mut size = match volatile.durable_size() {
        Ok(size) => size,
        Err(code) => return code,
    };
    for change in unsynced.get(&volatile.path).into_iter().flatten() {
        size = match change {
            Change::Write(at, bytes) => size.max(at + bytes.len() as i64),
            Change::Truncate(to) => *to,
        };
    }
    // SAFETY: as above.
    unsafe { *out = size };
    ffi::SQLITE_OK
}

unsafe extern "C" fn file_control(file: *mut ffi::sqlite3_file, op: c_int, arg: *mut c_void) -> c_int {
    // Hints that would have the platform's file grow on the disk behind the page cache.
    if op == ffi::SQLITE_FCNTL_SIZE_HINT || op == ffi::SQLITE_FCNTL_CHUNK_SIZE {
        return ffi::SQLITE_OK;
    }
    // SAFETY: SQLite calls this on a file opened by `open`.
    let volatile = unsafe { VolatileFile::from(file) };
    match volatile.methods().xFileControl {
        // SAFETY: forwarded as SQLite passed it.
        Some(control) => unsafe { control(volatile.inner, op, arg) },
        None => ffi::SQLITE_NOTFOUND,
    }
}

/// Forwards a method to the platform's file as it is: locks, shared memory, properties.
macro_rules! forwarded {
    ($name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty, $method:ident, $missing:expr) => {
        unsafe extern "C" fn $name(file: *mut ffi::sqlite3_file, $($arg: $ty),*) -> $ret {
            // SAFETY: SQLite calls this on a file opened by `open`; forwarded as it passed them.
            unsafe {
                let volatile = VolatileFile::from(file);
                match volatile.methods().$method {
                    Some(method) => method(volatile.inner, $($arg),*),
                    None => $missing,
                }
            }
        }
    };
}

forwarded!(lock(level: c_int) -> c_int, xLock, ffi::SQLITE_OK);
forwarded!(unlock(level: c_int) -> c_int, xUnlock, ffi::SQLITE_OK);
forwarded!(check_reserved_lock(out: *mut c_int) -> c_int, xCheckReservedLock, ffi::SQLITE_OK);
forwarded!(sector_size() -> c_int, xSectorSize, 4096);
forwarded!(device_characteristics() -> c_int, xDeviceCharacteristics, 0);
forwarded!(shm_map(region: c_int, size: c_int, extend: c_int, out: *mut *mut c_void) -> c_int, xShmMap, ffi::SQLITE_IOERR_SHMMAP);
forwarded!(shm_lock(offset: c_int, count: c_int, flags: c_int) -> c_int, xShmLock, ffi::SQLITE_IOERR_SHMLOCK);
forwarded!(shm_barrier() -> (), xShmBarrier, ());
forwarded!(shm_unmap(delete: c_int) -> c_int, xShmUnmap, ffi::SQLITE_OK);

unsafe extern "C" fn delete(vfs: *mut ffi::sqlite3_vfs, name: *const c_char, sync_dir: c_int) -> c_int {
    let mut unsynced = unsynced();
    if CUT.load(Ordering::SeqCst) {
        return ffi::SQLITE_IOERR_DELETE;
    }
    // SAFETY: SQLite passes a path; forwarded as it passed it.
    unsafe {
        let path = Path::new(std::ffi::OsStr::from_bytes(CStr::from_ptr(name).to_bytes()));
        unsynced.remove(path);
        let base = base(vfs);
        (*base)
            .xDelete
            .map_or(ffi::SQLITE_IOERR_DELETE, |delete| delete(base, name, sync_dir))
    }
}

/// Forwards one of the VFS's own methods to the platform's, unchanged.
macro_rules! to_base {
    ($name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty, $method:ident, $missing:expr) => {
        unsafe extern "C" fn $name(vfs: *mut ffi::sqlite3_vfs, $($arg: $ty),*) -> $ret {
            // SAFETY: forwarded as SQLite passed them, to the VFS this one wraps.
            unsafe {
                let base = base(vfs);
                (*base).$method.map_or($missing, |method| method(base, $($arg),*))
            }
        }
    };
}

to_base!(access(name: *const c_char, flags: c_int, out: *mut c_int) -> c_int, xAccess, ffi::SQLITE_IOERR_ACCESS);
to_base!(full_pathname(name: *const c_char, size: c_int, out: *mut c_char) -> c_int, xFullPathname, ffi::SQLITE_CANTOPEN);
to_base!(randomness(size: c_int, out: *mut c_char) -> c_int, xRandomness, 0);
to_base!(sleep(micros: c_int) -> c_int, xSleep, 0);
to_base!(current_time(out: *mut f64) -> c_int, xCurrentTime, ffi::SQLITE_ERROR);
to_base!(get_last_error(size: c_int, out: *mut c_char) -> c_int, xGetLastError, 0);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{Store, StoreOptions};
    use crate::sales::{NewSale, NewSaleLine, SaleAnswer, SaleOutcome};
    use crate::sessions::OpenSession;
    use crate::staff::PutStaff;
    use futures::future::join_all;
    use jiff::Timestamp;
    use std::collections::HashSet;
    use till_core::catalog::CatalogItem;
    use till_core::fiscal::FiscalKey;
    use till_core::grant::{GrantSet, Role};
    use till_core::ids::{RegisterId, SessionId, SkuId, StoreId, Subject, TransactionId};
    use till_core::money::{Cents, VatRate};
    use till_core::pricing::VatTotal;
    use till_core::sale::{SaleType, Tender, TenderMethod};
    use till_core::staff::StaffMember;

    /// Sales a run commits, in waves of [`WAVE`] sent at once: the writer commits each wave in
    /// a group commit or two, and the pause between waves lets the checkpointer copy some back.
    const SALES: usize = 48;
    const WAVE: usize = 8;

    fn at() -> Timestamp {
        "2026-03-02T10:00:00Z".parse().unwrap()
    }

    fn cents(value: i64) -> Cents {
        Cents::new(value).unwrap()
    }

    fn mug() -> SkuId {
        SkuId::parse(&format!("{:064x}", 1)).unwrap()
    }

    /// A sale of two mugs, paid by card.
    fn sale(n: usize) -> NewSale {
        let rate = VatRate::from_hundredths(2000).unwrap();
        NewSale {
            transaction_id: TransactionId::from_trusted(format!("t{n}")),
            event_id: format!("e{n}"),
            fingerprint: format!("f{n}"),
            kind: SaleType::Sale,
            number: format!("N{n}"),
            store_id: StoreId::from_trusted("s1".into()),
            seller_id: Subject::from_trusted("cashier".into()),
            customer_id: None,
            session_id: SessionId::from_trusted("x1".into()),
            register_id: RegisterId::from_trusted("r1".into()),
            lines: vec![NewSaleLine {
                line_id: "l1".into(),
                sku_id: Some(mug()),
                label: Some("Mug".into()),
                quantity: 2,
                unit_price: cents(1450),
                vat_rate: rate,
                gross: cents(2900),
                promotion: cents(0),
                declared: cents(0),
                ticket: cents(0),
                net: cents(2900),
            }],
            tenders: vec![Tender {
                id: "p1".into(),
                method: TenderMethod::Card,
                applied: cents(2900),
                presented: cents(2900),
                change: cents(0),
                forfeited: cents(0),
                reference: None,
            }],
            vat: vec![VatTotal {
                rate,
                total: cents(2900),
                vat: cents(483),
            }],
            subtotal: cents(2900),
            total: cents(2900),
            item_count: 2,
            change: cents(0),
            points_earned: 0,
            stock_moves: vec![(mug(), -2)],
            coupon_code: None,
            issued_at: None,
            emitted_at: at(),
            late: false,
            response: SaleAnswer::Ready(format!(r#"{{"id":"e{n}"}}"#)),
            spends_grant: None,
            adjustments: Vec::new(),
            original: None,
            stored_value: Default::default(),
            relies_on_groups: Default::default(),
            captures: Vec::new(),
            card_refunds: Vec::new(),
        }
    }

    /// The shop every run sells in: a key, an article, a cashier and an open session.
    async fn open_shop(store: &Store) {
        store.migrate().await.unwrap();
        store.start_maintenance().unwrap();
        let key = FiscalKey::from_secret_bytes(&[7; 32]).unwrap();
        store.use_fiscal_key(key, at()).await.unwrap();
        let mug = CatalogItem {
            sku_id: mug(),
            name: "Mug".into(),
            price: cents(1450),
            vat_rate: VatRate::from_hundredths(2000).unwrap(),
        };
        store.import_catalog(vec![mug], at()).await.unwrap();
        let cashier = PutStaff {
            subject: Subject::from_trusted("cashier".into()),
            member: StaffMember {
                display_name: "Cashier".into(),
                role: Role::Cashier,
                permissions: GrantSet::EMPTY,
                discount_limit: None,
            },
            pin_hash: Some("not a real hash".into()),
        };
        store.put_staff(cashier, at()).await.unwrap();
        let session = OpenSession {
            session_id: SessionId::from_trusted("x1".into()),
            token_hash: vec![1; 32],
            store_id: StoreId::from_trusted("s1".into()),
            register_id: RegisterId::from_trusted("r1".into()),
            cashier_subject: Subject::from_trusted("cashier".into()),
            opening_float: cents(0),
            opened_at: at(),
            expires_at: "2026-03-02T20:00:00Z".parse().unwrap(),
        };
        store.open_session(session).await.unwrap().unwrap();
    }

    /// Sells through a store in `dir`, with the power cut after `cut_after` writes, truncations
    /// and syncs of the sales (`None`: once they are done); answers the sales acknowledged, the
    /// operations seen, and a copy of the database's files as the disk held them after the cut.
    async fn sell_until_the_cut(dir: &Path, gathered_log: bool, cut_after: Option<i64>) -> (Vec<String>, i64, PathBuf) {
        let url = format!("sqlite://{}", dir.join("till.db").display());
        let options = StoreOptions {
            sqlite_gathered_log: gathered_log,
            ..StoreOptions::default()
        };
        power_on();
        let store = Store::connect_through(&url, &options, register()).await.unwrap();
        open_shop(&store).await;
        arm(cut_after);
        let mut acknowledged = Vec::new();
        for wave in 0..SALES / WAVE {
            let sales = (0..WAVE).map(|n| store.commit_sale(sale(wave * WAVE + n)));
            for (n, outcome) in join_all(sales).await.into_iter().enumerate() {
                if let Ok(SaleOutcome::Committed { .. }) = outcome {
                    acknowledged.push(format!("t{}", wave * WAVE + n));
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(40)).await;
        }
        let seen = cut();
        let after = dir.join("after-the-cut");
        std::fs::create_dir(&after).unwrap();
        for file in ["till.db", "till.db-wal"] {
            if dir.join(file).exists() {
                std::fs::copy(dir.join(file), after.join(file)).unwrap();
            }
        }
        drop(store);
        (acknowledged, seen, after)
    }

    /// The files after the cut: whole, with every acknowledged sale, each sale whole with its
    /// ticket, and a journal that verifies.
    async fn check_what_survived(after: &Path, acknowledged: &[String], case: &str) {
        let conn = rusqlite::Connection::open(after.join("till.db")).unwrap();
        let check: String = conn.query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap();
        assert_eq!(check, "ok", "{case}");
        let mut kept = HashSet::new();
        let mut sales = conn
            .prepare("SELECT transaction_id, line_count, packed FROM sales")
            .unwrap();
        let mut rows = sales.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            let id: String = row.get(0).unwrap();
            let packed: Vec<u8> = row.get(2).unwrap();
            let texts = crate::packed::unpack(&packed).unwrap();
            let detail = crate::sale_detail::SaleDetail::read(&texts.detail).unwrap();
            assert_eq!(detail.lines.len() as i64, row.get::<_, i64>(1).unwrap(), "{case}: {id}");
            kept.insert(id);
        }
        drop(rows);
        drop(sales);
        for id in acknowledged {
            assert!(kept.contains(id), "{case}: acknowledged sale {id} was lost");
        }
        let count = |sql: &str| conn.query_row(sql, [], |row| row.get::<_, i64>(0)).unwrap();
        let tickets = count("SELECT count(*) FROM fiscal_entries WHERE kind = 'ticket'");
        assert_eq!(tickets, kept.len() as i64, "{case}: a ticket for each sale");
        let unmatched = count(
            "SELECT count(*) FROM sales s WHERE NOT EXISTS (SELECT 1 FROM fiscal_entries e \
             WHERE e.kind = 'ticket' AND e.register_id = s.register_id AND e.seq = s.fiscal_seq \
                 AND e.reference = s.transaction_id)",
        );
        assert_eq!(unmatched, 0, "{case}: each sale with its own ticket");
        let stock = count(
            "SELECT (SELECT coalesce(sum(on_hand), 0) FROM stock) + (SELECT coalesce(sum(delta), 0) \
             FROM stock_movements WHERE movement_id > (SELECT folded_through FROM stock_fold))",
        );
        assert_eq!(stock, -2 * kept.len() as i64, "{case}: each sale's stock moved once");
        drop(conn);

        let url = format!("sqlite://{}", after.join("till.db").display());
        let store = Store::connect(&url, &StoreOptions::default()).await.unwrap();
        let journal = store.load_journal("r1").await.unwrap();
        if let Err(failure) = till_core::fiscal::audit::audit(&journal) {
            panic!("{case}: the journal fails its audit: {failure}");
        }
        store.close().await;
    }

    /// The next of a fixed sequence of numbers: the cut points are the same on every run.
    fn next(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// One test: the VFS's cut is the process's, so the runs take turns.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn acknowledged_sales_survive_a_power_cut_whole_and_the_journal_verifies() {
        let mut seed = 0x005e_ed0f_7111;
        for (gathered_log, cuts) in [(true, 12), (false, 4)] {
            let dir = tempfile::tempdir().unwrap();
            let (acknowledged, seen, after) = sell_until_the_cut(dir.path(), gathered_log, None).await;
            assert_eq!(acknowledged.len(), SALES, "without a cut every sale is acknowledged");
            check_what_survived(&after, &acknowledged, "no cut").await;
            for _ in 0..cuts {
                let cut_after = 1 + (next(&mut seed) % seen as u64) as i64;
                let case = format!("gathered log {gathered_log}, cut at operation {cut_after} of about {seen}");
                let dir = tempfile::tempdir().unwrap();
                let (acknowledged, _, after) = sell_until_the_cut(dir.path(), gathered_log, Some(cut_after)).await;
                check_what_survived(&after, &acknowledged, &case).await;
            }
        }
    }
}
