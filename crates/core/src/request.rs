//! What a caller asks of a provider, and the methods of lower types that take a request
//! ([`Capabilities::missing_for`], [`Run::channel`]).

mod agent_parts;

use std::path::PathBuf;

use serde_json::Value;
use subagent_session::{ContentBlock, EventLog};
use tokio_util::sync::CancellationToken;

use crate::agents::{AgentProfile, Effective, Layers, Settings, resolve};
use crate::apart::Isolation;
use crate::capabilities::{Capabilities, Capability};
use crate::run::{Run, RunId, RunSender, SessionRef};
use crate::{Extensions, PermissionMode, ToolFilter, default_description};

/// Where the delegation comes from.
#[derive(Clone, Debug, Default)]
pub struct ParentContext {
    /// The parent's working directory: product providers run their child here, never in the
    /// process cwd by accident.
    pub cwd: PathBuf,
    /// The parent's delegation depth (0 for a top-level agent). The child runs at `depth + 1`.
    pub depth: u32,
    /// The runs above the child, root first.
    pub lineage: Vec<RunId>,
    /// The parent's session log, for providers that inherit context (fork).
    pub log: Option<EventLog>,
    /// Typed data for a specific provider (e.g. the in-process runtime's parent snapshot).
    pub extensions: Extensions,
    /// Who answers the child's permission questions (a product child that can ask before a
    /// tool call asks here); `None`: nobody, the child runs as its row's permission mode says.
    pub asker: Option<crate::Asker>,
}

impl ParentContext {
    /// A top-level parent (depth 0) in `cwd`.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            ..Self::default()
        }
    }
}

/// A request to start a child. Optional fields are gated by [`crate::Capabilities`]: a provider
/// only sees fields it declared.
#[derive(Clone, Debug)]
pub struct StartRequest {
    /// The task.
    pub prompt: Vec<ContentBlock>,
    /// A short label; the registry fills it from the prompt when absent.
    pub description: Option<String>,
    /// Where the delegation comes from.
    pub parent: ParentContext,
    /// Cancels the start and the run.
    pub cancel: CancellationToken,
    /// Structured output wanted: an object-rooted JSON Schema.
    pub output_schema: Option<Value>,
    /// Absolute cap on delegation depth for the child and its descendants.
    pub max_depth: Option<u32>,
    /// Which tools the child may use.
    pub tool_filter: Option<ToolFilter>,
    /// Instructions added to the child's own.
    pub persona: Option<String>,
    /// The model the child runs.
    pub model: Option<String>,
    /// Turn limit.
    pub max_turns: Option<u32>,
    /// A finished run to continue.
    pub resume: Option<SessionRef>,
    /// Keep the child apart from the parent's files: the registry's isolator makes the place
    /// (a git worktree for [`Isolation::Worktree`]) and points `parent.cwd` into it; the
    /// provider confines the child to `parent.cwd`.
    pub isolation: Option<Isolation>,
    /// How hard the child's model reasons (`effort:` of an agent definition): a thinking
    /// budget, a reasoning effort, a product CLI's effort setting. `None`: the model's default.
    pub effort: Option<crate::Effort>,
    /// The agent types the child may start in turn (its delegation tool refuses others with
    /// `AGENT_TYPE_NOT_ALLOWED`); `None` = any. Honoured by the in-process runtime; a product
    /// CLI gets the rule in its tool filter (`Agent(explore, plan)`).
    pub agent_types: Option<Vec<String>>,
    /// The run goes on without a caller waiting: it must never ask anyone anything.
    pub background: bool,
    /// The loosest permission mode the child may run in (the parent's own, say): a provider
    /// runs the child in this mode or a stricter one (`plan` = read-only), whatever its own
    /// configuration says. Not a capability: every provider must honour it.
    pub permission_ceiling: Option<PermissionMode>,
    /// The parent's permission rules the child must hold to; with `deny` or `ask` rules the
    /// request needs [`Capability::PermissionRules`].
    pub permission_rules: Option<crate::PermissionRules>,
    /// MCP servers the child gets besides the host's (an agent definition's own, `${VAR}`s
    /// expanded): started for this child and stopped when it ends. Not empty: the request needs
    /// [`Capability::McpServers`].
    pub mcp_servers: Vec<crate::mcp::McpServerSpec>,
}

