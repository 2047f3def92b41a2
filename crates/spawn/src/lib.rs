//! `subagent-spawn`: the in-process provider that starts a child with a fresh conversation.
//!
//! The child is a `subagent-runtime` agent: its system prompt is the provider's (or a default)
//! plus the request's persona; its tools are the built-in tools (as configured), any extra tools
//! the embedder added, and the parent's delegation tools when the parent is an in-process run
//! (read from the `ParentSnapshot` in the request's extensions), then the host's tools (a
//! `HostTools` in the build context's extensions: the MCP servers' tools the CLI lists when a
//! run starts), then the request's tool filter.
//! A child that may not delegate (its depth is its cap: nesting is opt-in, see
//! `subagent_runtime::delegation`) gets no delegation tool at all, and a call to one anyway is
//! refused with `NESTED_DELEGATION_FORBIDDEN`. A background child (`StartRequest::background`)
//! is offered only the background tools (`subagent_runtime::tools::BACKGROUND_TOOLS`, the MCP servers', its
//! delegation tools and the harness's) and never asks: what would need approval is denied. Its
//! own background tasks keep their files under its parent run's task root (else the provider's,
//! [`SpawnProvider::with_task_dir`] or a `TaskDir` in the build context's extensions).
//! It honours, and declares, `output_schema` (a `structured_output` capture tool validated
//! against the schema), `depth_limit`, `tool_filter`, `persona`, `model_override` (the request's
//! model id is sent to the provider's model client), `max_turns`, `isolation` (the child's
//! file tools have `parent.cwd` as their one root, instead of the parent's roots, and its bash
//! commands start there: an isolated child's worktree) and `resume`: given a session store
//! ([`SpawnProvider::with_sessions`], or a `SessionStore` in the build context's extensions),
//! each child writes its transcript there and its outcome names the session; a request resuming
//! one continues that transcript (same session id, the earlier conversation sent first) under
//! this request's settings. Without a store a resume is `NOT_RESUMABLE`. Children keep the
//! configured secrets in (the build context's [`Secrets`], and a parent
//! run's): their bash tool does not inherit them and tool results show `[REDACTED:NAME]` for
//! their values.
//! It declares `effort` (the request's effort goes into every model request of the child: a
//! thinking budget, a reasoning effort) when its model sends one
//! ([`Model::supports_effort`](subagent_model::Model::supports_effort)): the factory's table
//! has it, a provider on a chat server not known to take an effort does not. A request's model
//! may be an alias ([`SpawnProvider::with_aliases`]).
//!
//! Given skills ([`SpawnProvider::with_skills`], or `Skills` in the build context's
//! extensions), a child has the `Skill` tool after the built-in ones (unless its filters take it
//! away), the skills listed in its first message after its task when it has the tool, and the
//! skills its agent type preloads (`PreloadSkills` in the request's extensions) there as well.

//!
//! A child of an agent type with `memory:` (its `subagent_core::memory::AgentMemory` in the
//! request's extensions) opens that memory (`RunMemory`): the directory made, its instructions
//! and index at the end of the system prompt, the directory a private root of its file tools
//! whose Markdown files it writes without asking (docs/memory.md).
//!
//! A request's own MCP servers (`mcp_servers`: an agent definition's `mcpServers:`
//! definitions) start for that child alone, and their tools, with those of the host's servers
//! its agent type names (`AgentMcpNames` in the request's extensions), join its tools past its
//! tool filter's `allow` (only `deny` removes them), as Claude Code adds an agent's servers.
//!
//! Deliberately not here: the agent loop and tools (`subagent-runtime`), the parent's
//! conversation (that is `subagent-fork`).

mod servers;

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use subagent_core::memory::AgentMemory;
use subagent_core::registry::DEFAULT_MAX_DEPTH;
use subagent_core::skills::SkillDirectory;
use subagent_core::{
    BuildContext, Capabilities, Capability, ChildTools, Error, PermissionMode, Placement,
    ProviderFactory, Run, StartRequest, SubagentProvider, ToolFilter,
};
use subagent_model::{Model, ModelAliases};
use subagent_runtime::ChildExtras;
use subagent_runtime::tools::{BashConfig, SkillTool};
use subagent_runtime::{
    Agent, AgentConfig, AgentHooks, DefaultModel, HostTools, OutputMode, ParentSnapshot,
    PermissionPolicy, PreloadSkills, Roots, RunMemory, RunSkills, SKILL_TOOL, Secrets, Seed,
    SessionStore, SettingsRules, Skills, SummaryConfig, TaskDir, Tool, ToolKind, ToolSet,
};

