//! `subagent-claude-code`: the Claude Code CLI (`claude` 2.1.197) as a subagent provider.
//!
//! Owns mapping a [`StartRequest`] onto one `claude -p --output-format stream-json --verbose`
//! child (run through `subagent-process` in the parent's cwd, the prompt on stdin, a scrubbed
//! environment plus the configured variables), reading its stream-json events into
//! [`RunEvent`]s and its end into an [`Outcome`] (the configured [`Secrets`] — the preset's
//! key variables, from the build context — are withheld from the child unless `pass_env` or
//! `env` names them, and their values are redacted from its output); and the [`ClaudeCodeFactory`] (kind
//! `claude-code`) that builds providers from a preset's config ([`ClaudeCodeConfig`]).
//! Deliberately not here: owning processes (`subagent-process` does), any model client, gating
//! (the registry refuses what [`CAPABILITIES`] does not declare), and installing the CLI
//! (`cargo xtask install-clis`).
//!
//! # Mapping
//!
//! | request | claude |
//! |---|---|
//! | prompt | stdin (then EOF): no argv size limit, never read as a flag |
//! | `parent.cwd` | the child's cwd (claude has no `--cwd`) |
//! | `model` | `--model` |
//! | `max_turns` | `--max-turns`; `result/error_max_turns` → `max_turns` |
//! | `effort` | `--effort` (claude sends it as `output_config.effort`) |
//! | `persona` | `--append-system-prompt` (an agent type's memory, `AgentMemory` in the request's extensions, appended to it; a memory directory outside the cwd as `--add-dir`) |
//! | `tool_filter` | allow → `--tools a,b` (exact list the model sees), deny → `--disallowedTools`; `*` patterns expand against [`KNOWN_TOOLS`] |
//! | `output_schema` | `--json-schema`; `result.structured_output` (validated again here) → `Outcome.structured`; no structured output → `failed` |
//! | `max_depth` | the child's own sub-agent tool is removed (`--disallowedTools Agent Task`): claude's sub-agents nest without a limit of their own, so under any cap the child runs none (see [`no_sub_agents`]) |
//! | `resume` | `--resume ID` in the same cwd (claude keys sessions by cwd; another cwd is `NOT_RESUMABLE`) |
//! | `isolation` | nothing of its own: the registry's isolator has pointed `parent.cwd` into the child's worktree; the mode is at most `acceptEdits`, in which claude's file tools stay in the cwd (`auto` and `bypassPermissions` let them out) |
//! | `permission_rules` | in the `--settings` JSON, beside the rules claude does not read itself (claude applies deny > ask > allow to every tool call) |
//! | `cancel` | SIGINT to claude (it ends its tools and reports `error_during_execution`), grace, SIGKILL of the whole tree |
//! | `parent.asker` | `--input-format stream-json --permission-prompt-tool stdio`, a `dontAsk` row runs in `default` (under the ceiling): the prompt is a stream-json user message, each `can_use_tool` control request is answered from the asker (allow + `updatedInput` / deny + message), stdin closes at the `result` |
//! | an agent type's `hooks:` (`subagent_runtime::AgentHooks` in `parent.extensions`) | `--settings` `hooks`, after the settings' hooks claude does not read itself |
//! | the host's MCP servers (`subagent_core::mcp::HostMcpServers` in the build context) | the preset's (those claude does not read itself) in a private temporary file named by `--mcp-config`, removed when the run ends; `~/.claude.json`'s and `.mcp.json`'s claude reads on its own |
//!
//! Always: `--permission-mode` from config (default `dontAsk`; `bypassPermissions` as root needs
//! `IS_SANDBOX=1`, refused up front with that advice otherwise), `CLAUDE_CODE_MAX_RETRIES`
//! (default 0) and, by default, `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` and friends.
//!
//! Events: assistant text → `Text`, thinking → `Thinking`, `tool_use` → `ToolCall`,
//! `tool_result` → `ToolResult`, nested agents' events carry `parent_tool_use_id`, `init`,
//! retries and nested-agent task notices → `Progress`, the `result`'s usage → `Usage`.
//! Success is a `result` with `is_error` false **and** exit code 0; anything else is `failed`
//! with claude's own error text (model errors arrive as subtype `success` with `is_error` true).
//! The outcome's `session` (claude's session id and the cwd) resumes the run.
//!
//! Admission (`max_starting`, default the CPU count; `subagent_process::admission`): a child
//! holds room among the row's starting children from launch to claude's first output line; one
//! that finds none emits `Queued` and waits (a cancel then ends it with nothing started).

mod command;
mod config;
mod control;
mod error;
mod events;
mod run;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use subagent_core::{
    BuildContext, Capabilities, ChildTools, Program, ProviderFactory, Requirements, Run,
    StartRequest, SubagentProvider, TestedVersion,
};
use subagent_process::Secrets;

