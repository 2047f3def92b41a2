//! The provider's configuration (a preset's `config:` block).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Claude Code's `--permission-mode`, written as Claude Code spells it (`acceptEdits`) or as the
/// other providers do (`accept-edits`, `dont-ask`, `bypass`, `bypass-permissions`): every mode's
/// camelCase and kebab-case spellings are accepted ([`ClaudePermissionMode::SPELLINGS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ClaudePermissionMode {
    /// `default`: in `-p` mode tools that would ask are denied.
    #[serde(rename = "default")]
    Default,
    /// `acceptEdits`: file edits inside the cwd (and `--add-dir`s) are allowed.
    #[serde(rename = "acceptEdits", alias = "accept-edits")]
    AcceptEdits,
    /// `plan`: read-only.
    #[serde(rename = "plan")]
    Plan,
    /// `dontAsk` (the default): whatever is not pre-approved (`allowed_tools`) is denied.
    #[default]
    #[serde(rename = "dontAsk", alias = "dont-ask")]
    DontAsk,
    /// `auto`.
    #[serde(rename = "auto")]
    Auto,
    /// `bypassPermissions`: everything allowed. As root Claude Code needs `IS_SANDBOX=1`.
    #[serde(
        rename = "bypassPermissions",
        alias = "bypass-permissions",
        alias = "bypass"
    )]
    BypassPermissions,
}

/// A string with every spelling as an `enum`, so that a preset's check accepts each of them and
/// its error for a bad value lists them.
impl schemars::JsonSchema for ClaudePermissionMode {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ClaudePermissionMode".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let spellings: Vec<&str> = Self::SPELLINGS.iter().map(|(s, _)| *s).collect();
        schemars::json_schema!({
            "type": "string",
            "enum": spellings,
            "description": "Claude Code's `--permission-mode`: `default` (in `-p` mode tools that \
                would ask are denied), `acceptEdits` (file edits inside the cwd and `--add-dir`s \
                are allowed), `plan` (read-only), `dontAsk` (the default: whatever is not \
                pre-approved in `allowed_tools` is denied), `auto`, `bypassPermissions` \
                (everything allowed; as root Claude Code needs `IS_SANDBOX=1`). The kebab-case \
                spellings work too: `accept-edits`, `dont-ask`, `bypass-permissions`, `bypass`."
        })
    }
}

impl ClaudePermissionMode {
    /// Every accepted spelling and its mode: Claude Code's (camelCase) first, then the
    /// kebab-case ones.
    pub const SPELLINGS: [(&'static str, ClaudePermissionMode); 10] = [
        ("default", Self::Default),
        ("acceptEdits", Self::AcceptEdits),
        ("accept-edits", Self::AcceptEdits),
        ("plan", Self::Plan),
        ("dontAsk", Self::DontAsk),
        ("dont-ask", Self::DontAsk),
        ("auto", Self::Auto),
        ("bypassPermissions", Self::BypassPermissions),
        ("bypass-permissions", Self::BypassPermissions),
        ("bypass", Self::BypassPermissions),
    ];

    /// How loose the mode is (`plan` strictest, `bypassPermissions` loosest), on the scale of
    /// `subagent_core::PermissionMode`.
    fn looseness(self) -> u8 {
        match self {
            Self::Plan => 0,
            Self::DontAsk => 1,
            Self::Default => 2,
            Self::AcceptEdits => 3,
            Self::Auto => 4,
            Self::BypassPermissions => 5,
        }
    }

    /// The mode a child runs in: this one, or the ceiling when the ceiling is stricter.
    pub fn under(self, ceiling: Option<subagent_core::PermissionMode>) -> Self {
        let Some(ceiling) = ceiling else {
            return self;
        };
        let ceiling = match ceiling {
            subagent_core::PermissionMode::Plan => Self::Plan,
            subagent_core::PermissionMode::DontAsk => Self::DontAsk,
            subagent_core::PermissionMode::AcceptEdits => Self::AcceptEdits,
            subagent_core::PermissionMode::Bypass => Self::BypassPermissions,
            _ => Self::Default,
        };
        if self.looseness() <= ceiling.looseness() {
            self
        } else {
            ceiling
        }
    }

    /// The value of `--permission-mode`.
    pub fn as_flag(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::Plan => "plan",
            Self::DontAsk => "dontAsk",
            Self::Auto => "auto",
            Self::BypassPermissions => "bypassPermissions",
        }
    }
}