impl StartRequest {
    /// A request with a text prompt from a top-level parent in `cwd`.
    pub fn new(prompt: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        Self::builder(prompt).cwd(cwd).build()
    }

    /// A builder with a text prompt.
    pub fn builder(prompt: impl Into<String>) -> StartRequestBuilder {
        StartRequestBuilder {
            request: Self {
                prompt: vec![ContentBlock::text(prompt)],
                description: None,
                parent: ParentContext::default(),
                cancel: CancellationToken::new(),
                output_schema: None,
                max_depth: None,
                tool_filter: None,
                persona: None,
                model: None,
                max_turns: None,
                resume: None,
                isolation: None,
                effort: None,
                agent_types: None,
                background: false,
                permission_ceiling: None,
                permission_rules: None,
                mcp_servers: Vec::new(),
            },
        }
    }

    /// The prompt's text blocks joined by newlines.
    pub fn prompt_text(&self) -> String {
        self.prompt
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The description, or the default made from the prompt.
    pub fn description_or_default(&self) -> String {
        match &self.description {
            Some(description) => description.clone(),
            None => default_description(&self.prompt_text()),
        }
    }

    /// The depth the child runs at.
    pub fn child_depth(&self) -> u32 {
        self.parent.depth.saturating_add(1)
    }

    /// The capabilities this request needs, in table order.
    pub fn required_capabilities(&self) -> Vec<Capability> {
        let mut needed = Vec::new();
        let mut need = |on: bool, capability| {
            if on {
                needed.push(capability);
            }
        };
        need(self.output_schema.is_some(), Capability::OutputSchema);
        need(self.max_depth.is_some(), Capability::DepthLimit);
        need(self.tool_filter.is_some(), Capability::ToolFilter);
        need(self.persona.is_some(), Capability::Persona);
        need(self.model.is_some(), Capability::ModelOverride);
        need(self.max_turns.is_some(), Capability::MaxTurns);
        need(self.resume.is_some(), Capability::Resume);
        need(self.isolation.is_some(), Capability::Isolation);
        need(self.effort.is_some(), Capability::Effort);
        need(
            self.permission_rules
                .as_ref()
                .is_some_and(crate::PermissionRules::restricts),
            Capability::PermissionRules,
        );
        need(!self.mcp_servers.is_empty(), Capability::McpServers);
        needed
    }
}

/// Builds a [`StartRequest`].
#[derive(Debug)]
#[must_use]
pub struct StartRequestBuilder {
    request: StartRequest,
}

impl StartRequestBuilder {
    /// The prompt as blocks (replaces the text prompt).
    pub fn prompt_blocks(mut self, blocks: Vec<ContentBlock>) -> Self {
        self.request.prompt = blocks;
        self
    }

    /// A short label.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.request.description = Some(description.into());
        self
    }

    /// The parent context (replaces cwd and depth set before).
    pub fn parent(mut self, parent: ParentContext) -> Self {
        self.request.parent = parent;
        self
    }

