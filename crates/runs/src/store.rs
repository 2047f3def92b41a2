//! The record on disk: reading, writing, finding, stopping and pruning runs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use subagent_core::RunId;
use subagent_session::private;

use crate::record::{Record, Status, now_ms};

/// The most of one record file read.
const RECORD_BYTES: u64 = 1 << 20;
/// The most of one journal's finished records read.
const JOURNAL_BYTES: u64 = 256 << 20;

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
    keep: Keep,
}

impl Runs {
    /// The record at `root`, its directories made (0700) when missing.
    ///
    /// # Errors
    /// When a directory cannot be made.
    pub fn open(root: impl Into<PathBuf>) -> std::io::Result<Self> {
        let runs = Self {
            root: root.into(),
            keep: Keep::default(),
        };
        for dir in ["live", "done", "events", "stop"] {
            private::create_dir_all(&runs.root.join(dir))?;
        }
        Ok(runs)
    }

    /// The record pruned by `keep` (by [`Runs::prune`] and by a recorder as it goes).
    #[must_use]
    pub fn keeping(mut self, keep: Keep) -> Self {
        self.keep = keep;
        self
    }

    /// How many finished runs it keeps, and how long.
    pub fn keep(&self) -> Keep {
        self.keep
    }

    /// Where the record is.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn file(&self, dir: &str, id: RunId, suffix: &str) -> PathBuf {
        self.root.join(dir).join(format!("{id}{suffix}"))
    }

    /// The journal `record`'s events are in (one JSON line per event of any run of its
    /// journal: `{"run":"<id>","event":…}`).
    pub fn events_path(&self, record: &Record) -> PathBuf {
        self.root
            .join("events")
            .join(format!("{}.jsonl", record.journal()))
    }

    /// The file a journal's finished records are appended to.
    pub(crate) fn done_path(&self, journal: &str) -> PathBuf {
        self.root.join("done").join(format!("{journal}.jsonl"))
    }

    /// `record`'s events past byte `offset` of its journal, as JSON lines (each one event), at
    /// most about `max` bytes of them, and the offset after the last line looked at (where the
    /// next read starts; a line still being written is left for it). The journal does not
    /// repeat the run's `started` event: [`Runs::started`] makes it from the record.
    pub fn events_from(&self, record: &Record, offset: u64, max: u64) -> (Vec<String>, u64) {
        use std::io::{Read as _, Seek as _};
        let mut lines = Vec::new();
        let Ok(mut file) = subagent_session::open_user_file(&self.events_path(record)) else {
            return (lines, offset);
        };
        if file.seek(std::io::SeekFrom::Start(offset)).is_err() {
            return (lines, offset);
        }
        let prefix = format!("{{\"run\":\"{}\",\"event\":", record.id);
        let (mut at, mut taken) = (offset, 0u64);
        let mut chunk = Vec::new();
        while taken < max {
            chunk.clear();
            if (&mut file).take(1 << 20).read_to_end(&mut chunk).is_err() {
                break;
            }
            let Some(end) = chunk.iter().rposition(|b| *b == b'\n') else {
                break;
            };
            for line in chunk[..end].split(|b| *b == b'\n') {
                let Some(event) = line
                    .strip_prefix(prefix.as_bytes())
                    .and_then(|rest| rest.strip_suffix(b"}"))
                else {
                    continue;
                };
                taken += u64::try_from(event.len()).unwrap_or(0);
                lines.push(String::from_utf8_lossy(event).into_owned());
            }
            at += u64::try_from(end + 1).unwrap_or(0);
            if end + 1 < chunk.len() {
                // A partial line: read on from its start next time.
                if file.seek(std::io::SeekFrom::Start(at)).is_err() {
                    break;
                }
            }
        }
        (lines, at)
    }

    /// `record`'s `started` event (as a JSON line of [`Runs::events_from`]): the first of its
    /// events, made from the record.
    pub fn started(record: &Record) -> String {
        let started = subagent_core::RunEvent::Started {
            run_id: record.id,
            provider: record.provider.clone(),
            description: record.description.clone(),
        };
        serde_json::to_string(&started).unwrap_or_default()
    }

    /// Writes `record`: a running one whole to `live/` (aside, then renamed over the old one: a
    /// reader sees the old record or the new, never half of one); one that ended as a line at
    /// the end of its journal's finished records, its live record and stop request removed
    /// after.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write(&self, record: &Record) -> std::io::Result<()> {
        if record.running() {
            return self.write_live(record);
        }
        let mut line = serde_json::to_vec(record).map_err(std::io::Error::other)?;
        line.push(b'\n');
        append_lines(&self.done_path(&record.journal()), &line)?;
        self.forget_live(record.id);
        Ok(())
    }

    /// Writes a running `record` to `live/`, whole.
    pub(crate) fn write_live(&self, record: &Record) -> std::io::Result<()> {
        let path = self.file("live", record.id, ".json");
        let aside = self.file("live", record.id, ".json.partial");
        let bytes = serde_json::to_vec(record).map_err(std::io::Error::other)?;
        private::write(&aside, &bytes)?;
        std::fs::rename(&aside, &path)
    }

    /// Removes `id`'s live record and stop request (it ended).
    pub(crate) fn forget_live(&self, id: RunId) {
        remove(&self.file("live", id, ".json"));
        remove(&self.file("stop", id, ""));
    }

    fn read_live(&self) -> Vec<Record> {
        let Ok(entries) = std::fs::read_dir(self.root.join("live")) else {
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

    /// Every journal's finished records, by journal name.
    fn journals(&self) -> Vec<(String, Vec<Record>)> {
        let Ok(entries) = std::fs::read_dir(self.root.join("done")) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|entry| {
                let name = entry
                    .file_name()
                    .to_str()?
                    .strip_suffix(".jsonl")?
                    .to_owned();
                Some((name, read_lines(&entry.path(), None)))
            })
            .collect()
    }
    /// The runs recorded as running, oldest first; one whose owner is gone reads as
    /// [`Status::Lost`].
    pub fn live(&self) -> Vec<Record> {
        let mut records = self.read_live();
        for record in &mut records {
            if !record.owner.alive() {
                record.status = Status::Lost;
            }
        }
        records
    }

    /// The runs that ended, oldest first.
    pub fn done(&self) -> Vec<Record> {
        let mut records: Vec<Record> = self
            .journals()
            .into_iter()
            .flat_map(|(_, records)| records)
            .collect();
        records.sort_by_key(|record| (record.started_ms, record.id));
        records
    }

    /// The run whose id is `id`, or starts with `id` (its short form, say).
    pub fn find(&self, id: &str) -> Lookup {
        let id = id.trim();
        if let Ok(exact) = id.parse::<RunId>() {
            if let Some(mut record) = read(&self.file("live", exact, ".json")) {
                if !record.owner.alive() {
                    record.status = Status::Lost;
                }
                return Lookup::Found(Box::new(record));
            }
            let Ok(entries) = std::fs::read_dir(self.root.join("done")) else {
                return Lookup::Missing;
            };
            let wanted = exact.to_string();
            return entries
                .flatten()
                .filter(|entry| entry.file_name().to_string_lossy().ends_with(".jsonl"))
                .find_map(|entry| read_lines(&entry.path(), Some(&wanted)).pop())
                .map_or(Lookup::Missing, |record| Lookup::Found(Box::new(record)));
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

    /// Forgets finished runs past `keep` and their events, a journal at a time (a journal of a
    /// process that still runs is kept): a journal goes once none of its runs is among the
    /// newest `keep.count` finished ones, or all of them ended before `keep.age` ago. A live
    /// record whose owner is gone is first recorded as [`Status::Lost`], and so finished.
    /// Returns how many runs were forgotten.
    pub fn prune(&self, keep: Keep) -> usize {
        self.prune_journals(keep, &[])
    }

    /// [`Runs::prune`], with `closed`: this process's own journals that take no more writes.
    pub(crate) fn prune_journals(&self, keep: Keep, closed: &[String]) -> usize {
        for mut lost in self.live().into_iter().filter(|r| r.status == Status::Lost) {
            lost.ended_ms.get_or_insert_with(now_ms);
            // A crashed owner may have left half a line: the record starts a line of its own.
            let _ = self.write(&lost);
        }
        let mut journals = self.journals();
        let newest = |records: &[Record]| {
            records
                .iter()
                .map(|r| r.ended_ms.unwrap_or(r.started_ms))
                .max()
                .unwrap_or(0)
        };
        journals.sort_by_key(|(_, records)| std::cmp::Reverse(newest(records)));
        let cutoff =
            now_ms().saturating_sub(u64::try_from(keep.age.as_millis()).unwrap_or(u64::MAX));
        let (mut newer, mut forgotten) = (0, 0);
        for (name, records) in journals {
            let past = newer >= keep.count || newest(&records) < cutoff;
            newer += records.len();
            let open = closed.iter().all(|own| *own != name)
                && records.first().is_none_or(|record| record.owner.alive());
            if !past || open {
                continue;
            }
            remove(&self.done_path(&name));
            remove(&self.root.join("events").join(format!("{name}.jsonl")));
            for record in &records {
                // A `--bg` run's output file, kept under the record.
                if let Some(output) = &record.output
                    && output.starts_with(&self.root)
                {
                    remove(output);
                }
            }
            forgotten += records.len();
        }
        forgotten
    }
}

/// Appends `bytes` (whole lines) to `path`, made 0600 when missing; when the file does not end
/// a line (a writer crashed in the middle of one), the bytes start a line of their own.
pub(crate) fn append_lines(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::{Read as _, Seek as _, Write as _};
    let mut file = private::append_file(path)?;
    let size = file.seek(std::io::SeekFrom::End(0))?;
    if size > 0 {
        let mut last = [0u8; 1];
        if let Ok(mut reader) = subagent_session::open_user_file(path)
            && reader.seek(std::io::SeekFrom::Start(size - 1)).is_ok()
            && reader.read_exact(&mut last).is_ok()
            && last[0] != b'\n'
        {
            file.write_all(b"\n")?;
        }
    }
    file.write_all(bytes)
}

/// The records of a journal's finished lines (the last of one run's when it appears twice);
/// with `only`, just the run with that id (lines not naming it are not parsed). A line that does
/// not parse is named in a warning and skipped; a last line not ended yet is left unread.
fn read_lines(path: &Path, only: Option<&str>) -> Vec<Record> {
    let Ok(bytes) = subagent_session::read_user_file(path, JOURNAL_BYTES) else {
        return Vec::new();
    };
    let complete = bytes
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(&[][..], |end| &bytes[..end]);
    let mut records: Vec<Record> = Vec::new();
    let mut at: std::collections::HashMap<RunId, usize> = std::collections::HashMap::new();
    for (number, line) in complete.split(|b| *b == b'\n').enumerate() {
        if line.is_empty()
            || only.is_some_and(|id| !line.windows(id.len()).any(|w| w == id.as_bytes()))
        {
            continue;
        }
        match serde_json::from_slice::<Record>(line) {
            Ok(record) if only.is_none_or(|id| record.id.to_string() == id) => {
                match at.get(&record.id) {
                    Some(&index) => records[index] = record,
                    None => {
                        at.insert(record.id, records.len());
                        records.push(record);
                    }
                }
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(
                target: "subagent::runs",
                "line {} of the run records {} does not parse ({error}): skipped",
                number + 1,
                path.display()
            ),
        }
    }
    records
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
