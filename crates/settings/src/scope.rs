//! Where settings come from: the scopes in precedence order, the files each reads, and a value
//! tagged with its source.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// A source of settings, highest precedence first (the derived order: `Managed < Flags < …`
/// means "ranks above").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The managed policy file (default [`Locations::DEFAULT_MANAGED`]).
    Managed,
    /// The command line: `--allowedTools`, `--disallowedTools`, `--permission-mode`,
    /// `--settings FILE|JSON`.
    Flags,
    /// A preset's `settings:` key.
    Preset,
    /// `.subagents/settings.local.json`, then `.claude/settings.local.json` of the project.
    ProjectLocal,
    /// `.subagents/settings.json`, then `.claude/settings.json` of the project.
    Project,
    /// `~/.subagents/settings.json`, then `~/.claude/settings.json`.
    User,
    /// An agent definition's `hooks:` frontmatter (hooks only, scoped to that agent's run): not
    /// a settings file, listed last.
    Agent,
}

impl Scope {
    /// Every scope, highest precedence first.
    pub const ALL: [Scope; 7] = [
        Self::Managed,
        Self::Flags,
        Self::Preset,
        Self::ProjectLocal,
        Self::Project,
        Self::User,
        Self::Agent,
    ];

    /// The name `subagent settings` prints.
    pub fn name(self) -> &'static str {
        match self {
            Self::Managed => "managed",
            Self::Flags => "flags",
            Self::Preset => "preset",
            Self::ProjectLocal => "project-local",
            Self::Project => "project",
            Self::User => "user",
            Self::Agent => "agent",
        }
    }

    /// Whether the scope's files belong to the project (a cloned repository can write them):
    /// their `allow` rules count only once the workspace is trusted.
    pub fn is_project(self) -> bool {
        matches!(self, Self::ProjectLocal | Self::Project)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the settings files are: the managed policy file, the home directory, the project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Locations {
    /// The managed policy file; `None`: no managed settings.
    pub managed: Option<PathBuf>,
    /// The user's home; `None`: no user settings (and no trust record).
    pub home: Option<PathBuf>,
    /// The project directory (the run's directory).
    pub project: PathBuf,
}

impl Locations {
    /// Where Claude Code reads managed settings on Linux.
    pub const DEFAULT_MANAGED: &'static str = "/etc/claude-code/managed-settings.json";

    /// The managed file at its default place, `home` and `project`.
    pub fn new(project: impl Into<PathBuf>, home: Option<PathBuf>) -> Self {
        Self {
            managed: Some(PathBuf::from(Self::DEFAULT_MANAGED)),
            home,
            project: project.into(),
        }
    }

    /// Every settings file, `(scope, path)`, highest precedence first; within a scope the
    /// `.subagents/` twin before the `.claude/` file. Files that do not exist are listed too.
    pub fn files(&self) -> Vec<(Scope, PathBuf)> {
        let mut files = Vec::new();
        if let Some(managed) = &self.managed {
            files.push((Scope::Managed, managed.clone()));
        }
        for (scope, name) in [
            (Scope::ProjectLocal, "settings.local.json"),
            (Scope::Project, "settings.json"),
        ] {
            for dir in [".subagents", ".claude"] {
                files.push((scope, self.project.join(dir).join(name)));
            }
        }
        if let Some(home) = &self.home {
            for dir in [".subagents", ".claude"] {
                files.push((Scope::User, home.join(dir).join("settings.json")));
            }
        }
        files
    }

    /// `path` as `subagent settings` shows it: relative to the project when inside it, `~/…`
    /// when inside the home, else as it is.
    pub fn show(&self, path: &Path) -> String {
        if let Ok(rest) = path.strip_prefix(&self.project) {
            return rest.display().to_string();
        }
        if let Some(rest) = self.home.as_deref().and_then(|h| path.strip_prefix(h).ok()) {
            return format!("~/{}", rest.display());
        }
        path.display().to_string()
    }
}

/// A value and where it came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// The scope that set it.
    pub scope: Scope,
    /// The file that set it; `None` for flags given inline, a preset or `--settings JSON`.
    pub file: Option<PathBuf>,
}

impl<T> Sourced<T> {
    /// `value` from `scope` and `file`.
    pub fn new(value: T, scope: Scope, file: Option<PathBuf>) -> Self {
        Self { value, scope, file }
    }
}
