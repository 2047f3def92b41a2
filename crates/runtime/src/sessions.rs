//! Transcripts of in-process runs, and resuming them.
//!
//! A [`SessionStore`] is a directory of transcripts, one `<session id>.jsonl` per session, in
//! the session crate's format ([`TranscriptWriter`]: one event per line with its `seq`). A run
//! given a store ([`AgentConfig::sessions`](crate::AgentConfig::sessions)) writes its whole
//! conversation there (a fork's inherited history included, so each file stands alone) and its
//! outcome's `session` names it; the session id is the run id of the run that began it. A
//! resumed run ([`SessionStore::resume`], then [`Agent::resuming`](crate::Agent::resuming))
//! appends to the same file and keeps the same session id.
//!
//! Writing never holds up the loop: at each turn end the loop hands a shared view of its log
//! (O(1)) to a blocking task that appends the new events, then flushes and syncs the file (one
//! such task at a time per run: turn ends that come faster than the disk syncs are written
//! together); at the end of the run the rest is written and the file closed before the outcome
//! is delivered, so a session can be resumed as soon as its outcome is known. A failed write is
//! logged (`tracing`) and reported as a `progress` event; the run goes on, and its outcome names
//! no session.
//!
//! A session being written is locked (its writer's advisory lock): resuming it meanwhile is
//! `NOT_RESUMABLE`, as are an id that names no session (not a UUID, no such file) and a
//! transcript corrupt beyond a torn last line. A torn last line (a run killed mid-write) is cut
//! off with a warning (a `progress` event of the resumed run) and the session resumes from its
//! intact part.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use subagent_core::{Error as CoreError, RunEvent, RunId, RunSender, SessionRef};
use subagent_session::{
    ContentBlock, Error as SessionError, EventLog, TranscriptWarning, TranscriptWriter,
};

use crate::seed::Seed;
use crate::session_info::{self, SessionInfo, SessionLabel};

/// Whether a listed session is being written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionState {
    /// A run of it has not ended: its transcript is locked.
    Running,
    /// Its last run ended.
    Ended,
    /// Its first run neither runs nor ended (killed): it has no info, and can be resumed from
    /// what was written.
    Interrupted,
}

impl SessionState {
    /// `running`, `ended`, `interrupted`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Ended => "ended",
            Self::Interrupted => "interrupted",
        }
    }
}

/// One session of a store, as [`SessionStore::list`] finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionEntry {
    /// The session id.
    pub id: String,
    /// Its transcript.
    pub transcript: PathBuf,
    /// What is recorded of it (none before its first run ends).
    pub info: Option<SessionInfo>,
    /// Whether it is being written.
    pub state: SessionState,
    /// When its transcript last changed, in milliseconds since the Unix epoch.
    pub modified_ms: u64,
}

impl SessionEntry {
    /// When it last ran: its info's end, else its transcript's last change.
    pub fn when_ms(&self) -> u64 {
        self.info
            .as_ref()
            .map_or(self.modified_ms, |info| info.updated_ms)
    }
}

/// Whether someone holds the transcript's writer lock (a run writing it).
fn locked(path: &Path) -> bool {
    // Opened as a user's file is: a FIFO planted here must not block the listing.
    subagent_session::open_user_file(path).is_ok_and(|file| {
        matches!(
            file.try_lock_shared(),
            Err(std::fs::TryLockError::WouldBlock)
        )
    })
}

/// A directory of session transcripts: `<dir>/<session id>.jsonl`. Created (mode 0700) when the
/// first transcript is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionStore {
    dir: PathBuf,
}

/// A session opened to be continued: its transcript loaded (a torn last line cut off), open for
/// appending and locked until the run that continues it ends.
#[derive(Debug)]
pub struct OpenSession {
    id: String,
    writer: TranscriptWriter,
    warnings: Vec<TranscriptWarning>,
}

impl OpenSession {
    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The transcript file.
    pub fn path(&self) -> &Path {
        self.writer.path()
    }

