//! `subagent-catalog`: agent definitions.
//!
//! Owns:
//! - reading definition files: Markdown with YAML frontmatter, Claude Code's fields plus our
//!   `provider` and `persona`, the body being the system prompt ([`parse_definition`],
//!   [`load_file`]; the decisions on unknown fields, missing names and bad values are in the
//!   `parse` module's docs);
//! - sources and their priority (`builtin < plugin < user < project < flag < policy`,
//!   [`Source`]), the standard directories computed from a home and a project root the caller
//!   gives ([`standard_dirs`]), duplicates within one source reported ([`WarningKind::Duplicate`]);
//! - definitions given on the command line as JSON, as Claude Code's `--agents` flag takes them
//!   ([`parse_agents_json`]);
//! - the built-ins `general-purpose`, `explore`, `plan` ([`builtins`]);
//! - the [`Catalog`]: load, reload, listing with the source of each definition and what it
//!   overrides, load warnings with `path:line:column`, and [`AgentDirectory`] for the delegation
//!   tool (definitions become [`AgentProfile`](subagent_core::agents::AgentProfile)s);
//! - skills, as Claude Code has them: `SKILL.md` folders under `.claude/skills/` (and the
//!   `.subagents/` twins) of the user and the project ([`standard_skill_dirs`], [`Skills`]),
//!   their frontmatter read with locations ([`parse_skill`]), their bodies read only when used
//!   ([`Skills`] is the runtime's `SkillDirectory`);
//! - agent memory: a definition's `memory:` scope resolved to its directory under the home and
//!   project of [`CatalogConfig::memory`] (`AgentProfile::memory`, docs/memory.md);
//! - checking definitions against their providers' capabilities ([`capability_warnings`]) and
//!   tools ([`tool_warnings`]: unknown tool names with a guess, a filter that leaves no tools);
//! - remembering which definition files did not load under the name they would have defined
//!   ([`Catalog::failed_definitions`]), so that "unknown agent type" can say why;
//! - a definition's layer of the effective configuration ([`Definition::settings`]); the
//!   resolver itself (request > definition > persona > parent, permission modes and tool
//!   filters intersected: [`resolve`]) is `subagent_core::agents`', re-exported here.
//!
//! Deliberately not here: where the home directory or the project root is (the CLI decides and
//! passes them), watching files (the caller calls [`Catalog::reload`]), resolving model aliases
//! (the provider does), and starting anything (the delegation tool reads profiles through
//! [`AgentDirectory`] and goes through the registry).
//!
//! [`AgentDirectory`]: subagent_core::agents::AgentDirectory

mod builtin;
mod capability;
mod catalog;
mod definition;
mod error;
mod inline;
mod location;
mod parse;
mod skill;
mod skills;
mod source;
mod tools;
mod warning;

pub use builtin::{BUILTIN_NAMES, BuiltinOptions, EXPLORE_MAX_TURNS, READ_ONLY_TOOLS, builtins};
pub use capability::{ProviderTable, capability_warnings, closest, tool_warnings};
pub use catalog::{Catalog, CatalogConfig, Entry, MAX_DIR_DEPTH, Reloaded};
pub use definition::{Definition, Isolation};
pub use error::{Error, Result};
pub use inline::{MAX_INLINE_BYTES, parse_agents_json};
pub use location::Location;
pub use parse::{
    KNOWN_FIELDS, MAX_FILE_BYTES, MAX_NAME_CHARS, Parsed, load_file, parse_definition,
};
pub use skill::{ParsedSkill, SKILL_FILE, parse_skill, skill_body, skill_files};
pub use skills::{MAX_SKILL_FILES, SkillEntry, Skills, standard_skill_dirs};
pub use source::{Origin, Source, SourceDir, standard_dirs};
pub use subagent_core::agents::{Effective, Layers, Settings, intersect_filters, resolve};
pub use tools::{TOOL_ALIASES, split_tool_list, tool_aliases, with_aliases};
pub use warning::{Warning, WarningKind};