/// The kind name in presets.
pub const KIND: &str = "spawn";

/// The task tools' names.
const TASK_OUTPUT: &str = "task_output";
const TASK_STOP: &str = "task_stop";

/// The system prompt of a child when the configuration gives none.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are a subagent: another agent gave you the task in the first user message. Work on it with your tools until it is done, then answer with a concise, complete report; that answer is all the other agent will see.";

/// What a spawn provider is configured with (a preset's `config:` block).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SpawnConfig {
    /// The child's system prompt (default: [`DEFAULT_SYSTEM_PROMPT`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which built-in tools the child has, by name (default: all of them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Turn limit when the request gives none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// Output token limit per model call (default 8192).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Permission mode of children (intersected with the parent's and the agent type's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<PermissionMode>,
    /// I/O tool calls of one message run at once (default 10); delegation calls are not
    /// counted: they all start at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_concurrency: Option<usize>,
    /// Limits of the bash tool.
    pub bash: BashConfig,
    /// The model of children; when absent, the `DefaultModel` of the build context.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<subagent_model::ModelConfig>,
    /// Seconds between progress summaries of a child that is still running (a tool-less fork
    /// of its conversation sharing its cached prefix; see `subagent_runtime::summary`):
    /// default 30, 0 = none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_interval_secs: Option<u64>,
}

/// The spawn provider.
pub struct SpawnProvider {
    name: String,
    config: SpawnConfig,
    model: Arc<dyn Model>,
    /// The built-in tools (as configured) and the extra tools, specs computed once.
    base_tools: ToolSet,
    /// `base_tools` without delegation tools (the same set when it has none).
    base_without_delegation: ToolSet,
    permissions: PermissionPolicy,
    /// The configured secrets children keep in.
    secrets: Secrets,
    /// Where children's transcripts go, and sessions are resumed from.
    sessions: Option<SessionStore>,
    /// Where children outside an in-process parent keep their background tasks' files.
    task_dir: Option<TaskDir>,
    /// Model aliases a request's model may name (see [`SpawnProvider::with_aliases`]).
    aliases: ModelAliases,
    /// The last parent tool set seen and the child tool set built from it: children of one
    /// parent reuse it instead of copying every tool spec on each delegation.
    inherited: Mutex<Option<(ToolSet, ToolSet)>>,
    /// Progress summaries of children (from `summary_interval_secs`, or
    /// [`SpawnProvider::with_summaries`]).
    summaries: Option<SummaryConfig>,
    /// Tools the host adds to every child once it has them (its MCP servers' tools).
    host_tools: HostTools,
    /// Where children's skills come from ([`SpawnProvider::with_skills`]).
    skills: Option<Arc<dyn SkillDirectory>>,
}

impl std::fmt::Debug for SpawnProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpawnProvider")
            .field("name", &self.name)
            .field("model", &self.model.describe())
            .finish_non_exhaustive()
    }
}

/// `tools` without its delegation tools: `tools` itself (shared) when it has none.
fn without_delegation(tools: &ToolSet) -> ToolSet {
    if tools.tools().iter().any(|t| t.kind() == ToolKind::Delegate) {
        tools.retain(|tool, _| tool.kind() != ToolKind::Delegate)
    } else {
        tools.clone()
    }
}

/// What every spawn provider honours.
pub fn capabilities() -> Capabilities {
    let mut caps = Capabilities::NONE;
    for capability in [
        Capability::OutputSchema,
        Capability::DepthLimit,
        Capability::ToolFilter,
        Capability::Persona,
        Capability::ModelOverride,
        Capability::MaxTurns,
        Capability::Effort,
        Capability::Resume,
        Capability::Isolation,
        Capability::PermissionRules,
        Capability::McpServers,
    ] {
        caps = caps.with(capability, true);
    }
    caps
}

