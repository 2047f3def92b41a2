//! One child's worktree: made, checked for changes, removed or kept.

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use subagent_core::isolation::Isolated;
use subagent_core::{Run, RunId, WorktreeReport};

use crate::git::Git;
use crate::{Error, Result};

/// The lock file, in the git common dir (`.git`), that orders worktree additions and removals
/// on one repository.
pub const LOCK_FILE: &str = "subagent-worktrees.lock";

/// The prefix of a worktree's branch: `subagent/<id>`.
pub const BRANCH_PREFIX: &str = "subagent/";

/// The most of a diffstat an outcome carries, in bytes (cut at a line, marked).
pub const DIFFSTAT_LIMIT: usize = 4096;

/// A worktree made for one child.
#[derive(Debug)]
pub(crate) struct Worktree {
    git: Git,
    /// The parent's work tree (its top directory), where worktrees are added and removed.
    repo: PathBuf,
    /// The repository's lock file.
    lock: PathBuf,
    /// The worktree.
    pub(crate) path: PathBuf,
    /// Its branch.
    pub(crate) branch: String,
    /// The commit it started from.
    base: String,
    /// The child's working directory: the parent's subdirectory, inside the worktree.
    pub(crate) child_cwd: PathBuf,
}

/// Holds the repository's worktree lock while alive (a file lock, released on drop).
struct Lock {
    _file: std::fs::File,
}

async fn lock(path: &Path) -> Result<Lock> {
    let path = path.to_path_buf();
    let io = |path: &Path, source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let failed = path.clone();
    tokio::task::spawn_blocking(move || {
        let file = std::fs::OpenOptions::new()
            .mode(0o600)
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io(&path, e))?;
        file.lock().map_err(|e| io(&path, e))?;
        Ok(Lock { _file: file })
    })
    .await
    .map_err(|e| io(&failed, std::io::Error::other(e.to_string())))?
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().trim().to_owned()
}

/// `text` cut to [`DIFFSTAT_LIMIT`] bytes at a line boundary, marked when cut.
fn bounded(text: &str) -> String {
    let text = text.trim_end();
    if text.len() <= DIFFSTAT_LIMIT {
        return text.to_owned();
    }
    let cut = &text[..text.floor_char_boundary(DIFFSTAT_LIMIT - 32)];
    let cut = cut.rfind('\n').map_or(cut, |at| &cut[..at]);
    format!("{cut}\n … (diffstat cut)")
}

impl Worktree {
    /// Adds a worktree of the repository containing `parent_cwd`, at its `HEAD`, on a new
    /// branch, in `root` (see the crate docs).
    pub(crate) async fn create(git: Git, root: &Path, parent_cwd: &Path) -> Result<Self> {
        let not_a_repository = |detail: String| Error::NotARepository {
            cwd: parent_cwd.to_path_buf(),
            detail,
        };
        if !parent_cwd.is_absolute() || !parent_cwd.is_dir() {
            return Err(not_a_repository(
                "not an existing absolute directory".into(),
            ));
        }
        let located = git
            .output(
                parent_cwd,
                [
                    "rev-parse",
                    "--path-format=absolute",
                    "--show-toplevel",
                    "--git-common-dir",
                    "--show-prefix",
                ],
                None,
            )
            .await?;
        if !located.status_ok {
            return Err(not_a_repository(first_line(&located.stderr)));
        }
        let mut lines = located.stdout.lines();
        let (Some(repo), Some(common)) = (lines.next(), lines.next()) else {
            return Err(not_a_repository(format!(
                "unexpected output of git rev-parse: {:?}",
                located.stdout
            )));
        };
        let prefix = lines.next().unwrap_or_default().to_owned();
        let (repo, common) = (PathBuf::from(repo), PathBuf::from(common));
        let head = git
            .output(
                &repo,
                ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
                None,
            )
            .await?;
        if !head.status_ok {
            return Err(Error::NoCommit { repo });
        }
        let base = head.stdout.trim().to_owned();
        // Private to the user, as every state directory (the worktrees inside are then too).
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(root)
            .map_err(|source| Error::Io {
                path: root.to_path_buf(),
                source,
            })?;
        let id = RunId::new().short();
        let name = repo
            .file_name()
            .map_or_else(|| "repo".into(), |name| name.to_string_lossy());
        let path = root.join(format!("{name}-{id}"));
        let branch = format!("{BRANCH_PREFIX}{id}");
        let lock_file = common.join(LOCK_FILE);
        {
            let _lock = lock(&lock_file).await?;
            git.run(
                &repo,
                [
                    "worktree".as_ref(),
                    "add".as_ref(),
                    "--quiet".as_ref(),
                    "-b".as_ref(),
                    branch.as_ref(),
                    path.as_os_str(),
                    base.as_ref(),
                ] as [&std::ffi::OsStr; 7],
            )
            .await?;
        }
        let worktree = Self {
            git,
            repo,
            lock: lock_file,
            // `--show-prefix` ends with a slash, or is empty at the top.
            child_cwd: match prefix.trim_end_matches('/') {
                "" => path.clone(),
                prefix => path.join(prefix),
            },
            path,
            branch,
            base,
        };
        // The parent's subdirectory may hold nothing git tracks: make it.
        if let Err(source) = std::fs::create_dir_all(&worktree.child_cwd) {
            let error = Error::Io {
                path: worktree.child_cwd.clone(),
                source,
            };
            worktree.remove().await.ok();
            return Err(error);
        }
        Ok(worktree)
    }

