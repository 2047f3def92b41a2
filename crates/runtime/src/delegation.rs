//! The delegation tool: what the model calls to hand a task to a subagent.
//!
//! Routing, in order: the caller at its depth cap → the refusal text [`NESTED_REFUSAL`] (a
//! plain result, decided before the arguments are even read) → no `subagent_type` and fork
//! enabled → the fork provider (always in the background) → a `subagent_type` → its
//! [`AgentProfile`] (`UNKNOWN_AGENT_TYPE` listing the available ones) and its provider (or the
//! row's) → no type and no fork → the row's provider as is. Every start goes through the
//! [`Registry`], so capability and depth gating apply; a refused start becomes an error result
//! carrying the stable code.
//!
//! Nesting is opt-in, as in Claude Code and deepagents: a child may delegate in turn only when
//! the row sets `max_depth` (above 1: the depth its descendants may reach) or its agent type
//! lists this tool by name among its tools. Otherwise the child's cap is its own depth: a
//! provider that enforces depth gives it no delegation tool (spawn answers a call to one with
//! [`nesting_refusal`]; claude-code and codex drop their own sub-agent tools).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use subagent_core::agents::{AgentDirectory, AgentProfile, Layers, Settings};
use subagent_core::registry::Registry;
use subagent_core::{
    Error as CoreError, Isolation, ParentContext, Run, SessionRef, StartRequest, ToolFilter,
    default_description,
};
use subagent_model::ToolSpec;

use crate::ChildRecord;
use crate::env::RunEnv;
use crate::input::ChildExtras;
use crate::tools::{Tool, ToolContext, ToolKind, ToolOutput};
use crate::{Error, Result};

mod forward;
mod result;
pub use crate::report::{forwarded_clean, worktree_lines};
pub use crate::tools::snapshot::ParentSnapshot;
use forward::{forward_until, forward_until_outcome};
pub use result::{ResultTrailer, outcome_result, result_trailer};

/// What the delegation tool answers a caller that may not delegate (inside a fork, or at its
/// depth cap).
pub const NESTED_REFUSAL: &str = "You are a subagent and cannot delegate to another subagent. Complete this task yourself instead of calling this tool again.";

/// The answer to a call of a delegation tool the run was not given because it may not delegate
/// (see [`crate::AgentConfig::nesting_refused`]): an error result carrying the stable code
/// `NESTED_DELEGATION_FORBIDDEN` and [`NESTED_REFUSAL`].
pub fn nesting_refusal() -> ToolOutput {
    error_result(&CoreError::NestedDelegationForbidden {
        reason: NESTED_REFUSAL.to_owned(),
    })
}

/// The text that opens a fork's task, in the same user message as the placeholder results.
pub const FORK_PREAMBLE: &str = "You are now a forked copy of the agent above. You share its conversation up to this point, but from here on you work alone, in the background, on the task below; the tool calls in the previous message were not run for you. Do the task yourself with your tools (you cannot delegate it further), then reply with a concise report of what you did and found: that report is the only thing the agent that forked you will see.";

pub use subagent_core::agents::BackgroundMode;

/// One delegation tool, as a preset row configures it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DelegationToolConfig {
    /// The tool's name (default `subagent`).
    #[serde(default = "default_name")]
    pub name: String,
    /// The provider that runs agent types without a `provider` of their own, and calls without
    /// a type when forking is not enabled.
    pub provider: String,
    /// The fork provider for calls without a `subagent_type`; when absent, forking is enabled
    /// only if `provider` itself inherits the parent's context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<String>,
    /// Absolute depth cap for children started by this tool and their descendants. Set above
    /// 1, it lets children delegate in turn (down to that depth); absent, a child delegates only
    /// when its agent type lists this tool among its tools (nesting is opt-in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<u32>,
    /// Background policy.
    #[serde(default)]
    pub background: BackgroundMode,
    /// A foreground child still running after this many milliseconds moves to the background:
    /// the call returns its task id and the result arrives later as a `<task-notification>`
    /// (Claude Code's foreground timeout). Absent: the parent waits for the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreground_timeout_ms: Option<u64>,
    /// Tools every child of this row may use (intersected with the agent type's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_filter: Option<ToolFilter>,
    /// Instructions added to every child of this row (before the agent type's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persona: Option<String>,
    /// The opening of the tool's description (a default is used when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The most tokens each child may use; past it the child is stopped `budget_exceeded`
    /// ([`crate::budget`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens_budget: Option<u64>,
}

