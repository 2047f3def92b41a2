//! A parent agent with delegation tools, wired to a fake model server.

use std::path::Path;
use std::sync::Arc;

use subagent_core::agents::StaticAgents;
use subagent_core::registry::Registry;
use subagent_core::{CancellationToken, Outcome, StopReason};
use subagent_fork::{ForkConfig, ForkProvider};
use subagent_model::{Model, ModelKind};
use subagent_runtime::{Agent, AgentConfig, DelegationToolConfig, FORK_PREAMBLE};
use subagent_test_support::{FakeServer, RecordedRequest};

pub(super) const PARENT_SYSTEM: &str = "You are the parent agent under test.";

pub(super) fn model(kind: ModelKind, server: &FakeServer) -> Arc<dyn Model> {
    server.model(kind)
}

/// A registry with the fork provider only (routing between spawn and fork is tested in
/// `crates/cli/tests/suite/routing.rs`: a provider's tests never link another provider).
pub(super) fn registry() -> Arc<Registry> {
    let registry = Registry::new();
    registry.register(fork_provider()).unwrap();
    Arc::new(registry)
}

/// The fork provider as a preset row builds it by default: no model of its own.
pub(super) fn fork_provider() -> Arc<ForkProvider> {
    Arc::new(ForkProvider::new("fork", ForkConfig::default(), None))
}

subagent_test_support::delegating_parent!();

/// A parent on `model` in `dir` with the delegation tool of `row` on `registry`, no agent types.
pub(super) fn parent_config(
    model: &Arc<dyn Model>,
    dir: &Path,
    registry: &Arc<Registry>,
    row: DelegationToolConfig,
) -> AgentConfig {
    let agents = Arc::new(StaticAgents::default());
    delegating_parent(model, dir, registry, row, agents, PARENT_SYSTEM)
}

/// A row on the fork provider: a call without a type forks (the provider inherits the parent's
/// context).
pub(super) fn fork_row() -> DelegationToolConfig {
    DelegationToolConfig::new("fork")
}

/// Whether a text block of `request` passes `test`.
pub(super) fn any_text(request: &RecordedRequest, test: impl Fn(&str) -> bool) -> bool {
    request
        .messages
        .iter()
        .any(|m| m.content.iter().any(|b| b.as_text().is_some_and(&test)))
}

/// Whether `request` is a fork's: a text of it opens with the fork preamble.
pub(super) fn is_fork_request(request: &RecordedRequest) -> bool {
    any_text(request, |t| t.starts_with(FORK_PREAMBLE))
}

/// `scenarios` after one that answers the fork's `<task-notification>` with `text`.
pub(super) fn notified(text: &str, scenarios: &str) -> String {
    format!(
        r#"
- name: notification
  match: "<task-notification>"
  steps:
    - text: "{text}"{scenarios}"#
    )
}

/// A parent (prompted `please fork`) that forks `FORK-JOB: look around`, then says it waits: the
/// last scenario of a file whose fork child's own comes before.
pub(super) const PARENT_FORKS: &str = r#"
- name: parent
  match: "please fork"
  steps:
    - tool_calls:
        - name: subagent
          input: {prompt: "FORK-JOB: look around"}
    - text: "Waiting for the fork."
"#;

/// Runs a parent of `config` on `please fork` to its outcome, which must be completed.
pub(super) async fn fork_it(config: AgentConfig) -> Outcome {
    completed(config, "please fork").await
}

/// Runs a parent of `config` on `prompt` to its outcome, which must be completed.
pub(super) async fn completed(config: AgentConfig, prompt: &str) -> Outcome {
    let outcome = Agent::new(config)
        .unwrap()
        .start_prompt(prompt, CancellationToken::new())
        .outcome()
        .await;
    assert_eq!(outcome.status, StopReason::Completed, "{outcome:?}");
    outcome
}