    /// What loading skipped (at most a torn last line).
    pub fn warnings(&self) -> &[TranscriptWarning] {
        &self.warnings
    }
}

/// A session ready to continue: the seed of the run (its conversation, then the new prompt)
/// and the open session the run appends to.
#[derive(Debug)]
pub struct Resumed {
    /// What the run starts from.
    pub seed: Seed,
    /// Give it to [`Agent::resuming`](crate::Agent::resuming).
    pub session: OpenSession,
}

fn not_resumable(message: impl Into<String>) -> CoreError {
    CoreError::NotResumable {
        message: message.into(),
    }
}

impl SessionStore {
    /// A store in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The transcript file of session `id`; `None` when `id` is not a session id (a UUID), so
    /// no id names a file outside the directory.
    pub fn transcript(&self, id: &str) -> Option<PathBuf> {
        let id: RunId = id.trim().parse().ok()?;
        Some(self.dir.join(format!("{id}.jsonl")))
    }

    /// The sessions here, newest first (by when they last ran).
    pub fn list(&self) -> Vec<SessionEntry> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut found: Vec<SessionEntry> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let path = entry.path();
                let id = path
                    .file_name()?
                    .to_str()?
                    .strip_suffix(".jsonl")?
                    .parse::<RunId>()
                    .ok()?
                    .to_string();
                Some(self.entry(&id, path))
            })
            .collect();
        found.sort_by(|a, b| b.when_ms().cmp(&a.when_ms()).then(a.id.cmp(&b.id)));
        found
    }

    /// Session `id`, if this store has it (also when its transcript is not a regular file: it
    /// is refused when read, and can be removed).
    pub fn find(&self, id: &str) -> Option<SessionEntry> {
        let path = self.transcript(id)?;
        std::fs::symlink_metadata(&path).is_ok().then(|| {
            let id = RunId::to_string(&id.trim().parse().ok()?);
            Some(self.entry(&id, path))
        })?
    }

    fn entry(&self, id: &str, transcript: PathBuf) -> SessionEntry {
        let info = session_info::read(&transcript);
        let state = if locked(&transcript) {
            SessionState::Running
        } else if info.is_some() {
            SessionState::Ended
        } else {
            SessionState::Interrupted
        };
        let modified_ms = std::fs::metadata(&transcript)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        SessionEntry {
            id: id.to_owned(),
            transcript,
            info,
            state,
            modified_ms,
        }
    }

    /// Deletes session `id` (its transcript and info). `NOT_RESUMABLE`-coded refusals: an id
    /// that names no session here, a session being written.
    pub fn remove(&self, id: &str) -> Result<(), CoreError> {
        let entry = self
            .find(id)
            .ok_or_else(|| not_resumable(format!("no session {id} in {}", self.dir.display())))?;
        if entry.state == SessionState::Running {
            return Err(not_resumable(format!(
                "session {} is in use: the run writing it has not ended",
                entry.id
            )));
        }
        std::fs::remove_file(&entry.transcript)
            .map_err(|e| not_resumable(format!("{}: {e}", entry.transcript.display())))?;
        // Its record, and what its child ran with.
        let beside = [
            Some(session_info::info_path(&entry.transcript)),
            self.record_path(&entry.id),
        ];
        for path in beside.into_iter().flatten() {
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(not_resumable(format!("{}: {e}", path.display())));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Opens `session` (a session of provider `provider`) to continue it with `prompt`: loads
    /// its transcript on a blocking thread and locks it. `NOT_RESUMABLE` when the session
    /// belongs to another provider (the one the request names, or the one recorded for it:
    /// a child's session is not a `run` parent's), names no transcript here, is being written
    /// by a run that has not ended, or is corrupt beyond a torn last line.
    pub async fn resume(
        &self,
        provider: &str,
        session: &SessionRef,
        prompt: Vec<ContentBlock>,
    ) -> Result<Resumed, CoreError> {
        if let Some(recorded) = self
            .transcript(&session.id)
            .and_then(|path| session_info::read(&path))
            .map(|info| info.provider)
            .filter(|recorded| recorded != provider)
        {
            return Err(not_resumable(format!(
                "session {} is a session of provider \"{recorded}\", not \"{provider}\"",
                session.id
            )));
        }
        self.adopt(provider, session, prompt).await
    }

    /// [`SessionStore::resume`] without the check of the provider recorded for the session:
    /// `provider` takes over a session another began (meant, as `run --resume ID --adopt`).
    pub async fn adopt(
        &self,
        provider: &str,
        session: &SessionRef,
        prompt: Vec<ContentBlock>,
    ) -> Result<Resumed, CoreError> {
        if session.provider != provider {
            return Err(not_resumable(format!(
                "session {} belongs to provider \"{}\", not \"{provider}\"",
                session.id, session.provider
            )));
        }
        let store = self.clone();
        let id = session.id.clone();
        tokio::task::spawn_blocking(move || store.open(&id, prompt))
            .await
            .map_err(|e| not_resumable(format!("loading session {}: {e}", session.id)))?
    }

    fn open(&self, id: &str, prompt: Vec<ContentBlock>) -> Result<Resumed, CoreError> {
        let Some(path) = self.transcript(id) else {
            return Err(not_resumable(format!(
                "no session {id:?}: a session id is the `session.id` of an earlier outcome (a UUID)"
            )));
        };
        let (writer, loaded) = TranscriptWriter::open_locked(&path).map_err(|e| match e {
            SessionError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                not_resumable(format!(
                    "no session {id} in {}: no run of this provider wrote it there",
                    self.dir.display()
                ))
            }
            SessionError::Locked { .. } => not_resumable(format!(
                "session {id} is in use: the run writing it has not ended"
            )),
            other => not_resumable(format!("session {id}: {other}")),
        })?;
        let id = path
            .file_stem()
            .map_or_else(|| id.to_owned(), |s| s.to_string_lossy().into_owned());
        Ok(Resumed {
            seed: Seed::resumed(loaded.log, prompt),
            session: OpenSession {
                id,
                writer,
                warnings: loaded.warnings,
            },
        })
    }
}