fn default_name() -> String {
    "subagent".to_owned()
}

impl DelegationToolConfig {
    /// A row named `subagent` routing to `provider`, nothing else set.
    pub fn new(provider: impl Into<String>) -> Self {
        Self {
            name: default_name(),
            provider: provider.into(),
            fork: None,
            max_depth: None,
            background: BackgroundMode::Allowed,
            foreground_timeout_ms: None,
            tool_filter: None,
            persona: None,
            description: None,
            max_tokens_budget: None,
        }
    }
}

/// The arguments the model sends.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Arguments {
    prompt: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    subagent_type: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    run_in_background: Option<bool>,
    #[serde(default)]
    isolation: Option<String>,
    #[serde(default)]
    output_schema: Option<Value>,
    #[serde(default)]
    resume: Option<String>,
}

/// The delegation tool of one row.
pub struct DelegationTool {
    config: DelegationToolConfig,
    registry: Arc<Registry>,
    agents: Arc<dyn AgentDirectory>,
}

impl std::fmt::Debug for DelegationTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelegationTool")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Where a delegation call goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    /// To a fork: a copy of the calling run that inherits its conversation (the row's tools and
    /// persona, and an agent type's settings, do not apply).
    Fork,
    /// To a child with a fresh context: of the call's agent type, else the row's own.
    Fresh,
}

/// A child a delegation call started.
struct Started {
    run: Run,
    /// Whether the call returns at once (the child goes into the task table) instead of
    /// waiting for the child's outcome.
    background: bool,
    /// The provider that runs it.
    provider: String,
    /// Set when a foreground child moves to the background: its questions then reach no user.
    backgrounded: Arc<AtomicBool>,
}

/// Applies what whoever starts a child holds it to ([`ChildExtras::permission_ceiling`] and
/// [`ChildExtras::plan_reason`]): the request's ceiling tightened, and the reason put in the
/// policy an in-process child inherits from the parent's snapshot.
fn hold(request: &mut StartRequest, extras: &ChildExtras) {
    if let Some(name) = &extras.teammate {
        request
            .parent
            .extensions
            .insert(subagent_core::agents::Teammate(name.clone()));
    }
    if let Some(mode) = extras.permission_ceiling {
        request.permission_ceiling = Some(
            request
                .permission_ceiling
                .map_or(mode, |ceiling| ceiling.intersect(mode)),
        );
    }
    if let Some(reason) = &extras.plan_reason
        && let Some(snapshot) = request.parent.extensions.get::<ParentSnapshot>()
    {
        let mut snapshot = ParentSnapshot::clone(&snapshot);
        let mut env = RunEnv::clone(&snapshot.env);
        env.permissions.plan_reason = Some(Arc::clone(reason));
        snapshot.env = Arc::new(env);
        request.parent.extensions.insert(snapshot);
    }
}

/// A product child that can ask (claude, an ACP agent) asks this run: its rules, its hooks,
/// then its user while the child runs in the foreground; never looser than the request's
/// ceiling (a teammate held in plan mode is refused every write, whatever the parent allows).
fn ask_parent(request: &mut StartRequest, env: &RunEnv, backgrounded: Arc<AtomicBool>) {
    let background = backgrounded.load(Ordering::Relaxed);
    let mut asker = crate::PolicyAsker::for_child(env, background, request.cancel.clone())
        .with_background_flag(backgrounded);
    if let Some(ceiling) = request.permission_ceiling {
        asker = asker.under(ceiling);
    }
    request.parent.asker = Some(subagent_core::Asker(Arc::new(asker)));
}

fn error_result(error: &CoreError) -> ToolOutput {
    ToolOutput::error(Error::Core(error.clone()).to_string())
}

