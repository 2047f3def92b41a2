//! Claude Code's `stream-json` lines → [`RunEvent`]s, and what the run's end needs from them.
//!
//! Each line is parsed once into the typed events of [`wire`] (which tolerate event types, fields
//! and shapes claude adds later); this module maps those to `RunEvent`s and the outcome's facts.

mod wire;

use serde_json::Value;
use subagent_core::text::{Limit, truncate_marked};
use subagent_core::{RunEvent, Usage};

use wire::{Block, Content, Event, Finished, Line, Message, Parsed, System};

/// The most of a tool result's text a [`RunEvent::ToolResult`] carries, in bytes.
pub const TOOL_OUTPUT_LIMIT: usize = 16 * 1024;

/// The final `result` event.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResultEvent {
    /// `success`, `error_max_turns`, `error_during_execution`…
    pub subtype: String,
    /// Whether claude counts the run as failed (API errors come as `success` + `is_error`).
    pub is_error: bool,
    /// The final text (for `--json-schema`: the JSON text).
    pub result: Option<String>,
    /// The validated `StructuredOutput` input, when `--json-schema` was given and honoured.
    pub structured_output: Option<Value>,
    /// The API's stop reason of the last answer (`end_turn`, `tool_use`, `refusal`…).
    pub stop_reason: Option<String>,
    /// Why the loop ended (`completed`, `max_turns`, `aborted_streaming`, `aborted_tools`).
    pub terminal_reason: Option<String>,
    /// Error texts (`Reached maximum number of turns (1)`…).
    pub errors: Vec<String>,
    /// The HTTP status of a model error.
    pub api_error_status: Option<u64>,
    /// Tokens.
    pub usage: Usage,
    /// Tools the permission policy refused.
    pub permission_denials: Vec<String>,
}

/// What a run learned from its stream so far.
#[derive(Clone, Debug, Default)]
pub struct StreamState {
    /// The session id (from `init`, or any later event).
    pub session_id: Option<String>,
    /// The model claude reported in `init`.
    pub model: Option<String>,
    /// The `result` event, once seen.
    pub result: Option<ResultEvent>,
    /// Tool calls seen (the child's and its nested agents').
    pub tool_uses: u64,
    /// The child's own (not nested) text of its latest answer, for partial output.
    pub last_text: String,
    /// The text of an assistant message flagged with `error` (a model error claude turned into
    /// a synthetic message).
    pub assistant_error: Option<String>,
    /// Lines that were not JSON (other JSON than an object is passed over, not counted).
    pub unparsed: usize,
    /// The ids of the tasks started that are commands, not nested agents (`local_bash`).
    pub command_tasks: Vec<String>,
}

/// The most background command tasks remembered by id (a stream is untrusted input).
const MAX_COMMAND_TASKS: usize = 1024;

/// `text` within `limit` bytes, a cut marked as codex's are (the model knows output is missing).
fn bounded(text: String, limit: usize) -> String {
    if text.len() <= limit {
        return text;
    }
    truncate_marked(&text, Limit::Bytes(limit), "…[truncated]").into_owned()
}

impl StreamState {
    /// Reads one stdout line; returns the events it makes.
    pub fn on_line(&mut self, line: &str) -> Vec<RunEvent> {
        let line = line.trim();
        if line.is_empty() {
            return Vec::new();
        }
        let Line { session_id, event } = match wire::parse(line) {
            Parsed::Line(parsed) => *parsed,
            Parsed::NotAnObject => return Vec::new(),
            Parsed::NotJson => {
                self.unparsed += 1;
                tracing::debug!(line, "claude printed a line that is not JSON");
                return Vec::new();
            }
        };
        if self.session_id.is_none() {
            self.session_id.clone_from(&session_id);
        }
        match event {
            Event::System(system) => self.on_system(system, session_id),
            Event::Assistant(message) => self.on_assistant(message),
            Event::User(message) => on_user(message),
            Event::Result(finished) => self.on_result(finished, session_id),
            Event::Unknown => Vec::new(),
        }
    }

