//! Skills, as Claude Code has them: the vocabulary the catalog (which finds and reads `SKILL.md`
//! folders) and the runtime (whose `Skill` tool lists and loads them) share without depending
//! on each other, as they share agent profiles through [`AgentDirectory`](crate::agents::AgentDirectory).
//!
//! A skill is a folder with a `SKILL.md`: YAML frontmatter (`name`, `description`,
//! `allowed-tools`) and a Markdown body. The model is shown every skill's name and description;
//! the body is read only when a `Skill` call (or an agent definition's `skills:`) asks for it.

use std::path::PathBuf;

use serde::Serialize;

/// What the model is shown of one skill before it is used, and what a listing shows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SkillSummary {
    /// The name the model calls it by: its folder's name, as Claude Code lists it.
    pub name: String,
    /// The frontmatter's `name`, when it differs from the folder's (a call may use it too).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// When to use it (the frontmatter's `description`, else the body's first line).
    pub description: String,
    /// The folder (`…/.claude/skills/<name>`): the "base directory" the model is told.
    pub dir: PathBuf,
    /// The frontmatter's `allowed-tools`, as written (`Bash(git:*)`, `Read`). A skill that
    /// names any needs permission to be loaded (Claude Code asks before such a skill runs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_tools: Vec<String>,
    /// Where it comes from (`user`, `project`), for listings.
    pub source: String,
}

impl SkillSummary {
    /// Whether a call naming `name` means this skill (its folder's name, or its frontmatter's).
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.alias.as_deref() == Some(name)
    }
}

/// A skill read in full, for a `Skill` call or a preload.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LoadedSkill {
    /// What the listing showed.
    pub summary: SkillSummary,
    /// The body: everything after the frontmatter, as written.
    pub body: String,
    /// The folder's other files, relative to it, sorted (the model reads them when the body
    /// points at them).
    pub files: Vec<PathBuf>,
}

/// Where the skills of a run come from (the catalog implements it; tests give a fixed list).
pub trait SkillDirectory: Send + Sync {
    /// Every skill, in the order the model is shown them.
    fn skills(&self) -> Vec<SkillSummary>;

    /// Reads the skill a call names (its folder's name or its frontmatter's): its body and the
    /// folder's other files. `Err` is [`Error::UnknownSkill`](crate::Error::UnknownSkill) when
    /// there is none of that name, or its file no longer reads.
    fn load(&self, name: &str) -> crate::Result<LoadedSkill>;
}

/// The skills an agent type preloads (its definition's `skills:`), handed to the child in its
/// request's `parent.extensions` ([`AgentProfile::give`](crate::agents::AgentProfile::give)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreloadSkills(pub Vec<String>);