impl DelegationTool {
    /// Everything a delegation call does before its child runs: the depth cap, the arguments,
    /// the agent type, then the registry's start. `Err` is the call's answer when it refuses.
    async fn start_child(
        &self,
        input: Value,
        context: &ToolContext,
        extras: Option<ChildExtras>,
    ) -> std::result::Result<Started, ToolOutput> {
        // Depth first: a subagent at its cap is refused before its arguments are looked at.
        if context.env.depth >= self.cap(&context.env) {
            return Err(ToolOutput::ok(NESTED_REFUSAL));
        }
        let mut args: Arguments = match serde_json::from_value(input) {
            Ok(args) => args,
            Err(e) => return Err(error_result(&CoreError::invalid(e.to_string()))),
        };
        if args.prompt.trim().is_empty() {
            return Err(error_result(&CoreError::invalid(
                "\"prompt\" must not be empty",
            )));
        }
        // A resumed child keeps what it ran with: its provider, agent type and worktree.
        let resumed = args
            .resume
            .as_deref()
            .and_then(|id| context.env.sessions.as_ref()?.recall(id));
        if let Some(record) = resumed.as_ref().filter(|_| args.subagent_type.is_none()) {
            args.subagent_type.clone_from(&record.agent_type);
        }
        // A run limited to some agent types (`Agent(explore, plan)` in its definition's tools)
        // starts only those; a fork is the run itself, and a call without a type that does not
        // fork starts a general-purpose child.
        if let Some(allowed) = &context.env.permissions.agent_types {
            let asked = match (&args.subagent_type, self.fork_provider()) {
                (Some(name), _) => Some(name.as_str()),
                (None, Some(_)) => None,
                (None, None) => Some("general-purpose"),
            };
            if let Some(name) = asked.filter(|name| !allowed.iter().any(|a| a == name)) {
                return Err(error_result(&CoreError::AgentTypeNotAllowed {
                    name: name.to_owned(),
                    allowed: allowed.clone(),
                }));
            }
        }
        let (provider, profile, route) = match (&args.subagent_type, self.fork_provider()) {
            (None, Some(fork)) => (fork, None, Route::Fork),
            (None, None) => (self.config.provider.clone(), None, Route::Fresh),
            (Some(name), _) => match self.agents.get(name) {
                Some(profile) => {
                    let provider = profile
                        .provider
                        .clone()
                        .unwrap_or_else(|| self.config.provider.clone());
                    (provider, Some(profile), Route::Fresh)
                }
                None => {
                    let available = self.agents.agents().into_iter().map(|a| a.name).collect();
                    return Err(error_result(&CoreError::UnknownAgentType {
                        name: name.clone(),
                        available,
                    }));
                }
            },
        };
        let (provider, route) = match &resumed {
            Some(record) if self.fork_provider().as_ref() == Some(&record.provider) => {
                (record.provider.clone(), Route::Fork)
            }
            Some(record) => (record.provider.clone(), Route::Fresh),
            None => (provider, route),
        };
        let kept = resumed.as_ref().and_then(ChildRecord::kept_cwd);
        let background = extras.is_some()
            || route == Route::Fork
            || profile.as_ref().is_some_and(|p| p.background)
            || match self.config.background {
                BackgroundMode::Always => true,
                BackgroundMode::Never => false,
                BackgroundMode::Allowed => args.run_in_background.unwrap_or(false),
            };
        let isolation = match Isolation::resolve(args.isolation.as_deref(), profile.as_ref()) {
            Ok(_) if kept.is_some() => None,
            Ok(isolation) => isolation,
            Err(error) => return Err(error_result(&error)),
        };
        let capabilities = self
            .registry
            .get(&provider)
            .map(|p| p.capabilities())
            .unwrap_or(subagent_core::Capabilities::NONE);
        let backgrounded = Arc::new(AtomicBool::new(background));
        let mut request = self.start_request(
            &args,
            route,
            profile.as_ref(),
            context,
            Arc::clone(&backgrounded),
            &capabilities,
        );
        if let Some(extras) = extras {
            hold(&mut request, &extras);
            request.parent.extensions.insert(extras);
        }
        ask_parent(&mut request, &context.env, Arc::clone(&backgrounded));
        // The call's isolation, else the agent type's (refused above when not valid); a
        // resumed child continues in the worktree it kept.
        request.isolation = isolation;
        if let Some(cwd) = &kept {
            request.parent.cwd.clone_from(cwd);
        }
        // Gated like every field: a provider that cannot resume refuses before it starts.
        request.resume = args.resume.as_ref().map(|id| SessionRef {
            provider: provider.clone(),
            id: id.clone(),
            cwd: Some(request.parent.cwd.clone()),
            transcript: None,
        });
        let run = match self.registry.start(&provider, request).await {
            Ok(run) => run,
            Err(error) => return Err(error_result(&error)),
        };
        let budget = crate::budget::tighter(
            self.config.max_tokens_budget,
            format!("the budget of the {} tool's children", self.config.name),
            profile.as_ref(),
        );
        let run = crate::budget::enforce(run, budget);
        let run = match &context.env.sessions {
            Some(store) => store.recording(
                run,
                ChildRecord {
                    provider: provider.clone(),
                    agent_type: profile.map(|profile| profile.name),
                    cwd: None,
                    worktree: resumed.and_then(|r| r.worktree).filter(|_| kept.is_some()),
                },
            ),
            None => run,
        };
        Ok(Started {
            run,
            background,
            provider,
            backgrounded,
        })
    }

