//! Lenient readers for what other SDKs write: numbers as doubles (`42.0`), integers as strings
//! (the proto JSON mapping of 64-bit integers).

use serde::{Deserialize, Deserializer};
use serde_json::{Number, Value};

/// A whole number that fits in a `u32`, from `3`, `3.0` or `"3"`.
pub fn u32_of(value: &Value) -> Option<u32> {
    match value {
        Value::Number(number) => {
            if let Some(whole) = number.as_u64() {
                return u32::try_from(whole).ok();
            }
            let float = number.as_f64()?;
            let in_range = float >= 0.0 && float <= f64::from(u32::MAX);
            // The range check makes the cast exact for integral values.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            (in_range && float.fract() == 0.0).then_some(float as u32)
        }
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
}

/// Serde reader of an optional `u32` written as `3`, `3.0` or `"3"` (absent or `null`: `None`).
pub(crate) fn opt_u32_lenient<'de, D: Deserializer<'de>>(de: D) -> Result<Option<u32>, D::Error> {
    let value = Option::<Value>::deserialize(de)?;
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(value) => u32_of(&value).map(Some).ok_or_else(|| {
            serde::de::Error::custom(format!("expected a whole number, got {value}"))
        }),
    }
}

/// The same value with every double that holds a whole number (within ±2^53) turned back into
/// an integer: the official Python SDK sends `{"answer": 42}` as `{"answer": 42.0}`, and a JSON
/// Schema `"type": "integer"` must still accept it.
pub fn integral_numbers(value: Value) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    match value {
        Value::Number(number) if !number.is_i64() && !number.is_u64() => {
            match number.as_f64() {
                Some(float) if float.fract() == 0.0 && float.abs() <= EXACT => {
                    // Exact: whole and within the range a double represents without loss.
                    #[allow(clippy::cast_possible_truncation)]
                    Value::Number(Number::from(float as i64))
                }
                _ => Value::Number(number),
            }
        }
        Value::Array(items) => Value::Array(items.into_iter().map(integral_numbers).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, value)| (key, integral_numbers(value)))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn doubles_holding_whole_numbers_become_integers_and_others_stay() {
        let from_python =
            json!({"answer": 42.0, "items": [1.0, 2.5, -3.0], "nested": {"n": 1e3}, "s": "4.0"});
        assert_eq!(
            integral_numbers(from_python),
            json!({"answer": 42, "items": [1, 2.5, -3], "nested": {"n": 1000}, "s": "4.0"})
        );
        assert_eq!(integral_numbers(json!(1e300)), json!(1e300));
    }

    #[test]
    fn whole_numbers_read_from_ints_doubles_and_strings() {
        let read: Vec<Option<u32>> = [
            json!(3),
            json!(3.0),
            json!("3"),
            json!(3.5),
            json!(-1),
            json!(true),
        ]
        .iter()
        .map(u32_of)
        .collect();
        assert_eq!(read, [Some(3), Some(3), Some(3), None, None, None]);
    }

    proptest::proptest! {
        #[test]
        fn integers_survive_a_trip_through_doubles(n in -(1i64 << 53)..(1i64 << 53)) {
            #[allow(clippy::cast_precision_loss)]
            let double = json!(n as f64);
            proptest::prop_assert_eq!(integral_numbers(double), json!(n));
        }
    }
}
