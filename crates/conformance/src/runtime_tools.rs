//! The calls a child running this project's own agent loop (`subagent-runtime`) makes: its
//! `write_file`, `structured_output` and `subagent` tools. The answers of an [`Adapter`] whose
//! children are such agents — spawn and fork, and a remote provider (A2A, NATS) whose far side
//! runs one — so that each does not spell them out again.
//!
//! [`Adapter`]: crate::Adapter

use serde_json::json;

use crate::{StructuredAnswer, ToolCall};

/// [`crate::Adapter::write_call`]: the runtime's `write_file` tool.
pub fn write_call(file: &str, text: &str) -> Option<ToolCall> {
    Some(ToolCall::new(
        "write_file",
        json!({"path": file, "content": text}),
    ))
}

/// [`crate::Adapter::structured_answer`]: the runtime's `structured_output` tool.
pub fn structured_answer() -> StructuredAnswer {
    StructuredAnswer::Tool("structured_output".to_owned())
}

/// [`crate::Adapter::delegate_call`]: the runtime's delegation tool, `subagent`.
pub fn delegate_call(prompt: &str) -> Option<ToolCall> {
    Some(ToolCall::new(
        "subagent",
        json!({"prompt": prompt, "description": "nested"}),
    ))
}
