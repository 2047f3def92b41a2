//! How a child is kept apart from its parent's files, as data: the [`Isolation`] a request asks
//! for and the [`WorktreeReport`] its outcome carries. The contract that makes the place
//! (`Isolator`, `Isolated`) is in `isolation`, which re-exports both.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::agents::AgentProfile;
use crate::error::{Error, Result};

/// How a child is kept apart from its parent's files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Isolation {
    /// A git worktree of the repository that contains the parent's working directory, on a
    /// branch of its own: the child's edits land there, not in the parent's checkout.
    Worktree,
}

impl Isolation {
    /// Every kind, in order.
    pub const ALL: [Isolation; 1] = [Self::Worktree];

    /// The name, as a call or a definition writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Worktree => "worktree",
        }
    }

    /// Parses a value as a delegation call writes it; any other value is `INVALID_ARGUMENTS`
    /// naming the valid ones.
    pub fn parse(text: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|isolation| isolation.as_str() == text)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "isolation \"{text}\" is not available (valid: {})",
                    Self::valid()
                ))
            })
    }

    /// The isolation a child runs with: the value named in the call, else its agent type's
    /// (`isolation:` of the definition); `INVALID_ARGUMENTS` for a value that is not one of
    /// [`Isolation::ALL`], saying where it came from. The one place a call and an agent type
    /// meet for isolation (the delegation tool and `subagent delegate` both use it;
    /// `StartRequestBuilder::agent` does not, since a definition's value can be refused).
    pub fn resolve(call: Option<&str>, profile: Option<&AgentProfile>) -> Result<Option<Self>> {
        if let Some(text) = call {
            return Self::parse(text).map(Some);
        }
        match profile.and_then(|profile| profile.isolation.as_deref().map(|t| (profile, t))) {
            None => Ok(None),
            Some((profile, text)) => Self::parse(text).map(Some).map_err(|_| {
                Error::invalid(format!(
                    "agent type \"{}\" asks for isolation \"{text}\", which is not available (valid: {})",
                    profile.name,
                    Self::valid()
                ))
            }),
        }
    }

    fn valid() -> String {
        Self::ALL
            .iter()
            .map(|isolation| isolation.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl std::fmt::Display for Isolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A worktree an isolated child left changes in, kept for the user: where it is, its branch,
/// and what changed. (A worktree the child did not change is removed with its branch and not
/// reported.)
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorktreeReport {
    /// The worktree's directory.
    pub path: PathBuf,
    /// Its branch (`subagent/<id>`).
    pub branch: String,
    /// `git diff --stat` of the child's changes against the commit it started from (new files
    /// included), bounded.
    pub diffstat: String,
}
