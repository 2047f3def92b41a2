//! `subagent-acp`: any agent that speaks the Agent Client Protocol (ACP, protocol version 1) as a
//! subagent provider — `@zed-industries/codex-acp`, `@zed-industries/claude-agent-acp`, or any
//! other ACP agent.
//!
//! Owns mapping a [`StartRequest`] onto one ACP conversation with a child agent: its process
//! (started and owned by `subagent-process` like every other child: own process group,
//! parent-death signal, guardian, scrubbed environment minus the configured [`Secrets`] unless
//! passed, the run's cwd — never ours), and the client side of the official
//! `agent-client-protocol` SDK over the process's pipes (the SDK spawns nothing); the
//! [`AcpFactory`] (kind `acp`) that builds providers from a preset's config ([`AcpConfig`]).
//! Deliberately not here: the other direction (our agent served over ACP), a terminal for the
//! agent (none is advertised), MCP servers for the session (none is passed).
//!
//! # Mapping
//!
//! | request | ACP |
//! |---|---|
//! | — | `initialize {protocolVersion: 1, clientCapabilities: {fs: {readTextFile, writeTextFile}, terminal: false}}` |
//! | `parent.cwd` | the process's cwd and `session/new {cwd, mcpServers}` |
//! | `permission_ceiling` | the row's `permission_mode` tightened by it; `session/set_mode` to the agent's mode the row's `modes` names for it (a stricter mode the row does not map is refused before the agent starts) |
//! | `resume` | `session/load {sessionId, cwd, mcpServers}` instead of `session/new` |
//! | the host's MCP servers (`subagent_core::mcp::HostMcpServers` in the build context) | `mcpServers` of `session/new` and `session/load`: stdio servers with an absolute command (a bare name looked up on `PATH`), HTTP servers only when `initialize` says `mcpCapabilities.http` |
//! | prompt | `session/prompt {prompt: [{type: text}]}`, then `session/close` (errors ignored, waited for within the grace period) |
//! | `cancel` | `session/cancel`; the prompt has the grace period to end as `cancelled`, then the tree is killed |
//!
//! `session/update`s become events: message chunks → `Text`, thought chunks → `Thinking`,
//! `tool_call` → `ToolCall` (its `name`, else its kind; its `rawInput`), a `completed`/`failed`
//! status → one `ToolResult`, `plan` → `Progress`. The prompt's `stopReason` is the outcome
//! (`end_turn` → completed, `max_tokens`, `max_turn_requests` → max turns, `refusal` → refused,
//! `cancelled`), its `usage` the outcome's usage; the answer is the agent's text after its last
//! tool call.
//!
//! The agent's requests are answered here: `session/request_permission` by the row's
//! [`PermissionPolicy`] (reject by default; `allow` allows once what the run's permission mode
//! allows for the call's kind, never more; past the row's `max_permission_requests` in the
//! turn, `cancelled`, and the turn is cancelled and the run fails saying so), `fs/read_text_file` and `fs/write_text_file` inside
//! the run's roots only (the in-process file tools' `Roots`: no `..`, no path outside, no symlink
//! out; a refused path is an error answer, never a write), writes refused in a read-only run.
//!
//! The process ends with the run: neither pinned adapter exits when its stdin closes, so once
//! the prompt is answered, the session closed and the processes the agent started have ended
//! (within the grace period: claude-agent-acp's `claude` writes its transcript as it exits) it
//! gets SIGTERM (then SIGKILL of the tree after
//! the grace period), and after a cancel whose prompt did not end within the grace period the
//! tree is killed at once; it is reaped before the outcome is delivered.
//!
//! # Capabilities
//!
//! Declared ([`CAPABILITIES`]): `resume`. Every outcome names its ACP session
//! (`SessionRef {provider, id: sessionId, cwd}`); a request's `resume` loads it with
//! `session/load {sessionId, cwd, mcpServers}` instead of `session/new` (the history the
//! agent replays while loading is not this run's: no events), then prompts. An agent whose
//! `initialize` answer does not offer `loadSession` fails the run, saying so. Proven end to end:
//! the conformance kit's resume check against codex-acp, and claude-agent-acp recalling its
//! first run (`tests/suite/e2e.rs`).
//!
//! `depth_limit`, for claude-agent-acp and codex-acp only (`nesting`): whenever a request
//! carries `max_depth`, the adapter is told to run no sub-agents of its own (claude-agent-acp:
//! `_meta.claudeCode.options.disallowedTools: ["Agent", "Task"]` on `session/new` and
//! `session/load`; codex-acp: `-c features.multi_agent=false -c features.multi_agent_v2=false`),
//! so its model is offered none (proved end to end against both, `tests/suite/e2e.rs`). A row
//! running any other agent declares no `depth_limit` and says why.
//!
//! Everything else is refused by the registry before the agent starts: ACP v1 has no standard
//! way to pass a persona, a model, a turn limit, a tool filter or an output schema; a model
//! override (`session/set_model`) is unstable; isolation is not promised for agents that write
//! files themselves.
//!
//! # Observed with the pinned adapters (codex-acp 0.16.0, claude-agent-acp 0.23.1)
//!
//! * Neither calls `fs/read_text_file` or `fs/write_text_file`: both edit files themselves, so
//!   what holds their edits is the session mode the row maps (codex's sandbox, claude's
//!   permission modes) and the answers to their permission requests; the served fs stays for
//!   agents that use it.
//! * claude's own `plan` mode runs tools without asking when bypass is available, which
//!   claude-agent-acp makes so as root with `IS_SANDBOX=1`: a row maps `plan` to `dontAsk`
//!   (read-only tools only, nothing asked) instead.
//! * codex-acp ends its turn with `stopReason: cancelled` when a permission request is
//!   rejected: not cancelled by us, that outcome is `failed`, saying so.
//! * codex-acp reports a reading command's output in `rawOutput` only, in some runs; claude
//!   announces a tool call with `rawInput: {}` and sends the input in an update (the `ToolCall`
//!   event waits for it).
//! * claude writes its last answer to its session transcript after the turn ends: with the
//!   tree stopped right after the prompt, a loaded session missed that answer or was not found
//!   at all; after `session/close` it is always there.
//! * Neither exits when its stdin closes (see above); claude-agent-acp fails `session/new` as
//!   root without `IS_SANDBOX=1`; codex-acp's sandboxed commands need a `bwrap` on `PATH`.

