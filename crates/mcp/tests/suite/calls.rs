//! `tools/call`: the child's answer comes back, with structured content when the call asks for
//! it, progress while it works, and the permission ceiling holding.

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_core::PermissionMode;

use super::support::{Harness, Setup, texts};

const ANSWER: &str = r#"
- match: "what is the password"
  steps:
    - text: "swordfish"
"#;

#[tokio::test]
async fn a_call_returns_the_childs_answer_then_its_usage_and_session() {
    let mut harness = Harness::start(ANSWER).await;
    let result = harness
        .call(
            "subagent",
            json!({"prompt": "what is the password?", "description": "ask"}),
        )
        .await;
    assert_eq!(result.is_error, Some(false));
    let texts = texts(&result);
    assert_eq!(texts[0], "swordfish");
    assert!(texts[1].starts_with("<session_id>"), "{}", texts[1]);
    assert!(texts[1].contains("<usage>input_tokens: "), "{}", texts[1]);
    let meta = result.meta.unwrap();
    assert_eq!(meta.0["provider"], "spawn");
    assert_eq!(meta.0["status"], "completed");
    assert_eq!(result.structured_content, None);
    // The SDK client always sends a progress token: the child's start and text came as progress.
    let mut messages = Vec::new();
    while let Ok(progress) = harness.progress.try_recv() {
        messages.push(progress.message.unwrap_or_default());
    }
    assert_eq!(
        messages.first().map(String::as_str),
        Some("started on spawn: ask")
    );
    assert!(
        messages.iter().any(|m| m == "text: swordfish"),
        "{messages:?}"
    );
    // The child's request reached the model with the prompt.
    let request = harness.model.model_requests().pop().unwrap();
    assert!(
        request
            .body
            .unwrap()
            .to_string()
            .contains("what is the password?")
    );
}

#[tokio::test]
async fn an_output_schema_comes_back_as_structured_content() {
    let harness = Harness::start(
        r#"
- match: "count the files"
  steps:
    - tool_calls:
        - name: structured_output
          input: {count: 3}
    - text: "done"
"#,
    )
    .await;
    let schema = json!({
        "type": "object",
        "properties": {"count": {"type": "integer"}},
        "required": ["count"]
    });
    let result = harness
        .call(
            "subagent",
            json!({"prompt": "count the files", "output_schema": schema}),
        )
        .await;
    assert_eq!(result.is_error, Some(false), "{:?}", texts(&result));
    assert_eq!(result.structured_content, Some(json!({"count": 3})));
    assert_eq!(texts(&result)[0], r#"{"count":3}"#);
}

const WRITE: &str = r#"
- match: "write the marker"
  steps:
    - tool_calls:
        - name: write_file
          input: {path: "marker.txt", content: "hello"}
    - text: "wrote it"
"#;

/// The preset lets spawn children edit (`accept-edits`); a server whose ceiling is `plan` runs
/// them read-only, and so does an agent type whose mode is `plan`: no argument loosens either.
#[tokio::test]
async fn the_servers_ceiling_and_an_agent_types_mode_only_tighten() {
    let harness = Harness::start(WRITE).await;
    let result = harness
        .call("subagent", json!({"prompt": "write the marker"}))
        .await;
    assert_eq!(result.is_error, Some(false));
    assert!(
        harness.project().join("marker.txt").exists(),
        "the preset's mode did not hold"
    );

    let harness = Harness::with(
        WRITE,
        Setup {
            ceiling: Some(PermissionMode::Plan),
            ..Setup::default()
        },
    )
    .await;
    let result = harness
        .call("subagent", json!({"prompt": "write the marker"}))
        .await;
    assert_eq!(result.is_error, Some(false));
    assert!(
        !harness.project().join("marker.txt").exists(),
        "wrote under a plan ceiling"
    );

    let harness = Harness::start(WRITE).await;
    let result = harness
        .call(
            "subagent",
            json!({"prompt": "write the marker", "subagent_type": "explore"}),
        )
        .await;
    assert_eq!(result.is_error, Some(false));
    assert!(
        !harness.project().join("marker.txt").exists(),
        "a plan agent type wrote"
    );
}
