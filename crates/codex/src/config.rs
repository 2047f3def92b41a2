//! The provider's configuration: what a preset's `config:` block of kind `codex` holds.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the `codex` CLI is run. Every field has a default, so `{}` is a valid config that runs
/// `codex` from `PATH` against the model provider configured in the user's own `CODEX_HOME`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CodexConfig {
    /// The `codex` executable: a bare name looked up on `PATH` (default `codex`), or a path. The
    /// npm package's native binary
    /// (`node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex`) runs
    /// the same commands about 100 ms faster than the node wrapper.
    pub binary: PathBuf,
    /// The model the child runs when the request names none (`-m`). Unset: codex's own default.
    pub model: Option<String>,
    /// A model provider to point codex at (an OpenAI Responses-compatible endpoint). Unset: the
    /// provider configured in `CODEX_HOME` (normally OpenAI with the user's login).
    pub model_provider: Option<ModelProviderConfig>,
    /// The sandbox the child's commands run in. Default `read-only`.
    pub sandbox: SandboxMode,
    /// `CODEX_HOME` for the child (config, sessions, logs). Unset: inherited from the
    /// environment when passed through, else codex's default `~/.codex`.
    pub codex_home: Option<PathBuf>,
    /// Extra environment variables for the child (after scrubbing). `HOME` and `TMPDIR` can be set
    /// here too.
    pub env: BTreeMap<String, String>,
    /// Names of variables of our own environment passed to the child even though the scrubber
    /// would remove them. Default [`DEFAULT_PASS_ENV`]: Codex's own credentials, endpoint and
    /// home (a user's `OPENAI_API_KEY` must reach `codex`); other products' keys stay scrubbed.
    /// Setting this list replaces the default (`[]` passes nothing).
    pub pass_env: Vec<String>,
    /// More `-c key=value` overrides, passed as given (value parsed by codex as TOML).
    pub config_overrides: Vec<String>,
    /// Keep analytics off (`-c analytics.enabled=false`). Default true.
    pub disable_analytics: bool,
    /// Keep plugins off (`--disable plugins`: no curated-plugin sync to api.github.com and
    /// chatgpt.com). Default true.
    pub disable_plugins: bool,
    /// Run without writing a rollout file (`--ephemeral`). Such runs cannot be resumed, so the
    /// outcome then carries no session. Default false.
    pub ephemeral: bool,
    /// Stop the run after this many seconds in total. Unset: no overall limit.
    pub timeout_secs: Option<u64>,
    /// Stop the run when codex reports no progress for this many seconds (a running command
    /// reports nothing until it ends, so keep this above your longest command). Default 1800.
    pub idle_timeout_secs: u64,
    /// Stop the run when codex has been reconnecting to an unreachable model server (it retries
    /// a refused connection forever) for this many seconds without other progress. Default 60.
    pub reconnect_timeout_secs: u64,
    /// After the polite stop (SIGTERM, on which codex ends its sandboxed command), wait this many
    /// milliseconds before SIGKILL of the process group. Default 2000.
    pub grace_ms: u64,
    /// How many of this row's children may be starting at once — from launch to codex's first
    /// output line (`thread.started`). More wait, queued (a `queued` event), and a queued child
    /// can be cancelled before anything starts. Default (`null`): the machine's CPU count.
    pub max_starting: Option<usize>,
}

/// Codex's own variables, passed through the scrub by default.
pub(crate) const DEFAULT_PASS_ENV: &[&str] = &[
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "CODEX_API_KEY",
    "CODEX_HOME",
];

impl Default for CodexConfig {
    fn default() -> Self {
        Self {
            binary: PathBuf::from("codex"),
            model: None,
            model_provider: None,
            sandbox: SandboxMode::default(),
            codex_home: None,
            env: BTreeMap::new(),
            pass_env: DEFAULT_PASS_ENV
                .iter()
                .map(|name| (*name).to_owned())
                .collect(),
            config_overrides: Vec::new(),
            disable_analytics: true,
            disable_plugins: true,
            ephemeral: false,
            timeout_secs: None,
            idle_timeout_secs: 1800,
            reconnect_timeout_secs: 60,
            grace_ms: 2000,
            max_starting: None,
        }
    }
}

