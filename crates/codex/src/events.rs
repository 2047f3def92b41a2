//! Reading `codex exec --json` output: one JSON object per stdout line, turned into
//! [`RunEvent`]s and the facts the outcome is made of (thread id, last answer, usage, failure).
//!
//! Event shapes (codex 0.171.0): `thread.started {thread_id}`, `turn.started`,
//! `item.started` / `item.updated` / `item.completed {item: {id, type, …}}`,
//! `turn.completed {usage}`, `turn.failed {error: {message}}`, `error {message}`. Unknown event
//! and item types are tolerated (codex adds them between releases): they become progress events.

use serde_json::{Value, json};
use subagent_core::{RunEvent, Usage};

/// The prefix of the `error` events codex emits while it retries (forever, for a refused
/// connection). They are progress, not a failure, and not activity either.
pub const RECONNECTING_PREFIX: &str = "Reconnecting...";

/// The most of a tool's output a [`RunEvent::ToolResult`] carries, in bytes.
pub const TOOL_OUTPUT_LIMIT: usize = 16 * 1024;

/// How a line moved the run along, for the idle timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    /// Real progress: resets both idle timers.
    Progress,
    /// Codex is reconnecting to the model server: starts (or keeps) the reconnect timer.
    Reconnecting,
}

/// What the stream said so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamState {
    /// The thread id from `thread.started`.
    pub thread_id: Option<String>,
    /// The text of the last `agent_message` item.
    pub last_message: Option<String>,
    /// Usage summed over `turn.completed` events, plus the tool-use count.
    pub usage: Usage,
    /// A `turn.completed` was seen.
    pub turn_completed: bool,
    /// The message of `turn.failed`, if any.
    pub turn_failed: Option<String>,
    /// The last `error` event's message (reconnect messages included).
    pub last_error: Option<String>,
    /// Lines that were not JSON objects (kept short, for diagnostics).
    pub stray_lines: Vec<String>,
    started_items: std::collections::HashSet<String>,
}

fn str_of<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn truncate(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    format!("{}…[truncated]", &text[..text.floor_char_boundary(limit)])
}

/// The tool name and input a tool-like item is reported with, or `None` for other items.
fn tool_call_of(item: &Value) -> Option<(String, Value)> {
    let kind = str_of(item, "type")?;
    match kind {
        "command_execution" => Some((
            "exec_command".to_owned(),
            json!({"command": item.get("command").cloned().unwrap_or(Value::Null)}),
        )),
        "file_change" => Some((
            "apply_patch".to_owned(),
            json!({"changes": item.get("changes").cloned().unwrap_or(Value::Null)}),
        )),
        "collab_tool_call" => Some((
            str_of(item, "tool")
                .unwrap_or("collab_tool_call")
                .to_owned(),
            json!({"prompt": item.get("prompt").cloned().unwrap_or(Value::Null)}),
        )),
        "mcp_tool_call" => Some((
            format!(
                "mcp__{}__{}",
                str_of(item, "server").unwrap_or("unknown"),
                str_of(item, "tool").unwrap_or("unknown")
            ),
            item.get("arguments").cloned().unwrap_or(Value::Null),
        )),
        "web_search" => Some((
            "web_search".to_owned(),
            json!({"query": item.get("query").cloned().unwrap_or(Value::Null)}),
        )),
        _ => None,
    }
}

