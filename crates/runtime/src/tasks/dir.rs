//! Where task output files live, and how old ones go.
//!
//! A [`TaskDir`] is a root shared by every run given it (the CLI's is in the state dir beside
//! the sessions, `<state dir>/subagents/tasks/<project>`; without one, `<temp dir>/subagent-tasks`).
//! Each run's files go to `<root>/<run id>/<task id>.jsonl`. Nothing is computed or made until
//! a run starts its first background task: then its directory is made and, once per `TaskDir`
//! value, the root is pruned of run directories untouched for [`TASK_RETENTION`] (7 days).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Once};
use std::time::{Duration, SystemTime};

use subagent_core::RunId;

/// How long a run's task directory is kept after its last change (the newest of the directory
/// and its files): 7 days.
pub const TASK_RETENTION: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// A root for runs' task directories (see the module docs). Cloning shares it.
#[derive(Clone)]
pub struct TaskDir(Arc<Inner>);

struct Inner {
    root: PathBuf,
    pruned: Once,
}

impl std::fmt::Debug for TaskDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TaskDir").field(&self.0.root).finish()
    }
}

impl TaskDir {
    /// Runs' task directories under `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self(Arc::new(Inner {
            root: root.into(),
            pruned: Once::new(),
        }))
    }

    /// `<temp dir>/subagent-tasks`: the root when none is configured.
    pub fn temp() -> Self {
        Self::new(std::env::temp_dir().join("subagent-tasks"))
    }

    /// The root.
    pub fn root(&self) -> &Path {
        &self.0.root
    }

    /// The directory of run `run`'s tasks.
    pub fn run_dir(&self, run: RunId) -> PathBuf {
        self.0.root.join(run.to_string())
    }

    /// Removes run directories untouched for [`TASK_RETENTION`], the first time it is called
    /// on this value (or a clone of it); later calls return at once.
    pub fn prune_once(&self) {
        self.0
            .pruned
            .call_once(|| prune(&self.0.root, TASK_RETENTION, SystemTime::now()));
    }
}

/// Removes every directory of `root` named like a run id whose newest change (the directory's
/// own, or a file's in it) is older than `retention` before `now`. Anything else in `root` is
/// left alone; failures are warnings.
fn prune(root: &Path, retention: Duration, now: SystemTime) {
    let Some(cutoff) = now.checked_sub(retention) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let is_run = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.parse::<RunId>().is_ok());
        let path = entry.path();
        let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir());
        if !is_run || !is_dir || newest_change(&path).is_none_or(|newest| newest >= cutoff) {
            continue;
        }
        if let Err(error) = std::fs::remove_dir_all(&path) {
            tracing::warn!(path = %path.display(), %error, "cannot remove an old task directory");
        }
    }
}

/// The latest modification time of `dir` and of the entries in it.
fn newest_change(dir: &Path) -> Option<SystemTime> {
    let own = std::fs::symlink_metadata(dir)
        .and_then(|meta| meta.modified())
        .ok()?;
    let entries = std::fs::read_dir(dir).ok()?;
    Some(
        entries
            .flatten()
            .filter_map(|entry| entry.metadata().and_then(|meta| meta.modified()).ok())
            .fold(own, SystemTime::max),
    )
}
