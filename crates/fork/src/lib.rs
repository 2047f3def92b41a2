//! `subagent-fork`: the in-process provider whose child starts from the parent's conversation.
//!
//! Started from the runtime's delegation tool, the child reads the parent's
//! [`ParentSnapshot`] from the request's extensions and continues the parent's [`EventLog`]
//! (an `Arc`-shared prefix: no copy, so starting a fork costs the same for a 10-message and a
//! 10,000-message parent). Its first model request is the parent's exact prefix: the same system
//! prompt, the same tools in the same order with byte-identical descriptions (the very same
//! [`ToolSet`]), the same messages up to and including the assistant message that made the
//! delegation call, asked with the parent's model id and reasoning effort. Every tool call of that message is answered with the error result
//! [`FORKED_TOOL_RESULT`], followed in the same user message by [`FORK_PREAMBLE`] and the task
//! (and, with an output schema, the schema: the tool list never changes; the final answer is
//! validated as JSON with bounded retry turns). The delegation tool stays in the list and refuses
//! at call time: a fork runs at its depth cap.
//!
//! Outside a tool call (no snapshot, but a parent log: a CLI), the seed is the log's
//! completed-turn prefix with dangling calls repaired, run with the provider's own model and the
//! built-in tools.
//!
//! Given a session store ([`ForkProvider::with_sessions`], or a `SessionStore` in the build
//! context's extensions), a fork writes its transcript there (the inherited conversation
//! included) and its outcome names the session. A request resuming one continues that
//! transcript (same session id) with the prompt (and the schema section, with an output schema)
//! as its next message: inside a tool call with the calling parent's system prompt, tools and
//! model, outside one with the provider's own model and the built-in tools, as above. Without a
//! store a resume is `NOT_RESUMABLE`.
//!
//! Declares `output_schema`, `depth_limit`, `max_turns`, `resume` (above), `isolation` (the
//! fork's file tools have `parent.cwd` as their one root instead of the parent's roots, and its
//! bash commands start there; its tools and prompt are still the parent's) and
//! `inherits_parent_context`; not `tool_filter`, `persona` or `model_override` (each would
//! change the shared prefix). A fork keeps the configured secrets in (the build context's
//! [`Secrets`], and its parent run's), as its parent does.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use subagent_core::{
    BuildContext, Capabilities, Capability, ChildTools, Error, Placement, ProviderFactory, Run,
    StartRequest, SubagentProvider,
};
use subagent_model::{Messages, Model};
use subagent_runtime::structured::final_answer_instructions;
use subagent_runtime::tools::BashConfig;
use subagent_runtime::{
    Agent, AgentConfig, DefaultModel, FORK_PREAMBLE, OutputMode, ParentSnapshot, PermissionPolicy,
    Roots, Secrets, Seed, SessionStore, SummaryConfig, ToolSet,
};
use subagent_session::{
    ContentBlock, EventLog, FORKED_TOOL_RESULT, Message, Role, SessionEvent,
    repair_dangling_tool_calls,
};

/// The kind name in presets.
pub const KIND: &str = "fork";

/// What a fork provider is configured with.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ForkConfig {
    /// Turn limit when the request gives none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// Invalid structured answers tolerated before the run fails (default 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_retries: Option<u32>,
    /// The model for forks taken outside a tool call (no parent snapshot); default: the build
    /// context's `DefaultModel`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<subagent_model::ModelConfig>,
    /// Seconds between progress summaries of a child that is still running (a tool-less fork
    /// of its conversation sharing its cached prefix; see `subagent_runtime::summary`):
    /// default 30, 0 = none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_interval_secs: Option<u64>,
}

/// What every fork provider honours.
pub fn capabilities() -> Capabilities {
    Capabilities::NONE
        .with(Capability::OutputSchema, true)
        .with(Capability::DepthLimit, true)
        .with(Capability::MaxTurns, true)
        .with(Capability::Resume, true)
        .with(Capability::Isolation, true)
        .with(Capability::PermissionRules, true)
        .inheriting_parent_context(true)
}