/// The output text and error flag a completed tool-like item is reported with.
fn tool_result_of(item: &Value) -> (String, bool) {
    let failed = str_of(item, "status") == Some("failed");
    match str_of(item, "type") {
        Some("command_execution") => {
            let output = str_of(item, "aggregated_output").unwrap_or_default();
            let exit = item.get("exit_code").and_then(Value::as_i64);
            (
                output.to_owned(),
                failed || exit.is_some_and(|code| code != 0),
            )
        }
        Some("file_change") => {
            let changes = item
                .get("changes")
                .and_then(Value::as_array)
                .map(|changes| {
                    changes
                        .iter()
                        .map(|c| {
                            format!(
                                "{} {}",
                                str_of(c, "kind").unwrap_or("update"),
                                str_of(c, "path").unwrap_or("?")
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .unwrap_or_default();
            (changes, failed)
        }
        Some("collab_tool_call") => {
            let receivers = item
                .get("receiver_thread_ids")
                .cloned()
                .unwrap_or(Value::Null);
            (
                json!({"receiver_thread_ids": receivers}).to_string(),
                failed,
            )
        }
        _ => {
            let result = item
                .get("result")
                .or_else(|| item.get("error"))
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_default();
            (
                result,
                failed || item.get("error").is_some_and(|e| !e.is_null()),
            )
        }
    }
}

fn usage_of(value: &Value) -> Usage {
    let n = |key: &str| value.get(key).and_then(Value::as_u64).unwrap_or(0);
    let cached = n("cached_input_tokens");
    Usage {
        // Codex's `input_tokens` includes the cached part; ours counts uncached input only.
        input_tokens: n("input_tokens").saturating_sub(cached),
        output_tokens: n("output_tokens"),
        cache_read_tokens: cached,
        cache_write_tokens: n("cache_write_input_tokens"),
        ..Usage::default()
    }
}

impl StreamState {
    /// Reads one stdout line, pushing the events it makes into `out`. Returns how the line moved
    /// the run along.
    pub fn line(&mut self, line: &str, out: &mut Vec<RunEvent>) -> Activity {
        let line = line.trim();
        if line.is_empty() {
            return Activity::Progress;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(value @ Value::Object(_)) => value,
            _ => {
                if self.stray_lines.len() < 8 {
                    self.stray_lines.push(truncate(line, 512));
                }
                return Activity::Progress;
            }
        };
        match str_of(&value, "type").unwrap_or_default() {
            "thread.started" => {
                if let Some(id) = str_of(&value, "thread_id") {
                    self.thread_id = Some(id.to_owned());
                }
            }
            "turn.started" => {}
            "turn.completed" => {
                self.turn_completed = true;
                if let Some(usage) = value.get("usage") {
                    self.usage.add(&usage_of(usage));
                }
                out.push(RunEvent::Usage { usage: self.usage });
            }
            "turn.failed" => {
                let message = value
                    .get("error")
                    .and_then(|e| str_of(e, "message"))
                    .unwrap_or("codex reported a failed turn without a message");
                self.turn_failed = Some(message.to_owned());
            }
            "error" => {
                let message = str_of(&value, "message").unwrap_or("codex reported an error");
                self.last_error = Some(message.to_owned());
                out.push(RunEvent::Progress {
                    message: message.to_owned(),
                });
                if message.starts_with(RECONNECTING_PREFIX) {
                    return Activity::Reconnecting;
                }
            }
            "item.started" | "item.updated" | "item.completed" => {
                if let Some(item) = value.get("item") {
                    let completed = str_of(&value, "type") == Some("item.completed");
                    self.item(item, completed, out);
                }
            }
            other => out.push(RunEvent::Progress {
                message: format!("codex event {other}"),
            }),
        }
        Activity::Progress
    }

    fn item(&mut self, item: &Value, completed: bool, out: &mut Vec<RunEvent>) {
        let id = str_of(item, "id").unwrap_or_default().to_owned();
        if let Some((name, input)) = tool_call_of(item) {
            if self.started_items.insert(id.clone()) {
                self.usage.tool_uses += 1;
                out.push(RunEvent::ToolCall {
                    id: id.clone(),
                    name,
                    input,
                    parent_tool_use_id: None,
                });
            }
            if completed {
                let (output, is_error) = tool_result_of(item);
                out.push(RunEvent::ToolResult {
                    id,
                    output: truncate(&output, TOOL_OUTPUT_LIMIT),
                    is_error,
                    parent_tool_use_id: None,
                });
            }
            return;
        }
        if !completed {
            return;
        }
        match str_of(item, "type").unwrap_or_default() {
            "agent_message" => {
                let text = str_of(item, "text").unwrap_or_default().to_owned();
                out.push(RunEvent::Text {
                    text: text.clone(),
                    parent_tool_use_id: None,
                });
                self.last_message = Some(text);
            }
            "reasoning" => out.push(RunEvent::Thinking {
                text: str_of(item, "text").unwrap_or_default().to_owned(),
            }),
            "error" => out.push(RunEvent::Progress {
                message: str_of(item, "message")
                    .unwrap_or("codex warning")
                    .to_owned(),
            }),
            other => out.push(RunEvent::Progress {
                message: format!("codex item {other}"),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn feed(lines: &str) -> (StreamState, Vec<RunEvent>) {
        let mut state = StreamState::default();
        let mut out = Vec::new();
        for line in lines.lines() {
            state.line(line, &mut out);
        }
        (state, out)
    }

    #[test]
    fn hello() {
        let (state, events) = feed(concat!(
            r#"{"type":"thread.started","thread_id":"t-1"}"#,
            "\n",
            r#"{"type":"turn.started"}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"hmm"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"hi from fake"}}"#,
            "\n",
            r#"{"type":"turn.completed","usage":{"input_tokens":9517,"cached_input_tokens":17,"cache_write_input_tokens":3,"output_tokens":46,"reasoning_output_tokens":0}}"#,
        ));
        let usage = Usage {
            input_tokens: 9500,
            output_tokens: 46,
            cache_read_tokens: 17,
            cache_write_tokens: 3,
            ..Usage::default()
        };
        assert_eq!(
            events,
            vec![
                RunEvent::Thinking { text: "hmm".into() },
                RunEvent::Text {
                    text: "hi from fake".into(),
                    parent_tool_use_id: None
                },
                RunEvent::Usage { usage },
            ]
        );
        assert_eq!(state.thread_id.as_deref(), Some("t-1"));
        assert_eq!(state.last_message.as_deref(), Some("hi from fake"));
        assert!(state.turn_completed);
        assert_eq!(state.usage, usage);
    }

    #[test]
    fn command_and_patch_items_become_tool_calls() {
        let (state, events) = feed(concat!(
            r#"{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'ls /x'","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'ls /x'","aggregated_output":"ls: no\n","exit_code":2,"status":"failed"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"/p/a.txt","kind":"add"}],"status":"completed"}}"#,
        ));
        assert_eq!(
            events,
            vec![
                RunEvent::ToolCall {
                    id: "item_1".into(),
                    name: "exec_command".into(),
                    input: json!({"command": "/bin/bash -lc 'ls /x'"}),
                    parent_tool_use_id: None
                },
                RunEvent::ToolResult {
                    id: "item_1".into(),
                    output: "ls: no\n".into(),
                    is_error: true,
                    parent_tool_use_id: None
                },
                RunEvent::ToolCall {
                    id: "item_2".into(),
                    name: "apply_patch".into(),
                    input: json!({"changes": [{"path": "/p/a.txt", "kind": "add"}]}),
                    parent_tool_use_id: None
                },
                RunEvent::ToolResult {
                    id: "item_2".into(),
                    output: "add /p/a.txt".into(),
                    is_error: false,
                    parent_tool_use_id: None
                },
            ]
        );
        assert_eq!(state.usage.tool_uses, 2);
    }

    #[test]
    fn failures_and_reconnects() {
        let mut state = StreamState::default();
        let mut out = Vec::new();
        let reconnect = r#"{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}"#;
        assert_eq!(state.line(reconnect, &mut out), Activity::Reconnecting);
        assert_eq!(
            state.line(
                r#"{"type":"error","message":"The model `bogus` does not exist"}"#,
                &mut out
            ),
            Activity::Progress
        );
        state.line(
            r#"{"type":"turn.failed","error":{"message":"The model `bogus` does not exist"}}"#,
            &mut out,
        );
        assert_eq!(
            state.turn_failed.as_deref(),
            Some("The model `bogus` does not exist")
        );
        assert!(!state.turn_completed);
    }

    #[test]
    fn stray_and_unknown_lines_are_tolerated() {
        let (state, events) = feed(concat!(
            "warning: something\n",
            r#"{"type":"brand.new","x":1}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `m` not found."}}"#,
            "\n[1,2]",
        ));
        assert_eq!(
            state.stray_lines,
            vec!["warning: something".to_owned(), "[1,2]".to_owned()]
        );
        assert_eq!(
            events,
            vec![
                RunEvent::Progress {
                    message: "codex event brand.new".into()
                },
                RunEvent::Progress {
                    message: "Model metadata for `m` not found.".into()
                },
            ]
        );
    }

    /// Each recorded transcript (copied to `tests/fixtures` from the reference output of codex
    /// 0.171.0), line by line: one compact JSON line per event it makes (`reconnecting` where a
    /// line started the reconnect timer), then what the outcome is made of.
    #[test]
    fn the_recorded_transcripts_make_these_events() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut paths: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        paths.sort();
        assert_eq!(paths.len(), 18);
        for path in paths {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let mut state = StreamState::default();
            let mut lines = Vec::new();
            for line in std::fs::read_to_string(&path).unwrap().lines() {
                let mut out = Vec::new();
                if state.line(line, &mut out) == Activity::Reconnecting {
                    lines.push("reconnecting".to_owned());
                }
                lines.extend(
                    out.iter()
                        .map(|event| serde_json::to_string(event).unwrap()),
                );
            }
            let mut started: Vec<_> = state.started_items.iter().collect();
            started.sort();
            lines.push(
                json!({
                    "thread_id": state.thread_id, "last_message": state.last_message,
                    "usage": state.usage, "turn_completed": state.turn_completed,
                    "turn_failed": state.turn_failed, "last_error": state.last_error,
                    "stray_lines": state.stray_lines, "started_items": started,
                })
                .to_string(),
            );
            insta::assert_snapshot!(name, lines.join("\n"));
        }
    }

    #[test]
    fn long_tool_output_is_bounded() {
        let long = "é".repeat(TOOL_OUTPUT_LIMIT);
        let line =
            json!({"type": "item.completed", "item": {"id": "i", "type": "command_execution",
            "command": "x", "aggregated_output": long, "exit_code": 0, "status": "completed"}})
            .to_string();
        let (_, events) = feed(&line);
        let Some(RunEvent::ToolResult { output, .. }) = events.get(1) else {
            panic!("no tool result: {events:?}");
        };
        assert!(output.len() <= TOOL_OUTPUT_LIMIT + "…[truncated]".len());
        assert!(output.ends_with("…[truncated]"));
    }
}