impl SpawnProvider {
    /// A provider named `name` running children on `model`.
    pub fn new(name: impl Into<String>, model: Arc<dyn Model>, config: SpawnConfig) -> Self {
        let base_tools = ToolSet::new(ToolSet::builtin(config.bash.clone())).retain(|_, spec| {
            config
                .tools
                .as_ref()
                .is_none_or(|names| names.contains(&spec.name))
        });
        // A child that can run a command in the background can read and stop it (bash's
        // `run_in_background` points the model at these tools); computed once, dropped per
        // child below when its filters leave nothing that starts a task.
        let base_tools = if base_tools.get("bash").is_some() {
            base_tools.with(subagent_runtime::tools::task_tools())
        } else {
            base_tools
        };
        let summaries = SummaryConfig::from_secs(config.summary_interval_secs);
        Self {
            name: name.into(),
            config,
            model,
            base_without_delegation: without_delegation(&base_tools),
            base_tools,
            permissions: PermissionPolicy::default(),
            secrets: Secrets::new(),
            sessions: None,
            task_dir: None,
            aliases: ModelAliases::default(),
            inherited: Mutex::new(None),
            summaries,
            host_tools: HostTools::new(),
            skills: None,
        }
    }

    /// Tools every child gets after the built-in and delegation tools, once the host filled
    /// `tools` (a `HostTools` in the build context's extensions: its MCP servers' tools); the
    /// request's filters, plan mode and the background list apply to them as to the others.
    #[must_use]
    pub fn with_host_tools(mut self, tools: HostTools) -> Self {
        self.host_tools = tools;
        self
    }

    /// Gives children skills: the `Skill` tool (after the built-in tools) over `directory`, its
    /// listing in a child's first message, and an agent type's `skills:` (a `PreloadSkills` in
    /// the request's extensions) preloaded there. A filter that leaves a child no `Skill` tool
    /// leaves it no listing; its preloaded skills it keeps (as in Claude Code).
    #[must_use]
    pub fn with_skills(mut self, directory: Arc<dyn SkillDirectory>) -> Self {
        let tool: Arc<dyn Tool> = Arc::new(SkillTool::new(Arc::clone(&directory)));
        self.skills = Some(directory);
        self.with_tools([tool])
    }

    /// The configured secrets children keep in (`AgentConfig::secrets`); a child of an
    /// in-process parent also keeps in the parent's.
    #[must_use]
    pub fn with_secrets(mut self, secrets: Secrets) -> Self {
        self.secrets = secrets;
        self
    }

    /// The model aliases a request's model may name (a preset's table; Claude Code's `haiku`,
    /// `sonnet`, `opus` on an Anthropic model): the child sends the id an alias stands for.
    #[must_use]
    pub fn with_aliases(mut self, aliases: ModelAliases) -> Self {
        self.aliases = aliases;
        self
    }

    /// Progress summaries of children (`AgentConfig::summaries`; `None`: none), instead of the
    /// config's `summary_interval_secs`.
    #[must_use]
    pub fn with_summaries(mut self, summaries: Option<SummaryConfig>) -> Self {
        self.summaries = summaries;
        self
    }

    /// Where children write their transcripts (`AgentConfig::sessions`) and sessions are
    /// resumed from.
    #[must_use]
    pub fn with_sessions(mut self, store: SessionStore) -> Self {
        self.sessions = Some(store);
        self
    }

    /// Where children started outside an in-process parent keep their background tasks' output
    /// files (`AgentConfig::task_dir`); a child of an in-process parent uses its parent's root.
    #[must_use]
    pub fn with_task_dir(mut self, dir: TaskDir) -> Self {
        self.task_dir = Some(dir);
        self
    }

    /// Adds tools every child gets after the built-in ones.
    #[must_use]
    pub fn with_tools(mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        self.base_tools = self.base_tools.with(tools);
        self.base_without_delegation = without_delegation(&self.base_tools);
        self.inherited = Mutex::new(None);
        self
    }

    /// The permission policy of children started outside an in-process parent (inside one, the
    /// parent's policy is inherited).
    #[must_use]
    pub fn with_permissions(mut self, policy: PermissionPolicy) -> Self {
        self.permissions = policy;
        self
    }

