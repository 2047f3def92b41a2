//! The record on disk: reading, writing, finding, stopping and pruning runs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use subagent_core::RunId;
use subagent_session::private;

use crate::record::{Record, Status, now_ms};

/// The most of one record file read.
const RECORD_BYTES: u64 = 1 << 20;

/// How many finished runs are kept, and for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keep {
    /// The most finished runs kept (the newest).
    pub count: usize,
    /// The longest a finished run is kept.
    pub age: Duration,
}

impl Default for Keep {
    /// 1,000 finished runs, for 7 days.
    fn default() -> Self {
        Self {
            count: 1000,
            age: Duration::from_secs(7 * 24 * 3600),
        }
    }
}

/// What looking a run up by (a prefix of) its id found.
#[derive(Debug)]
pub enum Lookup {
    /// That run.
    Found(Box<Record>),
    /// No run has such an id.
    Missing,
    /// Several runs' ids start so: these.
    Ambiguous(Vec<RunId>),
}

/// A user's record of runs: `<state dir>/subagents/runs`.
#[derive(Clone, Debug)]
pub struct Runs {
    root: PathBuf,
}

impl Runs {
    /// The record at `root`, its directories made (0700) when missing.
    ///
    /// # Errors
    /// When a directory cannot be made.
    pub fn open(root: impl Into<PathBuf>) -> std::io::Result<Self> {
        let runs = Self { root: root.into() };
        for dir in ["live", "done", "events", "stop"] {
            private::create_dir_all(&runs.root.join(dir))?;
        }
        Ok(runs)
    }

    /// Where the record is.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn file(&self, dir: &str, id: RunId, suffix: &str) -> PathBuf {
        self.root.join(dir).join(format!("{id}{suffix}"))
    }

    /// The file of `id`'s events (one JSON line each).
    pub fn events_path(&self, id: RunId) -> PathBuf {
        self.file("events", id, ".jsonl")
    }

    /// The complete lines of `id`'s events past byte `offset`, at most `max` bytes of them,
    /// and the offset after them (where the next read starts; a line still being written is
    /// left for it). Nothing when there are none yet.
    pub fn events_from(&self, id: RunId, offset: u64, max: u64) -> (Vec<String>, u64) {
        use std::io::{Read as _, Seek as _};
        let Ok(mut file) = subagent_session::open_user_file(&self.events_path(id)) else {
            return (Vec::new(), offset);
        };
        if file.seek(std::io::SeekFrom::Start(offset)).is_err() {
            return (Vec::new(), offset);
        }
        let mut bytes = Vec::new();
        if (&mut file).take(max).read_to_end(&mut bytes).is_err() {
            return (Vec::new(), offset);
        }
        let Some(end) = bytes.iter().rposition(|b| *b == b'\n') else {
            return (Vec::new(), offset);
        };
        let lines = String::from_utf8_lossy(&bytes[..end])
            .lines()
            .map(str::to_owned)
            .collect();
        (lines, offset + u64::try_from(end + 1).unwrap_or(0))
    }

    /// Writes `record` whole: aside, then renamed over the old one (a reader sees the old
    /// record or the new, never half of one). A record that ended goes to `done/`, and its live
    /// one is removed after.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write(&self, record: &Record) -> std::io::Result<()> {
        let dir = if record.running() { "live" } else { "done" };
        let path = self.file(dir, record.id, ".json");
        let aside = self.file(dir, record.id, ".json.partial");
        let bytes = serde_json::to_vec(record).map_err(std::io::Error::other)?;
        private::write(&aside, &bytes)?;
        std::fs::rename(&aside, &path)?;
        if !record.running() {
            remove(&self.file("live", record.id, ".json"));
            remove(&self.file("stop", record.id, ""));
        }
        Ok(())
    }

    fn read_dir(&self, dir: &str) -> Vec<Record> {
        let Ok(entries) = std::fs::read_dir(self.root.join(dir)) else {
            return Vec::new();
        };
        let mut records: Vec<Record> = entries
            .flatten()
            .filter(|entry| entry.file_name().to_string_lossy().ends_with(".json"))
            .filter_map(|entry| read(&entry.path()))
            .collect();
        records.sort_by_key(|record| (record.started_ms, record.id));
        records
    }

    /// The runs recorded as running, oldest first; one whose owner is gone reads as
    /// [`Status::Lost`].
    pub fn live(&self) -> Vec<Record> {
        let mut records = self.read_dir("live");
        for record in &mut records {
            if !record.owner.alive() {
                record.status = Status::Lost;
            }
        }
        records
    }

    /// The runs that ended, oldest first.
    pub fn done(&self) -> Vec<Record> {
        self.read_dir("done")
    }

    /// The run whose id is `id`, or starts with `id` (its short form, say).
    pub fn find(&self, id: &str) -> Lookup {
        let id = id.trim();
        if let Ok(exact) = id.parse::<RunId>() {
            for dir in ["live", "done"] {
                if let Some(mut record) = read(&self.file(dir, exact, ".json")) {
                    if dir == "live" && !record.owner.alive() {
                        record.status = Status::Lost;
                    }
                    return Lookup::Found(Box::new(record));
                }
            }
            return Lookup::Missing;
        }
        if id.is_empty() {
            return Lookup::Missing;
        }
        let mut found: Vec<Record> = self
            .live()
            .into_iter()
            .chain(self.done())
            .filter(|record| {
                let full = record.id.to_string();
                full.starts_with(id) || full.replace('-', "").starts_with(id)
            })
            .collect();
        match found.len() {
            0 => Lookup::Missing,
            1 => Lookup::Found(Box::new(found.remove(0))),
            _ => Lookup::Ambiguous(found.iter().map(|record| record.id).collect()),
        }
    }

    /// Asks the process owning `id` to stop it (it looks now and then: see
    /// [`crate::Recorder`]).
    ///
    /// # Errors
    /// When the request cannot be written.
    pub fn request_stop(&self, id: RunId) -> std::io::Result<()> {
        private::write(&self.file("stop", id, ""), b"")
    }

    /// The runs asked to stop.
    pub fn stop_requests(&self) -> Vec<RunId> {
        let Ok(entries) = std::fs::read_dir(self.root.join("stop")) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
            .collect()
    }

    /// Removes the stop request of `id`.
    pub fn clear_stop(&self, id: RunId) {
        remove(&self.file("stop", id, ""));
    }

    /// Forgets finished runs past `keep` (the oldest first) and their events; a live record
    /// whose owner is gone is recorded as [`Status::Lost`] and so finished. Returns how many
    /// runs were forgotten.
    pub fn prune(&self, keep: Keep) -> usize {
        for mut lost in self.live().into_iter().filter(|r| r.status == Status::Lost) {
            lost.ended_ms.get_or_insert_with(now_ms);
            if self.write(&lost).is_err() {
                continue;
            }
        }
        let done = self.done();
        let cutoff =
            now_ms().saturating_sub(u64::try_from(keep.age.as_millis()).unwrap_or(u64::MAX));
        let excess = done.len().saturating_sub(keep.count);
        let mut forgotten = 0;
        for (index, record) in done.iter().enumerate() {
            let ended = record.ended_ms.unwrap_or(record.started_ms);
            if index < excess || ended < cutoff {
                remove(&self.file("done", record.id, ".json"));
                remove(&self.events_path(record.id));
                // A `--bg` run's output file, kept under the record.
                if let Some(output) = &record.output
                    && output.starts_with(&self.root)
                {
                    remove(output);
                }
                forgotten += 1;
            }
        }
        forgotten
    }
}

