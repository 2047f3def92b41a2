//! Transcript files: one JSON object per line, `{"seq":N,"type":…,…}`.
//!
//! The writer buffers lines and flushes (and syncs) them at each `turn_end`, so a crash loses at
//! most the turn in progress. The loader skips a torn last line (a crash mid-write) with a
//! warning instead of failing, and [`TranscriptWriter::open`] cuts such a tail off before it
//! appends, so the file stays valid. A writer made with [`TranscriptWriter::create_locked`] or
//! [`TranscriptWriter::open_locked`] holds an exclusive advisory lock on its file until it is
//! dropped, so two of them never write (or cut) one transcript at once.

use std::fs::{File, TryLockError};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Error, EventLog, Result, SessionEvent};

#[derive(Serialize)]
struct LineOut<'a> {
    seq: usize,
    #[serde(flatten)]
    event: &'a SessionEvent,
}

#[derive(Deserialize)]
struct LineIn {
    seq: usize,
    #[serde(flatten)]
    event: SessionEvent,
}

/// Something the loader skipped, with where it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TranscriptWarning {
    /// The transcript file.
    pub path: PathBuf,
    /// 1-based line number.
    pub line: usize,
    /// What was skipped and why.
    pub message: String,
}

impl std::fmt::Display for TranscriptWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
    }
}

/// A loaded transcript.
#[derive(Debug)]
pub struct LoadedTranscript {
    /// The events, `seq == index`.
    pub log: EventLog,
    /// What was skipped (at most the torn last line).
    pub warnings: Vec<TranscriptWarning>,
    /// Byte length of the valid part of the file (everything before a torn last line).
    pub valid_len: u64,
}

/// The most bytes a transcript may hold to be loaded (512 MiB): far beyond a long session, and
/// a bound on what a planted or runaway file can make a resume allocate.
pub const MAX_TRANSCRIPT_BYTES: u64 = 512 << 20;

/// Loads a transcript file: a regular file (also behind a link) of at most
/// [`MAX_TRANSCRIPT_BYTES`]; a FIFO, a device or a directory is refused without being read.
///
/// A last line that is cut short (no newline) or does not parse is skipped with a warning: that is
/// what a crash in the middle of a write leaves. A complete line in the middle that does not parse,
/// or whose `seq` is not its index, is [`Error::Corrupt`].
pub fn load_transcript(path: &Path) -> Result<LoadedTranscript> {
    let bytes = crate::read_user_file(path, MAX_TRANSCRIPT_BYTES).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    parse_transcript(path, &bytes)
}

/// [`load_transcript`] on bytes already read (`path` names them in warnings and errors).
/// Public for the fuzz targets (`fuzz/`), not part of the crate's API.
#[doc(hidden)]
pub fn parse_transcript(path: &Path, bytes: &[u8]) -> Result<LoadedTranscript> {
    let mut log = EventLog::new();
    let mut warnings = Vec::new();
    let mut valid_len = 0u64;
    let mut start = 0usize;
    let mut line_no = 0usize;
    while start < bytes.len() {
        line_no += 1;
        let (end, terminated) = match bytes[start..].iter().position(|&b| b == b'\n') {
            Some(offset) => (start + offset, true),
            None => (bytes.len(), false),
        };
        let line = &bytes[start..end];
        let next = if terminated { end + 1 } else { end };
        let is_last = next >= bytes.len();
        if line.iter().all(u8::is_ascii_whitespace) {
            start = next;
            if terminated {
                valid_len = next as u64;
            }
            continue;
        }
        let parsed = if terminated {
            serde_json::from_slice::<LineIn>(line).map_err(|e| e.to_string())
        } else {
            Err("line is cut short (no newline): the write was interrupted".to_owned())
        };
        match parsed {
            Ok(entry) if entry.seq == log.len() => {
                log.append(entry.event);
                valid_len = next as u64;
            }
            Ok(entry) => {
                return Err(Error::Corrupt {
                    path: path.to_owned(),
                    line: line_no,
                    message: format!("seq {} where {} was expected", entry.seq, log.len()),
                });
            }
            Err(message) if is_last => {
                warnings.push(TranscriptWarning {
                    path: path.to_owned(),
                    line: line_no,
                    message: format!("skipped a torn last line ({} bytes): {message}", line.len()),
                });
            }
            Err(message) => {
                return Err(Error::Corrupt {
                    path: path.to_owned(),
                    line: line_no,
                    message,
                });
            }
        }
        start = next;
    }
    Ok(LoadedTranscript {
        log,
        warnings,
        valid_len,
    })
}

/// Appends events to a transcript file.
#[derive(Debug)]
pub struct TranscriptWriter {
    path: PathBuf,
    out: BufWriter<File>,
    next_seq: usize,
}

