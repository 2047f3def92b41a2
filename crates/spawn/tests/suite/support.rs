//! A parent agent with a delegation tool, wired to a fake model server.

use std::path::Path;
use std::sync::Arc;

use subagent_core::agents::{AgentDirectory, StaticAgents};
use subagent_core::registry::Registry;
use subagent_core::{CancellationToken, Outcome};
use subagent_model::{Model, ModelKind};
use subagent_runtime::{Agent, AgentConfig, DelegationToolConfig};
use subagent_spawn::{SpawnConfig, SpawnProvider};
use subagent_test_support::FakeServer;

/// The runtime's built-in tools, in the order a child is offered them.
pub(super) const BUILTIN: [&str; 10] = [
    "ls",
    "read_file",
    "write_file",
    "edit_file",
    "delete",
    "glob",
    "grep",
    "bash",
    "task_output",
    "task_stop",
];

/// The built-in tools and then `extra`, as a request names them.
pub(super) fn builtin_and(extra: &[&str]) -> Vec<String> {
    BUILTIN
        .iter()
        .chain(extra)
        .map(|name| (*name).to_owned())
        .collect()
}

/// Scenarios whose parent (prompted `please delegate`) makes one delegation call with `input`
/// and then says `parent done`, after the scenarios `before` (its child's, at least).
pub(super) fn delegating(input: &serde_json::Value, before: &str) -> String {
    format!(
        r#"{before}- name: parent
  match: "please delegate"
  steps:
    - tool_calls:
        - name: subagent
          input: {input}
    - text: "parent done"
"#
    )
}

pub(super) fn model(kind: ModelKind, server: &FakeServer) -> Arc<dyn Model> {
    server.model(kind)
}

/// A registry capped at `max_depth` with one `spawn` provider on `model`.
pub(super) fn spawn_registry(model: &Arc<dyn Model>, max_depth: u32) -> Registry {
    let registry = Registry::with_max_depth(max_depth);
    let spawn = SpawnProvider::new("spawn", Arc::clone(model), SpawnConfig::default());
    registry.register(Arc::new(spawn)).unwrap();
    registry
}

pub(super) fn registry_with(model: &Arc<dyn Model>, max_depth: u32) -> Arc<Registry> {
    Arc::new(spawn_registry(model, max_depth))
}

/// explore: read-only by tool filter; plan: read-only by permission mode.
pub(super) fn agents() -> Arc<dyn AgentDirectory> {
    Arc::new(StaticAgents(
        subagent_test_support::parent::read_only_agents(),
    ))
}

/// A parent agent's world: the fake model server, a work dir, a model on the server and a
/// registry with one `spawn` provider.
pub(super) struct Parent {
    pub server: FakeServer,
    pub dir: tempfile::TempDir,
    pub model: Arc<dyn Model>,
    pub registry: Arc<Registry>,
}

impl Parent {
    /// The server scripted by `scenarios`, a model of `kind`, a registry capped at `max_depth`.
    pub(super) async fn start(scenarios: &str, kind: ModelKind, max_depth: u32) -> Self {
        let server = FakeServer::from_yaml(scenarios).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let model = model(kind, &server);
        let registry = registry_with(&model, max_depth);
        Self {
            server,
            dir,
            model,
            registry,
        }
    }

    /// The parent's config: its delegation tool is `row`, its agents `agents`.
    pub(super) fn config_with(
        &self,
        row: DelegationToolConfig,
        agents: Arc<dyn AgentDirectory>,
    ) -> AgentConfig {
        parent_config(&self.model, self.dir.path(), &self.registry, row, agents)
    }

    /// The parent's config: one row on `spawn`, the agents of [`agents`].
    pub(super) fn config(&self) -> AgentConfig {
        self.config_with(DelegationToolConfig::new("spawn"), agents())
    }

    /// Runs [`Self::config`] on `prompt` to its outcome.
    pub(super) async fn run(&self, prompt: &str) -> Outcome {
        run(self.config(), prompt).await
    }
}

/// Runs an agent of `config` on `prompt` to a completed outcome: the events of its stream, and
/// the outcome.
pub(super) async fn completed_events(
    config: AgentConfig,
    prompt: &str,
) -> (Vec<subagent_core::RunEvent>, Outcome) {
    use futures::StreamExt;

    let mut run = Agent::new(config)
        .unwrap()
        .start_prompt(prompt, CancellationToken::new());
    let events = run.take_events().unwrap().collect().await;
    let outcome = run.outcome().await;
    assert_eq!(
        outcome.status,
        subagent_core::StopReason::Completed,
        "{outcome:?}"
    );
    (events, outcome)
}

/// Runs an agent of `config` on `prompt` to its outcome.
pub(super) async fn run(config: AgentConfig, prompt: &str) -> Outcome {
    Agent::new(config)
        .unwrap()
        .start_prompt(prompt, CancellationToken::new())
        .outcome()
        .await
}

subagent_test_support::delegating_parent!();

/// A parent on `model` in `dir` with the delegation tool of `row` on `registry`.
pub(super) fn parent_config(
    model: &Arc<dyn Model>,
    dir: &Path,
    registry: &Arc<Registry>,
    row: DelegationToolConfig,
    agents: Arc<dyn AgentDirectory>,
) -> AgentConfig {
    delegating_parent(model, dir, registry, row, agents, "You are the parent.")
}

pub(super) use subagent_test_support::requests_for;

pub(super) use subagent_test_support::parent::last_results;
