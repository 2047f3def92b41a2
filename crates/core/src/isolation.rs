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

use async_trait::async_trait;

pub use crate::apart::{Isolation, WorktreeReport};
use crate::{Result, Run, StartRequest};

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
