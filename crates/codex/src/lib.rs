//! `subagent-codex`: the OpenAI Codex CLI (`codex` 0.171.0) as a subagent provider.
//!
//! Owns mapping a [`StartRequest`] onto one `codex exec --json` child (run through
//! `subagent-process`, in the parent's cwd, stdin `/dev/null`, scrubbed environment: also
//! without the configured [`Secrets`] of the build context unless `pass_env` or `env` names
//! them), reading its JSONL events into [`RunEvent`]s and the child's end into an [`Outcome`]
//! (the secrets' values redacted); and the
//! [`CodexFactory`] (kind `codex`) that builds providers from a preset's config
//! ([`CodexConfig`]). Deliberately not here: owning processes (`subagent-process` does), any
//! model client, gating (the registry refuses what [`CAPABILITIES`] does not declare), and
//! installing the CLI (`cargo xtask install-clis`).
//!
//! # `exec --json`, not `app-server`
//!
//! Both were tried against the fake model server. `codex app-server` (JSON-RPC over stdio,
//! `initialize` → `thread/start {cwd, sandbox, developerInstructions, ephemeral}` →
//! `turn/start {input, outputSchema}` → `turn/interrupt`) works well: it streams text deltas and
//! `turn/interrupt` ends a running command and still reports `turn/completed` with status
//! `interrupted` and usage. `codex exec --json` was chosen anyway:
//!
//! * it is the documented non-interactive surface; `app-server` is marked *experimental*, its
//!   protocol has 100+ methods that change between releases, and it can send requests the
//!   client must answer (approvals, user input) — a state machine to keep in step with codex;
//! * every capability we map has a stable exec flag: `--output-schema FILE`, `-m`,
//!   `-c developer_instructions=…`, `exec resume THREAD_ID`, `--sandbox`;
//! * cancellation is as good where it matters: on SIGTERM codex ends its sandboxed command
//!   (observed; the command runs in its own session under bwrap, so a process-group signal
//!   alone would not reach it), and the process owner SIGKILLs the whole tree after the grace
//!   period. What exec loses is the usage of a cancelled turn and text deltas (exec reports whole
//!   messages), neither of which the seam needs;
//! * one-way JSONL with stdin closed is simpler to drive and to test, and start-up costs the
//!   same (~0.3 s native).
//!
//! Should streaming deltas or graceful interrupts become important, an `app-server` driver can
//! replace `run.rs` behind the same provider.
//!
//! # Mapping
//!
//! | request | codex |
//! |---|---|
//! | prompt | the positional prompt, after `--` |
//! | `model` (or config `model`) | `-m MODEL` |
//! | `persona` | `-c developer_instructions="…"` (a developer message before codex's own) |
//! | `output_schema` | `--output-schema FILE` (a temp file); the final agent message is parsed as JSON and validated |
//! | `resume` | `exec … resume THREAD_ID PROMPT` (thread ids work from any cwd) |
//! | `parent.cwd` | the child's cwd; `--skip-git-repo-check` when it is not inside a git repo |
//! | `cancel` | SIGTERM to the group, grace, SIGKILL of the tree |
//! | `max_depth` (any value) | no codex sub-agents: `-c agents.enabled=false --disable multi_agent --disable multi_agent_v2` |
//! | the host's MCP servers (`subagent_core::mcp::HostMcpServers` in the build context) | every one (codex reads none of Claude Code's files) as `-c mcp_servers.<name>={…}`; `env` values and `headers` go through the child's environment (`env_vars`, `env_http_headers`), never argv; codex 0.171 offers MCP tools behind its `tool_search` |
//!
//! Always: `--json`, `--sandbox` from config (default `read-only`), `-c analytics.enabled=false`
//! and `--disable plugins` (no traffic beyond the model server), and for a configured model
//! provider `request_max_retries`/`stream_max_retries` (default 0).
//!
//! Persona note: `developer_instructions` given here replaces one set in the user's
//! `CODEX_HOME/config.toml`.
//!
//! # Capabilities
//!
//! Declared ([`CAPABILITIES`]), each proven by an end-to-end test against the real CLI
//! (`tests/suite/e2e.rs`): `output_schema` (the request's `text.format` carries the schema; the
//! answer is validated with `subagent_schema`, a mismatch is `Failed` with the text kept), `persona`
//! (a developer text of the recorded request), `model_override` (the request's `model`),
//! `resume` (same thread id, history re-sent; an unknown id is `Failed` with codex's message),
//! `effort` (`-c model_reasoning_effort=…`, OpenAI's spelling: the request's `reasoning.effort`),
//! `depth_limit` (below), `isolation` (the registry's isolator has pointed `parent.cwd` into the
//! child's worktree, codex's cwd; the sandbox is at most `workspace-write`, which keeps codex's
//! writes in the cwd — and in the temp dirs codex always allows).
//!
//! Not declared: `tool_filter` (codex exec has no per-tool allow/deny list; the sandbox is the
//! only lever and it is config, not a filter) and `max_turns` (exec runs one turn with no limit
//! on model round trips).
//!
//! # Depth
//!
//! Codex runs sub-agents of its own that the registry does not see: `spawn_agent` of the
//! `multi_agent` feature (v1, on by default: a `multi_agent_v1` namespace tool for unknown
//! models such as `fake-model`, deferred behind `tool_search` for catalog models such as
//! `gpt-5.5` — a direct call starts a sub-agent either way) or of `multi_agent_v2` (a
//! `collaboration` namespace, off by default). Whenever a request sets `max_depth`, the child
//! runs with none of them, mirroring claude-code: the only nesting depth the seam can hold codex
//! to is none. `--disable multi_agent --disable multi_agent_v2` keep the tools out of a new
//! thread, and `-c agents.enabled=false` out of a resumed one (a thread keeps the multi-agent
//! version it started with and ignores `--disable`; `agents.enabled=false` still applies).
//! Proven end to end: capped, no request lists `spawn_agent` or `tool_search`, a scripted
//! `spawn_agent` is answered "unsupported call" and no second thread reaches the model — for
//! `fake-model`, `gpt-5.5`, and a thread started uncapped with `multi_agent_v2` then resumed
//! under a cap. Without `max_depth` nothing changes.
//!
//! # Observed pitfalls (codex 0.171.0)
//!
//! * A refused connection is retried forever (an `error` event "Reconnecting..." every 5 s):
//!   hence the reconnect timer in `run.rs`.
//! * The sandboxed command runs under bwrap in its own session, outside codex's process group;
//!   codex ends it on SIGTERM, and the process owner's tree kill covers it otherwise.
//! * The workspace-write sandbox leaves an empty `/tmp/.git` directory (a bind-mount target), so
//!   "inside a git repo" means a `.git` file or a `.git/HEAD`, not any `.git`.
//! * Exit code 1 with `Error: …` and a backtrace on stderr, and no JSONL, when `exec resume`
//!   names an unknown thread: the diagnostic is the `Error:` line.

