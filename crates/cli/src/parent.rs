//! The parent agent `run` runs and `acp` serves: its system prompt, its tools (the built-in
//! ones, `Skill` where there are skills, a delegation tool per preset row, the task tools) and its limits. A team's leader
//! (`teams`) delegates through the same rows.
//!
//! Deliberately not here: driving a run and showing it (`commands::run`, `acp`), and teams.

use std::sync::Arc;

use subagent_runtime::tools::{BashConfig, SkillTool};
use subagent_runtime::{
    AgentConfig, DelegationTool, DelegationToolConfig, PermissionPolicy, Roots, RunSkills, Tool,
    ToolSet,
};

use crate::Refusal;
use crate::setup::{self, Runnable};

/// The system prompt of the `run` parent.
const PARENT_SYSTEM: &str = "You are a coding agent working in the user's project directory. \
You can read and change files and run commands with your tools, and you can hand a self-contained \
subtask to a subagent with a delegation tool: give it a complete prompt, since it does not see \
this conversation unless it is a fork. Report the result to the user concisely.";

/// The delegation tool a preset row describes (its provider, name, fork, limits, filter and
/// persona).
pub(crate) fn delegation_config(row: &subagent_preset::ToolRow) -> DelegationToolConfig {
    let mut config = DelegationToolConfig::new(row.provider.clone());
    config.name.clone_from(&row.name);
    // Untyped calls fork only where the row names a fork provider.
    config.fork.clone_from(&row.fork);
    config.max_depth = row.max_depth;
    config.background = row.background;
    config.foreground_timeout_ms = row.foreground_timeout_ms;
    config.tool_filter.clone_from(&row.tool_filter);
    config.persona.clone_from(&row.persona);
    config.description.clone_from(&row.description);
    config.max_tokens_budget = row.budget.and_then(|budget| budget.max_tokens);
    config
}

/// The parent `run` runs (and `acp` serves): the built-in tools, the preset's delegation
/// tools, the task tools and the MCP servers' tools (once started), in `runnable.cwd`,
/// permitted by `permissions`.
pub(crate) fn parent_agent(
    runnable: &Runnable,
    max_turns: u32,
    permissions: PermissionPolicy,
    session: &[Arc<dyn Tool>],
) -> Result<subagent_runtime::Agent, Refusal> {
    let directory: Arc<dyn subagent_core::agents::AgentDirectory> = runnable.catalog.clone();
    let delegations = runnable.tools.iter().map(|row| {
        Arc::new(DelegationTool::new(
            delegation_config(row),
            Arc::clone(&runnable.registry),
            Arc::clone(&directory),
        )) as Arc<dyn Tool>
    });
    // The `Skill` tool, when there is a skill to load, after the built-in tools.
    let skills = crate::skills::directory(&runnable.skills);
    let skill_tool = skills
        .iter()
        .map(|directory| Arc::new(SkillTool::new(Arc::clone(directory))) as Arc<dyn Tool>);
    // The task tools read and stop what the parent runs in the background (subagents, commands);
    // the MCP servers' tools come last (none until `McpSetup::start`).
    let tools = ToolSet::new(
        ToolSet::builtin(BashConfig::default())
            .into_iter()
            .chain(skill_tool)
            .chain(delegations)
            .chain(subagent_runtime::tools::task_tools()),
    )
    .concat(&runnable.mcp.host_tools.tools())
    .concat(&ToolSet::new(session.iter().cloned()));
    // The settings' additionalDirectories beside the working directory.
    let roots = Roots::with_dirs(&runnable.cwd, &runnable.rules.additional_dirs)
        .map_err(|e| Refusal::invalid(format!("{e} (from the settings' additionalDirectories)")))?;
    let mut config = AgentConfig::new(Arc::clone(&runnable.model.model), roots);
    config.system = Some(PARENT_SYSTEM.to_owned());
    config.tools = tools;
    config.max_turns = Some(max_turns);
    config.max_depth = runnable.preset.max_depth;
    // The parent's bash tool and tool results keep the configured secrets in, as children do.
    config.secrets = runnable.secrets.clone();
    config.sessions.clone_from(&runnable.sessions);
    config.task_dir.clone_from(&runnable.tasks);
    config.permissions = permissions;
    config.max_tool_result_bytes = setup::tool_result_cap(&runnable.preset);
    config.skills = skills.map(|directory| RunSkills {
        directory,
        preload: Vec::new(),
    });
    subagent_runtime::Agent::new(config).map_err(|e| Refusal::invalid(e.to_string()))
}
