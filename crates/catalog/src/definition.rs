//! One agent definition, as written, and what it becomes for the delegation tool.

use serde::Serialize;
use subagent_core::agents::{AgentProfile, Settings};
use subagent_core::memory::{MemoryRoots, MemoryScope};
use subagent_core::{Capability, Effort, PermissionMode, ToolFilter};

use crate::location::Location;
use crate::source::{Origin, Source};
use crate::tools::with_aliases;

/// The tools an agent with `memory` keeps (Claude Code's names): it reads and writes its
/// memory directory with them.
pub(crate) const MEMORY_TOOLS: [&str; 3] = ["Write", "Edit", "Read"];

/// Where a child runs its file tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Isolation {
    /// A fresh git worktree of the parent's repository.
    Worktree,
    /// A remote instance.
    Remote,
}

impl Isolation {
    /// Parses `worktree` or `remote`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "worktree" => Some(Self::Worktree),
            "remote" => Some(Self::Remote),
            _ => None,
        }
    }

    /// The name as written in a definition.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Worktree => "worktree",
            Self::Remote => "remote",
        }
    }
}

/// An agent definition: the frontmatter fields of a Markdown file (Claude Code's plus our
/// `provider` and `persona`) and its body. Fields are kept as written; [`Definition::profile`]
/// turns them into what the delegation tool starts.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Definition {
    /// The type name (`subagent_type`). From `name`, else the file stem.
    pub name: String,
    /// When to use it; shown to the model in the delegation tool's description.
    pub description: String,
    /// The body: the child's system prompt.
    pub prompt: String,
    /// `tools`: only these tools (`None` = inherit every tool; `Some([])` = no tools).
    pub tools: Option<Vec<String>>,
    /// `disallowedTools`: never these tools.
    pub disallowed_tools: Vec<String>,
    /// `model`: an alias or id the provider resolves; `None` = `inherit` or absent.
    pub model: Option<String>,
    /// `maxTurns`.
    pub max_turns: Option<u32>,
    /// `maxTokensBudget` (ours): the most tokens a run of it may use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens_budget: Option<u64>,
    /// `permissionMode` (ours or Claude Code's spelling).
    pub permission_mode: Option<PermissionMode>,
    /// `background`: always run in the background.
    pub background: bool,
    /// `isolation`.
    pub isolation: Option<Isolation>,
    /// `provider` (ours): the provider that runs it; `None` = the delegation tool's own.
    pub provider: Option<String>,
    /// `persona` (ours): text appended to the body in the child's instructions.
    pub persona: Option<String>,
    /// `effort`: how hard the agent's model reasons (`low` … `max`).
    pub effort: Option<Effort>,
    /// `color` (for a user interface).
    pub color: Option<String>,
    /// `initialPrompt`.
    pub initial_prompt: Option<String>,
    /// `memory`: who shares the agent's memory directory (`user`, `project`, `local`).
    pub memory: Option<MemoryScope>,
    /// `skills`.
    pub skills: Vec<String>,
    /// `mcpServers`: configured servers it names and servers defined for it (kept as written,
    /// their `${VAR}`s expanded when a child starts).
    pub mcp_servers: Vec<subagent_core::mcp::AgentMcpServer>,
    /// `hooks`, kept as written.
    pub hooks: Option<serde_json::Value>,
    /// The source it belongs to.
    pub source: Source,
    /// Where it was read from.
    pub origin: Origin,
    /// Where each field was written in the file (canonical field name → location).
    #[serde(skip)]
    pub(crate) locations: Vec<(&'static str, Location)>,
}