/// The fork provider.
pub struct ForkProvider {
    name: String,
    config: ForkConfig,
    fallback_model: Option<Arc<dyn Model>>,
    secrets: Secrets,
    sessions: Option<SessionStore>,
    summaries: Option<SummaryConfig>,
}

impl std::fmt::Debug for ForkProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ForkProvider")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The text that follows the placeholder results: the preamble, the task, and the schema section
/// when one is requested.
pub fn fork_task_text(task: &str, schema: Option<&Value>) -> String {
    let mut text = format!("{FORK_PREAMBLE}\n\nTask:\n{task}");
    if let Some(schema) = schema {
        text.push_str("\n\n");
        text.push_str(&final_answer_instructions(schema));
    }
    text
}

/// The message that continues a resumed fork: the prompt, and the schema section when one is
/// requested (the preamble is in the fork's conversation already).
pub fn resume_text(prompt: &str, schema: Option<&Value>) -> String {
    match schema {
        Some(schema) => format!("{prompt}\n\n{}", final_answer_instructions(schema)),
        None => prompt.to_owned(),
    }
}

/// The seed of a fork taken inside a delegation call: the parent's log as is (shared), and a
/// user message answering every call of the log's last assistant message with
/// [`FORKED_TOOL_RESULT`], followed by `task_text`. O(1) in the length of the parent's history.
pub fn seed_from_snapshot(snapshot: &ParentSnapshot, task_text: String) -> Seed {
    let log = snapshot.log.clone();
    let mut calls = Vec::new();
    // The log ends with the calling assistant message and its turn_end: walk back to it.
    for seq in (0..log.len()).rev() {
        let Some(event) = log.get(seq) else { break };
        if let SessionEvent::Message { message } = &*event {
            if message.role == Role::Assistant {
                calls.extend(message.tool_uses().map(|(id, _, _)| id.to_owned()));
            }
            break;
        }
    }
    let mut content: Vec<ContentBlock> = calls
        .into_iter()
        .map(|id| ContentBlock::tool_result(id, FORKED_TOOL_RESULT, true))
        .collect();
    content.push(ContentBlock::text(task_text));
    Seed {
        log,
        // The parent's own list: shared, so the fork copies no message.
        messages: Some(snapshot.messages.clone()),
        prompt: Message::new(Role::User, content),
    }
}

/// The seed of a fork taken outside a tool call: the completed-turn prefix of `log`, dangling
/// calls repaired; when the prefix ends with an assistant message whose calls were just
/// answered, `task_text` joins that same user message.
pub fn seed_from_log(log: &EventLog, task_text: String) -> Seed {
    let prefix = log.completed_turn_prefix();
    let mut messages = repair_dangling_tool_calls(prefix.messages());
    let mut prompt = Message::new(Role::User, vec![ContentBlock::text(task_text.clone())]);
    if messages.last().is_some_and(|m| m.role == Role::User)
        && let Some(mut last) = messages.pop()
    {
        last.content.push(ContentBlock::text(task_text));
        prompt = last;
    }
    let mut seeded = EventLog::new();
    if !messages.is_empty() {
        seeded.append(SessionEvent::TurnStart { turn: 0 });
        seeded.extend(messages.iter().cloned().map(SessionEvent::message));
        seeded.append(SessionEvent::TurnEnd {
            stop_reason: subagent_core::StopReason::Completed,
        });
    }
    Seed {
        log: seeded,
        messages: Some(Messages::from(messages)),
        prompt,
    }
}

impl ForkProvider {
    /// A fork provider. `fallback_model` serves forks taken outside a tool call; without it
    /// such forks are refused (`INVALID_ARGUMENTS`).
    pub fn new(
        name: impl Into<String>,
        config: ForkConfig,
        fallback_model: Option<Arc<dyn Model>>,
    ) -> Self {
        let summaries = SummaryConfig::from_secs(config.summary_interval_secs);
        Self {
            name: name.into(),
            config,
            fallback_model,
            secrets: Secrets::new(),
            sessions: None,
            summaries,
        }
    }

