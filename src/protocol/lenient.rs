//! Gson-like leniency: `null` means "keep the default", numbers may arrive as strings and vice
//! versa, as the Java peers' Gson reads them.

use serde::de::{Deserialize, Deserializer, Error};
use serde_json::{Number, Value};

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn integral(f: f64) -> Option<i64> {
    // 2^63 is exactly representable, so this bound keeps the cast in range.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    (f.is_finite() && f.fract() == 0.0 && (-LIMIT..LIMIT).contains(&f)).then_some(f as i64)
}

fn number_to_i64(n: &Number) -> Option<i64> {
    n.as_i64().or_else(|| n.as_f64().and_then(integral))
}

fn value_to_i64<E: Error>(v: Value) -> Result<Option<i64>, E> {
    let parsed = match &v {
        Value::Null => return Ok(None),
        Value::Number(n) => number_to_i64(n),
        Value::String(s) => {
            let t = s.trim();
            t.parse::<i64>()
                .ok()
                .or_else(|| t.parse::<f64>().ok().and_then(integral))
        }
        _ => None,
    };
    match parsed {
        Some(i) => Ok(Some(i)),
        None => Err(E::custom(match &v {
            Value::Number(n) => format!("expected an integer, found {n}"),
            Value::String(s) => format!("expected an integer, found string {s:?}"),
            other => format!("expected an integer, found {}", kind(other)),
        })),
    }
}

fn value_to_i32<E: Error>(v: Value) -> Result<Option<i32>, E> {
    match value_to_i64::<E>(v)? {
        None => Ok(None),
        Some(i) => i32::try_from(i)
            .map(Some)
            .map_err(|_| E::custom(format!("integer {i} out of range for i32"))),
    }
}

pub fn opt_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s)),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        other => Err(D::Error::custom(format!(
            "expected a string, found {}",
            kind(&other)
        ))),
    }
}

/// The registry's load extension: what cannot be read as one is dropped, never an error, so a
/// registration is kept whatever an executor puts there.
pub fn opt_load<'de, D: Deserializer<'de>>(d: D) -> Result<Option<super::ExecutorLoad>, D::Error> {
    Ok(serde_json::from_value(Value::deserialize(d)?).ok())
}

/// `maxQueued`: a positive count, else none (0, negative, or not a number all mean unbounded,
/// as a peer that does not know the key would treat it).
pub fn opt_max_queued<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    Ok(value_to_i64::<D::Error>(Value::deserialize(d)?)
        .ok()
        .flatten()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0))
}

/// The registry's labels extension: an object of strings; anything else reads as none, and
/// malformed labels are dropped (see [`super::usable_labels`]).
pub fn labels<'de, D: Deserializer<'de>>(d: D) -> Result<super::Labels, D::Error> {
    let labels = serde_json::from_value(Value::deserialize(d)?).unwrap_or_default();
    Ok(super::usable_labels(labels))
}

pub fn string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(opt_string(d)?.unwrap_or_default())
}

pub fn opt_int64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    value_to_i64(Value::deserialize(d)?)
}

pub fn int64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    Ok(opt_int64(d)?.unwrap_or_default())
}

pub fn int32<'de, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    Ok(value_to_i32(Value::deserialize(d)?)?.unwrap_or_default())
}

pub fn shard_total<'de, D: Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    Ok(value_to_i32(Value::deserialize(d)?)?.unwrap_or(1))
}

pub fn boolean<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(false),
        Value::Bool(b) => Ok(b),
        // Gson's Boolean.parseBoolean: only "true" (any case) is true.
        Value::String(s) => Ok(s.trim().eq_ignore_ascii_case("true")),
        other => Err(D::Error::custom(format!(
            "expected a boolean, found {}",
            kind(&other)
        ))),
    }
}
