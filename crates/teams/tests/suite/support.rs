//! A leader agent with the team tools and two in-process teammates' provider (spawn), wired
//! to a fake model server.

use std::path::Path;
use std::sync::Arc;

use subagent_core::agents::{AgentProfile, StaticAgents};
use subagent_core::registry::Registry;
use subagent_core::{CancellationToken, Outcome, StopReason};
use subagent_model::{Model, ModelKind};
use subagent_runtime::tools::BashConfig;
use subagent_runtime::{
    Agent, AgentConfig, DelegationTool, DelegationToolConfig, PermissionPolicy, Roots,
    SessionStore, ToolSet,
};
use subagent_spawn::{SpawnConfig, SpawnProvider};
use subagent_teams::{TeamDir, TeamStore, Teams, leader_tools};
use subagent_test_support::{FakeServer, RecordedRequest};

pub(super) fn model(server: &FakeServer) -> Arc<dyn Model> {
    server.model(ModelKind::Anthropic)
}

/// A leader over `dir` (the project) keeping its teams under `state/teams` and its teammates'
/// transcripts under `state/sessions`.
pub(super) struct Leader {
    #[allow(dead_code)]
    pub teams: Arc<Teams>,
    pub agent: Agent,
}

/// A leader over `dir` with its state in `state`, under `permissions`.
fn leader_with(
    server: &FakeServer,
    dir: &Path,
    state: &Path,
    permissions: PermissionPolicy,
) -> Leader {
    let model = model(server);
    let registry = Registry::with_max_depth(2);
    registry
        .register(Arc::new(
            SpawnProvider::new("spawn", Arc::clone(&model), SpawnConfig::default())
                .with_sessions(SessionStore::new(state.join("sessions"))),
        ))
        .unwrap();
    let agents = Arc::new(StaticAgents(vec![AgentProfile::new(
        "general-purpose",
        "Does anything.",
    )]));
    let delegation = Arc::new(DelegationTool::new(
        DelegationToolConfig::new("spawn"),
        Arc::new(registry),
        agents,
    ));
    let teams = Teams::new(TeamStore::new(state.join("teams")), delegation);
    let tools = ToolSet::new(
        ToolSet::builtin(BashConfig::default())
            .into_iter()
            .chain(leader_tools(&teams)),
    );
    let mut config = AgentConfig::new(model, Roots::new(dir).unwrap());
    config.system = Some("You lead a team.".to_owned());
    config.tools = tools;
    config.permissions = permissions;
    config.input = Some(teams.leader_input());
    Leader {
        teams,
        agent: Agent::new(config).unwrap(),
    }
}

/// The leader's answer to a teammate's message, the last scenario of most tests.
const NOTED: &str = r#"
- name: lead-noted
  match: "teammate-message"
  steps:
    - text: "Noted."
"#;

/// A team test's world: the fake model server of its scenarios, the project dir and the
/// state dir its leaders share.
pub(super) struct World {
    pub server: FakeServer,
    pub project: tempfile::TempDir,
    pub state: tempfile::TempDir,
}

impl World {
    pub(super) async fn new(scenarios: &str) -> Self {
        Self {
            server: FakeServer::from_yaml(scenarios).await.unwrap(),
            project: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
        }
    }

    /// [`World::new`] with [`NOTED`] last: the leader notes each teammate's message.
    pub(super) async fn noting(scenarios: &str) -> Self {
        Self::new(&format!("{scenarios}{NOTED}")).await
    }

    /// A leader of this world under `permissions`.
    pub(super) fn leader_with(&self, permissions: PermissionPolicy) -> Leader {
        leader_with(
            &self.server,
            self.project.path(),
            self.state.path(),
            permissions,
        )
    }

    /// A leader of this world that asks nothing.
    pub(super) fn leader(&self) -> Leader {
        self.leader_with(PermissionPolicy::bypass())
    }

    /// Runs `leader` on `prompt` to its outcome, which must be completed.
    pub(super) async fn lead(leader: Leader, prompt: &str) -> Outcome {
        let outcome = leader
            .agent
            .start_prompt(prompt, CancellationToken::new())
            .outcome()
            .await;
        assert_completed(&outcome);
        outcome
    }

    /// The team `name` as a new run finds it on disk.
    pub(super) fn team(&self, name: &str) -> TeamDir {
        TeamStore::new(self.state.path().join("teams"))
            .open(name)
            .unwrap()
    }
}

/// Checks that `outcome` completed, showing its diagnostic when not.
pub(super) fn assert_completed(outcome: &Outcome) {
    assert_eq!(
        outcome.status,
        StopReason::Completed,
        "{:?}",
        outcome.diagnostic
    );
}

pub(super) use subagent_test_support::requests_for;

/// Every tool result of every request of `requests`, by call id (text, is_error), deduplicated.
pub(super) fn results(requests: &[&RecordedRequest]) -> Vec<(String, String, bool)> {
    let mut out: Vec<(String, String, bool)> = Vec::new();
    for request in requests {
        for message in &request.messages {
            for block in &message.content {
                if let subagent_session::ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } = block
                    && !out.iter().any(|(id, _, _)| id == tool_use_id)
                {
                    out.push((tool_use_id.clone(), content.to_text(), *is_error));
                }
            }
        }
    }
    out
}

/// The result of the call `id` among `requests`: (text, is_error).
pub(super) fn result_of(requests: &[&RecordedRequest], id: &str) -> (String, bool) {
    results(requests)
        .into_iter()
        .find(|(call, _, _)| call == id)
        .map(|(_, text, error)| (text, error))
        .unwrap_or_else(|| panic!("no result for {id}"))
}

/// Asserts that the call `id` among `requests` had the result `text`, an error or not.
pub(super) fn assert_result(requests: &[&RecordedRequest], id: &str, text: &str, is_error: bool) {
    assert_eq!(result_of(requests, id), (text.to_owned(), is_error), "{id}");
}

/// The scenario of a leader, prompted with `prompt`, that creates the team `team`, starts
/// `mate` in it on `task`, then says `then`.
pub(super) fn lead_starting(
    prompt: &str,
    team: &str,
    mate: &str,
    task: &str,
    then: &str,
) -> String {
    format!(
        r#"
- name: lead
  match: "{prompt}"
  steps:
    - tool_calls: [{{name: TeamCreate, input: {{team_name: {team}}}}}]
    - tool_calls: [{{name: subagent, input: {{name: {mate}, team_name: {team}, prompt: "{task}"}}}}]
    - text: "{then}""#
    )
}