    /// The parent's working directory.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.request.parent.cwd = cwd.into();
        self
    }

    /// The parent's depth.
    pub fn depth(mut self, depth: u32) -> Self {
        self.request.parent.depth = depth;
        self
    }

    /// The cancellation token.
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.request.cancel = cancel;
        self
    }

    /// An output schema.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.request.output_schema = Some(schema);
        self
    }

    /// A depth cap.
    pub fn max_depth(mut self, max_depth: u32) -> Self {
        self.request.max_depth = Some(max_depth);
        self
    }

    /// A tool filter.
    pub fn tool_filter(mut self, filter: ToolFilter) -> Self {
        self.request.tool_filter = Some(filter);
        self
    }

    /// A persona.
    pub fn persona(mut self, persona: impl Into<String>) -> Self {
        self.request.persona = Some(persona.into());
        self
    }

    /// A model.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.request.model = Some(model.into());
        self
    }

    /// A turn limit.
    pub fn max_turns(mut self, max_turns: u32) -> Self {
        self.request.max_turns = Some(max_turns);
        self
    }

    /// A run to resume.
    pub fn resume(mut self, session: SessionRef) -> Self {
        self.request.resume = Some(session);
        self
    }

    /// Lets the child start only these agent types (intersected with a list set before).
    pub fn restrict_agent_types(mut self, types: &[String]) -> Self {
        let types = match self.request.agent_types.take() {
            Some(before) => before.into_iter().filter(|t| types.contains(t)).collect(),
            None => types.to_vec(),
        };
        self.request.agent_types = Some(types);
        self
    }

    /// How hard the child's model reasons (see [`StartRequest::effort`]).
    pub fn effort(mut self, effort: crate::Effort) -> Self {
        self.request.effort = Some(effort);
        self
    }

    /// The parent's permission rules the child must hold to (see
    /// [`StartRequest::permission_rules`]); empty rules are left out.
    pub fn permission_rules(mut self, rules: crate::PermissionRules) -> Self {
        self.request.permission_rules = (!rules.is_empty()).then_some(rules);
        self
    }

    /// MCP servers the child gets besides the host's (see [`StartRequest::mcp_servers`]).
    pub fn mcp_servers(mut self, servers: Vec<crate::mcp::McpServerSpec>) -> Self {
        self.request.mcp_servers = servers;
        self
    }

    /// Keep the child apart from the parent's files (see [`StartRequest::isolation`]).
    pub fn isolation(mut self, isolation: Isolation) -> Self {
        self.request.isolation = Some(isolation);
        self
    }

    /// Run in the background.
    pub fn background(mut self, background: bool) -> Self {
        self.request.background = background;
        self
    }

    /// The loosest permission mode the child may run in.
    pub fn permission_ceiling(mut self, mode: PermissionMode) -> Self {
        self.request.permission_ceiling = Some(mode);
        self
    }

    /// Tightens the permission ceiling to `mode`: the stricter of it and the ceiling set before
    /// (if any). Never loosens.
    pub fn restrict_permissions(mut self, mode: PermissionMode) -> Self {
        let ceiling = match self.request.permission_ceiling {
            Some(before) => before.intersect(mode),
            None => mode,
        };
        self.request.permission_ceiling = Some(ceiling);
        self
    }

    /// Narrows the tool filter to what `filter` allows as well (intersected with the filter set
    /// before, if any).
    pub fn restrict_tools(mut self, filter: &ToolFilter) -> Self {
        let filter = match &self.request.tool_filter {
            Some(before) => before.intersect(filter),
            None => filter.clone(),
        };
        self.request.tool_filter = Some(filter);
        self
    }

    /// Appends instructions to the persona set before, a blank line between; blank text adds
    /// nothing.
    pub fn add_persona(mut self, text: &str) -> Self {
        if text.trim().is_empty() {
            return self;
        }
        self.request.persona = Some(match self.request.persona.take() {
            Some(before) => format!("{before}\n\n{text}"),
            None => text.to_owned(),
        });
        self
    }

    /// What is set so far as one layer of settings: model, effort, tool filter, permission
    /// ceiling (as the mode) and turn limit.
    fn settings(&self) -> Settings {
        let request = &self.request;
        Settings {
            model: request.model.clone(),
            effort: request.effort,
            tool_filter: request.tool_filter.clone(),
            permission_mode: request.permission_ceiling,
            max_turns: request.max_turns,
            ..Settings::default()
        }
    }

    /// Takes an effective configuration ([`resolve`]'s result): its model, effort and turn limit
    /// replace what was set (where it has one); its tool filter and permission mode only narrow
    /// what was set, the mode as [`StartRequest::permission_ceiling`], so a `plan` agent is
    /// read-only on every provider. Isolation and background stay the caller's: isolation can be
    /// refused ([`Isolation::resolve`] checks it) and background depends on the caller's policy.
    pub fn effective(mut self, effective: &Effective) -> Self {
        if let Some(model) = &effective.model {
            self = self.model(model.clone());
        }
        if let Some(effort) = effective.effort {
            self = self.effort(effort);
        }
        if let Some(filter) = &effective.tool_filter {
            self = self.restrict_tools(filter);
        }
        if let Some(mode) = effective.permission_mode {
            self = self.restrict_permissions(mode);
        }
        if let Some(turns) = effective.max_turns {
            self = self.max_turns(turns);
        }
        self
    }

    /// Runs the child as the agent type `profile` (if any) says, with the other `layers`: the
    /// profile is the definition layer (whatever `layers.definition` said), its instructions are
    /// appended to the persona, the agent types it may start narrow the request's, and the
    /// request's settings are [`resolve`]d from the four layers (explicit request > definition >
    /// persona > parent, see [`crate::agents::resolve`]) and taken with
    /// [`StartRequestBuilder::effective`]. The one mapping from an agent type and a call to a
    /// request: the delegation tool (its call's arguments, the row, the parent run) and
    /// `subagent delegate` both use it. Description, provider, background and isolation stay
    /// the caller's ([`Isolation::resolve`] combines the call's and the agent type's).
    pub fn agent_with(mut self, profile: Option<&AgentProfile>, mut layers: Layers) -> Self {
        if let Some(profile) = profile {
            if let Some(instructions) = &profile.instructions {
                self = self.add_persona(instructions);
            }
            if let Some(types) = &profile.agent_types {
                self = self.restrict_agent_types(types);
            }
            layers.definition = Settings::from_profile(profile);
        }
        self.effective(&resolve(&layers))
    }

    /// Runs the child as the agent type `profile` says, on top of what is set so far (which
    /// counts as the persona layer: the agent type's model, effort and turn limit win over it,
    /// its tool filter and permission mode narrow it): [`StartRequestBuilder::agent_with`]. The
    /// caller's own choices (a model named in a call, say) are set after it.
    pub fn agent(self, profile: &AgentProfile) -> Self {
        let persona = self.settings();
        self.agent_with(
            Some(profile),
            Layers {
                persona,
                ..Layers::default()
            },
        )
    }

    /// The request.
    pub fn build(self) -> StartRequest {
        self.request
    }
}

