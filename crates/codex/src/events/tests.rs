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
            RunEvent::Usage {
                usage,
                parent_tool_use_id: None
            },
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
            RunEvent::progress("codex event brand.new"),
            RunEvent::progress("Model metadata for `m` not found."),
        ]
    );
}

/// Every line of the copies of the real CLI's output in `tests/fixtures` (from the
/// reference transcripts of codex 0.171.0), with its file's name.
pub(super) fn fixture_lines() -> Vec<(String, String)> {
    subagent_test_support::recorded::fixture_lines(env!("CARGO_MANIFEST_DIR"))
}

/// Each recorded transcript, line by line: one compact JSON line per event it makes
/// (`reconnecting` where a line started the reconnect timer), then what the outcome is made
/// of.
#[test]
fn the_recorded_transcripts_make_these_events() {
    let lines = fixture_lines();
    let transcripts: Vec<_> = lines.chunk_by(|a, b| a.0 == b.0).collect();
    assert_eq!(transcripts.len(), 18);
    for transcript in transcripts {
        let mut state = StreamState::default();
        let mut lines = Vec::new();
        for (_, line) in transcript {
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
        insta::assert_snapshot!(transcript[0].0.clone(), lines.join("\n"));
    }
}

#[test]
fn long_tool_output_is_bounded() {
    let long = "é".repeat(TOOL_OUTPUT_LIMIT);
    let line = json!({"type": "item.completed", "item": {"id": "i", "type": "command_execution",
            "command": "x", "aggregated_output": long, "exit_code": 0, "status": "completed"}})
    .to_string();
    let (_, events) = feed(&line);
    let Some(RunEvent::ToolResult { output, .. }) = events.get(1) else {
        panic!("no tool result: {events:?}");
    };
    assert!(output.len() <= TOOL_OUTPUT_LIMIT + "…[truncated]".len());
    assert!(output.ends_with("…[truncated]"));
}
