//! `session/update` notifications and the prompt's answer, turned into the seam's
//! [`RunEvent`]s and [`Outcome`].

use std::collections::HashSet;

use agent_client_protocol::v1::schema::{
    ContentBlock, PromptResponse, SessionUpdate, StopReason as AcpStop, ToolCallContent,
    ToolCallStatus, ToolKind,
};
use serde_json::{Value, json};
use subagent_core::text::{Limit, truncate};
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
    /// Calls announced without their input, not yet told.
    waiting: Vec<Announced>,
    /// While a loaded session's history is replayed: its updates are not this run's events.
    pub replaying: bool,
    /// The session's id, once the agent made or loaded it.
    pub session_id: Option<String>,
}

/// A tool call as announced.
#[derive(Debug)]
struct Announced {
    id: String,
    name: String,
    title: String,
}

impl Announced {
    fn event(self, input: Option<Value>) -> RunEvent {
        RunEvent::ToolCall {
            id: self.id,
            name: self.name,
            input: input.unwrap_or_else(|| json!({"title": self.title})),
            parent_tool_use_id: None,
        }
    }
}

/// Whether a call's `rawInput` says anything (claude-agent-acp announces calls with `{}`).
fn has_input(input: &Value) -> bool {
    !(input.is_null() || input.as_object().is_some_and(serde_json::Map::is_empty))
}

fn is_end(status: ToolCallStatus) -> bool {
    matches!(status, ToolCallStatus::Completed | ToolCallStatus::Failed)
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

/// The text of a call's `rawOutput` when it has no content (codex-acp reports a reading
/// command's output only there): its `formatted_output`, `aggregated_output`, `output` or
/// `stdout`, else the value itself.
fn raw_output_text(raw: &Value) -> String {
    ["formatted_output", "aggregated_output", "output", "stdout"]
        .iter()
        .find_map(|key| raw.get(*key).and_then(Value::as_str))
        .map_or_else(
            || match raw {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            },
            str::to_owned,
        )
}

impl StreamState {
    /// Reads one update; pushes the events it means onto `out`.
    pub fn update(&mut self, update: SessionUpdate, out: &mut Vec<RunEvent>) {
        if self.replaying {
            return;
        }
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                if let Some(text) = block_text(&chunk.content).filter(|t| !t.is_empty()) {
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
                if let Some(text) = block_text(&chunk.content).filter(|t| !t.is_empty()) {
                    out.push(RunEvent::Thinking {
                        text: text.to_owned(),
                    });
                }
            }
            SessionUpdate::ToolCall(call) => {
                let id = call.tool_call_id.0.to_string();
                self.tool_uses += 1;
                self.after_tool = true;
                let announced = Announced {
                    id: id.clone(),
                    name: call
                        .name
                        .clone()
                        .unwrap_or_else(|| kind_name(call.kind).to_owned()),
                    title: call.title.clone(),
                };
                match call.raw_input.filter(has_input) {
                    Some(input) => out.push(announced.event(Some(input))),
                    // Announced before its input: told once the input (or its end) comes.
                    None if !is_end(call.status) => {
                        self.waiting.push(announced);
                        return;
                    }
                    None => out.push(announced.event(None)),
                }
                self.result(id, call.status, content_text(&call.content), out);
            }
            SessionUpdate::ToolCallUpdate(update) => {
                let id = update.tool_call_id.0.to_string();
                let fields = update.fields;
                let input = fields.raw_input.filter(has_input);
                let ends = fields.status.is_some_and(is_end);
                if (input.is_some() || ends)
                    && let Some(at) = self.waiting.iter().position(|w| w.id == id)
                {
                    let announced = self.waiting.remove(at);
                    out.push(announced.event(input));
                }
                if let Some(status) = fields.status {
                    let content = fields.content.unwrap_or_default();
                    let mut output = content_text(&content);
                    if output.is_empty()
                        && let Some(raw) = &fields.raw_output
                    {
                        output = raw_output_text(raw);
                    }
                    self.result(id, status, output, out);
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
                out.push(RunEvent::progress(format!("plan: {}", entries.join("; "))));
            }
            _ => {}
        }
    }

    fn result(
        &mut self,
        id: String,
        status: ToolCallStatus,
        output: String,
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
            output: truncate(&output, Limit::Bytes(TOOL_OUTPUT_LIMIT)).into_owned(),
            is_error,
            parent_tool_use_id: None,
        });
    }

    /// The outcome of a prompt that ended with `response`; `asked_to_cancel` when the run was
    /// cancelled (a `cancelled` stop reason without it is a failure).
    pub fn outcome(&self, response: &PromptResponse, asked_to_cancel: bool) -> Outcome {
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
            AcpStop::Cancelled if !asked_to_cancel => Outcome::with_status(
                StopReason::Failed,
                text,
                Some(
                    "the agent ended its prompt as cancelled although it was not cancelled \
                     (codex-acp does when a permission request is rejected)"
                        .to_owned(),
                ),
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
mod tests;
