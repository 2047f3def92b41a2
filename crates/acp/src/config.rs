//! The `config:` block of a preset row of `kind: acp`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use subagent_core::PermissionMode;

use crate::error::{Error, Result};

/// How the client answers the agent's `session/request_permission`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionPolicy {
    /// Every request is rejected (`reject_once`).
    #[default]
    Reject,
    /// A request is allowed once (`allow_once`, never `allow_always`) when the run's permission
    /// mode allows the tool call's kind (`plan`: read, search, think; `accept-edits`: also edit,
    /// delete, move; `default`, `bypass`: everything); otherwise rejected.
    Allow,
}

/// The `config:` block of an `acp` row: the agent's command and how the client treats it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcpConfig {
    /// The agent's program: a path (relative to the preset when it has a `/`) or a name looked up
    /// on `PATH`.
    pub command: PathBuf,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for the agent (on top of the scrubbed environment).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables of ours the agent may see although they look like credentials.
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// How loose this row lets the agent be; a request's permission ceiling only tightens it.
    #[serde(default)]
    pub permission_mode: PermissionMode,
    /// The agent's session mode (`session/set_mode`) for each of our permission modes, e.g.
    /// codex-acp `{plan: read-only, accept-edits: auto}`, claude-agent-acp
    /// `{plan: plan, default: default, accept-edits: acceptEdits}`. The run's mode (the row's,
    /// tightened by the request's ceiling) is set when named here; a ceiling stricter than the
    /// row's mode that is not named here is refused before the agent starts.
    #[serde(default)]
    pub modes: BTreeMap<String, String>,
    /// How permission requests are answered.
    #[serde(default)]
    pub permissions: PermissionPolicy,
    /// SIGTERM → SIGKILL grace, how long a cancelled prompt may take to end as cancelled
    /// after `session/cancel` before the agent's tree is killed, and how long `session/close`
    /// is waited for (ms).
    #[serde(default = "default_grace_ms")]
    pub grace_ms: u64,
    /// Overall limit of one run (s); none by default.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// The most `session/request_permission`s answered in one run (it has one prompt turn):
    /// past it, each is answered `cancelled`, the turn is cancelled (`session/cancel`, then the
    /// grace period) and the run fails, saying so. Default 200.
    #[serde(default = "default_max_permission_requests")]
    pub max_permission_requests: u32,
    /// How many of this row's children may be starting at once — from launch to the agent's
    /// first output line (its `initialize` answer). More wait, queued (a `queued` event), and a
    /// queued child can be cancelled before anything starts. Default (`null`): the machine's
    /// CPU count.
    #[serde(default)]
    pub max_starting: Option<usize>,
}

fn default_grace_ms() -> u64 {
    3000
}

fn default_max_permission_requests() -> u32 {
    200
}

impl AcpConfig {
    /// A config running `command` with the defaults.
    pub fn new(command: impl Into<PathBuf>) -> Self {
        Self {
            command: command.into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            pass_env: Vec::new(),
            permission_mode: PermissionMode::Default,
            modes: BTreeMap::new(),
            permissions: PermissionPolicy::Reject,
            grace_ms: default_grace_ms(),
            timeout_secs: None,
            max_permission_requests: default_max_permission_requests(),
            max_starting: None,
        }
    }

    /// The bound on this row's children starting at once.
    pub fn admission(&self) -> subagent_process::admission::Admission {
        self.max_starting.map_or_else(
            subagent_process::admission::Admission::per_cpu,
            subagent_process::admission::Admission::new,
        )
    }

    /// Checks what serde cannot.
    pub fn validate(&self) -> Result<()> {
        if self.command.as_os_str().is_empty() {
            return Err(Error::config("`command` is empty"));
        }
        if self.max_starting == Some(0) {
            return Err(Error::config(
                "`max_starting` must be at least 1 (or null for the CPU count)",
            ));
        }
        for key in self.modes.keys() {
            if PermissionMode::parse(key).is_none() {
                let known: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.as_str()).collect();
                return Err(Error::config(format!(
                    "`modes` key {key:?} is not a permission mode (one of {})",
                    known.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// The grace period.
    pub fn grace(&self) -> Duration {
        Duration::from_millis(self.grace_ms)
    }

    /// The overall limit.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout_secs.map(Duration::from_secs)
    }

    /// The session mode named for `mode`, if any.
    pub fn mode_for(&self, mode: PermissionMode) -> Option<&str> {
        self.modes
            .iter()
            .find(|(key, _)| PermissionMode::parse(key) == Some(mode))
            .map(|(_, id)| id.as_str())
    }

    /// The run's permission mode under `ceiling` and the agent session mode to set: the row's
    /// mode tightened by the ceiling; refused when the ceiling tightens it and no session mode
    /// is named for the result.
    pub fn session_mode(
        &self,
        provider: &str,
        ceiling: Option<PermissionMode>,
    ) -> Result<(PermissionMode, Option<String>)> {
        let mode = ceiling.map_or(self.permission_mode, |c| self.permission_mode.intersect(c));
        let id = self.mode_for(mode).map(str::to_owned);
        if id.is_none() && mode != self.permission_mode {
            return Err(Error::UnmappedCeiling {
                provider: provider.to_owned(),
                ceiling: mode.to_string(),
                row: self.permission_mode.to_string(),
            });
        }
        Ok((mode, id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn parses_a_row_and_maps_ceilings() {
        let config: AcpConfig = serde_json::from_value(serde_json::json!({
            "command": "codex-acp",
            "args": ["-c", "model=x"],
            "permission_mode": "accept-edits",
            "modes": {"plan": "read-only", "acceptEdits": "auto"},
        }))
        .unwrap();
        config.validate().unwrap();
        assert_eq!(
            config.session_mode("p", None).unwrap(),
            (PermissionMode::AcceptEdits, Some("auto".to_owned()))
        );
        assert_eq!(
            config
                .session_mode("p", Some(PermissionMode::Plan))
                .unwrap(),
            (PermissionMode::Plan, Some("read-only".to_owned()))
        );
        assert_eq!(
            config
                .session_mode("p", Some(PermissionMode::Bypass))
                .unwrap(),
            (PermissionMode::AcceptEdits, Some("auto".to_owned()))
        );
        let err = config
            .session_mode("p", Some(PermissionMode::DontAsk))
            .unwrap_err();
        assert!(matches!(err, Error::UnmappedCeiling { .. }), "{err}");
    }

    #[test]
    fn refuses_unknown_fields_and_modes() {
        assert!(
            serde_json::from_value::<AcpConfig>(serde_json::json!({"command": "a", "nope": 1}))
                .is_err()
        );
        let mut config = AcpConfig::new("a");
        config.modes.insert("sometimes".into(), "x".into());
        assert!(config.validate().is_err());
        assert!(AcpConfig::new("").validate().is_err());
    }
}
