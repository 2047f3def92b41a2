//! `session/update` notifications and the prompt's answer, turned into the seam's
//! [`RunEvent`]s and [`Outcome`].

use std::collections::HashSet;

use agent_client_protocol::v1::schema::{
    ContentBlock, PromptResponse, SessionUpdate, StopReason as AcpStop, ToolCallContent,
    ToolCallStatus, ToolKind,
};
use serde_json::{Value, json};
use subagent_core::{Outcome, RunEvent, StopReason, Usage};

/// A tool result's text is cut to this many bytes in its event.
pub const TOOL_OUTPUT_LIMIT: usize = 4096;

/// What the stream told so far.
#[derive(Debug, Default)]
pub struct StreamState {
    /// The agent's text since its last tool call: the final answer once the prompt ends.
    pub answer: String,
    /// Tool calls started.
    pub tool_uses: u64,
    /// Calls whose result was reported (each is reported once).
    finished: HashSet<String>,
    /// Whether a tool call came after the last text (the next text starts a new answer).
    after_tool: bool,
}

/// The name of a tool kind as ACP spells it.
pub fn kind_name(kind: ToolKind) -> &'static str {
    match kind {
        ToolKind::Read => "read",
        ToolKind::Edit => "edit",
        ToolKind::Delete => "delete",
        ToolKind::Move => "move",
        ToolKind::Search => "search",
        ToolKind::Execute => "execute",
        ToolKind::Think => "think",
        ToolKind::Fetch => "fetch",
        ToolKind::SwitchMode => "switch_mode",
        _ => "other",
    }
}

fn block_text(block: &ContentBlock) -> Option<&str> {
    match block {
        ContentBlock::Text(text) => Some(&text.text),
        _ => None,
    }
}

fn content_text(content: &[ToolCallContent]) -> String {
    let mut out = String::new();
    for item in content {
        let piece = match item {
            ToolCallContent::Content(content) => block_text(&content.content).map(str::to_owned),
            ToolCallContent::Diff(diff) => Some(format!("edited {}", diff.path.display())),
            _ => None,
        };
        if let Some(piece) = piece {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&piece);
        }
    }
    out
}

