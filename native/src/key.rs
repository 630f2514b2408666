//! Keys in the key index's deterministic, tagged encoding (`codec.key_bytes`): equal keys,
//! equal bytes; integers big-endian with negative numbers first.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::{date_parts, datetime_parts, delta_parts, kind_of, time_parts, Kind};

const NONE: u8 = 0x00;
const NEG_INT: u8 = 0x01;
const INT: u8 = 0x02;
const BIG_INT: u8 = 0x03;
const FLOAT: u8 = 0x04;
const STR: u8 = 0x06;
const BYTES: u8 = 0x07;
const DATE: u8 = 0x08;
const DATETIME: u8 = 0x09;
const TIME: u8 = 0x0B;
const TIMEDELTA: u8 = 0x0C;
const TUPLE: u8 = 0x0D;
const LIST: u8 = 0x0E;

const MAX_DEPTH: usize = 32;
const U64: i128 = 1 << 64;

/// Encodes each value; whether the encoding is exact, None when the Python codec must
/// encode the key (a Decimal, an aware datetime, a subclass, ...).
pub(crate) fn values<'py>(
    values: impl Iterator<Item = Bound<'py, PyAny>>,
    out: &mut Vec<u8>,
    depth: usize,
) -> PyResult<Option<bool>> {
    let mut exact = true;
    for value in values {
        match value_into(&value, out, depth)? {
            None => return Ok(None),
            Some(false) => exact = false,
            Some(true) => {}
        }
    }
    Ok(Some(exact))
}

fn value_into(value: &Bound<'_, PyAny>, out: &mut Vec<u8>, depth: usize) -> PyResult<Option<bool>> {
    match kind_of(value)? {
        Kind::None => out.push(NONE),
        Kind::Bool => {
            int(i128::from(value.is_truthy()?), out);
            return Ok(Some(false));
        }
        Kind::Int => match value.extract::<i128>() {
            Ok(number) if (-U64..U64).contains(&number) => int(number, out),
            _ => text(BIG_INT, value.str()?.to_str()?.as_bytes(), out),
        },
        Kind::Float => {
            let number = value.extract::<f64>()?;
            out.push(FLOAT);
            if number == 0.0 && number.is_sign_negative() {
                out.extend_from_slice(&0.0f64.to_be_bytes());
                return Ok(Some(false));
            }
            out.extend_from_slice(&number.to_be_bytes());
        }
        Kind::Str => {
            let Ok(data) = value.downcast::<PyString>()?.to_str() else {
                return Ok(None); // lone surrogates: the Python codec
            };
            text(STR, data.as_bytes(), out);
        }
        Kind::Bytes => text(BYTES, value.downcast::<PyBytes>()?.as_bytes(), out),
        Kind::Date => {
            let (year, month, day) = date_parts(value)?;
            out.push(DATE);
            out.extend_from_slice(&(year as u16).to_be_bytes());
            out.extend_from_slice(&[month, day]);
        }
        Kind::DateTime => {
            let ((year, month, day), time) = datetime_parts(value)?;
            if time.aware {
                return Ok(None); // as its UTC instant: the Python codec
            }
            out.push(DATETIME);
            out.extend_from_slice(&(year as u16).to_be_bytes());
            out.extend_from_slice(&[month, day, time.hour, time.minute, time.second]);
            out.extend_from_slice(&time.micro.to_be_bytes());
            return Ok(Some(!time.fold));
        }
        Kind::Time => {
            let time = time_parts(value)?;
            out.push(TIME);
            out.extend_from_slice(&[time.hour, time.minute, time.second]);
            out.extend_from_slice(&time.micro.to_be_bytes());
            return Ok(Some(!time.aware && !time.fold));
        }
        Kind::Delta => {
            let (days, seconds, micro) = delta_parts(value)?;
            out.push(TIMEDELTA);
            out.extend_from_slice(&days.to_be_bytes());
            out.extend_from_slice(&(seconds as u32).to_be_bytes());
            out.extend_from_slice(&(micro as u32).to_be_bytes());
        }
        Kind::Tuple if depth < MAX_DEPTH => {
            let tuple = value.downcast::<PyTuple>()?;
            out.push(TUPLE);
            out.extend_from_slice(&(tuple.len() as u32).to_be_bytes());
            return values(tuple.iter(), out, depth + 1);
        }
        Kind::List if depth < MAX_DEPTH => {
            let list = value.downcast::<PyList>()?;
            out.push(LIST);
            out.extend_from_slice(&(list.len() as u32).to_be_bytes());
            return values(list.iter(), out, depth + 1);
        }
        _ => return Ok(None),
    }
    Ok(Some(true))
}

fn int(number: i128, out: &mut Vec<u8>) {
    if number >= 0 {
        out.push(INT);
        out.extend_from_slice(&(number as u64).to_be_bytes());
    } else {
        out.push(NEG_INT);
        out.extend_from_slice(&((number + U64) as u64).to_be_bytes());
    }
}

fn text(tag: u8, data: &[u8], out: &mut Vec<u8>) {
    out.push(tag);
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(data);
}
