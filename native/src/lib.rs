//! The native core of spark-replica's hot paths: the key index's row and key encodings
//! (`spark_replica.applier_core.storage.key_index.codec`), in the formats the Python codec
//! writes and reads, and its LMDB environment (`lmdb`).
//!
//! Each function returns `None` for a value it does not handle (a subclass of a plain type,
//! an aware datetime, a string with lone surrogates, ...): the Python codec then encodes the
//! whole row or key itself, so both always agree on what the bytes mean.

use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{
    PyBool, PyBytes, PyDate, PyDateAccess, PyDateTime, PyDelta, PyDeltaAccess, PyDict, PyFloat,
    PyFrozenSet, PyInt, PyList, PySet, PyString, PyTime, PyTimeAccess, PyTuple, PyType,
    PyTzInfoAccess,
};

mod key;
mod lmdb;
mod marshal;

/// `decimal.Decimal`, looked up once.
static DECIMAL: GILOnceCell<Py<PyType>> = GILOnceCell::new();

fn is_decimal(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = value.py();
    let decimal = DECIMAL.import(py, "decimal", "Decimal")?;
    Ok(value.get_type().is(decimal))
}

/// What a value is, by its exact type (a subclass is `Other`).
enum Kind {
    None,
    Bool,
    Int,
    Float,
    Str,
    Bytes,
    Tuple,
    List,
    Set,
    FrozenSet,
    Dict,
    Date,
    DateTime,
    Time,
    Delta,
    Decimal,
    Other,
}

fn kind_of(value: &Bound<'_, PyAny>) -> PyResult<Kind> {
    Ok(if value.is_none() {
        Kind::None
    } else if value.is_exact_instance_of::<PyInt>() {
        Kind::Int
    } else if value.is_exact_instance_of::<PyString>() {
        Kind::Str
    } else if value.is_exact_instance_of::<PyFloat>() {
        Kind::Float
    } else if value.is_exact_instance_of::<PyBytes>() {
        Kind::Bytes
    } else if value.is_exact_instance_of::<PyBool>() {
        Kind::Bool
    } else if value.is_exact_instance_of::<PyDate>() {
        Kind::Date
    } else if value.is_exact_instance_of::<PyDateTime>() {
        Kind::DateTime
    } else if value.is_exact_instance_of::<PyTuple>() {
        Kind::Tuple
    } else if value.is_exact_instance_of::<PyList>() {
        Kind::List
    } else if value.is_exact_instance_of::<PyTime>() {
        Kind::Time
    } else if value.is_exact_instance_of::<PyDelta>() {
        Kind::Delta
    } else if value.is_exact_instance_of::<PyFrozenSet>() {
        Kind::FrozenSet
    } else if value.is_exact_instance_of::<PySet>() {
        Kind::Set
    } else if value.is_exact_instance_of::<PyDict>() {
        Kind::Dict
    } else if is_decimal(value)? {
        Kind::Decimal
    } else {
        Kind::Other
    })
}

/// The proleptic Gregorian ordinal of a date (`date.toordinal`).
fn ordinal(year: i32, month: u8, day: u8) -> i64 {
    const BEFORE_MONTH: [i64; 13] = [0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let y = i64::from(year) - 1;
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let mut days = y * 365 + y / 4 - y / 100 + y / 400 + BEFORE_MONTH[usize::from(month)];
    if leap && month > 2 {
        days += 1;
    }
    days + i64::from(day)
}

fn date_parts(value: &Bound<'_, PyAny>) -> PyResult<(i32, u8, u8)> {
    let date = value.downcast::<PyDate>()?;
    Ok((date.get_year(), date.get_month(), date.get_day()))
}

/// A time of day: a datetime's or a time's.
struct TimeParts {
    hour: u8,
    minute: u8,
    second: u8,
    micro: u32,
    fold: bool,
    aware: bool,
}

fn clock<'py>(value: &(impl PyTimeAccess + PyTzInfoAccess<'py>)) -> TimeParts {
    TimeParts {
        hour: value.get_hour(),
        minute: value.get_minute(),
        second: value.get_second(),
        micro: value.get_microsecond(),
        fold: value.get_fold(),
        aware: value.get_tzinfo().is_some(),
    }
}

fn datetime_parts(value: &Bound<'_, PyAny>) -> PyResult<((i32, u8, u8), TimeParts)> {
    let moment = value.downcast::<PyDateTime>()?;
    Ok((
        (moment.get_year(), moment.get_month(), moment.get_day()),
        clock(moment),
    ))
}

fn time_parts(value: &Bound<'_, PyAny>) -> PyResult<TimeParts> {
    Ok(clock(value.downcast::<PyTime>()?))
}

fn delta_parts(value: &Bound<'_, PyAny>) -> PyResult<(i32, i32, i32)> {
    let delta = value.downcast::<PyDelta>()?;
    Ok((
        delta.get_days(),
        delta.get_seconds(),
        delta.get_microseconds(),
    ))
}