    fn on_system(&mut self, system: System, session_id: Option<String>) -> Vec<RunEvent> {
        let message = match system {
            System::Init { model } => {
                self.model = model;
                format!(
                    "claude session {} started (model {})",
                    session_id.unwrap_or_default(),
                    self.model.as_deref().unwrap_or("unknown")
                )
            }
            System::ApiRetry {
                attempt,
                max_retries,
                error,
            } => format!(
                "claude retries the model request (attempt {attempt} of {max_retries}): {error}"
            ),
            // A task is a nested agent (`local_agent`) or a command run in the background
            // (`local_bash`, …): each is called what it is.
            System::TaskStarted {
                tool_use_id,
                description,
                subagent_type,
                task_id,
                task_type,
            } => {
                if task_type == "local_agent" || !subagent_type.is_empty() {
                    format!(
                        "nested agent started for call {tool_use_id}: {description} ({subagent_type})"
                    )
                } else {
                    if self.command_tasks.len() < MAX_COMMAND_TASKS {
                        self.command_tasks.push(task_id);
                    }
                    format!("command task started for call {tool_use_id}: {description}")
                }
            }
            System::TaskNotification {
                task_id,
                status,
                summary,
            } => {
                let what = if self.command_tasks.contains(&task_id) {
                    "command task"
                } else {
                    "nested agent"
                };
                format!("{what} {status}: {}", bounded(summary, 512))
            }
            System::Other => return Vec::new(),
        };
        vec![RunEvent::progress(message)]
    }

    fn on_assistant(&mut self, message: Message) -> Vec<RunEvent> {
        let parent = message.parent_tool_use_id;
        let mut events = Vec::new();
        for block in message.message.content {
            match block {
                Block::Text { text } if !text.is_empty() => {
                    if parent.is_none() {
                        self.last_text.clone_from(&text);
                        if message.error.is_some() {
                            self.assistant_error = Some(text.clone());
                        }
                    }
                    events.push(RunEvent::Text {
                        text,
                        parent_tool_use_id: parent.clone(),
                    });
                }
                Block::Thinking { thinking } if !thinking.is_empty() => {
                    events.push(RunEvent::Thinking { text: thinking });
                }
                Block::ToolUse { id, name, input } => {
                    self.tool_uses += 1;
                    events.push(RunEvent::ToolCall {
                        id,
                        name,
                        input,
                        parent_tool_use_id: parent.clone(),
                    });
                }
                _ => {}
            }
        }
        events
    }

    fn on_result(&mut self, finished: Finished, session_id: Option<String>) -> Vec<RunEvent> {
        let mut usage = Usage::from(finished.usage);
        usage.tool_uses = self.tool_uses;
        let result = ResultEvent {
            subtype: finished.subtype,
            is_error: finished.is_error,
            result: finished.result,
            structured_output: finished.structured_output,
            stop_reason: finished.stop_reason,
            terminal_reason: finished.terminal_reason,
            errors: finished.errors.iter().map(Content::text).collect(),
            api_error_status: finished.api_error_status,
            usage,
            permission_denials: finished
                .permission_denials
                .into_iter()
                .filter_map(|denial| denial.tool_name)
                .collect(),
        };
        if session_id.is_some() {
            self.session_id = session_id;
        }
        self.result = Some(result);
        vec![RunEvent::Usage {
            usage,
            parent_tool_use_id: None,
        }]
    }
}

