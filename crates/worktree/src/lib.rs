//! `subagent-worktree`: worktree isolation, the [`Isolator`] a registry uses for requests with
//! `isolation: worktree`.
//!
//! Owns the life of one child's git worktree, through the real `git` (run by
//! `subagent-process`: argv only, the user's environment without model keys nor the variables
//! that point git elsewhere):
//!
//! - **made** from the repository that contains the *parent's* working directory
//!   (`request.parent.cwd`, never the process's), at the parent's `HEAD` commit, on a new branch
//!   `subagent/<id>` (`<id>`: 8 hex digits), in `<state dir>/<repo name>-<id>`: the state dir
//!   is `$XDG_STATE_HOME/subagents/worktrees`, else `~/.local/state/subagents/worktrees`
//!   ([`Worktrees::with_root`] picks another). Outside the work tree, so it never shows in the
//!   user's `git status`; and not under `.git`, where Claude Code refuses to edit ("a sensitive
//!   file", seen with 2.1.197). The request's cwd then points at the same subdirectory inside
//!   the worktree (a parent in `repo/src` has a child in `<worktree>/src`). A parent outside
//!   any work tree, or a repository without a commit, is `INVALID_ARGUMENTS` and nothing is
//!   made;
//! - **ended** when the child's run ends, however it ends (completed, failed, cancelled): the
//!   worktree is compared with the commit it started from, new and deleted files included
//!   (through a scratch copy of its index, so the worktree's own index is left as the child
//!   left it) and its branch with that commit. Unchanged, worktree and branch are removed;
//!   changed, both are kept and the outcome's `worktree` says where, which branch, and the
//!   diffstat. Files git ignores (build output) do not count as changes;
//! - **abandoned** (removed with its branch) when the provider refuses the start.
//!
//! Git's own bookkeeping of worktrees is not safe under concurrent `worktree add`/`remove` and
//! branch deletion on one repository (seen: `failed to read .git/worktrees/…/commondir`,
//! `could not lock config file`), so every such step holds an exclusive lock on
//! `<git common dir>/subagent-worktrees.lock` (a file lock: it also orders several processes on
//! one repository). Checking a worktree for changes needs no lock.
//!
//! Deliberately not here: what the child may touch (each provider confines its child to the cwd
//! it is given: the `isolation` capability), and worktrees of a host that died before its
//! children ended — they stay, listed by `git worktree list`, removed with `git worktree
//! remove`.

mod git;
mod place;

use std::ffi::OsString;
use std::path::PathBuf;

use async_trait::async_trait;
use subagent_core::isolation::{Isolated, Isolator};
use subagent_core::{Isolation, StartRequest};

pub use place::{BRANCH_PREFIX, DIFFSTAT_LIMIT, LOCK_FILE};