/// A row as the key index stores it (`codec.encode_row`'s format: marshal, its temporal and
/// decimal values as parts); None when the Python codec must encode it.
#[pyfunction]
fn encode_row<'py>(row: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let Ok(row) = row.downcast_exact::<PyTuple>() else {
        return Ok(None);
    };
    Ok(marshal::row(row)?.map(|data| PyBytes::new(row.py(), &data)))
}

/// A key's deterministic bytes and whether they give the values back exactly
/// (`codec.key_bytes`); None when the Python codec must encode it.
#[pyfunction]
fn key_bytes<'py>(values: &Bound<'py, PyAny>) -> PyResult<Option<(Bound<'py, PyBytes>, bool)>> {
    let Ok(values) = values.downcast_exact::<PyTuple>() else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(16 * values.len());
    Ok(key::values(values.iter(), &mut out, 0)?
        .map(|exact| (PyBytes::new(values.py(), &out), exact)))
}

/// `key_bytes`'s bytes alone (the key index's lookups).
#[pyfunction]
fn encode_key<'py>(values: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let Ok(values) = values.downcast_exact::<PyTuple>() else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(16 * values.len());
    Ok(key::values(values.iter(), &mut out, 0)?.map(|_| PyBytes::new(values.py(), &out)))
}

/// The data keys of `keys` in a table whose entries start with `prefix` (the key index's
/// `prefix + stored_key(encode_key(key))`); None when one of them is `limit` bytes or
/// longer (stored with a digest) or one the Python codec must encode.
#[pyfunction]
fn stored_keys<'py>(
    prefix: &[u8],
    keys: &Bound<'py, PyList>,
    limit: usize,
) -> PyResult<Option<Vec<Bound<'py, PyBytes>>>> {
    let py = keys.py();
    let mut found = Vec::with_capacity(keys.len());
    let mut out = Vec::with_capacity(64);
    for key in keys.iter() {
        out.clear();
        out.extend_from_slice(prefix);
        if !stored_key(&key, &mut out, prefix.len(), limit)? {
            return Ok(None);
        }
        found.push(PyBytes::new(py, &out));
    }
    Ok(Some(found))
}

/// Writes a key's bytes after the prefix in `out`; false when the Python codec must.
fn stored_key(
    key: &Bound<'_, PyAny>,
    out: &mut Vec<u8>,
    start: usize,
    limit: usize,
) -> PyResult<bool> {
    let Ok(values) = key.downcast_exact::<PyTuple>() else {
        return Ok(false);
    };
    Ok(key::values(values.iter(), out, 0)?.is_some() && out.len() - start < limit)
}

/// A data key and its value (None: a delete).
type Entry<'py> = (Bound<'py, PyBytes>, Option<Bound<'py, PyBytes>>);

/// A keyed table's changes as data entries (`(key, row or None)` items): each item's data
/// key and its value (the encoded row, None for a delete), sorted by data key; None when
/// one of them needs the Python codec (see `stored_keys`, `encode_row`).
#[pyfunction]
fn keyed_entries<'py>(
    prefix: &[u8],
    items: &Bound<'py, PyList>,
    limit: usize,
) -> PyResult<Option<Vec<Entry<'py>>>> {
    let py = items.py();
    let mut entries: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::with_capacity(items.len());
    for item in items.iter() {
        let Ok(pair) = item.downcast_exact::<PyTuple>() else {
            return Ok(None);
        };
        if pair.len() != 2 {
            return Ok(None);
        }
        let mut stored = Vec::with_capacity(prefix.len() + 16);
        stored.extend_from_slice(prefix);
        if !stored_key(&pair.get_item(0)?, &mut stored, prefix.len(), limit)? {
            return Ok(None);
        }
        let row = pair.get_item(1)?;
        let value = if row.is_none() {
            None
        } else {
            let Ok(row) = row.downcast_exact::<PyTuple>() else {
                return Ok(None);
            };
            let Some(encoded) = marshal::row(row)? else {
                return Ok(None);
            };
            Some(encoded)
        };
        entries.push((stored, value));
    }
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(Some(
        entries
            .into_iter()
            .map(|(stored, value)| {
                (
                    PyBytes::new(py, &stored),
                    value.map(|v| PyBytes::new(py, &v)),
                )
            })
            .collect(),
    ))
}

#[pymodule]
fn spark_replica_native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(encode_row, module)?)?;
    module.add_function(wrap_pyfunction!(key_bytes, module)?)?;
    module.add_function(wrap_pyfunction!(encode_key, module)?)?;
    module.add_function(wrap_pyfunction!(stored_keys, module)?)?;
    module.add_function(wrap_pyfunction!(keyed_entries, module)?)?;
    lmdb::register(module)?;
    Ok(())
}