    /// What the child changed against the commit it started from: `None` when nothing (no
    /// commit on the branch, no file added, changed or deleted; ignored files do not count),
    /// else the diffstat.
    async fn changes(&self) -> Result<Option<String>> {
        let head = self.git.run(&self.path, ["rev-parse", "HEAD"]).await?;
        let index = self
            .git
            .run(
                &self.path,
                ["rev-parse", "--path-format=absolute", "--git-path", "index"],
            )
            .await?;
        let index = PathBuf::from(index.trim());
        // A scratch copy of the worktree's index takes every new, changed and deleted file,
        // so the diffstat counts them all and the worktree's own index stays as it was.
        let scratch = index.with_file_name("subagent-changes-index");
        match copy_with_mtime(&index, &scratch) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(Error::Io {
                    path: scratch,
                    source,
                });
            }
        }
        let stat = self.diffstat(&scratch).await;
        std::fs::remove_file(&scratch).ok();
        let stat = stat?;
        if head.trim() == self.base && stat.trim().is_empty() {
            return Ok(None);
        }
        Ok(Some(if stat.trim().is_empty() {
            "commits on the branch, no file changed".to_owned()
        } else {
            bounded(&stat)
        }))
    }

    async fn diffstat(&self, scratch: &Path) -> Result<String> {
        let added = self
            .git
            .output(&self.path, ["add", "--all"], Some(scratch))
            .await?;
        if !added.status_ok {
            return Err(Error::Git {
                command: "git add --all (scratch index)".into(),
                cwd: self.path.clone(),
                stderr: added.stderr,
            });
        }
        let stat = self
            .git
            .output(
                &self.path,
                [
                    "diff",
                    "--cached",
                    "--stat=100",
                    "--stat-count=40",
                    self.base.as_str(),
                ],
                Some(scratch),
            )
            .await?;
        if !stat.status_ok {
            return Err(Error::Git {
                command: "git diff --cached --stat (scratch index)".into(),
                cwd: self.path.clone(),
                stderr: stat.stderr,
            });
        }
        Ok(stat.stdout)
    }

    /// Removes the worktree and its branch.
    async fn remove(&self) -> Result<()> {
        let _lock = lock(&self.lock).await?;
        self.git
            .run(
                &self.repo,
                [
                    "worktree".as_ref(),
                    "remove".as_ref(),
                    "--force".as_ref(),
                    self.path.as_os_str(),
                ] as [&std::ffi::OsStr; 4],
            )
            .await?;
        self.git
            .run(
                &self.repo,
                ["branch", "-D", "--quiet", self.branch.as_str()],
            )
            .await?;
        Ok(())
    }

    fn report(&self, diffstat: String) -> WorktreeReport {
        WorktreeReport {
            path: self.path.clone(),
            branch: self.branch.clone(),
            diffstat,
        }
    }

    /// The end of the child's run: removed when unchanged (`None`), else kept and reported. A
    /// worktree whose changes cannot be told is kept: nothing is deleted unless known to be
    /// unchanged.
    pub(crate) async fn finish(&self) -> Option<WorktreeReport> {
        match self.changes().await {
            Ok(None) => match self.remove().await {
                Ok(()) => {
                    tracing::debug!(worktree = %self.path.display(), "unchanged worktree removed");
                    None
                }
                Err(error) => {
                    tracing::warn!(worktree = %self.path.display(), %error, "could not remove an unchanged worktree");
                    Some(self.report(format!(
                        "no changes; the worktree could not be removed: {error}"
                    )))
                }
            },
            Ok(Some(diffstat)) => Some(self.report(diffstat)),
            Err(error) => {
                tracing::warn!(worktree = %self.path.display(), %error, "could not tell what a child changed; its worktree is kept");
                Some(self.report(format!("(kept: could not tell what changed: {error})")))
            }
        }
    }
}

#[async_trait]
impl Isolated for Worktree {
    fn attach(self: Box<Self>, run: Run) -> Run {
        let (sender, relayed) = Run::relay(&run);
        tokio::spawn(async move {
            let mut outcome = sender.forward(run).await;
            outcome.worktree = self.finish().await;
            sender.finish(outcome);
        });
        relayed
    }

    async fn abandon(self: Box<Self>) {
        if let Err(error) = self.remove().await {
            tracing::warn!(worktree = %self.path.display(), %error, "could not remove the worktree of a refused start");
        }
    }
}

/// Copies an index file with its modification time. Git trusts a file's size and times (whole
/// seconds) unless the entry is no older than the index file, in which case it compares the
/// content ("racy git"); a copy stamped now would make an edit that keeps the size, made in the
/// second of the checkout, look unchanged.
fn copy_with_mtime(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::copy(from, to)?;
    let modified = std::fs::metadata(from)?.modified()?;
    std::fs::File::options()
        .write(true)
        .open(to)?
        .set_modified(modified)
}