    /// Starts a child as a call of this tool would (same arguments, routing, gates and
    /// settings), always in the background, and hands back its run and provider instead of
    /// waiting: a team starts its teammates this way. `extras` reach the provider in the
    /// request's extensions (spawn gives the child its tools and input). `Err` is the refusal a
    /// call would have answered.
    pub async fn start_detached(
        &self,
        input: Value,
        context: &ToolContext,
        extras: ChildExtras,
    ) -> std::result::Result<(Run, String), ToolOutput> {
        let started = Box::pin(self.start_child(input, context, Some(extras))).await?;
        Ok((started.run, started.provider))
    }

    /// A delegation tool starting children through `registry`, offering the agent types of
    /// `agents`.
    pub fn new(
        config: DelegationToolConfig,
        registry: Arc<Registry>,
        agents: Arc<dyn AgentDirectory>,
    ) -> Self {
        Self {
            config,
            registry,
            agents,
        }
    }

    /// The row's configuration.
    pub fn config(&self) -> &DelegationToolConfig {
        &self.config
    }

    /// The fork provider untyped calls go to, if forking is enabled.
    fn fork_provider(&self) -> Option<String> {
        if let Some(fork) = &self.config.fork {
            return Some(fork.clone());
        }
        self.registry
            .get(&self.config.provider)
            .filter(|p| p.capabilities().inherits_parent_context)
            .map(|_| self.config.provider.clone())
    }

    /// The depth cap the calling run is under.
    fn cap(&self, env: &RunEnv) -> u32 {
        env.max_depth
            .min(self.registry.max_depth())
            .min(self.config.max_depth.unwrap_or(u32::MAX))
    }

    /// Whether a child of this row, of agent type `profile`, may delegate in turn: the row sets
    /// `max_depth`, or the agent type lists this tool by name in its tools.
    fn nests(&self, profile: Option<&AgentProfile>) -> bool {
        let listed = profile
            .and_then(|profile| profile.tool_filter.as_ref())
            .and_then(|filter| filter.allow.as_ref())
            .is_some_and(|allow| allow.contains(&self.config.name));
        // `Agent(explore, plan)` in its tools lists the delegation tool too.
        let restricted = profile.is_some_and(|profile| profile.agent_types.is_some());
        self.config.max_depth.is_some() || listed || restricted
    }

    /// The parent layer of a child's effective configuration: the calling run's permission mode
    /// (the child never runs looser than its parent, whatever runs it: a plan-mode parent cannot
    /// write through a Claude Code or Codex child), and its reasoning effort when the child's
    /// provider takes one (inheriting is not a demand: a provider without `effort` runs at its
    /// model's default instead of refusing the call). The parent's model is inherited as the
    /// provider's own default model, not by id (a product CLI names models its own way).
    fn parent_settings(
        &self,
        context: &ToolContext,
        capabilities: &subagent_core::Capabilities,
    ) -> Settings {
        let parent = Settings::default().permission_mode(context.env.permissions.mode);
        match context.snapshot.effort {
            Some(effort) if capabilities.effort => parent.effort(effort),
            _ => parent,
        }
    }

