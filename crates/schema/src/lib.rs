//! `subagent-schema`: structured output, checked one way.
//!
//! Owns compiling a request's output schema ([`OutputSchema`]) and checking a value against it,
//! with the one text every provider shows for a schema that does not compile and for a value
//! that does not match ([`Error`]): the in-process runtime's capture tool and final answer, the
//! Claude Code provider's `StructuredOutput` result and the Codex provider's final answer all
//! say the same thing about the same mismatch.
//!
//! Deliberately not here: whether a request may carry a schema (the registry checks it is
//! object-rooted, in `core`), how a provider obtains the value (a capture tool, a CLI's result,
//! parsing a final answer), and what happens on a mismatch (a retry turn, a failed outcome).
//! It depends on no crate of ours, so any provider may use it.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How many problems a mismatch lists; the rest are counted.
pub const MAX_PROBLEMS: usize = 5;

/// What is wrong with a schema or a value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The schema is not a valid JSON Schema. Returned by [`OutputSchema::compile`] (and
    /// [`check`]); retrying with the same schema does not help. Callers report it as the
    /// request's fault (`INVALID_ARGUMENTS`).
    #[error("the output schema is not a valid JSON Schema: {0}")]
    Invalid(String),
    /// The value does not match the schema. Returned by [`OutputSchema::check`] (and
    /// [`check`]); a model may be asked again with this text.
    #[error("the structured output does not match the output schema: {0}")]
    Mismatch(Mismatch),
}

/// Where a value breaks its schema: at most [`MAX_PROBLEMS`] problems, each with its place in
/// the value (`/` for the root), and how many more there were.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mismatch {
    /// `(place, message)` pairs, in the validator's order.
    pub problems: Vec<(String, String)>,
    /// Problems beyond [`MAX_PROBLEMS`], not listed.
    pub more: usize,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, (place, message)) in self.problems.iter().enumerate() {
            if index > 0 {
                f.write_str("; ")?;
            }
            write!(f, "at {place}: {message}")?;
        }
        if self.more > 0 {
            write!(f, "; and {} more", self.more)?;
        }
        Ok(())
    }
}

/// A compiled output schema: compile once, check many values. Cheap to clone.
#[derive(Clone)]
pub struct OutputSchema {
    validator: Arc<jsonschema::Validator>,
}

impl fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OutputSchema")
    }
}

impl OutputSchema {
    /// Compiles `schema`; [`Error::Invalid`] when it is not a valid JSON Schema.
    pub fn compile(schema: &Value) -> Result<Self> {
        let validator =
            jsonschema::validator_for(schema).map_err(|e| Error::Invalid(e.to_string()))?;
        Ok(Self {
            validator: Arc::new(validator),
        })
    }

    /// A final answer as the structured output ([`parse_json_answer`]), checked: the value, or
    /// the one text for an answer without JSON ([`NOT_JSON`]) or for a mismatch.
    pub fn check_answer(&self, text: &str) -> std::result::Result<Value, String> {
        let value = parse_json_answer(text).ok_or_else(|| NOT_JSON.to_owned())?;
        self.check(&value).map_err(|error| error.to_string())?;
        Ok(value)
    }

    /// `Ok` when `value` matches; otherwise [`Error::Mismatch`] saying where and why.
    pub fn check(&self, value: &Value) -> Result<()> {
        let mut mismatch = Mismatch::default();
        for error in self.validator.iter_errors(value) {
            if mismatch.problems.len() == MAX_PROBLEMS {
                mismatch.more += 1;
                continue;
            }
            let place = error.instance_path().to_string();
            let place = if place.is_empty() {
                "/".to_owned()
            } else {
                place
            };
            mismatch.problems.push((place, error.to_string()));
        }
        if mismatch.problems.is_empty() {
            Ok(())
        } else {
            Err(Error::Mismatch(mismatch))
        }
    }
}

/// The text for a final answer that holds no JSON value where the structured output was asked
/// for.
pub const NOT_JSON: &str = "the structured output is missing: the final answer is not a JSON value";

