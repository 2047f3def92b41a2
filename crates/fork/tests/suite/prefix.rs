//! The fork's first request starts with the parent's exact prefix; a fork cannot delegate.

use pretty_assertions::assert_eq;
use serde_json::Value;
use subagent_core::{Capability, Error, ParentContext, StartRequest, ToolFilter};
use subagent_fork::fork_task_text;
use subagent_model::ModelKind;
use subagent_runtime::NESTED_REFUSAL;
use subagent_session::{ContentBlock, FORKED_TOOL_RESULT, Message, Role};
use subagent_test_support::{FakeServer, RecordedRequest};

use super::support::{
    PARENT_SYSTEM, fork_it, fork_row, is_fork_request, model, notified, parent_config, registry,
};

const SCENARIO: &str = r#"
- name: fork-child
  match: "FORK-JOB"
  steps:
    - text: "Trying to delegate."
      tool_calls:
        - name: subagent
          input: {bogus: 1}
    - text: "fork report: all good"
- name: parent
  match: "please fork"
  steps:
    - text: "Forking now."
      tool_calls:
        - name: ls
          input: {}
        - name: subagent
          input: {prompt: "FORK-JOB: look around", description: "look around"}
    - text: "Waiting for the fork."
"#;

fn results(message: &Message) -> Vec<(String, String)> {
    message
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => Some((tool_use_id.clone(), content.to_text())),
            _ => None,
        })
        .collect()
}

async fn fork_prefix(kind: ModelKind) {
    let server = FakeServer::from_yaml(&notified("The fork reported back.", SCENARIO))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = model(kind, &server);
    let registry = registry();
    let config = parent_config(&model, dir.path(), &registry, fork_row());
    let outcome = fork_it(config).await;
    assert_eq!(outcome.text, "The fork reported back.");
    assert_eq!(server.violations(), Vec::<String>::new());

    let requests = server.model_requests();
    let parent_first = &requests[0];
    let forks: Vec<&RecordedRequest> = requests.iter().filter(|r| is_fork_request(r)).collect();
    assert_eq!(forks.len(), 2, "the fork made two model calls");
    let fork_first = forks[0];
    let (pbody, fbody) = (
        parent_first.body.as_ref().unwrap(),
        fork_first.body.as_ref().unwrap(),
    );
    // Same system prompt, same tools in the same order, byte for byte.
    let system_key = match kind {
        ModelKind::Anthropic => "system",
        _ => "instructions",
    };
    assert_eq!(fbody[system_key], pbody[system_key]);
    assert!(pbody[system_key].to_string().contains(PARENT_SYSTEM));
    assert_eq!(fbody["tools"].to_string(), pbody["tools"].to_string());
    assert!(fbody["tools"].as_array().unwrap().len() >= 9);
    // Same messages: the parent's prompt, then the assistant message that made the call.
    assert_eq!(fork_first.messages.len(), 3);
    assert_eq!(fork_first.messages[0], parent_first.messages[0]);
    let call = &fork_first.messages[1];
    assert_eq!(call.role, Role::Assistant);
    let calls: Vec<(String, String)> = call
        .tool_uses()
        .map(|(id, name, _)| (id.to_owned(), name.to_owned()))
        .collect();
    assert_eq!(
        calls.iter().map(|c| c.1.as_str()).collect::<Vec<_>>(),
        ["ls", "subagent"]
    );
    // The parent's own next request carries the same assistant message.
    let parent_second = requests
        .iter()
        .find(|r| !is_fork_request(r) && r.messages.len() == 3)
        .unwrap();
    assert_eq!(parent_second.messages[1], *call);
    // Every call answered with the placeholder, then preamble + task in the same message.
    let seed = &fork_first.messages[2];
    assert_eq!(seed.role, Role::User);
    assert_eq!(
        results(seed),
        calls
            .iter()
            .map(|(id, _)| (id.clone(), FORKED_TOOL_RESULT.to_owned()))
            .collect::<Vec<_>>()
    );
    if kind == ModelKind::Anthropic {
        assert!(seed.content.iter().all(|b| match b {
            ContentBlock::ToolResult { is_error, .. } => *is_error,
            _ => true,
        }));
        // The raw JSON of the shared assistant message is identical too.
        assert_eq!(fbody["messages"][1], pbody_message(&requests, 1));
    }
    assert_eq!(
        seed.content.last().and_then(ContentBlock::as_text),
        Some(fork_task_text("FORK-JOB: look around", None).as_str())
    );
    // Inside the fork, the delegation tool refuses, whatever the arguments.
    let fork_second = forks[1];
    let refusal = results(fork_second.messages.last().unwrap());
    assert_eq!(refusal.len(), 1);
    assert_eq!(refusal[0].1, NESTED_REFUSAL);
    assert_eq!(NESTED_REFUSAL.chars().count(), 123);
}

