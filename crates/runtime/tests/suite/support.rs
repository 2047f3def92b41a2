//! An agent wired to a fake model server.

use std::path::Path;
use std::sync::Arc;

use subagent_core::{CancellationToken, Outcome, StopReason};
use subagent_model::ModelKind;
use subagent_runtime::tools::BashConfig;
use subagent_runtime::{Agent, AgentConfig, PermissionPolicy, Roots, SessionStore, ToolSet};
use subagent_session::{Role, load_transcript};
use subagent_test_support::{FakeServer, RecordedRequest};

pub(super) fn config(server: &FakeServer, dir: &Path) -> AgentConfig {
    let model = server.model(ModelKind::Anthropic);
    let mut config = AgentConfig::new(Arc::clone(&model), Roots::new(dir).unwrap());
    config.tools = ToolSet::new(ToolSet::builtin(BashConfig::default()));
    config.permissions = PermissionPolicy::bypass();
    config
}

/// [`config`] keeping its sessions in a store at `sessions`, and that store.
pub(super) fn config_with_sessions(
    server: &FakeServer,
    dir: &Path,
    sessions: &Path,
) -> (AgentConfig, SessionStore) {
    let store = SessionStore::new(sessions);
    let mut config = config(server, dir);
    config.sessions = Some(store.clone());
    (config, store)
}

/// The messages of the transcript at `path` as (role, text); it loaded without a warning.
pub(super) fn transcript_texts(path: &Path) -> Vec<(Role, String)> {
    let loaded = load_transcript(path).unwrap();
    assert_eq!(loaded.warnings, Vec::new());
    loaded
        .log
        .messages()
        .iter()
        .map(|m| (m.role, m.text()))
        .collect()
}

/// A scenario whose agent (prompted `count in the background`) runs `command` in the
/// background as `call_bg`, waits for it with `task_output` (`call_read`), then says `done`.
pub(super) fn counting_in_the_background(command: &str) -> String {
    format!(
        r#"
- name: parent
  match: "count in the background"
  steps:
    - tool_calls:
        - id: call_bg
          name: bash
          input: {{command: "{command}", description: "count", run_in_background: true}}
    - tool_calls:
        - {{id: call_read, name: task_output, input: {{task_id: call_bg, timeout: 600000}}}}
    - text: "done"
"#
    )
}

/// A scenario in which the agent, prompted with something that holds `trigger`, makes the tool
/// `calls` ([`call`], [`bash`]) in one message, then says `done`.
pub(super) fn one_turn(trigger: &str, calls: &[String]) -> String {
    let calls: String = calls.iter().map(|c| format!("        - {c}\n")).collect();
    format!("- match: {trigger:?}\n  steps:\n    - tool_calls:\n{calls}    - text: \"done\"\n")
}

/// A call of `tool` with `input` (a YAML flow mapping) in a [`one_turn`] scenario.
pub(super) fn call(tool: &str, input: &str) -> String {
    format!("{{name: {tool}, input: {input}}}")
}

/// A `bash` call of `command` in a [`one_turn`] scenario.
pub(super) fn bash(command: &str) -> String {
    call("bash", &format!("{{command: {command:?}}}"))
}

pub(super) async fn run(config: AgentConfig, prompt: &str) -> Outcome {
    Agent::new(config)
        .unwrap()
        .start_prompt(prompt, CancellationToken::new())
        .outcome()
        .await
}

/// Runs `prompt` on an agent of `config` to its outcome, which must be completed.
pub(super) async fn completed(config: AgentConfig, prompt: &str) -> Outcome {
    let outcome = run(config, prompt).await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    outcome
}

/// Runs `prompt` on an agent of `config` (over `server`), asserts it completed, and returns the
/// tool results of the model's second request: what the first turn's calls gave.
pub(super) async fn completed_results(
    server: &FakeServer,
    config: AgentConfig,
    prompt: &str,
) -> Vec<(String, bool)> {
    completed(config, prompt).await;
    last_results(&server.model_requests()[1])
}

/// The tool results of the last message of a request: (text, is_error).
pub(super) fn last_results(request: &RecordedRequest) -> Vec<(String, bool)> {
    subagent_test_support::parent::last_results(request)
        .into_iter()
        .map(|(_, text, is_error)| (text, is_error))
        .collect()
}
