use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::json;
use subagent_core::RunEvent;
use subagent_test_support::cli_lines::Vocabulary;
use subagent_test_support::recorded::kinds_read_as_written;

use super::*;
use crate::events::StreamState;
use crate::events::tests::fixture_lines;

/// What a line was read as, by the names codex uses.
fn read_as(line: &str) -> String {
    let event = match parse(line) {
        Parsed::Event(event) => event,
        Parsed::Unknown(kind) => return format!("unknown {kind}"),
        Parsed::Stray => return "stray".into(),
    };
    let item = |name: &str, event: ItemEvent| match event.item().map(|item| item.kind) {
        Some(Kind::Known(kind)) => format!("{name} {}", item_name(&kind)),
        Some(Kind::Unknown(Unnamed { kind })) => format!("{name} unknown {kind}"),
        None => format!("{name} without item"),
    };
    match *event {
        Event::ThreadStarted { .. } => "thread.started".into(),
        Event::TurnStarted => "turn.started".into(),
        Event::TurnCompleted { .. } => "turn.completed".into(),
        Event::TurnFailed { .. } => "turn.failed".into(),
        Event::Error { .. } => "error".into(),
        Event::ItemStarted(event) => item("item.started", event),
        Event::ItemUpdated(event) => item("item.updated", event),
        Event::ItemCompleted(event) => item("item.completed", event),
    }
}

fn item_name(kind: &ItemKind) -> &'static str {
    match kind {
        ItemKind::AgentMessage { .. } => "agent_message",
        ItemKind::Reasoning { .. } => "reasoning",
        ItemKind::Error { .. } => "error",
        ItemKind::CommandExecution { .. } => "command_execution",
        ItemKind::FileChange { .. } => "file_change",
        ItemKind::CollabToolCall { .. } => "collab_tool_call",
        ItemKind::McpToolCall { .. } => "mcp_tool_call",
        ItemKind::WebSearch { .. } => "web_search",
    }
}

/// What the line says it is, read from its JSON.
fn written_as(line: &str) -> String {
    let value: Value = serde_json::from_str(line).unwrap();
    let kind = value["type"].as_str().unwrap();
    match value["item"]["type"].as_str() {
        Some(item) => format!("{kind} {item}"),
        None => kind.to_owned(),
    }
}

#[test]
fn every_line_of_the_recorded_transcripts_is_read_as_what_it_says() {
    let kinds = kinds_read_as_written(&fixture_lines(), read_as, written_as);
    // The transcripts cover every event and most items this crate reads.
    assert_eq!(
        kinds,
        [
            "error",
            "item.completed agent_message",
            "item.completed collab_tool_call",
            "item.completed command_execution",
            "item.completed error",
            "item.completed file_change",
            "item.completed reasoning",
            "item.started collab_tool_call",
            "item.started command_execution",
            "item.started file_change",
            "thread.started",
            "turn.completed",
            "turn.failed",
            "turn.started",
        ]
    );
}

#[test]
fn fields_of_other_types_read_as_missing() {
    let line = json!({"type": "item.completed", "item": {"id": 3, "type": "file_change",
            "status": ["failed"], "changes": [["add", "/p"], {"path": "/q", "kind": 1}]}});
    let Parsed::Event(event) = parse(&line.to_string()) else {
        panic!("not an event");
    };
    let Event::ItemCompleted(event) = *event else {
        panic!("not an item");
    };
    let Some(Item {
        id,
        status,
        kind: Kind::Known(kind),
    }) = event.item()
    else {
        panic!("not a known item");
    };
    let ItemKind::FileChange { changes } = *kind else {
        panic!("not a file change");
    };
    assert_eq!(
        (
            id.as_str(),
            status,
            (Change::all(&changes).into_iter())
                .map(|change| (change.path, change.kind))
                .collect::<Vec<_>>()
        ),
        ("", None, vec![(None, None), (Some("/q".into()), None)])
    );
}

const KNOWN: [&str; 8] = [
    "thread.started",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "error",
    "item.started",
    "item.updated",
    "item.completed",
];

const WORDS: Vocabulary = Vocabulary {
    types: &KNOWN,
    fields: "type|thread_id|usage|input_tokens|error|message|item|id|status|text|command\
                 |aggregated_output|exit_code|changes|path|kind|result|.{0,6}",
    strings: "agent_message|command_execution|file_change|failed|.{0,6}",
    tags: &["type"],
};

proptest! {
    /// Whatever codex prints as a JSON object is an event: of its type when it is one this
    /// crate reads, else skipped as unknown under its type's name (a progress event). Nothing
    /// panics, nothing is an error.
    #[test]
    fn any_object_is_an_event_or_skipped_unknown((kind, line) in WORDS.event()) {
        let known = KNOWN.contains(&kind.as_str());
        match parse(&line) {
            Parsed::Event(_) => prop_assert!(known, "{}", line),
            Parsed::Unknown(name) => {
                prop_assert!(!known, "{}", line);
                prop_assert_eq!(&name, &kind);
            }
            Parsed::Stray => return Err(TestCaseError::fail(format!("not read: {line}"))),
        }
        let mut state = StreamState::default();
        let mut events = Vec::new();
        state.line(&line, &mut events);
        prop_assert_eq!(state.stray_lines, Vec::<String>::new());
        if !known {
            prop_assert_eq!(
                events,
                vec![RunEvent::progress(format!("codex event {kind}"))]
            );
        }
    }
}
