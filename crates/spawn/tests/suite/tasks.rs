//! Background tasks of a parent delegating to spawn: the task table's output file and progress,
//! the `<task-notification>` in Claude Code's tags, and the task tools (`task_output`,
//! `task_stop`), whose reading of an ended task is never repeated as a notification.

use std::path::PathBuf;

use futures::StreamExt;
use pretty_assertions::assert_eq;
use serde_json::Value;
use subagent_core::{CancellationToken, Outcome, RunEvent, StopReason};
use subagent_model::ModelKind;
use subagent_runtime::tools::task_tools;
use subagent_runtime::{Agent, AgentConfig, DelegationToolConfig};
use subagent_test_support::runs::no_durations;
use subagent_test_support::{FakeServer, RecordedRequest};

use subagent_test_support::runs::assert_answered;

use super::support::{Parent, completed_events, run};
use super::support::{agents, last_results, model, parent_config, registry_with, requests_for};

fn parent(server: &FakeServer, dir: &std::path::Path) -> AgentConfig {
    let model = model(ModelKind::Anthropic, server);
    let registry = registry_with(&model, 3);
    let mut config = parent_config(
        &model,
        dir,
        &registry,
        DelegationToolConfig::new("spawn"),
        agents(),
    );
    config.tools = config.tools.with(task_tools());
    config
}

/// The text of the tool result `id` in the parent's requests.
fn result_of(requests: &[&RecordedRequest], id: &str) -> (String, bool) {
    requests
        .iter()
        .flat_map(|request| last_results(request))
        .find(|(call, _, _)| call == id)
        .map(|(_, text, is_error)| (text, is_error))
        .unwrap()
}

/// What a background call's result says before the task id.
const STARTED: &str = "Started background subagent ";

/// The task id the background call `call_bg` among `parent`'s requests started.
fn started_task(parent: &[&RecordedRequest]) -> String {
    task_id(&result_of(parent, "call_bg").0, STARTED)
}

/// The task id that follows `prefix` in a tool result.
fn task_id(result: &str, prefix: &str) -> String {
    result
        .strip_prefix(prefix)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .to_owned()
}

/// Runs `config` on `prompt` to its outcome, opening `server`'s gate `gate` at each event
/// `open_at` picks.
async fn run_opening(
    config: AgentConfig,
    prompt: &str,
    server: &FakeServer,
    gate: &str,
    open_at: impl Fn(&RunEvent) -> bool,
) -> Outcome {
    let mut run = Agent::new(config)
        .unwrap()
        .start_prompt(prompt, CancellationToken::new());
    let mut events = run.take_events().unwrap();
    while let Some(event) = events.next().await {
        if open_at(&event) {
            server.gate(gate).open();
        }
    }
    run.outcome().await
}

/// Runs a [`parent`] over `scenarios` on `prompt` in a fresh dir as [`run_opening`] does: the
/// server, and the outcome.
async fn parent_opening(
    scenarios: &str,
    prompt: &str,
    gate: &str,
    open_at: impl Fn(&RunEvent) -> bool,
) -> (FakeServer, Outcome) {
    let server = FakeServer::from_yaml(scenarios).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let outcome = run_opening(parent(&server, dir.path()), prompt, &server, gate, open_at).await;
    (server, outcome)
}

/// The `type` of each line of an output file, runs of one type collapsed.
fn line_types(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut types: Vec<String> = Vec::new();
    for line in text.lines() {
        let value: Value = serde_json::from_str(line).unwrap();
        let kind = value["type"].as_str().unwrap().to_owned();
        if types.last() != Some(&kind) {
            types.push(kind);
        }
    }
    types
}

const NOTIFIED: &str = r#"
- name: notification
  match: "<task-notification>"
  steps:
    - text: "got the background result"
- name: child
  match: "BG-TASK"
  steps:
    - wait_gate: parent-waits
      tool_calls:
        - {id: call_child_ls, name: ls, input: {path: "."}}
    - text: "background child finished"
      usage: {input_tokens: 30, output_tokens: 7}
