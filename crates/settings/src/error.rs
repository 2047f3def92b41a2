//! The crate's one error enum and its stable codes.

use std::path::PathBuf;

/// Errors of this crate. Each has a stable [`code`](Error::code).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A settings file (or `--settings` JSON) is not JSON. Returned by
    /// [`SettingsFile::parse`](crate::SettingsFile::parse) and
    /// [`EffectiveSettings::load`](crate::EffectiveSettings::load); retrying does not help until
    /// the file is fixed. Code `SETTINGS_INVALID`.
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        /// The file (or `--settings`, `preset settings:`).
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What serde_json says.
        message: String,
    },
    /// A known key holds a value of the wrong type or an unknown value (`"allow": "Bash"`,
    /// `"defaultMode": "yolo"`). Returned by the same functions as [`Error::Syntax`]; retrying
    /// does not help until the file is fixed. Code `SETTINGS_INVALID`.
    #[error("{path}: {key}: {message}")]
    Key {
        /// The file.
        path: String,
        /// The key, dotted (`permissions.allow`, `hooks.PreToolUse[0].hooks[1].timeout`).
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A settings file exists but cannot be read (permissions, not a regular file, too large,
    /// not UTF-8). Returned by [`SettingsFile::load`](crate::SettingsFile::load) and
    /// [`EffectiveSettings::load`](crate::EffectiveSettings::load); retrying helps only once the
    /// cause is fixed. Code `SETTINGS_UNREADABLE`.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The reader's error.
        source: std::io::Error,
    },
    /// A permission rule cannot be parsed (unbalanced parentheses, no tool name, an empty
    /// specifier, a `WebFetch` specifier without `domain:`, a bad glob). Returned by
    /// [`Rule::parse`](crate::Rule::parse) and by everything that reads rules; never a silent
    /// allow. Retrying does not help until the rule is fixed. Code `PERMISSION_RULE_INVALID`.
    #[error("{at}permission rule {rule:?}: {reason}")]
    Rule {
        /// Where the rule was written (`path: permissions.allow[2]: `), empty for a bare parse.
        at: String,
        /// The rule as written.
        rule: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A hook matcher is not a valid regular expression. Returned by
    /// [`Hooks::from_value`](crate::Hooks::from_value) and everything that reads settings;
    /// retrying does not help until the matcher is fixed. Code `HOOK_MATCHER_INVALID`.
    #[error(
        "{path}: hooks.{event}: matcher {matcher:?} is not a valid regular expression: {message}"
    )]
    HookMatcher {
        /// The file (or the agent definition).
        path: String,
        /// The event the matcher is under.
        event: String,
        /// The matcher as written.
        matcher: String,
        /// What the regex parser says.
        message: String,
    },
    /// Recording or revoking trust could not write `~/.subagents/trusted-projects.json` (or read
    /// the one there). Returned by [`Trust::record`](crate::Trust::record) and
    /// [`Trust::revoke`](crate::Trust::revoke); retrying helps once the cause (permissions, a
    /// full disk, a malformed file) is fixed. Code `TRUST_WRITE_FAILED`.
    #[error("recording trust in {path}: {message}")]
    TrustWrite {
        /// The record file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
}

impl Error {
    /// The stable code of this error, for the CLI's JSON and exit messages.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Syntax { .. } | Self::Key { .. } => "SETTINGS_INVALID",
            Self::Read { .. } => "SETTINGS_UNREADABLE",
            Self::Rule { .. } => "PERMISSION_RULE_INVALID",
            Self::HookMatcher { .. } => "HOOK_MATCHER_INVALID",
            Self::TrustWrite { .. } => "TRUST_WRITE_FAILED",
        }
    }

    /// The same error, said to come from `at` (a file and key) when it is a rule error.
    pub(crate) fn rule_at(self, at: String) -> Self {
        match self {
            Self::Rule { rule, reason, .. } => Self::Rule { at, rule, reason },
            other => other,
        }
    }
}

/// This crate's result.
pub type Result<T> = std::result::Result<T, Error>;