fn on_user(message: Message) -> Vec<RunEvent> {
    let parent = message.parent_tool_use_id;
    message
        .message
        .content
        .into_iter()
        .filter_map(|block| match block {
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => Some(RunEvent::ToolResult {
                id: tool_use_id,
                output: bounded(content.text(), TOOL_OUTPUT_LIMIT),
                is_error,
                parent_tool_use_id: parent.clone(),
            }),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn feed(lines: &[Value]) -> (StreamState, Vec<RunEvent>) {
        let mut state = StreamState::default();
        let events = lines
            .iter()
            .flat_map(|line| state.on_line(&line.to_string()))
            .collect();
        (state, events)
    }

    #[test]
    fn a_tool_round_trip_with_a_nested_agent() {
        let (state, events) = feed(&[
            json!({"type":"system","subtype":"init","session_id":"s1","model":"m"}),
            json!({"type":"assistant","message":{"content":[{"type":"text","text":"Running."}]},"parent_tool_use_id":null}),
            json!({"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Agent","input":{"prompt":"x"}}]},"parent_tool_use_id":null}),
            json!({"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"ls"}}]},"parent_tool_use_id":"t1"}),
            json!({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"a\nb"}]},"parent_tool_use_id":"t1"}),
            json!({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"sub done"}],"is_error":false}]},"parent_tool_use_id":null}),
            json!({"type":"assistant","message":{"content":[{"type":"text","text":"All done."}]},"parent_tool_use_id":null}),
            json!({"type":"result","subtype":"success","is_error":false,"result":"All done.","session_id":"s1","usage":{"input_tokens":7,"output_tokens":3,"cache_read_input_tokens":2}}),
        ]);
        assert_eq!(
            events,
            vec![
                RunEvent::progress("claude session s1 started (model m)"),
                RunEvent::Text {
                    text: "Running.".into(),
                    parent_tool_use_id: None
                },
                RunEvent::ToolCall {
                    id: "t1".into(),
                    name: "Agent".into(),
                    input: json!({"prompt":"x"}),
                    parent_tool_use_id: None
                },
                RunEvent::ToolCall {
                    id: "t2".into(),
                    name: "Bash".into(),
                    input: json!({"command":"ls"}),
                    parent_tool_use_id: Some("t1".into())
                },
                RunEvent::ToolResult {
                    id: "t2".into(),
                    output: "a\nb".into(),
                    is_error: false,
                    parent_tool_use_id: Some("t1".into())
                },
                RunEvent::ToolResult {
                    id: "t1".into(),
                    output: "sub done".into(),
                    is_error: false,
                    parent_tool_use_id: None
                },
                RunEvent::Text {
                    text: "All done.".into(),
                    parent_tool_use_id: None
                },
                RunEvent::Usage {
                    usage: Usage {
                        input_tokens: 7,
                        output_tokens: 3,
                        cache_read_tokens: 2,
                        tool_uses: 2,
                        ..Usage::default()
                    },
                    parent_tool_use_id: None
                },
            ]
        );
        assert_eq!(state.session_id.as_deref(), Some("s1"));
        assert_eq!(state.last_text, "All done.");
        let result = state.result.unwrap();
        assert_eq!(
            (result.subtype.as_str(), result.is_error),
            ("success", false)
        );
    }

    /// Every line of the copies of the real CLI's output in `tests/fixtures` (from the
    /// reference transcripts of Claude Code 2.1.197), with its file's name.
    pub(super) fn fixture_lines() -> Vec<(String, String)> {
        subagent_test_support::recorded::fixture_lines(env!("CARGO_MANIFEST_DIR"))
    }

    /// Each recorded transcript, line by line: one compact JSON line per event it makes, then
    /// what the outcome is made of.
    #[test]
    fn the_recorded_transcripts_make_these_events() {
        let lines = fixture_lines();
        let transcripts: Vec<_> = lines.chunk_by(|a, b| a.0 == b.0).collect();
        assert_eq!(transcripts.len(), 12);
        for transcript in transcripts {
            let mut state = StreamState::default();
            let mut lines: Vec<String> = (transcript.iter())
                .flat_map(|(_, line)| state.on_line(line))
                .map(|event| serde_json::to_string(&event).unwrap())
                .collect();
            let result = state.result.as_ref().map(|r| {
                json!({
                    "subtype": r.subtype, "is_error": r.is_error, "result": r.result,
                    "structured_output": r.structured_output, "stop_reason": r.stop_reason,
                    "terminal_reason": r.terminal_reason, "errors": r.errors,
                    "api_error_status": r.api_error_status, "usage": r.usage,
                    "permission_denials": r.permission_denials,
                })
            });
            lines.push(
                json!({
                    "session_id": state.session_id, "model": state.model, "result": result,
                    "tool_uses": state.tool_uses, "last_text": state.last_text,
                    "assistant_error": state.assistant_error, "unparsed": state.unparsed,
                })
                .to_string(),
            );
            insta::assert_snapshot!(transcript[0].0.clone(), lines.join("\n"));
        }
    }

    #[test]
    fn lines_that_are_not_json_are_counted_and_other_json_is_skipped() {
        let mut state = StreamState::default();
        let events: Vec<_> = ["", "warning: x", "[1,2]", "7", "{\"no\":\"type\"}", "{"]
            .into_iter()
            .flat_map(|line| state.on_line(line))
            .collect();
        assert_eq!(events, vec![]);
        assert_eq!(state.unparsed, 2);
    }

    #[test]
    fn long_tool_output_is_bounded() {
        let text = "é".repeat(TOOL_OUTPUT_LIMIT);
        let bounded = bounded(text, TOOL_OUTPUT_LIMIT);
        assert!(bounded.len() <= TOOL_OUTPUT_LIMIT);
        assert!(bounded.ends_with("é…[truncated]"));
    }
}
