//! The key index's LMDB environment, called with the GIL held.
//!
//! A binding that lets go of the GIL around every call makes each call wait to take it
//! back while another thread computes: beside a busy applier a lookup of a few hundred
//! keys took hundreds of milliseconds instead of one. Here only the calls that may block
//! for long let go of it: beginning a write transaction (it waits for the writer lock)
//! and committing one (it syncs the file). Everything else is a memory-mapped B-tree walk.
//!
//! The shapes follow what the key index asks of LMDB: an environment of named databases,
//! read transactions reused from a few spare ones (a reader slot each, kept across uses),
//! one write transaction at a time, cursors with the operations the index's walks need,
//! and batch forms (`getmulti`, `putmulti`, `contains`) that do a run of keys in one call.

use std::ffi::{c_int, c_uint, CStr, CString};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use lmdb_master_sys as ffi;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

create_exception!(
    spark_replica_native,
    LmdbError,
    PyException,
    "An LMDB call failed."
);
create_exception!(
    spark_replica_native,
    MapFullError,
    LmdbError,
    "The environment's map is full: grow it and run the transaction again."
);

fn lmdb_error(rc: c_int, what: &str) -> PyErr {
    // SAFETY: mdb_strerror returns a static string for every code.
    let text = unsafe { CStr::from_ptr(ffi::mdb_strerror(rc)) }.to_string_lossy();
    let message = format!("{what}: {text}");
    if rc == ffi::MDB_MAP_FULL {
        MapFullError::new_err(message)
    } else {
        LmdbError::new_err(message)
    }
}

fn check(rc: c_int, what: &str) -> PyResult<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(lmdb_error(rc, what))
    }
}

fn val(bytes: &[u8]) -> ffi::MDB_val {
    ffi::MDB_val {
        mv_size: bytes.len(),
        mv_data: bytes.as_ptr() as *mut _,
    }
}

fn empty() -> ffi::MDB_val {
    ffi::MDB_val {
        mv_size: 0,
        mv_data: ptr::null_mut(),
    }
}

/// The bytes an `MDB_val` LMDB filled in points at, copied into a Python bytes object.
fn to_bytes<'py>(py: Python<'py>, value: &ffi::MDB_val) -> Bound<'py, PyBytes> {
    if value.mv_size == 0 {
        return PyBytes::new(py, b"");
    }
    // SAFETY: LMDB's value stays valid until the next write or the transaction's end; it is
    // copied before either can happen (the GIL is held).
    let slice = unsafe { std::slice::from_raw_parts(value.mv_data as *const u8, value.mv_size) };
    PyBytes::new(py, slice)
}

/// A raw pointer moved between threads: LMDB's read transactions are made with MDB_NOTLS
/// (not tied to a thread), and every use happens with the GIL held.
struct Raw<T>(*mut T);

// SAFETY: see `Raw`.
unsafe impl<T> Send for Raw<T> {}

/// What an environment and its transactions share.
struct Shared {
    env: *mut ffi::MDB_env,
    /// Read transactions reset after use, renewed by the next `begin`.
    spare: Mutex<Vec<Raw<ffi::MDB_txn>>>,
    max_spare: usize,
    /// Transactions begun and not yet ended: closing waits for none.
    open: AtomicUsize,
    closed: AtomicBool,
}

// SAFETY: the environment handle is thread-safe in LMDB; the rest is synchronised.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    fn check_open(&self) -> PyResult<*mut ffi::MDB_env> {
        if self.closed.load(Ordering::Acquire) {
            Err(LmdbError::new_err("the environment is closed"))
        } else {
            Ok(self.env)
        }
    }

    fn close(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        for txn in self
            .spare
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            // SAFETY: a reset read transaction of this environment, used by nobody.
            unsafe { ffi::mdb_txn_abort(txn.0) };
        }
        // SAFETY: no transaction is open (`Environment::close` checked) and none can begin.
        unsafe { ffi::mdb_env_close(self.env) };
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.close();
    }
}

fn stat_dict<'py>(py: Python<'py>, stat: &ffi::MDB_stat) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("psize", stat.ms_psize)?;
    dict.set_item("depth", stat.ms_depth)?;
    dict.set_item("branch_pages", stat.ms_branch_pages)?;
    dict.set_item("leaf_pages", stat.ms_leaf_pages)?;
    dict.set_item("overflow_pages", stat.ms_overflow_pages)?;
    dict.set_item("entries", stat.ms_entries)?;
    Ok(dict)
}

