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

/// The three answers above as the methods of an `impl Adapter`: expand it inside the impl of an
/// adapter whose children run this project's agent loop.
#[macro_export]
macro_rules! runtime_tool_calls {
    () => {
        fn write_call(&self, file: &str, text: &str) -> Option<$crate::ToolCall> {
            $crate::runtime_tools::write_call(file, text)
        }

        fn structured_answer(&self) -> $crate::StructuredAnswer {
            $crate::runtime_tools::structured_answer()
        }

        fn delegate_call(&self, prompt: &str) -> Option<$crate::ToolCall> {
            $crate::runtime_tools::delegate_call(prompt)
        }
    };
}