impl Definition {
    /// A definition given as a value (by a preset or a plugin) rather than read from a file:
    /// origin [`Origin::Inline`], source [`Source::Flag`] until [`Definition::with_source`].
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        prompt: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            prompt: prompt.into(),
            ..Self::default()
        }
    }

    /// Where a field (Claude Code's spelling, e.g. `tools`) was written in its file.
    pub fn field_location(&self, field: &str) -> Option<Location> {
        self.locations
            .iter()
            .find(|(name, _)| *name == field)
            .map(|(_, location)| *location)
    }

    /// The same definition in another source.
    #[must_use]
    pub fn with_source(mut self, source: Source) -> Self {
        self.source = source;
        self
    }

    /// The tool filter it asks for: `tools` → allow, `disallowedTools` → deny, each name followed
    /// by its other-vocabulary alias (see [`with_aliases`](crate::with_aliases)). `None` when
    /// it restricts nothing. An agent with `memory` keeps the tools that read and write it
    /// (`Read`, `Write`, `Edit`) in a `tools` list that lacks them, as Claude Code adds them;
    /// `disallowedTools` can still take them away.
    pub fn tool_filter(&self) -> Option<ToolFilter> {
        if self.tools.is_none() && self.disallowed_tools.is_empty() {
            return None;
        }
        let allow = self.tools.as_ref().map(|tools| {
            let mut tools = tools.clone();
            if self.memory.is_some() {
                for needed in MEMORY_TOOLS {
                    if !tools.iter().any(|tool| tool == needed) {
                        tools.push(needed.to_owned());
                    }
                }
            }
            with_aliases(&tools)
        });
        Some(ToolFilter {
            allow,
            deny: with_aliases(&self.disallowed_tools),
        })
    }

    /// The agent types it may start, from `Agent(explore, plan)` (or `Task(…)`, the tool's
    /// older name) in its `tools`: every type named in such items, in order; `None` when no
    /// item restricts (a bare `Agent` lets it start any type).
    pub fn agent_types(&self) -> Option<Vec<String>> {
        let mut types: Option<Vec<String>> = None;
        for item in self.tools.iter().flatten() {
            let inner = ["Agent(", "Task("].iter().find_map(|open| {
                item.trim()
                    .strip_prefix(open)
                    .and_then(|rest| rest.strip_suffix(')'))
            });
            if let Some(inner) = inner {
                let list = types.get_or_insert_with(Vec::new);
                for name in inner.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    if !list.iter().any(|known| known == name) {
                        list.push(name.to_owned());
                    }
                }
            }
        }
        types
    }

    /// The child's instructions: the body, then the persona, separated by a blank line; `None`
    /// when both are blank.
    pub fn instructions(&self) -> Option<String> {
        let parts: Vec<&str> = [Some(self.prompt.as_str()), self.persona.as_deref()]
            .into_iter()
            .flatten()
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }

    /// Whether its `mcpServers:` defines a server of its own (names alone ask for nothing).
    pub fn defines_servers(&self) -> bool {
        self.mcp_servers
            .iter()
            .any(|server| matches!(server, subagent_core::mcp::AgentMcpServer::Defined(_)))
    }

    /// The profile the delegation tool starts, its memory directory resolved under `roots`.
    pub fn profile_with(&self, roots: &MemoryRoots) -> AgentProfile {
        let mut profile = self.profile();
        profile.memory = self
            .memory
            .and_then(|scope| roots.resolve(scope, &self.name));
        profile
    }

    /// The profile the delegation tool starts (without a memory directory: see
    /// [`Definition::profile_with`]).
    pub fn profile(&self) -> AgentProfile {
        let mut profile = AgentProfile::new(self.name.clone(), self.description.clone());
        profile.provider = self.provider.clone();
        profile.instructions = self.instructions();
        profile.tool_filter = self.tool_filter();
        profile.model = self.model.clone();
        profile.effort = self.effort;
        profile.isolation = self
            .isolation
            .map(|isolation| isolation.as_str().to_owned());
        profile.agent_types = self.agent_types();
        profile.max_turns = self.max_turns;
        profile.max_tokens_budget = self.max_tokens_budget;
        profile.permission_mode = self.permission_mode;
        profile.background = self.background;
        profile.hooks = self.hooks.clone().filter(|hooks| !hooks.is_null());
        profile.skills = self.skills.clone();
        profile.mcp_servers = self.mcp_servers.clone();
        profile.source = self.origin.to_string();
        profile
    }

    /// Its layer of the effective configuration (see [`resolve`](crate::resolve)): its model,
    /// effort, tool filter (with aliases, see [`Definition::tool_filter`]), permission mode,
    /// turn limit, isolation and background flag.
    pub fn settings(&self) -> Settings {
        let mut settings = Settings::default();
        if let Some(model) = &self.model {
            settings = settings.model(model.clone());
        }
        if let Some(effort) = self.effort {
            settings = settings.effort(effort);
        }
        if let Some(filter) = self.tool_filter() {
            settings = settings.tool_filter(filter);
        }
        if let Some(mode) = self.permission_mode {
            settings = settings.permission_mode(mode);
        }
        if let Some(turns) = self.max_turns {
            settings = settings.max_turns(turns);
        }
        if let Some(isolation) = self.isolation {
            settings = settings.isolation(isolation.as_str());
        }
        if self.background {
            settings = settings.background(true);
        }
        settings
    }

    /// The request capabilities starting it needs from its provider, in table order:
    /// `tool_filter` for `tools`/`disallowedTools`, `persona` for a body or persona, `model_override`
    /// for a model, `max_turns` for a turn limit, `isolation` for `isolation: worktree`, `effort`
    /// for an effort.
    pub fn required_capabilities(&self) -> Vec<Capability> {
        let mut needed = Vec::new();
        if self.tool_filter().is_some() {
            needed.push(Capability::ToolFilter);
        }
        if self.instructions().is_some() {
            needed.push(Capability::Persona);
        }
        if self.model.is_some() {
            needed.push(Capability::ModelOverride);
        }
        if self.max_turns.is_some() {
            needed.push(Capability::MaxTurns);
        }
        if self.isolation == Some(Isolation::Worktree) {
            needed.push(Capability::Isolation);
        }
        if self.effort.is_some() {
            needed.push(Capability::Effort);
        }
        if self.defines_servers() {
            needed.push(Capability::McpServers);
        }
        needed
    }
}