enum FileState {
    /// A fresh session's file, not created yet.
    Unopened,
    /// Open and locked.
    Open(TranscriptWriter),
    Closed,
}

struct Writing {
    path: PathBuf,
    file: FileState,
    /// Events of the log already in the file.
    written: usize,
    failure: Option<String>,
}

impl Writing {
    fn write(&mut self, log: &EventLog) {
        if self.failure.is_some() {
            return;
        }
        if let Err(error) = self.try_write(log) {
            tracing::warn!(path = %self.path.display(), %error, "transcript not written");
            self.failure = Some(error);
            self.file = FileState::Closed;
        }
    }

    fn try_write(&mut self, log: &EventLog) -> Result<(), String> {
        if matches!(self.file, FileState::Unopened) {
            if let Some(dir) = self.path.parent() {
                subagent_session::private::create_dir_all(dir)
                    .map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            let writer = TranscriptWriter::create_locked(&self.path).map_err(|e| e.to_string())?;
            self.file = FileState::Open(writer);
        }
        let FileState::Open(writer) = &mut self.file else {
            return Ok(());
        };
        if log.len() <= self.written {
            return Ok(());
        }
        for seq in self.written..log.len() {
            if let Some(event) = log.get(seq) {
                writer.append_unflushed(&event).map_err(|e| e.to_string())?;
            }
        }
        self.written = log.len();
        writer.flush().map_err(|e| e.to_string())
    }
}

/// Writes one run's transcript (see the module docs).
pub(crate) struct Recorder {
    shared: Arc<Shared>,
    id: String,
    label: Option<SessionLabel>,
}

/// What the loop and the blocking writer share.
struct Shared {
    /// The newest log handed over and not written yet, and whether a writer task is on its way
    /// (then it takes the newest log itself: turn ends that come faster than the disk syncs are
    /// written together, one task and one sync at a time).
    pending: Mutex<(Option<EventLog>, bool)>,
    writing: Mutex<Writing>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Writes the newest pending log until none is left (on a blocking thread).
    fn drain(&self) {
        loop {
            let log = {
                let mut pending = lock(&self.pending);
                match pending.0.take() {
                    Some(log) => log,
                    None => {
                        pending.1 = false;
                        return;
                    }
                }
            };
            lock(&self.writing).write(&log);
        }
    }
}

impl Recorder {
    /// The recorder of run `run_id`: continuing `resumed`, else a fresh session in `store`;
    /// `None` with neither. A resumed session's load warnings are reported on `sender`.
    pub(crate) fn new(
        store: Option<&SessionStore>,
        resumed: Option<OpenSession>,
        run_id: RunId,
        sender: &RunSender,
        label: Option<SessionLabel>,
    ) -> Option<Self> {
        let (id, writing) = match resumed {
            Some(open) => {
                for warning in &open.warnings {
                    tracing::warn!(%warning, "transcript");
                    sender.emit(RunEvent::progress(format!("transcript: {warning}")));
                }
                let written = open.writer.next_seq();
                let path = open.writer.path().to_path_buf();
                (open.id, (path, FileState::Open(open.writer), written))
            }
            None => {
                let id = run_id.to_string();
                let path = store?.dir.join(format!("{id}.jsonl"));
                (id, (path, FileState::Unopened, 0))
            }
        };
        let (path, file, written) = writing;
        Some(Self {
            shared: Arc::new(Shared {
                pending: Mutex::new((None, false)),
                writing: Mutex::new(Writing {
                    path,
                    file,
                    written,
                    failure: None,
                }),
            }),
            id,
            label,
        })
    }