pub use command::{
    AGENT_TOOLS, Invocation, KNOWN_TOOLS, build as build_command, no_sub_agents, tool_flags,
};
pub use config::{ClaudeCodeConfig, ClaudePermissionMode};
pub use error::{Error, INSTALL_HINT, NPM_PACKAGE, Result, TESTED_VERSION};
pub use events::{ResultEvent, StreamState, TOOL_OUTPUT_LIMIT};

#[doc(no_inline)]
pub use subagent_core::{Outcome, RunEvent};

/// The provider kind, as written in a preset.
pub const KIND: &str = "claude-code";

/// What this provider honours: each flag is proven by an end-to-end test against the real CLI
/// (`tests/suite/e2e*.rs`, feature `e2e`).
pub const CAPABILITIES: Capabilities = {
    let mut caps = Capabilities::NONE;
    caps.output_schema = true;
    caps.depth_limit = true;
    caps.tool_filter = true;
    caps.persona = true;
    caps.model_override = true;
    caps.effort = true;
    caps.max_turns = true;
    caps.resume = true;
    caps.isolation = true;
    caps.permission_rules = true;
    caps.mcp_servers = true;
    caps
};

/// Runs requests with the `claude` CLI.
#[derive(Clone, Debug)]
pub struct ClaudeCodeProvider {
    name: String,
    config: Arc<ClaudeCodeConfig>,
    secrets: Secrets,
    /// The settings handed to every child as `--settings` (what claude does not read itself).
    settings: Option<Arc<serde_json::Map<String, Value>>>,
    /// The MCP servers handed to every child as `--mcp-config` (what claude does not read
    /// itself), as the file's JSON.
    mcp_config: Option<Arc<String>>,
    /// The host's servers (a request's own are handed with them).
    mcp_servers: Arc<subagent_core::mcp::HostMcpServers>,
    /// The bound on its children starting at once (`max_starting`).
    admission: subagent_process::admission::Admission,
}

impl ClaudeCodeProvider {
    /// A provider named `name`.
    pub fn new(name: impl Into<String>, config: ClaudeCodeConfig) -> Result<Self> {
        config.validate()?;
        Ok(Self {
            name: name.into(),
            admission: config.admission(),
            config: Arc::new(config),
            secrets: Secrets::new(),
            settings: None,
            mcp_config: None,
            mcp_servers: Arc::default(),
        })
    }

    /// The configured secrets: withheld from the child (unless the config's `pass_env` or
    /// `env` names them) and redacted from its output.
    #[must_use]
    pub fn with_secrets(mut self, secrets: Secrets) -> Self {
        self.secrets = secrets;
        self
    }

    /// Its config.
    pub fn config(&self) -> &ClaudeCodeConfig {
        &self.config
    }

    /// The invocation a request would run.
    fn invocation(&self, request: &StartRequest) -> Result<Invocation> {
        let is_root = rustix::process::geteuid().is_root();
        let sandbox = std::env::var("IS_SANDBOX").ok();
        command::build(
            &self.config,
            request,
            &self.name,
            is_root,
            sandbox.as_deref(),
        )
        .map(|invocation| {
            // An agent definition's `hooks:` run in its child, beside the settings' hooks.
            let agent_hooks = request
                .parent
                .extensions
                .get::<subagent_runtime::AgentHooks>();
            let settings = command::request_settings(
                self.settings.as_deref(),
                agent_hooks.as_ref().map(|hooks| &hooks.0),
                request.permission_rules.as_ref(),
            );
            command::with_settings(invocation, settings.as_deref())
        })
    }

    /// Hands the rules of `settings` that `claude` does not read itself to every child
    /// (the permission rules of flags, the preset and our `.subagents/` files).
    #[must_use]
    pub fn with_settings(mut self, settings: &subagent_settings::EffectiveSettings) -> Self {
        self.settings = command::handed_settings(settings).map(Arc::new);
        self
    }

    /// Hands the host's MCP servers that `claude` does not read itself (the preset's) to every
    /// child, in a private temporary file named by `--mcp-config` (their `env` and `headers`
    /// may be secrets: never on the command line).
    #[must_use]
    pub fn with_mcp_servers(mut self, servers: &subagent_core::mcp::HostMcpServers) -> Self {
        self.mcp_config = command::mcp_config(servers).map(Arc::new);
        self.mcp_servers = Arc::new(servers.clone());
        self
    }
}

/// `json` in a new temporary file only its owner may read, removed when the path is dropped.
fn write_private(json: &str) -> Result<tempfile::TempPath> {
    use std::io::Write as _;
    let mut file = tempfile::Builder::new()
        .prefix("subagent-claude-mcp-")
        .suffix(".json")
        .tempfile()
        .map_err(Error::McpConfigFile)?;
    file.write_all(json.as_bytes())
        .map_err(Error::McpConfigFile)?;
    Ok(file.into_temp_path())
}