    fn description_text(&self) -> String {
        let mut text = self.config.description.clone().unwrap_or_else(|| {
            "Delegate a self-contained task to a subagent. The subagent works on its own and its final report comes back as this tool's result. Give it a complete prompt: it does not see this conversation unless it is a fork.".to_owned()
        });
        let forks = self.fork_provider().is_some();
        if forks {
            text.push_str("\n\nWithout subagent_type, the task goes to a fork: a copy of you that inherits this conversation and runs in the background; its report arrives later as a <task-notification>.");
        } else {
            text.push_str("\n\nThe subagent starts with a fresh context: it does not inherit this conversation, so put everything it needs in the prompt.");
        }
        let agents = self.agents.agents();
        if !agents.is_empty() {
            text.push_str("\n\nAvailable agent types (subagent_type):");
            for agent in &agents {
                text.push_str(&format!("\n- {}: {}", agent.name, agent.description));
            }
        }
        text.push_str("\n\nSet run_in_background to true to get the result later as a <task-notification> instead of waiting.");
        text
    }

    /// The request a call starts its child with, routed by `route`, of the agent type
    /// `profile` if any, in the background or not.
    fn start_request(
        &self,
        args: &Arguments,
        route: Route,
        profile: Option<&AgentProfile>,
        context: &ToolContext,
        backgrounded: Arc<AtomicBool>,
        capabilities: &subagent_core::Capabilities,
    ) -> StartRequest {
        let background = backgrounded.load(Ordering::Relaxed);
        let env = &context.env;
        let mut snapshot = ParentSnapshot::clone(&context.snapshot);
        snapshot.call_id.clone_from(&context.call_id);
        let mut lineage = env.lineage.clone();
        lineage.push(env.run_id);
        let mut extensions = subagent_core::Extensions::new();
        let log = snapshot.log.clone();
        extensions.insert(snapshot);
        extensions.insert(crate::ToolResultCap(context.max_result_bytes));
        let cancel = context.cancel.child_token();
        let parent = ParentContext {
            cwd: env.roots.cwd().to_path_buf(),
            depth: env.depth,
            lineage,
            log: Some(log),
            extensions,
            // Set once the request's ceiling is final ([`ask_parent`]).
            asker: None,
        };
        let description = args
            .description
            .clone()
            .filter(|d| !d.trim().is_empty())
            .unwrap_or_else(|| default_description(&args.prompt));
        let mut builder = StartRequest::builder(args.prompt.clone())
            .description(description)
            .parent(parent)
            .cancel(cancel)
            .background(background)
            // The parent's settings rules hold in every child: a provider that cannot keep them
            // refuses (`permission_rules`), never drops them.
            .permission_rules(env.permissions.child_rules());
        if let Some(schema) = &args.output_schema {
            builder = builder.output_schema(schema.clone());
        }
        // Forward the depth cap to every provider that enforces one on its own nested
        // delegation (without it, a provider like Claude Code keeps its own sub-agents and nests
        // past the cap), and to any provider when this row, or the caller's own cap, is tighter
        // than the registry's. Providers without depth_limit stay usable otherwise. Nesting is
        // opt-in: unless the row or the agent type asks for it, the cap a provider that enforces
        // depth is told is the child's own depth, so the child cannot delegate.
        let cap = self.cap(env);
        if capabilities.depth_limit {
            let child_cap = if self.nests(profile) {
                cap
            } else {
                cap.min(env.depth.saturating_add(1))
            };
            builder = builder.max_depth(child_cap);
        } else if self.config.max_depth.is_some() || cap < self.registry.max_depth() {
            builder = builder.max_depth(cap);
        }
        // The effective configuration, through the one resolver: the call's model > the agent
        // type's settings > the row's > the parent's. A fork keeps the parent's tools and
        // instructions: the row's and an agent type's do not apply (and a fork has no agent
        // type), and a fork cannot change model (the gate says so when the call names one).
        let mut layers = Layers {
            request: Settings::default(),
            parent: self.parent_settings(context, capabilities),
            ..Layers::default()
        };
        if let Some(model) = &args.model {
            layers.request = layers.request.model(model.clone());
        }
        if route == Route::Fresh {
            if let Some(filter) = &self.config.tool_filter {
                layers.persona = layers.persona.tool_filter(filter.clone());
            }
            if let Some(persona) = &self.config.persona {
                builder = builder.add_persona(persona);
            }
        }
        let profile_fresh = profile.filter(|_| route == Route::Fresh);
        builder = builder.agent_with(profile_fresh, layers);
        let mut request = builder.build();
        // What the agent type gives its child beyond its settings.
        if let Some(profile) = profile_fresh
            && let Err(error) = crate::agent_parts::give(profile, &mut request)
        {
            tracing::warn!("{error}: they do not run");
        }
        // An agent type limited to some agent types (`Agent(…)` in its tools) keeps this tool,
        // unless the row's filter denies it.
        let restricted = profile.is_some_and(|profile| profile.agent_types.is_some());
        let row_allows = self
            .config
            .tool_filter
            .as_ref()
            .is_none_or(|filter| filter.permits(&self.config.name));
        if restricted
            && row_allows
            && let Some(filter) = request.tool_filter.as_mut()
            && !filter.permits(&self.config.name)
            && let Some(allow) = filter.allow.as_mut()
        {
            allow.push(self.config.name.clone());
        }
        request
    }
}

