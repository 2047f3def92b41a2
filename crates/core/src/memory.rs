//! Agent memory, as Claude Code's `memory:` frontmatter has it: the vocabulary the catalog
//! (which reads the field and resolves the directory) and the runtime (which loads the index
//! into a run's first request and lets its file tools reach the directory) share without
//! depending on each other.
//!
//! An agent type with `memory: user | project | local` has a directory of its own that
//! survives its runs: `~/.claude/agent-memory/<agent>/`, `<project>/.claude/agent-memory/<agent>/`
//! or `<project>/.claude/agent-memory-local/<agent>/`. Its `MEMORY.md` is the index, loaded (the
//! first [`MAX_INDEX_LINES`] lines, at most [`MAX_INDEX_BYTES`]) into each run's instructions.
//! Pure data and path arithmetic: nothing here touches the disk.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The index file of a memory directory, always loaded into the agent's instructions.
pub const INDEX_FILE: &str = "MEMORY.md";

/// How many lines of the index are loaded (Claude Code's bound).
pub const MAX_INDEX_LINES: usize = 200;

/// How many bytes of the index are loaded, after the line bound (Claude Code's bound).
pub const MAX_INDEX_BYTES: usize = 25_000;

/// Who shares an agent's memory: the scopes of Claude Code's `memory:` field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemoryScope {
    /// The user's, across projects: `~/.claude/agent-memory/<agent>/`.
    User,
    /// The project's, shared through version control: `<project>/.claude/agent-memory/<agent>/`.
    Project,
    /// The user's in this project, not checked in:
    /// `<project>/.claude/agent-memory-local/<agent>/`.
    Local,
}

impl MemoryScope {
    /// Every scope, in the order the field's error message names them.
    pub const ALL: [Self; 3] = [Self::User, Self::Project, Self::Local];

    /// Parses `user`, `project` or `local` (exactly: Claude Code takes no other spelling).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|scope| scope.as_str() == text)
    }

    /// The name as written in a definition.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Project => "project",
            Self::Local => "local",
        }
    }

    /// The guideline the agent is given about what this scope's memory should hold (what is
    /// shared with whom).
    pub fn guideline(self) -> &'static str {
        match self {
            Self::User => {
                "- Since this memory is user-scope, keep learnings general since they apply across all projects"
            }
            Self::Project => {
                "- Since this memory is project-scope and shared with your team via version control, tailor your memories to this project"
            }
            Self::Local => {
                "- Since this memory is local-scope (not checked into version control), tailor your memories to this project and machine"
            }
        }
    }
}

impl std::fmt::Display for MemoryScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One agent type's memory: its scope and its directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentMemory {
    /// Who shares it.
    pub scope: MemoryScope,
    /// The directory (absolute), which need not exist yet: a run creates it.
    pub dir: PathBuf,
}

/// Where the scopes' directories are: the user's home and the project (the working directory
/// the agent types were read for).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryRoots {
    /// The user's home (`HOME`); without it, `user` memory has no directory.
    pub home: Option<PathBuf>,
    /// The project; without it, `project` and `local` memory have no directory.
    pub project: Option<PathBuf>,
}

impl MemoryRoots {
    /// Roots at this home and project.
    pub fn new(home: Option<&Path>, project: Option<&Path>) -> Self {
        Self {
            home: home.map(Path::to_path_buf),
            project: project.map(Path::to_path_buf),
        }
    }

    /// The memory of agent type `agent` in `scope`: `None` when the scope's root is unknown.
    pub fn resolve(&self, scope: MemoryScope, agent: &str) -> Option<AgentMemory> {
        let name = dir_name(agent);
        let dir = match scope {
            MemoryScope::User => self.home.as_ref()?.join(".claude/agent-memory").join(name),
            MemoryScope::Project => self
                .project
                .as_ref()?
                .join(".claude/agent-memory")
                .join(name),
            MemoryScope::Local => self
                .project
                .as_ref()?
                .join(".claude/agent-memory-local")
                .join(name),
        };
        Some(AgentMemory { scope, dir })
    }
}

/// The directory name of an agent type's memory, as Claude Code makes it: every character but
/// ASCII letters, digits, `-` and `_` becomes `-` (`plugin:reviewer` → `plugin-reviewer`, so no
/// name reaches outside the scope's folder), and an empty name is `unknown`.
pub fn dir_name(agent: &str) -> String {
    let name: String = agent
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if name.is_empty() {
        "unknown".to_owned()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_scope_has_claude_codes_directory() {
        let roots = MemoryRoots::new(Some(Path::new("/home/u")), Some(Path::new("/work/p")));
        let dirs: Vec<PathBuf> = MemoryScope::ALL
            .into_iter()
            .map(|scope| roots.resolve(scope, "reviewer").unwrap().dir)
            .collect();
        assert_eq!(
            dirs,
            vec![
                PathBuf::from("/home/u/.claude/agent-memory/reviewer"),
                PathBuf::from("/work/p/.claude/agent-memory/reviewer"),
                PathBuf::from("/work/p/.claude/agent-memory-local/reviewer"),
            ]
        );
        let homeless = MemoryRoots::new(None, Some(Path::new("/work/p")));
        assert_eq!(homeless.resolve(MemoryScope::User, "reviewer"), None);
    }

    #[test]
    fn a_name_never_leaves_its_scopes_folder() {
        assert_eq!(dir_name("plugin:rev.iewer"), "plugin-rev-iewer");
        assert_eq!(dir_name("../../etc"), "------etc");
        assert_eq!(dir_name("a/b"), "a-b");
        assert_eq!(dir_name(""), "unknown");
        assert_eq!(dir_name("ok_name-2"), "ok_name-2");
    }

    #[test]
    fn scopes_read_only_their_own_spelling() {
        for scope in MemoryScope::ALL {
            assert_eq!(MemoryScope::parse(scope.as_str()), Some(scope));
        }
        assert_eq!(MemoryScope::parse("User"), None);
        assert_eq!(MemoryScope::parse("global"), None);
    }
}