    /// Where forks write their transcripts (`AgentConfig::sessions`) and sessions are resumed
    /// from.
    #[must_use]
    pub fn with_sessions(mut self, store: SessionStore) -> Self {
        self.sessions = Some(store);
        self
    }

    /// Progress summaries of forks (`AgentConfig::summaries`; `None`: none), instead of the
    /// config's `summary_interval_secs`.
    #[must_use]
    pub fn with_summaries(mut self, summaries: Option<SummaryConfig>) -> Self {
        self.summaries = summaries;
        self
    }

    /// The configured secrets forks keep in (`AgentConfig::secrets`), besides the parent's.
    #[must_use]
    pub fn with_secrets(mut self, secrets: Secrets) -> Self {
        self.secrets = secrets;
        self
    }

    /// The run's configuration and, unless it resumes a session (whose transcript is its
    /// seed), its seed.
    fn agent_and_seed(&self, request: &StartRequest) -> Result<(AgentConfig, Option<Seed>), Error> {
        let resumes = request.resume.is_some();
        let task = fork_task_text(&request.prompt_text(), request.output_schema.as_ref());
        let depth = request.child_depth();
        let (mut config, seed) = match request.parent.extensions.get::<ParentSnapshot>() {
            Some(snapshot) => {
                // An isolated fork works only in the cwd it is given (its worktree).
                let roots = match request.isolation {
                    None => snapshot.env.roots.clone(),
                    Some(_) => Roots::new(&request.parent.cwd)
                        .map_err(|e| Error::invalid(format!("working directory: {e}")))?,
                };
                let mut config = AgentConfig::new(Arc::clone(&snapshot.model), roots);
                config.model_id.clone_from(&snapshot.model_id);
                config.system = snapshot.system.as_deref().map(str::to_owned);
                config.tools = snapshot.tools.clone();
                config.max_tokens = snapshot.max_tokens;
                // The parent's reasoning setting too: the same thinking budget or effort, as
                // the parent's own requests carry it.
                config.effort = snapshot.effort;
                config.permissions = snapshot.env.permissions.clone();
                config.secrets = self.secrets.union(&snapshot.env.secrets);
                // Its background tasks' files go under its parent's root.
                config.task_dir = snapshot.env.tasks.root();
                let seed = (!resumes).then(|| seed_from_snapshot(&snapshot, task));
                (config, seed)
            }
            None => {
                let log = request.parent.log.as_ref();
                let (true, Some(model)) = (log.is_some() || resumes, &self.fallback_model) else {
                    return Err(Error::invalid(
                        "a fork needs the parent's conversation: start it from the in-process delegation tool, or give the parent's log and configure a model",
                    ));
                };
                let roots = Roots::new(&request.parent.cwd)
                    .map_err(|e| Error::invalid(format!("working directory: {e}")))?;
                let mut config = AgentConfig::new(Arc::clone(model), roots);
                config.tools = ToolSet::new(ToolSet::builtin(BashConfig::default()));
                config.permissions = PermissionPolicy::default();
                config.secrets = self.secrets.clone();
                let seed = log.filter(|_| !resumes).map(|log| seed_from_log(log, task));
                (config, seed)
            }
        };
        if let Some(ceiling) = request.permission_ceiling {
            config.permissions = config.permissions.restricted_to(ceiling);
        }
        if let Some(rules) = &request.permission_rules {
            config.permissions = config
                .permissions
                .holding(rules, &request.parent.cwd)
                .map_err(Error::invalid)?;
        }
        if request.background {
            config.permissions.broker = None;
        }
        config.max_turns = request.max_turns.or(self.config.max_turns);
        if let Some(retries) = self.config.structured_retries {
            config.structured_retries = retries;
        }
        config.output = match &request.output_schema {
            Some(schema) => OutputMode::FinalAnswer {
                schema: schema.clone(),
            },
            None => OutputMode::Text,
        };
        config.depth = depth;
        // A fork never delegates: it runs at its own depth cap, so its delegation tool refuses.
        config.max_depth = depth;
        config.background = request.background;
        config.lineage = request.parent.lineage.clone();
        config.sessions.clone_from(&self.sessions);
        config.summaries.clone_from(&self.summaries);
        Ok((config, seed))
    }
}