    /// The base tools without their delegation tools (shared: computed once, so a child that
    /// may not delegate copies no tool spec), and the names of every delegation tool (the
    /// base's and `parent`'s): what such a child gets and is refused.
    fn without_delegation(&self, parent: Option<&ToolSet>) -> (ToolSet, Vec<String>) {
        let delegates = |set: &ToolSet| -> Vec<String> {
            set.tools()
                .iter()
                .zip(set.specs())
                .filter(|(tool, _)| tool.kind() == ToolKind::Delegate)
                .map(|(_, spec)| spec.name.clone())
                .collect()
        };
        let mut refused = delegates(&self.base_tools);
        if let Some(parent) = parent {
            refused.extend(delegates(parent));
        }
        (self.base_without_delegation.clone(), refused)
    }

    /// The base tools followed by `parent`'s delegation tools (cached per parent tool set).
    fn inherit(&self, parent: &ToolSet) -> ToolSet {
        let mut cache = self
            .inherited
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((seen, built)) = cache.as_ref()
            && seen.same(parent)
        {
            return built.clone();
        }
        let built = self
            .base_tools
            .concat(&parent.retain(|tool, _| tool.kind() == ToolKind::Delegate));
        *cache = Some((parent.clone(), built.clone()));
        built
    }

    fn agent_config(&self, request: &StartRequest, own: &ToolSet) -> Result<AgentConfig, Error> {
        let snapshot = request.parent.extensions.get::<ParentSnapshot>();
        // An isolated child works only in the cwd it is given (its worktree), never in the
        // parent's roots.
        let mut roots = match &snapshot {
            Some(snapshot) if request.isolation.is_none() => snapshot.env.roots.clone(),
            Some(_) => Roots::new(&request.parent.cwd)
                .map_err(|e| Error::invalid(format!("working directory: {e}")))?,
            // A top-level child reaches the settings' additional directories too, unless
            // isolated.
            None => {
                let extra = match request.isolation {
                    None => self.permissions.additional_dirs(),
                    Some(_) => &[],
                };
                Roots::with_dirs(&request.parent.cwd, extra)
                    .map_err(|e| Error::invalid(format!("working directory: {e}")))?
            }
        };
        // A child of an in-process parent inherits the parent's policy; a top-level start (the
        // CLI's `delegate`, a remote caller) gets the provider's configured mode as its base.
        let mut permissions = match (&snapshot, self.config.permission_mode) {
            (Some(snapshot), _) => snapshot.env.permissions.clone(),
            (None, Some(mode)) if self.permissions.mode == PermissionMode::Default => {
                let mut policy = self.permissions.clone();
                policy.mode = mode;
                policy
            }
            (None, _) => self.permissions.clone(),
        };
        if let Some(mode) = self.config.permission_mode {
            permissions = permissions.restricted_to(mode);
        }
        if let Some(ceiling) = request.permission_ceiling {
            permissions = permissions.restricted_to(ceiling);
        }
        // The rules its request carries hold beside those it inherits (a top-level start gets
        // them only this way).
        if let Some(rules) = &request.permission_rules {
            permissions = permissions
                .holding(rules, &request.parent.cwd)
                .map_err(Error::invalid)?;
        }
        // The agent types the child may start are its own (its agent type's), not its parent's.
        permissions.agent_types = request.agent_types.clone();
        // Its agent type's hooks run in its run, beside the settings'.
        if let Some(hooks) = request.parent.extensions.get::<AgentHooks>() {
            hooks.apply(&mut permissions, &request.parent.cwd);
        }
        // Its agent type's memory: the directory made ready, a root of its file tools (written
        // without asking), the instructions and index at the end of its system prompt. A run's
        // own: a child does not write its parent's memory without asking.
        let memory = match request.parent.extensions.get::<AgentMemory>() {
            Some(memory) => Some(
                RunMemory::open(&memory)
                    .map_err(|e| Error::spawn_failed(format!("agent memory: {e}")))?,
            ),
            None => None,
        };
        permissions.memory_dirs = Vec::new();
        if let Some(memory) = &memory {
            roots = roots
                .with_private(&memory.dir)
                .map_err(|e| Error::spawn_failed(format!("agent memory: {e}")))?;
            if let Ok(canonical) = memory.dir.canonicalize() {
                permissions.memory_dirs.push(canonical);
            }
        }
        let max_depth = request
            .max_depth
            .or(snapshot.as_ref().map(|s| s.env.max_depth))
            .unwrap_or(DEFAULT_MAX_DEPTH);
        // The parent's delegation tools, with the specs the parent computed, for a child that
        // may delegate; none for one that may not.
        let mut nesting_refused = Vec::new();
        let mut tools = if request.child_depth() >= max_depth {
            let (tools, refused) =
                self.without_delegation(snapshot.as_ref().map(|snapshot| &snapshot.tools));
            nesting_refused = refused;
            tools
        } else {
            match &snapshot {
                Some(snapshot) => self.inherit(&snapshot.tools),
                None => self.base_tools.clone(),
            }
        };
        tools = tools.concat(&self.host_tools.tools());
        // Nobody waits on a background child: it gets the fixed background tools (which never
        // wait on a person) and never asks (its broker goes below).
        if request.background {
            tools = tools.for_background();
        }
        if permissions.mode == PermissionMode::Plan {
            tools = tools.retain(|tool, _| tool.kind().is_read_only());
        }
        if let Some(filter) = &request.tool_filter {
            tools = tools.filtered(filter);
        }
        // The task tools go with what starts tasks (bash, a delegation tool): a child the
        // filters leave neither has nothing for them to read. (A filter that removes them but
        // keeps bash is obeyed: a filter offers exactly what it permits.)
        let starts_tasks = |tools: &ToolSet| {
            tools.get("bash").is_some()
                || tools.tools().iter().any(|t| t.kind() == ToolKind::Delegate)
        };
        if tools.get(TASK_OUTPUT).is_some() && !starts_tasks(&tools) {
            tools = tools.retain(|_, spec| spec.name != TASK_OUTPUT && spec.name != TASK_STOP);
        }
        // Its agent type's MCP servers (those it defines, started for it, and those it names)
        // come past its `tools:` list, as Claude Code adds them: only `deny` removes them.
        let mut theirs = own.concat(&servers::named(request, &self.host_tools.tools()));
        if request.background {
            theirs = theirs.for_background();
        }
        if permissions.mode == PermissionMode::Plan {
            theirs = theirs.retain(|tool, _| tool.kind().is_read_only());
        }
        if let Some(filter) = &request.tool_filter {
            theirs = theirs.filtered(&ToolFilter::deny(filter.deny.iter()));
        }
        tools = tools.concat(&theirs);
        // A child's extra tools (a teammate's team tools) come after the filters: whoever starts
        // the child gives them, not its agent type.
        let extras = request.parent.extensions.get::<ChildExtras>();
        if let Some(extras) = &extras {
            tools = tools.with(extras.tools.iter().cloned());
        }
        let mut system = self
            .config
            .system_prompt
            .clone()
            .unwrap_or_else(|| DEFAULT_SYSTEM_PROMPT.to_owned());
        if let Some(persona) = &request.persona {
            system.push_str("\n\n");
            system.push_str(persona);
        }
        if let Some(memory) = &memory {
            system.push_str("\n\n");
            system.push_str(&memory.instructions);
        }
        permissions.broker = if request.background {
            None
        } else {
            permissions.broker
        };
        let mut config = AgentConfig::new(Arc::clone(&self.model), roots);
        // An alias becomes the id it stands for on this provider's model (`inherit`: none).
        config.model_id = request.model.as_deref().and_then(|name| {
            let kind = self.config.model.as_ref().map(|model| model.kind);
            self.aliases.resolve(kind, name)
        });
        config.system = Some(system);
        config.tools = tools;
        config.input = extras.and_then(|extras| extras.input.clone());
        config.max_turns = request.max_turns.or(self.config.max_turns);
        config.effort = request.effort;
        if let Some(max_tokens) = self.config.max_tokens {
            config.max_tokens = max_tokens;
        }
        if let Some(concurrency) = self.config.tool_concurrency {
            config.tool_concurrency = concurrency;
        }
        config.output = match &request.output_schema {
            Some(schema) => OutputMode::CaptureTool {
                schema: schema.clone(),
            },
            None => OutputMode::Text,
        };
        config.permissions = permissions;
        config.depth = request.child_depth();
        config.max_depth = max_depth;
        config.background = request.background;
        config.lineage = request.parent.lineage.clone();
        config.nesting_refused = nesting_refused;
        config.sessions.clone_from(&self.sessions);
        config.summaries.clone_from(&self.summaries);
        // Background tasks of the child keep their files under its parent's root (one root,
        // pruned once, for a whole tree of runs), else the provider's.
        config.task_dir = match &snapshot {
            Some(snapshot) => snapshot.env.tasks.root(),
            None => self.task_dir.clone(),
        };
        config.secrets = match &snapshot {
            Some(snapshot) => self.secrets.union(&snapshot.env.secrets),
            None => self.secrets.clone(),
        };
        config.skills = self.skills.as_ref().map(|directory| RunSkills {
            directory: Arc::clone(directory),
            preload: request
                .parent
                .extensions
                .get::<PreloadSkills>()
                .map(|preload| preload.0.clone())
                .unwrap_or_default(),
        });
        Ok(config)
    }
}

