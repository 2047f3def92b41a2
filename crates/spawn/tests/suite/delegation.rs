//! A parent delegating to spawn: results, agent types, filters, read-only types, background.

use pretty_assertions::assert_eq;
use subagent_core::{AgentProfile, CancellationToken, StaticAgents, StopReason};
use subagent_fork::{ForkConfig, ForkProvider};
use subagent_model::ModelKind;
use subagent_runtime::{Agent, DelegationToolConfig};
use subagent_spawn::DEFAULT_SYSTEM_PROMPT;
use subagent_test_support::FakeServer;

use super::support::{
    agents, last_results, model, parent_config, registry_with, requests_for, tool_names,
};

const DELEGATE: &str = r#"
- name: child
  match: "CHILD-TASK"
  steps:
    - text: "child says 42"
- name: parent
  match: "please delegate"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "CHILD-TASK count the things", description: "count"}
    - text: "parent done"
"#;

async fn parent_delegates_to_spawn(kind: ModelKind) {
    let server = FakeServer::from_yaml(DELEGATE).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = model(kind, &server);
    let registry = registry_with(&model, 3);
    let config = parent_config(
        &model,
        dir.path(),
        &registry,
        DelegationToolConfig::new("spawn"),
        agents(),
    );
    let outcome = Agent::new(config)
        .unwrap()
        .start_prompt("please delegate", CancellationToken::new())
        .outcome()
        .await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    assert_eq!(outcome.text, "parent done");
    assert_eq!(outcome.usage.tool_uses, 1);
    assert_eq!(server.violations(), Vec::<String>::new());
    let requests = server.model_requests();
    assert_eq!(requests.len(), 3);
    // The child starts fresh: its own system prompt, only the task.
    let child = requests_for(&requests, "CHILD-TASK");
    assert_eq!(child.len(), 1);
    assert_eq!(child[0].messages.len(), 1);
    let system = child[0].body.as_ref().unwrap().to_string();
    assert!(system.contains(DEFAULT_SYSTEM_PROMPT));
    // The child inherits the parent's delegation tool, after the built-in tools.
    assert_eq!(
        tool_names(child[0]),
        [
            "ls",
            "read_file",
            "write_file",
            "edit_file",
            "delete",
            "glob",
            "grep",
            "bash",
            "subagent"
        ]
    );
    let parent_second = requests_for(&requests, "please delegate")
        .into_iter()
        .find(|r| r.messages.len() == 3)
        .unwrap();
    let results = last_results(parent_second);
    assert_eq!(results.len(), 1);
    let (_, text, is_error) = &results[0];
    assert!(!is_error || kind != ModelKind::Anthropic);
    assert!(
        text.starts_with(
            "child says 42\n\n<usage>input_tokens: 10, output_tokens: 5, tool_uses: 0"
        ),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parent_delegates_to_spawn_anthropic() {
    parent_delegates_to_spawn(ModelKind::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parent_delegates_to_spawn_responses() {
    parent_delegates_to_spawn(ModelKind::OpenaiResponses).await;
}

const TYPES: &str = r#"
- name: explore-child
  match: "EXPLORE-TASK"
  steps:
    - tool_calls:
        - name: write_file
          input: {path: "explore.txt", content: "x"}
    - text: "explore could not write"
- name: plan-child
  match: "PLAN-TASK"
  steps:
    - tool_calls:
        - name: write_file
          input: {path: "plan.txt", content: "x"}
        - name: bash
          input: {command: "touch plan-bash.txt"}
    - text: "plan could not write"
- name: parent
  match: "use the types"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "EXPLORE-TASK look", subagent_type: explore}
        - name: subagent
          input: {prompt: "PLAN-TASK think", subagent_type: plan}
        - name: subagent
          input: {prompt: "nothing", subagent_type: nope}
        - name: subagent
          input: {prompt: "nothing", subagent_type: forky}
    - text: "parent done"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_types_explore_and_plan_cannot_write_and_unknown_types_are_listed() {
    let server = FakeServer::from_yaml(TYPES).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = model(ModelKind::Anthropic, &server);
    let registry = registry_with(&model, 3);
    registry
        .register(std::sync::Arc::new(ForkProvider::new(
            "fork",
            ForkConfig::default(),
            None,
        )))
        .unwrap();
    let mut profiles = agents().agents();
    let mut forky = AgentProfile::new("forky", "A type whose provider cannot take a persona.");
    forky.provider = Some("fork".into());
    forky.instructions = Some("Be brief.".into());
    profiles.push(forky);
    let directory = std::sync::Arc::new(StaticAgents(profiles));
    let config = parent_config(
        &model,
        dir.path(),
        &registry,
        DelegationToolConfig::new("spawn"),
        directory,
    );
    let description = config.tools.get("subagent").unwrap().spec().description;
    assert!(description.contains("- explore: Read-only search of the code."));
    assert!(description.contains("fresh context"));
    let outcome = Agent::new(config)
        .unwrap()
        .start_prompt("use the types", CancellationToken::new())
        .outcome()
        .await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    for file in ["explore.txt", "plan.txt", "plan-bash.txt"] {
        assert!(!dir.path().join(file).exists(), "{file} was written");
    }
    let requests = server.model_requests();
    let read_only = ["ls", "read_file", "glob", "grep", "subagent"];
    for marker in ["EXPLORE-TASK", "PLAN-TASK"] {
        let child = requests_for(&requests, marker);
        assert_eq!(child.len(), 2, "{marker}");
        // The filtered tools are absent from what the model sees.
        assert_eq!(tool_names(child[0]), read_only, "{marker}");
        for (_, text, is_error) in last_results(child[1]) {
            assert!(is_error);
            assert!(text.starts_with("No tool named"), "{text}");
        }
    }
    let parent_second = requests_for(&requests, "use the types")
        .into_iter()
        .find(|r| r.messages.len() == 3)
        .unwrap();
    let results = last_results(parent_second);
    assert!(results[0].1.starts_with("explore could not write"));
    assert!(results[1].1.starts_with("plan could not write"));
    assert_eq!(
        results[2].1,
        r#"UNKNOWN_AGENT_TYPE: unknown agent type "nope" (available: "explore", "plan", "forky")"#
    );
    assert!(results[2].2);
    assert_eq!(
        results[3].1,
        r#"UNSUPPORTED_CAPABILITY: subagent provider "fork" does not support the capability: "persona""#
    );
}

const BACKGROUND: &str = r#"
- name: notification
  match: "<task-notification>"
  steps:
    - text: "got the background result"
- name: child
  match: "BG-TASK"
  steps:
    - text: "background child finished"
- name: parent
  match: "in the background"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "BG-TASK work", description: "bg work", run_in_background: true}
    - text: "I will wait."
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_delegation_returns_at_once_and_notifies_later() {
    let server = FakeServer::from_yaml(BACKGROUND).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = model(ModelKind::Anthropic, &server);
    let registry = registry_with(&model, 3);
    let config = parent_config(
        &model,
        dir.path(),
        &registry,
        DelegationToolConfig::new("spawn"),
        agents(),
    );
    let outcome = Agent::new(config)
        .unwrap()
        .start_prompt("do it in the background", CancellationToken::new())
        .outcome()
        .await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    assert_eq!(outcome.text, "got the background result");
    let requests = server.model_requests();
    let parent = requests_for(&requests, "in the background");
    let started = &last_results(parent[1])[0].1;
    assert!(
        started.starts_with("Started background subagent"),
        "{started}"
    );
    let last = parent.last().unwrap().messages.last().unwrap().text();
    assert!(last.contains("<status>completed</status>"), "{last}");
    assert!(
        last.contains("<result>background child finished</result>"),
        "{last}"
    );
    assert!(last.contains("<summary>bg work</summary>"), "{last}");
}

const FORWARD: &str = r#"
- name: child
  match: "CHILD-LOOKS"
  steps:
    - text: "child looking"
      tool_calls:
        - {id: call_child_ls, name: ls, input: {path: "."}}
    - text: "child found it"
- name: parent
  match: "please watch"
  steps:
    - tool_calls:
        - {id: call_delegate, name: subagent, input: {prompt: "CHILD-LOOKS around"}}
    - text: "parent done"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreground_childs_events_reach_the_parents_stream_tagged_with_the_call() {
    use futures::StreamExt;
    use subagent_core::RunEvent;

    let server = FakeServer::from_yaml(FORWARD).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = model(ModelKind::Anthropic, &server);
    let registry = registry_with(&model, 3);
    let config = parent_config(
        &model,
        dir.path(),
        &registry,
        DelegationToolConfig::new("spawn"),
        agents(),
    );
    let mut run = Agent::new(config)
        .unwrap()
        .start_prompt("please watch", CancellationToken::new());
    let events: Vec<RunEvent> = run.take_events().unwrap().collect().await;
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");

    let tagged = |id: Option<&String>| id.map(String::as_str) == Some("call_delegate");
    // The child's own events, in order, as the parent reports them.
    let child: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::Text {
                text,
                parent_tool_use_id,
            } if tagged(parent_tool_use_id.as_ref()) => Some(format!("text {text}")),
            RunEvent::ToolCall {
                id,
                name,
                parent_tool_use_id,
                ..
            } if tagged(parent_tool_use_id.as_ref()) => Some(format!("call {id} {name}")),
            RunEvent::ToolResult {
                id,
                is_error,
                parent_tool_use_id,
                ..
            } if tagged(parent_tool_use_id.as_ref()) => Some(format!("result {id} {is_error}")),
            _ => None,
        })
        .collect::<Vec<_>>();
    let joined_text: String = child
        .iter()
        .filter_map(|line| line.strip_prefix("text "))
        .collect();
    assert!(joined_text.contains("child looking"), "{child:?}");
    assert!(joined_text.ends_with("child found it"), "{child:?}");
    let calls: Vec<&String> = child.iter().filter(|l| !l.starts_with("text ")).collect();
    assert_eq!(
        calls,
        ["call call_child_ls ls", "result call_child_ls false"]
    );

    // The parent's own call and result are untagged, and the child's events come before the
    // delegation's result.
    let position = |wanted: &dyn Fn(&RunEvent) -> bool| events.iter().position(wanted).unwrap();
    let parent_call = position(
        &|e| matches!(e, RunEvent::ToolCall { id, parent_tool_use_id: None, .. } if id == "call_delegate"),
    );
    let parent_result = position(
        &|e| matches!(e, RunEvent::ToolResult { id, parent_tool_use_id: None, .. } if id == "call_delegate"),
    );
    let child_result =
        position(&|e| matches!(e, RunEvent::ToolResult { id, .. } if id == "call_child_ls"));
    assert!(parent_call < child_result && child_result < parent_result);
}
