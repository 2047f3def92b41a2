//! A leader agent with the team tools and two in-process teammates' provider (spawn), wired
//! to a fake model server.

use std::path::Path;
use std::sync::Arc;

use subagent_core::agents::{AgentProfile, StaticAgents};
use subagent_core::registry::Registry;
use subagent_model::{Model, ModelKind};
use subagent_runtime::tools::BashConfig;
use subagent_runtime::{
    Agent, AgentConfig, DelegationTool, DelegationToolConfig, PermissionPolicy, Roots,
    SessionStore, ToolSet,
};
use subagent_spawn::{SpawnConfig, SpawnProvider};
use subagent_teams::{TeamStore, Teams, leader_tools};
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

pub(super) fn leader(server: &FakeServer, dir: &Path, state: &Path) -> Leader {
    leader_with(server, dir, state, PermissionPolicy::bypass())
}

/// [`leader`] under `permissions`.
pub(super) fn leader_with(
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

/// The requests whose first message contains `marker`.
pub(super) fn requests_for<'a>(
    requests: &'a [RecordedRequest],
    marker: &str,
) -> Vec<&'a RecordedRequest> {
    requests
        .iter()
        .filter(|r| {
            r.messages
                .first()
                .is_some_and(|m| m.text().contains(marker))
        })
        .collect()
}

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
