//! Deleting the transcripts of the server's runs once no task refers to them.
//!
//! Every in-process run the server starts writes its session transcript into the session store
//! (`<store>/<session id>.jsonl`), and the outcome names it. The task table counts, per
//! transcript, the kept tasks that refer to it (a continued task shares its session's file with
//! the task it continues); when the last of them is forgotten the file is deleted here, and at
//! shutdown so are those of every task still kept. Only a file directly in the store's directory
//! and named as a session (`<UUID>.jsonl`) is ever deleted: a product CLI's own session files
//! (in claude's or codex's directories) are theirs. The directory is never scanned: it also
//! holds the user's own sessions (`subagent run`, `delegate`), which are not the server's.
//!
//! Deleting runs on the blocking pool (an unlink touches the directory and the journal, which
//! on a disk busy with the transcripts' syncs can wait), tracked so that a shutdown waits for
//! every deletion. A file already gone is logged at debug, any other failure at warn; neither
//! fails a request.

use std::path::{Path, PathBuf};

use subagent_core::RunId;
use tokio_util::task::TaskTracker;

/// Which transcripts may be deleted, and the deletions under way.
#[derive(Debug)]
pub struct Transcripts {
    /// The session store's directory; `None`: delete nothing (`--keep-transcripts`).
    dir: Option<PathBuf>,
    removals: TaskTracker,
}

impl Transcripts {
    /// Deleting this server's transcripts in `dir`; `None` deletes none.
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self {
            dir,
            removals: TaskTracker::new(),
        }
    }

    /// Whether `path` is a transcript the server may delete once no task refers to it: a
    /// session file (`<UUID>.jsonl`) directly in the store's directory.
    pub fn owns(&self, path: &Path) -> bool {
        let Some(dir) = &self.dir else {
            return false;
        };
        path.parent() == Some(dir.as_path())
            && path.extension().is_some_and(|ext| ext == "jsonl")
            && path
                .file_stem()
                .and_then(|stem| stem.to_str())
                .is_some_and(|stem| stem.parse::<RunId>().is_ok())
    }

    /// Deletes `paths` (on the blocking pool when there is a runtime).
    pub fn remove(&self, paths: Vec<PathBuf>) {
        if paths.is_empty() {
            return;
        }
        if tokio::runtime::Handle::try_current().is_ok() {
            drop(self.removals.spawn_blocking(move || remove_all(&paths)));
        } else {
            remove_all(&paths);
        }
    }

    /// Waits until every deletion asked for so far is done.
    pub async fn settled(&self) {
        self.removals.close();
        self.removals.wait().await;
        self.removals.reopen();
    }
}

fn remove_all(paths: &[PathBuf]) {
    for path in paths {
        match std::fs::remove_file(path) {
            Ok(()) => tracing::trace!(path = %path.display(), "transcript deleted"),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                tracing::debug!(path = %path.display(), "transcript already gone");
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot delete the transcript");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_session_files_directly_in_the_store_are_owned() {
        let store = Transcripts::new(Some(PathBuf::from("/state/sessions/-p")));
        let id = RunId::new();
        let paths = [
            format!("/state/sessions/-p/{id}.jsonl"),
            format!("/state/sessions/-p/sub/{id}.jsonl"),
            format!("/state/sessions/-p/../-q/{id}.jsonl"),
            format!("/state/sessions/-q/{id}.jsonl"),
            format!("/home/u/.claude/projects/-p/{id}.jsonl"),
            "/state/sessions/-p/notes.jsonl".to_owned(),
            format!("/state/sessions/-p/{id}.json"),
            format!("state/sessions/-p/{id}.jsonl"),
        ];
        let owned: Vec<bool> = paths.iter().map(|p| store.owns(Path::new(p))).collect();
        assert_eq!(
            owned,
            [true, false, false, false, false, false, false, false]
        );
        let keeping = Transcripts::new(None);
        assert!(!keeping.owns(Path::new(&paths[0])));
    }
}
