//! Where definitions come from, in priority order, and the standard directories of each source.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// A source of definitions. The derived order is the priority: a definition from a later source
/// overrides one of the same name from an earlier source
/// (`builtin < plugin < user < project < flag < policy`).
///
/// The default, [`Source::Flag`], is what an inline definition (given as a value for this
/// invocation) belongs to unless its caller says otherwise.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Compiled in: `general-purpose`, `explore`, `plan`.
    Builtin,
    /// Shipped by a plugin.
    Plugin,
    /// The user's own: `~/.subagents/agents`, `~/.claude/agents`.
    User,
    /// The project's: `.subagents/agents`, `.claude/agents` under the project root.
    Project,
    /// Given on the command line for this invocation.
    #[default]
    Flag,
    /// Managed by an administrator; overrides everything else.
    Policy,
}

impl Source {
    /// Every source, lowest priority first.
    pub const ALL: [Source; 6] = [
        Self::Builtin,
        Self::Plugin,
        Self::User,
        Self::Project,
        Self::Flag,
        Self::Policy,
    ];

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Builtin => "builtin",
            Self::Plugin => "plugin",
            Self::User => "user",
            Self::Project => "project",
            Self::Flag => "flag",
            Self::Policy => "policy",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where one definition was read from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "type", content = "path", rename_all = "snake_case")]
pub enum Origin {
    /// Compiled into this crate.
    Builtin,
    /// Given as a value by the caller (a preset, a plugin), not read from a file.
    #[default]
    Inline,
    /// A definition file.
    File(PathBuf),
    /// Given on the command line as the value of this option (`--agents`, inline JSON as Claude
    /// Code's flag takes it, [`crate::parse_agents_json`]).
    CommandLine(String),
}

impl Origin {
    /// The file, if the definition came from one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Self::File(path) => Some(path),
            Self::Builtin | Self::Inline | Self::CommandLine(_) => None,
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Builtin => f.write_str("builtin"),
            Self::Inline => f.write_str("inline"),
            Self::File(path) => write!(f, "{}", path.display()),
            Self::CommandLine(option) => f.write_str(option),
        }
    }
}

/// A directory (or a single `.md` file) of definitions belonging to one source.
///
/// A directory is read recursively; every `*.md` file in it is a definition, hidden entries
/// (names starting with `.`) are skipped. A directory that does not exist is not an error (most
/// users have no `~/.claude/agents`); one that exists but cannot be read is a warning.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SourceDir {
    /// The source its definitions belong to.
    pub source: Source,
    /// The directory or file.
    pub path: PathBuf,
}

impl SourceDir {
    /// A directory of one source.
    pub fn new(source: Source, path: impl Into<PathBuf>) -> Self {
        Self {
            source,
            path: path.into(),
        }
    }
}

/// The standard user and project directories, computed from a home directory and a project root
/// the caller chose (the catalog never reads `HOME` or the current directory itself).
///
/// Order, which is also the order duplicates within a source are resolved in (first wins):
/// `~/.subagents/agents`, `~/.claude/agents`, `<project>/.subagents/agents`,
/// `<project>/.claude/agents`. Our own directory comes before Claude Code's, so a definition
/// written for `subagents` wins over a Claude Code one of the same name in the same source
/// (and a warning names both).
pub fn standard_dirs(home: Option<&Path>, project_root: Option<&Path>) -> Vec<SourceDir> {
    let mut dirs = Vec::new();
    if let Some(home) = home {
        dirs.push(SourceDir::new(Source::User, home.join(".subagents/agents")));
        dirs.push(SourceDir::new(Source::User, home.join(".claude/agents")));
    }
    if let Some(project) = project_root {
        dirs.push(SourceDir::new(
            Source::Project,
            project.join(".subagents/agents"),
        ));
        dirs.push(SourceDir::new(
            Source::Project,
            project.join(".claude/agents"),
        ));
    }
    dirs
}