mod command;
mod config;
mod error;
mod events;
mod mcp;
mod run;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use subagent_core::{
    BuildContext, Capabilities, Endpoint, PermissionMode, Program, ProviderFactory, Requirements,
    Run, StartRequest, SubagentProvider, TestedVersion,
};
use subagent_process::Secrets;

pub use command::{CodexCommand, Invocation, build as build_command, inside_git_repo};
pub use config::{CodexConfig, ModelProviderConfig, SandboxMode};
pub use error::{Error, INSTALL_HINT, NPM_PACKAGE, Result, TESTED_VERSION};
pub use events::{Activity, RECONNECTING_PREFIX, StreamState, TOOL_OUTPUT_LIMIT};

#[doc(no_inline)]
pub use subagent_core::{Outcome, RunEvent};

/// The provider kind, as written in a preset.
pub const KIND: &str = "codex";

/// What a codex provider honours: exactly what the end-to-end tests against the real CLI prove
/// (`tests/suite/e2e.rs`).
pub const CAPABILITIES: Capabilities = {
    let mut caps = Capabilities::NONE;
    caps.output_schema = true;
    caps.persona = true;
    caps.model_override = true;
    caps.effort = true;
    caps.resume = true;
    caps.depth_limit = true;
    caps.isolation = true;
    caps.mcp_servers = true;
    caps
};

