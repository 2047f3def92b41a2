//! The delegation vocabulary: agent types as the delegation tool sees them (resolved
//! [`AgentProfile`]s and the [`AgentDirectory`] that lists them), the [`PermissionMode`]s a child
//! runs under, the [`BackgroundMode`] of a delegation tool, and [`ToolFilter`]s with their
//! [`wildcard_match`] patterns. `subagent-catalog` builds profiles from definition files; the
//! in-process runtime's delegation tool reads them through [`AgentDirectory`], so neither
//! depends on the other. [`PermissionMode`] and [`ToolFilter`] are also at the crate root: they
//! are the types of two [`StartRequest`](crate::StartRequest) fields.

use serde::{Deserialize, Serialize};

pub use crate::filter::{ToolFilter, wildcard_match};

/// How a child's tool calls are permitted.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum PermissionMode {
    /// Rules decide; what no rule decides is asked (or denied in the background).
    #[default]
    Default,
    /// File edits inside the run's roots are allowed without asking.
    AcceptEdits,
    /// Read-only tools only.
    Plan,
    /// Never ask: what no rule allows is denied.
    DontAsk,
    /// Everything is allowed.
    Bypass,
}

impl PermissionMode {
    /// Every mode, in order.
    pub const ALL: [PermissionMode; 5] = [
        Self::Default,
        Self::AcceptEdits,
        Self::Plan,
        Self::DontAsk,
        Self::Bypass,
    ];

    /// The kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "accept-edits",
            Self::Plan => "plan",
            Self::DontAsk => "dont-ask",
            Self::Bypass => "bypass",
        }
    }

    /// Parses our names and Claude Code's (`acceptEdits`, `dontAsk`, `bypassPermissions`).
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "default" => Self::Default,
            "accept-edits" | "acceptEdits" => Self::AcceptEdits,
            "plan" => Self::Plan,
            "dont-ask" | "dontAsk" => Self::DontAsk,
            "bypass" | "bypassPermissions" => Self::Bypass,
            _ => return None,
        })
    }

    /// The stricter of two modes (`plan` is the strictest, `bypass` the loosest), so that
    /// combining a read-only source with anything stays read-only.
    #[must_use]
    pub fn intersect(self, other: Self) -> Self {
        fn rank(mode: PermissionMode) -> u8 {
            match mode {
                PermissionMode::Plan => 0,
                PermissionMode::DontAsk => 1,
                PermissionMode::Default => 2,
                PermissionMode::AcceptEdits => 3,
                PermissionMode::Bypass => 4,
            }
        }
        if rank(self) <= rank(other) {
            self
        } else {
            other
        }
    }
}

impl std::fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether delegations of a tool row may, must or must not run in the background.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundMode {
    /// The model chooses with `run_in_background`.
    #[default]
    Allowed,
    /// Every delegation runs in the background.
    Always,
    /// `run_in_background` is ignored: the parent waits (forks still run in the background).
    Never,
}

/// One agent type, resolved: what the delegation tool needs to start it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct AgentProfile {
    /// The type name (`subagent_type`).
    pub name: String,
    /// When to use it (shown to the model in the delegation tool's description).
    pub description: String,
    /// The provider that runs it; `None` = the delegation tool's own provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Instructions for the child (a definition's body, plus its persona), sent as the request's
    /// `persona`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Tools the child may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_filter: Option<ToolFilter>,
    /// The model; `None` = inherit the parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Turn limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// Permission mode; `None` = inherit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<PermissionMode>,
    /// Always run in the background.
    #[serde(default)]
    pub background: bool,
    /// Where the definition came from (for listings), e.g. `builtin` or a file path.
    #[serde(default)]
    pub source: String,
}

impl AgentProfile {
    /// A profile with a name and description and nothing else set.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            ..Self::default()
        }
    }
}

/// The agent types a delegation tool offers. Implementations may reload: callers ask each time.
pub trait AgentDirectory: Send + Sync {
    /// Every type, in the order they are listed to the model.
    fn agents(&self) -> Vec<AgentProfile>;

    /// The type of that name.
    fn get(&self, name: &str) -> Option<AgentProfile> {
        self.agents().into_iter().find(|agent| agent.name == name)
    }
}

/// A fixed list of profiles.
#[derive(Clone, Debug, Default)]
pub struct StaticAgents(pub Vec<AgentProfile>);

impl AgentDirectory for StaticAgents {
    fn agents(&self) -> Vec<AgentProfile> {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_intersected_with_anything_stays_read_only() {
        for mode in PermissionMode::ALL {
            assert_eq!(PermissionMode::Plan.intersect(mode), PermissionMode::Plan);
            assert_eq!(mode.intersect(PermissionMode::Plan), PermissionMode::Plan);
            assert_eq!(PermissionMode::parse(mode.as_str()), Some(mode));
        }
        assert_eq!(
            PermissionMode::Bypass.intersect(PermissionMode::AcceptEdits),
            PermissionMode::AcceptEdits
        );
        assert_eq!(
            PermissionMode::parse("bypassPermissions"),
            Some(PermissionMode::Bypass)
        );
    }
}