#[async_trait]
impl Tool for DelegationTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.config.name.clone(),
            description: self.description_text(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "prompt": {"type": "string", "description": "The complete task for the subagent."},
                    "description": {"type": "string", "description": "A short (3-5 word) label for the task."},
                    "subagent_type": {"type": "string", "description": "The agent type to use (see the list in the tool description)."},
                    "model": {"type": "string", "description": "A model for the subagent (default: the agent type's, else yours)."},
                    "run_in_background": {"type": "boolean", "description": "Return at once; the result arrives later as a <task-notification>."},
                    "isolation": {"type": "string", "description": "\"worktree\": the subagent works in a new git worktree of your repository, on a branch of its own, so its edits do not touch your files; a worktree it changed is kept and its path, branch and diffstat come back with the result."},
                    "output_schema": {"type": "object", "description": "A JSON Schema (type object) the subagent's result must follow."},
                    "resume": {"type": "string", "description": "The <session_id> of an earlier subagent's result: that subagent continues its conversation, with prompt as its next message."}
                },
                "required": ["prompt"]
            }),
        }
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Delegate
    }

    fn cut_hint(&self) -> &str {
        "resume the subagent's session (the resume argument, with the session id at the end of this result) and ask it for the part you need, or ask for a shorter answer, or for long results written to a file"
    }

    async fn call(&self, input: Value, context: &ToolContext) -> Result<ToolOutput> {
        // The start (arguments, gate, isolation, the provider's own start) runs boxed: it is
        // over once the child runs, and a foreground call then waits, for as long as the child
        // works, holding only what it still needs.
        let Started {
            run,
            background,
            provider,
            backgrounded,
        } = match Box::pin(self.start_child(input, context, None)).await {
            Ok(started) => started,
            Err(refused) => return Ok(refused),
        };
        if background {
            let description = run.description().to_owned();
            let id = context.env.tasks.adopt(run, context.call_id.clone());
            return Ok(ToolOutput::ok(format!(
                "Started background subagent {id} ({description}) with provider {provider}. Its result will arrive as a <task-notification>; do not wait for it by polling."
            )));
        }
        let run = match self.config.foreground_timeout_ms {
            Some(limit) => match forward_until(run, context, limit).await {
                Ok(outcome) => return Ok(outcome_result(&outcome)),
                Err((run, events)) => {
                    // From now on nobody waits on its questions: as a background child's.
                    backgrounded.store(true, Ordering::Relaxed);
                    let description = run.description().to_owned();
                    let tasks = &context.env.tasks;
                    let id = tasks.adopt_with_events(run, Some(events), context.call_id.clone());
                    return Ok(ToolOutput::ok(format!(
                        "The subagent was still running after {limit} ms, so it moved to the background as task {id} ({description}). Its result will arrive as a <task-notification>; read it with task_output or stop it with task_stop."
                    )));
                }
            },
            None => run,
        };
        let outcome = forward_until_outcome(run, context).await;
        Ok(outcome_result(&outcome))
    }
}