fn cut(text: String) -> String {
    if text.len() <= TOOL_OUTPUT_LIMIT {
        return text;
    }
    let mut end = TOOL_OUTPUT_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

impl StreamState {
    /// Reads one update; pushes the events it means onto `out`.
    pub fn update(&mut self, update: SessionUpdate, out: &mut Vec<RunEvent>) {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                if let Some(text) = block_text(&chunk.content) {
                    if self.after_tool {
                        self.answer.clear();
                        self.after_tool = false;
                    }
                    self.answer.push_str(text);
                    out.push(RunEvent::Text {
                        text: text.to_owned(),
                        parent_tool_use_id: None,
                    });
                }
            }
            SessionUpdate::AgentThoughtChunk(chunk) => {
                if let Some(text) = block_text(&chunk.content) {
                    out.push(RunEvent::Thinking {
                        text: text.to_owned(),
                    });
                }
            }
            SessionUpdate::ToolCall(call) => {
                let id = call.tool_call_id.0.to_string();
                self.tool_uses += 1;
                self.after_tool = true;
                let name = call
                    .name
                    .clone()
                    .unwrap_or_else(|| kind_name(call.kind).to_owned());
                let input = call
                    .raw_input
                    .clone()
                    .unwrap_or_else(|| json!({"title": call.title}));
                out.push(RunEvent::ToolCall {
                    id: id.clone(),
                    name,
                    input,
                    parent_tool_use_id: None,
                });
                self.result(id, call.status, &call.content, out);
            }
            SessionUpdate::ToolCallUpdate(update) => {
                let id = update.tool_call_id.0.to_string();
                if let Some(status) = update.fields.status {
                    let content = update.fields.content.unwrap_or_default();
                    self.result(id, status, &content, out);
                }
            }
            SessionUpdate::Plan(plan) => {
                let entries: Vec<String> = plan
                    .entries
                    .iter()
                    .map(|entry| {
                        let status = serde_json::to_value(&entry.status)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default();
                        format!("[{status}] {}", entry.content)
                    })
                    .collect();
                out.push(RunEvent::Progress {
                    message: format!("plan: {}", entries.join("; ")),
                });
            }
            _ => {}
        }
    }

    fn result(
        &mut self,
        id: String,
        status: ToolCallStatus,
        content: &[ToolCallContent],
        out: &mut Vec<RunEvent>,
    ) {
        let is_error = match status {
            ToolCallStatus::Completed => false,
            ToolCallStatus::Failed => true,
            _ => return,
        };
        if !self.finished.insert(id.clone()) {
            return;
        }
        out.push(RunEvent::ToolResult {
            id,
            output: cut(content_text(content)),
            is_error,
            parent_tool_use_id: None,
        });
    }

    /// The outcome of a prompt that ended with `response`.
    pub fn outcome(&self, response: &PromptResponse) -> Outcome {
        let text = self.answer.clone();
        let mut outcome = match response.stop_reason {
            AcpStop::EndTurn => Outcome::completed(text),
            AcpStop::MaxTokens => Outcome::with_status(
                StopReason::MaxTokens,
                text,
                Some("the agent reached its output token limit (max_tokens)".to_owned()),
            ),
            AcpStop::MaxTurnRequests => Outcome::with_status(
                StopReason::MaxTurns,
                text,
                Some(
                    "the agent reached its limit of model requests (max_turn_requests)".to_owned(),
                ),
            ),
            AcpStop::Refusal => Outcome::with_status(
                StopReason::Refused,
                text,
                Some("the agent refused (refusal)".to_owned()),
            ),
            AcpStop::Cancelled => {
                let mut outcome = Outcome::cancelled();
                outcome.text = text;
                outcome
            }
            _ => Outcome::with_status(
                StopReason::Failed,
                text,
                Some(format!(
                    "the agent ended its prompt with an unknown stop reason {}",
                    serde_json::to_value(response.stop_reason).unwrap_or(Value::Null)
                )),
            ),
        };
        let mut usage = Usage {
            tool_uses: self.tool_uses,
            ..Usage::default()
        };
        if let Some(given) = &response.usage {
            usage.input_tokens = given.input_tokens;
            usage.output_tokens = given.output_tokens;
            usage.cache_read_tokens = given.cached_read_tokens.unwrap_or(0);
            usage.cache_write_tokens = given.cached_write_tokens.unwrap_or(0);
        }
        outcome.usage = usage;
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn update(value: Value) -> SessionUpdate {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn updates_become_events() {
        let mut state = StreamState::default();
        let mut out = Vec::new();
        for value in [
            json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "let me "}}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "look"}}),
            json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "ls", "kind": "execute",
                   "status": "pending", "rawInput": {"command": ["ls"]}}),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"}),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
                   "content": [{"type": "content", "content": {"type": "text", "text": "a.txt"}}]}),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}),
            json!({"sessionUpdate": "plan", "entries": [
                {"content": "read", "priority": "high", "status": "completed"},
                {"content": "write", "priority": "low", "status": "pending"}]}),
            json!({"sessionUpdate": "usage_update", "used": 10, "size": 100}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "done"}}),
        ] {
            state.update(update(value), &mut out);
        }
        assert_eq!(
            out,
            vec![
                RunEvent::Thinking { text: "hmm".into() },
                RunEvent::Text {
                    text: "let me ".into(),
                    parent_tool_use_id: None
                },
                RunEvent::Text {
                    text: "look".into(),
                    parent_tool_use_id: None
                },
                RunEvent::ToolCall {
                    id: "t1".into(),
                    name: "execute".into(),
                    input: json!({"command": ["ls"]}),
                    parent_tool_use_id: None
                },
                RunEvent::ToolResult {
                    id: "t1".into(),
                    output: "a.txt".into(),
                    is_error: false,
                    parent_tool_use_id: None
                },
                RunEvent::Progress {
                    message: "plan: [completed] read; [pending] write".into()
                },
                RunEvent::Text {
                    text: "done".into(),
                    parent_tool_use_id: None
                },
            ]
        );
        let response: PromptResponse = serde_json::from_value(json!({
            "stopReason": "end_turn",
            "usage": {"totalTokens": 5, "inputTokens": 3, "outputTokens": 2, "cachedReadTokens": 1}
        }))
        .unwrap();
        let outcome = state.outcome(&response);
        let mut expected = Outcome::completed("done");
        expected.usage = Usage {
            input_tokens: 3,
            output_tokens: 2,
            cache_read_tokens: 1,
            tool_uses: 1,
            ..Usage::default()
        };
        assert_eq!(outcome, expected);
    }

    #[test]
    fn stop_reasons() {
        let state = StreamState::default();
        for (wire, status) in [
            ("end_turn", StopReason::Completed),
            ("max_tokens", StopReason::MaxTokens),
            ("max_turn_requests", StopReason::MaxTurns),
            ("refusal", StopReason::Refused),
            ("cancelled", StopReason::Cancelled),
        ] {
            let response: PromptResponse =
                serde_json::from_value(json!({"stopReason": wire})).unwrap();
            assert_eq!(state.outcome(&response).status, status, "{wire}");
        }
    }
}
