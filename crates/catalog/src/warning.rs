//! Load warnings: what a listing shows next to the agents, each naming a file and a line.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

use crate::location::Location;

/// What kind of problem a [`Warning`] reports, and so what happened to the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WarningKind {
    /// A file or directory could not be read. The file is skipped.
    Unreadable,
    /// The file is not a valid definition (no frontmatter, bad YAML, a known field with a bad
    /// value, a bad name). The file is skipped; a lower-priority definition of the same name, if
    /// any, stays in effect.
    Invalid,
    /// A field this catalog does not know. The field is ignored and the definition loads.
    UnknownField,
    /// No `description`: the definition loads, but the model is not told when to use it.
    MissingDescription,
    /// Two definitions of one name in one source. The first (directory order, then path order)
    /// is used; the warning names both.
    Duplicate,
    /// The definition asks for something its provider cannot do (see
    /// [`capability_warnings`](crate::capability_warnings)). It loads; starting it fails with
    /// `UNSUPPORTED_CAPABILITY`.
    Unsupported,
    /// The definition names a provider that is not registered. It loads; starting it fails with
    /// `UNKNOWN_PROVIDER`.
    UnknownProvider,
    /// `tools` or `disallowedTools` names a tool no known provider has (a typo, most likely; the
    /// message names the closest known tool). It loads; the name matches nothing.
    UnknownTool,
    /// The definition's tool filter leaves it none of its provider's tools. It loads; the child
    /// starts with no tools.
    NoTools,
    /// A field Claude Code honours that this catalog reads but no provider acts on
    /// (`hooks`, `initialPrompt`, `isolation: remote`). The
    /// definition loads; the message says what the agent does without it.
    UnsupportedField,
    /// An agent definition's `skills:` names a skill no `SKILL.md` defines. The definition
    /// loads; its children start without that skill.
    UnknownSkill,
}

/// One load warning. `Display` gives `path:line:column: message` (the parts that are known).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// What kind of problem.
    pub kind: WarningKind,
    /// The file (or directory) it is about; `None` for a built-in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// Where in the file.
    #[serde(flatten)]
    pub location: Location,
    /// What is wrong, for a person.
    pub message: String,
}

impl Warning {
    /// A warning about a file.
    pub fn new(
        kind: WarningKind,
        path: impl Into<PathBuf>,
        location: Location,
        message: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            path: Some(path.into()),
            location,
            message: message.into(),
        }
    }

    /// A warning about no file in particular (a built-in definition).
    pub fn unplaced(kind: WarningKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            path: None,
            location: Location::NONE,
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{}{}: {}", path.display(), self.location, self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl From<crate::Error> for Warning {
    fn from(error: crate::Error) -> Self {
        match error {
            crate::Error::Io { path, message } => {
                Warning::new(WarningKind::Unreadable, path, Location::NONE, message)
            }
            crate::Error::Invalid {
                path,
                location,
                message,
            } => Warning::new(WarningKind::Invalid, path, location, message),
            crate::Error::CommandLine { option, message } => {
                Warning::new(WarningKind::Invalid, option, Location::NONE, message)
            }
        }
    }
}