/// The record at `path`; `None` when it is missing or does not parse (a corrupt file is named
/// in a warning and skipped).
fn read(path: &Path) -> Option<Record> {
    let text = subagent_session::read_user_text(path, RECORD_BYTES).ok()?;
    match serde_json::from_str(&text) {
        Ok(record) => Some(record),
        Err(error) => {
            tracing::warn!(
                target: "subagent::runs",
                "the run record {} does not parse ({error}): skipped",
                path.display()
            );
            None
        }
    }
}

fn remove(path: &Path) {
    if let Err(error) = std::fs::remove_file(path)
        && error.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(target: "subagent::runs", "cannot remove {}: {error}", path.display());
    }
}

/// `records` in tree order (each run after its parent, siblings by start) with their depths; a
/// run whose parent is not among them is a root.
pub fn tree(records: Vec<Record>) -> Vec<(usize, Record)> {
    let ids: std::collections::HashSet<RunId> = records.iter().map(|r| r.id).collect();
    let mut children: std::collections::HashMap<Option<RunId>, Vec<Record>> =
        std::collections::HashMap::new();
    for record in records {
        let parent = record.parent.filter(|parent| ids.contains(parent));
        children.entry(parent).or_default().push(record);
    }
    let mut ordered = Vec::new();
    let mut stack: Vec<(usize, Record)> = children
        .remove(&None)
        .unwrap_or_default()
        .into_iter()
        .rev()
        .map(|record| (0, record))
        .collect();
    while let Some((depth, record)) = stack.pop() {
        if let Some(mine) = children.remove(&Some(record.id)) {
            stack.extend(mine.into_iter().rev().map(|child| (depth + 1, child)));
        }
        ordered.push((depth, record));
    }
    ordered
}