/// Errors of this crate. At the seam they become `INVALID_ARGUMENTS` (the parent is not in a
/// repository that can have a worktree: fix the request) or `SPAWN_FAILED` (git failed).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The parent's working directory is not inside a git work tree. Returned when preparing;
    /// retrying does not help, run the parent in a repository or drop the isolation.
    #[error(
        "worktree isolation needs the parent's working directory to be inside a git repository: {} is not ({detail})",
        cwd.display()
    )]
    NotARepository {
        /// The parent's working directory.
        cwd: PathBuf,
        /// What git said.
        detail: String,
    },
    /// The repository has no commit for a worktree to start from. Returned when preparing;
    /// retrying helps after a first commit.
    #[error(
        "worktree isolation needs a commit to start from: the repository at {} has none yet",
        repo.display()
    )]
    NoCommit {
        /// The repository's top directory.
        repo: PathBuf,
    },
    /// A git command failed. Whether retrying helps depends on what git said.
    #[error("{command} (in {}) failed: {stderr}", cwd.display())]
    Git {
        /// The command.
        command: String,
        /// Where it ran.
        cwd: PathBuf,
        /// Its stderr.
        stderr: String,
    },
    /// Git could not be run (not installed, not executable) or its output not read.
    #[error("could not run {command}: {source}")]
    Run {
        /// The command.
        command: String,
        /// Why.
        #[source]
        source: subagent_process::Error,
    },
    /// A file of ours (the lock, a scratch index, the child's subdirectory) could not be
    /// made or used.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The seam's error: `INVALID_ARGUMENTS` for a parent that cannot have a worktree,
    /// `SPAWN_FAILED` otherwise.
    pub fn to_core(&self) -> subagent_core::Error {
        match self {
            Self::NotARepository { .. } | Self::NoCommit { .. } => {
                subagent_core::Error::invalid(self.to_string())
            }
            _ => subagent_core::Error::spawn_failed(format!(
                "could not make the child's worktree: {self}"
            )),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The isolator: makes, ends and abandons worktrees (see the crate docs). Install it with
/// `Registry::set_isolator(Arc::new(Worktrees::new()))`.
#[derive(Clone, Debug)]
pub struct Worktrees {
    git: git::Git,
    /// Where worktrees go, or why there is no such place.
    root: std::result::Result<PathBuf, String>,
}

/// The state dir of `env`: `$XDG_STATE_HOME/subagents/worktrees` (absolute), else
/// `$HOME/.local/state/subagents/worktrees`.
fn state_dir(env: &[(OsString, OsString)]) -> std::result::Result<PathBuf, String> {
    let get = |name: &str| {
        env.iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| PathBuf::from(value))
            .filter(|path| path.is_absolute())
    };
    let base = get("XDG_STATE_HOME")
        .or_else(|| get("HOME").map(|home| home.join(".local/state")))
        .ok_or_else(|| {
            "no directory for worktrees: neither XDG_STATE_HOME nor HOME is an absolute path"
                .to_owned()
        })?;
    Ok(base.join("subagents/worktrees"))
}

impl Default for Worktrees {
    fn default() -> Self {
        Self::new()
    }
}

impl Worktrees {
    /// `git` from `PATH`, run with this process's environment (`subagent_session::env`, the
    /// withdrawn variables included; less model keys and the variables that point git
    /// elsewhere); worktrees in the state dir of that environment.
    pub fn new() -> Self {
        Self::with_environment(subagent_session::env::vars_os())
    }

    /// `git` from `env`'s `PATH`, run with `env` (less model keys and the variables that point
    /// git elsewhere) instead of this process's environment, worktrees in `env`'s state dir:
    /// tests use it rather than change their own environment.
    pub fn with_environment(env: impl IntoIterator<Item = (OsString, OsString)>) -> Self {
        let env: Vec<(OsString, OsString)> = env.into_iter().collect();
        Self {
            root: state_dir(&env),
            git: git::Git::new(PathBuf::from("git"), env),
        }
    }

    /// Worktrees in `root` (an absolute directory, made when needed) instead of the state dir.
    #[must_use]
    pub fn with_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.root = Ok(root.into());
        self
    }

    /// Where worktrees go.
    pub fn root(&self) -> Option<&std::path::Path> {
        self.root.as_deref().ok()
    }
}

#[async_trait]
impl Isolator for Worktrees {
    async fn prepare(
        &self,
        isolation: Isolation,
        request: &mut StartRequest,
    ) -> subagent_core::Result<Box<dyn Isolated>> {
        if isolation != Isolation::Worktree {
            return Err(subagent_core::Error::invalid(format!(
                "isolation \"{isolation}\" is not available (valid: worktree)"
            )));
        }
        let root = self.root.as_ref().map_err(|reason| {
            subagent_core::Error::spawn_failed(format!(
                "could not make the child's worktree: {reason}"
            ))
        })?;
        let place = place::Worktree::create(self.git.clone(), root, &request.parent.cwd)
            .await
            .map_err(|error| error.to_core())?;
        request.parent.cwd.clone_from(&place.child_cwd);
        tracing::debug!(
            worktree = %place.path.display(),
            branch = %place.branch,
            "worktree made"
        );
        Ok(Box::new(place))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        vars.iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn worktrees_go_to_the_state_dir_of_the_environment() {
        let root = |vars: &[(&str, &str)]| Worktrees::with_environment(env(vars)).root;
        assert_eq!(
            root(&[("XDG_STATE_HOME", "/state"), ("HOME", "/home/u")]),
            Ok(PathBuf::from("/state/subagents/worktrees"))
        );
        assert_eq!(
            root(&[("XDG_STATE_HOME", "relative"), ("HOME", "/home/u")]),
            Ok(PathBuf::from("/home/u/.local/state/subagents/worktrees"))
        );
        assert_eq!(
            root(&[("PATH", "/bin")]),
            Err(
                "no directory for worktrees: neither XDG_STATE_HOME nor HOME is an absolute path"
                    .to_owned()
            )
        );
        assert_eq!(
            Worktrees::with_environment(env(&[]))
                .with_root("/elsewhere")
                .root(),
            Some(std::path::Path::new("/elsewhere"))
        );
    }
}