- name: parent
  match: "in the background"
  steps:
    - tool_calls:
        - id: call_bg
          name: subagent
          input: {prompt: "BG-TASK work", description: "bg work", run_in_background: true}
    - text: "I will wait."
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_background_task_is_notified_once_in_claude_codes_tags_with_its_output_file() {
    // The child answers only once the parent's second turn is under way (its text streams), so
    // the notification cannot join that turn's request: a child that finished first made the
    // parent take it a turn early (2 requests, not 3) in a clean-clone CI run.
    let (server, outcome) = parent_opening(
        NOTIFIED,
        "do it in the background",
        "parent-waits",
        |event| {
            matches!(
                event,
                RunEvent::Text {
                    parent_tool_use_id: None,
                    ..
                }
            )
        },
    )
    .await;
    assert_answered(&outcome, "got the background result");

    let requests = server.model_requests();
    let parent = requests_for(&requests, "in the background");
    assert_eq!(parent.len(), 3);
    let id = started_task(&parent);
    let notification = parent[2].messages.last().unwrap().text();
    let output_file = std::env::temp_dir()
        .join("subagent-tasks")
        .join(outcome_run_dir(&notification))
        .join(format!("{id}.jsonl"));
    assert_eq!(
        no_durations(&notification),
        format!(
            "<task-notification>\n<task_id>{id}</task_id>\n<tool_use_id>call_bg</tool_use_id>\n<output_file>{}</output_file>\n<status>completed</status>\n<summary>bg work</summary>\n<result>background child finished</result>\n<usage><total_tokens>52</total_tokens><tool_uses>1</tool_uses><duration_ms>D</duration_ms></usage>\n</task-notification>",
            output_file.display()
        )
    );
    // The output file: the child's events as they happened, then its outcome.
    assert_eq!(
        line_types(&output_file),
        [
            "started",
            "tool_call",
            "usage",
            "tool_result",
            "text",
            "usage",
            "finished",
            "outcome"
        ]
    );
    let last: Value = serde_json::from_str(
        std::fs::read_to_string(&output_file)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["outcome"]["text"], "background child finished");
    // Told once: the notification is in the last request only.
    let told = requests
        .iter()
        .flat_map(|request| request.messages.iter())
        .filter(|message| message.text().starts_with("<task-notification>"))
        .count();
    assert_eq!(told, 1);
    std::fs::remove_file(&output_file).unwrap();
}

/// The parent run's directory named in a notification's output file path.
fn outcome_run_dir(notification: &str) -> PathBuf {
    let start = notification.find("<output_file>").unwrap() + "<output_file>".len();
    let end = notification.find("</output_file>").unwrap();
    let path = PathBuf::from(&notification[start..end]);
    PathBuf::from(path.parent().unwrap().file_name().unwrap())
}

const READ: &str = r#"
- name: notification
  match: "<task-notification>"
  steps:
    - text: "a notification came"
- name: child
  match: "BG-TASK"
  steps:
    - wait_gate: child-go
      tool_calls:
        - {id: call_child_ls, name: ls, input: {path: "."}}
    - text: "background child finished"
