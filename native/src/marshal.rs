//! Rows in Python's marshal format (version 4, without references), as `marshal.loads`
//! reads them; temporal and decimal values as the Python codec's parts.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyFrozenSet, PyList, PySet, PyString, PyTuple};

use crate::{
    date_parts, datetime_parts, delta_parts, kind_of, ordinal, time_parts, Kind, TimeParts,
};

const NONE: u8 = b'N';
const FALSE: u8 = b'F';
const TRUE: u8 = b'T';
const INT: u8 = b'i';
const LONG: u8 = b'l';
const BINARY_FLOAT: u8 = b'g';
const STRING: u8 = b's';
const UNICODE: u8 = b'u';
const ASCII: u8 = b'a';
const SHORT_ASCII: u8 = b'z';
const TUPLE: u8 = b'(';
const SMALL_TUPLE: u8 = b')';
const LIST: u8 = b'[';
const DICT: u8 = b'{';
const NULL: u8 = b'0';
const SET: u8 = b'<';
const FROZENSET: u8 = b'>';

/// The codec's part tags (`codec._DATE_PART` ...).
const DATE_PART: i64 = 0;
const DATETIME_PART: i64 = 1;
const TIME_PART: i64 = 2;
const TIMEDELTA_PART: i64 = 3;
const DECIMAL_PART: i64 = 4;

/// Nesting of lists and tuples in a value before the Python codec takes over.
const MAX_DEPTH: usize = 32;

/// `codec.encode_row`: the row as a tuple, or as ``[values, {position: (tag, parts)}]``
/// when it holds temporal or decimal values; None when the Python codec must encode it.
pub(crate) fn row(row: &Bound<'_, PyTuple>) -> PyResult<Option<Vec<u8>>> {
    let mut values = Vec::with_capacity(64);
    let mut parts: Vec<u8> = Vec::new();
    let mut part_count = 0usize;
    for (position, value) in row.iter().enumerate() {
        if plain(&value, &mut values, 0)? {
            continue;
        }
        let Some(()) = part(&value, position, &mut parts)? else {
            return Ok(None);
        };
        values.push(NONE);
        part_count += 1;
    }
    let size = row.len();
    let mut out = Vec::with_capacity(values.len() + parts.len() + 16);
    if part_count == 0 {
        sequence_head(&mut out, size, true);
        out.extend_from_slice(&values);
    } else {
        out.push(LIST);
        length(&mut out, 2);
        out.push(LIST);
        length(&mut out, size);
        out.extend_from_slice(&values);
        out.push(DICT);
        out.extend_from_slice(&parts);
        out.push(NULL);
    }
    Ok(Some(out))
}