#[async_trait]
impl SubagentProvider for SpawnProvider {
    fn name(&self) -> &str {
        &self.name
    }

    /// [`capabilities`], `effort` only on a model that sends it.
    fn capabilities(&self) -> Capabilities {
        capabilities().with(Capability::Effort, self.model.supports_effort())
    }

    fn capability_reason(&self, capability: Capability) -> Option<String> {
        (capability == Capability::Effort && !self.model.supports_effort()).then(|| {
            format!(
                "its model, {}, takes no reasoning effort",
                self.model.describe()
            )
        })
    }

    async fn start(&self, request: StartRequest) -> Result<Run, Error> {
        let secrets = match request.parent.extensions.get::<ParentSnapshot>() {
            Some(snapshot) => self.secrets.union(&snapshot.env.secrets),
            None => self.secrets.clone(),
        };
        let own = servers::ChildServers::start(&request, &secrets).await;
        let config = self.agent_config(&request, &own.tools)?;
        let agent = Agent::new(config).map_err(|e| Error::invalid(e.to_string()))?;
        let (agent, seed) = match &request.resume {
            None => (agent, Seed::fresh(request.prompt.clone())),
            Some(session) => {
                let Some(store) = &self.sessions else {
                    return Err(Error::NotResumable {
                        message: format!(
                            "provider \"{}\" keeps no transcripts (no session store), so it cannot resume session {}",
                            self.name, session.id
                        ),
                    });
                };
                let resumed = store
                    .resume(&self.name, session, request.prompt.clone())
                    .await?;
                (agent.resuming(resumed.session), resumed.seed)
            }
        };
        Ok(agent.start(&self.name, &request, seed))
    }
}

