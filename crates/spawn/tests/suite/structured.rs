//! Structured output through the capture tool: valid, and invalid then retried; turn limits.

use pretty_assertions::assert_eq;
use serde_json::json;
use subagent_core::registry::Registry;
use subagent_core::{Outcome, StartRequest, StopReason};
use subagent_model::ModelKind;
use subagent_test_support::FakeServer;

use super::support::{last_results, model, registry_with};

const STRUCTURED: &str = r#"
- name: retried
  match: "STRUCT-RETRY"
  steps:
    - tool_calls:
        - name: structured_output
          input: {count: "three"}
    - tool_calls:
        - name: structured_output
          input: {count: 3}
- name: valid
  match: "STRUCT-VALID"
  steps:
    - text: "Here it is."
      tool_calls:
        - name: structured_output
          input: {count: 7}
- name: endless
  match: "ENDLESS"
  steps:
    - tool_calls: [{name: ls, input: {}}]
    - tool_calls: [{name: ls, input: {}}]
    - tool_calls: [{name: ls, input: {}}]
"#;

fn schema() -> serde_json::Value {
    json!({"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]})
}

/// The outcome of `prompt` with [`schema`] on `registry`'s spawn, in `dir`.
async fn with_schema(registry: &Registry, dir: &std::path::Path, prompt: &str) -> Outcome {
    let request = StartRequest::builder(prompt)
        .cwd(dir)
        .output_schema(schema())
        .build();
    registry
        .start("spawn", request)
        .await
        .unwrap()
        .outcome()
        .await
}

async fn structured(kind: ModelKind) {
    let server = FakeServer::from_yaml(STRUCTURED).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with(&model(kind, &server), 3);

    let outcome = with_schema(&registry, dir.path(), "STRUCT-VALID count").await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    assert_eq!(outcome.structured, Some(json!({"count": 7})));
    let first = &server.model_requests()[0];
    assert_eq!(
        first.tool_names().last().map(String::as_str),
        Some("structured_output")
    );
    let tools = first.body.as_ref().unwrap()["tools"]
        .as_array()
        .unwrap()
        .clone();
    let capture = tools.last().unwrap();
    let schema_key = if kind == ModelKind::Anthropic {
        "input_schema"
    } else {
        "parameters"
    };
    assert_eq!(capture[schema_key], schema());

    let outcome = with_schema(&registry, dir.path(), "STRUCT-RETRY count").await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    assert_eq!(outcome.structured, Some(json!({"count": 3})));
    let requests = server.model_requests();
    let retry = requests.last().unwrap();
    let results = last_results(retry);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].1.contains("does not match the output schema"),
        "{}",
        results[0].1
    );
    assert!(results[0].1.contains("at /count"), "{}", results[0].1);
    if kind == ModelKind::Anthropic {
        assert!(results[0].2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_output_anthropic() {
    structured(ModelKind::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_output_responses() {
    structured(ModelKind::OpenaiResponses).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_turns_stops_the_run() {
    let server = FakeServer::from_yaml(STRUCTURED).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with(&model(ModelKind::Anthropic, &server), 3);
    let request = StartRequest::builder("ENDLESS")
        .cwd(dir.path())
        .max_turns(2)
        .build();
    let outcome = registry
        .start("spawn", request)
        .await
        .unwrap()
        .outcome()
        .await;
    assert_eq!(outcome.status, StopReason::MaxTurns);
    assert_eq!(server.model_requests().len(), 2);
    assert_eq!(outcome.usage.tool_uses, 2);
}