/// The raw JSON of message `index` in the parent's second request (Anthropic).
fn pbody_message(requests: &[RecordedRequest], index: usize) -> Value {
    let second = requests
        .iter()
        .find(|r| !is_fork_request(r) && r.messages.len() == 3)
        .unwrap();
    second.body.as_ref().unwrap()["messages"][index].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_first_request_is_the_parents_prefix_anthropic() {
    fork_prefix(ModelKind::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_first_request_is_the_parents_prefix_responses() {
    fork_prefix(ModelKind::OpenaiResponses).await;
}

#[tokio::test]
async fn fork_refuses_what_would_break_the_prefix() {
    let registry = registry();
    let request = StartRequest::builder("x")
        .tool_filter(ToolFilter::deny(["bash"]))
        .persona("p")
        .model("m")
        .build();
    let error = registry.start("fork", request).await.unwrap_err();
    assert_eq!(
        error,
        Error::UnsupportedCapability {
            provider: "fork".into(),
            missing: vec![
                Capability::ToolFilter,
                Capability::Persona,
                Capability::ModelOverride
            ],
            because: None,
        }
    );
    let caps = registry.get("fork").unwrap().capabilities();
    assert!(caps.inherits_parent_context && caps.output_schema && caps.depth_limit);
    // Without the parent's state a fork cannot start.
    let error = registry
        .start(
            "fork",
            StartRequest::builder("x")
                .parent(ParentContext::default())
                .build(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code().as_str(), "INVALID_ARGUMENTS");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_structured_output_is_validated_with_retry_turns() {
    let scenario = r#"
- name: fork-child
  match: "FORK-JSON"
  steps:
    - text: "not json at all"
    - text: "{\"count\": 3}"
- name: parent
  match: "please fork"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "FORK-JSON count", output_schema: {type: object, properties: {count: {type: integer}}, required: [count]}}
    - text: "Waiting."
"#;
    let server = FakeServer::from_yaml(&notified("done", scenario))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = model(ModelKind::Anthropic, &server);
    let registry = registry();
    let config = parent_config(&model, dir.path(), &registry, fork_row());
    let tools_before = config.tools.specs().to_vec();
    fork_it(config).await;
    let requests = server.model_requests();
    let last = requests.last().unwrap();
    let notification = last.messages.last().unwrap().text();
    assert!(
        notification.contains("<status>completed</status>"),
        "{notification}"
    );
    assert!(
        notification.contains(r#"<result>{"count":3}</result>"#),
        "{notification}"
    );
    // The fork's tool list never changed: no capture tool was added.
    let forks: Vec<&RecordedRequest> = requests.iter().filter(|r| is_fork_request(r)).collect();
    assert_eq!(forks.len(), 2);
    let names: Vec<&str> = forks[0].body.as_ref().unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        tools_before
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
    );
    let retry = forks[1].messages.last().unwrap().text();
    assert!(retry.starts_with("[structured-output-enforce]"), "{retry}");
}
