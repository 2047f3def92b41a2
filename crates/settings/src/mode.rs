//! Permission modes as Claude Code names them (`defaultMode`, `--permission-mode`).

use std::fmt;

use serde::Serialize;

/// A permission mode. The runtime has its own enum and maps this one onto it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionMode {
    /// Ask for what no rule allows.
    Default,
    /// File edits are allowed.
    AcceptEdits,
    /// Read-only.
    Plan,
    /// Deny what no rule allows, never ask.
    DontAsk,
    /// Everything allowed.
    BypassPermissions,
}

impl PermissionMode {
    /// Every mode.
    pub const ALL: [PermissionMode; 5] = [
        Self::Default,
        Self::AcceptEdits,
        Self::Plan,
        Self::DontAsk,
        Self::BypassPermissions,
    ];

    /// Claude Code's name (`acceptEdits`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::Plan => "plan",
            Self::DontAsk => "dontAsk",
            Self::BypassPermissions => "bypassPermissions",
        }
    }

    /// The mode named `name`: Claude Code's names, and ours (`accept-edits`, `dont-ask`,
    /// `bypass`) for flags.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|mode| mode.name() == name)
            .or(match name {
                "accept-edits" => Some(Self::AcceptEdits),
                "dont-ask" => Some(Self::DontAsk),
                "bypass" => Some(Self::BypassPermissions),
                _ => None,
            })
    }

    /// Whether the mode allows more than `default` does without a rule (a project that is not
    /// trusted may not set it).
    pub fn widens(self) -> bool {
        matches!(self, Self::AcceptEdits | Self::BypassPermissions)
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
