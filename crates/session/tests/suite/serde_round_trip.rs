//! Every session type survives a JSON round trip, with the wire names we promise.

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_session::{ContentBlock, Message, Role, SessionEvent, StopReason};

#[test]
fn events_round_trip_with_stable_wire_names() {
    let events = vec![
        SessionEvent::TurnStart { turn: 0 },
        SessionEvent::message(Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    thinking: "hmm".into(),
                    signature: Some("sig".into()),
                },
                ContentBlock::text("let me look"),
                ContentBlock::tool_use("call_1", "ls", json!({"path": "."})),
            ],
        )),
        SessionEvent::message(Message::new(
            Role::User,
            vec![ContentBlock::tool_result("call_1", "a\nb", false)],
        )),
        SessionEvent::TurnEnd {
            stop_reason: StopReason::MaxTurns,
        },
    ];
    let value = serde_json::to_value(&events).unwrap();
    assert_eq!(
        value,
        json!([
            {"type": "turn_start", "turn": 0},
            {"type": "message", "message": {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "text", "text": "let me look"},
                {"type": "tool_use", "id": "call_1", "name": "ls", "input": {"path": "."}}
            ]}},
            {"type": "message", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "a\nb"}
            ]}},
            {"type": "turn_end", "stop_reason": "max_turns"}
        ])
    );
    let back: Vec<SessionEvent> = serde_json::from_value(value).unwrap();
    assert_eq!(back, events);
}

#[test]
fn every_stop_reason_round_trips() {
    for reason in [
        StopReason::Completed,
        StopReason::Cancelled,
        StopReason::Failed,
        StopReason::MaxTurns,
        StopReason::MaxTokens,
        StopReason::Refused,
        StopReason::BudgetExceeded,
    ] {
        let text = serde_json::to_string(&reason).unwrap();
        assert_eq!(text, format!("\"{}\"", reason.as_str()));
        assert_eq!(serde_json::from_str::<StopReason>(&text).unwrap(), reason);
    }
}

#[test]
fn error_tool_results_carry_the_flag_and_blocks() {
    let block = ContentBlock::tool_result("x", "boom", true);
    let value = serde_json::to_value(&block).unwrap();
    assert_eq!(
        value,
        json!({"type": "tool_result", "tool_use_id": "x", "content": "boom", "is_error": true})
    );
    let blocks: ContentBlock = serde_json::from_value(json!({
        "type": "tool_result", "tool_use_id": "y",
        "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]
    }))
    .unwrap();
    match blocks {
        ContentBlock::ToolResult { content, .. } => assert_eq!(content.to_text(), "one\ntwo"),
        other => panic!("unexpected {other:?}"),
    }
}
