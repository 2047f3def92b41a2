//! Isolation: a child that works apart from its parent's files.
//!
//! A request asks for it with [`StartRequest::isolation`] (gated by the `isolation`
//! capability: the provider confines its child to `parent.cwd`). The registry does the rest
//! through the [`Isolator`] installed in it (`Registry::set_isolator`; `subagent-worktree`'s is
//! the one the CLI installs): after every gate has passed, the isolator makes the place (a git
//! worktree), points the request's `parent.cwd` into it, and takes over the started run
//! ([`Isolated::attach`]) to clean up when it ends and report what it kept in
//! [`Outcome::worktree`](crate::Outcome::worktree). So every provider gets the same isolation,
//! whoever starts the child. Core only names the contract: it makes no directory and runs no
//! git.

use std::path::PathBuf;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::agents::AgentProfile;
use crate::{Error, Result, Run, StartRequest};

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

/// Makes the isolated place of a child and owns it. Installed in a registry
/// (`Registry::set_isolator`), which calls it for every start that asks for isolation, after
/// every gate has passed.
#[async_trait]
pub trait Isolator: Send + Sync {
    /// Makes the place for the child of `request` and points `request.parent.cwd` into it.
    /// Errors (`INVALID_ARGUMENTS` for a parent outside any git repository, say) refuse the
    /// start; nothing is left behind.
    async fn prepare(
        &self,
        isolation: Isolation,
        request: &mut StartRequest,
    ) -> Result<Box<dyn Isolated>>;
}

/// An isolated place made for one child.
#[async_trait]
pub trait Isolated: Send {
    /// Takes over the child's run and returns the run its caller sees (the same id, events and
    /// cancellation, see [`Run::relay`]): when the child ends (completed, failed or cancelled
    /// alike) the place is cleaned up, and what was kept is reported in the outcome.
    fn attach(self: Box<Self>, run: Run) -> Run;

    /// The provider refused to start: removes the place.
    async fn abandon(self: Box<Self>);
}