- name: parent
  match: "read the task"
  steps:
    - tool_calls:
        - id: call_bg
          name: subagent
          input: {prompt: "BG-TASK work", description: "bg work", run_in_background: true}
    - tool_calls:
        - {id: call_look, name: task_output, input: {task_id: call_bg, block: false}}
    - tool_calls:
        - {id: call_wait, name: task_output, input: {task_id: call_bg, timeout: 600000}}
    - text: "parent done"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_output_looks_at_a_running_task_then_waits_for_its_result_which_is_not_notified_again()
{
    // The child waits at its first answer until the parent has looked at it.
    let (server, outcome) = parent_opening(
        READ,
        "read the task",
        "child-go",
        |event| matches!(event, RunEvent::ToolResult { id, .. } if id == "call_look"),
    )
    .await;
    assert_answered(&outcome, "parent done");

    let requests = server.model_requests();
    let parent = requests_for(&requests, "read the task");
    assert_eq!(parent.len(), 4);
    let id = started_task(&parent);
    let (looked, looked_error) = result_of(&parent, "call_look");
    let start = looked.find("<output_file>").unwrap() + "<output_file>".len();
    let output_file = looked[start..looked.find("</output_file>").unwrap()].to_owned();
    assert!(
        output_file.ends_with(&format!("/{id}.jsonl")),
        "{output_file}"
    );
    assert_eq!(
        (looked.as_str(), looked_error),
        (
            format!(
                "<retrieval_status>not_ready</retrieval_status>\n<task_id>{id}</task_id>\n<task_type>agent</task_type>\n<status>running</status>\n<description>bg work</description>\n<tool_use_id>call_bg</tool_use_id>\n<output_file>{output_file}</output_file>\n<progress>\ntool_uses: 0\ntokens: 0\nlast_activity: none\nrecent:\n</progress>"
            )
            .as_str(),
            false
        )
    );
    let (waited, waited_error) = result_of(&parent, "call_wait");
    assert_eq!(
        (no_durations(&waited), waited_error),
        (
            format!(
                "<retrieval_status>success</retrieval_status>\n<task_id>{id}</task_id>\n<task_type>agent</task_type>\n<status>completed</status>\n<description>bg work</description>\n<tool_use_id>call_bg</tool_use_id>\n<output_file>{output_file}</output_file>\n<progress>\ntool_uses: 1\ntokens: 30\nlast_activity: ls {{\"path\":\".\"}}\nrecent:\n- ls {{\"path\":\".\"}}\n</progress>\n<result>background child finished</result>\n<usage><total_tokens>30</total_tokens><tool_uses>1</tool_uses><duration_ms>D</duration_ms></usage>"
            ),
            false
        )
    );
    // The result was read: no notification repeats it.
    assert!(
        requests
            .iter()
            .flat_map(|request| request.messages.iter())
            .all(|message| !message.text().contains("<task-notification>")),
        "{requests:#?}"
    );
    std::fs::remove_file(&output_file).unwrap();
}

const STOP: &str = r#"
- name: notification
  match: "<task-notification>"
  steps:
    - text: "a notification came"
- name: child
  match: "BG-TASK"
  steps:
    - wait_gate: never-opened
      text: "never said"
- name: parent
  match: "stop the task"
  steps:
    - tool_calls:
        - id: call_bg
          name: subagent
          input: {prompt: "BG-TASK work", description: "bg work", run_in_background: true}
    - tool_calls:
        - {id: call_stop, name: task_stop, input: {task_id: call_bg}}
    - tool_calls:
        - {id: call_again, name: task_stop, input: {task_id: call_bg}}
        - {id: call_unknown, name: task_output, input: {task_id: nope}}
    - text: "parent done"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_stop_kills_a_running_task_once_and_its_end_is_not_notified() {
    let server = FakeServer::from_yaml(STOP).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let outcome = Agent::new(parent(&server, dir.path()))
        .unwrap()
        .start_prompt("stop the task", CancellationToken::new())
        .outcome()
        .await;
    assert_answered(&outcome, "parent done");

    let requests = server.model_requests();
    let parent = requests_for(&requests, "stop the task");
    assert_eq!(parent.len(), 4);
    let id = started_task(&parent);
    let (stopped, stopped_error) = result_of(&parent, "call_stop");
    assert!(!stopped_error);
    let head = format!(
        "Stopped task {id}.\n<retrieval_status>success</retrieval_status>\n<task_id>{id}</task_id>\n<task_type>agent</task_type>\n<status>killed</status>\n"
    );
    assert!(stopped.starts_with(&head), "{stopped}");
    assert!(
        stopped.contains("\n<diagnostic>the run was cancelled</diagnostic>\n"),
        "{stopped}"
    );
    let (again, _) = result_of(&parent, "call_again");
    assert!(
        again.starts_with(&format!("Task {id} had already ended (killed).\n")),
        "{again}"
    );
    let (unknown, unknown_error) = result_of(&parent, "call_unknown");
    assert_eq!(
        (unknown, unknown_error),
        (
            format!("No task with id \"nope\" was started by this run. Its tasks: {id}"),
            true
        )
    );
    assert!(
        requests
            .iter()
            .flat_map(|request| request.messages.iter())
            .all(|message| !message.text().contains("<task-notification>"))
    );
}