/// Runs requests with the `codex` CLI.
#[derive(Clone, Debug)]
pub struct CodexProvider {
    name: String,
    config: Arc<CodexConfig>,
    secrets: Secrets,
    /// The host's MCP servers in codex's terms, or why they cannot be handed over (said when a
    /// child would start).
    mcp: Option<Arc<std::result::Result<mcp::Handover, String>>>,
    /// The host's servers (a request's own are handed with them).
    mcp_servers: Arc<subagent_core::mcp::HostMcpServers>,
    /// The bound on its children starting at once (`max_starting`).
    admission: subagent_process::admission::Admission,
}

impl CodexProvider {
    /// A provider named `name` with `config` (checked here).
    pub fn new(name: impl Into<String>, config: CodexConfig) -> Result<Self> {
        command::validate(&config)?;
        Ok(Self {
            name: name.into(),
            admission: config.admission(),
            config: Arc::new(config),
            secrets: Secrets::new(),
            mcp: None,
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

    /// Hands the host's MCP servers to every child (`-c mcp_servers.<name>={…}`, their `env`
    /// and `headers` through the child's environment). Servers codex cannot be told of make
    /// every start fail with what to change.
    #[must_use]
    pub fn with_mcp_servers(mut self, servers: &subagent_core::mcp::HostMcpServers) -> Self {
        self.mcp = mcp::handover(servers).transpose().map(Arc::new);
        self.mcp_servers = Arc::new(servers.clone());
        self
    }

    /// The config.
    pub fn config(&self) -> &CodexConfig {
        &self.config
    }

    /// The command line a request would run (no file is written: a schema file path is shown
    /// as `<output-schema.json>`).
    pub fn command_for(&self, request: &StartRequest) -> CodexCommand {
        let invocation = self.invocation(
            request,
            request
                .output_schema
                .as_ref()
                .map(|_| "<output-schema.json>".into()),
        );
        command::build(&self.config, &invocation)
    }

    fn invocation(
        &self,
        request: &StartRequest,
        output_schema_file: Option<std::path::PathBuf>,
    ) -> Invocation {
        Invocation {
            prompt: request.prompt_text(),
            cwd: request.parent.cwd.clone(),
            model: request.model.clone(),
            persona: request.persona.clone(),
            output_schema_file,
            resume_thread: request.resume.as_ref().map(|s| s.id.clone()),
            permission_ceiling: ceiling(request),
            no_sub_agents: command::no_sub_agents(request),
            effort: request.effort,
        }
    }
}

/// The request's permission ceiling, tightened for an isolated child: it stays in its cwd (its
/// worktree), so the sandbox is at most `workspace-write` (`danger-full-access` writes
/// anywhere).
fn ceiling(request: &StartRequest) -> Option<PermissionMode> {
    match (request.permission_ceiling, request.isolation) {
        (ceiling, None) => ceiling,
        (None, Some(_)) => Some(PermissionMode::AcceptEdits),
        (Some(ceiling), Some(_)) => Some(ceiling.intersect(PermissionMode::AcceptEdits)),
    }
}

fn write_schema(schema: &Value) -> Result<tempfile::TempPath> {
    let mut file = tempfile::Builder::new()
        .prefix("subagent-codex-schema-")
        .suffix(".json")
        .tempfile()
        .map_err(Error::SchemaFile)?;
    serde_json::to_writer(&mut file, schema)
        .map_err(|e| Error::SchemaFile(std::io::Error::other(e)))?;
    Ok(file.into_temp_path())
}

#[async_trait]
impl SubagentProvider for CodexProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn capabilities(&self) -> Capabilities {
        CAPABILITIES
    }

    fn capability_reason(&self, capability: subagent_core::Capability) -> Option<String> {
        (capability == subagent_core::Capability::PermissionRules).then(|| {
            "codex exec has no per-call permission rules (only its sandbox and an approval \
             policy that never asks): its child would run without the deny and ask rules; \
             delegate to a spawn or claude-code row, or drop the rules for this project"
                .to_owned()
        })
    }

    async fn start(&self, request: StartRequest) -> subagent_core::Result<Run> {
        if request.cancel.is_cancelled() {
            return Err(subagent_core::Error::Cancelled);
        }
        if request.prompt_text().trim().is_empty() {
            return Err(subagent_core::Error::invalid(
                "the prompt has no text (codex takes a text prompt)",
            ));
        }
        if let Some(session) = &request.resume
            && session.id.trim().is_empty()
        {
            return Err(subagent_core::Error::NotResumable {
                message: "the session reference has no codex thread id".to_owned(),
            });
        }
        let schema = match &request.output_schema {
            Some(schema) => Some((schema.clone(), write_schema(schema)?)),
            None => None,
        };
        let invocation = self.invocation(
            &request,
            schema.as_ref().map(|(_, path)| path.to_path_buf()),
        );
        let mut command = command::build(&self.config, &invocation);
        // A request's own servers (an agent definition's) are handed to this child only.
        let own = (!request.mcp_servers.is_empty())
            .then(|| mcp::handover(&self.mcp_servers.with(&request.mcp_servers)).transpose())
            .flatten();
        if let Some(handover) = own.as_ref().or(self.mcp.as_deref()) {
            let handover = handover.as_ref().map_err(|why| {
                subagent_core::Error::invalid(format!(
                    "the MCP servers cannot be handed to codex: {why}"
                ))
            })?;
            // Right after `exec`, before the row's own overrides (which win).
            let at = 1.min(command.args.len());
            let overrides = handover
                .overrides
                .iter()
                .flat_map(|o| [std::ffi::OsString::from("-c"), o.into()]);
            command.args.splice(at..at, overrides);
            command.env.extend(handover.env.iter().cloned());
        }
        let plan = run::RunPlan {
            provider: self.name.clone(),
            command,
            schema,
            ephemeral: self.config.ephemeral,
            timeout: self.config.timeout(),
            idle_timeout: self.config.idle_timeout(),
            reconnect_timeout: self.config.reconnect_timeout(),
            grace: self.config.grace(),
            secrets: self.secrets.clone(),
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
                tracing::debug!(provider = %name, pid = process.pid(), "codex started");
                Ok::<_, Error>(move |sender| run::drive(process, sender, plan, Some(admitted)))
            },
        )?;
        Ok(run)
    }
}

/// Builds codex providers from a preset's `config:` block ([`CodexConfig`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct CodexFactory;

impl ProviderFactory for CodexFactory {
    fn kind(&self) -> &str {
        KIND
    }