mod asking;
mod client;
mod coalesce;
mod config;
mod error;
mod events;
mod mcp;
mod nesting;
mod run;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use subagent_core::{
    BuildContext, Capabilities, Program, ProviderFactory, Requirements, Run, StartRequest,
    SubagentProvider, TestedVersion,
};
use subagent_process::Secrets;
use subagent_runtime::Roots;

pub use client::{Files, answer as permission_answer, mode_allows};
pub use config::{AcpConfig, PermissionPolicy};
pub use error::{Error, INSTALL_HINT, Result, TESTED_ADAPTERS};
pub use events::{StreamState, TOOL_OUTPUT_LIMIT, kind_name};

/// The provider kind, as written in a preset.
pub const KIND: &str = "acp";

/// What an acp provider honours (see the crate docs): `resume`, through `session/load`, the
/// host's and a request's MCP servers, and `depth_limit` for an adapter whose own sub-agents it
/// can turn off (claude-agent-acp, codex-acp: a row running another agent declares all but it).
pub const CAPABILITIES: Capabilities = {
    let mut caps = Capabilities::NONE;
    caps.resume = true;
    caps.mcp_servers = true;
    caps.depth_limit = true;
    caps
};

/// Runs requests with an ACP agent.
#[derive(Clone, Debug)]
pub struct AcpProvider {
    name: String,
    config: Arc<AcpConfig>,
    /// The adapter it runs, when its own sub-agents can be turned off (`depth_limit`).
    adapter: Option<nesting::Adapter>,
    /// The bound on its children starting at once (`max_starting`).
    admission: subagent_process::admission::Admission,
    secrets: Secrets,
    /// The host's MCP servers, handed to every session.
    mcp: Arc<subagent_core::mcp::HostMcpServers>,
}