/// How a `claude-code` provider runs the CLI.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ClaudeCodeConfig {
    /// The `claude` executable: a bare name is looked up on `PATH` (default `claude`).
    pub binary: PathBuf,
    /// `--permission-mode` (default `dontAsk`).
    pub permission_mode: ClaudePermissionMode,
    /// Tools pre-approved with `--allowedTools` (e.g. `Bash`, `Bash(git:*)`, `Write`): they run
    /// without asking. This is permission, not visibility (the request's tool filter decides
    /// which tools the child sees).
    pub allowed_tools: Vec<String>,
    /// Variables set in the child (e.g. `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`, `HOME`,
    /// `CLAUDE_CONFIG_DIR`). Set variables win over everything.
    pub env: BTreeMap<String, String>,
    /// Variables of ours the scrub would withhold but the child may see. Default
    /// [`DEFAULT_PASS_ENV`]: Claude Code's own credentials and endpoint (a user's
    /// `ANTHROPIC_API_KEY` must reach `claude`); other products' keys stay scrubbed. Setting this
    /// list replaces the default (`[]` passes nothing).
    pub pass_env: Vec<String>,
    /// `CLAUDE_CODE_MAX_RETRIES` (default 0: claude's own default retries 401/5xx ten times with
    /// backoff for minutes).
    pub max_retries: u32,
    /// Sets `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`, `DISABLE_TELEMETRY=1`,
    /// `DISABLE_ERROR_REPORTING=1` and `DISABLE_AUTOUPDATER=1` (default on: the only traffic left
    /// is to the model endpoint).
    pub disable_nonessential_traffic: bool,
    /// Overall limit of one run, in seconds (default none).
    pub timeout_secs: Option<u64>,
    /// Stop a run whose stdout stays silent this long, in seconds (default 600; a long tool call
    /// is silent too). `null` disables it.
    pub idle_timeout_secs: Option<u64>,
    /// Time between SIGINT and SIGKILL of the whole tree, in milliseconds (default 5000).
    pub grace_ms: u64,
    /// Arguments added after ours (e.g. `--bare`, `--add-dir`, `/some/dir`).
    pub extra_args: Vec<String>,
    /// How many of this row's children may be starting at once — from launch to claude's first
    /// output line, just before its first model request. More wait, queued (a `queued` event),
    /// and a queued child can be cancelled before anything starts. Default (`null`): the
    /// machine's CPU count.
    pub max_starting: Option<usize>,
}

/// Claude Code's own variables, passed through the scrub by default.
pub(crate) const DEFAULT_PASS_ENV: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CONFIG_DIR",
];

impl Default for ClaudeCodeConfig {
    fn default() -> Self {
        Self {
            binary: PathBuf::from("claude"),
            permission_mode: ClaudePermissionMode::DontAsk,
            allowed_tools: Vec::new(),
            env: BTreeMap::new(),
            pass_env: DEFAULT_PASS_ENV
                .iter()
                .map(|name| (*name).to_owned())
                .collect(),
            max_retries: 0,
            disable_nonessential_traffic: true,
            timeout_secs: None,
            idle_timeout_secs: Some(600),
            grace_ms: 5000,
            extra_args: Vec::new(),
            max_starting: None,
        }
    }
}

impl ClaudeCodeConfig {
    /// The overall timeout.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout_secs.map(Duration::from_secs)
    }

    /// The idle-output timeout.
    pub fn idle_timeout(&self) -> Option<Duration> {
        self.idle_timeout_secs.map(Duration::from_secs)
    }

    /// The grace period.
    pub fn grace(&self) -> Duration {
        Duration::from_millis(self.grace_ms)
    }

    /// Checks what serde cannot.
    pub fn validate(&self) -> crate::Result<()> {
        if self.binary.as_os_str().is_empty() {
            return Err(crate::Error::Config("`binary` is empty".into()));
        }
        if self.idle_timeout_secs == Some(0) || self.timeout_secs == Some(0) {
            return Err(crate::Error::Config(
                "timeouts must be at least one second (or null for none)".into(),
            ));
        }
        if self.max_starting == Some(0) {
            return Err(crate::Error::Config(
                "`max_starting` must be at least 1 (or null for the CPU count)".into(),
            ));
        }
        Ok(())
    }

    /// The bound on this row's children starting at once.
    pub fn admission(&self) -> subagent_process::admission::Admission {
        self.max_starting.map_or_else(
            subagent_process::admission::Admission::per_cpu,
            subagent_process::admission::Admission::new,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_aliases() {
        let config: ClaudeCodeConfig = serde_json::from_value(serde_json::json!({
            "permission_mode": "accept-edits",
        }))
        .unwrap_or_default();
        assert_eq!(config.permission_mode, ClaudePermissionMode::AcceptEdits);
        assert_eq!(config.binary, PathBuf::from("claude"));
        assert!(config.disable_nonessential_traffic);
        assert_eq!(config.max_retries, 0);
        let mode: ClaudePermissionMode =
            serde_json::from_value(serde_json::json!("bypassPermissions")).unwrap_or_default();
        assert_eq!(mode, ClaudePermissionMode::BypassPermissions);
        assert!(
            serde_json::from_value::<ClaudeCodeConfig>(serde_json::json!({"bogus": 1})).is_err()
        );
    }

    #[test]
    fn every_spelling_reads_and_the_schema_lists_them_all() {
        for (spelling, mode) in ClaudePermissionMode::SPELLINGS {
            let read: ClaudePermissionMode =
                serde_json::from_value(serde_json::json!(spelling)).unwrap();
            assert_eq!(read, mode, "{spelling}");
        }
        let schema = schemars::schema_for!(ClaudePermissionMode);
        assert_eq!(
            schema.get("enum"),
            Some(&serde_json::json!([
                "default",
                "acceptEdits",
                "accept-edits",
                "plan",
                "dontAsk",
                "dont-ask",
                "auto",
                "bypassPermissions",
                "bypass-permissions",
                "bypass"
            ]))
        );
    }
}

#[cfg(test)]
mod pass_env_tests {
    use super::*;

    #[test]
    fn own_credentials_pass_by_default_and_an_explicit_list_replaces_them() {
        let config = ClaudeCodeConfig::default();
        assert!(
            config
                .pass_env
                .iter()
                .any(|name| name == "ANTHROPIC_API_KEY")
        );
        assert!(!config.pass_env.iter().any(|name| name == "OPENAI_API_KEY"));
        let parsed: ClaudeCodeConfig = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!(parsed.pass_env, config.pass_env);
        let none: ClaudeCodeConfig =
            serde_json::from_value(serde_json::json!({"pass_env": []})).unwrap();
        assert!(none.pass_env.is_empty());
    }
}