/// A named database of an environment.
#[pyclass(frozen, module = "spark_replica_native")]
pub struct Database {
    dbi: ffi::MDB_dbi,
}

/// An LMDB environment: a directory holding `data.mdb` and `lock.mdb`.
#[pyclass(frozen, module = "spark_replica_native")]
pub struct Environment {
    shared: Arc<Shared>,
}

#[pymethods]
impl Environment {
    /// Open (creating) the environment in the directory `path`. `sync`/`metasync`: each
    /// commit flushes the data/the meta page; `writemap`: writes go through a writable
    /// mapping of the file; `readahead`: let the kernel read ahead on page faults.
    #[new]
    #[pyo3(signature = (path, *, map_size, max_dbs, sync=true, metasync=true, readahead=true,
                        max_readers=126, max_spare_txns=1, writemap=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: &str,
        map_size: usize,
        max_dbs: c_uint,
        sync: bool,
        metasync: bool,
        readahead: bool,
        max_readers: c_uint,
        max_spare_txns: usize,
        writemap: bool,
    ) -> PyResult<Self> {
        let c_path = CString::new(path)
            .map_err(|_| LmdbError::new_err("the environment's path holds a NUL"))?;
        let mut flags = ffi::MDB_NOTLS;
        if !sync {
            flags |= ffi::MDB_NOSYNC;
        }
        if !metasync {
            flags |= ffi::MDB_NOMETASYNC;
        }
        if !readahead {
            flags |= ffi::MDB_NORDAHEAD;
        }
        if writemap {
            flags |= ffi::MDB_WRITEMAP;
        }
        let mut env: *mut ffi::MDB_env = ptr::null_mut();
        // SAFETY: plain LMDB set-up calls on a handle owned here; closed on any failure.
        unsafe {
            check(ffi::mdb_env_create(&mut env), "mdb_env_create")?;
            let raw = Raw(env);
            let rc = py.allow_threads(move || {
                let env = raw;
                let mut rc = ffi::mdb_env_set_mapsize(env.0, map_size);
                if rc == 0 {
                    rc = ffi::mdb_env_set_maxreaders(env.0, max_readers);
                }
                if rc == 0 {
                    rc = ffi::mdb_env_set_maxdbs(env.0, max_dbs);
                }
                if rc == 0 {
                    rc = ffi::mdb_env_open(env.0, c_path.as_ptr(), flags, 0o644);
                }
                rc
            });
            if rc != 0 {
                ffi::mdb_env_close(env);
                return Err(lmdb_error(rc, path));
            }
        }
        Ok(Environment {
            shared: Arc::new(Shared {
                env,
                spare: Mutex::new(Vec::new()),
                max_spare: max_spare_txns,
                open: AtomicUsize::new(0),
                closed: AtomicBool::new(false),
            }),
        })
    }

    /// The named database `name`, created if missing.
    fn open_db(&self, py: Python<'_>, name: &[u8]) -> PyResult<Database> {
        let c_name =
            CString::new(name).map_err(|_| LmdbError::new_err("a database name holds a NUL"))?;
        self.shared.open.fetch_add(1, Ordering::AcqRel); // as `begin`
        let opened = self.begin_write(py).and_then(|txn| {
            let mut dbi: ffi::MDB_dbi = 0;
            // SAFETY: a write transaction begun just now, committed or aborted here.
            unsafe {
                let rc = ffi::mdb_dbi_open(txn, c_name.as_ptr(), ffi::MDB_CREATE, &mut dbi);
                if rc != 0 {
                    ffi::mdb_txn_abort(txn);
                    return Err(lmdb_error(rc, "mdb_dbi_open"));
                }
                check(ffi::mdb_txn_commit(txn), "mdb_txn_commit")?;
            }
            Ok(Database { dbi })
        });
        self.shared.open.fetch_sub(1, Ordering::AcqRel);
        opened
    }

    /// A transaction: a read-only one (a snapshot of the last commit), or the write one.
    #[pyo3(signature = (*, write=false))]
    fn begin(&self, py: Python<'_>, write: bool) -> PyResult<Transaction> {
        // Counted before a write transaction lets go of the GIL to wait for LMDB's writer
        // lock: a `close` or `set_mapsize` meanwhile is refused, not run under it.
        self.shared.open.fetch_add(1, Ordering::AcqRel);
        let begun = if write {
            self.begin_write(py)
        } else {
            self.begin_read()
        };
        let txn = begun.inspect_err(|_| {
            self.shared.open.fetch_sub(1, Ordering::AcqRel);
        })?;
        Ok(Transaction {
            shared: self.shared.clone(),
            txn: AtomicPtr::new(txn),
            write,
        })
    }

    /// `map_size`, `last_pgno`, `last_txnid`, `max_readers`, `num_readers`.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let env = self.shared.check_open()?;
        let mut info = std::mem::MaybeUninit::<ffi::MDB_envinfo>::uninit();
        // SAFETY: an open environment; LMDB fills the struct.
        let info = unsafe {
            check(ffi::mdb_env_info(env, info.as_mut_ptr()), "mdb_env_info")?;
            info.assume_init()
        };
        let dict = PyDict::new(py);
        dict.set_item("map_size", info.me_mapsize)?;
        dict.set_item("last_pgno", info.me_last_pgno)?;
        dict.set_item("last_txnid", info.me_last_txnid)?;
        dict.set_item("max_readers", info.me_maxreaders)?;
        dict.set_item("num_readers", info.me_numreaders)?;
        Ok(dict)
    }

    /// `psize`, `depth`, `branch_pages`, `leaf_pages`, `overflow_pages`, `entries` of the
    /// main database.
    fn stat<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let env = self.shared.check_open()?;
        let mut stat = std::mem::MaybeUninit::<ffi::MDB_stat>::uninit();
        // SAFETY: an open environment; LMDB fills the struct.
        let stat = unsafe {
            check(ffi::mdb_env_stat(env, stat.as_mut_ptr()), "mdb_env_stat")?;
            stat.assume_init()
        };
        stat_dict(py, &stat)
    }

    /// Grow (or shrink) the map: no transaction of this process may be active.
    fn set_mapsize(&self, size: usize) -> PyResult<()> {
        let env = self.shared.check_open()?;
        if self.shared.open.load(Ordering::Acquire) != 0 {
            return Err(LmdbError::new_err(
                "the map cannot be resized while a transaction is open",
            ));
        }
        // SAFETY: an open environment without active transactions.
        check(
            unsafe { ffi::mdb_env_set_mapsize(env, size) },
            "mdb_env_set_mapsize",
        )
    }

    /// Close the environment (again: nothing). Every transaction must have ended.
    fn close(&self) -> PyResult<()> {
        if self.shared.open.load(Ordering::Acquire) != 0 {
            return Err(LmdbError::new_err(
                "the environment cannot close while a transaction is open",
            ));
        }
        self.shared.close();
        Ok(())
    }
}

