use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::json;
use subagent_test_support::cli_lines::Vocabulary;
use subagent_test_support::recorded::kinds_read_as_written;

use super::*;
use crate::events::StreamState;
use crate::events::tests::fixture_lines;

/// What a line was read as, by the names claude uses.
fn read_as(line: &str) -> String {
    let Parsed::Line(line) = parse(line) else {
        return "not an object".into();
    };
    let Line { event, .. } = *line;
    match event {
        Event::System(system) => format!(
            "system/{}",
            match system {
                System::Init { .. } => "init",
                System::ApiRetry { .. } => "api_retry",
                System::TaskStarted { .. } => "task_started",
                System::TaskNotification { .. } => "task_notification",
                System::Other => "other",
            }
        ),
        Event::Assistant(message) => format!("assistant{}", blocks(&message)),
        Event::User(message) => format!("user{}", blocks(&message)),
        Event::Result(finished) => format!("result/{}", finished.subtype),
        Event::Unknown => "unknown".into(),
    }
}

fn blocks(message: &Message) -> String {
    let names: Vec<_> = (message.message.content.iter())
        .map(|block| match block {
            Block::Text { .. } => "text",
            Block::Thinking { .. } => "thinking",
            Block::ToolUse { .. } => "tool_use",
            Block::ToolResult { .. } => "tool_result",
            Block::Other => "other",
        })
        .collect();
    format!("[{}]", names.join(","))
}

/// What the line says it is, read from its JSON.
fn written_as(line: &str) -> String {
    let value: Value = serde_json::from_str(line).unwrap();
    let kind = value["type"].as_str().unwrap();
    let subtype = value["subtype"].as_str().unwrap_or_default();
    let blocks = || {
        let names: Vec<_> = (value["message"]["content"].as_array().into_iter().flatten())
            .map(|block| block["type"].as_str().unwrap())
            .collect();
        format!("[{}]", names.join(","))
    };
    match kind {
        "system"
            if ["init", "api_retry", "task_started", "task_notification"].contains(&subtype) =>
        {
            format!("system/{subtype}")
        }
        "system" => "system/other".into(),
        "assistant" | "user" => format!("{kind}{}", blocks()),
        "result" => format!("result/{subtype}"),
        _ => "unknown".into(),
    }
}

#[test]
fn every_line_of_the_recorded_transcripts_is_read_as_what_it_says() {
    let kinds = kinds_read_as_written(&fixture_lines(), read_as, written_as);
    // The transcripts cover every event, subtype and block this crate reads.
    assert_eq!(
        kinds,
        [
            "assistant[text]",
            "assistant[thinking]",
            "assistant[tool_use]",
            "result/error_during_execution",
            "result/error_max_turns",
            "result/success",
            "system/api_retry",
            "system/init",
            "system/other",
            "system/task_notification",
            "system/task_started",
            "unknown",
            "user[]",
            "user[text]",
            "user[tool_result]",
        ]
    );
}

#[test]
fn fields_of_other_types_read_as_missing() {
    let line = json!({"type": "result", "subtype": ["x"], "is_error": "yes", "usage": [1],
            "errors": "boom", "permission_denials": [["Bash"], {"tool_name": "Write"}],
            "structured_output": null, "session_id": 7});
    let Parsed::Line(line) = parse(&line.to_string()) else {
        panic!("not an object");
    };
    let Line {
        session_id,
        event: Event::Result(finished),
    } = *line
    else {
        panic!("not a result");
    };
    assert_eq!(session_id, None);
    assert_eq!(
        (
            finished.subtype.as_str(),
            finished.is_error,
            Usage::from(finished.usage),
            finished.errors.len(),
            finished.structured_output,
            (finished.permission_denials.into_iter())
                .map(|denial| denial.tool_name)
                .collect::<Vec<_>>(),
        ),
        (
            "",
            false,
            Usage::default(),
            0,
            None,
            vec![None, Some("Write".into())]
        )
    );
}

const KNOWN: [&str; 4] = ["system", "assistant", "user", "result"];

const WORDS: Vocabulary = Vocabulary {
    types: &KNOWN,
    fields: "type|subtype|session_id|model|message|content|text|thinking|input\
                 |parent_tool_use_id|error|is_error|result|errors|usage|input_tokens\
                 |permission_denials|tool_name|.{0,6}",
    strings: "text|thinking|tool_use|tool_result|init|api_retry|.{0,6}",
    tags: &["type", "subtype"],
};

proptest! {
    /// Whatever claude prints as a JSON object is an event: of its type when it is one this
    /// crate reads, else skipped as unknown. Nothing panics, nothing is an error.
    #[test]
    fn any_object_is_an_event_or_skipped_unknown((kind, line) in WORDS.event()) {
        let known = KNOWN.contains(&kind.as_str());
        let Parsed::Line(parsed) = parse(&line) else {
            return Err(TestCaseError::fail(format!("not read: {line}")));
        };
        prop_assert_eq!(known, !matches!(parsed.event, Event::Unknown), "{}", line);
        let mut state = StreamState::default();
        let events = state.on_line(&line);
        prop_assert_eq!(state.unparsed, 0);
        if !known {
            prop_assert_eq!(events, vec![]);
        }
    }
}