/// The JSON value a final answer holds, if any: the answer itself, a fenced block
/// (```` ```json ````), or prose around one JSON object (the outermost braces).
pub fn parse_json_answer(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if let Ok(value) = serde_json::from_str(trimmed) {
        return Some(value);
    }
    let unfenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.trim_end().strip_suffix("```"));
    if let Some(inner) = unfenced
        && let Ok(value) = serde_json::from_str(inner.trim())
    {
        return Some(value);
    }
    let (start, end) = (trimmed.find('{')?, trimmed.rfind('}')?);
    if start < end {
        return serde_json::from_str(&trimmed[start..=end]).ok();
    }
    None
}

/// Compiles `schema` and checks `value` against it: for a schema used once.
pub fn check(schema: &Value, value: &Value) -> Result<()> {
    OutputSchema::compile(schema)?.check(value)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn widget() -> Value {
        json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "n": {"type": "integer"}},
            "required": ["name", "n"]
        })
    }

    #[test]
    fn a_matching_value_passes() {
        assert_eq!(check(&widget(), &json!({"name": "w", "n": 3})), Ok(()));
    }

    #[test]
    fn a_mismatch_says_where_and_why_in_one_text() {
        let error = check(&widget(), &json!({"n": "x"})).unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"the structured output does not match the output schema: at /: "name" is a required property; at /n: "x" is not of type "integer""#
        );
    }

    #[test]
    fn problems_beyond_the_limit_are_counted() {
        let schema = json!({"type": "object", "required": ["a", "b", "c", "d", "e", "f", "g"]});
        let Err(Error::Mismatch(mismatch)) = check(&schema, &json!({})) else {
            panic!("expected a mismatch");
        };
        assert_eq!(mismatch.problems.len(), MAX_PROBLEMS);
        assert_eq!(mismatch.more, 2);
        assert!(mismatch.to_string().ends_with("; and 2 more"), "{mismatch}");
    }

    #[test]
    fn a_schema_that_does_not_compile_is_invalid() {
        let error = OutputSchema::compile(&json!({"type": 12})).unwrap_err();
        assert!(matches!(error, Error::Invalid(_)), "{error:?}");
        assert!(
            error
                .to_string()
                .starts_with("the output schema is not a valid JSON Schema: "),
            "{error}"
        );
    }

    proptest! {
        /// Whatever the value, checking it answers (no panic), and a mismatch lists at least
        /// one and at most MAX_PROBLEMS problems.
        #[test]
        fn any_value_gets_an_answer(text in "\\PC{0,40}", n in any::<i64>(), flag in any::<bool>()) {
            let values = [
                json!(text),
                json!(n),
                json!({"name": text, "n": n}),
                json!({"name": n, "n": flag, "extra": [text]}),
            ];
            let schema = OutputSchema::compile(&widget()).unwrap();
            for value in values {
                match schema.check(&value) {
                    Ok(()) => {}
                    Err(Error::Mismatch(mismatch)) => {
                        prop_assert!(!mismatch.problems.is_empty());
                        prop_assert!(mismatch.problems.len() <= MAX_PROBLEMS);
                    }
                    Err(other) => prop_assert!(false, "{other}"),
                }
            }
        }
    }

    #[test]
    fn a_final_answer_is_read_in_every_form_and_checked() {
        let schema = OutputSchema::compile(&serde_json::json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"]
        }))
        .unwrap();
        for text in [
            "{\"n\": 2}",
            "  ```json\n{\"n\": 2}\n```  ",
            "```\n{\"n\": 2}\n```",
            "Here it is: {\"n\": 2}. Done.",
        ] {
            assert_eq!(
                schema.check_answer(text),
                Ok(serde_json::json!({"n": 2})),
                "{text}"
            );
        }
        assert_eq!(schema.check_answer("no json"), Err(NOT_JSON.to_owned()));
        assert_eq!(
            schema.check_answer("{\"n\": \"x\"}"),
            Err("the structured output does not match the output schema: at /n: \"x\" is not of type \"integer\"".to_owned())
        );
    }
}