impl Environment {
    fn begin_write(&self, py: Python<'_>) -> PyResult<*mut ffi::MDB_txn> {
        let env = Raw(self.shared.check_open()?);
        let (rc, txn) = py.allow_threads(move || {
            let env = env;
            let mut txn: *mut ffi::MDB_txn = ptr::null_mut();
            // SAFETY: an open environment; waits for the writer lock without the GIL.
            let rc = unsafe { ffi::mdb_txn_begin(env.0, ptr::null_mut(), 0, &mut txn) };
            (rc, Raw(txn))
        });
        check(rc, "mdb_txn_begin")?;
        Ok(txn.0)
    }

    fn begin_read(&self) -> PyResult<*mut ffi::MDB_txn> {
        let env = self.shared.check_open()?;
        let spare = self
            .shared
            .spare
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        if let Some(txn) = spare {
            // SAFETY: a reset read transaction of this environment: renewing keeps its slot.
            let rc = unsafe { ffi::mdb_txn_renew(txn.0) };
            if rc == 0 {
                return Ok(txn.0);
            }
            // SAFETY: as above; it could not be renewed, so it goes.
            unsafe { ffi::mdb_txn_abort(txn.0) };
        }
        let mut txn: *mut ffi::MDB_txn = ptr::null_mut();
        // SAFETY: an open environment.
        let rc = unsafe { ffi::mdb_txn_begin(env, ptr::null_mut(), ffi::MDB_RDONLY, &mut txn) };
        check(rc, "mdb_txn_begin")?;
        Ok(txn)
    }
}