impl CodexConfig {
    /// The overall limit, if any.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout_secs.map(Duration::from_secs)
    }

    /// The no-progress limit.
    pub fn idle_timeout(&self) -> Duration {
        Duration::from_secs(self.idle_timeout_secs)
    }

    /// The reconnecting-without-progress limit.
    pub fn reconnect_timeout(&self) -> Duration {
        Duration::from_secs(self.reconnect_timeout_secs)
    }

    /// The bound on this row's children starting at once.
    pub fn admission(&self) -> subagent_process::admission::Admission {
        self.max_starting.map_or_else(
            subagent_process::admission::Admission::per_cpu,
            subagent_process::admission::Admission::new,
        )
    }

    /// The grace period between SIGTERM and SIGKILL.
    pub fn grace(&self) -> Duration {
        Duration::from_millis(self.grace_ms)
    }
}

/// A model provider entry (`-c model_providers.<id>={…}` and `-c model_provider=<id>`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelProviderConfig {
    /// The provider's id in codex's config. Default `subagents`.
    #[serde(default = "default_provider_id")]
    pub id: String,
    /// The base URL, ending in `/v1` (e.g. `http://127.0.0.1:8080/v1`). Codex posts to
    /// `{base_url}/responses` (only the Responses API: codex dropped `wire_api = "chat"`).
    pub base_url: String,
    /// The environment variable codex reads the API key from. Default `OPENAI_API_KEY`. Pass it
    /// through with `pass_env` or set it in `env`.
    #[serde(default = "default_env_key")]
    pub env_key: String,
    /// Request retries (codex's default is 5 with backoff). Default 0: fail fast, the parent
    /// decides.
    #[serde(default)]
    pub request_max_retries: u32,
    /// Stream reconnect retries (codex's default is 5). Default 0.
    #[serde(default)]
    pub stream_max_retries: u32,
}

fn default_provider_id() -> String {
    "subagents".to_owned()
}

fn default_env_key() -> String {
    "OPENAI_API_KEY".to_owned()
}

/// Codex's sandbox modes (`--sandbox`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Commands may read anything and write nothing; patches are rejected.
    #[default]
    ReadOnly,
    /// Commands and patches may write in the working directory (and /tmp).
    WorkspaceWrite,
    /// No sandbox at all. Only for a child already isolated by other means.
    DangerFullAccess,
}

impl SandboxMode {
    /// The sandbox a child runs in: this one, or a stricter one when the request's permission
    /// ceiling allows less. Codex never asks in `exec`, so a ceiling that would ask before edits
    /// or commands (`default`, `dont-ask`) or forbids them (`plan`) means `read-only`;
    /// `accept-edits` allows at most `workspace-write`; `bypass` keeps the configured sandbox.
    pub fn under(self, ceiling: Option<subagent_core::PermissionMode>) -> Self {
        let most = match ceiling {
            None | Some(subagent_core::PermissionMode::Bypass) => return self,
            Some(subagent_core::PermissionMode::AcceptEdits) => Self::WorkspaceWrite,
            Some(_) => Self::ReadOnly,
        };
        let rank = |mode: Self| match mode {
            Self::ReadOnly => 0,
            Self::WorkspaceWrite => 1,
            Self::DangerFullAccess => 2,
        };
        if rank(self) <= rank(most) { self } else { most }
    }

    /// The value codex's `--sandbox` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::DangerFullAccess => "danger-full-access",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn empty_config_is_the_default() {
        let config: CodexConfig = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!(config, CodexConfig::default());
    }

    #[test]
    fn provider_defaults() {
        let config: CodexConfig = serde_json::from_value(serde_json::json!({
            "model_provider": {"base_url": "http://127.0.0.1:1/v1"},
            "sandbox": "workspace-write"
        }))
        .unwrap();
        assert_eq!(
            config.model_provider,
            Some(ModelProviderConfig {
                id: "subagents".into(),
                base_url: "http://127.0.0.1:1/v1".into(),
                env_key: "OPENAI_API_KEY".into(),
                request_max_retries: 0,
                stream_max_retries: 0,
            })
        );
        assert_eq!(config.sandbox, SandboxMode::WorkspaceWrite);
    }

    #[test]
    fn unknown_fields_are_refused() {
        let err = serde_json::from_value::<CodexConfig>(serde_json::json!({"sandboxx": 1}));
        assert!(err.is_err());
    }
}

#[cfg(test)]
mod pass_env_tests {
    use super::*;

    #[test]
    fn own_credentials_pass_by_default_and_an_explicit_list_replaces_them() {
        let config = CodexConfig::default();
        assert!(config.pass_env.iter().any(|name| name == "OPENAI_API_KEY"));
        assert!(
            !config
                .pass_env
                .iter()
                .any(|name| name == "ANTHROPIC_API_KEY")
        );
        let parsed: CodexConfig = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!(parsed.pass_env, config.pass_env);
        let none: CodexConfig =
            serde_json::from_value(serde_json::json!({"pass_env": []})).unwrap();
        assert!(none.pass_env.is_empty());
    }
}