const POLICY: &str = r#"
- name: notification
  match: "<task-notification>"
  steps:
    - text: "notified"
- name: child
  match: "POLICY-TASK"
  steps:
    - text: "child result"
- name: asks-background
  match: "asks for the background"
  steps:
    - tool_calls:
        - id: call_child
          name: subagent
          input: {prompt: "POLICY-TASK", run_in_background: true}
    - text: "parent done"
- name: asks-nothing
  match: "asks for nothing"
  steps:
    - tool_calls:
        - id: call_child
          name: subagent
          input: {prompt: "POLICY-TASK"}
    - text: "parent done"
- name: asks-type
  match: "asks for the watcher"
  steps:
    - tool_calls:
        - id: call_child
          name: subagent
          input: {prompt: "POLICY-TASK", subagent_type: watcher}
    - text: "parent done"
"#;

/// How the delegation call of a run of `prompt` came back: in the background (its task's
/// result told later) or in the foreground (the child's result at once).
async fn delegation_mode(
    row: DelegationToolConfig,
    agents: std::sync::Arc<dyn subagent_core::agents::AgentDirectory>,
    prompt: &str,
) -> &'static str {
    let parent = Parent::start(POLICY, ModelKind::Anthropic, 3).await;
    let server = &parent.server;
    let config = parent.config_with(row, agents);
    let outcome = run(config, prompt).await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    let requests = server.model_requests();
    let parent = requests_for(&requests, prompt);
    let (result, _) = result_of(&parent, "call_child");
    if result.starts_with("Started background subagent ") {
        assert_eq!(outcome.text, "notified");
        "background"
    } else {
        assert!(result.starts_with("child result\n\n<usage>"), "{result}");
        assert_eq!(outcome.text, "parent done");
        "foreground"
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rows_background_policy_and_a_definitions_background_decide_where_a_child_runs() {
    let row = |mode| {
        let mut row = DelegationToolConfig::new("spawn");
        row.background = mode;
        row
    };
    let mut watcher =
        subagent_core::agents::AgentProfile::new("watcher", "Runs in the background.");
    watcher.background = true;
    let with_watcher: std::sync::Arc<dyn subagent_core::agents::AgentDirectory> =
        std::sync::Arc::new(subagent_core::agents::StaticAgents(vec![watcher]));
    use subagent_core::agents::BackgroundMode::{Allowed, Always, Never};
    let mut seen = Vec::new();
    for (mode, agents, prompt) in [
        (Allowed, agents(), "asks for the background"),
        (Allowed, agents(), "asks for nothing"),
        (Always, agents(), "asks for nothing"),
        (Never, agents(), "asks for the background"),
        (Allowed, with_watcher.clone(), "asks for the watcher"),
        (Never, with_watcher.clone(), "asks for the watcher"),
    ] {
        seen.push((
            mode,
            prompt,
            delegation_mode(row(mode), agents, prompt).await,
        ));
    }
    assert_eq!(
        seen,
        [
            (Allowed, "asks for the background", "background"),
            (Allowed, "asks for nothing", "foreground"),
            (Always, "asks for nothing", "background"),
            (Never, "asks for the background", "foreground"),
            (Allowed, "asks for the watcher", "background"),
            (Never, "asks for the watcher", "background"),
        ]
    );
}

const SLOW: &str = r#"
- name: notification
  match: "<task-notification>"
  steps:
    - text: "heard back"
- name: child
  match: "SLOW-TASK"
  steps:
    - wait_gate: child-go
      text: "slow child done"
- name: parent
  match: "slow in the foreground"
  steps:
    - tool_calls:
        - {id: call_slow, name: subagent, input: {prompt: "SLOW-TASK", description: "slow"}}
    - text: "moved on"
"#;

/// A foreground child still running at the row's `foreground_timeout_ms` moves to the
/// background: the call returns its task id, the parent goes on, the result is notified later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreground_child_past_the_rows_limit_moves_to_the_background() {
    let parent = Parent::start(SLOW, ModelKind::Anthropic, 3).await;
    let server = &parent.server;
    let mut row = DelegationToolConfig::new("spawn");
    row.foreground_timeout_ms = Some(50);
    let mut config = parent.config_with(row, agents());
    config.tools = config.tools.with(task_tools());
    // The child waits on a gate until the call has come back: it is still running then.
    let outcome = run_opening(
        config,
        "slow in the foreground",
        server,
        "child-go",
        |event| matches!(event, RunEvent::ToolResult { id, .. } if id == "call_slow"),
    )
    .await;
    assert_answered(&outcome, "heard back");
    let requests = server.model_requests();
    let parent = requests_for(&requests, "slow in the foreground");
    assert_eq!(parent.len(), 3);
    let (moved, is_error) = result_of(&parent, "call_slow");
    assert!(!is_error);
    let id = task_id(
        &moved,
        "The subagent was still running after 50 ms, so it moved to the background as task ",
    );
    assert_eq!(
        moved,
        format!(
            "The subagent was still running after 50 ms, so it moved to the background as task {id} (slow). Its result will arrive as a <task-notification>; read it with task_output or stop it with task_stop."
        )
    );
    let notification = parent[2].messages.last().unwrap().text();
    assert!(
        notification.starts_with(&format!(
            "<task-notification>\n<task_id>{id}</task_id>\n<tool_use_id>call_slow</tool_use_id>\n"
        )),
        "{notification}"
    );
    assert!(
        notification.contains("\n<status>completed</status>\n<summary>slow</summary>\n<result>slow child done</result>\n"),
        "{notification}"
    );
}