    fn summary(&self) -> &str {
        "runs the OpenAI Codex CLI (`codex exec --json`) as a child process"
    }

    fn capabilities(&self) -> Capabilities {
        CAPABILITIES
    }

    fn config_schema(&self) -> schemars::Schema {
        schemars::schema_for!(CodexConfig)
    }

    /// The `codex` program the row names, tested at [`TESTED_VERSION`], and the model server
    /// of its `model_provider`, when it names one.
    fn requirements(
        &self,
        name: &str,
        config: &Value,
        context: &BuildContext,
    ) -> subagent_core::Result<Requirements> {
        let config: CodexConfig = BuildContext::parse_config(KIND, name, config)?;
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
            endpoints: config
                .model_provider
                .map(|provider| Endpoint {
                    urls: vec![provider.base_url],
                    origin: "the row's `model_provider.base_url`".to_owned(),
                })
                .into_iter()
                .collect(),
        })
    }

    /// The variable codex reads its model provider's key from (`model_provider.env_key`).
    fn secret_env(&self, config: &Value) -> Vec<String> {
        BuildContext::parse_config::<CodexConfig>(KIND, "", config)
            .ok()
            .and_then(|config| config.model_provider)
            .map(|provider| provider.env_key)
            .into_iter()
            .collect()
    }

    fn build(
        &self,
        name: &str,
        config: &Value,
        context: &BuildContext,
    ) -> subagent_core::Result<Arc<dyn SubagentProvider>> {
        let mut config: CodexConfig = BuildContext::parse_config(KIND, name, config)?;
        // A binary given as a relative path (with a `/`) is relative to the preset; a bare name
        // stays a PATH lookup.
        config.binary = context.resolve_program(&config.binary);
        if let Some(home) = &config.codex_home {
            config.codex_home = Some(context.resolve_path(home));
        }
        let secrets = context.secrets.clone();
        let mut provider = CodexProvider::new(name, config)?.with_secrets(secrets);
        if let Some(servers) = context
            .extensions
            .get::<subagent_core::mcp::HostMcpServers>()
        {
            provider = provider.with_mcp_servers(&servers);
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
    fn factory_builds_and_resolves_paths() {
        let context = BuildContext {
            base_dir: "/presets".into(),
            ..BuildContext::default()
        };
        let provider = CodexFactory
            .build(
                "cx",
                &serde_json::json!({"binary": "bin/codex", "codex_home": "home"}),
                &context,
            )
            .unwrap();
        assert_eq!(provider.name(), "cx");
        assert_eq!(provider.capabilities(), CAPABILITIES);
        let Err(err) = CodexFactory.build("cx", &serde_json::json!({"nope": 1}), &context) else {
            panic!("an unknown field was accepted");
        };
        assert_eq!(err.code(), ErrorCode::InvalidArguments);
        let schema = CodexFactory.config_schema();
        assert!(
            schema
                .as_value()
                .to_string()
                .contains("reconnect_timeout_secs")
        );
    }

    #[test]
    fn capability_table() {
        assert_eq!(
            (
                CAPABILITIES.output_schema,
                CAPABILITIES.persona,
                CAPABILITIES.model_override,
                CAPABILITIES.resume,
                CAPABILITIES.tool_filter,
                CAPABILITIES.max_turns,
                CAPABILITIES.depth_limit,
                CAPABILITIES.isolation,
                CAPABILITIES.inherits_parent_context,
            ),
            (true, true, true, true, false, false, true, true, false)
        );
    }

    #[test]
    fn an_isolated_child_runs_in_workspace_write_at_most() {
        use subagent_core::Isolation;
        let request = |ceiling: Option<PermissionMode>| {
            let mut builder = StartRequest::builder("x")
                .cwd("/tmp")
                .isolation(Isolation::Worktree);
            if let Some(ceiling) = ceiling {
                builder = builder.permission_ceiling(ceiling);
            }
            builder.build()
        };
        assert_eq!(
            [
                ceiling(&request(None)),
                ceiling(&request(Some(PermissionMode::Bypass))),
                ceiling(&request(Some(PermissionMode::Plan))),
                ceiling(&StartRequest::builder("x").cwd("/tmp").build()),
            ],
            [
                Some(PermissionMode::AcceptEdits),
                Some(PermissionMode::AcceptEdits),
                Some(PermissionMode::Plan),
                None
            ]
        );
        assert_eq!(
            SandboxMode::DangerFullAccess.under(ceiling(&request(None))),
            SandboxMode::WorkspaceWrite
        );
    }
}