/// A transaction; a read-only one goes back to the spare ones when it ends.
#[pyclass(frozen, module = "spark_replica_native")]
pub struct Transaction {
    shared: Arc<Shared>,
    txn: AtomicPtr<ffi::MDB_txn>,
    write: bool,
}

impl Transaction {
    fn live(&self) -> PyResult<*mut ffi::MDB_txn> {
        let txn = self.txn.load(Ordering::Acquire);
        if txn.is_null() {
            Err(LmdbError::new_err("the transaction has ended"))
        } else {
            Ok(txn)
        }
    }

    /// End the transaction: a write one committed or aborted, a read one kept as a spare.
    fn end(&self, py: Python<'_>, commit: bool) -> PyResult<()> {
        let txn = self.txn.swap(ptr::null_mut(), Ordering::AcqRel);
        if txn.is_null() {
            return Ok(());
        }
        let result = if !self.write {
            let mut spare = self.shared.spare.lock().unwrap_or_else(|e| e.into_inner());
            // SAFETY: a live read transaction; its cursors stay valid to close.
            unsafe {
                if spare.len() < self.shared.max_spare {
                    ffi::mdb_txn_reset(txn);
                    spare.push(Raw(txn));
                } else {
                    ffi::mdb_txn_abort(txn);
                }
            }
            Ok(())
        } else if commit {
            let raw = Raw(txn);
            // SAFETY: the live write transaction; the commit syncs without the GIL.
            let rc = py.allow_threads(move || {
                let raw = raw;
                unsafe { ffi::mdb_txn_commit(raw.0) }
            });
            check(rc, "mdb_txn_commit")
        } else {
            // SAFETY: the live write transaction.
            unsafe { ffi::mdb_txn_abort(txn) };
            Ok(())
        };
        self.shared.open.fetch_sub(1, Ordering::AcqRel);
        result
    }

    fn get_raw<'py>(
        &self,
        py: Python<'py>,
        key: &[u8],
        db: &Database,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let txn = self.live()?;
        let mut k = val(key);
        let mut v = empty();
        // SAFETY: a live transaction; `k` points at `key` for the call.
        let rc = unsafe { ffi::mdb_get(txn, db.dbi, &mut k, &mut v) };
        if rc == ffi::MDB_NOTFOUND {
            return Ok(None);
        }
        check(rc, "mdb_get")?;
        Ok(Some(to_bytes(py, &v)))
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        if !self.txn.load(Ordering::Acquire).is_null() {
            Python::with_gil(|py| {
                let _ = self.end(py, false);
            });
        }
    }
}

#[pymethods]
impl Transaction {
    /// LMDB's id of the snapshot (read) or of the transaction being written.
    fn id(&self) -> PyResult<usize> {
        // SAFETY: a live transaction.
        Ok(unsafe { ffi::mdb_txn_id(self.live()?) })
    }