#[async_trait]
impl SubagentProvider for ForkProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> Capabilities {
        capabilities()
    }

    async fn start(&self, request: StartRequest) -> Result<Run, Error> {
        let (config, seed) = self.agent_and_seed(&request)?;
        let agent = Agent::new(config).map_err(|e| Error::invalid(e.to_string()))?;
        let (agent, seed) = match (&request.resume, seed) {
            (None, Some(seed)) => (agent, seed),
            (Some(session), _) => {
                let Some(store) = &self.sessions else {
                    return Err(Error::NotResumable {
                        message: format!(
                            "provider \"{}\" keeps no transcripts (no session store), so it cannot resume session {}",
                            self.name, session.id
                        ),
                    });
                };
                let text = resume_text(&request.prompt_text(), request.output_schema.as_ref());
                let resumed = store
                    .resume(&self.name, session, vec![ContentBlock::text(text)])
                    .await?;
                (agent.resuming(resumed.session), resumed.seed)
            }
            (None, None) => {
                return Err(Error::invalid("a fork needs the parent's conversation"));
            }
        };
        Ok(agent.start(&self.name, &request, seed))
    }
}

/// Builds fork providers from preset config. The fallback model comes from `config.model` or
/// the build context's [`DefaultModel`] (optional), the configured secrets from its
/// [`Secrets`], the session store (if any) from its [`SessionStore`].
#[derive(Debug, Default)]
pub struct ForkFactory;

impl ProviderFactory for ForkFactory {
    fn kind(&self) -> &str {
        KIND
    }

    fn summary(&self) -> &str {
        "an in-process agent that continues the parent's conversation (shared prompt-cache prefix)"
    }

    fn capabilities(&self) -> Capabilities {
        capabilities()
    }

    fn config_schema(&self) -> schemars::Schema {
        schemars::schema_for!(ForkConfig)
    }

    /// The key variable of `config.model`, if it names a model.
    fn secret_env(&self, config: &Value) -> Vec<String> {
        BuildContext::parse_config::<ForkConfig>(KIND, "", config)
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

    /// The runtime's built-in tools and the host's delegation tools (a fork's tools are its
    /// parent's).
    fn child_tools(&self, _config: &Value) -> Option<ChildTools> {
        Some(ChildTools {
            names: ToolSet::new(ToolSet::builtin(BashConfig::default()))
                .names()
                .into_iter()
                .map(str::to_owned)
                .collect(),
            delegation: true,
        })
    }

    fn build(
        &self,
        name: &str,
        config: &Value,
        context: &BuildContext,
    ) -> Result<Arc<dyn SubagentProvider>, Error> {
        let config: ForkConfig = BuildContext::parse_config(KIND, name, config)?;
        let model = match &config.model {
            Some(model) => Some(
                subagent_model::build(model)
                    .map_err(|e| Error::invalid(format!("fork provider {name}: model: {e}")))?,
            ),
            None => context
                .extensions
                .get::<DefaultModel>()
                .map(|m| Arc::clone(&m.0)),
        };
        let secrets = context.secrets.clone();
        let mut provider = ForkProvider::new(name, config, model).with_secrets(secrets);
        if let Some(store) = context.extensions.get::<SessionStore>() {
            provider = provider.with_sessions((*store).clone());
        }
        Ok(Arc::new(provider))
    }
}