// The methods of lower types that take a request are here, so that capabilities and runs
// need not know requests.

impl Capabilities {
    /// Every capability the request needs that this table lacks, in table order.
    pub fn missing_for(&self, request: &StartRequest) -> Vec<Capability> {
        request
            .required_capabilities()
            .into_iter()
            .filter(|capability| !self.supports(*capability))
            .collect()
    }
}

impl Run {
    /// A ready run for a provider: the [`RunSender`] the provider keeps (emit events, then
    /// `finish`) and the [`Run`] it returns from `start`. Emits
    /// [`RunEvent::Started`](crate::RunEvent::Started).
    ///
    /// The run's cancellation token is a child of the request's: cancelling the request cancels
    /// the run, and [`Run::cancel`] cancels the run only. Providers watch
    /// [`RunSender::cancel_token`].
    ///
    /// `outcome()` always resolves: if the sender is dropped without `finish` (the provider's task
    /// returned early or panicked), the outcome is `failed` with a diagnostic saying so, or
    /// `cancelled` when the run had been cancelled.
    pub fn channel(provider: &str, request: &StartRequest) -> (RunSender, Run) {
        Run::open(
            provider,
            request.description_or_default(),
            request.cancel.child_token(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Effort;
    use crate::agents::INHERIT_MODEL;

    fn profile() -> AgentProfile {
        let mut profile = AgentProfile::new("planner", "plans");
        profile.instructions = Some("Look, do not touch.".into());
        profile.tool_filter = Some(ToolFilter::allow(["read_*", "grep"]));
        profile.permission_mode = Some(PermissionMode::Plan);
        profile.model = Some("small".into());
        profile.max_turns = Some(3);
        profile
    }

    type Mapped = (
        Option<String>,
        Option<ToolFilter>,
        Option<PermissionMode>,
        Option<String>,
        Option<u32>,
    );

    fn mapped(request: &StartRequest) -> Mapped {
        (
            request.persona.clone(),
            request.tool_filter.clone(),
            request.permission_ceiling,
            request.model.clone(),
            request.max_turns,
        )
    }

    #[test]
    fn an_agent_type_maps_onto_the_request() {
        let request = StartRequest::builder("task").agent(&profile()).build();
        assert_eq!(
            mapped(&request),
            (
                Some("Look, do not touch.".into()),
                Some(ToolFilter::allow(["read_*", "grep"])),
                Some(PermissionMode::Plan),
                Some("small".into()),
                Some(3),
            )
        );
    }

    #[test]
    fn an_agent_type_only_narrows_what_the_caller_set() {
        let request = StartRequest::builder("task")
            .add_persona("Row persona.")
            .restrict_tools(&ToolFilter::allow(["grep", "bash"]))
            .permission_ceiling(PermissionMode::Bypass)
            .agent(&profile())
            .build();
        assert_eq!(
            mapped(&request),
            (
                Some("Row persona.\n\nLook, do not touch.".into()),
                Some(ToolFilter::allow(["grep"])),
                Some(PermissionMode::Plan),
                Some("small".into()),
                Some(3),
            )
        );
        // A looser agent mode never loosens the ceiling.
        let mut loose = AgentProfile::new("loose", "anything goes");
        loose.permission_mode = Some(PermissionMode::Bypass);
        let request = StartRequest::builder("task")
            .permission_ceiling(PermissionMode::Plan)
            .agent(&loose)
            .build();
        assert_eq!(request.permission_ceiling, Some(PermissionMode::Plan));
    }

    #[test]
    fn an_agent_types_effort_is_asked_for_and_the_callers_beats_it() {
        let mut profile = AgentProfile::new("thinker", "thinks");
        profile.effort = Some(Effort::High);
        let request = StartRequest::builder("task").agent(&profile).build();
        assert_eq!(request.effort, Some(Effort::High));
        assert_eq!(request.required_capabilities(), vec![Capability::Effort]);
        let request = StartRequest::builder("task")
            .agent(&profile)
            .effort(Effort::Low)
            .build();
        assert_eq!(request.effort, Some(Effort::Low));
    }

    #[test]
    fn the_agent_types_a_child_may_start_only_narrow() {
        let mut profile = AgentProfile::new("lead", "leads");
        profile.agent_types = Some(vec!["explore".into(), "plan".into()]);
        let request = StartRequest::builder("task").agent(&profile).build();
        assert_eq!(
            request.agent_types,
            Some(vec!["explore".to_owned(), "plan".to_owned()])
        );
        let request = StartRequest::builder("task")
            .restrict_agent_types(&["plan".to_owned(), "general-purpose".to_owned()])
            .agent(&profile)
            .build();
        assert_eq!(request.agent_types, Some(vec!["plan".to_owned()]));
        assert!(request.required_capabilities().is_empty());
    }

    #[test]
    fn agent_with_resolves_call_over_definition_over_persona_over_parent() {
        let mut profile = AgentProfile::new("worker", "works");
        profile.model = Some("def-m".into());
        profile.max_turns = Some(4);
        profile.permission_mode = Some(PermissionMode::AcceptEdits);
        profile.tool_filter = Some(ToolFilter::allow(["read_file", "grep", "bash"]));
        let layers = |request: Settings| Layers {
            request,
            persona: Settings::default()
                .model("persona-m")
                .effort(Effort::Medium)
                .tool_filter(ToolFilter::deny(["bash"])),
            parent: Settings::default()
                .model("parent-m")
                .effort(Effort::Low)
                .permission_mode(PermissionMode::Default)
                .max_turns(99),
            ..Layers::default()
        };
        let request = StartRequest::builder("task")
            .agent_with(Some(&profile), layers(Settings::default().model("call-m")))
            .build();
        assert_eq!(
            (
                mapped(&request),
                request.effort,
                request.required_capabilities()
            ),
            (
                (
                    None,
                    Some(ToolFilter {
                        allow: Some(vec!["read_file".into(), "grep".into(), "bash".into()]),
                        deny: vec!["bash".into()],
                    }),
                    Some(PermissionMode::Default),
                    Some("call-m".into()),
                    Some(4),
                ),
                Some(Effort::Medium),
                vec![
                    Capability::ToolFilter,
                    Capability::ModelOverride,
                    Capability::MaxTurns,
                    Capability::Effort
                ],
            )
        );
        // Without a call's model or a definition, the persona's; the parent's turn limit is its
        // own.
        let request = StartRequest::builder("task")
            .agent_with(None, layers(Settings::default().model("inherit")))
            .build();
        assert_eq!(
            (request.model, request.max_turns, request.effort),
            (Some("persona-m".into()), None, Some(Effort::Medium))
        );
        let request = StartRequest::builder("task")
            .agent_with(
                None,
                Layers {
                    parent: Settings::default().model("parent-m").effort(Effort::Low),
                    ..Layers::default()
                },
            )
            .build();
        assert_eq!(
            (request.model, request.effort),
            (Some("parent-m".into()), Some(Effort::Low))
        );
    }

    #[test]
    fn inherit_and_blank_instructions_set_nothing() {
        let mut profile = AgentProfile::new("plain", "plain");
        profile.model = Some(INHERIT_MODEL.into());
        profile.instructions = Some("  \n".into());
        let request = StartRequest::builder("task").agent(&profile).build();
        assert_eq!(mapped(&request), (None, None, None, None, None));
    }
}