impl TranscriptWriter {
    /// Creates (or empties) the file.
    pub fn create(path: &Path) -> Result<Self> {
        let file = crate::private::create_file(path).map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })?;
        Ok(Self {
            path: path.to_owned(),
            out: BufWriter::new(file),
            next_seq: 0,
        })
    }

    /// Opens an existing transcript to continue it (creating it when missing): loads it, cuts off
    /// a torn last line, and appends after the last valid event.
    pub fn open(path: &Path) -> Result<(Self, LoadedTranscript)> {
        if !path.exists() {
            let writer = Self::create(path)?;
            let loaded = LoadedTranscript {
                log: EventLog::new(),
                warnings: Vec::new(),
                valid_len: 0,
            };
            return Ok((writer, loaded));
        }
        let loaded = load_transcript(path)?;
        let io = |source| Error::Io {
            path: path.to_owned(),
            source,
        };
        let file = crate::private::open_existing(path).map_err(io)?;
        file.set_len(loaded.valid_len).map_err(io)?;
        let mut out = BufWriter::new(file);
        std::io::Seek::seek(&mut out, std::io::SeekFrom::End(0)).map_err(io)?;
        Ok((
            Self {
                path: path.to_owned(),
                out,
                next_seq: loaded.log.len(),
            },
            loaded,
        ))
    }

    /// Creates (or empties) the file and locks it for as long as the writer lives: another
    /// locked writer of the same file, in any process, is refused ([`Error::Locked`], before the
    /// file is emptied).
    pub fn create_locked(path: &Path) -> Result<Self> {
        let io = |source| Error::Io {
            path: path.to_owned(),
            source,
        };
        let file = crate::private::open_file(path).map_err(io)?;
        lock(&file, path)?;
        file.set_len(0).map_err(io)?;
        Ok(Self {
            path: path.to_owned(),
            out: BufWriter::new(file),
            next_seq: 0,
        })
    }

    /// [`Self::open`] for an existing transcript only (a missing one is an [`Error::Io`] and is
    /// not created), locked first: while another locked writer has it, [`Error::Locked`], and
    /// nothing is read or cut (its half-written line is not a torn one). The lock lasts as long
    /// as the writer.
    pub fn open_locked(path: &Path) -> Result<(Self, LoadedTranscript)> {
        let io = |source| Error::Io {
            path: path.to_owned(),
            source,
        };
        let file = crate::private::open_existing(path).map_err(io)?;
        lock(&file, path)?;
        let loaded = load_transcript(path)?;
        file.set_len(loaded.valid_len).map_err(io)?;
        let mut out = BufWriter::new(file);
        std::io::Seek::seek(&mut out, std::io::SeekFrom::End(0)).map_err(io)?;
        Ok((
            Self {
                path: path.to_owned(),
                out,
                next_seq: loaded.log.len(),
            },
            loaded,
        ))
    }

    /// The file written to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The `seq` the next event gets.
    pub fn next_seq(&self) -> usize {
        self.next_seq
    }

    /// Appends one event; a `turn_end` flushes and syncs the file.
    pub fn append(&mut self, event: &SessionEvent) -> Result<()> {
        self.append_unflushed(event)?;
        if matches!(event, SessionEvent::TurnEnd { .. }) {
            self.flush()?;
        }
        Ok(())
    }

    /// Appends one event to the buffer without flushing, even a `turn_end`: a writer that
    /// copies many turns at once (a fork's inherited history) then calls [`Self::flush`] once
    /// instead of syncing the file at every turn.
    pub fn append_unflushed(&mut self, event: &SessionEvent) -> Result<()> {
        let line = serde_json::to_vec(&LineOut {
            seq: self.next_seq,
            event,
        })?;
        let io = |source| Error::Io {
            path: self.path.clone(),
            source,
        };
        self.out.write_all(&line).map_err(io)?;
        self.out.write_all(b"\n").map_err(io)?;
        self.next_seq += 1;
        Ok(())
    }

    /// Flushes buffered lines and syncs the file's data to disk.
    pub fn flush(&mut self) -> Result<()> {
        let io = |source| Error::Io {
            path: self.path.clone(),
            source,
        };
        self.out.flush().map_err(io)?;
        self.out.get_ref().sync_data().map_err(io)
    }
}

/// Takes the exclusive advisory lock of `file` without waiting.
fn lock(file: &File, path: &Path) -> Result<()> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(TryLockError::WouldBlock) => Err(Error::Locked {
            path: path.to_owned(),
        }),
        Err(TryLockError::Error(source)) => Err(Error::Io {
            path: path.to_owned(),
            source,
        }),
    }
}
