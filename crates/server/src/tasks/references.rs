//! Counting the references to transcripts, so that a file is deleted only once no kept task
//! needs it.
//!
//! The table counts, per transcript the server may delete
//! ([`Transcripts`](crate::transcripts::Transcripts)), the kept tasks that refer to it: a task counts its run's transcript once the run has ended
//! (its outcome names it, [`Tasks::attach`]), and a task that continues another counts the
//! shared file from before its run starts (a [`Hold`] taken while the continued task is surely
//! kept, [`Tasks::continuing`]), so the file is never deleted under a run that writes it. When
//! the last task referring to a transcript is forgotten, the file is deleted (outside the
//! table's lock); [`Tasks::close`] deletes those of every task still kept.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::Tasks;

/// Per transcript: how many kept tasks and [holds](Hold) refer to it. Changed under the
/// table's lock.
#[derive(Debug, Default)]
pub(super) struct References(HashMap<PathBuf, usize>);

impl References {
    /// One reference to `path` more.
    pub(super) fn count(&mut self, path: &Path) {
        *self.0.entry(path.to_path_buf()).or_default() += 1;
    }

    /// One reference to `path` fewer; pushed to `gone` when it was the last.
    pub(super) fn release(&mut self, path: PathBuf, gone: &mut Vec<PathBuf>) {
        let Some(count) = self.0.get_mut(&path) else {
            return;
        };
        *count = count.saturating_sub(1);
        if *count == 0 {
            self.0.remove(&path);
            gone.push(path);
        }
    }

    /// Every transcript referred to, the counts forgotten (at shutdown).
    pub(super) fn drain(&mut self) -> Vec<PathBuf> {
        self.0.drain().map(|(path, _)| path).collect()
    }
}

/// A count on the transcripts of a finished task, taken for a run that continues it: they
/// stay while the run starts even if the task is forgotten meanwhile. Handed to the new task
/// by [`Tasks::insert`]; dropped (a run that did not start), it lets them go.
#[derive(Debug)]
pub(crate) struct Hold {
    tasks: Tasks,
    paths: Vec<PathBuf>,
}

impl Hold {
    /// A hold on `paths`, already counted in `tasks`' table.
    pub(super) fn new(tasks: Tasks, paths: Vec<PathBuf>) -> Self {
        Self { tasks, paths }
    }

    /// The counted paths, for the task that takes them over (the hold then lets none go).
    pub(super) fn hand_over(mut self) -> Vec<PathBuf> {
        std::mem::take(&mut self.paths)
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        if self.paths.is_empty() {
            return;
        }
        let mut gone = Vec::new();
        {
            let mut table = self.tasks.lock();
            for path in std::mem::take(&mut self.paths) {
                table.references.release(path, &mut gone);
            }
        }
        self.tasks.shared.transcripts.remove(gone);
    }
}