impl AcpProvider {
    /// A provider named `name` with `config` (checked here).
    pub fn new(name: impl Into<String>, config: AcpConfig) -> Result<Self> {
        config.validate()?;
        Ok(Self {
            name: name.into(),
            adapter: nesting::Adapter::of(&config),
            admission: config.admission(),
            config: Arc::new(config),
            secrets: Secrets::new(),
            mcp: Arc::default(),
        })
    }

    /// The configured secrets: withheld from the agent (unless `pass_env` or `env` names them)
    /// and redacted from its output.
    #[must_use]
    pub fn with_secrets(mut self, secrets: Secrets) -> Self {
        self.secrets = secrets;
        self
    }

    /// Hands the host's MCP servers to every session (`session/new {mcpServers}`).
    #[must_use]
    pub fn with_mcp_servers(mut self, servers: Arc<subagent_core::mcp::HostMcpServers>) -> Self {
        self.mcp = servers;
        self
    }

    /// The config.
    pub fn config(&self) -> &AcpConfig {
        &self.config
    }
}

#[async_trait]
impl SubagentProvider for AcpProvider {
    fn name(&self) -> &str {
        &self.name
    }

    /// [`CAPABILITIES`], `depth_limit` only for an adapter whose own sub-agents can be turned
    /// off (see `nesting`).
    fn capabilities(&self) -> Capabilities {
        let mut caps = CAPABILITIES;
        caps.depth_limit = self.adapter.is_some();
        caps
    }

    fn capability_reason(&self, capability: subagent_core::Capability) -> Option<String> {
        (capability == subagent_core::Capability::DepthLimit && self.adapter.is_none()).then(|| {
            "this ACP agent cannot be told to run no sub-agents of its own (claude-agent-acp and \
             codex-acp can): under a depth cap it could nest past it"
                .to_owned()
        })
    }

    async fn start(&self, request: StartRequest) -> subagent_core::Result<Run> {
        if request.cancel.is_cancelled() {
            return Err(subagent_core::Error::Cancelled);
        }
        let prompt = request.prompt_text();
        if prompt.trim().is_empty() {
            return Err(subagent_core::Error::invalid(
                "the prompt has no text (an ACP agent is sent a text prompt)",
            ));
        }
        let (mode, session_mode) = self
            .config
            .session_mode(&self.name, request.permission_ceiling)?;
        let cwd = request.parent.cwd.clone();
        let roots = Roots::new(&cwd).map_err(|error| Error::Roots(error.to_string()))?;
        if let Some(session) = &request.resume
            && session.id.trim().is_empty()
        {
            return Err(subagent_core::Error::NotResumable {
                message: "the session reference has no ACP session id".to_owned(),
            });
        }
        // Under a depth cap, a known adapter runs no sub-agents of its own.
        let no_sub_agents = self.adapter.filter(|_| request.max_depth.is_some());
        let mut args = self.config.args.clone();
        args.extend(
            no_sub_agents
                .map(nesting::Adapter::launch_args)
                .unwrap_or_default(),
        );
        let plan = run::RunPlan {
            provider: self.name.clone(),
            resume: request.resume.as_ref().map(|session| session.id.clone()),
            program: self.config.command.clone(),
            args,
            session_meta: no_sub_agents.and_then(nesting::Adapter::session_meta),
            cwd,
            env: self
                .config
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            pass_env: self.config.pass_env.clone(),
            secrets: self.secrets.clone(),
            prompt,
            mode,
            session_mode,
            permissions: self.config.permissions,
            files: Files::new(roots, mode),
            grace: self.config.grace(),
            timeout: self.config.timeout(),
            max_permission_requests: self.config.max_permission_requests,
            asker: request.parent.asker.clone(),
            mcp: if request.mcp_servers.is_empty() {
                Arc::clone(&self.mcp)
            } else {
                Arc::new(self.mcp.with(&request.mcp_servers))
            },
        };
        let (sender, run) = Run::channel(&self.name, &request);
        // With room, started here (a failure to launch is this call's error); else queued.
        let cancel = sender.cancel_token().clone();
        let name = self.name.clone();
        self.admission.start(
            sender,
            cancel,
            subagent_process::admission::Report {
                queued: subagent_core::RunSender::queued,
                never_started: subagent_core::RunSender::never_started,
            },
            move |admitted| {
                let process = run::spawn(&plan)?;
                tracing::debug!(provider = %name, pid = process.pid(), "acp agent started");
                Ok::<_, Error>(move |sender| {
                    coalesce::Coalesced::new(run::drive(process, sender, plan, Some(admitted)))
                })
            },
        )?;
        Ok(run)
    }
}

