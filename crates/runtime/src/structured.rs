//! Structured output: a `structured_output` capture tool (spawn), or validation of the final
//! answer as JSON with bounded retry turns (fork, whose tool list must stay the parent's).

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use serde_json::Value;
use subagent_model::ToolSpec;

use crate::tools::{Tool, ToolContext, ToolKind, ToolOutput};
use crate::{Error, Result};

/// The capture tool's name.
pub const STRUCTURED_OUTPUT_TOOL: &str = "structured_output";

/// How many invalid attempts a run gets before it fails, by default.
pub const DEFAULT_STRUCTURED_RETRIES: u32 = 3;

/// The prefix of the harness's retry messages (a fake model's scenario matcher treats such
/// user text as injected, not as a new prompt).
pub const ENFORCE_PREFIX: &str = "[structured-output-enforce]";

/// How a run produces structured output.
#[derive(Clone, Debug, Default)]
pub enum OutputMode {
    /// Plain text only.
    #[default]
    Text,
    /// A `structured_output` tool whose input schema is the schema; the run ends when it is
    /// called with a valid value.
    CaptureTool {
        /// The object-rooted JSON Schema.
        schema: Value,
    },
    /// The final answer must be a JSON value valid against the schema; the tool list is not
    /// touched.
    FinalAnswer {
        /// The object-rooted JSON Schema.
        schema: Value,
    },
}

/// A compiled schema.
#[derive(Clone)]
pub struct SchemaValidator {
    validator: Arc<jsonschema::Validator>,
}

impl std::fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SchemaValidator")
    }
}

impl SchemaValidator {
    /// Compiles `schema`; `Config` when it is not a valid JSON Schema.
    pub fn new(schema: &Value) -> Result<Self> {
        let validator = jsonschema::validator_for(schema)
            .map_err(|e| Error::Config(format!("output schema does not compile: {e}")))?;
        Ok(Self {
            validator: Arc::new(validator),
        })
    }

    /// `Ok` when valid; otherwise every problem, one per line (`at /path: message`).
    pub fn validate(&self, value: &Value) -> std::result::Result<(), String> {
        let problems: Vec<String> = self
            .validator
            .iter_errors(value)
            .map(|e| {
                let path = e.instance_path().to_string();
                let at = if path.is_empty() {
                    "/".to_owned()
                } else {
                    path
                };
                format!("at {at}: {e}")
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }
}

/// What the capture tool saw.
#[derive(Debug, Default)]
pub(crate) struct Capture {
    pub(crate) value: Option<Value>,
    pub(crate) failures: u32,
    pub(crate) last_problem: Option<String>,
}

/// The `structured_output` capture tool.
#[derive(Debug)]
pub struct StructuredOutputTool {
    schema: Value,
    validator: SchemaValidator,
    capture: Arc<Mutex<Capture>>,
}

impl StructuredOutputTool {
    /// A capture tool for `schema`.
    pub fn new(schema: Value) -> Result<Self> {
        let validator = SchemaValidator::new(&schema)?;
        Ok(Self {
            schema,
            validator,
            capture: Arc::default(),
        })
    }

    pub(crate) fn capture(&self) -> Arc<Mutex<Capture>> {
        Arc::clone(&self.capture)
    }
}

/// The instruction added to the system prompt when the capture tool is present.
pub fn capture_instructions() -> String {
    format!(
        "When you have finished the task, call the `{STRUCTURED_OUTPUT_TOOL}` tool exactly once with your final result as its arguments. Its input schema is the required output format. The task is complete only after that call is accepted."
    )
}

/// The section appended to a fork's task when an output schema is requested.
pub fn final_answer_instructions(schema: &Value) -> String {
    format!(
        "Your final answer must be only a JSON value (no prose, no code fence) valid against this JSON Schema:\n{schema}"
    )
}

/// Reads a final answer as JSON: the whole text, or a fenced block, or the outermost `{…}`.
pub fn parse_json_answer(text: &str) -> std::result::Result<Value, String> {
    let trimmed = text.trim();
    if let Ok(value) = serde_json::from_str(trimmed) {
        return Ok(value);
    }
    let unfenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.trim_end().strip_suffix("```"));
    if let Some(inner) = unfenced
        && let Ok(value) = serde_json::from_str(inner.trim())
    {
        return Ok(value);
    }
    if let (Some(start), Some(end)) = (trimmed.find('{'), trimmed.rfind('}'))
        && start < end
        && let Ok(value) = serde_json::from_str(&trimmed[start..=end])
    {
        return Ok(value);
    }
    Err("the final answer is not a JSON value".to_owned())
}

#[async_trait]
impl Tool for StructuredOutputTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: STRUCTURED_OUTPUT_TOOL.into(),
            description: "Return your final result in the required format. Call it exactly once, when the task is done; its arguments are the result.".into(),
            input_schema: self.schema.clone(),
        }
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Internal
    }

    async fn call(&self, input: Value, _context: &ToolContext) -> Result<ToolOutput> {
        let verdict = self.validator.validate(&input);
        let mut capture = self.capture.lock().unwrap_or_else(PoisonError::into_inner);
        match verdict {
            Ok(()) => {
                capture.value = Some(input);
                Ok(ToolOutput::ok("Structured output accepted."))
            }
            Err(problems) => {
                capture.failures += 1;
                capture.last_problem = Some(problems.clone());
                Ok(ToolOutput::error(format!(
                    "The structured output does not match the schema:\n{problems}\nCall {STRUCTURED_OUTPUT_TOOL} again with corrected arguments."
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn validates_and_parses() {
        let schema =
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
        let validator = SchemaValidator::new(&schema).unwrap();
        assert!(validator.validate(&json!({"n": 1})).is_ok());
        let problems = validator.validate(&json!({"n": "x"})).unwrap_err();
        assert!(problems.contains("/n"), "{problems}");
        assert_eq!(
            parse_json_answer("```json\n{\"n\": 2}\n```").unwrap(),
            json!({"n": 2})
        );
        assert_eq!(
            parse_json_answer("Here: {\"n\": 3}.").unwrap(),
            json!({"n": 3})
        );
        assert!(parse_json_answer("no json").is_err());
    }
}
