//! Claude Code's `stream-json` lines → [`RunEvent`]s, and what the run's end needs from them.

use serde_json::Value;
use subagent_core::{RunEvent, Usage};

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
    /// Lines that were not JSON objects.
    pub unparsed: usize,
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| match block.get("type").and_then(Value::as_str) {
                Some("text") => block.get("text").and_then(Value::as_str).map(str::to_owned),
                Some(other) => Some(format!("[{other}]")),
                None => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn bounded(mut text: String, limit: usize) -> String {
    if text.len() <= limit {
        return text;
    }
    let end = text.floor_char_boundary(limit);
    let dropped = text.len() - end;
    text.truncate(end);
    text.push_str(&format!("…[+{dropped} bytes]"));
    text
}

fn str_field(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn parent_of(event: &Value) -> Option<String> {
    str_field(event, "parent_tool_use_id")
}

/// Claude's `usage` object → ours (`tool_uses` and duration are filled elsewhere).
pub fn usage_of(value: Option<&Value>) -> Usage {
    let count = |key: &str| {
        value
            .and_then(|u| u.get(key))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Usage {
        input_tokens: count("input_tokens"),
        output_tokens: count("output_tokens"),
        cache_read_tokens: count("cache_read_input_tokens"),
        cache_write_tokens: count("cache_creation_input_tokens"),
        ..Usage::default()
    }
}

impl StreamState {
    /// Reads one stdout line; returns the events it makes.
    pub fn on_line(&mut self, line: &str) -> Vec<RunEvent> {
        let line = line.trim();
        if line.is_empty() {
            return Vec::new();
        }
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            self.unparsed += 1;
            tracing::debug!(line, "claude printed a line that is not JSON");
            return Vec::new();
        };
        if self.session_id.is_none() {
            self.session_id = str_field(&event, "session_id");
        }
        match event.get("type").and_then(Value::as_str) {
            Some("system") => self.on_system(&event),
            Some("assistant") => self.on_assistant(&event),
            Some("user") => self.on_user(&event),
            Some("result") => self.on_result(&event),
            _ => Vec::new(),
        }
    }

    fn on_system(&mut self, event: &Value) -> Vec<RunEvent> {
        let field = |key: &str| str_field(event, key).unwrap_or_default();
        let message = match event.get("subtype").and_then(Value::as_str) {
            Some("init") => {
                self.model = str_field(event, "model");
                format!(
                    "claude session {} started (model {})",
                    field("session_id"),
                    self.model.as_deref().unwrap_or("unknown")
                )
            }
            Some("api_retry") => format!(
                "claude retries the model request (attempt {} of {}): {}",
                event.get("attempt").and_then(Value::as_u64).unwrap_or(0),
                event
                    .get("max_retries")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                field("error")
            ),
            Some("task_started") => format!(
                "nested agent started for call {}: {} ({})",
                field("tool_use_id"),
                field("description"),
                field("subagent_type")
            ),
            Some("task_notification") => format!(
                "nested agent {}: {}",
                field("status"),
                bounded(field("summary"), 512)
            ),
            _ => return Vec::new(),
        };
        vec![RunEvent::Progress { message }]
    }

    fn on_assistant(&mut self, event: &Value) -> Vec<RunEvent> {
        let parent = parent_of(event);
        let message = event.get("message");
        let blocks = message
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut events = Vec::new();
        for block in blocks {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let text = str_field(block, "text").unwrap_or_default();
                    if text.is_empty() {
                        continue;
                    }
                    if parent.is_none() {
                        self.last_text.clone_from(&text);
                        if event.get("error").is_some() {
                            self.assistant_error = Some(text.clone());
                        }
                    }
                    events.push(RunEvent::Text {
                        text,
                        parent_tool_use_id: parent.clone(),
                    });
                }
                Some("thinking") => {
                    if let Some(text) = str_field(block, "thinking").filter(|t| !t.is_empty()) {
                        events.push(RunEvent::Thinking { text });
                    }
                }
                Some("tool_use") => {
                    self.tool_uses += 1;
                    events.push(RunEvent::ToolCall {
                        id: str_field(block, "id").unwrap_or_default(),
                        name: str_field(block, "name").unwrap_or_default(),
                        input: block.get("input").cloned().unwrap_or(Value::Null),
                        parent_tool_use_id: parent.clone(),
                    });
                }
                _ => {}
            }
        }
        events
    }

    fn on_user(&mut self, event: &Value) -> Vec<RunEvent> {
        let parent = parent_of(event);
        let Some(blocks) = event
            .get("message")
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
        else {
            return Vec::new();
        };
        blocks
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_result"))
            .map(|block| RunEvent::ToolResult {
                id: str_field(block, "tool_use_id").unwrap_or_default(),
                output: bounded(
                    text_of(block.get("content").unwrap_or(&Value::Null)),
                    TOOL_OUTPUT_LIMIT,
                ),
                is_error: block
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                parent_tool_use_id: parent.clone(),
            })
            .collect()
    }

    fn on_result(&mut self, event: &Value) -> Vec<RunEvent> {
        let mut usage = usage_of(event.get("usage"));
        usage.tool_uses = self.tool_uses;
        let result = ResultEvent {
            subtype: str_field(event, "subtype").unwrap_or_default(),
            is_error: event
                .get("is_error")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            result: str_field(event, "result"),
            structured_output: event
                .get("structured_output")
                .filter(|v| !v.is_null())
                .cloned(),
            stop_reason: str_field(event, "stop_reason"),
            terminal_reason: str_field(event, "terminal_reason"),
            errors: event
                .get("errors")
                .and_then(Value::as_array)
                .map(|errors| errors.iter().map(text_of).collect())
                .unwrap_or_default(),
            api_error_status: event.get("api_error_status").and_then(Value::as_u64),
            usage,
            permission_denials: event
                .get("permission_denials")
                .and_then(Value::as_array)
                .map(|denials| {
                    denials
                        .iter()
                        .filter_map(|d| str_field(d, "tool_name"))
                        .collect()
                })
                .unwrap_or_default(),
        };
        if let Some(id) = str_field(event, "session_id") {
            self.session_id = Some(id);
        }
        self.result = Some(result);
        vec![RunEvent::Usage { usage }]
    }
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
                RunEvent::Progress {
                    message: "claude session s1 started (model m)".into()
                },
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
                    }
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

    /// The copies of the real CLI's output in `tests/fixtures` (from the reference transcripts
    /// of Claude Code 2.1.197), each with its name.
    pub(super) fn fixtures() -> Vec<(String, String)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut fixtures: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| {
                let path = entry.unwrap().path();
                let name = path.file_stem().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&path).unwrap())
            })
            .collect();
        fixtures.sort();
        fixtures
    }

    /// Each recorded transcript, line by line: one compact JSON line per event it makes, then
    /// what the outcome is made of.
    #[test]
    fn the_recorded_transcripts_make_these_events() {
        let fixtures = fixtures();
        assert_eq!(fixtures.len(), 11);
        for (name, text) in fixtures {
            let mut state = StreamState::default();
            let mut lines: Vec<String> = text
                .lines()
                .flat_map(|line| state.on_line(line))
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
            insta::assert_snapshot!(name, lines.join("\n"));
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
        assert!(bounded.len() < TOOL_OUTPUT_LIMIT + 32);
        assert!(bounded.ends_with("bytes]"));
    }
}