    /// At a turn end: what the log gained is written, flushed and synced on a blocking thread;
    /// the loop does not wait (and starts no second writer while one is on its way).
    pub(crate) fn turn_end(&self, log: &EventLog) {
        {
            let mut pending = lock(&self.shared.pending);
            pending.0 = Some(log.clone());
            if pending.1 {
                return;
            }
            pending.1 = true;
        }
        let shared = Arc::clone(&self.shared);
        drop(tokio::task::spawn_blocking(move || shared.drain()));
    }

    /// At the end of the run: writes the rest and closes the file (releasing the session).
    /// Returns the session (its `provider` left empty for the caller), or `None` after a failed
    /// write, which is reported on `sender`.
    /// With the file closed, the session's info records the run's end (`outcome`).
    pub(crate) async fn finish(
        self,
        log: &EventLog,
        cwd: &Path,
        sender: &RunSender,
        outcome: &subagent_core::Outcome,
    ) -> Option<SessionRef> {
        let shared = Arc::clone(&self.shared);
        let log = log.clone();
        let label = self.label.clone();
        let ended = outcome.clone();
        let dir = cwd.to_path_buf();
        let closed = tokio::task::spawn_blocking(move || {
            // The end's log has everything a pending one has.
            lock(&shared.pending).0 = None;
            let mut writing = lock(&shared.writing);
            writing.write(&log);
            writing.file = FileState::Closed;
            match writing.failure.clone() {
                Some(failure) => Err(failure),
                None => {
                    session_info::record(&writing.path, label.as_ref(), &ended, &dir);
                    Ok(writing.path.clone())
                }
            }
        })
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
        match closed {
            Ok(path) => Some(SessionRef {
                provider: String::new(),
                id: self.id,
                cwd: Some(cwd.to_path_buf()),
                transcript: Some(path),
            }),
            Err(failure) => {
                sender.emit(RunEvent::progress(format!(
                    "transcript not written, the run cannot be resumed: {failure}"
                )));
                None
            }
        }
    }
}
