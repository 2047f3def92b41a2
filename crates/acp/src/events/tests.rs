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
        // claude-agent-acp opens its answer with an empty chunk: no event.
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": ""}}),
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
            RunEvent::progress("plan: [completed] read; [pending] write"),
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
    let outcome = state.outcome(&response, false);
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
fn a_call_announced_without_input_waits_for_it() {
    // claude-agent-acp announces a call with `rawInput: {}` and sends the input in an update.
    let mut state = StreamState::default();
    let mut out = Vec::new();
    for value in [
        json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Write", "kind": "edit",
                   "status": "pending", "rawInput": {}}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "title": "Write a.txt",
                   "rawInput": {"file_path": "a.txt", "content": "x"}}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "failed",
                   "content": [{"type": "content", "content": {"type": "text", "text": "denied"}}]}),
        json!({"sessionUpdate": "tool_call", "toolCallId": "u", "title": "ls", "kind": "execute",
                   "status": "pending"}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "u", "status": "completed",
                   "rawOutput": {"stdout": "a\n", "formatted_output": "a\n", "exit_code": 0}}),
    ] {
        state.update(update(value), &mut out);
    }
    assert_eq!(
        out,
        vec![
            RunEvent::ToolCall {
                id: "t".into(),
                name: "edit".into(),
                input: json!({"file_path": "a.txt", "content": "x"}),
                parent_tool_use_id: None
            },
            RunEvent::ToolResult {
                id: "t".into(),
                output: "denied".into(),
                is_error: true,
                parent_tool_use_id: None
            },
            RunEvent::ToolCall {
                id: "u".into(),
                name: "execute".into(),
                input: json!({"title": "ls"}),
                parent_tool_use_id: None
            },
            RunEvent::ToolResult {
                id: "u".into(),
                output: "a\n".into(),
                is_error: false,
                parent_tool_use_id: None
            },
        ]
    );
    assert_eq!(state.tool_uses, 2);
}

#[test]
fn a_replayed_history_is_not_this_runs() {
    let mut state = StreamState {
        replaying: true,
        ..StreamState::default()
    };
    let mut out = Vec::new();
    let chunk =
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "old"}});
    state.update(update(chunk.clone()), &mut out);
    state.replaying = false;
    assert_eq!((out.len(), state.answer.as_str()), (0, ""));
    state.update(update(chunk), &mut out);
    assert_eq!(state.answer, "old");
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
        let response: PromptResponse = serde_json::from_value(json!({"stopReason": wire})).unwrap();
        assert_eq!(state.outcome(&response, true).status, status, "{wire}");
        if wire != "cancelled" {
            assert_eq!(state.outcome(&response, false).status, status, "{wire}");
        }
    }
    // codex-acp ends its turn as cancelled when a permission request is rejected: nobody
    // cancelled the run, so it failed, and says why.
    let response: PromptResponse =
        serde_json::from_value(json!({"stopReason": "cancelled"})).unwrap();
    let outcome = state.outcome(&response, false);
    assert_eq!(
        (outcome.status, outcome.diagnostic.as_deref()),
        (
            StopReason::Failed,
            Some(
                "the agent ended its prompt as cancelled although it was not cancelled (codex-acp \
                     does when a permission request is rejected)"
            )
        )
    );
}