    #[pyo3(signature = (key, *, db))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &[u8],
        db: &Database,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        self.get_raw(py, key, db)
    }

    /// Put `value` under `key`; with `overwrite=False` an existing key is left as it is and
    /// the answer is False.
    #[pyo3(signature = (key, value, *, db, overwrite=true))]
    fn put(&self, key: &[u8], value: &[u8], db: &Database, overwrite: bool) -> PyResult<bool> {
        let txn = self.live()?;
        let mut k = val(key);
        let mut v = val(value);
        let flags = if overwrite { 0 } else { ffi::MDB_NOOVERWRITE };
        // SAFETY: a live transaction (LMDB refuses a write in a read-only one).
        let rc = unsafe { ffi::mdb_put(txn, db.dbi, &mut k, &mut v, flags) };
        if rc == ffi::MDB_KEYEXIST {
            return Ok(false);
        }
        check(rc, "mdb_put")?;
        Ok(true)
    }

    /// Delete `key`; whether it was there.
    #[pyo3(signature = (key, *, db))]
    fn delete(&self, key: &[u8], db: &Database) -> PyResult<bool> {
        let txn = self.live()?;
        let mut k = val(key);
        // SAFETY: a live transaction.
        let rc = unsafe { ffi::mdb_del(txn, db.dbi, &mut k, ptr::null_mut()) };
        if rc == ffi::MDB_NOTFOUND {
            return Ok(false);
        }
        check(rc, "mdb_del")?;
        Ok(true)
    }

    /// Delete `key` and give what it held (None: it was not there).
    #[pyo3(signature = (key, *, db))]
    fn pop<'py>(
        &self,
        py: Python<'py>,
        key: &[u8],
        db: &Database,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let found = self.get_raw(py, key, db)?;
        if found.is_some() {
            self.delete(key, db)?;
        }
        Ok(found)
    }

    /// Empty the database (it stays open).
    #[pyo3(signature = (db, *, delete=false))]
    fn drop(&self, db: &Database, delete: bool) -> PyResult<()> {
        if delete {
            return Err(LmdbError::new_err("only emptying a database is supported"));
        }
        // SAFETY: a live transaction.
        check(
            unsafe { ffi::mdb_drop(self.live()?, db.dbi, 0) },
            "mdb_drop",
        )
    }

    /// The database's `stat` (as the environment's).
    fn stat<'py>(&self, py: Python<'py>, db: &Database) -> PyResult<Bound<'py, PyDict>> {
        let mut stat = std::mem::MaybeUninit::<ffi::MDB_stat>::uninit();
        // SAFETY: a live transaction; LMDB fills the struct.
        let stat = unsafe {
            check(
                ffi::mdb_stat(self.live()?, db.dbi, stat.as_mut_ptr()),
                "mdb_stat",
            )?;
            stat.assume_init()
        };
        stat_dict(py, &stat)
    }

    /// Every entry of the database, in key order.
    #[pyo3(signature = (*, db))]
    fn items<'py>(&self, py: Python<'py>, db: &Database) -> PyResult<Bound<'py, PyList>> {
        let cursor = RawCursor::open(self.live()?, db)?;
        let items = PyList::empty(py);
        let mut op = ffi::MDB_FIRST;
        while let Some((k, v)) = cursor.get(op, None)? {
            items.append(PyTuple::new(py, [to_bytes(py, &k), to_bytes(py, &v)])?)?;
            op = ffi::MDB_NEXT;
        }
        Ok(items)
    }

    /// A cursor on the database, unpositioned.
    #[pyo3(signature = (*, db))]
    fn cursor(slf: &Bound<'_, Self>, db: &Database) -> PyResult<Cursor> {
        let txn = slf.get().live()?;
        let raw = RawCursor::open(txn, db)?;
        let cursor = raw.0;
        std::mem::forget(raw);
        Ok(Cursor {
            txn: slf.clone().unbind(),
            cursor: AtomicPtr::new(cursor),
            positioned: AtomicBool::new(false),
        })
    }

    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        self.live()?;
        self.end(py, true)
    }

    fn abort(&self, py: Python<'_>) -> PyResult<()> {
        self.end(py, false)
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// Commit when the block ended normally, abort when it raised.
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: &Bound<'_, PyAny>,
        _exc: &Bound<'_, PyAny>,
        _tb: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        if exc_type.is_none() && !self.txn.load(Ordering::Acquire).is_null() {
            self.end(py, true)?;
        } else {
            self.end(py, false)?;
        }
        Ok(false)
    }
}

/// An LMDB cursor closed when dropped (the cursors of `items`).
struct RawCursor(*mut ffi::MDB_cursor);

impl RawCursor {
    fn open(txn: *mut ffi::MDB_txn, db: &Database) -> PyResult<Self> {
        let mut cursor: *mut ffi::MDB_cursor = ptr::null_mut();
        // SAFETY: a live transaction.
        check(
            unsafe { ffi::mdb_cursor_open(txn, db.dbi, &mut cursor) },
            "mdb_cursor_open",
        )?;
        Ok(RawCursor(cursor))
    }

    /// The entry the operation moves to, None when there is none.
    fn get(
        &self,
        op: ffi::MDB_cursor_op,
        key: Option<&[u8]>,
    ) -> PyResult<Option<(ffi::MDB_val, ffi::MDB_val)>> {
        get_at(self.0, op, key)
    }
}

impl Drop for RawCursor {
    fn drop(&mut self) {
        // SAFETY: the transaction is still live while the cursor of `items` is in use.
        unsafe { ffi::mdb_cursor_close(self.0) };
    }
}

