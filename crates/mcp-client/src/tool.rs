//! A server's tool as a tool of an in-process run: `mcp__<server>__<tool>` with the server's
//! description and input schema.
//!
//! Permission rules and hooks see it by that name (`mcp__server__tool`, or `mcp__server` for
//! every tool of a server). A tool the server marks read-only (`readOnlyHint`) counts as a read:
//! plan mode keeps it and no mode asks about it; every other tool is decided like a command
//! (asked in `default` and `acceptEdits`, refused in `plan` and `dontAsk` unless a rule allows
//! it), as Claude Code decides MCP tools.

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;
use subagent_model::ToolSpec;
use subagent_runtime::{Tool, ToolContext, ToolKind, ToolOutput};

use crate::servers::{McpServers, ServerTool};

/// One tool of one server, called through the run's [`McpServers`].
pub struct McpTool {
    servers: Arc<McpServers>,
    tool: ServerTool,
}

impl McpTool {
    /// `tool`, called through `servers`.
    pub fn new(servers: Arc<McpServers>, tool: ServerTool) -> Self {
        Self { servers, tool }
    }

    /// The tools `tools` of `servers`, in their order, as tools of a run.
    pub fn all(servers: &Arc<McpServers>, tools: Vec<ServerTool>) -> Vec<Arc<dyn Tool>> {
        tools
            .into_iter()
            .map(|tool| Arc::new(Self::new(Arc::clone(servers), tool)) as Arc<dyn Tool>)
            .collect()
    }
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.tool.qualified_name(),
            description: self.tool.description.clone(),
            input_schema: self.tool.input_schema.clone(),
        }
    }

    fn kind(&self) -> ToolKind {
        if self.tool.read_only {
            ToolKind::ReadOnly
        } else {
            ToolKind::Execute
        }
    }

    async fn call(
        &self,
        input: Value,
        context: &ToolContext,
    ) -> subagent_runtime::Result<ToolOutput> {
        let arguments = match input {
            Value::Object(arguments) => Some(arguments),
            Value::Null => None,
            other => {
                return Ok(ToolOutput::error(format!(
                    "the arguments of {} must be an object, not {other}",
                    self.tool.qualified_name()
                )));
            }
        };
        Ok(
            match self
                .servers
                .call(
                    &self.tool.server,
                    &self.tool.name,
                    arguments,
                    &context.cancel,
                )
                .await
            {
                Ok(result) => render(&result),
                Err(error) => {
                    ToolOutput::error(format!("error[{}]: {}", error.code, error.message))
                }
            },
        )
    }
}

/// What the model reads of a call's result: each text block's text, in order, a line apart; an
/// image or audio block as a note of its type and size; an embedded resource's text (or its
/// URI); a link's URI; the structured content as JSON when there is no text.
pub fn render(result: &CallToolResult) -> ToolOutput {
    let mut parts: Vec<String> = result.content.iter().map(block_text).collect();
    if parts.iter().all(String::is_empty)
        && let Some(structured) = &result.structured_content
    {
        parts = vec![structured.to_string()];
    }
    let content = parts.join("\n");
    if result.is_error == Some(true) {
        ToolOutput::error(content)
    } else {
        ToolOutput::ok(content)
    }
}

fn block_text(block: &ContentBlock) -> String {
    // Through JSON: the block kinds are the protocol's, and their Rust shapes change between
    // SDK versions more often than their wire form.
    let value = serde_json::to_value(block).unwrap_or(Value::Null);
    let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default();
    match text("type") {
        "text" => text("text").to_owned(),
        "image" | "audio" => format!(
            "[{} {}, {} bytes of base64 not shown]",
            text("type"),
            text("mimeType"),
            text("data").len()
        ),
        "resource" => {
            let resource = value.get("resource").cloned().unwrap_or(Value::Null);
            resource
                .get("text")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| {
                    format!(
                        "[resource {}]",
                        resource
                            .get("uri")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                    )
                })
        }
        "resource_link" => format!("[resource link {}]", text("uri")),
        _ => value.to_string(),
    }
}