/// Builds spawn providers from preset config. The model comes from
/// `BuildContext::extensions` as a [`DefaultModel`], the configured [`Secrets`] from
/// `BuildContext::secrets`, the session store (if any) as a [`SessionStore`].
#[derive(Debug, Default)]
pub struct SpawnFactory;

impl ProviderFactory for SpawnFactory {
    fn kind(&self) -> &str {
        KIND
    }

    fn summary(&self) -> &str {
        "an in-process agent with a fresh conversation"
    }

    fn capabilities(&self) -> Capabilities {
        capabilities()
    }

    fn config_schema(&self) -> schemars::Schema {
        schemars::schema_for!(SpawnConfig)
    }

    /// The key variable of `config.model`, if it names a model.
    fn secret_env(&self, config: &Value) -> Vec<String> {
        BuildContext::parse_config::<SpawnConfig>(KIND, "", config)
            .ok()
            .and_then(|config| config.model)
            .and_then(|model| model.key_env())
            .into_iter()
            .collect()
    }

    /// In process, on `config.model` or the host's default model.
    fn placement(&self, config: &Value) -> Placement {
        Placement::in_process_on_config_model(config)
    }

    /// The runtime's built-in tools (those `config.tools` keeps), the `Skill` tool (where the
    /// host has skills) and the host's delegation tools.
    fn child_tools(&self, config: &Value) -> Option<ChildTools> {
        let kept = BuildContext::parse_config::<SpawnConfig>(KIND, "", config)
            .ok()
            .and_then(|config| config.tools);
        let names = ToolSet::new(ToolSet::builtin(BashConfig::default()))
            .names()
            .into_iter()
            .filter(|name| {
                kept.as_ref()
                    .is_none_or(|kept| kept.iter().any(|k| k == name))
            })
            .map(str::to_owned)
            .chain([SKILL_TOOL.to_owned()])
            .collect();
        Some(ChildTools {
            names,
            delegation: true,
        })
    }

