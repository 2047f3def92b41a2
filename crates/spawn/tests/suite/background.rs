//! Background children run under the fixed background tool list and never ask: whether the
//! call asked for the background, the agent type says `background: true` or the row
//! `background: always`, the child is offered only the listed tools (an embedder's `ask_user`
//! is not among them, and a call to it anyway is answered as an unknown tool),
//! and a call that would need approval is denied at once (the parent's broker is never asked).
//! A foreground child of the same parent is offered everything and asks.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use subagent_core::agents::{AgentProfile, BackgroundMode, StaticAgents};
use subagent_core::{PermissionMode, StopReason};
use subagent_model::ModelKind;
use subagent_runtime::{DelegationToolConfig, PermissionBroker, PermissionPolicy, Tool};
use subagent_spawn::{SpawnConfig, SpawnProvider};
use subagent_test_support::FakeServer;

use super::support::run;
use super::support::{builtin_and, delegating, last_results, model, parent_config, requests_for};

subagent_test_support::background_doubles!();

fn scenario(input: &Value) -> String {
    delegating(
        input,
        r#"
- name: notification
  match: "<task-notification>"
  steps:
    - text: "notified"
- name: child
  match: "BG-TASK"
  steps:
    - tool_calls:
        - name: bash
          input: {command: "echo hi"}
        - name: ask_user
          input: {question: "ok?"}
    - text: "child done"
"#,
    )
}

/// What the child was offered, what its two calls got, and how often the broker was asked.
#[derive(Debug, PartialEq)]
struct Seen {
    tools: Vec<String>,
    results: Vec<String>,
    asked: usize,
}

async fn child_of(row: DelegationToolConfig, profile: AgentProfile, call: Value) -> Seen {
    let mut input = json!({"prompt": "BG-TASK go", "subagent_type": "worker"});
    input
        .as_object_mut()
        .unwrap()
        .extend(call.as_object().unwrap().clone());
    let server = FakeServer::from_yaml(&scenario(&input)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = model(ModelKind::Anthropic, &server);
    let registry = subagent_core::registry::Registry::with_max_depth(3);
    let ask_user: Arc<dyn Tool> = Arc::new(AskUser);
    registry
        .register(Arc::new(
            SpawnProvider::new("spawn", Arc::clone(&model), SpawnConfig::default())
                .with_tools([ask_user]),
        ))
        .unwrap();
    let mut config = parent_config(
        &model,
        dir.path(),
        &Arc::new(registry),
        row,
        Arc::new(StaticAgents(vec![profile])),
    );
    let broker = Arc::new(Counting::default());
    config.permissions = PermissionPolicy::new(PermissionMode::Default)
        .with_broker(Arc::clone(&broker) as Arc<dyn PermissionBroker>);
    let outcome = run(config, "please delegate").await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    assert_eq!(server.violations(), Vec::<String>::new());
    let requests = server.model_requests();
    let child = requests_for(&requests, "BG-TASK");
    assert_eq!(child.len(), 2, "{outcome:?}");
    Seen {
        tools: child[0].tool_names(),
        results: last_results(child[1])
            .into_iter()
            .map(|(_, text, is_error)| format!("{}{text}", if is_error { "error: " } else { "" }))
            .collect(),
        asked: broker.0.load(Ordering::SeqCst),
    }
}

fn worker(background: bool) -> AgentProfile {
    let mut profile = AgentProfile::new("worker", "Does the work.");
    profile.background = background;
    profile
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_child_gets_the_fixed_tools_and_never_asks() {
    let row = |mode| {
        let mut row = DelegationToolConfig::new("spawn");
        row.background = mode;
        row
    };
    let background = Seen {
        tools: builtin_and(&[]),
        results: vec![
            "error: permission denied: bash needs approval, and a background run never asks (auto-denied)".to_owned(),
            // Not offered, so unknown (a fork, which keeps its parent's list, is refused it).
            "error: No tool named \"ask_user\" is available. Available tools: ls, read_file, write_file, edit_file, delete, glob, grep, bash, task_output, task_stop".to_owned(),
        ],
        asked: 0,
    };
    let cases = [
        (
            "run_in_background",
            row(BackgroundMode::Allowed),
            worker(false),
            json!({"run_in_background": true}),
        ),
        (
            "the definition's background: true",
            row(BackgroundMode::Allowed),
            worker(true),
            json!({}),
        ),
        (
            "the row's background: always",
            row(BackgroundMode::Always),
            worker(false),
            json!({}),
        ),
    ];
    for (what, row, profile, call) in cases {
        assert_eq!(child_of(row, profile, call).await, background, "{what}");
    }
    // The same child in the foreground: every tool, and the broker is asked.
    let foreground = child_of(row(BackgroundMode::Allowed), worker(false), json!({})).await;
    assert_eq!(
        foreground,
        Seen {
            tools: builtin_and(&["ask_user"]),
            results: vec![
                "exit code 0\n<stdout>\nhi\n\n</stdout>".to_owned(),
                "the user said yes".to_owned(),
            ],
            asked: 1,
        }
    );
}
