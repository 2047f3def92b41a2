//! `run --teams`: the parent leads teams (`subagent-teams`). Its first delegation row's tool
//! also takes `name` and `team_name` (a teammate is started through that row: its routing,
//! gates and the parent's permission ceiling apply), the team tools are added, and the parent's
//! run takes its mailbox between turns and waits while its teammates work. Teams are kept in
//! the state dir (`<state dir>/subagents/teams/<project key>`), so a later `run --teams` of the
//! same project reopens one with `TeamCreate`.

use std::sync::Arc;

use subagent_runtime::{Agent, DelegationTool, Tool, ToolSet};
use subagent_teams::{TeamStore, Teams, leader_tools};

use crate::Refusal;
use crate::parent::delegation_config;
use crate::setup::{self, Runnable};

/// What the parent is told about leading a team.
const LEAD_SYSTEM: &str = "You can also lead a team of agents that work at the same time: \
TeamCreate makes one; the delegation tool with name and team_name starts a teammate; SendMessage \
talks to teammates (their messages reach you as <teammate-message> blocks); the Task* tools share \
a task list. When the work is done, ask each teammate to shut down (a shutdown_request) before \
you answer.";

/// `agent` as the leader of teams of the project.
pub(crate) fn lead(agent: Agent, runnable: &Runnable) -> Result<Agent, Refusal> {
    let Some(row) = runnable.tools.first() else {
        return Err(Refusal::invalid(
            "--teams needs a delegation tool in the preset's tools: teammates are started through it",
        ));
    };
    let Some(dir) = setup::team_dir(&runnable.cwd) else {
        return Err(Refusal::invalid(
            "--teams keeps its teams in the state dir: set HOME or XDG_STATE_HOME to an absolute path",
        ));
    };
    let directory: Arc<dyn subagent_core::agents::AgentDirectory> = runnable.catalog.clone();
    let delegation = Arc::new(DelegationTool::new(
        delegation_config(row),
        Arc::clone(&runnable.registry),
        directory,
    ));
    let teams = Teams::new(TeamStore::new(dir), delegation);
    let lead = leader_tools(&teams);
    let Some((team_agent, team_tools)) = lead.split_first() else {
        return Err(Refusal::invalid("the team tools are missing"));
    };
    let mut config = agent.config().clone();
    // The row's tool becomes the one taking name and team_name (same name, same place).
    let tools: Vec<Arc<dyn Tool>> = config
        .tools
        .tools()
        .iter()
        .map(|tool| match tool.spec().name == row.name {
            true => Arc::clone(team_agent),
            false => Arc::clone(tool),
        })
        .chain(team_tools.iter().cloned())
        .collect();
    config.tools = ToolSet::new(tools);
    config.system = Some(match config.system.take() {
        Some(system) => format!("{system}\n\n{LEAD_SYSTEM}"),
        None => LEAD_SYSTEM.to_owned(),
    });
    config.input = Some(teams.leader_input());
    Agent::new(config).map_err(|e| Refusal::invalid(e.to_string()))
}