    fn build(
        &self,
        name: &str,
        config: &Value,
        context: &BuildContext,
    ) -> Result<Arc<dyn SubagentProvider>, Error> {
        let config: SpawnConfig = BuildContext::parse_config(KIND, name, config)?;
        let model = match &config.model {
            Some(model) => subagent_model::build(model)
                .map_err(|e| Error::invalid(format!("spawn provider {name}: model: {e}")))?,
            None => match context.extensions.get::<DefaultModel>().as_deref().cloned() {
                Some(DefaultModel(model)) => model,
                None => {
                    return Err(Error::invalid(format!(
                        "spawn provider {name}: no model; set config.model or put a DefaultModel in BuildContext::extensions"
                    )));
                }
            },
        };
        let secrets = context.secrets.clone();
        let aliases = context
            .extensions
            .get::<ModelAliases>()
            .map(|aliases| (*aliases).clone())
            .unwrap_or_default();
        let mut provider = SpawnProvider::new(name, model, config)
            .with_secrets(secrets)
            .with_aliases(aliases);
        if let Some(store) = context.extensions.get::<SessionStore>() {
            provider = provider.with_sessions((*store).clone());
        }
        if let Some(dir) = context.extensions.get::<TaskDir>() {
            provider = provider.with_task_dir((*dir).clone());
        }
        if let Some(tools) = context.extensions.get::<HostTools>() {
            provider = provider.with_host_tools((*tools).clone());
        }
        if let Some(skills) = context.extensions.get::<Skills>() {
            provider = provider.with_skills(Arc::clone(&skills.0));
        }
        // Rules from settings files and flags: a top-level start obeys them as a child of an
        // in-process parent does (through the parent's policy).
        if let Some(rules) = context.extensions.get::<SettingsRules>() {
            provider = provider.with_permissions(PermissionPolicy::default().with_settings(rules));
        }
        Ok(Arc::new(provider))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use subagent_core::StartRequest;
    use subagent_core::agents::{AgentDirectory, StaticAgents};
    use subagent_core::registry::Registry;
    use subagent_model::{ScriptedModel, scenario::Scenarios};
    use subagent_runtime::delegation::{DelegationTool, DelegationToolConfig};

    use super::*;

    /// Children that may not delegate share one tool set: no spec is copied per delegation
    /// (a fan-out of thousands of children would otherwise copy every schema thousands of
    /// times).
    #[test]
    fn children_that_may_not_delegate_share_their_tools() {
        let model: Arc<dyn Model> = Arc::new(ScriptedModel::new(
            "m",
            Scenarios::from_yaml("- match: x\n  steps: [{text: y}]\n").unwrap(),
        ));
        let agents: Arc<dyn AgentDirectory> = Arc::new(StaticAgents::default());
        let delegation: Arc<dyn Tool> = Arc::new(DelegationTool::new(
            DelegationToolConfig::new("spawn"),
            Arc::new(Registry::new()),
            agents,
        ));
        let dir = std::env::temp_dir();
        for provider in [
            SpawnProvider::new("spawn", Arc::clone(&model), SpawnConfig::default()),
            SpawnProvider::new("spawn", Arc::clone(&model), SpawnConfig::default())
                .with_tools([Arc::clone(&delegation)]),
        ] {
            let request = || StartRequest::builder("x").cwd(&dir).max_depth(1).build();
            let a = provider
                .agent_config(&request(), &ToolSet::default())
                .unwrap();
            let b = provider
                .agent_config(&request(), &ToolSet::default())
                .unwrap();
            assert!(a.tools.same(&b.tools));
            assert!(
                a.tools
                    .tools()
                    .iter()
                    .all(|t| t.kind() != ToolKind::Delegate)
            );
        }
    }
}