fn get_at(
    cursor: *mut ffi::MDB_cursor,
    op: ffi::MDB_cursor_op,
    key: Option<&[u8]>,
) -> PyResult<Option<(ffi::MDB_val, ffi::MDB_val)>> {
    let mut k = key.map_or_else(empty, val);
    let mut v = empty();
    // SAFETY: a cursor of a live transaction; `k` points at `key` for the call.
    let rc = unsafe { ffi::mdb_cursor_get(cursor, &mut k, &mut v, op) };
    if rc == ffi::MDB_NOTFOUND {
        return Ok(None);
    }
    check(rc, "mdb_cursor_get")?;
    Ok(Some((k, v)))
}

/// The entry the cursor is on, None when on none (LMDB answers EINVAL for a cursor that
/// was never placed or whose database a delete emptied).
fn current_at(cursor: *mut ffi::MDB_cursor) -> PyResult<Option<(ffi::MDB_val, ffi::MDB_val)>> {
    let mut k = empty();
    let mut v = empty();
    // SAFETY: a cursor of a live transaction.
    let rc = unsafe { ffi::mdb_cursor_get(cursor, &mut k, &mut v, ffi::MDB_GET_CURRENT) };
    if rc == ffi::MDB_NOTFOUND || rc == libc::EINVAL {
        return Ok(None);
    }
    check(rc, "mdb_cursor_get")?;
    Ok(Some((k, v)))
}

/// A cursor of a transaction. `key()` and `value()` are those of the entry it is on (empty
/// bytes when it is on none); each move answers whether it is on one.
#[pyclass(frozen, module = "spark_replica_native")]
pub struct Cursor {
    txn: Py<Transaction>,
    cursor: AtomicPtr<ffi::MDB_cursor>,
    positioned: AtomicBool,
}

impl Cursor {
    fn live(&self, py: Python<'_>) -> PyResult<*mut ffi::MDB_cursor> {
        self.txn.bind(py).get().live()?;
        Ok(self.cursor.load(Ordering::Acquire))
    }

    fn go(&self, py: Python<'_>, op: ffi::MDB_cursor_op, key: Option<&[u8]>) -> PyResult<bool> {
        let found = get_at(self.live(py)?, op, key)?.is_some();
        self.positioned.store(found, Ordering::Release);
        Ok(found)
    }

    fn current(&self, py: Python<'_>) -> PyResult<Option<(ffi::MDB_val, ffi::MDB_val)>> {
        if !self.positioned.load(Ordering::Acquire) {
            return Ok(None);
        }
        current_at(self.live(py)?)
    }
}

impl Drop for Cursor {
    fn drop(&mut self) {
        let cursor = self.cursor.swap(ptr::null_mut(), Ordering::AcqRel);
        if cursor.is_null() {
            return;
        }
        Python::with_gil(|py| {
            let txn = self.txn.bind(py).get();
            // A read-only transaction's cursor is closed before or after the transaction
            // ends; a write transaction's cursors are freed with it.
            if !txn.write || !txn.txn.load(Ordering::Acquire).is_null() {
                // SAFETY: see above.
                unsafe { ffi::mdb_cursor_close(cursor) };
            }
        });
    }
}