/// Writes a value marshal holds as it is; false (nothing written) when it does not.
fn plain(value: &Bound<'_, PyAny>, out: &mut Vec<u8>, depth: usize) -> PyResult<bool> {
    match kind_of(value)? {
        Kind::None => out.push(NONE),
        Kind::Bool => out.push(if value.is_truthy()? { TRUE } else { FALSE }),
        Kind::Int => return int(value, out),
        Kind::Float => {
            out.push(BINARY_FLOAT);
            out.extend_from_slice(&value.extract::<f64>()?.to_le_bytes());
        }
        Kind::Str => return string(value.downcast::<PyString>()?, out),
        Kind::Bytes => {
            let data = value.downcast::<PyBytes>()?.as_bytes();
            out.push(STRING);
            length(out, data.len());
            out.extend_from_slice(data);
        }
        Kind::Tuple | Kind::List | Kind::Set | Kind::FrozenSet if depth < MAX_DEPTH => {
            let start = out.len();
            let items: Vec<Bound<'_, PyAny>> = match kind_of(value)? {
                Kind::Tuple => {
                    let tuple = value.downcast::<PyTuple>()?;
                    sequence_head(out, tuple.len(), true);
                    tuple.iter().collect()
                }
                Kind::List => {
                    let list = value.downcast::<PyList>()?;
                    out.push(LIST);
                    length(out, list.len());
                    list.iter().collect()
                }
                Kind::Set => {
                    let set = value.downcast::<PySet>()?;
                    out.push(SET);
                    length(out, set.len());
                    set.iter().collect()
                }
                _ => {
                    let set = value.downcast::<PyFrozenSet>()?;
                    out.push(FROZENSET);
                    length(out, set.len());
                    set.iter().collect()
                }
            };
            for item in &items {
                if !plain(item, out, depth + 1)? {
                    out.truncate(start);
                    return Ok(false);
                }
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn int(value: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> PyResult<bool> {
    let Ok(number) = value.extract::<i128>() else {
        return Ok(false); // beyond 128 bits: the Python codec
    };
    if let Ok(small) = i32::try_from(number) {
        out.push(INT);
        out.extend_from_slice(&small.to_le_bytes());
        return Ok(true);
    }
    // 15-bit digits, least significant first; the count carries the sign.
    let mut magnitude = number.unsigned_abs();
    let mut digits: Vec<u16> = Vec::with_capacity(9);
    while magnitude != 0 {
        digits.push((magnitude & 0x7fff) as u16);
        magnitude >>= 15;
    }
    let count = digits.len() as i32;
    out.push(LONG);
    out.extend_from_slice(&(if number < 0 { -count } else { count }).to_le_bytes());
    for digit in digits {
        out.extend_from_slice(&digit.to_le_bytes());
    }
    Ok(true)
}

fn string(value: &Bound<'_, PyString>, out: &mut Vec<u8>) -> PyResult<bool> {
    let Ok(text) = value.to_str() else {
        return Ok(false); // lone surrogates: the Python codec
    };
    let data = text.as_bytes();
    if data.is_ascii() {
        if data.len() < 256 {
            out.push(SHORT_ASCII);
            out.push(data.len() as u8);
        } else {
            out.push(ASCII);
            length(out, data.len());
        }
    } else {
        out.push(UNICODE);
        length(out, data.len());
    }
    out.extend_from_slice(data);
    Ok(true)
}

/// Writes ``position: (tag, parts)`` of a temporal or decimal value into the parts
/// dictionary; None when the value is not one the parts hold.
fn part(value: &Bound<'_, PyAny>, position: usize, out: &mut Vec<u8>) -> PyResult<Option<()>> {
    let mut entry = Vec::with_capacity(48);
    small_int(&mut entry, position as i64);
    sequence_head(&mut entry, 2, true);
    match kind_of(value)? {
        Kind::Date => {
            let (year, month, day) = date_parts(value)?;
            small_int(&mut entry, DATE_PART);
            small_int(&mut entry, ordinal(year, month, day));
        }
        Kind::DateTime => {
            let ((year, month, day), time) = datetime_parts(value)?;
            if time.aware {
                return Ok(None);
            }
            small_int(&mut entry, DATETIME_PART);
            sequence_head(&mut entry, 8, true);
            for field in [i64::from(year), i64::from(month), i64::from(day)] {
                small_int(&mut entry, field);
            }
            clock_fields(&mut entry, &time);
        }
        Kind::Time => {
            let time = time_parts(value)?;
            if time.aware {
                return Ok(None);
            }
            small_int(&mut entry, TIME_PART);
            sequence_head(&mut entry, 5, true);
            clock_fields(&mut entry, &time);
        }
        Kind::Delta => {
            let (days, seconds, micro) = delta_parts(value)?;
            small_int(&mut entry, TIMEDELTA_PART);
            sequence_head(&mut entry, 3, true);
            for field in [days, seconds, micro] {
                small_int(&mut entry, i64::from(field));
            }
        }
        Kind::Decimal => {
            small_int(&mut entry, DECIMAL_PART);
            if !string(&value.str()?, &mut entry)? {
                return Ok(None);
            }
        }
        _ => return Ok(None),
    }
    out.extend_from_slice(&entry);
    Ok(Some(()))
}

/// Hour, minute, second, microsecond and fold, as ints.
fn clock_fields(out: &mut Vec<u8>, time: &TimeParts) {
    for field in [time.hour, time.minute, time.second] {
        small_int(out, i64::from(field));
    }
    small_int(out, i64::from(time.micro));
    small_int(out, i64::from(time.fold));
}

/// An int known to fit 32 bits (positions, tags, date fields, ordinals).
fn small_int(out: &mut Vec<u8>, value: i64) {
    out.push(INT);
    out.extend_from_slice(&(value as i32).to_le_bytes());
}

fn sequence_head(out: &mut Vec<u8>, size: usize, tuple: bool) {
    if tuple && size < 256 {
        out.push(SMALL_TUPLE);
        out.push(size as u8);
    } else {
        out.push(if tuple { TUPLE } else { LIST });
        length(out, size);
    }
}

fn length(out: &mut Vec<u8>, size: usize) {
    out.extend_from_slice(&(size as u32).to_le_bytes());
}
