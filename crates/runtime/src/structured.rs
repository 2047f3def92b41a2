//! Structured output: a `structured_output` capture tool (spawn), or validation of the final
//! answer as JSON with bounded retry turns (fork, whose tool list must stay the parent's).

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use serde_json::Value;
use subagent_model::ToolSpec;

use subagent_schema::OutputSchema;

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
    validator: OutputSchema,
    capture: Arc<Mutex<Capture>>,
}

impl StructuredOutputTool {
    /// A capture tool for `schema`.
    pub fn new(schema: Value) -> Result<Self> {
        let validator = OutputSchema::compile(&schema).map_err(|e| Error::Config(e.to_string()))?;
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
        let verdict = self.validator.check(&input).map_err(|e| e.to_string());
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
                    "{problems}\nCall {STRUCTURED_OUTPUT_TOOL} again with corrected arguments."
                )))
            }
        }
    }
}