/// A background child's text, tool calls, tool results and usage reach the parent's stream
/// tagged with the call that started it, as a foreground child's do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_childs_events_reach_the_parents_stream_tagged_with_its_call() {
    let server = FakeServer::from_yaml(NOTIFIED).await.unwrap();
    // The child's gate plays no part here.
    server.gate("parent-waits").open();
    let dir = tempfile::tempdir().unwrap();
    let (events, _) =
        completed_events(parent(&server, dir.path()), "do it in the background").await;
    let tagged = |id: &Option<String>| id.as_deref() == Some("call_bg");
    let mut child: Vec<String> = Vec::new();
    for event in &events {
        let line = match event {
            RunEvent::Text {
                parent_tool_use_id, ..
            } if tagged(parent_tool_use_id) => "text".to_owned(),
            RunEvent::ToolCall {
                id,
                name,
                parent_tool_use_id,
                ..
            } if tagged(parent_tool_use_id) => format!("call {id} {name}"),
            RunEvent::ToolResult {
                id,
                is_error,
                parent_tool_use_id,
                ..
            } if tagged(parent_tool_use_id) => format!("result {id} {is_error}"),
            RunEvent::Usage {
                usage,
                parent_tool_use_id,
            } if tagged(parent_tool_use_id) => {
                format!("usage {} {}", usage.input_tokens, usage.output_tokens)
            }
            _ => continue,
        };
        if child.last() != Some(&line) {
            child.push(line);
        }
    }
    assert_eq!(
        child,
        [
            "call call_child_ls ls",
            "usage 10 5",
            "result call_child_ls false",
            "text",
            "usage 40 12"
        ]
    );
    let text: String = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::Text {
                text,
                parent_tool_use_id,
            } if tagged(parent_tool_use_id) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "background child finished");
}