#[pymethods]
impl Cursor {
    fn key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(match self.current(py)? {
            Some((k, _)) => to_bytes(py, &k),
            None => PyBytes::new(py, b""),
        })
    }

    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(match self.current(py)? {
            Some((_, v)) => to_bytes(py, &v),
            None => PyBytes::new(py, b""),
        })
    }

    fn first(&self, py: Python<'_>) -> PyResult<bool> {
        self.go(py, ffi::MDB_FIRST, None)
    }

    fn last(&self, py: Python<'_>) -> PyResult<bool> {
        self.go(py, ffi::MDB_LAST, None)
    }

    /// The next entry (the first when on none).
    fn next(&self, py: Python<'_>) -> PyResult<bool> {
        self.go(py, ffi::MDB_NEXT, None)
    }

    /// The entry before (the last when on none).
    fn prev(&self, py: Python<'_>) -> PyResult<bool> {
        self.go(py, ffi::MDB_PREV, None)
    }

    /// The entry of exactly `key`.
    fn set_key(&self, py: Python<'_>, key: &[u8]) -> PyResult<bool> {
        if key.is_empty() {
            self.positioned.store(false, Ordering::Release);
            return Ok(false);
        }
        self.go(py, ffi::MDB_SET_KEY, Some(key))
    }

    /// The first entry at or after `key`.
    fn set_range(&self, py: Python<'_>, key: &[u8]) -> PyResult<bool> {
        if key.is_empty() {
            return self.first(py);
        }
        self.go(py, ffi::MDB_SET_RANGE, Some(key))
    }

    /// Delete the entry the cursor is on, which moves it to the next one; whether there
    /// was one to delete.
    fn delete(&self, py: Python<'_>) -> PyResult<bool> {
        let cursor = self.live(py)?;
        if !self.positioned.load(Ordering::Acquire) {
            return Ok(false);
        }
        // SAFETY: a cursor of a live transaction, on an entry.
        check(unsafe { ffi::mdb_cursor_del(cursor, 0) }, "mdb_cursor_del")?;
        let on = current_at(cursor)?.is_some();
        self.positioned.store(on, Ordering::Release);
        Ok(true)
    }

    /// The `(key, value)` of each of `keys` that is there, in their order.
    fn getmulti<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let cursor = self.live(py)?;
        let found = PyList::empty(py);
        for key in keys.try_iter()? {
            let key = key?;
            let raw = key.downcast::<PyBytes>()?.as_bytes();
            let entry = get_at(cursor, ffi::MDB_SET_KEY, Some(raw))?;
            self.positioned.store(entry.is_some(), Ordering::Release);
            if let Some((_, v)) = entry {
                found.append(PyTuple::new(py, [key, to_bytes(py, &v).into_any()])?)?;
            }
        }
        Ok(found)
    }

    /// Whether each of `keys` is there (a key past `above`, when given, is not looked up:
    /// it is not there).
    #[pyo3(signature = (keys, *, above=None))]
    fn contains<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyList>,
        above: Option<&[u8]>,
    ) -> PyResult<Bound<'py, PyList>> {
        let cursor = self.live(py)?;
        let answers = PyList::empty(py);
        for key in keys.iter() {
            let raw = key.downcast::<PyBytes>()?.as_bytes();
            let there = match above {
                Some(top) if raw > top => false,
                _ => {
                    let there = get_at(cursor, ffi::MDB_SET, Some(raw))?.is_some();
                    self.positioned.store(there, Ordering::Release);
                    there
                }
            };
            answers.append(there)?;
        }
        Ok(answers)
    }

    /// Put each `(key, value)` of `items`; with `overwrite=False` a key already there is
    /// left as it is, with `append=True` a key not after the last is refused (not added).
    /// `(items consumed, items added)`.
    #[pyo3(signature = (items, *, overwrite=true, append=false))]
    fn putmulti(
        &self,
        py: Python<'_>,
        items: &Bound<'_, PyAny>,
        overwrite: bool,
        append: bool,
    ) -> PyResult<(usize, usize)> {
        let cursor = self.live(py)?;
        let mut flags = 0;
        if !overwrite {
            flags |= ffi::MDB_NOOVERWRITE;
        }
        if append {
            flags |= ffi::MDB_APPEND;
        }
        let (mut consumed, mut added) = (0, 0);
        for item in items.try_iter()? {
            let item = item?;
            let pair = item.downcast::<PyTuple>()?;
            if pair.len() != 2 {
                return Err(LmdbError::new_err("putmulti takes (key, value) pairs"));
            }
            let key = pair.get_borrowed_item(0)?;
            let value = pair.get_borrowed_item(1)?;
            let mut k = val(key.downcast::<PyBytes>()?.as_bytes());
            let mut v = val(value.downcast::<PyBytes>()?.as_bytes());
            // SAFETY: a cursor of a live write transaction; `k`/`v` point at live bytes.
            let rc = unsafe { ffi::mdb_cursor_put(cursor, &mut k, &mut v, flags) };
            consumed += 1;
            if rc == ffi::MDB_KEYEXIST {
                continue;
            }
            check(rc, "mdb_cursor_put")?;
            added += 1;
        }
        self.positioned.store(consumed > 0, Ordering::Release);
        Ok((consumed, added))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Environment>()?;
    m.add_class::<Database>()?;
    m.add_class::<Transaction>()?;
    m.add_class::<Cursor>()?;
    m.add("LmdbError", m.py().get_type::<LmdbError>())?;
    m.add("MapFullError", m.py().get_type::<MapFullError>())?;
    Ok(())
}
