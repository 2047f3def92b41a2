//! A tree of runs keeps its task output files under one root: the parent's configured one.

use pretty_assertions::assert_eq;
use subagent_core::{CancellationToken, StopReason};
use subagent_model::ModelKind;
use subagent_runtime::{Agent, DelegationToolConfig, TaskDir};
use subagent_test_support::FakeServer;

use super::support::{agents, last_results, model, parent_config, registry_with, requests_for};

const SCENARIO: &str = r#"
- name: notification
  match: "<task-notification>"
  steps:
    - text: "notified"
- name: child
  match: "CHILD-BG"
  steps:
    - tool_calls:
        - {name: bash, input: {command: "echo hi", run_in_background: true}}
    - text: "child done"
- name: parent
  match: "please delegate"
  steps:
    - tool_calls:
        - {id: call_child, name: subagent, input: {prompt: "CHILD-BG go", run_in_background: true}}
    - text: "parent waits"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_childs_background_tasks_go_under_its_parents_root() {
    let server = FakeServer::from_yaml(SCENARIO).await.unwrap();
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let root = state.path().join("tasks");
    let model = model(ModelKind::Anthropic, &server);
    let registry = registry_with(&model, 3);
    let mut config = parent_config(
        &model,
        work.path(),
        &registry,
        DelegationToolConfig::new("spawn"),
        agents(),
    );
    config.task_dir = Some(TaskDir::new(&root));
    let run = Agent::new(config)
        .unwrap()
        .start_prompt("please delegate", CancellationToken::new());
    let parent_id = run.id().to_string();
    let outcome = run.outcome().await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    let requests = server.model_requests();
    let parent = requests_for(&requests, "please delegate");
    let (_, started, _) = &last_results(parent[1])[0];
    let child_id = started
        .strip_prefix("Started background subagent ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .to_owned();
    let listing = |dir: &std::path::Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let mut expected = vec![parent_id.clone(), child_id.clone()];
    expected.sort();
    assert_eq!(listing(&root), expected);
    // The parent's task is the child; the child's, its command.
    assert_eq!(
        listing(&root.join(&parent_id)),
        [format!("{child_id}.jsonl")]
    );
    assert_eq!(listing(&root.join(&child_id)).len(), 1);
}