/// Builds acp providers from a preset's `config:` block ([`AcpConfig`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct AcpFactory;

impl ProviderFactory for AcpFactory {
    fn kind(&self) -> &str {
        KIND
    }

    fn summary(&self) -> &str {
        "runs any Agent Client Protocol agent (codex-acp, claude-agent-acp, …) as a child process"
    }

    fn capabilities(&self) -> Capabilities {
        CAPABILITIES
    }

    /// The agent program the row names; for an adapter of [`TESTED_ADAPTERS`], the version
    /// its npm package is tested at (the adapters take no `--version`).
    fn requirements(
        &self,
        name: &str,
        config: &Value,
        context: &BuildContext,
    ) -> subagent_core::Result<Requirements> {
        let config: AcpConfig = BuildContext::parse_config(KIND, name, config)?;
        let path = context.resolve_program(&config.command);
        let tested = TESTED_ADAPTERS
            .iter()
            .find(|(known, ..)| path.file_name().is_some_and(|name| name == *known))
            .map(|&(_, package, version)| TestedVersion {
                package: package.to_owned(),
                version: version.to_owned(),
                asks_version: false,
            });
        Ok(Requirements {
            program: Some(Program {
                path,
                tested,
                install_hint: INSTALL_HINT.to_owned(),
            }),
            endpoints: Vec::new(),
        })
    }

    fn config_schema(&self) -> schemars::Schema {
        schemars::schema_for!(AcpConfig)
    }

    fn build(
        &self,
        name: &str,
        config: &Value,
        context: &BuildContext,
    ) -> subagent_core::Result<Arc<dyn SubagentProvider>> {
        let mut config: AcpConfig = BuildContext::parse_config(KIND, name, config)?;
        // A command given as a relative path (with a `/`) is relative to the preset; a bare name
        // stays a PATH lookup.
        config.command = context.resolve_program(&config.command);
        let secrets = context.secrets.clone();
        let mut provider = AcpProvider::new(name, config)?.with_secrets(secrets);
        if let Some(servers) = context
            .extensions
            .get::<subagent_core::mcp::HostMcpServers>()
        {
            provider = provider.with_mcp_servers(servers);
        }
        Ok(Arc::new(provider))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use subagent_core::ErrorCode;

    #[test]
    fn factory_builds_and_resolves_the_command() {
        let context = BuildContext {
            base_dir: "/presets".into(),
            ..BuildContext::default()
        };
        let provider = AcpFactory
            .build("a", &serde_json::json!({"command": "bin/agent"}), &context)
            .unwrap();
        assert_eq!(provider.name(), "a");
        // An agent it does not know: every capability of the kind but `depth_limit`, and why.
        let mut unknown = CAPABILITIES;
        unknown.depth_limit = false;
        assert_eq!(provider.capabilities(), unknown);
        assert!(
            provider
                .capability_reason(subagent_core::Capability::DepthLimit)
                .is_some_and(|reason| reason.contains("sub-agents"))
        );
        let known = AcpFactory
            .build("b", &serde_json::json!({"command": "codex-acp"}), &context)
            .unwrap();
        assert_eq!(known.capabilities(), CAPABILITIES);
        let Err(err) = AcpFactory.build("a", &serde_json::json!({"nope": 1}), &context) else {
            panic!("an unknown field was accepted");
        };
        assert_eq!(err.code(), ErrorCode::InvalidArguments);
    }
}