#[async_trait]
impl SubagentProvider for ClaudeCodeProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> Capabilities {
        CAPABILITIES
    }

    async fn start(&self, request: StartRequest) -> subagent_core::Result<Run> {
        if request.cancel.is_cancelled() {
            return Err(subagent_core::Error::Cancelled);
        }
        let mut invocation = self.invocation(&request)?;
        let mut files = Vec::new();
        // A request's own servers (an agent definition's) go in this child's file only.
        let own = (!request.mcp_servers.is_empty())
            .then(|| command::mcp_config(&self.mcp_servers.with(&request.mcp_servers)))
            .flatten();
        if let Some(json) = own
            .as_deref()
            .or(self.mcp_config.as_deref().map(String::as_str))
        {
            let path = write_private(json)?;
            invocation = command::with_mcp_config(invocation, &path);
            files.push(Arc::new(path));
        }
        let plan = run::RunPlan {
            _files: files,
            provider: self.name.clone(),
            invocation,
            schema: request.output_schema.clone(),
            timeout: self.config.timeout(),
            idle_timeout: self.config.idle_timeout(),
            grace: self.config.grace(),
            secrets: self.secrets.clone(),
            asker: request.parent.asker.clone(),
        };
        let (sender, run) = Run::channel(&self.name, &request);
        // With room, started here (a failure to launch is this call's error); else queued.
        let cancel = sender.cancel_token().clone();
        let name = self.name.clone();
        self.admission.start(
            sender,
            cancel.clone(),
            subagent_process::admission::Report {
                queued: subagent_core::RunSender::queued,
                never_started: subagent_core::RunSender::never_started,
            },
            move |admitted| {
                let process = run::spawn(&plan, cancel)?;
                tracing::debug!(provider = %name, pid = process.pid(), "claude started");
                Ok::<_, Error>(move |sender| run::drive(process, sender, plan, Some(admitted)))
            },
        )?;
        Ok(run)
    }
}

/// Builds `claude-code` providers from a preset's config (and the build context's
/// [`Secrets`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct ClaudeCodeFactory;

impl ProviderFactory for ClaudeCodeFactory {
    fn kind(&self) -> &str {
        KIND
    }

    fn summary(&self) -> &str {
        "runs the Claude Code CLI (`claude -p --output-format stream-json`) in the parent's directory"
    }

    fn capabilities(&self) -> Capabilities {
        CAPABILITIES
    }

    /// The `claude` program the row names, tested at [`TESTED_VERSION`].
    fn requirements(
        &self,
        name: &str,
        config: &Value,
        context: &BuildContext,
    ) -> subagent_core::Result<Requirements> {
        let config: ClaudeCodeConfig = BuildContext::parse_config(KIND, name, config)?;
        Ok(Requirements {
            program: Some(Program {
                path: context.resolve_program(&config.binary),
                tested: Some(TestedVersion {
                    package: NPM_PACKAGE.to_owned(),
                    version: TESTED_VERSION.to_owned(),
                    asks_version: true,
                }),
                install_hint: INSTALL_HINT.to_owned(),
            }),
            endpoints: Vec::new(),
        })
    }

    fn config_schema(&self) -> schemars::Schema {
        schemars::schema_for!(ClaudeCodeConfig)
    }

    /// Claude Code's tools ([`KNOWN_TOOLS`]), and its sub-agent tool under both its names
    /// ([`AGENT_TOOLS`]: `Task`, the older one, is still written in definitions).
    fn child_tools(&self, _config: &Value) -> Option<ChildTools> {
        let mut names: Vec<String> = KNOWN_TOOLS.iter().map(|tool| (*tool).to_owned()).collect();
        for tool in AGENT_TOOLS {
            if !names.iter().any(|known| known == tool) {
                names.push(tool.to_owned());
            }
        }
        Some(ChildTools {
            names,
            delegation: false,
        })
    }

    fn build(
        &self,
        name: &str,
        config: &Value,
        context: &BuildContext,
    ) -> subagent_core::Result<Arc<dyn SubagentProvider>> {
        let mut config: ClaudeCodeConfig = BuildContext::parse_config(KIND, name, config)?;
        // A relative path with a directory part is relative to the preset, not to our cwd.
        config.binary = context.resolve_program(&config.binary);
        let secrets = context.secrets.clone();
        let mut provider = ClaudeCodeProvider::new(name, config)?.with_secrets(secrets);
        if let Some(settings) = context
            .extensions
            .get::<subagent_settings::EffectiveSettings>()
        {
            provider = provider.with_settings(&settings);
        }
        if let Some(servers) = context
            .extensions
            .get::<subagent_core::mcp::HostMcpServers>()
        {
            provider = provider.with_mcp_servers(&servers);
        }
        Ok(Arc::new(provider))
    }
}
