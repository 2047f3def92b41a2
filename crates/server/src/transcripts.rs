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
//! on a disk busy with the transcripts' syncs can wait): one worker at a time drains a queue of
//! paths, so a steady stream of deletions (a busy server forgets about as many tasks a second
//! as it runs) holds one blocking thread, not one per file; it is tracked so that a shutdown
//! waits for every deletion. A file already gone is logged at debug, any other failure at warn;
//! neither fails a request.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use subagent_core::RunId;
use tokio_util::task::TaskTracker;

/// Which transcripts may be deleted, and the deletions under way.
#[derive(Debug)]
pub(crate) struct Transcripts {
    /// The session store's directory; `None`: delete nothing (`--keep-transcripts`).
    dir: Option<PathBuf>,
    removals: TaskTracker,
    queue: Arc<Mutex<Queue>>,
}

/// The paths waiting to be deleted, and whether a worker is draining them.
#[derive(Debug, Default)]
struct Queue {
    paths: Vec<PathBuf>,
    draining: bool,
}

impl Transcripts {
    /// Deleting this server's transcripts in `dir`; `None` deletes none.
    pub(crate) fn new(dir: Option<PathBuf>) -> Self {
        Self {
            dir,
            removals: TaskTracker::new(),
            queue: Arc::default(),
        }
    }

    /// Whether `path` is a transcript the server may delete once no task refers to it: a
    /// session file (`<UUID>.jsonl`) directly in the store's directory.
    pub(crate) fn owns(&self, path: &Path) -> bool {
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

    /// Deletes `paths` (on the blocking pool when there is a runtime: queued for the worker
    /// that is draining the queue, or for one started now).
    pub(crate) fn remove(&self, paths: Vec<PathBuf>) {
        if paths.is_empty() {
            return;
        }
        if tokio::runtime::Handle::try_current().is_err() {
            remove_all(&paths);
            return;
        }
        let start = {
            let mut queue = lock(&self.queue);
            queue.paths.extend(paths);
            !std::mem::replace(&mut queue.draining, true)
        };
        if start {
            let queue = Arc::clone(&self.queue);
            drop(self.removals.spawn_blocking(move || {
                loop {
                    let batch = {
                        let mut queue = lock(&queue);
                        if queue.paths.is_empty() {
                            queue.draining = false;
                            return;
                        }
                        std::mem::take(&mut queue.paths)
                    };
                    remove_all(&batch);
                }
            }));
        }
    }

    /// Waits until every deletion asked for so far is done.
    pub(crate) async fn settled(&self) {
        self.removals.close();
        self.removals.wait().await;
        self.removals.reopen();
    }
}

fn lock(queue: &Mutex<Queue>) -> std::sync::MutexGuard<'_, Queue> {
    queue
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn queued_deletions_all_happen_before_settled_returns() {
        let dir = tempfile::tempdir().unwrap();
        let store = Transcripts::new(Some(dir.path().to_path_buf()));
        let mut all = Vec::new();
        for _ in 0..100 {
            let paths: Vec<PathBuf> = (0..10)
                .map(|_| dir.path().join(format!("{}.jsonl", RunId::new())))
                .collect();
            for path in &paths {
                std::fs::write(path, "{}\n").unwrap();
            }
            all.extend(paths.iter().cloned());
            store.remove(paths);
        }
        store.settled().await;
        assert!(all.iter().all(|path| !path.exists()));
        assert!(!lock(&store.queue).draining);
        // The store goes on deleting after a settle.
        let later = dir.path().join(format!("{}.jsonl", RunId::new()));
        std::fs::write(&later, "{}\n").unwrap();
        store.remove(vec![later.clone()]);
        store.settled().await;
        assert!(!later.exists());
    }
}
