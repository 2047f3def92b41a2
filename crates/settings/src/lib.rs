//! `subagent-settings`: Claude Code's settings files, read for every provider.
//!
//! Owns, as plain data and matching:
//! - the sources and their precedence ([`Scope`], [`Locations`]): managed policy > command-line
//!   flags > a preset's `settings:` > `.claude/settings.local.json` > `.claude/settings.json` >
//!   `~/.claude/settings.json`, each with a `.subagents/` twin that ranks above it;
//! - one settings file ([`SettingsFile`]): `permissions` (`allow`, `ask`, `deny`, `defaultMode`,
//!   `additionalDirectories`), `hooks`, `env`; other keys kept and ignored;
//! - permission rules in Claude Code's syntax ([`Rule`]: `Bash(npm run test:*)`,
//!   `Read(./.env)`, `Edit(src/**)`, `WebFetch(domain:…)`, `mcp__server__tool`, a bare tool
//!   name), matched against one [`ToolCall`], and our tool names mapped onto Claude Code's
//!   ([`claude_tool_name`]);
//! - hook configuration ([`Hooks`]: events, matchers, commands and timeouts);
//! - workspace trust ([`Trust`]): a project's `allow` rules count only once it is trusted;
//! - the merge of everything into [`EffectiveSettings`], each value with its source, and its
//!   human form ([`EffectiveSettings::render`]).
//!
//! Deliberately not here: running hooks (the runtime's hook runner, through the process owner),
//! asking a user, the permission modes' defaults for a call no rule decides (the runtime's
//! policy), handing rules to a product child (each product crate's command builder) and the
//! `subagent settings`/`subagent trust` commands (the CLI). Every file is read through
//! `subagent_session::read_user_text`; nothing here spawns a process or keeps global state.

#![deny(missing_docs)]

mod effective;
mod error;
mod file;
mod hooks;
mod mode;
mod pattern;
mod permissions;
mod render;
mod rule;
mod scope;
mod tools;
mod trust;

pub use effective::{EffectiveSettings, FileRead, FlagSettings, Ignored};
pub use error::{Error, Result};
pub use file::{MAX_SETTINGS_BYTES, SettingsFile};
pub use hooks::{DEFAULT_HOOK_TIMEOUT, HookCommand, HookEvent, HookGroup, Hooks};
pub use mode::PermissionMode;
pub use pattern::normalize;
pub use permissions::{Decision, Permissions, SourcedRule};
pub use rule::{MatchContext, Rule, ToolCall};
pub use scope::{Locations, Scope, Sourced};
pub use tools::{claude_tool_name, our_tool_name, tool_name_table};
pub use trust::{Trust, TrustState};
